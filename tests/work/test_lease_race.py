"""Race safety of the per-owner lease cap: concurrent processes of ONE owner never pass it."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, make_task
from mindos.store import db

PROCESSES = 8
CAP = 2
PINNED = "2026-08-21T09:00:00Z"  # the conftest clock: the tasks and the processes agree on "now"


def race(home, argvs, env=None):
    """Start every argv at once as a real front-door process; return [(rc, out, err)]."""
    environment = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home), MINDOS_NOW=PINNED)
    environment.pop("AUTOPILOT_MAX_ACTIVE_PER_OWNER", None)
    environment.update(env or {})
    procs = [subprocess.Popen([sys.executable, os.path.join(ROOT, "autopilot.py"), *argv], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=environment) for argv in argvs]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        results.append((proc.returncode, out, err))
    return results


def check_cap_held(home, results, owner):
    winners = [json.loads(out) for rc, out, err in results if rc == 0]
    losers = [(rc, out, err) for rc, out, err in results if rc != 0]
    assert len(winners) == CAP and len(losers) == PROCESSES - CAP, results
    for rc, out, err in results:
        assert "database is locked" not in err and "Traceback" not in err, err
    for rc, out, err in losers:
        assert (rc, out, err.strip()) == (1, "", f"owner '{owner}' at lease capacity ({CAP}/{CAP})")
    check = db.connect(str(home))
    try:
        held = [tuple(r) for r in check.execute(
            "SELECT id, lease_owner, lease_epoch FROM tasks WHERE lease_owner <> '' ORDER BY id")]
        claimed = [r[0] for r in check.execute(
            "SELECT entity_id FROM audit_events WHERE action = 'claimed' ORDER BY entity_id")]
    finally:
        check.close()
    assert len(held) == CAP and all(o == owner and e == 1 for _, o, e in held)
    assert claimed == [task_id for task_id, _, _ in held]  # the ledger matches what the winners hold
    return winners


@pytest.fixture
def pool(conn):
    for index in range(PROCESSES):
        make_task(conn, f"pool-{index}")
    conn.close()


def test_eight_next_claims_of_one_owner_with_max_active_hold_exactly_the_cap(pool, home):
    argv = ["next", "--claim", "--owner", "same", "--max-active", str(CAP)]
    winners = check_cap_held(home, race(home, [argv] * PROCESSES), "same")
    assert all(w["task"]["lease_owner"] == "same" for w in winners)
    assert len({w["task"]["id"] for w in winners}) == CAP


def test_eight_claims_of_one_owner_on_distinct_tasks_under_the_env_cap_hold_exactly_the_cap(pool, home):
    argvs = [["claim", f"pool-{index}", "--owner", "same"] for index in range(PROCESSES)]
    winners = check_cap_held(home, race(home, argvs, env={"AUTOPILOT_MAX_ACTIVE_PER_OWNER": str(CAP)}), "same")
    assert all(w["lease_owner"] == "same" for w in winners)
