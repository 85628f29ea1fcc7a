"""Inherited urgency stored on the task row (``tasks.dependent_rank``, kept by triggers, migration 23).

What is pinned here: the rank equals "the best priority among the task's open dependents,
directly or through open ones" for every open task after every status, priority and edge
change (through the commands and through raw SQL); a reload that ran without triggers
recounts it and the doctor names a drifted one; it never shows in a task, a dump or a digest;
and ``next`` gives, in every mode and on every access path, the answers it gave when it walked
up the dependents of each row ahead of a tier's head (random homes with abandoned claims).
"""

import random

import pytest

from mindos.core import clock, validate
from mindos.recovery import doctor, tables
from mindos.store import db
from mindos.work import dispatch, graph, leases, lifecycle, rows, tasks

from test_dispatch import complete, force_path, mk, pick
from test_dispatch_readiness import MODES, edge, random_home, raw_edit, set_status


def rank(conn, task_id):
    return conn.execute("SELECT dependent_rank FROM tasks WHERE id = ?", (task_id,)).fetchone()[0]


def drift(conn):
    """Open tasks whose stored rank differs from a walk up their dependents, and finished ones
    not holding 4 (empty when the triggers kept up)."""
    finished = conn.execute("SELECT id, dependent_rank, 4 FROM tasks WHERE status IN ('completed', 'failed',"
                            " 'cancelled') AND dependent_rank <> 4 ORDER BY id")
    return [tuple(row) for row in conn.execute(db.RANK_DRIFT)] + [tuple(row) for row in finished]


def test_the_rank_follows_priorities_states_and_edges_through_the_commands(conn):
    mk(conn, "leaf", "P3")
    mk(conn, "mid", "P2", depends_on=["leaf"])
    assert (rank(conn, "leaf"), rank(conn, "mid")) == (2, 4)
    mk(conn, "top", "P0", depends_on=["mid"])
    assert (rank(conn, "leaf"), rank(conn, "mid"), rank(conn, "top")) == (0, 0, 4)
    tasks.update(conn, "top", priority="P1")
    assert (rank(conn, "leaf"), rank(conn, "mid")) == (1, 1)
    set_status(conn, "top", "running")  # still open: it still confers
    assert rank(conn, "leaf") == 1
    tasks.update(conn, "top", status="cancelled")  # terminal: confers nothing any more
    assert (rank(conn, "leaf"), rank(conn, "mid")) == (2, 4)
    tasks.update(conn, "top", status="queued")  # reopened: it confers again
    assert rank(conn, "leaf") == 1
    graph.remove_dependency(conn, "mid", "leaf")
    assert rank(conn, "leaf") == 4
    graph.add_dependency(conn, "mid", "leaf")
    assert rank(conn, "leaf") == 1
    tasks.update(conn, "mid", status="cancelled")  # a terminal task relays nothing either
    assert rank(conn, "leaf") == 4
    tasks.update(conn, "mid", status="queued")
    task = leases.claim(conn, "leaf", "codex")
    lifecycle.complete(conn, "leaf", "codex", epoch=task["lease_epoch"])
    assert drift(conn) == []


def test_a_task_created_after_the_edges_that_wait_for_it_is_counted(conn):
    mk(conn, "boss", "P0", depends_on=["later"])  # an edge to a task that does not exist yet
    mk(conn, "later", "P3")
    assert rank(conn, "later") == 0
    with db.write(conn):
        conn.execute("INSERT INTO tasks(id, project, title, created_at, updated_at, dependent_rank)"
                     " VALUES ('stale', 'Trove', 'imported', 'x', 'x', 0)")
    assert rank(conn, "stale") == 4
    assert drift(conn) == []


@pytest.mark.parametrize("seed", [20, 21])
def test_random_edits_never_let_the_rank_drift(conn, seed):
    rng = random.Random(seed)
    ids = [f"t{n}" for n in range(12)]
    for task_id in ids[:10]:
        mk(conn, task_id, rng.choice(validate.PRIORITIES))
    for _ in range(500):
        raw_edit(conn, rng, ids)
        assert drift(conn) == []


@pytest.mark.parametrize("seed", range(4))
def test_the_whole_table_statements_agree_with_the_walk_up_from_each_task(conn, seed):
    """The doctor's full check and the recount find each (prerequisite, priority) pair once,
    going down the edges; a window walks up from each of its tasks.  On random homes (chains,
    finished relays, edges to missing tasks) with ranks scrambled behind the triggers' back,
    both name the same drifted rows with the same counts, and a recount leaves none."""
    rng = random.Random(seed)
    random_home(conn, rng, count=60)
    for n in range(60, 90):  # longer chains: each new task waits on one of the last few
        mk(conn, f"t{n:02d}", rng.choice(validate.PRIORITIES), depends_on=[f"t{n - rng.randint(1, 4):02d}"])
    everything = (-1, 2 ** 62)
    with db.write(conn):
        for (task_id,) in conn.execute("SELECT id FROM tasks").fetchall():
            if rng.random() < 0.4:
                conn.execute("UPDATE tasks SET dependent_rank = ? WHERE id = ?", (rng.choice((0, 1, 2, 3, 4, 9)), task_id))
    scrambled = [tuple(row) for row in conn.execute(db.RANK_DRIFT)]
    assert len(scrambled) > 5
    assert scrambled == [tuple(row) for row in conn.execute(db.RANK_DRIFT_IN, everything)]
    with db.write(conn):
        conn.execute(db.RECOUNT_RANK)
    assert conn.execute(db.RANK_DRIFT_IN, everything).fetchall() == []
    assert {row[0]: row[2] for row in scrambled} == {
        task_id: rank(conn, task_id) for task_id in (row[0] for row in scrambled)}


def test_a_reload_without_triggers_recounts_and_the_doctor_names_a_drifted_rank(conn, home):
    mk(conn, "pre", "P3")
    mk(conn, "post", "P1", depends_on=["pre"])
    assert "dependent_rank" not in tables.columns(conn, "tasks")
    dumped, sequence = tables.dump_all(conn)
    assert "dependent_rank" not in dumped["tasks"]["columns"]
    digest = tables.digest_table(conn, "tasks")
    with db.write(conn):
        tables.replace_all(conn, dumped, sequence)  # rows loaded with triggers dropped
    assert rank(conn, "pre") == 1 and drift(conn) == []
    assert tables.digest_table(conn, "tasks") == digest
    with db.write(conn):
        conn.execute("UPDATE tasks SET dependent_rank = 4")  # drift as an outside writer could leave it
    assert drift(conn) == [("pre", 4, 1)]
    report = doctor.run(str(home))
    found = [p for p in report["problems"] if p["kind"] == "task_readiness_drift"]
    assert [(p["task_id"], p.get("column"), p["stored"], p["counted"]) for p in found] == [
        ("pre", "dependent_rank", 4, 1)]
    assert found[0]["repair"].split('"')[1] == db.RECOUNT_RANK
    with db.write(conn):
        conn.execute(db.RECOUNT_RANK)
    assert drift(conn) == []


def test_the_column_never_shows_in_a_task(conn):
    mk(conn, "pre", "P3")
    mk(conn, "post", "P0", depends_on=["pre"])
    assert "dependent_rank" not in rows.get(conn, "pre")
    assert all("dependent_rank" not in task for task in tasks.list_tasks(conn))
    assert "dependent_rank" not in dispatch.next_task(conn)["task"]
    assert "dependent_rank" not in dispatch.next_task(conn, explain=True, prefer_unblocking=True)["task"]
    assert "dependent_rank" not in dispatch.next_task(conn, claim=True, owner="codex")["task"]


# -- next answers as it did when it walked up each row's dependents ------------------------------

_OPEN = "(" + ", ".join(f"'{s}'" for s in validate.STATUSES if s not in validate.TERMINAL_STATUSES) + ")"
# The walk the probe column ran before migration 22 (at most :cap nodes, the start included).
_UP_WALK = ("WITH RECURSIVE up(id, hit) AS (SELECT {start}, 0 UNION"
            " SELECT d.task_id, m.priority <= {want} FROM up JOIN dependencies d ON d.depends_on = up.id"
            f" JOIN tasks m INDEXED BY idx_tasks_id_status ON m.id = d.task_id WHERE +m.status IN {_OPEN} LIMIT 64)")
_WALKED_COLUMN = ", (" + _UP_WALK.format(start="{row}.id", want=":want") + (
    " SELECT CASE WHEN max(hit) THEN -1 ELSE 1 END FROM up) AS _probe")


def _walked_probe(self, task_id, tier, budget):
    if budget <= 1:
        return None
    hit = self.conn.execute(_UP_WALK.format(start=":id", want=":p") + " SELECT max(hit) FROM up WHERE id <> :id",
                            {"id": task_id, "p": validate.PRIORITIES[tier]}).fetchone()[0]
    return bool(hit), 1


def walked(monkeypatch):
    """``next`` walking up each probed row's dependents (the code before migration 23)."""
    monkeypatch.setattr(dispatch, "_PROBE_COLUMN", _WALKED_COLUMN.format(row="t"))
    monkeypatch.setattr(dispatch, "_ENTRY_PROBE_COLUMN", _WALKED_COLUMN.format(row="c"))
    monkeypatch.setattr(dispatch._Plan, "_probe", _walked_probe)


def chains(conn, rng, count=12):
    """Open dependents stacked above random tasks, two or three deep, of random priorities."""
    ids = [row[0] for row in conn.execute("SELECT id FROM tasks ORDER BY seq")]
    for n in range(count):
        below = rng.choice(ids)
        for depth in range(rng.randint(1, 3)):
            task_id = f"c{n:02d}-{depth}"
            mk(conn, task_id, rng.choice(validate.PRIORITIES), depends_on=[below])
            below = task_id


@pytest.mark.parametrize("path", ["small-scope", "deadline-index", "range-sorted"])
@pytest.mark.parametrize("seed", range(4))
def test_next_answers_as_when_it_walked_up_the_dependents(conn, monkeypatch, path, seed):
    force_path(monkeypatch, path)
    rng = random.Random(seed)
    random_home(conn, rng)  # with abandoned claims
    chains(conn, rng)
    for n in range(4):  # more abandoned claims: rows of worse tiers pile up ahead of the heads
        if dispatch.next_task(conn, claim=True, owner=f"late-ghost-{n}", minutes=1)["task"] is None:
            break
    clock.advance(minutes=5)
    assert drift(conn) == []
    for budget in (dispatch.PROBE_BUDGET, 2):
        monkeypatch.setattr(dispatch, "PROBE_BUDGET", budget)
        new = [dispatch.next_task(conn, **mode) for mode in MODES]
        with monkeypatch.context() as patched:
            walked(patched)
            old = [dispatch.next_task(conn, **mode) for mode in MODES]
        assert new == old, budget
    with db.write(conn):
        conn.execute("SAVEPOINT before_claim")
        taken = dispatch.next_task(conn, claim=True, owner="late")["task"]
        conn.execute("ROLLBACK TO before_claim")
        conn.execute("RELEASE before_claim")
    with monkeypatch.context() as patched:
        walked(patched)
        assert dispatch.next_task(conn, claim=True, owner="late")["task"] == taken


def test_a_row_ahead_of_the_head_inherits_from_far_up_and_stops_when_the_source_finishes(conn, monkeypatch):
    force_path(monkeypatch, "deadline-index")
    mk(conn, "head", "P0", due_at="2026-09-10T00:00:00Z")
    mk(conn, "foot", "P3", due_at="2026-09-01T00:00:00Z")
    below = "foot"
    for n in range(6):
        mk(conn, f"link-{n}", "P3", depends_on=[below])
        below = f"link-{n}"
    assert pick(conn, aging_minutes=0) == "head"
    mk(conn, "boss", "P0", depends_on=[below])
    assert pick(conn, aging_minutes=0) == "foot"
    assert dispatch.next_task(conn, explain=True, aging_minutes=0)["task"]["inherited_via"] == "link-0"
    complete(conn, "boss")
    assert pick(conn, aging_minutes=0) == "head"
    set_status(conn, "boss", "queued")
    edge(conn, "link-2", "nowhere")  # a raw edge to a missing task changes nothing above foot
    assert pick(conn, aging_minutes=0) == "foot"
    assert drift(conn) == []
