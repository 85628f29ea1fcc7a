"""ops.py approval (sealed approval receipts) and ops.py unverified-completions."""

import json
import os
import stat

from conftest import script
from mindos.store import db
from mindos.work import approvals, leases, lifecycle, receipts, tasks
from mindos.core.canonical import sha256_hex
from conftest import make_task as make


def state(conn, home):
    return ([tuple(r) for r in conn.execute("SELECT * FROM tasks ORDER BY id")],
            [tuple(r) for r in conn.execute("SELECT * FROM receipts ORDER BY id")],
            conn.execute("SELECT count(*) FROM audit_events").fetchone()[0],
            sorted(os.listdir(os.path.join(str(home), "receipts"))))


def finish(conn, task_id, owner="hermes", **kw):
    leases.claim(conn, task_id, owner)
    return lifecycle.complete(conn, task_id, owner, **kw)


def test_approval_writes_a_sealed_receipt_and_audits(conn, home, cli_json):
    make(conn, "t1")
    out = cli_json("ops", "approval", "approve", "t1", "--by", "leo", "--note", "ship it")
    assert out["task_id"] == "t1" and out["approved_by"] == "leo"
    row = conn.execute("SELECT task_id, kind, path, file_hash FROM receipts WHERE id = ?",
                       (out["receipt_id"],)).fetchone()
    assert (row["task_id"], row["kind"]) == ("t1", "approval")
    assert row["path"] == f"receipts/{out['receipt_id']}.json"  # relative: the home can move
    with open(os.path.join(conn.home, row["path"]), "rb") as handle:
        data = handle.read()
    assert row["file_hash"] == sha256_hex(data) == out["file_hash"]
    assert stat.S_IMODE(os.stat(os.path.join(conn.home, row["path"])).st_mode) == 0o600
    document = json.loads(data)
    assert document["payload"]["approved_by"] == "leo" and document["payload"]["note"] == "ship it"
    event = conn.execute("SELECT payload_json FROM audit_events WHERE action = 'approval_granted'").fetchone()
    assert json.loads(event[0]) == {"approved_by": "leo", "receipt_id": out["receipt_id"],
                                    "file_hash": out["file_hash"], "task_status": "queued"}


def test_approval_satisfies_an_approval_definition_of_done(conn):
    make(conn, "t1", requires_receipts=["approval"])
    leases.claim(conn, "t1", "hermes")
    approval = approvals.approve(conn, "t1", "leo")
    out = lifecycle.complete(conn, "t1", "hermes", receipts=[approval["receipt_id"]])
    assert out["required_evidence_met"] is True and out["receipts"] == [approval["receipt_id"]]


def test_approval_bad_input_leaves_no_row_no_file_no_event(conn, home, cli):
    make(conn, "t1")
    before = state(conn, home)
    for argv, code, phrase in [
        (["approve", "nope", "--by", "leo"], 1, "unknown task 'nope'"),
        (["approve", "t1", "--by", ""], 2, "invalid --by"),
        (["approve", "t1", "--by", "leo; rm -rf /"], 2, "invalid --by"),
        (["approve", "../t1", "--by", "leo"], 2, "invalid task id"),
        (["approve", "t1"], 2, "--by"),
        (["reject", "t1", "--by", "leo"], 2, "invalid choice"),
        (["approve", "t1", "--by", "leo", "--note", "x" * 5000], 2, "invalid --note"),
    ]:
        rc, out, err = cli("ops", "approval", *argv)
        assert (rc, out) == (code, ""), (argv, rc, err)
        assert phrase in err and "Traceback" not in err
    assert state(conn, home) == before


def test_unverified_completions_finds_bare_claims_and_vanished_evidence(conn, cli_json):
    make(conn, "bare")
    finish(conn, "bare")
    make(conn, "proved")
    leases.claim(conn, "proved", "hermes")
    kept = receipts.add(conn, "proved", "verification", {"ok": True})["receipt_id"]
    lifecycle.complete(conn, "proved", "hermes", receipts=[kept])
    make(conn, "lost")
    leases.claim(conn, "lost", "hermes")
    gone = receipts.add(conn, "lost", "verification", {"ok": True})["receipt_id"]
    other = receipts.add(conn, "lost", "commit", {"sha": "abc"})["receipt_id"]
    lifecycle.complete(conn, "lost", "hermes", receipts=[gone, other])
    make(conn, "open")
    assert approvals.metrics(conn) == {"completions_without_receipt": 1}
    report = cli_json("ops", "unverified-completions")
    assert report["checked"] == 3 and report["findings"] == 1
    assert [e["task_id"] for e in report["no_receipts"]] == ["bare"]
    assert report["evidence_receipt_missing"] == []
    with db.write(conn):  # a partial restore lost one cited receipt row
        conn.execute("DELETE FROM receipts WHERE id = ?", (gone,))
    before = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    report = cli_json("ops", "unverified-completions")
    assert report["findings"] == 2
    (entry,) = report["evidence_receipt_missing"]
    assert entry["task_id"] == "lost" and entry["missing_receipts"] == [gone]
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == before  # read-only
    with db.write(conn):
        conn.execute("DELETE FROM receipts WHERE id = ?", (other,))
    report = approvals.unverified_completions(conn)
    assert [e["task_id"] for e in report["no_receipts"]] == ["bare", "lost"]
    assert report["evidence_receipt_missing"][0]["missing_receipts"] == sorted([gone, other])


def test_unverified_completions_ignores_open_and_uncited_tasks(conn):
    make(conn, "q")
    make(conn, "c")
    leases.claim(conn, "c", "hermes")
    receipts.add(conn, "c", "verification", {"ok": True})
    lifecycle.complete(conn, "c", "hermes")  # evidence exists even though none was cited
    report = approvals.unverified_completions(conn)
    assert report == {"checked": 1, "no_receipts": [], "evidence_receipt_missing": [], "findings": 0}


def test_approval_subprocess(conn, home):
    make(conn, "t1")
    conn.close()
    proc = script("ops.py", "approval", "approve", "t1", "--by", "leo", home=home)
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["receipt"]["kind"] == "approval"
