"""The store: schema build, numbered migrations, pragmas, transactions, query helpers."""

import json
import os
import re
import sqlite3

import pytest

from mindos.core import canonical
from mindos.store import db, fts, ledger, migrations
from mindos.work import graph, rows, tasks
from mindos.errors import IntegrityError, InvalidInput, MindosError, Refused
from mindos.views import show


def _shape(conn):
    """Tables with their columns, every index, trigger and virtual table definition, and each
    full-text index's settings (its ``_config`` rows but the version stamp)."""
    shape = {}
    for name in fts.INDEXES:
        if fts.has(conn, name):
            shape[f"{name}:config"] = sorted(tuple(row) for row in conn.execute(
                f"SELECT k, v FROM {name}_config WHERE k <> 'version'"))
    for kind, name, table, sql in conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"):
        if kind == "table" and not (sql or "").upper().startswith("CREATE VIRTUAL"):
            columns = [tuple(row)[1:6] for row in conn.execute(f"PRAGMA table_xinfo('{name}')")]
            shape[name] = (kind, table, columns)
        else:
            shape[name] = (kind, table, " ".join((sql or "").split()))
    return shape


def _build_v1(path):
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("BEGIN")
    for statement in db.split_statements(migrations.MIGRATIONS[0]()):
        raw.execute(statement)
    raw.execute("PRAGMA user_version=1")
    raw.execute("COMMIT")
    return raw


def test_migrations_are_numbered_unique_and_gapless():
    names = [m.__name__ for m in migrations.MIGRATIONS]
    numbers = [int(re.match(r"m(\d{3})_", name).group(1)) for name in names]
    assert numbers == list(range(1, len(names) + 1))
    assert len(set(names)) == len(names)
    assert all(m.__doc__ and m.__doc__.strip() for m in migrations.MIGRATIONS)
    assert db.latest_version() == db.SCHEMA_VERSION == len(migrations.MIGRATIONS)


def test_fresh_database_is_stamped_wal_and_enforces_foreign_keys(conn):
    assert conn.execute("PRAGMA user_version").fetchone()[0] == db.latest_version()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    with pytest.raises(sqlite3.IntegrityError):
        with db.write(conn):
            conn.execute("INSERT INTO receipts(id, task_id, kind, path, created_at) VALUES ('r', 'nope', 'k', 'p', 'x')")


def test_version_1_database_migrates_forward_with_rows_and_matches_fresh_schema(tmp_path):
    old_home = tmp_path / "old"
    old_home.mkdir()
    raw = _build_v1(str(old_home / "state.db"))
    raw.execute("INSERT INTO tasks(id, project, title, tags, created_at, updated_at)"
                " VALUES ('legacy-1', 'Trove', 'Legacy deploy task', '[\"infra\"]', '2026-01-01T00:00:00Z',"
                " '2026-01-01T00:00:00Z')")
    raw.execute("INSERT INTO receipts(id, task_id, kind, path, file_hash, created_at)"
                " VALUES ('r-old', 'legacy-1', 'ci', 'receipts/r-old.json', '', '2026-01-01T00:00:00Z')")
    digest = ledger.event_hash(1, ledger.GENESIS_HASH, "task", "legacy-1", "created", "{}", "2026-01-01T00:00:00Z")
    raw.execute("INSERT INTO audit_events VALUES (1, 'task', 'legacy-1', 'created', '{}', '2026-01-01T00:00:00Z', ?, ?)",
                (ledger.GENESIS_HASH, digest))
    raw.close()

    conn = db.connect(str(old_home))
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == db.latest_version()
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        task = rows.get(conn, "legacy-1")
        assert (task["title"], task["tags"], task["lease_epoch"], task["requires_receipts"]) == \
            ("Legacy deploy task", ["infra"], 0, [])
        assert [r["id"] for r in show.receipts_for(conn, "legacy-1")] == ["r-old"]
        assert ledger.verify_chain(conn) == {"ok": True, "events": 1, "problems": []}
        migrated = _shape(conn)
        # the migrated home keeps working: new tables accept rows, the old FTS index finds old rows
        with db.write(conn):
            conn.execute("INSERT INTO heartbeats(task_id, owner, at) VALUES ('legacy-1', 'hermes', 'x')")
        if fts.has(conn, "tasks_fts"):
            hits = conn.execute("SELECT rowid FROM tasks_fts WHERE tasks_fts MATCH '\"deploy\"'").fetchall()
            assert len(hits) == 1
    finally:
        conn.close()
    fresh = db.connect(str(tmp_path / "fresh"))
    try:
        assert migrated == _shape(fresh)
    finally:
        fresh.close()


def _upgraded_from(tmp_path, monkeypatch, version, index, tasks, check, edges=()):
    """Build a home at schema ``version`` without ``index`` (or any schema object of that
    name), insert ``tasks`` (dicts of task columns) and ``edges`` (``(task, prerequisite)``)
    there, reopen it at the latest version and run ``check(conn)`` on it; the upgraded schema
    must be a fresh home's, ``index`` included."""
    old_home = tmp_path / "old"
    old_home.mkdir()
    _build_v1(str(old_home / "state.db")).close()
    monkeypatch.setattr(db, "SCHEMA_VERSION", version)
    conn = db.connect(str(old_home))
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == version
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = ?", (index,)).fetchone()[0] == 0
        with db.write(conn):
            for task in tasks:
                row = {"project": "Trove", "title": f"task {task['id']}", "created_at": "2026-01-01T00:00:00Z",
                       "updated_at": "2026-01-01T00:00:00Z", **task}
                conn.execute(f"INSERT INTO tasks({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                             tuple(row.values()))
            conn.executemany("INSERT INTO dependencies(task_id, depends_on, created_at) VALUES (?, ?, 'x')", edges)
    finally:
        conn.close()
    monkeypatch.setattr(db, "SCHEMA_VERSION", len(migrations.MIGRATIONS))
    conn = db.connect(str(old_home))
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == db.latest_version() == len(migrations.MIGRATIONS)
        check(conn)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        migrated = _shape(conn)
    finally:
        conn.close()
    fresh = db.connect(str(tmp_path / "fresh"))
    try:
        assert migrated == _shape(fresh)
        assert index in migrated
    finally:
        fresh.close()


def test_version_17_home_gains_the_queued_deadline_index_over_its_rows_and_matches_fresh_schema(
        tmp_path, monkeypatch):
    """m018: a home at 17 (with queued, claimed and undated tasks) migrates to the fresh schema,
    and the new partial index holds exactly its queued tasks with a deadline."""
    tasks = [{"id": task_id, "status": status, "due_at": due} for task_id, status, due in (
        ("a", "queued", "2026-06-02T00:00:00Z"), ("b", "claimed", "2026-06-01T00:00:00Z"), ("c", "queued", None),
        ("d", "queued", "2026-06-01T00:00:00Z"), ("e", "completed", "2026-05-01T00:00:00Z"))]

    def check(conn):
        assert [row[0] for row in conn.execute(
            "SELECT id FROM tasks INDEXED BY idx_tasks_queued_due WHERE status = 'queued' AND due_at IS NOT NULL"
            " ORDER BY due_at, created_at, seq")] == ["d", "a"]

    _upgraded_from(tmp_path, monkeypatch, 17, "idx_tasks_queued_due", tasks, check)


def test_version_18_home_gains_the_task_status_lookup_index_over_its_rows_and_matches_fresh_schema(
        tmp_path, monkeypatch):
    """m019: a home at 18 migrates to the fresh schema, and the new index answers a task's
    status and priority by id for every row, without the table."""
    tasks = [{"id": task_id, "status": status, "priority": priority}
             for task_id, status, priority in (("a", "queued", "P1"), ("b", "completed", "P0"), ("c", "claimed", "P3"))]

    def check(conn):
        sql = "SELECT id, status, priority FROM tasks INDEXED BY idx_tasks_id_status WHERE id = ?"
        assert [tuple(conn.execute(sql, (task_id,)).fetchone()) for task_id in "abc"] == [
            ("a", "queued", "P1"), ("b", "completed", "P0"), ("c", "claimed", "P3")]
        assert "COVERING INDEX idx_tasks_id_status" in conn.execute("EXPLAIN QUERY PLAN " + sql, ("a",)).fetchone()[3]

    _upgraded_from(tmp_path, monkeypatch, 18, "idx_tasks_id_status", tasks, check)


def test_version_20_home_gains_the_trigram_index_over_its_tasks_and_matches_fresh_schema(tmp_path, monkeypatch):
    """m021: a home at 20 migrates to the fresh schema, and the trigram index holds every task
    already there: substring search reads the tasks it names, and the triggers keep it."""
    if not db.trigram_supported():
        pytest.skip("SQLite without the trigram tokenizer")
    tasks = [{"id": task_id, "title": title, "description": text} for task_id, title, text in (
        ("a", "Retry payments", "the 100% path"), ("b", "payments retry", ""), ("c", "x", "RETRY PAYMENTS later"))]

    def check(conn):
        assert fts.drift(conn, "tasks_trigram_fts")["ok"]
        assert [row[0] for row in conn.execute(
            "SELECT rowid FROM tasks_trigram_fts WHERE tasks_trigram_fts MATCH '\"retry payments\"' ORDER BY rowid")] \
            == [row[0] for row in conn.execute("SELECT seq FROM tasks WHERE id IN ('a', 'c') ORDER BY seq")]
        assert conn.execute("SELECT v FROM tasks_trigram_fts_config WHERE k = 'crisismerge'").fetchone()[0] == 4
        with db.write(conn):
            conn.execute("UPDATE tasks SET description = 'retry payments' WHERE id = 'b'")
            conn.execute("DELETE FROM tasks WHERE id = 'a'")
        assert fts.drift(conn, "tasks_trigram_fts")["ok"]
        assert conn.execute("SELECT count(*) FROM tasks_trigram_fts WHERE tasks_trigram_fts MATCH '\"100%\"'"
                            ).fetchone()[0] == 0

    _upgraded_from(tmp_path, monkeypatch, 20, "tasks_trigram_fts", tasks, check)


def test_version_21_home_gains_the_newest_live_notes_index_and_matches_fresh_schema(tmp_path, monkeypatch):
    """m022: a home at 21 migrates to the fresh schema, with the index of its live notes in the
    order search-notes answers (newest first), which a walk of them reads without a sort."""

    def check(conn):
        sql = ("SELECT n.id FROM notes n INDEXED BY idx_notes_live_newest WHERE n.superseded_by IS NULL"
               " ORDER BY n.created_at DESC, n.id DESC LIMIT 5")
        plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]
        assert plan == ["SCAN n USING INDEX idx_notes_live_newest"], plan

    _upgraded_from(tmp_path, monkeypatch, 21, "idx_notes_live_newest", [{"id": "a"}], check)


def test_failed_migration_leaves_the_database_at_its_old_version(tmp_path, monkeypatch):
    home = tmp_path / "h"
    home.mkdir()
    _build_v1(str(home / "state.db")).close()

    def m002_broken():
        """Adds a column, then fails."""
        return "ALTER TABLE tasks ADD COLUMN half_done TEXT;\nCREATE TABLE broken (;\n"

    monkeypatch.setattr(migrations, "MIGRATIONS", [migrations.MIGRATIONS[0], m002_broken])
    monkeypatch.setattr(db, "SCHEMA_VERSION", 2)
    with pytest.raises(IntegrityError):
        db.connect(str(home))
    raw = sqlite3.connect(str(home / "state.db"))
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 1
        columns = [row[1] for row in raw.execute("PRAGMA table_info(tasks)")]
        assert "half_done" not in columns
    finally:
        raw.close()


def test_database_newer_than_the_code_is_refused(home):
    conn = db.connect(str(home))
    conn.execute(f"PRAGMA user_version={db.latest_version() + 1}")
    conn.close()
    with pytest.raises(IntegrityError, match=r"newer than this MindOS supports"):
        db.connect(str(home))


def test_current_database_does_no_schema_work_on_connect(home, monkeypatch):
    db.connect(str(home)).close()
    statements = []

    class Tracing(db.Connection):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.set_trace_callback(statements.append)

    monkeypatch.setattr(db, "Connection", Tracing)
    conn = db.connect(str(home))
    conn.close()
    assert statements == ["PRAGMA foreign_keys=ON", f"PRAGMA mmap_size={db.MMAP_BYTES}", "PRAGMA user_version"]


@pytest.mark.bare_home
def test_tables_without_a_version_are_refused(home):
    home.mkdir(parents=True)
    raw = sqlite3.connect(str(home / "state.db"))
    raw.execute("CREATE TABLE foreign_app(x)")
    raw.commit()
    raw.close()
    with pytest.raises(IntegrityError, match="no MindOS schema version"):
        db.connect(str(home))


def test_home_that_is_a_file_is_refused(tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(MindosError, match="not a directory"):
        db.connect(str(path))


def test_failure_mid_mutation_leaves_neither_row_nor_event(conn, monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("disk on fire")

    # rows.get runs after both the INSERT and the audit append, inside the same transaction
    monkeypatch.setattr(rows, "get", explode)
    with pytest.raises(RuntimeError):
        tasks.create(conn, project="P", title="doomed", task_id="doomed")
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == 0
    assert not conn.in_transaction


def test_append_event_requires_a_write_transaction(conn):
    with pytest.raises(RuntimeError):
        ledger.append_event(conn, "task", "t", "created", {})
    with pytest.raises(RuntimeError):
        ledger.append_refusal(conn, "task", "t", "refused", {})


def test_refusal_event_survives_the_rollback(conn):
    with pytest.raises(Refused):
        with db.write(conn):
            conn.execute("INSERT INTO tasks(id, project, title, created_at, updated_at) VALUES ('x','P','t','a','a')")
            ledger.append_event(conn, "task", "x", "created", {})
            ledger.append_refusal(conn, "task", "x", "claim_refused_seam", {"kind": "worktree"})
            raise Refused("seam conflict")
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0
    rows = conn.execute("SELECT id, action FROM audit_events").fetchall()
    assert [tuple(r) for r in rows] == [(1, "claim_refused_seam")]
    assert ledger.verify_chain(conn)["ok"]


def test_nested_write_joins_the_outer_transaction(conn):
    with pytest.raises(RuntimeError):
        with db.write(conn):
            tasks.create(conn, project="P", title="inner", task_id="inner")
            raise RuntimeError("outer fails after the inner write")
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == 0


def test_a_read_block_sees_one_snapshot_and_restores_the_connection(conn, home):
    tasks.create(conn, project="P", title="before", task_id="before")
    other = db.connect(str(home))
    try:
        mmap = conn.execute("PRAGMA mmap_size").fetchone()[0]
        with db.read(conn):
            assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 1
            tasks.create(other, project="P", title="after", task_id="after")  # another writer commits meanwhile
            assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 1  # still the snapshot
            assert conn.execute("PRAGMA mmap_size").fetchone()[0] >= mmap  # clamped to what the build allows
        assert not conn.in_transaction
        assert conn.execute("PRAGMA mmap_size").fetchone()[0] == mmap
        assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 2
    finally:
        other.close()
    with db.write(conn):  # nested in a write transaction, a read joins it and ends nothing
        tasks.create(conn, project="P", title="inside", task_id="inside")
        with db.read(conn):
            assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 3
        assert conn.in_transaction
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 3


def test_a_home_without_fts5_builds_and_skips_the_indexes(tmp_path, monkeypatch):
    monkeypatch.setattr(db, "fts5_supported", lambda: False)
    conn = db.connect(str(tmp_path / "nofts"))
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert not any(name.endswith("_fts") for name in names)
        assert not fts.has(conn, "tasks_fts")
        tasks.create(conn, project="P", title="still works", task_id="t1")
        assert rows.get(conn, "t1")["title"] == "still works"
    finally:
        conn.close()


@pytest.mark.parametrize("text,expected", [
    ("rate limit", '"rate" AND "limit"'),
    ('title:deploy NEAR(a b) "x" OR y*', '"title" AND "deploy" AND "NEAR" AND "a" AND "b" AND "x" AND "OR" AND "y"'),
    ("rate_limit", '"rate" AND "limit"'),
    ("  ", None),
    ("!!! --- ***", None),
    ("", None),
    ("naïve café", '"naïve" AND "café"'),
])
def test_fts_query_quotes_every_token(text, expected):
    assert fts.query(text) == expected


def test_fts_query_never_raises_in_match(conn):
    for text in ['"', "'", "a OR", "NEAR(", "col:x", "*", "^a", "a AND NOT b", "(((", "\\"]:
        match = fts.query(text)
        if match is not None:
            conn.execute("SELECT * FROM tasks_fts WHERE tasks_fts MATCH ?", (match,)).fetchall()


def test_like_pattern_escapes_wildcards():
    assert fts.like_pattern("100%_a\\b") == "%100\\%\\_a\\\\b%"


@pytest.mark.parametrize("text", ["{bad", "NaN", '{"x": Infinity}', "[" * 100000 + "]" * 100000, ""])
def test_check_json_text_refuses_non_json_naming_the_flag(text):
    with pytest.raises(InvalidInput, match=r"^invalid --payload: malformed JSON"):
        canonical.loads_strict(text, "--payload")


def test_graph_edges_use_the_same_transaction(conn):
    tasks.create(conn, project="P", title="a", task_id="a")
    with pytest.raises(Refused, match="dependency cycle"):
        with db.write(conn):
            graph.add_edges(conn, "a", ["a"])
    assert conn.execute("SELECT count(*) FROM dependencies").fetchone()[0] == 0


def test_a_writer_waits_out_another_processes_write_lock(conn, home):
    # one process holds the write lock for a while; an agent's create meanwhile must wait
    # (busy timeout + BEGIN IMMEDIATE) and then succeed, never fail with "database is locked"
    import subprocess
    import sys
    import time

    from conftest import ROOT, script

    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; sys.path.insert(0, sys.argv[1]); from mindos.store import db\n"
         "conn = db.connect(sys.argv[2]); conn.execute('BEGIN IMMEDIATE'); print('locked', flush=True)\n"
         "time.sleep(1.5); conn.execute('COMMIT')", ROOT, str(home)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        proc = script("autopilot.py", "create", "--project", "P", "--title", "patient", "--id", "w1", home=home)
        waited = time.monotonic() - started
    finally:
        holder.wait(timeout=30)
    assert proc.returncode == 0 and proc.stderr == ""
    assert waited >= 0.5  # it really queued behind the holder
    assert conn.execute("SELECT title FROM tasks WHERE id = 'w1'").fetchone()[0] == "patient"


def test_refusal_event_lands_after_rollback_and_never_masks_the_refusal(conn, monkeypatch):
    tasks.create(conn, project="P", title="t", task_id="t1")
    with pytest.raises(Refused, match="no way"):
        with db.write(conn):
            conn.execute("UPDATE tasks SET title = 'changed' WHERE id = 't1'")
            ledger.append_refusal(conn, "task", "t1", "claim_refused_policy", {"reason": "test"})
            raise Refused("no way")
    assert conn.execute("SELECT title FROM tasks WHERE id = 't1'").fetchone()[0] == "t"  # rolled back
    assert ledger.count_action(conn, "claim_refused_policy") == 1  # the refusal survived it
    assert ledger.verify_chain(conn)["ok"] is True

    # when the refusal's own write fails (say the lock stays busy), the caller still sees the refusal
    def busy(*args, **kwargs):
        raise MindosError("database busy: database is locked")

    with pytest.raises(Refused, match="still no"):
        with db.write(conn):
            ledger.append_refusal(conn, "task", "t1", "claim_refused_policy", {"reason": "test"})
            monkeypatch.setattr(ledger, "append_event", busy)
            raise Refused("still no")
    assert not conn.in_transaction


@pytest.mark.bare_home
def test_home_is_0700_and_database_files_0600_whatever_the_umask(home):
    import stat

    old = os.umask(0o022)
    try:
        conn = db.connect(str(home))
        with db.write(conn):  # an open WAL connection keeps its -wal and -shm files while we look
            conn.execute("SELECT count(*) FROM tasks").fetchone()
            names = [name for name in os.listdir(home) if name.startswith("state.db")]
            modes = {name: stat.S_IMODE(os.stat(os.path.join(home, name)).st_mode) for name in names}
        conn.close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(os.path.join(home, "receipts")).st_mode) == 0o700
    assert {"state.db", "state.db-wal", "state.db-shm"} <= set(modes)
    assert set(modes.values()) == {0o600}, modes


def test_writers_queue_on_the_home_write_lock(conn, cli, monkeypatch):
    import fcntl
    import stat
    import threading
    import time

    with db.write(conn):
        pass
    path = db.lock_path(conn)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    holder = os.open(path, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)
    monkeypatch.setattr(db, "LOCK_TIMEOUT_SECONDS", 0.2)
    try:
        rc, out, err = cli("autopilot", "create", "--project", "P", "--title", "x", "--json-errors")
        assert rc == 1 and out == "" and '"busy"' in err
        assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0
        monkeypatch.setattr(db, "LOCK_TIMEOUT_SECONDS", 30)
        threading.Timer(0.3, fcntl.flock, (holder, fcntl.LOCK_UN)).start()
        started = time.perf_counter()
        rc, out, err = cli("autopilot", "create", "--project", "P", "--title", "x")
        assert rc == 0 and 0.25 < time.perf_counter() - started < 5
    finally:
        os.close(holder)
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 1


def test_a_commit_gate_that_raises_rolls_the_write_back_and_frees_the_lock(conn):
    from mindos.errors import MindosError
    from mindos.store import ledger

    calls = []

    def gate():
        calls.append(conn.in_transaction)
        if len(calls) == 2:  # passes at BEGIN, refuses at COMMIT
            raise MindosError("cancelled", code="cancelled")

    before = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    conn.commit_gate = gate
    try:
        with pytest.raises(MindosError, match="cancelled"):
            with db.write(conn):
                ledger.append_event(conn, "task", "t1", "probe", {})
    finally:
        conn.commit_gate = None
    assert calls == [False, True] and not conn.in_transaction
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == before
    with db.write(conn):  # the lock was let go
        ledger.append_event(conn, "task", "t1", "probe", {})
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == before + 1


def test_lock_is_free_tells_without_keeping_the_lock(conn, monkeypatch):
    import fcntl

    assert db.lock_is_free(conn) is True
    holder = os.open(db.lock_path(conn), os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the hint let go of it again
        assert db.lock_is_free(conn) is False
        fcntl.flock(holder, fcntl.LOCK_UN)
        assert db.lock_is_free(conn) is True
    finally:
        os.close(holder)
    with db.write(conn):  # the descriptor it opened is the one writes use
        assert conn.execute("SELECT 1").fetchone()[0] == 1


def test_lock_is_free_answers_false_when_it_cannot_tell(conn, monkeypatch):
    if conn._lock_fd is not None:
        os.close(conn._lock_fd)
        conn._lock_fd = None

    def refuse(*args, **kwargs):
        raise PermissionError("read-only home")

    monkeypatch.setattr(os, "open", refuse)
    assert db.lock_is_free(conn) is False


# -- the in-process turn at the writer lock (db.Turns) ------------------------------------


def _wait_until(predicate, what):
    """Spin (yielding the CPU) until ``predicate()`` holds; fail after 20 s."""
    import time

    deadline = time.monotonic() + 20
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0)


def test_threads_take_the_write_lock_in_arrival_order_and_a_returning_holder_queues_last(conn, home):
    import threading

    line = db.turns(conn)
    order, threads = [], []

    def writer(index):
        connection = db.connect(str(home))  # each thread its own connection, as the MCP workers
        try:
            with db.write(connection):
                order.append(index)
                ledger.append_event(connection, "task", "t1", "probe", {"writer": index})
        finally:
            connection.close()

    with db.write(conn):
        for index in range(3):
            threads.append(threading.Thread(target=writer, args=(index,)))
            threads[-1].start()
            _wait_until(lambda: len(line.queue) == index + 2, f"writer {index} to queue")
    with db.write(conn):  # the thread that just let go gets in line behind the three
        order.append("again")
    for thread in threads:
        thread.join(20)
    assert order == [0, 1, 2, "again"]
    assert not line.queue and line.owner is None
    writers = [json.loads(row[0])["writer"] for row in conn.execute(
        "SELECT payload_json FROM audit_events WHERE action = 'probe' ORDER BY id")]
    assert writers == [0, 1, 2]


def test_many_threads_writing_at_once_lose_no_wakeup(conn, home, monkeypatch):
    import threading

    monkeypatch.setattr(db, "LOCK_TIMEOUT_SECONDS", 15)  # a lost wakeup would end in "busy"
    errors = []

    def writer():
        connection = db.connect(str(home))
        try:
            for _ in range(25):
                with db.write(connection):
                    ledger.append_event(connection, "task", "t1", "probe", {})
        except Exception as exc:  # noqa: BLE001 (reported by the assertion below)
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == [] and not any(thread.is_alive() for thread in threads)
    assert ledger.count_action(conn, "probe") == 150
    line = db.turns(conn)
    assert not line.queue and line.owner is None
    assert ledger.verify_chain(conn)["ok"] is True


def test_a_thread_that_times_out_in_line_leaves_it_and_changes_nothing(conn, home):
    import threading

    line = db.turns(conn)
    caught = []

    def writer():
        other = db.connect(str(home))
        try:
            with db.write(other, timeout=0.05):
                ledger.append_event(other, "task", "t1", "probe", {})
        except MindosError as exc:
            caught.append(exc)
        finally:
            other.close()

    with db.write(conn):
        thread = threading.Thread(target=writer)
        thread.start()
        thread.join(20)
        assert len(line.queue) == 1  # only the holder's ticket is left
    assert [exc.code for exc in caught] == ["busy"] and "nothing was changed" in str(caught[0])
    assert ledger.count_action(conn, "probe") == 0
    other = db.connect(str(home))
    try:
        with db.write(other):  # the line still works
            ledger.append_event(other, "task", "t1", "probe", {})
    finally:
        other.close()
    assert ledger.count_action(conn, "probe") == 1 and not line.queue and line.owner is None


def test_a_thread_holding_its_turn_never_waits_on_itself(conn, home):
    # a second connection of the same thread cannot have the file lock while the first holds
    # it: it is refused "busy" at its timeout, as before, instead of queueing behind itself
    line = db.turns(conn)
    other = db.connect(str(home))
    try:
        with db.write(conn):
            with db.write(conn):  # nested: joins the transaction, takes no second turn
                assert len(line.queue) == 1
            with pytest.raises(MindosError, match="database busy") as caught:
                with db.write(other, timeout=0.05):
                    pass
            assert caught.value.code == "busy" and len(line.queue) == 1
            ledger.append_event(conn, "task", "t1", "probe", {})
        with db.write(other):
            ledger.append_event(other, "task", "t1", "probe", {})
    finally:
        other.close()
    assert ledger.count_action(conn, "probe") == 2 and not line.queue and line.owner is None


def test_closing_a_connection_that_holds_the_turn_passes_it_on(conn, home):
    line = db.turns(conn)
    other = db.connect(str(home))
    db._acquire(other)
    assert line.owner is not None and len(line.queue) == 1
    other.close()
    assert not line.queue and line.owner is None
    with db.write(conn):
        ledger.append_event(conn, "task", "t1", "probe", {})
    assert ledger.count_action(conn, "probe") == 1


def test_a_failed_file_lock_gives_the_turn_back(conn, home, monkeypatch):
    import fcntl

    line = db.turns(conn)
    holder = os.open(db.lock_path(conn), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)  # another process's writer
    try:
        with pytest.raises(MindosError, match="database busy"):
            with db.write(conn, timeout=0.05):
                pass
    finally:
        os.close(holder)
    assert not line.queue and line.owner is None
    with db.write(conn):
        ledger.append_event(conn, "task", "t1", "probe", {})
    assert ledger.count_action(conn, "probe") == 1


@pytest.mark.parametrize("where", ["queued", "turn_taken"])
def test_an_interrupt_anywhere_in_the_queue_leaves_no_ticket_behind(conn, monkeypatch, where):
    # Ctrl-C may land right after the ticket is queued, or after the turn is taken and before
    # the file lock: either way the ticket leaves the line, or every later writer of the
    # process would wait behind it until it timed out
    import collections

    line = db.turns(conn)

    class Interrupted(collections.deque):
        armed = where == "queued"

        def append(self, item):
            super().append(item)
            if self.armed:
                self.armed = False
                raise KeyboardInterrupt

    monkeypatch.setattr(line, "queue", Interrupted())
    real = db._flock
    if where == "turn_taken":
        def flock(conn, timeout, **_):
            raise KeyboardInterrupt
        monkeypatch.setattr(db, "_flock", flock)
    with pytest.raises(KeyboardInterrupt):
        with db.write(conn):
            pass
    assert not line.queue and line.owner is None and conn._lock_turn is None
    monkeypatch.setattr(db, "_flock", real)
    with db.write(conn, timeout=1):
        ledger.append_event(conn, "task", "t1", "probe", {})
    assert ledger.count_action(conn, "probe") == 1


@pytest.mark.parametrize("asked", [0.2, None])
def test_a_busy_refusal_names_the_wait_asked_for_not_what_was_left(conn, home, monkeypatch, asked):
    # the wait is spent partly queued behind another thread of this process, the rest on the
    # file lock another process holds: the refusal names the whole wait the caller asked for
    import fcntl
    import time

    line = db.turns(conn)
    wait = asked
    if asked is None:  # the default wait
        monkeypatch.setattr(db, "LOCK_TIMEOUT_SECONDS", 0.25)
        wait = 0.25
    ahead = object()  # another thread's ticket, first in line
    line.queue.append(ahead)
    spent = [0.0]
    real = time.monotonic
    monkeypatch.setattr(time, "monotonic", lambda: real() + spent[0])

    class Handover:
        def wait(self, left):  # the thread ahead takes 60% of the wait, then passes the turn
            spent[0] += wait * 0.6
            line.queue.remove(ahead)

    monkeypatch.setattr(line, "cond", Handover())
    holder = os.open(db.lock_path(conn), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)  # another process's writer
    try:
        with pytest.raises(MindosError, match="database busy") as caught:
            with db.write(conn, timeout=asked):
                pass
    finally:
        os.close(holder)
        monkeypatch.undo()
    assert caught.value.code == "busy"
    assert f"held the write lock for {wait:.3g} s;" in str(caught.value), str(caught.value)
    assert not line.queue and line.owner is None


def test_a_busy_refusal_in_the_queue_names_the_wait_asked_for(conn, home, monkeypatch):
    line = db.turns(conn)
    ahead = object()
    line.queue.append(ahead)

    class Stuck:
        def wait(self, left):
            raise AssertionError("no wait: a zero timeout refuses at once")

    monkeypatch.setattr(line, "cond", Stuck())
    try:
        with pytest.raises(MindosError, match=r"held the write lock for 0 s;"):
            with db.write(conn, timeout=0):
                pass
    finally:
        line.queue.remove(ahead)
    assert not line.queue


def test_version_22_home_gains_the_stored_dependent_rank_counted_and_matches_fresh_schema(tmp_path, monkeypatch):
    """m023: a home at 22 with a chain of open dependents (and a finished one) migrates to the
    fresh schema; every open task's dependent_rank is counted from its edges, and the triggers
    keep it from then on."""
    def check(conn):
        ranks = dict(conn.execute("SELECT id, dependent_rank FROM tasks").fetchall())
        assert ranks == {"leaf": 1, "mid": 1, "top": 4, "done": 4, "alone": 4}
        assert conn.execute(db.RANK_DRIFT).fetchall() == []
        with db.write(conn):
            conn.execute("UPDATE tasks SET priority = 'P0' WHERE id = 'top'")
        assert conn.execute("SELECT dependent_rank FROM tasks WHERE id = 'leaf'").fetchone()[0] == 0

    tasks = [{"id": task_id, "status": status, "priority": priority}
             for task_id, status, priority in (("leaf", "queued", "P3"), ("mid", "blocked", "P2"),
                                               ("top", "queued", "P1"), ("done", "completed", "P0"),
                                               ("alone", "queued", "P0"))]
    _upgraded_from(tmp_path, monkeypatch, 22, "tasks_rank_count", tasks, check,
                   edges=[("mid", "leaf"), ("top", "mid"), ("done", "leaf"), ("alone", "nowhere")])


def test_version_23_home_gains_the_pair_index_filled_and_matches_fresh_schema(tmp_path, monkeypatch):
    """m024: a home at 23 migrates to the fresh schema with the task text's pair index filled
    from the rows already there (no drift), searched for a phrase, and kept by the triggers."""
    from mindos.work import task_search

    if not db.fts5_supported():
        pytest.skip("SQLite without FTS5")

    def check(conn):
        assert fts.drift(conn, "tasks_pairs_fts")["ok"]
        assert fts.drift(conn, "tasks_pairs_fts")["indexed"] == 3  # every title ("task a") has a space
        assert [t["id"] for t in task_search.search(conn, "deploy gateway")] == ["a"]
        named = conn.execute("SELECT rowid FROM tasks_pairs_fts WHERE tasks_pairs_fts MATCH ?",
                             (fts.pair_probe(conn, "tasks_pairs_fts", "deploy gateway"),)).fetchall()
        assert len(named) == 1
        with db.write(conn):
            conn.execute("UPDATE tasks SET description = 'Deploy Gateway soon' WHERE id = 'c'")
            conn.execute("DELETE FROM tasks WHERE id = 'a'")
        assert [t["id"] for t in task_search.search(conn, "deploy gateway")] == ["c"]
        assert fts.drift(conn, "tasks_pairs_fts")["ok"]

    tasks = [{"id": "a", "description": "please deploy gateway now"}, {"id": "b", "description": "gateway deploy"},
             {"id": "c", "description": "x"}]
    _upgraded_from(tmp_path, monkeypatch, 23, "tasks_pairs_fts", tasks, check)


def test_version_24_home_gains_the_lifetime_end_indexes_and_matches_fresh_schema(tmp_path, monkeypatch):
    """m025: a home at 24 migrates to the fresh schema with the indexes of note lifetimes and
    fact windows, which the next lifetime end is read from without a pass over the tables."""
    from mindos.context import recall
    from mindos.memory import facts, notes

    def check(conn):
        notes.add(conn, "a", content="for good")
        notes.add(conn, "a", content="an hour", ttl_hours=1)
        fact = facts.assert_fact(conn, subject="pool", predicate="is", obj="warm", source="test", valid_hours=2)
        note_end = conn.execute("SELECT expires_at FROM notes WHERE expires_at IS NOT NULL").fetchone()[0]
        assert recall._next_end(conn, "2000-01-01T00:00:00Z") == note_end
        assert recall._next_end(conn, note_end) == fact["valid_until"]
        for sql in ("SELECT min(expires_at) FROM notes WHERE expires_at IS NOT NULL AND expires_at > ?",
                    "SELECT min(valid_until) FROM facts WHERE valid_until IS NOT NULL AND valid_until > ?"):
            plan = conn.execute("EXPLAIN QUERY PLAN " + sql, (note_end,)).fetchone()[3]
            assert "idx_notes_expiring" in plan or "idx_facts_ending" in plan, plan

    _upgraded_from(tmp_path, monkeypatch, 24, "idx_notes_expiring", [{"id": "a"}], check)
