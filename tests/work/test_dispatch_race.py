"""Race safety of ``next --claim``: concurrent dispatcher processes over one shared pool."""

import json
import threading
from collections import Counter

import pytest

from conftest import script

from mindos.core import validate
from mindos.work import tasks

PROCESSES = 8
CLAIMS_EACH = 10
POOL = 60


@pytest.mark.slow
def test_concurrent_next_claim_never_double_claims(conn, home):
    for index in range(POOL):
        tasks.create(conn, project=f"proj-{index % 3}", title=f"pool task {index}", task_id=f"pool-{index:02d}",
                     priority=validate.PRIORITIES[index % 4], tags=["autopilot-safe"] if index % 2 else [])
    tasks.create(conn, project="proj-0", title="never ready", task_id="gated", priority="P0",
                 depends_on=["missing-prereq"])
    results, lock = [], threading.Lock()

    def dispatcher(owner):
        for _ in range(CLAIMS_EACH):
            proc = script("autopilot.py", "next", "--claim", "--owner", owner, home=home, timeout=120)
            with lock:
                results.append((owner, proc.returncode, proc.stdout, proc.stderr))

    threads = [threading.Thread(target=dispatcher, args=(f"worker-{i}",)) for i in range(PROCESSES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(results) == PROCESSES * CLAIMS_EACH
    claims = {}
    for owner, code, out, err in results:
        assert "database is locked" not in err
        assert (code, err) == (0, ""), err
        task = json.loads(out)["task"]
        if task is None:
            continue
        assert task["id"] not in claims, f"{task['id']} claimed by {claims.get(task['id'])} and {owner}"
        assert (task["status"], task["lease_owner"], task["lease_epoch"]) == ("claimed", owner, 1)
        claims[task["id"]] = owner
    assert sorted(claims) == [f"pool-{i:02d}" for i in range(POOL)]  # every ready task, once each

    # the ledger agrees exactly with what the dispatchers were told
    events = conn.execute("SELECT entity_id, payload_json FROM audit_events WHERE action = 'claimed'").fetchall()
    assert Counter(row[0] for row in events) == Counter(list(claims))
    for task_id, payload in events:
        payload = json.loads(payload)
        assert (payload["owner"], payload["lease_epoch"], payload["via"]) == (claims[task_id], 1, "next")
    rows = {r["id"]: r["lease_owner"] for r in conn.execute("SELECT id, lease_owner FROM tasks")}
    assert {task_id: rows[task_id] for task_id in claims} == claims
    assert rows["gated"] == ""

    chain = script("autopilot.py", "verify-chain", home=home)
    assert chain.returncode == 0, chain.stdout
    report = json.loads(chain.stdout)
    assert report["ok"] is True and report["problems"] == []
