"""ops.py sense: typed, content-hashed findings; identical state, identical findings; reads only."""

import json

from autonomykit import (expired_grant, fts_drift, home_bytes, orphan_receipt, overdue, parked, stale_lease,
                         stalled, stuck_lease, tamper)
from conftest import make_task, script
from mindos.autonomy import sense
from mindos.core import canonical, clock


def kinds(report):
    return sorted({item["kind"] for item in report["findings"]})


def test_an_empty_home_has_no_findings(conn):
    report = sense.sense(conn)
    assert (report["findings"], report["total"], report["truncated"]) == ([], 0, False)
    assert report["sources"] == sense.source_names()


def test_every_source_reports_its_kind_with_severity_subjects_and_digest(conn):
    make_task(conn, "t-ok")
    stalled(conn)
    stale_lease(conn)
    overdue(conn, priority="P0")
    parked(conn, "t-user", "waiting_for_user")
    parked(conn, "t-merge", "ready_to_merge")
    parked(conn, "t-blocked", "blocked", "waiting on the vendor")
    expired_grant(conn)
    orphan_receipt(conn)
    fts_drift(conn)
    tamper(conn, 1)
    stuck_lease(conn)
    report = sense.sense(conn)
    assert kinds(report) == ["awaiting_decision", "blocked_task", "fts_index_drift", "grant_expired",
                             "hash_mismatch", "overdue_task", "receipt_file_unindexed", "stale_lease",
                             "stalled_lease", "stalled_running"]
    by = {(item["kind"], tuple(item["subjects"])): item for item in report["findings"]}
    assert by[("stale_lease", ("t-stale",))]["severity"] == "snag"
    assert by[("stale_lease", ("t-stale",))]["detail"]["owner"] == "hermes"
    assert by[("stalled_running", ("t-stall",))]["detail"]["owner"] == "codex"
    assert by[("overdue_task", ("t-late",))]["detail"]["escalation_candidate"] is False
    assert by[("awaiting_decision", ("t-merge",))]["severity"] == "decision"
    assert by[("blocked_task", ("t-blocked",))]["detail"]["blocked_reason"] == "waiting on the vendor"
    assert by[("grant_expired", ("t-grant",))]["severity"] == "decision"
    assert by[("hash_mismatch", ("1",))]["severity"] == "decision"
    assert by[("fts_index_drift", ("tasks_fts",))]["detail"]["missing_total"] == 1
    assert by[("receipt_file_unindexed", ("r-orphan",))]["source"] == "receipt-files"
    for item in report["findings"]:
        body = {"kind": item["kind"], "subjects": item["subjects"], "detail": item["detail"]}
        assert item["digest"] == canonical.digest(body)
    assert by[("stalled_lease", ("t-stuck",))]["detail"] == {
        "owner": "claude", "lease_epoch": 1, "progress_state": "tests-running",
        "progress_changed_at": "2026-08-21T12:09:00Z", "stall_at": "2026-08-21T12:39:00Z"}
    assert by[("stalled_lease", ("t-stuck",))]["source"] == "stalled-leases"
    assert report["by_severity"] == {"decision": 4, "snag": 7}


def test_identical_state_gives_identical_findings_and_time_alone_does_not_move_them(conn):
    stale_lease(conn)
    overdue(conn)
    first = sense.sense(conn)
    clock.advance(minutes=30)
    second = sense.sense(conn)
    assert second["findings"] == first["findings"] and second["digest"] == first["digest"]
    assert second["sensed_at"] != first["sensed_at"]
    conn.execute("UPDATE tasks SET priority = 'P1' WHERE id = 't-late'")
    assert sense.sense(conn)["digest"] != first["digest"]


def test_listings_are_capped_per_kind_with_exact_totals(conn):
    for n in range(5):
        parked(conn, f"t-b{n}", "blocked", "vendor")
    report = sense.sense(conn, limit=2)
    assert [item["subjects"] for item in report["findings"]] == [["t-b0"], ["t-b1"]]
    assert report["by_kind"] == {"blocked_task": 5} and report["total"] == 5 and report["truncated"] is True


def test_sense_leaves_the_database_and_receipts_byte_identical(conn, home):
    stalled(conn)
    stale_lease(conn)
    overdue(conn)
    orphan_receipt(conn)
    fts_drift(conn)
    stuck_lease(conn)
    before = home_bytes(conn)
    proc = script("ops.py", "sense", home=home, env={"MINDOS_NOW": clock.now_iso()})
    assert proc.returncode == 0 and proc.stderr == ""
    assert len(json.loads(proc.stdout)["findings"]) == 6
    assert home_bytes(conn) == before
    sense.sense(conn)
    assert home_bytes(conn) == before


def test_cli_sense_limit(cli, cli_json, conn):
    for n in range(3):
        parked(conn, f"t-b{n}", "blocked")
    assert len(cli_json("ops", "sense", "--limit", "1")["findings"]) == 1
    rc, out, err = cli("ops", "sense", "--limit", "0")
    assert (rc, out) == (2, "") and err.count("\n") == 1


def test_recall_stale_findings(conn):
    from mindos.context import recall
    from mindos.memory import handoffs, notes

    for tid in ("a", "b", "c"):
        make_task(conn, tid, title=f"task {tid}")
    params = recall.make_params()
    fresh = recall.recall(conn, "a", agent="codex", params=params)
    handoffs.record(conn, "a", from_agent="codex", objective="x", recall_digest=fresh["digest"])
    drift = recall.recall(conn, "b", agent="codex", params=params)
    handoffs.record(conn, "b", from_agent="codex", objective="x", recall_digest=drift.get("core_digest", drift["digest"]))
    notes.add(conn, "b", content="moved")
    handoffs.record(conn, "c", from_agent="codex", objective="x", recall_digest="b" * 64)
    report = sense.sense(conn)
    assert [(item["kind"], item["subjects"], item["severity"]) for item in report["findings"]] == [
        ("recall_stale", ["b"], "snag"), ("unproven_recall_digest", ["c"], "snag")]
    assert report["findings"][0]["detail"]["current_digest"] == recall.bundle(conn, "b", "codex", params)["digest"]


def test_recall_carries_the_grant_outside_the_digest(conn):
    from mindos.autonomy import grants
    from mindos.context import recall

    make_task(conn, "t1")
    params = recall.make_params()
    unsealed = (grants.recall_section,)  # what the recall commands pass down
    before = recall.recall(conn, "t1", agent="codex", params=params, unsealed=unsealed)
    assert "grant" not in before  # a lean bundle leaves out a grant that is not there
    grants.declare(conn, "t1", model_name="codex/gpt-5", autonomy_level="L2", granted_by="leo", grant_hours=1)
    after = recall.verify(conn, "t1", before["digest"], agent="codex", params=params)
    assert after["fresh"] is True  # declaring a grant does not stale a recall
    bundle = recall.bundle(conn, "t1", "codex", params, unsealed=unsealed)
    assert bundle["grant"]["model"] == "codex/gpt-5" and bundle["digest"] == before["digest"]
    plain = recall.bundle(conn, "t1", "codex", params)  # the engine alone names no upper floor
    assert "grant" not in plain and plain["digest"] == bundle["digest"]
    clock.advance(hours=2)
    assert recall.bundle(conn, "t1", "codex", params, unsealed=unsealed)["grant"]["expired"] is True
