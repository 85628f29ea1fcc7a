"""Readiness stored on the task row (``tasks.unmet_deps``, kept by triggers, migration 20).

What is pinned here: the count equals "prerequisites not completed, a missing one included"
after every status transition and every dependency edit (through the commands and through
raw SQL), a reload that ran without triggers recounts it, ``next`` gives the answers it gave
when it asked the dependency rows itself (random homes, every mode), its statements and the
rows it reads stay flat however many waiting tasks pile up at the front of the queue, and
the column never shows in a task, a dump or a digest.
"""

import random

import pytest

from mindos.core import clock, validate
from mindos.recovery import tables
from mindos.store import db
from mindos.work import dispatch, graph, leases, lifecycle, rows, tasks

from test_dispatch import complete, force_path, mk, pick, write_policy


def unmet(conn, task_id):
    return conn.execute("SELECT unmet_deps FROM tasks WHERE id = ?", (task_id,)).fetchone()[0]


def drift(conn):
    """Rows whose stored count differs from the edges' (empty when the triggers kept up)."""
    return [tuple(row) for row in conn.execute(db.UNMET_DRIFT)]


def edge(conn, task_id, prereq):
    """A raw edge (no cycle check, the prerequisite need not exist)."""
    with db.write(conn):
        conn.execute("INSERT INTO dependencies(task_id, depends_on, created_at) VALUES (?, ?, '2026-01-01T00:00:00Z')",
                     (task_id, prereq))


def set_status(conn, task_id, status):
    with db.write(conn):
        conn.execute("UPDATE tasks SET status = ? WHERE id = ?", (status, task_id))


def test_the_count_follows_edges_and_prerequisite_states_through_the_commands(conn):
    mk(conn, "a")
    mk(conn, "b")
    mk(conn, "c", depends_on=["a", "b"])
    assert [unmet(conn, t) for t in "abc"] == [0, 0, 2]
    complete(conn, "a")
    assert unmet(conn, "c") == 1
    graph.remove_dependency(conn, "c", "b")
    assert unmet(conn, "c") == 0
    graph.add_dependency(conn, "c", "b")
    assert unmet(conn, "c") == 1
    task = leases.claim(conn, "b", "codex")
    assert unmet(conn, "c") == 1  # claimed is not completed
    lifecycle.complete(conn, "b", "codex", epoch=task["lease_epoch"])
    assert unmet(conn, "c") == 0
    tasks.update(conn, "a", status="queued")  # reopened: c waits again
    assert unmet(conn, "c") == 1
    lifecycle.cancel(conn, "a", "operator")  # cancelled never satisfies a dependent
    assert unmet(conn, "c") == 1
    assert drift(conn) == []


@pytest.mark.parametrize("status", validate.STATUSES)
def test_every_transition_to_and_from_each_status_recounts_the_dependents(conn, status):
    mk(conn, "pre")
    mk(conn, "one", depends_on=["pre"])
    mk(conn, "two", depends_on=["pre"])
    for before in validate.STATUSES:
        set_status(conn, "pre", before)
        set_status(conn, "pre", status)
        expected = 0 if status == "completed" else 1
        assert (unmet(conn, "one"), unmet(conn, "two")) == (expected, expected), (before, status)
    assert drift(conn) == []


def test_missing_prerequisites_count_until_they_exist_completed(conn):
    mk(conn, "wait")
    edge(conn, "wait", "ghost")  # an edge may name a task that does not exist (yet)
    assert unmet(conn, "wait") == 1
    mk(conn, "ghost")
    assert unmet(conn, "wait") == 1  # exists now, but queued
    with db.write(conn):
        conn.execute("DELETE FROM tasks WHERE id = 'ghost'")
        conn.execute("INSERT INTO tasks(id, project, title, status, created_at, updated_at)"
                     " VALUES ('ghost', 'Trove', 'done elsewhere', 'completed', 'x', 'x')")
    assert unmet(conn, "wait") == 0  # arrived completed (an import, an archive restore)
    with db.write(conn):
        conn.execute("DELETE FROM tasks WHERE id = 'ghost'")  # archived away: missing again
    assert unmet(conn, "wait") == 1
    assert drift(conn) == []


def test_raw_edge_edits_id_renames_and_deletes_keep_the_count(conn):
    mk(conn, "p1")
    mk(conn, "p2")
    mk(conn, "t1", depends_on=["p1"])
    mk(conn, "t2")
    complete(conn, "p2")
    with db.write(conn):
        conn.execute("UPDATE dependencies SET depends_on = 'p2' WHERE task_id = 't1'")
    assert unmet(conn, "t1") == 0
    with db.write(conn):
        conn.execute("PRAGMA defer_foreign_keys=ON")
        conn.execute("UPDATE dependencies SET task_id = 't2', depends_on = 'p1' WHERE task_id = 't1'")
    assert (unmet(conn, "t1"), unmet(conn, "t2")) == (0, 1)
    with db.write(conn):
        conn.execute("UPDATE tasks SET id = 'p1-renamed' WHERE id = 'p1'")  # t2's edge now names a missing task
    assert unmet(conn, "t2") == 1
    with db.write(conn):
        conn.execute("UPDATE tasks SET id = 'p1', status = 'completed' WHERE id = 'p1-renamed'")
    assert unmet(conn, "t2") == 0
    with db.write(conn):
        conn.execute("DELETE FROM dependencies WHERE task_id = 't2'")
    assert unmet(conn, "t2") == 0
    with db.write(conn):
        conn.execute("DELETE FROM tasks WHERE id = 't2'")  # its edges go with it (cascade)
    assert drift(conn) == []


def test_an_inserted_row_with_a_stale_count_is_put_right(conn):
    mk(conn, "pre")
    with db.write(conn):
        conn.execute("INSERT INTO tasks(id, project, title, created_at, updated_at, unmet_deps)"
                     " VALUES ('stale', 'Trove', 'imported', 'x', 'x', 7)")
    assert unmet(conn, "stale") == 0


def raw_edit(conn, rng, ids):
    """One random edit of tasks and edges among ``ids`` in raw SQL, in its own write: a status
    or priority set, an edge added, deleted or edited in place, a task deleted, renamed or
    inserted back (what the triggers keeping derived task columns must follow)."""
    roll = rng.random()
    a, b = rng.choice(ids), rng.choice(ids)
    with db.write(conn):
        if roll < 0.25:
            conn.execute("UPDATE tasks SET status = ? WHERE id = ?", (rng.choice(validate.STATUSES), a))
        elif roll < 0.35:
            conn.execute("UPDATE tasks SET priority = ? WHERE id = ?", (rng.choice(validate.PRIORITIES), a))
        elif roll < 0.6 and a != b and conn.execute("SELECT 1 FROM tasks WHERE id = ?", (a,)).fetchone():
            conn.execute("INSERT OR IGNORE INTO dependencies(task_id, depends_on, created_at) VALUES (?, ?, 'x')",
                         (a, b))
        elif roll < 0.78:
            conn.execute("DELETE FROM dependencies WHERE task_id = ? AND depends_on = ?", (a, b))
        elif roll < 0.83:
            conn.execute("DELETE FROM tasks WHERE id = ?", (a,))
        elif roll < 0.9:
            conn.execute("PRAGMA defer_foreign_keys=ON")
            if rng.random() < 0.5:  # an edge edited in place (out of band)
                conn.execute("UPDATE OR IGNORE dependencies SET depends_on = ? WHERE task_id = ? AND depends_on ="
                             " (SELECT depends_on FROM dependencies WHERE task_id = ? LIMIT 1)", (b, a, a))
            elif not conn.execute("SELECT 1 FROM dependencies WHERE task_id = ?", (a,)).fetchone():
                conn.execute("UPDATE OR IGNORE tasks SET id = ? WHERE id = ?", (b, a))  # a task renamed
        else:
            conn.execute("INSERT OR IGNORE INTO tasks(id, project, title, status, priority, created_at, updated_at)"
                         " VALUES (?, 'Trove', 'back', ?, ?, 'x', 'x')",
                         (a, rng.choice(validate.STATUSES), rng.choice(validate.PRIORITIES)))


def test_random_edits_never_let_the_count_drift(conn):
    rng = random.Random(20)
    ids = [f"t{n}" for n in range(12)]
    for task_id in ids[:10]:
        mk(conn, task_id)
    for _ in range(600):
        raw_edit(conn, rng, ids)
        assert drift(conn) == []


def test_a_reload_without_triggers_recounts_and_documents_leave_the_column_out(conn):
    mk(conn, "pre")
    mk(conn, "post", depends_on=["pre"])
    assert "unmet_deps" not in tables.columns(conn, "tasks")
    dumped, sequence = tables.dump_all(conn)
    assert "unmet_deps" not in dumped["tasks"]["columns"]
    digest = tables.digest_table(conn, "tasks")
    with db.write(conn):
        tables.replace_all(conn, dumped, sequence)  # rows loaded with triggers dropped
    assert unmet(conn, "post") == 1 and drift(conn) == []
    assert tables.digest_table(conn, "tasks") == digest
    with db.write(conn):
        conn.execute("UPDATE tasks SET unmet_deps = 0")  # drift as an outside writer could leave it
    assert drift(conn) == [("post", 0, 1)]
    with db.write(conn):
        conn.execute(db.RECOUNT_UNMET)
    assert drift(conn) == []


def test_the_column_never_shows_in_a_task(conn):
    mk(conn, "pre")
    mk(conn, "post", depends_on=["pre"])
    assert "unmet_deps" not in rows.get(conn, "post")
    assert all("unmet_deps" not in task for task in tasks.list_tasks(conn))
    assert "unmet_deps" not in dispatch.next_task(conn)["task"]
    assert "unmet_deps" not in dispatch.next_task(conn, explain=True, prefer_unblocking=True)["task"]
    assert "unmet_deps" not in dispatch.next_task(conn, claim=True, owner="codex")["task"]


# -- next answers as it did when it asked the dependency rows itself ---------------------------


def legacy(monkeypatch):
    """``next`` asking every candidate's prerequisites (the code before migration 20)."""
    unsatisfied = dispatch._UNSATISFIED
    monkeypatch.setattr(dispatch, "_ELIGIBLE",
                        dispatch._TIMELY + f" AND NOT EXISTS ({unsatisfied.format(what='1', row='t')})")
    monkeypatch.setattr(dispatch, "_READY_ENTRY", f" AND NOT EXISTS ({unsatisfied.format(what='1', row='c')})")
    monkeypatch.setattr(dispatch, "_READY_INDEX", dispatch._QUEUE_INDEX)
    monkeypatch.setattr(dispatch, "_READY_DUE_INDEX", dispatch._QUEUE_DUE_INDEX)


def random_home(conn, rng, count=60):
    projects = ("Trove", "Acme")
    for n in range(count):
        due = f"2026-09-{rng.randint(1, 28):02d}T00:00:00Z" if rng.random() < 0.5 else None
        deps = rng.sample([f"t{m:02d}" for m in range(n)], k=min(n, rng.choice((0, 0, 1, 2))))
        tags = ["api"] if rng.random() < 0.3 else []
        mk(conn, f"t{n:02d}", rng.choice(validate.PRIORITIES), project=rng.choice(projects), due_at=due,
           depends_on=deps, tags=tags)
        clock.advance(minutes=rng.randint(0, 200))
    for n in rng.sample(range(count), count // 4):
        task_id = f"t{n:02d}"
        status = rng.choice(("completed", "completed", "cancelled", "failed", "blocked", "claimed"))
        set_status(conn, task_id, status)
    for n in rng.sample(range(count), 3):  # edges to tasks that do not exist
        edge(conn, f"t{n:02d}", f"gone-{n}")
    for n in range(6):  # abandoned claims
        found = dispatch.next_task(conn, claim=True, owner=f"ghost-{n}", minutes=1)["task"]
        if found is None:
            break
    clock.advance(minutes=5)
    write_policy(conn, "Acme", "dispatch_requires_tag: api\n")


MODES = [{}, {"explain": True}, {"prefer_unblocking": True}, {"aging_minutes": 0}, {"project": "Trove"},
         {"tags": ["api"]}, {"explain": True, "prefer_unblocking": True}, {"project": "Acme", "explain": True},
         {"aging_boost": 3, "aging_minutes": 30}]


@pytest.mark.parametrize("path", ["small-scope", "deadline-index", "range-sorted"])
@pytest.mark.parametrize("seed", range(4))
def test_next_answers_as_when_it_asked_the_dependency_rows(conn, monkeypatch, path, seed):
    force_path(monkeypatch, path)
    random_home(conn, random.Random(seed))
    assert drift(conn) == []
    new = [dispatch.next_task(conn, **mode) for mode in MODES]
    with monkeypatch.context() as patched:
        legacy(patched)
        old = [dispatch.next_task(conn, **mode) for mode in MODES]
    assert new == old
    # and the claim: the same task taken
    with db.write(conn):
        conn.execute("SAVEPOINT before_claim")
        taken = dispatch.next_task(conn, claim=True, owner="late")["task"]
        conn.execute("ROLLBACK TO before_claim")
        conn.execute("RELEASE before_claim")
    with monkeypatch.context() as patched:
        legacy(patched)
        assert dispatch.next_task(conn, claim=True, owner="late")["task"] == taken


# -- flat as waiting tasks pile up ----------------------------------------------------------


def measured(conn, **kw):
    """(picked id, statements run, SQLite VM steps in hundreds) of one ``next``."""
    seen, steps = [], [0]
    conn.set_trace_callback(seen.append)
    conn.set_progress_handler(lambda: steps.__setitem__(0, steps[0] + 1) or 0, 100)
    try:
        result = dispatch.next_task(conn, **kw)
    finally:
        conn.set_trace_callback(None)
        conn.set_progress_handler(None, 0)
    return (result["task"]["id"] if result["task"] else None), len(seen), steps[0]


def waiting_front(conn, start, count, dated):
    """``count`` tasks of every priority waiting on a claimed prerequisite, due (or made)
    before every ready task."""
    if start == 0:
        mk(conn, "blocker", "P3")
        leases.claim(conn, "blocker", "holder", minutes=600)
    for n in range(start, start + count):
        due = {"due_at": f"2026-08-{1 + n % 28:02d}T00:00:00Z"} if dated else {}
        mk(conn, f"w{n:04d}", validate.PRIORITIES[n % 4], depends_on=["blocker"], **due)


@pytest.mark.parametrize("dated", [True, False], ids=["dated", "undated"])
@pytest.mark.parametrize("path", ["deadline-index", "range-sorted"])
@pytest.mark.parametrize("kw", [{}, {"claim": True, "owner": "codex"}, {"explain": False, "aging_minutes": 0}],
                         ids=["next", "claim", "no-aging"])
def test_statements_and_rows_read_stay_flat_as_waiting_tasks_pile_up(conn, monkeypatch, dated, path, kw):
    # (--prefer-unblocking counts every queued dependent of the fleet to rank by it: that
    # grows with the edges, waiting or not, and is not what is pinned here)
    force_path(monkeypatch, path)
    waiting_front(conn, 0, 10, dated)
    clock.advance(seconds=1)
    mk(conn, "ready", "P0", due_at="2026-09-01T00:00:00Z" if dated else None)
    mk(conn, "ready2", "P0", due_at="2026-09-02T00:00:00Z" if dated else None)
    picked, statements, steps = measured(conn, **kw)
    assert picked == "ready"
    waiting_front(conn, 10, 400, dated)
    picked, statements_after, steps_after = measured(conn, **kw)
    assert picked == ("ready2" if "claim" in kw else "ready")
    assert statements_after == statements
    # the waiting pile is never read: what grows is only the depth of an index (not 40x rows)
    assert steps_after <= steps * 1.25 + 5, (steps, steps_after)
    if "claim" not in kw:
        with monkeypatch.context() as patched:  # the same pile cost the old readiness test its rows
            legacy(patched)
            _, _, legacy_steps = measured(conn, **kw)
        assert legacy_steps > 4 * steps_after, (legacy_steps, steps_after)


# -- snapshots: older homes restore with their counts made, documents never carry them --------


def _home_at_19(path):
    """A home last used at schema 19 (before the stored count): a task waiting on an open
    prerequisite, one whose prerequisite is completed, one waiting on a missing task."""
    import os
    import sqlite3

    from mindos.store import ledger
    from mindos.store.migrations import MIGRATIONS

    os.makedirs(path)
    old = sqlite3.connect(os.path.join(path, "state.db"), isolation_level=None, factory=db.Connection)
    old.home, old.path = path, os.path.join(path, "state.db")
    with db.write(old):
        for number in range(1, 20):
            for statement in db.split_statements(MIGRATIONS[number - 1]()):
                old.execute(statement)
        old.execute("PRAGMA user_version=19")
        for task_id, status in (("pre", "queued"), ("done", "completed"), ("wait", "queued"), ("free", "queued"),
                                ("lost", "queued")):
            old.execute("INSERT INTO tasks(id, project, title, status, priority, created_at, updated_at)"
                        " VALUES (?, 'Trove', ?, ?, 'P1', ?, ?)", (task_id, f"task {task_id}", status,
                                                                  clock.now_iso(), clock.now_iso()))
            ledger.append_event(old, "task", task_id, "created", {"title": f"task {task_id}"})
        for task_id, prereq in (("wait", "pre"), ("free", "done"), ("lost", "nowhere")):
            old.execute("INSERT INTO dependencies(task_id, depends_on, created_at) VALUES (?, ?, ?)",
                        (task_id, prereq, clock.now_iso()))
    return old


@pytest.mark.parametrize("fmt", ["streamed", "document"])
def test_a_snapshot_of_an_older_home_restores_with_its_counts_made(tmp_path, fmt):
    from mindos.recovery import doctor, snapshot

    old = _home_at_19(str(tmp_path / "old"))
    try:
        if fmt == "streamed":
            made = snapshot.create(old, out=str(tmp_path / "old.tar"))
        else:
            made = snapshot.create_v1(old, out=str(tmp_path / "old.json"))
    finally:
        old.close()
    fresh = db.connect(str(tmp_path / "new"))
    try:
        report = snapshot.restore(fresh, made["path"], trust_unsigned=True)
        assert report["upgraded_from_schema_version"] == 19
        counts = dict(fresh.execute("SELECT id, unmet_deps FROM tasks").fetchall())
        assert counts == {"pre": 0, "done": 0, "wait": 1, "free": 0, "lost": 1}
        assert drift(fresh) == [] and doctor.run(fresh.home)["ok"]
        assert dispatch.next_task(fresh, aging_minutes=0)["task"]["id"] == "pre"
        mk(fresh, "later", "P0", depends_on=["wait"])
        complete(fresh, "pre")
        assert pick(fresh, aging_minutes=0) == "wait"
    finally:
        fresh.close()


def test_a_snapshot_document_made_today_leaves_the_count_out_and_restores_it(conn, tmp_path):
    import json

    from mindos.recovery import snapshot

    mk(conn, "pre")
    mk(conn, "post", depends_on=["pre"])
    made = snapshot.create_v1(conn, out=str(tmp_path / "now.json"))
    with open(made["path"], encoding="utf-8") as handle:
        text = handle.read()
    assert "unmet_deps" not in text
    assert "unmet_deps" not in json.loads(text)["tables"]["tasks"]["columns"]
    streamed = snapshot.create(conn, out=str(tmp_path / "now.tar"))
    for path in (made["path"], streamed["path"]):
        with db.write(conn):
            conn.execute("UPDATE tasks SET unmet_deps = 5")  # whatever was there is replaced
        # each restore on a connection of its own (a second streamed restore on one connection
        # is refused with "Error creating function", before this change too)
        target = db.connect(conn.home)
        try:
            snapshot.restore(target, path, force=True)
            assert dict(target.execute("SELECT id, unmet_deps FROM tasks").fetchall()) == {"pre": 0, "post": 1}
            assert drift(target) == []
        finally:
            target.close()
