"""Agent calls stay flat as a home grows: no statement an agent call runs reads a whole big
table.  Every statement the common calls execute is recorded (SQL and parameters, as the
call ran it) and explained by SQLite's planner on a small seeded home; a plan that scans
tasks, notes, the ledger or another table that grows with the fleet, without an index to
bound it, fails here long before a 1M-task home notices.  (The planner's choices at this
size are the ones it makes at any size for these queries: each lookup either has an index
that matches it or has none.)"""

import json
import re

import pytest

from mindos.memory import handoffs, notes
from mindos.store import db
from tests.conftest import make_task, seed_once

GROWING = ("tasks", "notes", "audit_events", "handoffs", "memories", "facts", "dependencies", "receipts",
           "heartbeats", "leases")
_BARE_SCAN = re.compile(r"^SCAN (\w+)(?: AS \w+)?$")
# Plans that name a scan SQLite never runs, or runs over a bounded range:
#  * the chain head (``ORDER BY id DESC LIMIT 1``): the rowid read backwards, one row;
#  * a parent row's INSERT lists a scan of each child table its foreign keys point from,
#    which the engine runs only while deferred violations are pending (never, here).
ALLOWED = ("FROM audit_events ORDER BY id DESC LIMIT 1",)
_PARENT_INSERT = re.compile(r"^\s*INSERT INTO tasks\b", re.I)


@pytest.fixture
def recorded(conn, monkeypatch):
    """A fleet of a few dozen tasks with notes, pins, a handoff and a dependency chain (built
    once, copied into each test's home), and the list the calls' statements are recorded into."""
    seed_once(conn, __name__ + ".recorded", _fleet)
    return _record(monkeypatch)


def _fleet(conn):
    for n in range(40):
        make_task(conn, f"t{n:02d}", project="Trove" if n % 2 else "Acme", title=f"Fix retry path {n}")
    for n in range(1, 40):
        conn.execute("INSERT INTO dependencies(task_id, depends_on, created_at) VALUES (?, ?, '2026-01-01T00:00:00Z')",
                     (f"t{n:02d}", f"t{n - 1:02d}"))
    for n in range(40):
        notes.add(conn, f"t{n:02d}", content=f"constraint {n}: keep the deploy window", kind="constraint",
                  pinned=n % 3 == 0)
    handoffs.record(conn, "t05", from_agent="codex", to_agent="claude-code", status="running",
                    objective="finish the retry path", next_actions=["run tests"])


CALLS = [
    ("show", ["show", "t05"]),
    ("list", ["list", "--limit", "20"]),
    ("next", ["next"]),
    ("claim", ["claim", "t00", "--owner", "codex", "--minutes", "30"]),
    ("create", ["create", "--project", "Trove", "--title", "Scale task"]),
    ("note", ["note", "t07", "--content", "latency is steady."]),
    ("next --claim", ["next", "--claim", "--owner", "claude-code"]),
    ("context", ["context", "t05", "--related", "5"]),
    ("recall", ["recall", "t05", "--agent", "codex", "--related", "5"]),
    ("prime", ["prime", "--agent", "codex", "--format", "json"]),
    ("search --rank", ["search", "retry path", "--rank"]),
    ("memory-search", ["memory-search", "deploy window"]),
    # substring searches of several words: the full-text index names the rows to read
    ("search", ["search", "retry path"]),
    ("search-notes", ["search-notes", "deploy window"]),
    ("search-notes --status", ["search-notes", "the deploy window", "--status", "queued", "--kind", "constraint"]),
]


def _record(monkeypatch):
    """A list every statement executed from now on is appended to (SQL and parameters)."""
    statements = []
    real = db.Connection.execute

    def execute(self, sql, *args):
        statements.append((sql, args[0] if args else ()))
        return real(self, sql, *args)

    monkeypatch.setattr(db.Connection, "execute", execute)
    return statements


def _plans(conn, sql, params):
    try:
        return [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params)]
    except Exception:  # a statement EXPLAIN cannot take (a PRAGMA, BEGIN, a multi-statement script)
        return []


@pytest.mark.parametrize("label,argv", CALLS, ids=[label for label, _ in CALLS])
def test_no_agent_call_scans_a_growing_table(recorded, cli, label, argv, home):
    rc, out, err = cli("autopilot", *argv)
    assert rc == 0, err
    json.loads(out)
    assert recorded, "nothing was recorded: the probe is broken"
    checker = db.connect(home)
    bad = []
    for sql, params in recorded:
        if not sql.lstrip().upper().startswith(("SELECT", "WITH", "UPDATE", "DELETE", "INSERT")):
            continue
        for detail in _plans(checker, sql, params):
            found = _BARE_SCAN.match(detail)
            if _PARENT_INSERT.match(sql) and found and found.group(1) != "tasks":
                continue
            if found and found.group(1) in GROWING and not any(part in sql for part in ALLOWED):
                bad.append((detail, " ".join(sql.split())[:600] + f" {params!r}"[:200]))
    checker.close()
    assert not bad, f"{label} scans a growing table:\n" + "\n".join(f"  {d}: {s}" for d, s in bad)


def _bulk_elsewhere(conn, count):
    """``count`` completed tasks (most of a big home) in a project no call above names, each with notes (a pinned constraint
    among them), a handoff between agents no call above names and audit events, in vocabulary none of the calls
    searches for.  (A handoff addressed to the primed agent would make its project the agent's own: prime lists
    that inbox and that project's constraints, as it should.)"""
    from mindos.store import ledger

    with db.write(conn):
        for n in range(count):
            task_id = f"zz-{n:05d}"
            conn.execute("INSERT INTO tasks(id, project, title, description, status, created_at, updated_at)"
                         " VALUES (?, 'Elsewhere', ?, '', 'completed', '2026-01-01T00:00:00Z',"
                         " '2026-01-01T00:00:00Z')", (task_id, f"Quux {n} widget"))
            for k in range(2):
                conn.execute("INSERT INTO notes(task_id, kind, content, source, pinned, created_at)"
                             " VALUES (?, 'constraint', ?, 'bulk', ?, '2026-01-01T00:00:00Z')",
                             (task_id, f"quux widget rule {n}-{k}", int(k == 0)))
            if n % 4 == 0:
                conn.execute("INSERT INTO handoffs(task_id, from_agent, to_agent, status, objective, payload_hash,"
                             " created_at) VALUES (?, 'bulk', 'bulk-peer', 'running', 'quux widget', ?,"
                             " '2026-01-01T00:00:00Z')", (task_id, f"h{n}"))
            ledger.append_event(conn, "task", task_id, "created", {"project": "Elsewhere"})
        from mindos.memory import learned  # what each real write does for itself: learn its text
        learned.rebuild(conn)


def _vm_steps(monkeypatch, cli, argv, door="autopilot"):
    """SQLite virtual-machine steps (in hundreds) the call's connections run."""
    steps = [0]
    real = db.connect

    def counted(*args, **kwargs):
        conn = real(*args, **kwargs)
        conn.set_progress_handler(lambda: steps.__setitem__(0, steps[0] + 1) or 0, 100)
        return conn

    monkeypatch.setattr(db, "connect", counted)
    # prime's time bound installs its own progress handler: keep ours for the measurement
    from mindos.context import prime
    monkeypatch.setattr(prime._Deadline, "__enter__", lambda self: self)
    monkeypatch.setattr(prime._Deadline, "__exit__", lambda self, *exc: False)
    rc, out, err = cli(door, *argv)
    monkeypatch.setattr(db, "connect", real)
    assert rc == 0, err
    return steps[0]


READS = [c for c in CALLS if c[0] not in ("claim", "next --claim", "create", "note")] + [
    ("prime (holding a lease)", ["prime", "--agent", "codex", "--format", "json"])]


@pytest.mark.parametrize("label,argv", READS)
def test_read_calls_cost_the_same_with_ten_times_the_rows_elsewhere(recorded, cli, conn, monkeypatch, label, argv):
    if label == "prime (holding a lease)":
        assert cli("autopilot", "claim", "t00", "--owner", "codex")[0] == 0
    before = _vm_steps(monkeypatch, cli, argv)
    _bulk_elsewhere(conn, 1500)
    after = _vm_steps(monkeypatch, cli, argv)
    assert after <= before * 1.5 + 20, f"{label}: {before} -> {after} hundred VM steps"


def test_an_idle_poller_tick_costs_the_same_with_ten_times_the_rows_elsewhere(recorded, cli, conn, monkeypatch):
    from mindos.comms import agents, moods

    moods.create(conn, "infra", title="Infra room")
    agents.create(conn, "re", command="cat")
    moods.join(conn, "infra", "re")
    before = _vm_steps(monkeypatch, cli, ["tick"], door="mood_poller")
    _bulk_elsewhere(conn, 1500)
    after = _vm_steps(monkeypatch, cli, ["tick"], door="mood_poller")
    assert after <= before * 1.5 + 20, f"idle tick: {before} -> {after} hundred VM steps"


def _bulk_common(conn, start, count):
    """``count`` more tasks elsewhere whose titles all carry the words "common" and "widget"."""
    with db.write(conn):
        for n in range(start, start + count):
            conn.execute("INSERT INTO tasks(id, project, title, description, status, created_at, updated_at)"
                         " VALUES (?, 'Elsewhere', ?, 'a common widget', 'queued', '2026-01-01T00:00:00Z',"
                         " '2026-01-01T00:00:00Z')", (f"cw-{n:05d}", f"Common widget {n}"))


@pytest.mark.parametrize("query", ["common widget", "common retry", "widget"])
def test_a_ranked_search_for_a_common_word_costs_the_same_with_ten_times_its_matches(
        recorded, cli, conn, monkeypatch, query):
    """A word most tasks carry: the ranking reads a bounded window of its matches, never all of them."""
    from mindos.work import task_search

    monkeypatch.setattr(task_search, "COMMON_WORD", 100, raising=False)
    monkeypatch.setattr(task_search, "RANK_WINDOW", 50, raising=False)
    _bulk_common(conn, 0, 150)
    before = _vm_steps(monkeypatch, cli, ["search", query, "--rank"])
    _bulk_common(conn, 150, 1500)
    after = _vm_steps(monkeypatch, cli, ["search", query, "--rank"])
    assert after <= before * 1.5 + 20, f"search {query!r} --rank: {before} -> {after} hundred VM steps"


def test_prime_costs_the_same_with_ten_times_the_constraints_in_its_own_project(recorded, cli, conn, monkeypatch):
    """Pinned constraints of the primed agent's own big project (walked along the home's index
    of live pinned constraints), more than its budget could hold: the walk reads what the
    budget can use, not every one of them."""
    from mindos.context import prime

    monkeypatch.setattr(prime, "_SMALL_PROJECT", 1)  # the project counts as big at any size
    monkeypatch.setattr(prime, "MAX_CONSTRAINTS", 10 ** 6)  # bounded by the budget, not by a fixed cap
    def constraints(start, count):
        with db.write(conn):
            for n in range(start, start + count):
                conn.execute("INSERT INTO notes(task_id, kind, content, source, pinned, created_at)"
                             " VALUES ('t02', 'constraint', ?, 'bulk', 1, '2026-01-01T00:00:00Z')",
                             (f"keep rule {n} in mind",))

    assert cli("autopilot", "claim", "t00", "--owner", "codex")[0] == 0
    constraints(0, 150)
    before = _vm_steps(monkeypatch, cli, ["prime", "--agent", "codex", "--format", "json"])
    constraints(150, 1500)
    after = _vm_steps(monkeypatch, cli, ["prime", "--agent", "codex", "--format", "json"])
    assert after <= before * 1.5 + 20, f"prime: {before} -> {after} hundred VM steps"


def test_the_bounded_ranking_of_a_common_word_scans_no_growing_table(recorded, cli, home, monkeypatch):
    """The statements of search --rank when a word is common (the window, the rows of the results)."""
    from mindos.work import task_search

    monkeypatch.setattr(task_search, "COMMON_WORD", 5)
    monkeypatch.setattr(task_search, "RANK_WINDOW", 8)
    real = db.tuples

    class Recorded:  # the window is read through a tuple cursor: record its statement too
        def __init__(self, conn):
            self.cursor = real(conn)

        def execute(self, sql, params=()):
            recorded.append((sql, params))
            return self.cursor.execute(sql, params)

        def close(self):
            self.cursor.close()

    monkeypatch.setattr(db, "tuples", Recorded)
    for argv in (["search", "retry path", "--rank"], ["search", "retry", "--rank", "--project", "Trove", "--limit", "3"]):
        recorded.clear()
        test_no_agent_call_scans_a_growing_table(recorded, cli, "search --rank (common word)", argv, home)
    assert any("ORDER BY tasks_fts.rowid DESC LIMIT" in sql for sql, _ in recorded)


def test_next_claim_samples_the_queue_once_not_once_a_pass(conn, cli, monkeypatch):
    """next --claim walks twice while another writer holds the lock (a dry pass, then the
    locked one).  Sizing the queue's created_at ranges reads up to 4 * sqrt(pool) index
    entries a range: the dry pass does it, through the covering index with an OFFSET probe,
    and the locked pass reuses its choices."""
    from mindos.store import ledger

    monkeypatch.setattr(db, "lock_is_free", lambda conn: False)

    with db.write(conn):
        for n in range(3000):  # old queued work of every priority, a deadline on every fourth
            conn.execute("INSERT INTO tasks(id, project, title, status, priority, due_at, created_at, updated_at)"
                         " VALUES (?, 'Acme', ?, 'queued', ?, ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
                         (f"q{n:04d}", f"queued {n}", f"P{n % 4}",
                          f"2026-06-{n % 28 + 1:02d}T00:00:00Z" if n % 4 == 0 else None))
        ledger.append_event(conn, "task", "q0000", "created", {})
    sampled = []
    real = db.Connection.execute

    def execute(self, sql, *args):
        if "LIMIT 1 OFFSET :m" in sql:
            sampled.append((sql, args[0]))
        return real(self, sql, *args)

    monkeypatch.setattr(db.Connection, "execute", execute)
    assert cli("autopilot", "next")[0] == 0
    probes = len(sampled)
    assert probes >= 1
    assert cli("autopilot", "next", "--claim", "--owner", "codex")[0] == 0
    assert len(sampled) == 2 * probes  # the dry pass's probes only, none under the lock
    monkeypatch.setattr(db.Connection, "execute", real)
    for sql, params in sampled:
        details = _plans(conn, sql, params)
        assert any("COVERING INDEX idx_tasks_status_priority" in detail for detail in details), details
        assert not any("TEMP B-TREE" in detail for detail in details), details


def _dated(conn, prefix, start, count, status, due_day):
    """``count`` P2 tasks of project Acme in ``status``, each due on ``due_day`` of June 2026 a minute
    after the one before."""
    with db.write(conn):
        for n in range(start, start + count):
            leased = status in ("claimed", "running")
            conn.execute("INSERT INTO tasks(id, project, title, status, priority, due_at, lease_owner,"
                         " lease_expires_at, created_at, updated_at)"
                         " VALUES (?, 'Acme', ?, ?, 'P2', ?, ?, ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
                         (f"{prefix}{n:05d}", f"dated {n}", status, f"2026-06-{due_day:02d}T{n // 60 % 24:02d}:{n % 60:02d}:00Z",
                          "bulk" if leased else "", "2099-01-01T00:00:00Z" if leased else None))


def test_next_streams_deadlines_from_the_queued_deadline_index_past_claimed_and_finished_work(
        conn, cli, monkeypatch):
    """The dated stream reads the partial index of queued tasks with a deadline: claimed and
    completed tasks due earlier than every queued one (ten times as many) add nothing to
    ``next``'s cost, and its plan names that index."""
    from mindos.work import dispatch

    monkeypatch.setattr(dispatch, "SMALL_SCOPE", 16)  # the tier's ranges count as large: stream the deadlines
    _dated(conn, "q", 0, 150, "queued", 20)
    rc, out, _ = cli("autopilot", "next")
    assert rc == 0 and json.loads(out)["task"]["id"] == "q00000"
    before = _vm_steps(monkeypatch, cli, ["next"])
    _dated(conn, "c", 0, 750, "claimed", 5)
    _dated(conn, "d", 750, 750, "completed", 3)
    real = db.Connection.execute
    statements = _record(monkeypatch)
    rc, out, _ = cli("autopilot", "next")
    monkeypatch.setattr(db.Connection, "execute", real)
    assert rc == 0 and json.loads(out)["task"]["id"] == "q00000"
    after = _vm_steps(monkeypatch, cli, ["next"])
    assert after <= before * 1.5 + 20, f"next: {before} -> {after} hundred VM steps"
    assert not any("idx_tasks_due_at" in sql for sql, _ in statements)
    dated = [(sql, params) for sql, params in statements if "INDEXED BY idx_tasks_ready_due" in sql]
    assert any("ORDER BY c.due_at," in sql for sql, _ in dated), "the dated stream did not read the index"
    for sql, params in dated:
        details = _plans(conn, sql, params)
        assert any("USING INDEX idx_tasks_ready_due" in detail for detail in details), details
        assert not any("TEMP B-TREE" in detail for detail in details), details


def test_the_queued_deadline_index_holds_exactly_the_queued_dated_tasks(conn):
    """Its condition is the dispatch query's: a queued task with a deadline enters it, and
    leaves it when claimed, finished or undated."""
    _dated(conn, "q", 0, 3, "queued", 20)
    _dated(conn, "c", 0, 2, "claimed", 5)
    make_task(conn, "u1")
    indexed = lambda: [row[0] for row in conn.execute(  # noqa: E731
        "SELECT id FROM tasks INDEXED BY idx_tasks_queued_due WHERE status = 'queued' AND due_at IS NOT NULL"
        " ORDER BY due_at, created_at, seq")]
    assert indexed() == ["q00000", "q00001", "q00002"]
    with db.write(conn):
        conn.execute("UPDATE tasks SET status = 'completed' WHERE id = 'q00001'")
        conn.execute("UPDATE tasks SET due_at = NULL WHERE id = 'q00002'")
    assert indexed() == ["q00000"]
    assert conn.execute("SELECT count(*) FROM tasks INDEXED BY idx_tasks_queued_due"
                        " WHERE status = 'queued' AND due_at IS NOT NULL").fetchone()[0] == 1


def test_next_reads_prerequisite_and_dependent_states_from_the_status_lookup_index(recorded, cli, conn):
    """Whether a candidate's prerequisite is completed, and whether a probed dependent is open
    and how urgent, come from idx_tasks_id_status alone (one seek by id, never one per open
    status, never the table row)."""
    make_task(conn, "hot", project="Acme", title="urgent dependent", priority="P0")
    conn.execute("INSERT INTO dependencies(task_id, depends_on, created_at) VALUES ('hot', 't39', '2026-01-01T00:00:00Z')")
    for argv in (["next"], ["next", "--explain"], ["next", "--prefer-unblocking"]):
        recorded.clear()
        assert cli("autopilot", *argv)[0] == 0
        looked_up = [(sql, params) for sql, params in recorded if "INDEXED BY idx_tasks_id_status" in sql]
        assert looked_up, argv
        for sql, params in looked_up:
            details = [detail for detail in _plans(conn, sql, params) if "idx_tasks_id_status" in detail]
            assert details and all("COVERING INDEX idx_tasks_id_status (id=?)" in detail
                                   or "COVERING INDEX idx_tasks_id_status (id=? AND status=?)" in detail
                                   and "q.status" in sql for detail in details), (sql, details)


def test_the_deadline_stream_never_reads_a_task_waiting_on_prerequisites(conn, cli, monkeypatch):
    """The ready deadline index holds only queued tasks with nothing left to wait for
    (``unmet_deps = 0``): ``next`` reads the task row (by its seq) of ready entries only and
    never asks a prerequisite's state; ``--explain`` still reads the whole queued deadline
    index and names what the waiting task waits for."""
    from mindos.work import dispatch

    monkeypatch.setattr(dispatch, "SMALL_SCOPE", 16)  # stream the deadlines
    _dated(conn, "q", 0, 150, "queued", 20)
    conn.execute("INSERT INTO dependencies(task_id, depends_on, created_at) VALUES ('q00000', 'q00149', '2026-01-01T00:00:00Z')")
    statements = _record(monkeypatch)
    rc, out, _ = cli("autopilot", "next")
    assert rc == 0 and json.loads(out)["task"]["id"] == "q00001"  # q00000 waits on q00149
    dated = [(sql, params) for sql, params in statements if "FROM tasks c INDEXED BY idx_tasks_ready_due" in sql]
    assert dated
    assert not any("idx_tasks_queued_due" in sql or "p.status IS NULL" in sql for sql, _ in statements)
    for sql, params in dated:
        details = _plans(conn, sql, params)
        entry = next(i for i, detail in enumerate(details) if "SEARCH c USING INDEX idx_tasks_ready_due" in detail)
        row = next(i for i, detail in enumerate(details) if detail.startswith("SEARCH t USING INTEGER PRIMARY KEY"))
        assert entry < row, details
        assert not any("SEARCH p " in detail for detail in details), details
    statements.clear()
    rc, out, _ = cli("autopilot", "next", "--explain")
    assert rc == 0 and json.loads(out)["skipped"][0] == {"task_id": "q00000", "reason": "unsatisfied_dependencies",
                                                          "blocked_by": ["q00149"]}
    assert any("INDEXED BY idx_tasks_queued_due" in sql for sql, _ in statements)


def test_next_reads_the_undated_ready_queue_from_its_own_index(conn, cli, monkeypatch):
    """Undated candidates stream from idx_tasks_ready (queued, nothing to wait for), in
    created_at order without a sort: a pile of tasks waiting on prerequisites ahead of the
    first ready one is never read."""
    with db.write(conn):
        for n in range(60):
            conn.execute("INSERT INTO tasks(id, project, title, priority, created_at, updated_at)"
                         " VALUES (?, 'Acme', 'undated', 'P1', ?, ?)",
                         (f"u{n:03d}", f"2026-01-01T00:{n:02d}:00Z", f"2026-01-01T00:{n:02d}:00Z"))
        for n in range(50):  # the 50 oldest wait on the newest
            conn.execute("INSERT INTO dependencies(task_id, depends_on, created_at) VALUES (?, 'u059',"
                         " '2026-01-01T00:00:00Z')", (f"u{n:03d}",))
    statements = _record(monkeypatch)
    rc, out, _ = cli("autopilot", "next")
    assert rc == 0 and json.loads(out)["task"]["id"] == "u050"
    undated = [(sql, params) for sql, params in statements if "INDEXED BY idx_tasks_ready " in sql + " "]
    assert undated
    for sql, params in undated:
        details = _plans(conn, sql, params)
        assert any("SEARCH t USING INDEX idx_tasks_ready (priority=?" in detail for detail in details), details
        assert not any("TEMP B-TREE" in detail for detail in details), details
    assert not any("p.status IS NULL" in sql for sql, _ in statements)


def test_next_probes_the_rows_ahead_of_its_head_inside_the_stream_that_reads_them(conn, cli, monkeypatch):
    """A worse-tier row ahead of the tier's head is asked whether it inherits urgency in the
    deadline stream's own statement (the index entry's stored rank, migration 22: no walk up
    the dependents), never with a query of its own: with
    ten times as many such rows ahead, ``next`` runs the same statements."""
    from mindos.work import dispatch

    monkeypatch.setattr(dispatch, "SMALL_SCOPE", 16)  # stream the deadlines

    def ahead(start, count):  # P3 rows due before every P2 one, each with an open dependent chain
        with db.write(conn):
            for n in range(start, start + count):
                for task_id, priority, due in ((f"w{n:05d}", "P3", f"2026-06-10T{n // 60 % 24:02d}:{n % 60:02d}:00Z"),
                                               (f"u{n:05d}", "P3", None), (f"v{n:05d}", "P2", None)):
                    conn.execute("INSERT INTO tasks(id, project, title, status, priority, due_at, created_at,"
                                 " updated_at) VALUES (?, 'Acme', ?, 'queued', ?, ?, '2026-08-20T00:00:00Z',"
                                 " '2026-08-20T00:00:00Z')", (task_id, f"ahead {n}", priority, due))
                conn.execute("INSERT INTO dependencies(task_id, depends_on, created_at) VALUES (?, ?,"
                             " '2026-01-01T00:00:00Z')", (f"u{n:05d}", f"w{n:05d}"))
                conn.execute("INSERT INTO dependencies(task_id, depends_on, created_at) VALUES (?, ?,"
                             " '2026-01-01T00:00:00Z')", (f"v{n:05d}", f"u{n:05d}"))

    _dated(conn, "q", 0, 20, "queued", 20)
    ahead(0, 20)  # more than the sample: the deadline index, not the sorted ranges
    statements = _record(monkeypatch)
    rc, out, _ = cli("autopilot", "next")
    assert rc == 0 and json.loads(out)["task"]["id"] == "q00000"
    before = [sql for sql, _ in statements]
    streams = [(sql, params) for sql, params in statements if "AS _probe" in sql and "idx_tasks_ready_due" in sql]
    assert streams, "the worse-tier deadline stream carries no probe column"
    for sql, params in streams:
        details = _plans(conn, sql, params)
        assert any("SEARCH c USING INDEX idx_tasks_ready_due" in detail for detail in details), details
        # the probe is the entry's stored rank (migration 23): no walk up the edges
        assert not any("up" in detail.split() or "dependencies" in detail for detail in details), details
        assert not any(_BARE_SCAN.match(detail) for detail in details), details
        assert not any("TEMP B-TREE" in detail for detail in details), details
    ahead(20, 180)
    statements.clear()
    rc, out, _ = cli("autopilot", "next")
    assert rc == 0 and json.loads(out)["task"]["id"] == "q00000"
    assert len(statements) == len(before)
    assert not any("d.depends_on = :id" in sql or sql.lstrip().startswith("WITH RECURSIVE up") for sql, _ in statements)


_BY_STATUS_ALONE = re.compile(r"SEARCH t\b.*\(status=\?\)$")


def _walks_a_status(recorded, home):
    """The recorded reads whose plan walks tasks by their status alone (every task of the
    fleet with that status) to drive the rest of the statement."""
    checker = db.connect(home)
    try:
        return [(detail, " ".join(sql.split())[:300]) for sql, params in recorded
                if sql.lstrip().upper().startswith(("SELECT", "WITH"))
                for detail in _plans(checker, sql, params) if _BY_STATUS_ALONE.match(detail)]
    finally:
        checker.close()


def test_a_recall_with_prerequisite_context_never_walks_the_tasks_of_a_status(recorded, cli, conn, home):
    """No statement of a recall with every section reads tasks by their status alone (every
    completed task of the fleet): each task it reads is one its own rows name."""
    with db.write(conn):
        conn.execute("UPDATE tasks SET status = 'completed' WHERE id IN ('t04', 't10', 't11')")
    recorded.clear()
    rc, out, err = cli("autopilot", "recall", "t05", "--agent", "codex", "--related", "5", "--dep-context", "3",
                       "--related-handoffs", "3", "--related-facts", "5", "--related-semantic", "5", "--rerank")
    assert rc == 0, err
    assert "t04" in json.dumps(json.loads(out).get("dep_context")), "the prerequisite context was not packed: the probe is broken"
    found = _walks_a_status(recorded, home)
    assert not found, "\n".join(f"  {d}: {s}" for d, s in found)


@pytest.mark.parametrize("argv", [["search-notes", "deploy window", "--status", "queued"],
                                  ["search-notes", "deploy window", "--status", "queued", "--rank"]])
def test_a_note_search_filtered_by_status_reads_notes_first(recorded, cli, home, argv):
    """A note search with ``--status`` is driven by the matching notes, never by every task
    of the status (at 100k tasks the other order took 0.7 s for ``queued`` instead of 0.06 s)."""
    rc, out, err = cli("autopilot", *argv)
    assert rc == 0, err
    assert json.loads(out), "no note matched: the probe is broken"
    found = _walks_a_status(recorded, home)
    assert not found, "\n".join(f"  {d}: {s}" for d, s in found)


def test_weighing_a_texts_trigrams_seeks_the_index_b_tree_never_scans_it(conn, monkeypatch):
    """fts.trigram_spans reads a few page starts around each trigram of the text, per segment:
    every read of the trigram index's b-tree of leaf pages is a seek on its key."""
    from mindos.store import fts

    if not fts.has(conn, "tasks_trigram_fts"):
        pytest.skip("SQLite without the trigram tokenizer")
    for n in range(30):
        make_task(conn, f"w{n:02d}", title=f"retry payments in the gateway {n}")
    seen = []
    real = db.tuples

    class Recording:  # the tuple cursor fts reads through, recording what it runs
        def __init__(self, link):
            self.cursor = real(link)

        def execute(self, sql, *args):
            seen.append((sql, args))
            return self.cursor.execute(sql, *args)

        def close(self):
            self.cursor.close()

    monkeypatch.setattr(fts.db, "tuples", Recording)
    spans = fts.trigram_spans(conn, "tasks_trigram_fts", "retry payments")
    assert set(spans) == set(range(12)) and len(seen) == 1
    sql, args = seen[0]
    plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, *args)]
    reads = [detail for detail in plan if "tasks_trigram_fts_idx" in detail]
    assert reads and all(detail.startswith("SEARCH tasks_trigram_fts_idx USING PRIMARY KEY (segid") or
                         detail == "SEARCH tasks_trigram_fts_idx USING PRIMARY KEY" for detail in reads), plan
