"""Dispatch in a long-lived server: the probe (the stored rank of inherited urgency) and the
source choices a connection keeps between calls (dispatch.keep_choices) never change an answer."""

import random

import pytest

from mindos.core import clock, validate
from mindos.store import db
from mindos.work import dispatch, tasks

from test_dispatch import MODES, seed_random_pool


def _walked_up(conn, task_id, tier):
    """Has ``task_id`` an open dependent of priority <= ``tier``, directly or through open ones
    (walked in Python, breadth first)?"""
    is_open = {row[0]: row[1] not in validate.TERMINAL_STATUSES for row in conn.execute("SELECT id, status FROM tasks")}
    priority = dict(conn.execute("SELECT id, priority FROM tasks").fetchall())
    level, seen = [task_id], {task_id}
    while level:
        reached = [row[0] for node in level for row in conn.execute(
            "SELECT task_id FROM dependencies WHERE depends_on = ? ORDER BY task_id", (node,))
            if is_open.get(row[0]) and row[0] not in seen]
        if any(int(priority[node][1]) <= tier for node in reached):
            return True
        seen.update(reached)
        level = sorted(set(reached))
    return False


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_probe_answers_as_a_walk_up_the_open_dependents_does(conn, seed):
    rng = random.Random(seed)
    ids = seed_random_pool(conn, rng, size=60)
    for task_id in rng.sample(ids, 20):  # chains and fans of dependents, so the urgency comes from far up
        others = [other for other in ids if other > task_id]
        if others:
            tasks.create(conn, project="X", title="up", task_id=f"u-{task_id}", priority=rng.choice(validate.PRIORITIES),
                         depends_on=sorted(set(rng.sample(others, min(3, len(others))) + [task_id])))
    plan = dispatch._Plan(conn, None, (), False, False, dispatch.DEFAULT_AGING_MINUTES, dispatch.DEFAULT_AGING_BOOST)
    queued = [row[0] for row in conn.execute("SELECT id FROM tasks WHERE status = 'queued' ORDER BY seq")]
    verdicts = [(plan._probe(task_id, tier, 50), _walked_up(conn, task_id, tier)) for task_id in queued
                for tier in range(4)]
    assert all(probed == (walked, 1) for probed, walked in verdicts)
    assert any(walked for _, walked in verdicts) and not all(walked for _, walked in verdicts)
    assert plan._probe(queued[0], 0, 1) is None  # a spent budget hands the tier to the walk down


def test_kept_choices_give_the_answers_of_fresh_ones_while_another_connection_changes_the_queue(conn, home):
    rng = random.Random(5)
    ids = seed_random_pool(conn, rng, size=45)
    server = db.connect(home, create=False)
    try:
        dispatch.keep_choices(server)
        for step in range(3 * dispatch.KEEP_CALLS):
            for mode in MODES:
                kept = dispatch.next_task(server, **mode)
                assert kept == dispatch.next_task(conn, **mode), (step, mode)
            # another connection changes the queue: the kept server sees it on its next call
            if step % 3 == 0:
                tasks.create(conn, project=rng.choice(["X", "Y"]), title=f"new {step}", task_id=f"n{step:03d}",
                             priority=rng.choice(validate.PRIORITIES),
                             due_at="2026-08-19T00:00:00Z" if step % 2 else None)
            elif step % 3 == 1:
                picked = dispatch.next_task(conn, claim=True, owner=f"agent{step}")["task"]
                assert dispatch.next_task(server)["task"] != picked or picked is None
            else:
                clock.advance(minutes=rng.choice((1, 200, 700)))
    finally:
        server.close()


def test_a_kept_connection_samples_the_queue_again_every_keep_calls(conn, monkeypatch):
    for n in range(30):
        tasks.create(conn, project="X", title=f"t{n}", task_id=f"t{n:02d}", priority=("P0", "P2", "P3")[n % 3],
                     due_at="2026-09-01T00:00:00Z" if n % 2 else None)
        clock.advance(minutes=200)
    made = []
    real = dispatch._Plan._use_deadline_index
    monkeypatch.setattr(dispatch._Plan, "_use_deadline_index", lambda self, ranges: made.append(1) or real(self, ranges))
    dispatch.next_task(conn)
    dispatch.next_task(conn)
    fresh = len(made) // 2
    assert fresh >= 2 and len(made) == 2 * fresh  # a plain connection keeps nothing: it samples on every call
    made.clear()
    dispatch.keep_choices(conn)
    for _ in range(dispatch.KEEP_CALLS):
        dispatch.next_task(conn)
    assert len(made) == fresh  # sampled on the first call only
    dispatch.next_task(conn, claim=True, owner="a1")
    assert len(made) == 2 * fresh  # past KEEP_CALLS: sampled again
    dispatch.next_task(conn, aging_boost=1)
    assert len(made) > 2 * fresh  # other aging settings: their own choices


def test_with_no_deadline_anywhere_no_dated_stream_is_read_and_the_answers_stay(conn, monkeypatch):
    rng = random.Random(9)
    seed_random_pool(conn, rng, size=45)
    conn.execute("UPDATE tasks SET due_at = NULL")
    monkeypatch.setattr(dispatch, "SMALL_SCOPE_FLOOR", 0)  # the global indexes, never a small scope's sort
    monkeypatch.setattr(dispatch, "SMALL_SCOPE", 0)
    seen = []
    conn.set_trace_callback(seen.append)
    try:
        shortcut = [dispatch.next_task(conn, **mode) for mode in MODES if "project" not in mode and "tags" not in mode]
    finally:
        conn.set_trace_callback(None)
    assert not [sql for sql in seen if "t.due_at IS NOT NULL" in sql]
    real = dispatch._Plan.__init__

    def without_shortcut(self, *args, **kwargs):
        real(self, *args, **kwargs)
        self._any_dated = 1  # as before: every dated stream queried

    monkeypatch.setattr(dispatch._Plan, "__init__", without_shortcut)
    assert [dispatch.next_task(conn, **mode) for mode in MODES
            if "project" not in mode and "tags" not in mode] == shortcut
    assert any(result["task"] for result in shortcut)


@pytest.mark.parametrize("seed", [3, 4])
def test_a_walk_with_no_open_task_of_its_priority_is_skipped_and_the_answers_stay(conn, monkeypatch, seed):
    rng = random.Random(seed)
    seed_random_pool(conn, rng, size=45)
    conn.execute("UPDATE tasks SET priority = 'P3' WHERE priority IN ('P0', 'P1')")  # tiers 0 and 1 start nowhere
    walks = []
    conn.set_trace_callback(lambda sql: walks.append(sql) if sql.startswith("WITH RECURSIVE walk") else None)
    try:
        skipped = [dispatch.next_task(conn, **mode) for mode in MODES]
    finally:
        conn.set_trace_callback(None)
    assert not [sql for sql in walks if "s.priority = 'P0'" in sql or "s.priority = 'P1'" in sql]
    monkeypatch.setattr(dispatch, "_ANY_OPEN", "SELECT 1")  # as before: every walk runs
    assert [dispatch.next_task(conn, **mode) for mode in MODES] == skipped
    assert any(result["task"] for result in skipped)
