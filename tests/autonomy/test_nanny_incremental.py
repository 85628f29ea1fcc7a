"""Ticks proportional to change: the nanny keeps a watermark in its audited tick, checks what
changed since the previous tick and rotates the whole-home checks one per tick, so every
fault is found within PERIOD_TICKS ticks with the findings a full sweep gives."""

import json
import os
import sqlite3
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "recovery"))

from recovery_helpers import populate  # noqa: E402
from test_doctor_since import FAULTS, _grow  # noqa: E402
from mindos.autonomy import nanny, sense  # noqa: E402
from mindos.core import clock  # noqa: E402
from mindos.recovery import checkpoint, doctor  # noqa: E402
from mindos.store import db, fts, ledger  # noqa: E402


def _tick(conn):
    report = nanny.tick(conn, max_repairs=0)
    clock.advance(60)
    return report


def _integrity_fault(home, conn):
    """A NULL in a NOT NULL column, written while the column's constraint was edited away
    (what quick_check reports as ``NULL value in term_df.df``)."""
    path = os.path.join(str(home), "state.db")

    def edit(step):
        link = sqlite3.connect(path, isolation_level=None)
        try:
            step(link)
        finally:
            link.close()

    original = sqlite3.connect(path).execute("SELECT sql FROM sqlite_master WHERE name = 'term_df'").fetchone()[0]

    def schema(sql):
        return lambda link: (link.execute("PRAGMA writable_schema=ON"),
                             link.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'term_df'", (sql,)))

    edit(schema(original.replace("df   INTEGER NOT NULL", "df INTEGER")))
    edit(lambda link: link.execute("INSERT INTO term_df(term, df) VALUES ('x', NULL)"))
    edit(schema(original))


def _old_parent_deleted(home, conn):
    """An old task deleted behind MindOS's back: its old notes become orphans (only the
    references turn, not the rows-since check, can see them)."""
    task = conn.execute("SELECT task_id FROM notes ORDER BY id LIMIT 1").fetchone()[0]
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    try:
        link.execute("DELETE FROM tasks WHERE id = ?", (task,))
    finally:
        link.close()


def _due_behind_the_back(home, conn):
    """An open task's due date moved into the past with no event: only the overdue recount
    turn can see it."""
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    try:
        link.execute("UPDATE tasks SET due_at = '2020-01-01T00:00:00Z' WHERE id = 't3'")
    finally:
        link.close()


def _recall_input_changed(home, conn):
    """A cited recall whose task gains a note: stale on the next tick."""
    from mindos.context import recall
    from mindos.memory import handoffs, notes

    sealed = recall.recall(conn, "t3", agent="codex", params=recall.make_params())
    handoffs.record(conn, "t3", from_agent="codex", objective="x", recall_digest=sealed.get("core_digest", sealed["digest"]))
    nanny.tick(conn, max_repairs=0)  # the cited recall is fresh at this tick
    notes.add(conn, "t3", content="the pool moved")


def _old_event_deleted(home, conn):
    """An event long before the checkpoint deleted behind MindOS's back: fewer events up to
    the pin than it sealed (found on the count turn; between its turns the counts are
    carried), and a broken link where it was."""
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    try:
        link.execute("DELETE FROM audit_events WHERE id = 3")
    finally:
        link.close()


def _index_row_dropped_below_the_watermark(home, conn):
    """An old note's row dropped from the full-text index alone (its docsize entry too): the
    balance moves below the watermark, where only the index's own turn counts it whole."""
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    try:
        row = link.execute("SELECT id, content FROM notes ORDER BY id LIMIT 1").fetchone()
        link.execute("INSERT INTO notes_fts(notes_fts, rowid, content) VALUES ('delete', ?, ?)", row)
    finally:
        link.close()


def _readiness_drift(home, conn):
    """An old task's stored count of unfinished prerequisites changed behind MindOS's back
    (``next`` trusts it): found on the integrity turn that reads the tasks table."""
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    try:
        link.execute("UPDATE tasks SET unmet_deps = unmet_deps + 3 WHERE id = 't1'")
    finally:
        link.close()


NANNY_FAULTS = {**FAULTS, "readiness_drift": _readiness_drift, "integrity": _integrity_fault, "old_parent_deleted": _old_parent_deleted,
                "due_behind_the_back": _due_behind_the_back, "recall_input_changed": _recall_input_changed,
                "old_event_deleted": _old_event_deleted,
                "index_row_dropped_below_the_watermark": _index_row_dropped_below_the_watermark}


def test_ticks_keep_a_watermark_and_rotate_the_whole_home_checks(conn, home):
    populate(conn)
    first = _tick(conn)
    assert first["sweep"] == {"mode": "full", "since_event_id": None, "full_checks": list(doctor.FAMILIES),
                              "slice": "all", "slice_part": None, "slice_rows": None,
                              "rotation_ticks": nanny.PERIOD_TICKS,
                              "period_ticks": nanny.PERIOD_TICKS, "chain_window": None,
                              "chain_period_ticks": nanny.PERIOD_TICKS}
    mark = sense.last_watermark(conn)
    assert mark["slice"] == "all" and mark["event_id"] == ledger.height(conn) - 1
    assert mark["anchor"] == conn.execute("SELECT hash FROM audit_events WHERE id = ?",
                                          (mark["event_id"],)).fetchone()[0]
    slices = []
    for _ in range(nanny.PERIOD_TICKS + 1):
        height = ledger.height(conn)
        report = _tick(conn)
        assert report["sweep"]["mode"] == "changed_since_last_tick"
        assert report["sweep"]["since_event_id"] == height - 1
        slices.append(report["sweep"]["slice"])
    assert slices == [*doctor.FAMILIES, doctor.FAMILIES[0]]
    assert nanny.PERIOD_TICKS == len(doctor.FAMILIES)


def test_a_busy_tick_does_not_move_the_watermark(conn, home):
    populate(conn)
    _tick(conn)
    mark = sense.last_watermark(conn)
    with nanny.TickLock(str(home)):
        busy = nanny.tick(conn, max_repairs=0)
    assert busy["lock"] == "busy"
    assert sense.last_watermark(conn) == mark


def _within_the_period(conn, home, fault, factor=1):
    """Inject ``fault`` after a tick, tick through the period the reports give (``factor``
    times it: ticks that defer their slice run none); return the reports."""
    populate(conn)
    checkpoint.create(conn)
    _tick(conn)
    _grow(conn)
    NANNY_FAULTS[fault](home, conn)
    resolved, ticks, period, reports = set(), 0, nanny.PERIOD_TICKS, []
    while ticks < period * factor:  # the period grows with the turns a family takes (read from each report)
        report = _tick(conn)
        resolved |= set(report["findings"]["resolved"])
        ticks, period = ticks + 1, max(period, report["sweep"]["period_ticks"])
        reports.append(report)
    remembered = {row["digest"] for row in conn.execute("SELECT digest FROM nanny_findings")}
    full = {item["digest"] for item in sense.sense(conn)["findings"]}
    assert remembered == full
    assert not (resolved & full)  # once found, a standing fault is carried, never dropped and found again
    if fault != "none":
        assert full, fault
    return reports


@pytest.mark.parametrize("fault", sorted(NANNY_FAULTS))
def test_every_fault_after_a_tick_is_found_within_the_period_as_the_full_sweep_finds_it(conn, home, fault):
    _within_the_period(conn, home, fault)


@pytest.mark.parametrize("fault", ["none", "integrity", "readiness_drift", "broken_fts_row_of_an_old_note", "old_parent_deleted",
                                   "new_note_missing_from_the_index", "tampered_audit_row", "orphan_rows",
                                   "dangling_supersession", "index_row_dropped_below_the_watermark"])
def test_with_one_table_and_one_index_a_turn_faults_are_found_within_the_reported_period(conn, home, fault,
                                                                                         monkeypatch):
    monkeypatch.setattr(nanny, "INTEGRITY_ROWS", 1)
    monkeypatch.setattr(nanny, "FTS_ROWS", 1)
    monkeypatch.setattr(nanny, "FTS_WINDOW", 2)  # the bigger indexes compared in windows too
    monkeypatch.setattr(nanny, "REFERENCE_ROWS", 1)
    monkeypatch.setattr(nanny, "REFERENCE_WINDOW", 3)  # the child tables' references in windows too
    monkeypatch.setattr(nanny, "CHAIN_WINDOW", 7)
    reports = _within_the_period(conn, home, fault)
    parts = {name: [r["sweep"]["slice_part"] for r in reports if r["sweep"]["slice"] == name]
             for name in ("integrity", "fts_drift", "references")}
    assert reports[-1]["sweep"]["period_ticks"] > nanny.PERIOD_TICKS
    assert len(parts["integrity"]) > 1 and len(parts["fts_drift"]) > 1 and len(parts["references"]) > 1
    assert {n for part in parts["references"] for n in part} == set(doctor.reference_tables(conn))
    assert {"notes", "handoffs", "receipts", "dependencies"} <= set(doctor.reference_tables(conn))
    # the turns walk every table and every index once per round, each a small part
    assert {n for part in parts["fts_drift"] for n in part} == {n for n in fts.INDEXES if fts.has(conn, n)}
    assert {n for part in parts["integrity"] for n in part} == set(doctor.integrity_tables(conn))
    assert all(len(part) < len(doctor.integrity_tables(conn)) for part in parts["integrity"])


def _burst(conn, count):
    """``count`` new events, as agents write them between two ticks."""
    task = conn.execute("SELECT id FROM tasks ORDER BY seq LIMIT 1").fetchone()[0]
    with db.write(conn):
        for n in range(count):
            ledger.append_event(conn, "task", task, "heartbeat", {"n": n})


def test_a_tick_after_a_burst_checks_the_new_events_and_leaves_its_slice_to_the_next_tick(conn, home, monkeypatch):
    monkeypatch.setattr(nanny, "DEFER_EVENTS", 5)
    populate(conn)
    _tick(conn)
    assert _tick(conn)["sweep"]["slice"] == doctor.FAMILIES[0]
    _burst(conn, 5)
    height = ledger.height(conn)
    deferred = _tick(conn)
    assert deferred["sweep"]["slice"] == nanny.DEFERRED and deferred["sweep"]["full_checks"] == []
    assert deferred["sweep"]["slice_part"] is None and deferred["sweep"]["chain_window"] is None
    assert sense.last_watermark(conn)["event_id"] == height  # the new events were checked
    _burst(conn, 5)  # never two ticks in a row: this one takes the turn the deferring one left
    assert _tick(conn)["sweep"]["slice"] == doctor.FAMILIES[1]
    _burst(conn, 3)  # with the previous tick's own event, under DEFER_EVENTS: the rotation goes on
    assert _tick(conn)["sweep"]["slice"] == doctor.FAMILIES[2]


@pytest.mark.parametrize("fault", ["none", "integrity", "tampered_audit_row", "old_parent_deleted",
                                   "broken_fts_row_of_an_old_note", "due_behind_the_back"])
def test_with_every_other_tick_deferring_faults_are_found_within_twice_the_period(conn, home, fault, monkeypatch):
    monkeypatch.setattr(nanny, "DEFER_EVENTS", 1)  # each tick's own event is a burst: every other tick defers
    reports = _within_the_period(conn, home, fault, factor=2)
    slices = [report["sweep"]["slice"] for report in reports]
    assert slices[::2] == [nanny.DEFERRED] * len(slices[::2]) and nanny.DEFERRED not in slices[1::2]
    assert set(slices[1::2]) == set(doctor.FAMILIES)


def test_a_table_slice_names_what_the_whole_check_names_in_it(conn, home):
    populate(conn)
    _integrity_fault(home, conn)
    since = {**checkpoint.watermark(conn), "anchor": ledger.GENESIS_HASH}
    whole = doctor.sweep(conn)["problems_by_kind"].get("database_integrity")
    kinds = lambda tables: doctor.sweep(conn, since=since, part={"tables": tables})["problems"]  # noqa: E731
    assert whole == 1
    assert [p["table"] for p in kinds(["term_df"]) if p["kind"] == "database_integrity"] == ["term_df"]
    assert not [p for p in kinds(["notes", "tasks", "no such table"]) if p["kind"] == "database_integrity"]


def test_a_tick_sweeps_the_checkpoints_once(conn, home, monkeypatch):
    populate(conn)
    checkpoint.create(conn)
    calls = []
    real = checkpoint.files
    monkeypatch.setattr(checkpoint, "files", lambda home: calls.append(home) or real(home))
    report = _tick(conn)
    assert report["checkpoint_pin"]["pinned"] is True
    assert len(calls) == 1


def test_a_pin_is_still_refused_when_the_ticks_sweep_found_a_checkpoint_problem(conn, home):
    populate(conn)
    made = checkpoint.create(conn)
    conn.execute("DELETE FROM audit_events WHERE id = ?", (made["last_event_id"],))
    report = nanny.tick(conn, max_repairs=0)
    assert report["checkpoint_pin"]["pinned"] is False
    assert {p["kind"] for p in report["checkpoint_pin"]["problems"]} >= {"chain_truncated"}


def test_sense_since_last_tick(conn, home, cli):
    populate(conn)
    rc, out, err = cli("ops", "sense", "--since-last-tick")
    assert (rc, err) == (0, "")
    assert json.loads(out)["sweep"] == {"mode": "full", "since_event_id": None}
    _tick(conn)
    mark = sense.last_watermark(conn)
    rc, out, err = cli("ops", "sense", "--since-last-tick")
    assert (rc, err) == (0, "")
    report = json.loads(out)
    assert report["sweep"] == {"mode": "changed_since_tick", "since_event_id": mark["event_id"]}
    assert report["digest"] == sense.sense(conn)["digest"]


def test_the_chain_slice_walks_the_ledger_in_windows_and_finds_an_old_tampered_event(conn, home, monkeypatch):
    monkeypatch.setattr(nanny, "CHAIN_WINDOW", 5)
    populate(conn)
    _grow(conn, count=6)
    _tick(conn)
    height = sense.last_watermark(conn)["event_id"]
    target = 3  # long before the watermark: only the chain slice can see it
    r = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    r.execute("UPDATE audit_events SET action = 'forged' WHERE id = ?", (target,))
    r.close()
    windows, found_at, resolved = [], None, set()
    for index in range(nanny.PERIOD_TICKS * (-(-height // 5) + 1)):
        report = _tick(conn)
        resolved |= set(report["findings"]["resolved"])
        if report["sweep"]["chain_window"]:
            windows.append(tuple(report["sweep"]["chain_window"]))
        if found_at is None and any(item["kind"] == "hash_mismatch" for item in report["findings"]["new"]):
            found_at = index
    assert windows[0] == (0, 5) and windows[1] == (5, 10)
    assert all(b - a <= 5 for a, b in windows)
    assert found_at is not None and found_at < report["sweep"]["chain_period_ticks"]
    full = {item["digest"] for item in sense.sense(conn)["findings"]}
    assert {row["digest"] for row in conn.execute("SELECT digest FROM nanny_findings")} == full
    assert not (resolved & full)


def test_a_window_names_what_the_full_scan_names_inside_it(conn, home):
    populate(conn)
    _grow(conn, count=6)
    r = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    r.execute("DELETE FROM audit_events WHERE id = 9")
    r.execute("UPDATE audit_events SET payload_json = '{}' WHERE id = 12")
    r.execute("UPDATE audit_events SET prev_hash = ? WHERE id = 16", ("c" * 64,))
    r.close()
    full = ledger.verify_chain(conn)["problems"]
    for after, upto in ((0, 9), (9, 12), (8, 16), (10, 20), (15, 16)):
        window = ledger.verify_chain(conn, after=after, upto=upto)["problems"]
        assert window == [p for p in full if after < p["event_id"] <= upto], (after, upto)


def test_overdue_tasks_are_read_from_their_index_with_the_findings_of_the_plain_read(conn, home):
    populate(conn)
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    link.execute("UPDATE tasks SET due_at = '2020-01-01T00:00:00Z'")
    total = link.execute("SELECT count(*) FROM tasks WHERE status NOT IN ('completed', 'failed', 'cancelled')"
                         ).fetchone()[0]
    indexed = sense.sense(conn, only=["overdue"], limit=1)
    plan = " ".join(row[3] for row in conn.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM tasks INDEXED BY idx_tasks_overdue_open WHERE due_at IS NOT NULL"
        " AND due_at < ? AND status NOT IN ('completed', 'failed', 'cancelled')", ("2030",)))
    assert "idx_tasks_overdue_open" in plan
    probe = " ".join(row[3] for row in conn.execute(
        "EXPLAIN QUERY PLAN SELECT 1 FROM handoffs WHERE superseded_by IS NULL AND recall_digest <> '' LIMIT 1"))
    assert "idx_handoffs_cited_live" in probe  # the recall-stale check's probe reads no handoff row
    link.execute("DROP INDEX idx_tasks_overdue_open")  # a schema before the index: the plain read
    link.close()
    conn.close()
    from mindos.store import db

    again = db.connect_readonly(str(home))
    try:
        plain = sense.sense(again, only=["overdue"], limit=1)
    finally:
        again.close()
    assert indexed["by_kind"] == plain["by_kind"] == {"overdue_task": total} and total >= 2
    assert [f["digest"] for f in indexed["findings"]] == [f["digest"] for f in plain["findings"]]
    assert len(indexed["findings"]) == 1


def test_the_pin_counts_only_the_events_after_the_swept_checkpoint(conn, home):
    populate(conn)
    made = checkpoint.create(conn)
    _grow(conn, count=2)
    problems, found = checkpoint.sweep_with_docs(conn)
    assert not problems and conn._mindos_counted == (made["last_event_id"], made["event_count"])
    assert checkpoint.head(conn, conn._mindos_counted) == checkpoint.head(conn)


def _null_under_not_null(home, table, column, update):
    """Run ``update`` (which writes a NULL into ``table.column``) with the column's NOT NULL
    edited out of the schema, then put the schema back: a row the constraint says cannot exist."""
    import re

    path = os.path.join(str(home), "state.db")
    link = sqlite3.connect(path, isolation_level=None)
    try:
        original = link.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        loose = re.sub(rf"({column}\s+TEXT) NOT NULL", r"\1", original)
        for text in (loose, None, original):
            if text is None:
                link.execute(update)
                continue
            link.execute("PRAGMA writable_schema=ON")
            link.execute("UPDATE sqlite_master SET sql = ? WHERE name = ?", (text, table))
            link.execute("PRAGMA writable_schema=OFF")
            link.close()
            link = sqlite3.connect(path, isolation_level=None)
    finally:
        link.close()


def _null_in_last_note(home, conn):
    """A NULL in notes.content of the newest note (NOT NULL edited away while it is written):
    in a table walked in windows, only the last window of the round reaches it."""
    _null_under_not_null(home, "notes", "content",
                         "UPDATE notes SET content = NULL WHERE id = (SELECT max(id) FROM notes)")


def _two_rounds(conn, table, kind, slice_name=None):
    """Tick until two whole rounds of windows over ``table`` have run (at most two periods).
    Returns ``(found, windows, resolved)``: the first window whose tick reported a new
    ``kind`` finding, the windows over ``table`` in order, and every finding resolved on the
    way.  ``slice_name``: only that slice's windows count (a table both integrity and
    references turns walk)."""
    resolved, ticks, period, found, windows = set(), 0, nanny.PERIOD_TICKS, None, []
    while ticks < 2 * period and len([w for w in windows if w[0] == 0]) < 3:
        report = _tick(conn)
        resolved |= set(report["findings"]["resolved"])
        ticks, period = ticks + 1, max(period, report["sweep"]["period_ticks"])
        if report["sweep"]["slice_part"] == [table] and slice_name in (None, report["sweep"]["slice"]):
            windows.append(tuple(report["sweep"]["slice_rows"]))
        if found is None and any(item["kind"] == kind for item in report["findings"]["new"]):
            found = report["sweep"]["slice_rows"]
    return found, windows, resolved


def test_a_fault_in_a_table_walked_in_windows_is_found_in_its_window_and_kept_through_the_round(conn, home,
                                                                                               monkeypatch):
    populate(conn)
    _grow(conn, count=6)
    top = conn.execute("SELECT max(rowid) FROM notes").fetchone()[0]
    monkeypatch.setattr(nanny, "INTEGRITY_ROWS", top - 1)  # notes is walked in windows, the larger tables whole
    monkeypatch.setattr(nanny, "INTEGRITY_WINDOW", max(2, top // 3))
    monkeypatch.setattr(doctor, "rowid_tables", lambda conn: {"notes"})
    _tick(conn)
    _null_in_last_note(home, conn)
    full = doctor.sweep(conn)["problems"]
    assert [p["detail"] for p in full if p["kind"] == "database_integrity"] == ["NULL value in notes.content"]
    found, windows, resolved = _two_rounds(conn, "notes", "database_integrity")
    notes_top = conn.execute("SELECT max(rowid) FROM notes").fetchone()[0]
    step = nanny.INTEGRITY_WINDOW
    assert windows[:2] == [(0, step), (step, 2 * step)] and found[0] < notes_top <= found[1]
    remembered = {row["digest"] for row in conn.execute("SELECT digest FROM nanny_findings")}
    assert remembered == {item["digest"] for item in sense.sense(conn)["findings"]}
    assert not (resolved & remembered)
    # the window names the fault as the whole check does (the same finding)
    since = {**checkpoint.watermark(conn), "anchor": ledger.GENESIS_HASH}
    window = doctor.sweep(conn, since=since, part={"tables": ["notes"], "rows": list(found)})["problems"]
    assert [p for p in window if p["kind"] == "database_integrity"] == \
        [p for p in full if p["kind"] == "database_integrity"]


def test_readiness_drift_in_the_tasks_table_walked_in_windows_is_found_in_its_window_and_kept(conn, home,
                                                                                            monkeypatch):
    """A task's stored readiness count changed behind MindOS's back, in a tasks table the
    integrity turns walk in windows: the window holding it names it as the full sweep does,
    and the finding is carried, never resolved, through the rounds that follow."""
    populate(conn)
    _grow(conn, count=6)
    top = conn.execute("SELECT max(rowid) FROM tasks").fetchone()[0]
    monkeypatch.setattr(nanny, "INTEGRITY_ROWS", top - 1)  # tasks is walked in windows
    monkeypatch.setattr(nanny, "INTEGRITY_WINDOW", max(2, top // 3))
    monkeypatch.setattr(doctor, "rowid_tables", lambda conn: {"tasks"})
    _tick(conn)
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    try:
        link.execute("UPDATE tasks SET unmet_deps = unmet_deps + 2 WHERE rowid = ?", (top,))
    finally:
        link.close()
    full = [p for p in doctor.sweep(conn)["problems"] if p["kind"] == "task_readiness_drift"]
    assert len(full) == 1
    found, windows, resolved = _two_rounds(conn, "tasks", "task_readiness_drift")
    assert found is not None and found[0] < top <= found[1]
    remembered = {row["digest"] for row in conn.execute("SELECT digest FROM nanny_findings")}
    assert remembered == {item["digest"] for item in sense.sense(conn)["findings"]}
    assert not (resolved & remembered)
    since = {**checkpoint.watermark(conn), "anchor": ledger.GENESIS_HASH}
    window = doctor.sweep(conn, since=since, part={"tables": ["tasks"], "rows": list(found)})["problems"]
    assert [p for p in window if p["kind"] == "task_readiness_drift"] == full
    before = doctor.sweep(conn, since=since, part={"tables": ["tasks"], "rows": [0, found[0]]})["problems"]
    assert not [p for p in before if p["kind"] == "task_readiness_drift"]  # a window without it names nothing


def test_a_row_window_names_a_row_missing_from_an_index(conn, home):
    populate(conn)
    path = os.path.join(str(home), "state.db")
    link = sqlite3.connect(path, isolation_level=None)
    try:  # an index entry removed behind SQLite's back: the index rebuilt without one row
        link.execute("DROP INDEX idx_notes_superseded_by")
        link.execute("CREATE INDEX idx_notes_superseded_by ON notes(superseded_by) WHERE id <> 1")
        link.execute("PRAGMA writable_schema=ON")
        link.execute("UPDATE sqlite_master SET sql = 'CREATE INDEX idx_notes_superseded_by ON notes(superseded_by)'"
                     " WHERE name = 'idx_notes_superseded_by'")
    finally:
        link.close()
    conn.close()
    from mindos.store import db

    again = db.connect_readonly(str(home))
    try:
        since = {**checkpoint.watermark(again), "anchor": ledger.GENESIS_HASH}
        found = doctor.sweep(again, since=since, part={"tables": ["notes"], "rows": [0, 10]})["problems"]
    finally:
        again.close()
    assert [(p["detail"], p["index"], p["table"]) for p in found if p["kind"] == "database_integrity"] == [
        ("row 1 missing from index idx_notes_superseded_by", "idx_notes_superseded_by", "notes")]


def test_a_row_window_looks_rows_up_in_partial_indexes_too(conn, home):
    # a partial index serves a lookup only when its condition is stated: a pinned
    # constraint missing from idx_notes_pinned_constraints is named, like any index entry
    from mindos.memory import notes as note_rows

    populate(conn)
    pinned = note_rows.add(conn, "t3", content="never deploy on friday", kind="constraint", pinned=True)["id"]
    path = os.path.join(str(home), "state.db")
    original = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'idx_notes_pinned_constraints'").fetchone()[0]
    link = sqlite3.connect(path, isolation_level=None)
    try:  # the index rebuilt without the one row it should hold, its declared SQL put back
        link.execute("DROP INDEX idx_notes_pinned_constraints")
        link.execute(original.replace("superseded_by IS NULL", f"superseded_by IS NULL AND id <> {pinned}"))
        link.execute("PRAGMA writable_schema=ON")
        link.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'idx_notes_pinned_constraints'", (original,))
    finally:
        link.close()
    conn.close()
    from mindos.store import db

    again = db.connect_readonly(str(home))
    try:
        since = {**checkpoint.watermark(again), "anchor": ledger.GENESIS_HASH}
        found = doctor.sweep(again, since=since, part={"tables": ["notes"], "rows": [0, 100]})["problems"]
    finally:
        again.close()
    assert [(p["detail"], p["index"]) for p in found if p["kind"] == "database_integrity"] == [
        (f"row {pinned} missing from index idx_notes_pinned_constraints", "idx_notes_pinned_constraints")]


def _statements(conn, step):
    seen = []
    conn.set_trace_callback(seen.append)
    try:
        step()
    finally:
        conn.set_trace_callback(None)
    return seen


def _whole_counts(statements):
    """The statements counting the whole ledger or a whole full-text index or content table."""
    import re

    tables = {"audit_events"} | {spec.table for spec in fts.INDEXES.values()} | \
        {f"{name}_docsize" for name in fts.INDEXES}
    whole = re.compile(r"count\(\*\) FROM (?:main\.)?(\w+)\)?(?:\s*-|\s*$|\)|\s*FROM)")
    return [text for text in statements for match in whole.finditer(text) if match.group(1) in tables]


def test_an_idle_tick_counts_no_whole_ledger_or_index_off_their_own_turns(conn, home):
    populate(conn)
    checkpoint.create(conn)
    _tick(conn)
    turns = {}
    for _ in range(nanny.PERIOD_TICKS):
        statements = _statements(conn, lambda: turns.setdefault("last", _tick(conn)))
        name = turns.pop("last")["sweep"]["slice"]
        turns[name] = _whole_counts(statements)
    assert set(turns) == set(doctor.FAMILIES)
    # no whole event count on any turn (the count turn counts its chain window's events by id
    # range), the whole index balances only on their own
    assert any("_docsize" in text for text in turns["fts_drift"])
    for name, counted in turns.items():
        assert not [text for text in counted if "audit_events" in text], name
        if name != "fts_drift":
            assert not counted, (name, counted)


def test_the_count_round_walks_the_chain_windows_and_finds_a_deleted_event_at_its_end(conn, home, monkeypatch):
    """The count turns sum the events of each chain window (as its verification counted
    them); at the round's last window the sum is compared with the counts carried from tick
    to tick: a deletion they missed makes the next tick count every checkpoint whole, and
    report what a full sweep reports."""
    monkeypatch.setattr(nanny, "CHAIN_WINDOW", 9)  # past the tick's own event each turn: the round ends
    populate(conn)
    _grow(conn, count=12)
    checkpoint.create(conn)
    _tick(conn)
    sums, whole = [], []
    real = checkpoint.trust_counts
    monkeypatch.setattr(checkpoint, "trust_counts", lambda c, known: whole.append(known is None) or real(c, known))
    for _ in range(50 * nanny.PERIOD_TICKS):
        report = _tick(conn)
        if report["sweep"]["slice"] != nanny.COUNT_TURN:
            continue
        sums.append(sense.last_watermark(conn).get("chain_count"))
        if sums[-1] is None:
            break
    # each window's events added to the round's count (never the whole ledger), none counted whole
    assert [pair[1] - pair[0] for pair in sums[:-1]] == [0] * (len(sums) - 1) and len(sums) > 2
    assert not any(whole)
    # deleted behind the counts' back, in a window the round has passed: the next round's end finds it
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    link.execute("DELETE FROM audit_events WHERE id = 2")
    link.close()
    found, ticks = [], 0
    while not found and ticks < 1000:  # the round gains 4 events a count turn on the ledger: about 200 ticks
        report = _tick(conn)
        ticks += 1
        found = [item for item in report["findings"]["new"] if item["kind"] == "events_removed_since_checkpoint"]
    # (the count turn ending the round finds the difference; the tick after it counts whole)
    assert found and whole[-1] is True and sense.last_watermark(conn).get("recount") is None
    assert report["sweep"]["slice"] == doctor.FAMILIES[(doctor.FAMILIES.index(nanny.COUNT_TURN) + 1) % 5]
    assert {row["digest"] for row in conn.execute("SELECT digest FROM nanny_findings")} == \
        {item["digest"] for item in sense.sense(conn)["findings"]}


def test_a_carried_balance_and_carried_counts_match_the_whole_counts_after_growth(conn, home):
    populate(conn)
    made = checkpoint.create(conn)
    mark = checkpoint.watermark(conn)
    _grow(conn)
    for name, spec in fts.INDEXES.items():
        if fts.has(conn, name):
            assert checkpoint.fts_gap(conn, spec, mark) == checkpoint.fts_gap(conn, spec), name
    problems, _ = checkpoint.sweep_with_docs(conn)
    whole = dict(conn._mindos_counts)
    assert not problems and whole[made["last_event_id"]] == made["event_count"]
    # moved from a count 5 ids away, either side, it is the whole count
    for near in (made["last_event_id"] - 5, made["last_event_id"] + 5):
        known = {near: conn.execute("SELECT count(*) FROM audit_events WHERE id <= ?", (near,)).fetchone()[0]}
        checkpoint.trust_counts(conn, known)
        assert checkpoint.sweep_with_docs(conn)[0] == [] and conn._mindos_counts == whole
    # a trusted count lowered by a deletion (as the count turn would find it) is what is compared
    checkpoint.trust_counts(conn, {made["last_event_id"]: made["event_count"] - 1})
    problems, _ = checkpoint.sweep_with_docs(conn)
    assert [p["kind"] for p in problems] == ["events_removed_since_checkpoint"]
    # far from every trusted count, or trusted nothing: counted whole
    checkpoint.trust_counts(conn, {made["last_event_id"] + checkpoint.KNOWN_SPAN + 10: 1})
    assert checkpoint.sweep_with_docs(conn)[0] == [] and conn._mindos_counts == whole


def test_a_rebuilt_index_is_counted_whole_again_on_the_next_tick(conn, home):
    populate(conn)
    _tick(conn)
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    row = link.execute("SELECT id, content FROM notes ORDER BY id LIMIT 1").fetchone()
    link.execute("INSERT INTO notes_fts(notes_fts, rowid, content) VALUES ('delete', ?, ?)", row)
    link.close()
    from mindos.recovery import reindex

    reindex.rebuild(conn)
    assert conn.execute("SELECT 1 FROM audit_events WHERE action = 'fts_rebuilt'").fetchone()
    statements = _statements(conn, lambda: _tick(conn))
    assert any("notes_fts_docsize" in text for text in _whole_counts(statements))
    mark = sense.last_watermark(conn)
    assert mark["fts"]["notes_fts"] == checkpoint.fts_gap(conn, fts.INDEXES["notes_fts"])


def test_references_walked_in_windows_find_an_old_orphan_in_its_window_and_keep_it_through_the_round(conn, home,
                                                                                                     monkeypatch):
    populate(conn)
    _grow(conn, count=6)
    top = conn.execute("SELECT max(rowid) FROM notes").fetchone()[0]
    monkeypatch.setattr(nanny, "REFERENCE_ROWS", top - 1)  # notes is walked in windows
    monkeypatch.setattr(nanny, "REFERENCE_WINDOW", max(2, top // 3))
    _tick(conn)
    step = nanny.REFERENCE_WINDOW
    rowid = step + 1  # an old note in the second window, moved to a task that does not exist
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    try:
        link.execute("UPDATE notes SET task_id = 'ghost' WHERE rowid = ?", (rowid,))
    finally:
        link.close()
    full = [p for p in doctor.sweep(conn)["problems"] if p["kind"] == "orphan_note"]
    assert len(full) == 1
    found, windows, resolved = _two_rounds(conn, "notes", "orphan_note", "references")
    assert windows[:2] == [(0, step), (step, 2 * step)] and found == [step, 2 * step]
    remembered = {row["digest"] for row in conn.execute("SELECT digest FROM nanny_findings")}
    assert remembered == {item["digest"] for item in sense.sense(conn)["findings"]}
    assert not (resolved & remembered)
    # the window names the orphan as the whole check does, and a window without it does not
    since = {**checkpoint.watermark(conn), "anchor": ledger.GENESIS_HASH}
    window = doctor.sweep(conn, since=since, part={"ref_tables": ["notes"], "ref_rows": found})["problems"]
    assert [p for p in window if p["kind"] == "orphan_note"] == full
    other = doctor.sweep(conn, since=since, part={"ref_tables": ["notes"], "ref_rows": [0, step]})["problems"]
    assert not [p for p in other if p["kind"] == "orphan_note"]


def test_a_table_that_leaves_windowing_mid_round_starts_over_when_it_comes_back(conn, home, monkeypatch):
    populate(conn)
    _grow(conn, count=6)
    top = conn.execute("SELECT max(rowid) FROM notes").fetchone()[0]
    monkeypatch.setattr(nanny, "INTEGRITY_ROWS", top - 1)
    monkeypatch.setattr(nanny, "INTEGRITY_WINDOW", max(2, top // 3))
    monkeypatch.setattr(doctor, "rowid_tables", lambda conn: {"notes"})
    _tick(conn)

    def notes_turn():
        for _ in range(400):
            sweep = _tick(conn)["sweep"]
            if sweep["slice"] == "integrity" and "notes" in (sweep.get("slice_part") or []):
                return sweep
        raise AssertionError("notes never had its integrity turn")

    assert notes_turn()["slice_rows"] == [0, nanny.INTEGRITY_WINDOW]  # mid-round now
    monkeypatch.setattr(nanny, "INTEGRITY_ROWS", 10 ** 6)  # notes fits one turn: checked whole
    assert notes_turn().get("slice_rows") is None
    monkeypatch.setattr(nanny, "INTEGRITY_ROWS", top - 1)  # windowed again: a new round from its start
    assert notes_turn()["slice_rows"] == [0, nanny.INTEGRITY_WINDOW]


def _drop_index_row(home, note_id):
    """Note ``note_id``'s row dropped from the full-text index alone, behind MindOS's back."""
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    try:
        row = link.execute("SELECT id, content FROM notes WHERE id = ?", (note_id,)).fetchone()
        link.execute("INSERT INTO notes_fts(notes_fts, rowid, content) VALUES ('delete', ?, ?)", row)
    finally:
        link.close()


def test_an_index_compared_in_windows_finds_a_drifted_row_in_its_window_as_the_whole_compare_names_it(
        conn, home, monkeypatch):
    populate(conn)
    _grow(conn, count=6)
    top = conn.execute("SELECT max(id) FROM notes").fetchone()[0]
    monkeypatch.setattr(nanny, "FTS_ROWS", top - 1)  # notes_fts is compared in windows, the small indexes whole
    monkeypatch.setattr(nanny, "FTS_WINDOW", max(2, top // 3))
    wholes = []
    real = fts.drift
    monkeypatch.setattr(fts, "drift", lambda conn, name: wholes.append(name) or real(conn, name))
    _tick(conn)
    middle = conn.execute("SELECT id FROM notes WHERE id > ? ORDER BY id LIMIT 1", (nanny.FTS_WINDOW,)).fetchone()[0]
    _drop_index_row(home, middle)  # in the second window, below the watermark
    full = [p for p in doctor.sweep(conn)["problems"] if p["kind"] == "fts_index_drift"]
    assert [p["missing"] for p in full] == [[middle]]
    del wholes[:]
    resolved, ticks, period, found, windows = set(), 0, nanny.PERIOD_TICKS, None, []
    while ticks < 2 * period and len([w for w in windows if w[0] == 0]) < 3:  # two whole rounds over notes_fts
        before = len(wholes)
        report = _tick(conn)
        resolved |= set(report["findings"]["resolved"])
        ticks, period = ticks + 1, max(period, report["sweep"]["period_ticks"])
        if report["sweep"]["slice_part"] == ["notes_fts"]:
            window = tuple(report["sweep"]["slice_rows"])
            windows.append(window)
            # the whole index is compared on the window holding the drifted row, never on
            # another but a round's last (where the balance is counted whole)
            if window[0] < middle <= window[1]:
                assert wholes[before:] == ["notes_fts"], window
            elif window[1] < conn.execute("SELECT max(id) FROM notes").fetchone()[0]:
                assert wholes[before:] == [], window
        if found is None and any(item["kind"] == "fts_index_drift" for item in report["findings"]["new"]):
            found = report["sweep"]["slice_rows"]
    step = nanny.FTS_WINDOW
    assert windows[:2] == [(0, step), (step, 2 * step)] and found[0] < middle <= found[1]
    remembered = {row["digest"] for row in conn.execute("SELECT digest FROM nanny_findings")}
    assert remembered == {item["digest"] for item in sense.sense(conn)["findings"]}
    assert not (resolved & remembered)


@pytest.mark.parametrize("fault", ["missing", "stale", "emptied", "none"])
def test_a_window_of_an_index_flags_what_the_whole_compare_names_in_it(conn, home, fault):
    populate(conn)
    _grow(conn, count=6)
    ids = [row[0] for row in conn.execute("SELECT id FROM notes ORDER BY id")]
    target = ids[len(ids) // 2]
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    try:
        if fault == "missing":
            _drop_index_row(home, target)
        elif fault == "stale":  # the content row gone, its index entry left behind
            link.execute("DROP TRIGGER IF EXISTS notes_fts_ad")
            link.execute("DELETE FROM notes WHERE id = ?", (target,))
        elif fault == "emptied":  # the content emptied, its old tokens left in the index
            link.execute("DROP TRIGGER IF EXISTS notes_fts_au")
            link.execute("UPDATE notes SET content = '' WHERE id = ?", (target,))
    finally:
        link.close()
    _windows_flag_what_the_whole_compare_names(conn, "notes_fts", ids, set() if fault == "none" else {target})


def _windows_flag_what_the_whole_compare_names(conn, name, ids, expected):
    """The whole compare of index ``name`` names ``expected``, and every two-row window over
    ``ids`` drifts exactly when it holds one of them."""
    whole = fts.drift(conn, name)
    named = set(whole["missing"]) | set(whole["stale"])
    assert named == expected
    for low in range(0, ids[-1] + 1, 2):
        assert fts.window_drifts(conn, name, low, low + 2) == bool(named & set(range(low + 1, low + 3))), low


@pytest.mark.parametrize("fault", ["missing", "stale", "none"])
def test_a_window_of_a_many_column_index_flags_what_the_whole_compare_names_in_it(conn, home, fault):
    from mindos.memory import facts

    populate(conn)
    for number in range(5):
        facts.assert_fact(conn, subject=f"service-{number}", predicate="uses", obj=f"store-{number}", source="codex")
    ids = [row[0] for row in conn.execute("SELECT id FROM facts ORDER BY id")]
    target = ids[len(ids) // 2]
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    try:
        if fault == "missing":  # the row's tokens and size dropped from the index alone
            row = link.execute("SELECT id, subject, predicate, object, source FROM facts WHERE id = ?",
                               (target,)).fetchone()
            link.execute("INSERT INTO facts_fts(facts_fts, rowid, subject, predicate, object, source)"
                         " VALUES ('delete', ?, ?, ?, ?, ?)", row)
        elif fault == "stale":
            link.execute("DROP TRIGGER IF EXISTS facts_fts_ad")
            link.execute("DELETE FROM facts WHERE id = ?", (target,))
    finally:
        link.close()
    _windows_flag_what_the_whole_compare_names(conn, "facts_fts", ids, set() if fault == "none" else {target})


def test_a_window_of_an_index_is_one_statement_merging_two_range_reads(conn):
    populate(conn)
    statements = []
    conn.set_trace_callback(statements.append)
    try:
        fts.window_drifts(conn, "notes_fts", 0, 1000)
    finally:
        conn.set_trace_callback(None)
    assert len(statements) == 1
    plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + statements[0].replace("?1", "0").replace("?2", "9"))]
    assert any("MERGE (EXCEPT)" in step for step in plan)
    assert not any("TEMP B-TREE" in step or step.startswith("SCAN c") or step.startswith("SCAN d") for step in plan)


def test_a_references_window_reads_its_rowid_ranges_not_the_whole_table(conn, home):
    populate(conn)
    _grow(conn, count=6)
    since = {**checkpoint.watermark(conn), "anchor": ledger.GENESIS_HASH}
    statements = []
    conn.set_trace_callback(statements.append)
    try:
        doctor.sweep(conn, since=since, part={"ref_tables": ["notes"], "ref_rows": [0, 2]})
    finally:
        conn.set_trace_callback(None)
    windowed = [text for text in statements if "FROM notes" in text and "rowid <=" in text]
    assert len(windowed) >= 2  # the orphan and the supersession reads
    for text in windowed:
        plan = " | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {text}"))
        assert "SCAN" not in plan.replace("SCAN CONSTANT", ""), plan


def _null_in_last_dependency(home, conn):
    """A NULL written into the NOT NULL ``created_at`` of the last dependency edge by key."""
    conn.execute("SELECT 1").fetchone()
    _null_under_not_null(home, "dependencies", "created_at",
                         "UPDATE dependencies SET created_at = NULL WHERE (task_id, depends_on) ="
                         " (SELECT task_id, depends_on FROM dependencies ORDER BY 1 DESC, 2 DESC LIMIT 1)")


def _chained_tasks(conn):
    """The populated home plus 40 tasks, each depending on the three before it; returns the
    number of dependency edges."""
    from conftest import make_task

    populate(conn)
    for number in range(40):
        make_task(conn, f"k{number:02d}", depends_on=[f"k{before:02d}" for before in range(max(0, number - 3), number)])
    return conn.execute("SELECT count(*) FROM dependencies").fetchone()[0]


def test_a_table_without_rowids_over_budget_is_walked_in_key_windows_and_its_fault_found(conn, home, monkeypatch):
    edges = _chained_tasks(conn)
    monkeypatch.setattr(nanny, "INTEGRITY_ROWS", 100)  # dependencies: more rows than a tenth of the budget
    monkeypatch.setattr(nanny, "INTEGRITY_WINDOW", 40)
    _tick(conn)
    _null_in_last_dependency(home, conn)
    full = [p for p in doctor.sweep(conn)["problems"] if p["kind"] == "database_integrity"]
    assert [p["detail"] for p in full] == ["NULL value in dependencies.created_at"]
    windows, found, ticks = [], None, 0
    while ticks < 400 and not (windows and windows[-1][1] is None):
        report = _tick(conn)
        ticks += 1
        if report["sweep"]["slice_part"] == ["dependencies"]:
            windows.append(tuple(tuple(key) if key else None for key in report["sweep"]["slice_rows"]))
            if any(item["kind"] == "database_integrity" for item in report["findings"]["new"]):
                found = windows[-1]
    assert windows[0][0] is None and windows[-1][1] is None
    assert all(windows[n][1] == windows[n + 1][0] for n in range(len(windows) - 1))  # contiguous
    assert len(windows) == -(-edges // 40)
    assert found == windows[-1]  # the last edge's window names it
    assert report["sweep"]["period_ticks"] >= nanny.PERIOD_TICKS * len(windows)
    remembered = {row["digest"] for row in conn.execute("SELECT digest FROM nanny_findings")}
    assert remembered == {item["digest"] for item in sense.sense(conn)["findings"]}


def test_a_full_text_turn_over_indexes_that_agree_compares_none_of_them_whole(conn, monkeypatch):
    populate(conn)
    _tick(conn)
    wholes = []
    real = fts.drift
    monkeypatch.setattr(fts, "drift", lambda conn, name: wholes.append(name) or real(conn, name))
    turns = 0
    for _ in range(2 * nanny.PERIOD_TICKS):
        report = _tick(conn)
        if report["sweep"]["slice"] == "fts_drift":
            turns += 1
            assert report["sweep"]["slice_part"] and report["sweep"]["slice_rows"] is None  # a turn of whole indexes
    assert turns == 2 and wholes == []
    remembered = {row["digest"] for row in conn.execute("SELECT digest FROM nanny_findings")}
    assert remembered == {item["digest"] for item in sense.sense(conn)["findings"]}


def test_a_key_cursor_of_another_shape_starts_the_round_over(conn, monkeypatch):
    _chained_tasks(conn)
    monkeypatch.setattr(nanny, "INTEGRITY_ROWS", 100)
    monkeypatch.setattr(nanny, "INTEGRITY_WINDOW", 40)
    _tick(conn)
    for _ in range(400):  # into the round over the dependency edges
        report = _tick(conn)
        if report["sweep"]["slice_part"] == ["dependencies"]:
            break
    assert report["sweep"]["slice_rows"][0] is None and sense.last_watermark(conn)["keys_from"]
    real = doctor.primary_key
    monkeypatch.setattr(doctor, "primary_key", lambda conn, table: real(conn, table) + (
        ["created_at"] if table == "dependencies" else []))  # the key gained a column since
    for _ in range(nanny.PERIOD_TICKS):
        report = _tick(conn)
        if report["sweep"]["slice_part"] == ["dependencies"]:
            break
    assert report["sweep"]["slice_part"] == ["dependencies"] and report["sweep"]["slice_rows"][0] is None


def test_table_size_estimates_read_in_one_statement_match_the_one_table_reads(conn, home):
    populate(conn)
    names = doctor.integrity_tables(conn)
    with_rowids = doctor.rowid_tables(conn)
    for budget in (10, 1000, nanny.INTEGRITY_ROWS):
        assert nanny._estimates(conn, names, budget, with_rowids) == {
            table: nanny._estimate(conn, table, budget) for table in names}
    # a table without rowids: counted below a tenth of the budget, None from there on
    conn.execute("CREATE TABLE zz_keyed (a INTEGER PRIMARY KEY, b TEXT) WITHOUT ROWID")
    conn.executemany("INSERT INTO zz_keyed VALUES (?, 'x')", [(n,) for n in range(30)])
    assert [nanny._estimate(conn, "zz_keyed", budget) for budget in (280, 290, 300, 1000)] == [None, None, 30, 30]
    # a statement that fails (a table taken for a rowid table) falls back to one read a table
    assert nanny._estimates(conn, ["zz_keyed", "tasks"], 1000, {"zz_keyed", "tasks"}) == {
        "zz_keyed": 30, "tasks": nanny._estimate(conn, "tasks", 1000)}


def test_a_row_window_reads_its_rows_once_for_every_index_and_names_what_one_read_an_index_names(
        conn, home, monkeypatch):
    populate(conn)
    path = os.path.join(str(home), "state.db")
    link = sqlite3.connect(path, isolation_level=None)
    try:  # two indexes rebuilt without some rows, their declared SQL put back
        for name, column, missing in (("idx_notes_superseded_by", "superseded_by", "id <> 2"),
                                      ("idx_notes_task_live", "task_id, superseded_by, id", "id > 5")):
            original = link.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
            link.execute(f"DROP INDEX {name}")
            link.execute(f"CREATE INDEX {name} ON notes({column}) WHERE {missing}")
            link.execute("PRAGMA writable_schema=ON")
            link.execute("UPDATE sqlite_master SET sql = ? WHERE name = ?", (original, name))
            link.execute("PRAGMA writable_schema=OFF")
    finally:
        link.close()
    conn.close()
    from mindos.store import db

    def window(again):
        since = {**checkpoint.watermark(again), "anchor": ledger.GENESIS_HASH}
        found = doctor.sweep(again, since=since, part={"tables": ["notes"], "rows": [0, 10]})["problems"]
        return [(p["detail"], p["index"]) for p in found if p["kind"] == "database_integrity"]

    again = db.connect_readonly(str(home))
    try:
        statements = _statements(again, lambda: window(again))
        lookups = [text for text in statements if "NOT EXISTS" in text and "INDEXED BY" in text]
        # one read of the window for every index of notes counting what is missing, one listing it
        assert len(lookups) == 2 and lookups[0].startswith("SELECT sum(")
        one_pass = window(again)
        monkeypatch.setattr(doctor, "_missing_in_one_pass", lambda *args: None)  # one statement an index
        each = window(again)
    finally:
        again.close()
    assert one_pass == each
    low = [row[0] for row in sqlite3.connect(path).execute("SELECT rowid FROM notes WHERE rowid <= 10 AND id <= 5")]
    assert len(low) > 1 and 2 in low
    assert sorted(one_pass) == sorted(
        [("row 2 missing from index idx_notes_superseded_by", "idx_notes_superseded_by")]
        + [(f"row {n} missing from index idx_notes_task_live", "idx_notes_task_live") for n in low])


def test_a_tick_reads_its_pin_once_and_still_pins_its_own_event(conn, home, monkeypatch):
    """The automatic pin reuses the verified pin of the tick's own checkpoint sweep instead of
    reading and verifying the file again; the pin written still follows the head."""
    populate(conn)
    _tick(conn)
    path = os.path.join(str(home), "backups", checkpoint.AUTO_NAME)
    reads = []
    real = checkpoint.load_signed
    monkeypatch.setattr(checkpoint, "load_signed", lambda p, *a: reads.append(p) or real(p, *a))
    report = _tick(conn)
    assert report["checkpoint_pin"]["pinned"] is True and report["checkpoint_pin"]["written"] == [path]
    assert reads.count(path) == 1
    head = conn.execute("SELECT id, hash FROM audit_events ORDER BY id DESC LIMIT 1").fetchone()
    doc = checkpoint.load(path, str(home))
    assert (doc["last_event_id"], doc["head_hash"]) == tuple(head)
    assert doc["event_count"] == conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]


def test_a_watermark_read_in_one_statement_matches_the_table_by_table_reads(conn, home):
    populate(conn)
    _tick(conn)
    previous = sense.last_watermark(conn)
    for _ in range(3):  # rows after it on both sides of each index
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DELETE FROM notes_fts_docsize WHERE id = (SELECT max(id) FROM notes_fts_docsize)")
        conn.execute("COMMIT")
    _grow(conn)
    for carry in (None, previous, {"fts": {"notes_fts": "x"}, "rowids": previous["rowids"]}):
        mark = checkpoint.watermark(conn, carry=carry)
        from mindos.recovery import tables

        existing = set(tables.data_tables(conn))
        assert mark["rowids"] == {name: conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {name}").fetchone()[0]
                                  for name in checkpoint.ROW_TABLES if name in existing}
        assert mark["fts"] == {name: checkpoint.fts_gap(conn, spec, carry) for name, spec in fts.INDEXES.items()
                               if spec.table in existing and fts.has(conn, name)}
        assert list(mark["fts"]) == [name for name in fts.INDEXES if name in mark["fts"]]


def _row_checks(statements):
    """The statements reading the rows past a watermark (references, supersession links,
    live handoffs, fact references, unindexed content rows)."""
    import re

    past = re.compile(r"\browid > [1-9]")  # (rowid > 0: a references turn's table, read whole)
    return [text for text in statements if past.search(text) and "audit_events" not in text
            and "_docsize WHERE id >" not in text]  # (a full-text balance moved by the rows since)


@pytest.mark.parametrize("fault", sorted(NANNY_FAULTS))
def test_an_idle_tick_reads_no_rows_past_its_watermark_and_reports_what_the_reading_tick_reports(
        conn, home, fault, monkeypatch):
    """An idle tick (nothing new since the last but that tick's own event) skips every check
    of the rows past the watermark, having read each table's largest rowid in one statement;
    on a home with an injected fault and standing findings (blocked, overdue) its report is
    the one the same tick gives reading them, on every turn of the rotation."""
    from mindos.store import db
    from mindos.work import tasks

    populate(conn)
    checkpoint.create(conn)
    tasks.create(conn, project="P", title="due long ago", task_id="due1", due_at="2026-01-01T00:00:00Z")
    tasks.create(conn, project="P", title="parked", task_id="blocked1")
    with db.write(conn):
        conn.execute("UPDATE tasks SET status = 'blocked', blocked_reason = 'waits on a person' WHERE id = 'blocked1'")
    _tick(conn)
    _grow(conn)
    NANNY_FAULTS[fault](home, conn)
    _tick(conn)  # the fault and the new rows are this tick's
    real_tops = doctor._tops
    for _ in range(nanny.PERIOD_TICKS + 1):
        fast_statements = _statements(conn, lambda: fast.append(nanny.tick(conn, dry_run=True, max_repairs=0))) \
            if (fast := []) is not None else None
        monkeypatch.setattr(doctor, "_tops", lambda *args: {})  # every check reads its rows, as before
        reading = []
        read_statements = _statements(conn, lambda: reading.append(nanny.tick(conn, dry_run=True, max_repairs=0)))
        monkeypatch.setattr(doctor, "_tops", real_tops)
        assert fast[0] == reading[0]
        assert fast[0]["findings"]["total"] >= 1 and fast[0]["state"] in ("hit_snag", "decision_needed")
        assert not _row_checks(fast_statements), _row_checks(fast_statements)
        assert _row_checks(read_statements)
        _tick(conn)


@pytest.mark.parametrize("fault", ["none", "null", "index"])
def test_a_row_window_reads_its_rows_once_when_they_are_whole_and_names_the_same_rows_either_way(
        conn, home, monkeypatch, fault):
    """A window's values and index lookups are counted in one read of its rows; only when a
    count is not zero are the rows named, by the same statements as before (the findings are
    those of the old two reads)."""
    populate(conn)
    if fault == "null":
        _null_in_last_note(home, conn)
    elif fault == "index":  # an index rebuilt without one row, its declared SQL put back
        link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
        try:
            original = link.execute("SELECT sql FROM sqlite_master WHERE name = 'idx_notes_superseded_by'").fetchone()[0]
            link.execute("DROP INDEX idx_notes_superseded_by")
            link.execute("CREATE INDEX idx_notes_superseded_by ON notes(superseded_by) WHERE id <> 2")
            link.execute("PRAGMA writable_schema=ON")
            link.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'idx_notes_superseded_by'", (original,))
            link.execute("PRAGMA writable_schema=OFF")
        finally:
            link.close()
    from mindos.store import db

    last = conn.execute("SELECT max(rowid) FROM notes").fetchone()[0]
    conn.close()
    again = db.connect_readonly(str(home))

    def window():
        since = {**checkpoint.watermark(again), "anchor": ledger.GENESIS_HASH}
        found = doctor.sweep(again, since=since, part={"tables": ["notes"], "rows": [0, last]})["problems"]
        return [p for p in found if p["kind"] == "database_integrity"]

    try:
        statements = _statements(again, window)
        reads = [text for text in statements if 'FROM main."notes"' in text and "rowid > 0" in text]
        one = window()
        monkeypatch.setattr(doctor, "_counted_in_one_pass", lambda *args: None)  # the two reads of before
        before = window()
    finally:
        again.close()
    assert one == before
    assert bool(one) is (fault != "none")
    if fault == "none":
        assert len(reads) == 1 and "NOT EXISTS" in reads[0], reads


@pytest.mark.parametrize("spread", ["even", "last_ids", "first_ids", "few"])
def test_many_overdue_tasks_are_listed_by_walking_ids_with_the_listing_of_the_sorted_read(conn, home, monkeypatch,
                                                                                        spread):
    """When sorting every overdue task costs more than walking the tasks in id order, the
    first ones by id are found by the walk (up to a bound, the sorted read past it): the
    listing and the total are those of the sorted read, however the overdue tasks lie."""
    from mindos.work import tasks

    for n in range(200):
        tasks.create(conn, project="P", title=f"task {n}", task_id=f"t{n:03d}")
    ids = [f"t{n:03d}" for n in range(200)]
    due = {"even": ids[::5], "last_ids": ids[-40:], "first_ids": ids[:40], "few": ids[7:9]}[spread]
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    link.executemany("UPDATE tasks SET due_at = '2020-01-01T00:00:00Z' WHERE id = ?", [(task,) for task in due])
    link.close()
    walked = []
    real = sense._first_by_id
    monkeypatch.setattr(sense, "_first_by_id", lambda *args: walked.append(real(*args)) or walked[-1])
    monkeypatch.setattr(sense, "ID_WALKED_ROW", 1)  # the walk always looks cheaper
    fast = sense.sense(conn, only=["overdue"], limit=5)
    monkeypatch.setattr(sense, "_first_by_id", lambda *args: None)  # every match sorted
    sorted_read = sense.sense(conn, only=["overdue"], limit=5)
    assert fast["by_kind"] == sorted_read["by_kind"] == {"overdue_task": len(due)}
    assert [f["subjects"] for f in fast["findings"]] == [[task] for task in sorted(due)[:5]]
    assert [f["digest"] for f in fast["findings"]] == [f["digest"] for f in sorted_read["findings"]]
    if spread == "few":
        assert walked == []  # no more than the listing holds: nothing to walk
    elif spread == "last_ids":
        assert walked == [None]  # the bound held too few: the sorted read
    else:
        assert len(walked) == 1 and walked[0] is not None and len(walked[0]) == 5


def test_a_tick_lists_the_data_tables_once_and_a_schema_change_lists_them_again(conn, home, monkeypatch):
    from mindos.recovery import tables

    populate(conn)
    _tick(conn)
    reads = []
    real = tables.data_tables
    monkeypatch.setattr(tables, "data_tables", lambda c: reads.append(1) or real(c))
    for _ in range(nanny.PERIOD_TICKS):  # every turn: the pin's watermark, the sweep, the references turn
        before = len(reads)
        _tick(conn)
        assert len(reads) - before <= 1
    listed = checkpoint.data_tables(conn)
    assert listed == real(conn) and "zz_extra" not in listed
    with db.write(conn):
        conn.execute("CREATE TABLE zz_extra (x TEXT)")
    before = len(reads)
    assert checkpoint.data_tables(conn) == real(conn) and "zz_extra" in checkpoint.data_tables(conn)
    assert len(reads) - before == 1


def test_the_dependency_edges_over_budget_have_their_references_walked_in_key_windows(conn, home, monkeypatch):
    edges = _chained_tasks(conn)
    monkeypatch.setattr(nanny, "REFERENCE_ROWS", 100)  # dependencies: more rows than a tenth of the budget
    monkeypatch.setattr(nanny, "REFERENCE_WINDOW", 40)
    _tick(conn)
    link = sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    try:  # an old edge, its task gone behind MindOS's back (no cascade without foreign keys on)
        link.execute("INSERT INTO dependencies(task_id, depends_on, created_at) SELECT 'k99', depends_on, created_at"
                     " FROM dependencies WHERE task_id = 'k20' LIMIT 1")
    finally:
        link.close()
    full = [p for p in doctor.sweep(conn)["problems"] if p["kind"] == "orphan_dependency"]
    assert [p["task_id"] for p in full] == ["k99"]
    pragmas = []
    conn.set_trace_callback(lambda text: "foreign_key_check(\"dependencies\")" in text and pragmas.append(text))
    windows, found, ticks, report = [], None, 0, None
    try:
        while ticks < 600 and not (windows and windows[-1][1] is None):
            report = _tick(conn)
            ticks += 1
            if report["sweep"]["slice"] == "references" and report["sweep"]["slice_part"] == ["dependencies"]:
                windows.append(tuple(tuple(key) if key else None for key in report["sweep"]["slice_rows"]))
                if any(item["kind"] == "orphan_dependency" for item in report["findings"]["new"]):
                    found = windows[-1]
    finally:
        conn.set_trace_callback(None)
    assert pragmas == []  # never the whole table's foreign key check
    assert windows[0][0] is None and windows[-1][1] is None
    assert all(windows[n][1] == windows[n + 1][0] for n in range(len(windows) - 1))  # contiguous
    assert len(windows) == -(-(edges + 1) // 40) > 1
    assert found is not None and (found[0] is None or found[0] < ("k99",)) and (found[1] is None or ("k99",) <= found[1])
    assert report["sweep"]["period_ticks"] >= nanny.PERIOD_TICKS * len(windows)
    remembered = {row["digest"] for row in conn.execute("SELECT digest FROM nanny_findings")}
    assert remembered == {item["digest"] for item in sense.sense(conn)["findings"]}
    since = {**checkpoint.watermark(conn), "anchor": ledger.GENESIS_HASH}
    window = doctor.sweep(conn, since=since, part={"ref_tables": ["dependencies"], "ref_keys": list(found)})
    assert [p for p in window["problems"] if p["kind"] == "orphan_dependency"] == full
    other = doctor.sweep(conn, since=since, part={"ref_tables": ["dependencies"], "ref_keys": [None, ["k00", "k00"]]})
    assert not [p for p in other["problems"] if p["kind"] == "orphan_dependency"]
