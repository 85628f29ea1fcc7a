"""ops.py receipts-sweep: orphans adopted when complete and their task exists, else quarantined; never deleted."""

import json
import os

from recovery_helpers import file_state, populate
from mindos.core import seal
from mindos.recovery import doctor, receipt_sweep
from mindos.store import ledger


def _orphan(home, receipt_id, task_id):
    doc = seal.seal("mindos-receipt-v1", {"receipt_id": receipt_id, "task_id": task_id, "kind": "verification",
                                          "payload": {"ok": True}, "created_at": "2026-08-21T09:00:00Z"})
    return seal.write(os.path.join(str(home), "receipts", f"{receipt_id}.json"), doc)


def test_dry_run_plans_and_changes_nothing(conn, home, cli):
    populate(conn)
    _orphan(home, "r-adopt", "t2")
    before = file_state(home)
    rc, out, err = cli("ops", "receipts-sweep")
    report = json.loads(out)
    assert (rc, err) == (0, "") and report["apply"] is False
    assert report["adopt"] == [{"receipt_id": "r-adopt", "task_id": "t2"}] and report["adopted"] == []
    assert file_state(home) == before


def test_apply_adopts_and_quarantines_never_deletes(conn, home, cli):
    populate(conn)
    digest = _orphan(home, "r-adopt", "t2")
    _orphan(home, "r-notask", "nope")
    rdir = os.path.join(str(home), "receipts")
    with open(os.path.join(rdir, "r-torn.json"), "w") as handle:
        handle.write('{"receipt_id": "r-to')
    with open(os.path.join(rdir, ".r-x.json.12.ab.tmp"), "w") as handle:
        handle.write("{")
    rc, out, _ = cli("ops", "receipts-sweep", "--apply")
    report = json.loads(out)
    assert rc == 0
    assert report["adopted"] == [{"receipt_id": "r-adopt", "task_id": "t2"}]
    assert sorted(q["file"] for q in report["quarantined"]) == [".r-x.json.12.ab.tmp", "r-notask.json", "r-torn.json"]
    row = conn.execute("SELECT task_id, kind, file_hash FROM receipts WHERE id = 'r-adopt'").fetchone()
    assert tuple(row) == ("t2", "verification", digest)
    qdir = os.path.join(str(home), "quarantine")
    assert sorted(os.listdir(qdir)) == ["r-notask.json", "r-torn.json", "r-x.json.12.ab.tmp"]
    actions = [r[0] for r in conn.execute("SELECT action FROM audit_events WHERE action LIKE 'receipt_%'")]
    assert actions.count("receipt_adopted") == 1 and actions.count("receipt_quarantined") == 3
    assert ledger.verify_chain(conn)["ok"]
    report = doctor.run(str(home))
    assert report["ok"] and report["notes"]["receipt_files_unindexed"] == 0
    assert receipt_sweep.sweep(conn, apply=True)["quarantined"] == []
