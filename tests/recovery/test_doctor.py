"""ops.py doctor: every check names its problems by kind and ids, and nothing is ever changed."""

import json
import os
import sqlite3

import pytest

from recovery_helpers import file_state, populate
from mindos.core import clock
from mindos.memory import facts, memories
from mindos.recovery import checkpoint, doctor
from mindos.store import db


def raw(home):
    """A plain connection with foreign keys off: out-of-band surgery, as a damaged home has seen."""
    return sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)


def kinds(report):
    return sorted({p["kind"] for p in report["problems"]})


def test_clean_home_is_ok_and_memory_store_is_a_note(conn, home, cli):
    populate(conn)
    rc, out, err = cli("ops", "doctor")
    assert (rc, err) == (0, "")
    report = json.loads(out)
    assert report["ok"] is True and report["problems"] == [] and report["problems_by_kind"] == {}
    assert report["notes"]["memory_store"] == {"status": "ok", "memories": 1}
    assert report["notes"]["dependencies_on_missing_tasks"] == 1
    assert report["counts"]["tasks"] == 4
    for check in ("audit_chain", "leases", "receipts", "checkpoints", "fts_drift", "foreign_keys"):
        assert check in report["checks"]


def test_empty_memory_store_is_not_a_problem(conn, home):
    report = doctor.run(str(home))
    assert report["ok"] is True and report["notes"]["memory_store"] == {"status": "empty", "memories": 0}
    memories.retain(conn, "we chose sqlite for execution truth", project="Trove")
    assert doctor.run(str(home))["notes"]["memory_store"] == {"status": "ok", "memories": 1}


def test_doctor_never_mutates_even_a_damaged_home(conn, home, cli):
    populate(conn)
    r = raw(home)
    r.execute("UPDATE audit_events SET action = 'forged' WHERE id = 3")
    r.execute("INSERT INTO notes(task_id, kind, content, created_at) VALUES ('nope', 'fact', 'x', '2026-01-01T00:00:00Z')")
    r.close()
    with open(os.path.join(str(home), "receipts", "r-stray.json"), "w") as handle:
        handle.write("{}")
    clock.advance(3600)  # t2's lease is stale now
    before = file_state(home)
    assert "state.db-wal" in before  # a live WAL must not be checkpointed by the doctor either
    rc, out, _ = cli("ops", "doctor")
    assert rc == 1
    report = json.loads(out)
    assert {"hash_mismatch", "orphan_note", "stale_lease"} <= set(kinds(report))
    assert file_state(home) == before


def test_each_problem_kind_is_named_with_its_ids(conn, home):
    populate(conn)
    r = raw(home)
    r.execute("INSERT INTO notes(task_id, kind, content, created_at) VALUES ('gone', 'fact', 'x', '2026-01-01T00:00:00Z')")
    r.execute("INSERT INTO dependencies(task_id, depends_on, created_at) VALUES ('gone', 't1', '2026-01-01T00:00:00Z')")
    r.execute("INSERT INTO handoffs(task_id, payload_hash, created_at) VALUES ('gone', 'h', '2026-01-01T00:00:00Z')")
    r.execute("INSERT INTO heartbeats(task_id, owner, at) VALUES ('gone', 'a', '2026-01-01T00:00:00Z')")
    r.execute("INSERT INTO receipts(id, task_id, kind, path, created_at) VALUES ('r-gone', 'gone', 'k', 'receipts/r-gone.json', 'x')")
    r.execute("UPDATE notes SET superseded_by = 999 WHERE id = (SELECT min(id) FROM notes)")
    r.execute("UPDATE tasks SET lease_owner = 'zombie' WHERE id = 't4'")
    r.close()
    report = doctor.run(str(home))
    assert report["ok"] is False
    by = {p["kind"]: p for p in report["problems"]}
    assert by["orphan_note"]["task_id"] == "gone"
    assert by["orphan_dependency"] == {"kind": "orphan_dependency", "task_id": "gone", "depends_on": "t1"}
    assert by["orphan_handoff"]["task_id"] == "gone"
    assert by["orphan_heartbeat"]["task_id"] == "gone"
    assert by["orphan_receipt"]["receipt_id"] == "r-gone"
    assert by["receipt_file_missing"]["receipt_id"] == "r-gone"
    assert by["dangling_supersession"]["superseded_by"] == 999
    assert by["terminal_task_leased"]["task_id"] == "t4"


def test_receipt_tampering_and_loss_are_found(conn, home):
    populate(conn)
    rid, path = conn.execute("SELECT id, path FROM receipts").fetchone()
    full = os.path.join(str(home), path)
    with open(full, "ab") as handle:
        handle.write(b" ")
    report = doctor.run(str(home))
    assert [p for p in report["problems"] if p["kind"] == "receipt_file_hash_mismatch"][0]["receipt_id"] == rid
    os.unlink(full)
    report = doctor.run(str(home))
    assert kinds(report) == ["receipt_file_missing"]


def test_receipt_path_outside_the_home_is_a_problem(conn, home):
    populate(conn)
    r = raw(home)
    r.execute("UPDATE receipts SET path = '../../etc/passwd'")
    r.close()
    assert kinds(doctor.run(str(home))) == ["receipt_path_outside_home"]


def test_chain_breaks_are_named(conn, home):
    populate(conn)
    r = raw(home)
    r.execute("DELETE FROM audit_events WHERE id = 4")
    r.close()
    report = doctor.run(str(home))
    assert report["problems"] == [{"kind": "broken_link", "event_id": 5, "previous_event_id": 3}]


def test_stale_leases_are_named(conn, home):
    populate(conn)
    clock.advance(3600)
    report = doctor.run(str(home))
    assert report["problems"] == [{"kind": "stale_lease", "task_id": "t2", "status": "claimed",
                                   "lease_owner": "claude", "lease_expires_at": "2026-08-21T09:30:00Z"}]


def test_live_handoff_invariant(conn, home):
    populate(conn)
    r = raw(home)
    r.execute("DROP INDEX idx_handoffs_one_live")
    r.execute("UPDATE handoffs SET superseded_by = NULL")
    r.close()
    assert "multiple_live_handoffs" in kinds(doctor.run(str(home)))


def test_fts_drift_is_found_through_fts5vocab(conn, home):
    populate(conn)
    row = conn.execute("SELECT id, content FROM notes ORDER BY id LIMIT 1").fetchone()
    with db.write(conn):
        conn.execute("INSERT INTO notes_fts(notes_fts, rowid, content) VALUES ('delete', ?, ?)", tuple(row))
    report = doctor.run(str(home))
    drift = [p for p in report["problems"] if p["kind"] == "fts_index_drift"]
    assert drift and drift[0]["index"] == "notes_fts" and drift[0]["missing"] == [row[0]]


def test_checkpoint_pins_are_validated(conn, home):
    populate(conn)
    checkpoint.create(conn)
    assert doctor.run(str(home))["ok"] is True
    r = raw(home)
    r.execute("DELETE FROM audit_events WHERE id = (SELECT max(id) FROM audit_events)")
    r.close()
    found = kinds(doctor.run(str(home)))
    assert "chain_truncated" in found and "events_removed_since_checkpoint" in found


def test_a_tampered_checkpoint_file_is_a_problem(conn, home):
    populate(conn)
    made = checkpoint.create(conn)
    with open(made["path"], "rb") as handle:
        data = bytearray(handle.read())
    data[-1:] = b" "
    with open(made["path"], "wb") as handle:
        handle.write(bytes(data))
    assert kinds(doctor.run(str(home))) == ["checkpoint_invalid"]


def test_dangling_fact_reference(conn, home):
    populate(conn)
    kept = facts.assert_fact(conn, subject="auth", predicate="uses", obj="pg14", source="codex", task="t1")
    gone = facts.assert_fact(conn, subject="db", predicate="runs", obj="pg16", source="codex", task="t3")
    facts.assert_fact(conn, subject="x", predicate="y", obj="z", source="codex")
    r = raw(home)
    r.execute("UPDATE facts SET task_id = 'vanished' WHERE id = ?", (gone["id"],))
    r.close()
    report = doctor.run(str(home))
    assert report["problems"] == [{"kind": "dangling_fact_reference", "fact_id": gone["id"], "task_id": "vanished"}]
    assert kept["id"] != gone["id"]


def test_drifted_task_readiness_is_named_and_its_repair_recounts_it(conn, home, cli):
    """tasks.unmet_deps is derived (kept by triggers; next trusts it): a count changed out of
    band is named per task with the stored and the counted value, the repair it names puts
    every count right, and a sweep since a watermark leaves the whole-table pass out."""
    populate(conn)  # t2 waits on nothing (t1 completed), t3 on a missing task
    r = raw(home)
    r.execute("UPDATE tasks SET unmet_deps = 3 WHERE id = 't2'")
    r.execute("UPDATE tasks SET unmet_deps = 0 WHERE id = 't3'")
    r.close()
    report = doctor.run(str(home))
    drifted = [p for p in report["problems"] if p["kind"] == "task_readiness_drift"]
    assert [(p["task_id"], p["stored"], p["counted"]) for p in drifted] == [("t2", 3, 0), ("t3", 0, 1)]
    assert "task_readiness" in report["checks"]
    assert report["ok"] is False
    rc, out, _ = cli("ops", "doctor")
    assert rc == 1 and json.loads(out)["problems_by_kind"]["task_readiness_drift"] == 2
    repair = drifted[0]["repair"]
    statement = repair.split('"')[1]
    assert statement == db.RECOUNT_UNMET
    r = raw(home)
    r.execute(statement)  # what the operator runs: sqlite3 <home>/state.db "<statement>"
    r.close()
    assert doctor.run(str(home))["ok"] is True
    watermark = doctor.sweep(db.connect(str(home)), since={"event_id": 1, "anchor": ""})
    assert "task_readiness" not in watermark["checks"]


def test_crash_leftovers_are_noted_not_problems(conn, home):
    populate(conn)
    rdir = os.path.join(str(home), "receipts")
    with open(os.path.join(rdir, "r-orphan.json"), "w") as handle:
        handle.write("{}")
    with open(os.path.join(rdir, ".r-x.json.1.ab.tmp"), "w") as handle:
        handle.write("{")
    report = doctor.run(str(home))
    assert report["ok"] is True
    assert report["notes"]["receipt_files_unindexed"] == 2
    assert report["notes"]["receipt_files_unindexed_ids"] == ["r-orphan"]


def test_schema_skew_is_reported_not_migrated(conn, home):
    r = raw(home)
    r.execute("PRAGMA user_version=3")
    r.close()
    report = doctor.run(str(home))  # behind: the next ordinary use migrates it, so only a note
    assert report["ok"] and report["notes"]["schema_version"]["version"] == 3
    assert raw(home).execute("PRAGMA user_version").fetchone()[0] == 3
    r = raw(home)
    r.execute("PRAGMA user_version=99")
    r.close()
    assert kinds(doctor.run(str(home))) == ["schema_version_mismatch"]  # newer than this code: a problem
    assert raw(home).execute("PRAGMA user_version").fetchone()[0] == 99


def test_missing_database_is_one_line_refusal(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("HERMES_AUTOPILOT_HOME", str(tmp_path / "nowhere"))
    rc, out, err = cli("ops", "doctor")
    assert rc == 1 and out == "" and err.count("\n") == 1 and "no MindOS database" in err
    assert not (tmp_path / "nowhere").exists()


def test_a_write_during_an_immutable_sweep_is_swept_again_live(conn, home, monkeypatch):
    populate(conn)
    conn.close()
    assert not os.path.exists(os.path.join(str(home), "state.db-wal"))
    real_sweep, calls = doctor.sweep, []

    def sweep_while_an_agent_writes(connection, **options):
        calls.append(connection.immutable)
        if len(calls) == 1:
            writer = db.connect(str(home))
            from mindos.work import tasks
            tasks.create(writer, project="P", title="written mid-sweep", task_id="t-mid")
            writer.close()
        return real_sweep(connection, **options)

    monkeypatch.setattr(doctor, "sweep", sweep_while_an_agent_writes)
    report = doctor.run(str(home))
    assert calls == [True, False]
    assert report["ok"] and report["counts"]["tasks"] == 5


def _flip_index_page(home, index):
    """Flip the last bytes of ``index``'s root page (its one leaf while the table is small)."""
    path = os.path.join(str(home), "state.db")
    link = raw(home)
    root = link.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (index,)).fetchone()[0]
    size = link.execute("PRAGMA page_size").fetchone()[0]
    link.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    link.close()
    with open(path, "r+b") as handle:
        handle.seek(root * size - 12)
        data = bytearray(handle.read(10))
        handle.seek(root * size - 12)
        handle.write(bytes(b ^ 0x01 for b in data))


def test_full_doctor_names_a_damaged_index_and_its_repair(conn, home, cli):
    from conftest import make_task

    make_task(conn, "t1")
    conn.close()
    _flip_index_page(home, "idx_tasks_status_priority")
    assert raw(home).execute("PRAGMA quick_check").fetchone()[0] == "ok"  # the quick check cannot see it
    rc, out, err = cli("ops", "doctor")
    assert rc == 1 and err == ""
    report = json.loads(out)
    assert "integrity_full" in report["checks"]
    damaged = [p for p in report["problems"] if p["kind"] == "database_integrity"]
    assert damaged and damaged[0]["index"] == "idx_tasks_status_priority" and damaged[0]["table"] == "tasks"
    assert "REINDEX idx_tasks_status_priority" in damaged[0]["repair"] and "snapshot-restore" in damaged[0]["repair"]
    rc, out, _ = cli("ops", "doctor", "--quick")
    assert "database_integrity" not in json.loads(out)["problems_by_kind"]
    raw(home).execute("REINDEX idx_tasks_status_priority")
    rc, out, _ = cli("ops", "doctor")
    assert rc == 0, out


def test_a_ledger_row_with_invalid_utf8_is_named_by_every_reader(conn, home, cli):
    from conftest import make_task

    make_task(conn, "t1")
    make_task(conn, "t2")
    raw(home).execute("UPDATE audit_events SET payload_json = CAST(x'7b2261223a22ff227d' AS TEXT) WHERE id = 1")
    rc, out, err = cli("autopilot", "verify-chain")
    assert rc == 1 and err == ""
    problems = json.loads(out)["problems"]
    assert problems[0]["kind"] == "undecodable_event" and problems[0]["event_id"] == 1
    assert problems[0]["fields"] == ["payload_json"]
    rc, out, err = cli("ops", "doctor")
    assert rc == 1 and "undecodable_event" in json.loads(out)["problems_by_kind"]
    rc, out, err = cli("autopilot", "events")
    assert (rc, err) == (0, "")
    bad = [e for e in json.loads(out)["events"] if e["id"] == 1][0]
    assert bad["tampered"] is True and bad["undecodable"] == ["payload_json"] and bad["payload"] is None
    rc, out, err = cli("autopilot", "show", "t1")
    assert (rc, err) == (0, "")
    assert json.loads(out)["audit"][0]["undecodable"] == ["payload_json"]
    rc, out, err = cli("autopilot", "show", "t2")  # an intact task's trail is unchanged
    assert "undecodable" not in out


@pytest.mark.parametrize("column", ["entity_id", "hash", "created_at"])
def test_any_undecodable_ledger_column_is_named_not_fatal(conn, home, cli, column):
    from conftest import make_task

    make_task(conn, "t1")
    make_task(conn, "t2")
    raw(home).execute(f"UPDATE audit_events SET {column} = CAST(x'74ff31' AS TEXT) WHERE id = 1")
    rc, out, err = cli("autopilot", "verify-chain")
    assert rc == 1 and err == ""
    found = [p for p in json.loads(out)["problems"] if p["kind"] == "undecodable_event"]
    assert found == [{"detail": found[0]["detail"], "event_id": 1, "fields": [column], "kind": "undecodable_event"}]
    for argv in (("ops", "doctor"), ("autopilot", "events"), ("ops", "checkpoint"), ("ops", "nanny")):
        rc, out, err = cli(*argv)
        assert "Traceback" not in err and "user-defined function" not in err and "decode" not in err, (argv, err)


def test_full_doctor_names_a_damaged_table_and_says_a_restore_repairs_it(conn, home, cli):
    from conftest import make_task

    make_task(conn, "t1")
    conn.close()
    path = os.path.join(str(home), "state.db")
    link = raw(home)
    root = link.execute("SELECT rootpage FROM sqlite_master WHERE name = 'notes'").fetchone()[0]
    size = link.execute("PRAGMA page_size").fetchone()[0]
    link.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    link.close()
    with open(path, "r+b") as handle:  # the page header claims cells it does not hold
        handle.seek((root - 1) * size + 3)
        handle.write(b"\x00\x09")
    rc, out, err = cli("ops", "doctor")
    assert rc == 1 and err == ""
    damaged = [p for p in json.loads(out)["problems"] if p["kind"] == "database_integrity"]
    assert damaged and all(p.get("table") == "notes" for p in damaged)
    assert "snapshot-restore" in damaged[0]["repair"] and "REINDEX cannot repair a table" in damaged[0]["repair"]


def test_a_rows_window_names_each_null_in_a_not_null_column_and_reads_clean_rows_in_one_statement(tmp_path):
    import sqlite3 as sqlite

    from mindos.recovery import doctor as the_doctor

    link = sqlite.connect(str(tmp_path / "plain.db"), isolation_level=None)
    link.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b TEXT, note TEXT)")
    link.executemany("INSERT INTO t(id, a, b, note) VALUES (?, ?, ?, ?)",
                     [(n, "x" * (5000 if n == 3 else 5), "y", None if n % 2 else "z") for n in range(1, 9)])
    link.execute("UPDATE t SET a = NULL WHERE id IN (4, 7)")
    link.execute("UPDATE t SET b = NULL WHERE id = 7")
    link.execute("PRAGMA writable_schema=ON")
    link.execute("UPDATE sqlite_master SET sql = 'CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT NOT NULL,"
                 " b TEXT NOT NULL, note TEXT)' WHERE name = 't'")
    link.execute("PRAGMA writable_schema=OFF")
    link.close()
    link = sqlite.connect(str(tmp_path / "plain.db"), isolation_level=None)
    try:
        statements = []
        link.set_trace_callback(statements.append)
        report = the_doctor._Report()
        the_doctor._integrity_rows(link, report, "t", 0, 3)  # clean rows, one of them on overflow pages
        assert report.problems == [] and len([text for text in statements if text.startswith("SELECT")]) == 1
        the_doctor._integrity_rows(link, report, "t", 3, 8)
        assert sorted(problem["detail"] for problem in report.problems) == [
            "NULL value in t.a", "NULL value in t.a", "NULL value in t.b"]
        assert {problem["table"] for problem in report.problems} == {"t"}
    finally:
        link.close()


def test_a_sweep_without_counts_reads_one_memory_row_not_the_table(conn, home):
    assert doctor.sweep(conn, counts=False)["notes"]["memory_store"] == {"status": "empty"}
    memories.retain(conn, "we chose sqlite for execution truth", project="Trove")
    statements = []
    conn.set_trace_callback(statements.append)
    try:
        report = doctor.sweep(conn, counts=False)
    finally:
        conn.set_trace_callback(None)
    assert report["counts"] == {} and report["notes"]["memory_store"] == {"status": "ok"}
    assert 'SELECT count(*) FROM main."memories"' not in statements
    full = doctor.sweep(conn)
    assert full["notes"]["memory_store"]["status"] == report["notes"]["memory_store"]["status"]


def test_key_windows_over_a_table_without_rowids_find_each_fault_once(tmp_path):
    import sqlite3 as sqlite

    from mindos.recovery import doctor as the_doctor

    path = str(tmp_path / "keyed.db")
    link = sqlite.connect(path, isolation_level=None)
    link.execute("CREATE TABLE kv(a TEXT, b INTEGER, c TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID")
    link.execute("CREATE INDEX kv_c ON kv(c) WHERE a <> 'k5'")  # made whole below: k5's entry is missing
    link.executemany("INSERT INTO kv VALUES (?, ?, ?)", [(f"k{n}", n, None if n == 7 else f"v{n}") for n in range(10)])
    link.execute("PRAGMA writable_schema=ON")
    link.execute("UPDATE sqlite_master SET sql = 'CREATE INDEX kv_c ON kv(c)' WHERE name = 'kv_c'")
    link.execute("UPDATE sqlite_master SET sql = 'CREATE TABLE kv(a TEXT, b INTEGER, c TEXT NOT NULL,"
                 " PRIMARY KEY (a, b)) WITHOUT ROWID' WHERE name = 'kv'")
    link.execute("PRAGMA writable_schema=OFF")
    link.close()
    link = sqlite.connect(path, isolation_level=None)
    try:
        assert the_doctor.primary_key(link, "kv") == ["a", "b"]
        assert the_doctor.lookup_indexes(link, "kv") == 1  # kv_c; its own key index is the table
        report, windows, after = the_doctor._Report(), [], None
        while True:
            upto = the_doctor.key_after(link, "kv", after, 3)
            windows.append((after, upto))
            the_doctor._integrity_keys(link, report, "kv", after, upto)
            if upto is None:
                break
            after = upto
        assert windows == [(None, ["k2", 2]), (["k2", 2], ["k5", 5]), (["k5", 5], ["k8", 8]), (["k8", 8], None)]
        assert sorted(problem["detail"] for problem in report.problems) == [
            "NULL value in kv.c", "row (k5, 5) missing from index kv_c"]
    finally:
        link.close()


def test_rowid_tables_tells_without_rowid_tables_however_their_text_is_written(conn):
    import re

    conn.execute("CREATE TABLE zz_rowid_named (rowid_ref TEXT, note TEXT)")  # names rowid, has rowids
    conn.execute("CREATE TABLE zz_keyed (a TEXT PRIMARY KEY, b TEXT) without\n  RowId")
    conn.execute("CREATE TABLE zz_plain (a TEXT)")
    found = doctor.rowid_tables(conn)
    assert {"zz_rowid_named", "zz_plain"} <= found and "zz_keyed" not in found
    # the same answer as searching every table's text
    every = {name for name, text in conn.execute("SELECT name, sql FROM main.sqlite_master WHERE type = 'table'")
             if not re.search(r"\bWITHOUT\s+ROWID\b", text or "", re.I)}
    assert found == every


def test_a_references_turn_over_the_handoffs_finds_two_live_ones_as_the_full_run_does_from_the_index(conn, home):
    from mindos.recovery import checkpoint
    from mindos.store import ledger

    populate(conn)
    since = {**checkpoint.watermark(conn), "anchor": ledger.GENESIS_HASH}
    statements = []
    conn.set_trace_callback(statements.append)
    try:
        clean = doctor.sweep(conn, since=since, part={"ref_tables": ["handoffs"]})
    finally:
        conn.set_trace_callback(None)
    assert "multiple_live_handoffs" not in {p["kind"] for p in clean["problems"]}
    counted = [text for text in statements if "count(*) FROM handoffs WHERE superseded_by IS NULL" in text]
    assert len(counted) == 1 and "IN (SELECT" not in counted[0]  # checked whole: no list of tasks built first
    plan = " ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + counted[0]))
    assert "idx_handoffs_one_live" in plan, plan
    r = raw(home)
    r.execute("DROP INDEX idx_handoffs_one_live")
    r.execute("UPDATE handoffs SET superseded_by = NULL")
    r.close()
    full = [p for p in doctor.run(str(home))["problems"] if p["kind"] == "multiple_live_handoffs"]
    turn = [p for p in doctor.sweep(conn, since=since, part={"ref_tables": ["handoffs"]})["problems"]
            if p["kind"] == "multiple_live_handoffs"]
    assert full and turn == full
