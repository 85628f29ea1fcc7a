"""Standing findings a tick carries instead of sensing again: the overdue listing (grown by
the tasks that fell due since the last tick) and the recall-stale result (kept while no
event but recalls lands and no lifetime ends; the recalls that can move with time alone
re-checked a slice per tick).  Every tick still reports what a full sense reports."""

import pytest

from conftest import make_task
from mindos.autonomy import nanny, sense
from mindos.context import recall
from mindos.core import clock
from mindos.memory import handoffs, notes
from mindos.recovery import doctor
from mindos.store import db, ledger


def _tick(conn):
    report = nanny.tick(conn, max_repairs=0)
    clock.advance(60)
    return report


def _same_as_full(conn, report):
    """The tick remembered and counted what a full sense at the tick's instant finds."""
    clock.advance(-60)
    full = sense.sense(conn)
    clock.advance(60)
    remembered = {row[0] for row in conn.execute("SELECT digest FROM nanny_findings")}
    assert remembered == {item["digest"] for item in full["findings"]}
    assert report["findings"]["by_kind"] == full["by_kind"]


def _count_calls(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append((a, k)) or real(*a, **k))
    return calls


def _recounts(monkeypatch):
    """The full reads of the overdue tasks (every one, not only those fell due since)."""
    calls = _count_calls(monkeypatch, sense, "_overdue_rows")
    return lambda: [call for call in calls if len(call[0][2]) == 2]


def _not_recount_turn(conn):
    """Tick until the next tick is not the overdue recount turn."""
    before = doctor.FAMILIES[doctor.FAMILIES.index(nanny.OVERDUE_RECOUNT) - 1]
    while sense.last_watermark(conn).get("slice") in (before, "all"):
        _tick(conn)


def test_the_recall_actions_a_tick_ignores_are_the_recall_modules():
    assert set(recall.RECALL_ACTIONS) < set(nanny.RECALL_NEUTRAL)
    assert set(recall.RECALL_ACTIONS) < set(nanny.NO_TASK_ROW_ACTIONS)
    assert set(nanny.RECALL_KINDS) == set(sense.kinds_of(["recall-stale"]))


def _until(due):
    clock.advance(clock.seconds_between(clock.now_iso(), due) + 1)


def test_a_newly_overdue_task_is_found_on_the_next_tick_without_a_recount(conn, monkeypatch):
    for n in range(3):
        make_task(conn, f"t-late{n}", due_at=clock.shift(clock.now_iso(), -60 * (n + 1)))
    soon, later = clock.shift(clock.now_iso(), 1000), clock.shift(clock.now_iso(), 2000)
    make_task(conn, "t-soon", due_at=soon)
    make_task(conn, "a-later", due_at=later)
    _tick(conn)
    _not_recount_turn(conn)
    calls = _recounts(monkeypatch)
    _until(soon)
    report = _tick(conn)
    assert calls() == []
    assert [item["subjects"] for item in report["findings"]["new"]] == [["t-soon"]]
    assert report["findings"]["by_kind"]["overdue_task"] == 4
    _same_as_full(conn, report)
    _not_recount_turn(conn)
    calls = _recounts(monkeypatch)
    _until(later)
    report = _tick(conn)  # a-later sorts first by id: it enters the listing ahead of the rest
    assert calls() == [] and [item["subjects"] for item in report["findings"]["new"]] == [["a-later"]]
    _same_as_full(conn, report)


def test_a_recall_or_a_resume_between_ticks_recounts_no_overdue_task_and_a_resume_that_claims_does(
        conn, monkeypatch):
    from mindos.work import leases

    make_task(conn, "t-late", due_at=clock.shift(clock.now_iso(), -60))
    make_task(conn, "a")
    make_task(conn, "b")
    leases.claim(conn, "b", "codex")
    _tick(conn)
    _not_recount_turn(conn)
    calls = _recounts(monkeypatch)
    recall.recall(conn, "a", agent="codex", params=recall.make_params())
    assert recall.resume(conn, "b", agent="codex", params=recall.make_params())["action"] == "already_held"
    report = _tick(conn)
    assert calls() == []  # reads only: the overdue listing is carried
    assert report["findings"]["by_kind"]["overdue_task"] == 1
    _same_as_full(conn, report)
    _not_recount_turn(conn)
    calls = _recounts(monkeypatch)
    assert recall.resume(conn, "a", agent="codex", params=recall.make_params())["action"] == "claimed"
    report = _tick(conn)
    assert len(calls()) == 1  # the claim moved a task row: counted again
    _same_as_full(conn, report)


def test_a_listing_past_the_limit_keeps_the_first_by_id(conn, monkeypatch):
    monkeypatch.setattr(sense, "LIMIT", 2)
    for task_id in ("t-b", "t-d", "t-e"):
        make_task(conn, task_id, due_at=clock.shift(clock.now_iso(), -60))
    soon = clock.shift(clock.now_iso(), 1000)
    make_task(conn, "t-a", due_at=soon)
    make_task(conn, "t-f", due_at=soon)
    first = _tick(conn)
    assert first["findings"]["by_kind"] == {"overdue_task": 3}
    _not_recount_turn(conn)
    calls = _recounts(monkeypatch)
    _until(soon)
    report = _tick(conn)
    assert calls() == []
    assert report["findings"]["by_kind"] == {"overdue_task": 5}
    assert [item["subjects"] for item in report["findings"]["new"]] == [["t-a"]]
    assert len(report["findings"]["resolved"]) == 1  # t-d left the listing (still counted)
    clock.advance(-60)
    full = sense.sense(conn, limit=2)
    clock.advance(60)
    remembered = {row[0] for row in conn.execute("SELECT digest FROM nanny_findings")}
    assert remembered == {item["digest"] for item in full["findings"]}


def test_a_standing_overdue_finding_is_carried_not_reported_or_rebuilt_again(conn, monkeypatch):
    make_task(conn, "t-late", due_at=clock.shift(clock.now_iso(), -60))
    first = _tick(conn)
    assert [item["kind"] for item in first["findings"]["new"]] == ["overdue_task"]
    _not_recount_turn(conn)
    calls = _recounts(monkeypatch)
    built = _count_calls(monkeypatch, sense, "overdue_finding")
    report = _tick(conn)
    assert calls() == [] and built == []
    assert report["findings"]["new"] == [] and report["findings"]["carried"] == 1
    assert report["findings"]["by_kind"] == {"overdue_task": 1}
    assert conn.execute("SELECT ticks FROM nanny_findings WHERE kind = 'overdue_task'").fetchone()[0] >= 2


def test_a_task_change_makes_the_next_tick_recount_the_overdue_tasks(conn, monkeypatch):
    from mindos.work import lifecycle, leases

    make_task(conn, "t-late", due_at=clock.shift(clock.now_iso(), -60))
    make_task(conn, "t-late2", due_at=clock.shift(clock.now_iso(), -60))
    _tick(conn)
    _not_recount_turn(conn)
    leases.claim(conn, "t-late", "codex", minutes=30)
    lifecycle.complete(conn, "t-late", "codex", note="done")
    calls = _recounts(monkeypatch)
    report = _tick(conn)
    assert len(calls()) == 1
    assert report["findings"]["by_kind"] == {"overdue_task": 1}
    assert len(report["findings"]["resolved"]) == 1
    _same_as_full(conn, report)


def _behind_the_back(conn, statement, params=()):
    """A task row changed with no event (what only the recount can see)."""
    import sqlite3

    link = sqlite3.connect(conn.path, isolation_level=None)
    try:
        link.execute(statement, params)
    finally:
        link.close()


def _to_recount_turn(conn):
    """Tick until the next tick is the overdue recount turn."""
    before = doctor.FAMILIES[doctor.FAMILIES.index(nanny.OVERDUE_RECOUNT) - 1]
    while sense.last_watermark(conn).get("slice") != before:
        _tick(conn)


def test_the_recount_turn_checks_the_overdue_tasks_without_reading_them_all(conn, monkeypatch):
    for n in range(3):
        make_task(conn, f"t-late{n}", due_at=clock.shift(clock.now_iso(), -60 * (n + 1)))
    _tick(conn)
    calls = _recounts(monkeypatch)
    windows = _count_calls(monkeypatch, nanny, "_recount_window")
    slices = []
    for _ in range(nanny.PERIOD_TICKS):
        report = _tick(conn)
        slices.append(report["sweep"]["slice"])
        assert report["findings"]["by_kind"] == {"overdue_task": 3}
    assert calls() == [] and len(windows) == 1 and nanny.OVERDUE_RECOUNT in slices
    assert sense.last_watermark(conn)["overdue"].get("round") is None  # one window: the round ended


def test_a_task_made_overdue_behind_the_back_is_found_by_the_recount_turn(conn, monkeypatch):
    make_task(conn, "t-late", due_at=clock.shift(clock.now_iso(), -60))
    make_task(conn, "t-zz", due_at=clock.shift(clock.now_iso(), 10 ** 6))
    _tick(conn)
    _to_recount_turn(conn)
    _behind_the_back(conn, "UPDATE tasks SET due_at = '2020-01-01T00:00:00Z' WHERE id = 't-zz'")
    calls = _recounts(monkeypatch)
    report = _tick(conn)
    assert report["sweep"]["slice"] == nanny.OVERDUE_RECOUNT and len(calls()) == 1
    assert report["findings"]["by_kind"] == {"overdue_task": 2}
    assert [item["subjects"] for item in report["findings"]["new"]] == [["t-zz"]]
    _same_as_full(conn, report)


@pytest.mark.parametrize("index", ["idx_tasks_overdue_open", "idx_tasks_id_status"])
def test_a_listed_task_changed_behind_the_back_is_found_by_the_recount_turn(conn, monkeypatch, index):
    """The total stays the same (one task leaves the overdue listing, another enters it, and
    one listed changes its priority): the listing check finds it, whichever index it reads
    the tasks from (its cost model chooses; here each is forced)."""
    monkeypatch.setattr(sense, "OVERDUE_SORTED_ROW", 0 if index == "idx_tasks_overdue_open" else 10 ** 9)
    read = []
    real = nanny._listing_index
    monkeypatch.setattr(nanny, "_listing_index", lambda *a: read.append(real(*a)) or read[-1])
    for task_id in ("t-a", "t-b", "t-c"):
        make_task(conn, task_id, due_at=clock.shift(clock.now_iso(), -60))
    make_task(conn, "t-bb", due_at=clock.shift(clock.now_iso(), 10 ** 6))
    _tick(conn)
    _to_recount_turn(conn)
    _behind_the_back(conn, "UPDATE tasks SET due_at = ? WHERE id = 't-b'", (clock.shift(clock.now_iso(), 10 ** 6),))
    _behind_the_back(conn, "UPDATE tasks SET due_at = '2020-01-01T00:00:00Z' WHERE id = 't-bb'")
    _behind_the_back(conn, "UPDATE tasks SET priority = 'P0' WHERE id = 't-c'")
    calls = _recounts(monkeypatch)
    report = _tick(conn)
    assert len(calls()) == 1 and report["findings"]["by_kind"] == {"overdue_task": 3}
    assert sorted(item["subjects"][0] for item in report["findings"]["new"]) == ["t-bb", "t-c"]
    assert read == [index]
    _same_as_full(conn, report)


def _five_late_in_windows_of_two(conn, monkeypatch):
    """Five overdue tasks and one due far ahead (``t-zz``, last by id), the recount reading
    the overdue index two entries a window."""
    monkeypatch.setattr(nanny, "OVERDUE_WINDOW", 2)
    for n in range(5):
        make_task(conn, f"t-late{n}", due_at=clock.shift(clock.now_iso(), -60 * (n + 1)))
    make_task(conn, "t-zz", due_at=clock.shift(clock.now_iso(), 10 ** 6))


def test_the_recount_walks_the_overdue_index_in_windows_and_finds_a_change_by_the_rounds_end(conn, monkeypatch):
    _five_late_in_windows_of_two(conn, monkeypatch)
    first = _tick(conn)
    assert first["findings"]["by_kind"] == {"overdue_task": 5}
    calls = _recounts(monkeypatch)
    rounds, turns = [], 0
    while not calls() and turns < 5:  # 5 entries, 2 a window; 6 counted once t-zz joins them
        report = _tick(conn)
        if report["sweep"]["slice"] == nanny.OVERDUE_RECOUNT:
            turns += 1
            rounds.append(sense.last_watermark(conn)["overdue"].get("round"))
            if turns == 1:  # behind the back, ahead of the round's cursor and past the listing (t-zz
                # sorts last by id): only the count sees it
                due = clock.shift(rounds[0]["upto"], -1)
                _behind_the_back(conn, "UPDATE tasks SET due_at = ? WHERE id = 't-zz'", (due,))
        # a round takes one recount turn per window, and one more when the last is full
        assert report["sweep"]["period_ticks"] == nanny.PERIOD_TICKS * (1 + report["findings"]["total"] // 2)
    assert [r["sum"] for r in rounds[:3]] == [2, 4, 6]
    # the round's last window finds one more than carried: recounted in full on that tick
    assert turns == 4 and len(calls()) == 1 and rounds[3] is None
    assert report["findings"]["by_kind"] == {"overdue_task": 6}
    assert [item["subjects"] for item in report["findings"]["new"]] == [["t-zz"]]
    _same_as_full(conn, report)


def test_a_change_behind_a_rounds_cursor_is_found_by_the_next_round(conn, monkeypatch):
    _five_late_in_windows_of_two(conn, monkeypatch)
    _tick(conn)
    _to_recount_turn(conn)
    _tick(conn)  # the round's first window
    _behind_the_back(conn, "UPDATE tasks SET due_at = '2020-01-01T00:00:00Z' WHERE id = 't-zz'")
    calls = _recounts(monkeypatch)
    for _ in range(2 * 3 * nanny.PERIOD_TICKS):  # two rounds of three windows at most
        report = _tick(conn)
        if calls():
            break
    assert len(calls()) == 1 and report["findings"]["by_kind"] == {"overdue_task": 6}
    _same_as_full(conn, report)


def _cited(conn, task_id, *, rerank=False, note=None, receipt=False):
    make_task(conn, task_id, title=f"task {task_id} pool")
    if receipt:
        from mindos.work import receipts

        receipts.add(conn, task_id, "test", {"ok": True})
    if note:
        notes.add(conn, task_id, content=note)
    return _cite(conn, task_id, rerank=rerank)


def _cite(conn, task_id, *, rerank=False, related=None):
    """A recall of the existing task ``task_id``, cited by a handoff (``rerank``: reranked
    related notes; ``related``: that many related notes)."""
    params = recall.make_params(related=2, rerank=True) if rerank else recall.make_params(related=related)
    sealed = recall.recall(conn, task_id, agent="codex", params=params)
    handoffs.record(conn, task_id, from_agent="codex", objective="x", recall_digest=sealed.get("core_digest", sealed["digest"]))
    return sealed


def test_an_unchanged_home_skips_the_recall_check_and_a_changed_input_is_found_on_the_next_tick(conn, monkeypatch):
    _cited(conn, "a")
    _cited(conn, "b")
    first = _tick(conn)
    assert "recall_stale" not in first["findings"]["by_kind"]
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    for _ in range(3):
        report = _tick(conn)
        assert report["findings"]["new"] == []
    assert sweeps == []  # nothing a recall depends on moved: no bundle rebuilt
    notes.add(conn, "b", content="moved")  # an input of b's recall changes
    report = _tick(conn)
    assert len(sweeps) == 1
    assert [(item["kind"], item["subjects"]) for item in report["findings"]["new"]] == [("recall_stale", ["b"])]
    _same_as_full(conn, report)
    report = _tick(conn)  # standing now: carried, not rebuilt
    assert len(sweeps) == 1 and report["findings"]["new"] == [] and report["findings"]["carried"] == 1
    _same_as_full(conn, report)


def test_a_repair_record_alone_rebuilds_no_recall_and_what_the_repair_changed_is_judged_by_its_own_events(
        conn, monkeypatch):
    from mindos.autonomy import repairs

    # every repair command audits what it changes in events of its own; a new command must too
    # before its record can be neutral (see RECALL_NEUTRAL)
    assert set(repairs.COMMANDS) == {"recover", "fts-rebuild", "receipts-sweep", "escalate-stalled"}
    _cited(conn, "a")
    _cited(conn, "b")
    _tick(conn)
    _tick(conn)
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    with db.write(conn):
        ledger.append_event(conn, "repair", "repair/recover-expired-leases", "repair_applied",
                            {"command": "recover", "tier": 0, "trigger": "nanny", "findings": [], "changed": False,
                             "error": None})
    report = _tick(conn)
    assert sweeps == []  # the record alone: no bundle rebuilt (it used to re-check every cited recall)
    _same_as_full(conn, report)
    with db.write(conn):  # a repair that changed b: its own task event is what moves b's recall
        ledger.append_event(conn, "repair", "repair/recover-expired-leases", "repair_applied",
                            {"command": "recover", "tier": 0, "trigger": "nanny", "findings": [], "changed": True,
                             "error": None})
    notes.add(conn, "b", content="moved by the repair")
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps] == [["b"]]
    assert [(item["kind"], item["subjects"]) for item in report["findings"]["new"]] == [("recall_stale", ["b"])]
    _same_as_full(conn, report)


def test_a_lifetime_ending_rechecks_the_recalls_it_shows_in_and_not_the_rest(conn, monkeypatch):
    from mindos.work import graph, leases

    _cited(conn, "a")  # no lifetime of its own, no edge to one that ends: never rebuilt
    make_task(conn, "b", title="task b pool")
    notes.add(conn, "b", content="short lived", ttl_hours=1)
    _cite(conn, "b")  # packs the note that expires
    make_task(conn, "c", title="task c pool")
    graph.add_dependency(conn, "c", "b")  # an edge to b: its recall may show b's change
    _cite(conn, "c")
    make_task(conn, "d", title="task d pool")
    leases.claim(conn, "d", "codex", minutes=90)
    _cite(conn, "d")  # packs its live lease
    _tick(conn)
    _tick(conn)
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    _tick(conn)
    assert sweeps == []
    clock.advance(3600)  # b's note expires
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps] == [["b", "c"]]  # not every cited recall again
    assert _stale(report) == ["b"]
    _same_as_full(conn, report)
    clock.advance(30 * 60)  # d's lease ends
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps][1:] == [["d"]]
    assert _stale(report) == ["d"]
    _same_as_full(conn, report)
    assert sense.last_watermark(conn)["recall"]["next_end"] is None  # no lifetime left ahead
    report = _tick(conn)
    assert len(sweeps) == 2 and report["findings"]["new"] == []


def test_a_lifetime_ending_queues_the_recalls_any_write_can_move(conn, monkeypatch):
    from mindos.memory import facts

    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    for task_id in ("w1", "w2"):
        _cited_related(conn, task_id)
    _cited(conn, "a")
    facts.assert_fact(conn, subject="pool", predicate="is", obj="warm", source="test", valid_hours=1)
    _tick(conn)
    _tick(conn)
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    clock.advance(3600)  # the fact's window ends: only a related section can pack a fact
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps] == [["w1"]]
    assert sense.last_watermark(conn)["recall"]["pending"] == ["w2"]
    _same_as_full(conn, report)
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps] == [["w1"], ["w2"]]
    _same_as_full(conn, report)


def test_the_lifetime_ends_in_a_span_are_read_from_their_indexes(conn):
    from mindos.work import leases

    make_task(conn, "a")
    make_task(conn, "b")
    now = clock.now_iso()
    notes.add(conn, "a", content="an hour", ttl_hours=1)
    notes.add(conn, "a", content="for good")
    leases.claim(conn, "b", "codex", minutes=30)
    assert recall.lapsed(conn, now, clock.shift(now, 60)) == []
    assert recall.lapsed(conn, now, clock.shift(now, 30 * 60)) == ["b"]
    assert recall.lapsed(conn, now, clock.shift(now, 3600)) == ["a", "b"]
    assert recall.lapsed(conn, clock.shift(now, 3600), clock.shift(now, 7200)) == ["a"]  # the span's start counts
    assert recall.lapsed(conn, clock.shift(now, 3601), clock.shift(now, 7200)) == []
    statements = []
    conn.set_trace_callback(statements.append)
    try:
        recall.lapsed(conn, now, clock.shift(now, 3600))
        recall._next_end(conn, now)
        recall._lifetime_ends(conn, now, clock.shift(now, 3600))
        recall._lifetime_ends(conn, now, clock.shift(now, 3600), [])
    finally:
        conn.set_trace_callback(None)
    plans = [[row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)] for sql in statements]
    assert len(plans) == 4
    for plan in plans:  # each lifetime read from the index of the rows that have one, never a pass over a table
        reads = [step for step in plan if step.startswith(("SCAN", "SEARCH")) and "subquery" not in step]
        assert len(reads) >= 2 and all("INDEX" in step for step in reads), plan


def test_recalls_that_move_with_time_alone_are_rechecked_a_slice_per_tick(conn, monkeypatch):
    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    for task_id in ("a", "b", "c"):
        _cited(conn, task_id, rerank=True, note=f"pool note for {task_id}")
    _cited(conn, "d")  # not volatile: never re-checked while nothing moves
    _tick(conn)
    mark = sense.last_watermark(conn)["recall"]
    assert mark["volatile"] == ["a", "b", "c"]
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    reads, ticks_read = _count_calls(monkeypatch, recall, "cited_events"), []
    for _ in range(4):
        clock.advance(3600)  # every reranked note's age moves by an hour
        report = _tick(conn)
        ticks_read += reads
        _same_as_full(conn, report)
        reads.clear()  # the full sense's own reads
    assert [call[1]["tasks"] for call in sweeps] == [["a"], ["b"], ["c"], ["a"]]
    # with nothing written, each re-check reads the cited recall of its own task alone
    assert [sorted(call[0][1]) for call in ticks_read] == [["a"], ["b"], ["c"], ["a"]]


def test_a_reranked_recall_within_the_same_age_hours_and_no_write_is_kept_without_a_rebuild(conn, monkeypatch):
    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    for task_id in ("a", "b", "c"):
        _cited(conn, task_id, rerank=True, note=f"pool note for {task_id}")
    _tick(conn)
    quiet = sense.last_watermark(conn)["recall"]["quiet"]
    assert isinstance(quiet["checked_ns"], int) and len(quiet["until"]) == 3
    # the horizon: the first instant a reranked candidate turns an hour older
    assert all(clock.now_iso() < horizon <= clock.shift(clock.now_iso(), 3600) for horizon in quiet["until"])
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    for _ in range(4):
        clock.advance(60)
        report = _tick(conn)
        _same_as_full(conn, report)
    assert sweeps == []  # no write, no candidate an hour older: nothing rebuilt
    clock.advance(3600)  # past every horizon: each rebuilt on its turn again
    for _ in range(3):
        report = _tick(conn)
        _same_as_full(conn, report)
    assert sorted(call[1]["tasks"][0] for call in sweeps) == ["a", "b", "c"]


def test_a_write_since_the_check_queues_a_reranked_recall_and_the_queue_rechecks_it_once(conn, monkeypatch):
    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    for task_id in ("a", "b"):
        _cited(conn, task_id, rerank=True, note=f"pool note for {task_id}")
    make_task(conn, "z")
    _tick(conn)
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    _tick(conn)
    assert sweeps == []
    assert sense.last_watermark(conn)["recall"]["next"] == 1  # the next time turn is b's
    notes.add(conn, "z", content="pool note for nobody")  # another task's note: the pools may move
    _tick(conn)
    # a, at the queue's front, is re-checked; b, on its time turn with its hour not yet
    # passed, stays queued for the queue's re-check instead of a second rebuild
    assert [call[1]["tasks"] for call in sweeps] == [["a"]]
    assert sense.last_watermark(conn)["recall"]["pending"] == ["b"]
    report = _tick(conn)  # within ⌈2 queued / 1 a tick⌉ ticks of the write
    assert [call[1]["tasks"] for call in sweeps] == [["a"], ["b"]]
    assert sense.last_watermark(conn)["recall"]["pending"] == []
    _same_as_full(conn, report)
    report = _tick(conn)  # each was re-checked once after the write: nothing rebuilt again
    assert len(sweeps) == 2
    _same_as_full(conn, report)


def _four_reranked_recalls_turned_to_c(conn, monkeypatch, **task_z):
    """Reranked cited recalls of a, b, c and d, one re-checked a tick, and a task z to write
    to, ticked until c's time turn is next (turns run c, d, a, b); returns the four ids."""
    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    tasks = ["a", "b", "c", "d"]
    for task_id in tasks:
        _cited(conn, task_id, rerank=True, note=f"pool note for {task_id}")
    make_task(conn, "z", **task_z)
    for _ in range(3):
        _tick(conn)
    assert sense.last_watermark(conn)["recall"]["next"] == 2
    return tasks


def test_queued_recalls_on_their_time_turns_are_each_rechecked_once_within_the_queue_bound(conn, monkeypatch):
    tasks = _four_reranked_recalls_turned_to_c(conn, monkeypatch, title="task z pool")
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    for n in range(3):
        notes.add(conn, "z", content=f"pool task pool note {n}")  # every reranked pool may move
    reports = []
    for _ in range(len(tasks)):  # ⌈4 queued / 1 a tick⌉
        reports.append(_tick(conn))
    # one rebuild a tick, from the queue's front: a time turn whose hour has not passed adds none
    assert [call[1]["tasks"] for call in sweeps] == [[task] for task in tasks]
    assert sense.last_watermark(conn)["recall"]["pending"] == []
    _same_as_full(conn, reports[-1])
    report = _tick(conn)
    assert len(sweeps) == len(tasks)
    _same_as_full(conn, report)


def test_a_queued_recall_past_its_hour_is_rebuilt_on_its_time_turn_ahead_of_the_queue(conn, monkeypatch):
    _four_reranked_recalls_turned_to_c(conn, monkeypatch)
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    notes.add(conn, "z", content="pool note for nobody")  # every reranked recall queues
    _tick(conn)
    assert [call[1]["tasks"] for call in sweeps] == [["a"]]  # c's hour holds: queued, not rebuilt
    assert sense.last_watermark(conn)["recall"]["pending"] == ["b", "c", "d"]
    clock.advance(3600)  # every reranked note is an hour older: d's time turn rebuilds it though queued
    _tick(conn)
    assert [call[1]["tasks"] for call in sweeps][1:] == [["b", "d"]]
    assert sense.last_watermark(conn)["recall"]["pending"] == ["c"]
    report = _tick(conn)  # the queue's last, and a's time turn (its hour passed too): all found
    assert [call[1]["tasks"] for call in sweeps][2:] == [["a", "c"]]
    assert sense.last_watermark(conn)["recall"]["pending"] == []
    _same_as_full(conn, report)


def test_a_changed_receipt_file_rebuilds_a_recall_that_packed_it(conn, monkeypatch):
    import os
    import time

    from mindos.work import receipts
    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    monkeypatch.setattr(nanny, "RECALL_FILE_SLACK_NS", 0)  # the file was written just before the check
    _cited(conn, "a", receipt=True)
    (receipt_id,) = conn.execute("SELECT id FROM receipts WHERE task_id = 'a'").fetchone()
    _tick(conn)
    assert sense.last_watermark(conn)["recall"]["volatile"] == ["a"]
    assert sense.last_watermark(conn)["recall"]["quiet"]["until"] == [None]  # no horizon: files alone move it
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    _tick(conn)
    assert sweeps == []  # the receipt file is as it was checked
    path = receipts.load(conn, receipt_id)["path"]
    path = path if os.path.isabs(path) else os.path.join(conn.home, path)
    with open(path, "ab") as handle:
        handle.write(b" ")
    later = time.time_ns() + 10 ** 10  # a file clock's stamp, however coarse, after the check
    os.utime(path, ns=(later, later))
    report = _tick(conn)
    assert [call[1]["tasks"] for call in sweeps] == [["a"]]
    assert ("recall_stale", ["a"]) in [(item["kind"], item["subjects"]) for item in report["findings"]["new"]]
    _same_as_full(conn, report)


def test_the_lifetime_ends_and_the_next_one_come_from_one_pass(conn):
    make_task(conn, "a")
    now = clock.now_iso()
    for hours in (1, 2, 3):
        notes.add(conn, "a", content=f"lives {hours}h", ttl_hours=hours)
    later = clock.shift(now, 2 * 3600 + 60)
    upcoming = []
    assert recall._lifetime_ends(conn, now, later, upcoming) == recall._lifetime_ends(conn, now, later)
    assert len(recall._lifetime_ends(conn, now, later)) == 2
    assert upcoming == [recall._next_end(conn, later)] and upcoming[0] > later
    upcoming = []
    assert recall._lifetime_ends(conn, clock.shift(now, 5 * 3600), clock.shift(now, 6 * 3600), upcoming) == []
    assert upcoming == [None]


def test_after_writes_only_the_recalls_whose_inputs_moved_are_rebuilt(conn, monkeypatch):
    from mindos.work import graph, leases

    _cited(conn, "a")
    _cited(conn, "b")
    make_task(conn, "c", title="task c pool")
    graph.add_dependency(conn, "c", "a")  # c packs a as a dependency
    _cite(conn, "c")
    make_task(conn, "d", title="task d pool")  # a related section: any write can move it
    _cite(conn, "d", related=2)
    make_task(conn, "e")
    _tick(conn)
    _tick(conn)
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    notes.add(conn, "e", content="elsewhere")  # no bounded recall packs e
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps] == [["d"]]
    _same_as_full(conn, report)
    leases.claim(conn, "a", "codex")  # a's status moves: a's own recall and c's (a is its dependency)
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps][1:] == [["a", "c", "d"]]
    stale = sorted(item["subjects"][0] for item in report["findings"]["new"] if item["kind"] == "recall_stale")
    assert "c" in stale and "a" in stale and "b" not in stale
    _same_as_full(conn, report)
    handoffs.record(conn, "e", from_agent="codex", objective="y")  # a handoff of e: only the related recall
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps][2:] == [["d"]]
    _same_as_full(conn, report)
    with db.write(conn):  # a consolidation moves notes between tasks
        ledger.append_event(conn, "note", "e", "note_consolidated", {})
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps][3:] == [None]  # not bounded: every recall again
    _same_as_full(conn, report)


def test_a_handoff_that_no_longer_cites_a_recall_takes_its_finding_away(conn, monkeypatch):
    _cited(conn, "a")
    _cited(conn, "b")
    _tick(conn)
    _tick(conn)
    notes.add(conn, "b", content="moved")
    report = _tick(conn)
    assert _stale(report) == ["b"]
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    handoffs.record(conn, "b", from_agent="codex", objective="next session, no recall cited")
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps] == [["b"]]  # b alone, and nothing left to rebuild
    assert report["findings"]["resolved_total"] == 1
    assert "recall_stale" not in report["findings"]["by_kind"]
    _same_as_full(conn, report)


def test_a_handoff_citing_a_reranked_recall_puts_it_in_the_time_rotation(conn, monkeypatch):
    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    for task_id in ("a", "c"):
        _cited(conn, task_id, rerank=True, note=f"pool note for {task_id}")
    _cited(conn, "b", note="pool note for b")
    _tick(conn)
    assert sense.last_watermark(conn)["recall"]["volatile"] == ["a", "c"]
    _tick(conn)  # a's time turn: the rotation has reached c
    assert sense.last_watermark(conn)["recall"]["next"] == 1
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    _cite(conn, "b", rerank=True)  # b now cites a recall that moves with time alone
    report = _tick(conn)
    mark = sense.last_watermark(conn)["recall"]
    assert mark["volatile"] == ["a", "b", "c"] and mark["next"] == 0  # c's time turn was this tick
    # b for its handoff; a at the front of the queue the handoff's write formed (a reranked
    # recall has a related section); c's check still holds for time: left to the queue
    assert [call[1]["tasks"] for call in sweeps] == [["a", "b"]] and mark["pending"] == ["c"]
    _same_as_full(conn, report)
    for _ in range(3):
        clock.advance(3600)  # every reranked note's age moves by an hour
        report = _tick(conn)
        _same_as_full(conn, report)
    # the time turns go round a, b, c (c also at the queue's front on the first)
    assert [call[1]["tasks"] for call in sweeps][1:] == [["a", "c"], ["b"], ["c"]]


def test_too_many_events_since_the_last_tick_sweep_every_recall(conn, monkeypatch):
    monkeypatch.setattr(nanny, "RECALL_EVENTS", 2)
    _cited(conn, "a")
    make_task(conn, "e")
    _tick(conn)
    _tick(conn)
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    for n in range(3):
        notes.add(conn, "e", content=f"elsewhere {n}")
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps] == [None]
    _same_as_full(conn, report)


def _cited_related(conn, task_id):
    """A cited recall with a related-notes section: any write can move it."""
    make_task(conn, task_id, title=f"task {task_id} pool")
    _cite(conn, task_id, related=2)


def _stale(report):
    return sorted(item["subjects"][0] for item in report["findings"]["new"] if item["kind"] == "recall_stale")


def test_a_recall_whose_own_task_changed_is_stale_on_that_tick_ahead_of_the_queue(conn, monkeypatch):
    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    for task_id in ("w1", "w2", "w3", "w4"):
        _cited_related(conn, task_id)
    make_task(conn, "e")
    _tick(conn)
    _tick(conn)
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    notes.add(conn, "e", content="elsewhere")  # every related recall queues for its turn
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps] == [["w1"]]
    assert sense.last_watermark(conn)["recall"]["pending"] == ["w2", "w3", "w4"]
    notes.add(conn, "w4", content="w4 moved")  # w4's own task: re-checked now, not in its turn
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps][1:] == [["w2", "w4"]]
    assert _stale(report) == ["w4"]
    # w1, checked before that write, queues again behind w3 (w2 and w4 were checked after it)
    assert sense.last_watermark(conn)["recall"]["pending"] == ["w3", "w1"]
    for turn in (["w3"], ["w1"]):
        report = _tick(conn)
        assert [call[1].get("tasks") for call in sweeps][-1] == turn
    _same_as_full(conn, report)
    report = _tick(conn)  # the queue is empty: an idle tick rebuilds nothing
    assert len(sweeps) == 4 and sense.last_watermark(conn)["recall"]["pending"] == []
    _same_as_full(conn, report)


def test_a_deferring_tick_rechecks_only_the_recalls_the_burst_touched_and_the_next_tick_takes_the_turns(
        conn, monkeypatch):
    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    monkeypatch.setattr(nanny, "DEFER_EVENTS", 4)
    for task_id in ("w1", "w2", "w3", "w4"):
        _cited_related(conn, task_id)
    make_task(conn, "e", title="task e pool")
    _tick(conn)
    _tick(conn)
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    for n in range(4):  # a burst: notes every related section can pick up
        notes.add(conn, "e", content=f"pool task pool note {n}")
    notes.add(conn, "w4", content="w4 moved")  # and w4's own task
    report = _tick(conn)
    assert report["sweep"]["slice"] == nanny.DEFERRED
    # only w4, whose own inputs the burst touched, is rebuilt; the queue's front waits a tick
    assert [call[1].get("tasks") for call in sweeps] == [["w4"]]
    assert _stale(report) == ["w4"]
    assert sense.last_watermark(conn)["recall"]["pending"] == ["w1", "w2", "w3"]
    report = _tick(conn)  # the next tick runs its slice and the queue's turn
    assert report["sweep"]["slice"] != nanny.DEFERRED
    assert [call[1].get("tasks") for call in sweeps][1:] == [["w1"]]
    for turn in (["w2"], ["w3"]):
        report = _tick(conn)
        assert [call[1].get("tasks") for call in sweeps][-1] == turn
    assert sense.last_watermark(conn)["recall"]["pending"] == []
    _same_as_full(conn, report)


def test_a_recall_whose_related_section_moved_is_found_within_its_turn(conn, monkeypatch):
    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    for task_id in ("w1", "w2", "w3"):
        _cited_related(conn, task_id)
    make_task(conn, "e", title="task e pool")
    _tick(conn)
    _tick(conn)
    for n in range(3):  # notes on another task that every related section can pick up
        notes.add(conn, "e", content=f"pool task pool note {n}")
    clock.advance(-60)
    full = sense.sense(conn)
    clock.advance(60)
    moved = sorted(item["subjects"][0] for item in full["findings"] if item["kind"] == "recall_stale")
    assert moved  # the writes moved related sections
    found, reports = set(), []
    for _ in range(3):  # ⌈3 queued recalls / 1 a tick⌉
        reports.append(_tick(conn))
        found |= set(_stale(reports[-1]))
    assert sorted(found) == moved
    _same_as_full(conn, reports[-1])


def test_a_lifetime_added_by_the_writes_since_moves_the_next_end(conn, monkeypatch):
    _cited(conn, "a")
    make_task(conn, "b")
    _tick(conn)
    _tick(conn)
    assert sense.last_watermark(conn)["recall"]["next_end"] is None
    note = notes.add(conn, "b", content="short lived", ttl_hours=1)
    _tick(conn)
    end = sense.last_watermark(conn)["recall"]["next_end"]
    assert end == conn.execute("SELECT expires_at FROM notes WHERE task_id = 'b'").fetchone()[0] and note
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    clock.advance(3600)
    report = _tick(conn)
    assert sweeps == []  # the lifetime ended on b, which no cited recall shows
    assert sense.last_watermark(conn)["recall"]["next_end"] is None
    _same_as_full(conn, report)


def test_the_quiet_entries_are_kept_compact_and_anything_misaligned_is_dropped():
    quiet = {"a": ["2026-01-01T01:00:00Z", 50], "c": [None, 70]}
    packed = nanny._packed(quiet, ["a", "b", "c"])
    assert packed == {"checked_ns": 50, "until": ["2026-01-01T01:00:00Z", "", None]}
    assert nanny._unpacked(packed, ["a", "b", "c"]) == {"a": ["2026-01-01T01:00:00Z", 50], "c": [None, 50]}
    assert nanny._unpacked(packed, ["a", "b"]) == {} and nanny._unpacked(["x"], ["a"]) == {}
    # a malformed check time or horizon is no entry at all: those recalls are rebuilt on their turn
    assert nanny._quiet(nanny._unpacked({"checked_ns": "x", "until": [None]}, ["a"]), ["a"], "2026") == {}
    assert nanny._quiet({"a": [5, 1], "b": [None, True]}, ["a", "b"], "2026") == {}
    assert nanny._quiet({"a": ["2025-01-01T00:00:00Z", 1]}, ["a"], "2026-01-01T00:00:00Z") == {}  # passed


def test_writes_elsewhere_keep_a_receipt_recall_whose_inputs_they_did_not_touch(conn, monkeypatch):
    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    monkeypatch.setattr(nanny, "RECALL_FILE_SLACK_NS", 0)  # the file was written just before the check
    _cited(conn, "a", receipt=True)  # no related section: only its own rows and files move it
    make_task(conn, "e")
    _tick(conn)
    assert sense.last_watermark(conn)["recall"]["volatile"] == ["a"]
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    for n in range(3):
        notes.add(conn, "e", content=f"elsewhere {n}")  # touches nothing a's recall packs
        report = _tick(conn)
        _same_as_full(conn, report)
    assert sweeps == []  # a's turn came after each write: its check still held, nothing rebuilt
    assert sense.last_watermark(conn)["recall"]["quiet"]["until"] == [None]


def test_a_write_to_a_receipt_recalls_own_task_still_rebuilds_it(conn, monkeypatch):
    from mindos.work import graph

    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    monkeypatch.setattr(nanny, "RECALL_FILE_SLACK_NS", 0)
    _cited(conn, "a", receipt=True)
    make_task(conn, "p")
    make_task(conn, "e")
    _tick(conn)
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    notes.add(conn, "e", content="elsewhere")
    _tick(conn)
    assert sweeps == []
    notes.add(conn, "a", content="a moved")  # its own task: the check is void, rebuilt and stale
    report = _tick(conn)
    assert [call[1]["tasks"] for call in sweeps] == [["a"]]
    assert _stale(report) == ["a"]
    _same_as_full(conn, report)
    graph.add_dependency(conn, "a", "p")  # a new prerequisite edge: rebuilt again, found stale again
    report = _tick(conn)
    assert [call[1]["tasks"] for call in sweeps][1:] == [["a"]]
    _same_as_full(conn, report)
    # the rebuild's check stands again: a later write elsewhere rebuilds nothing
    notes.add(conn, "e", content="elsewhere again")
    _tick(conn)
    assert len(sweeps) == 2


def test_a_tick_after_writes_reads_the_cited_recalls_once_for_the_bounds_and_the_rechecks(conn, monkeypatch):
    from mindos.work import leases

    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    _cited(conn, "a")
    _cited(conn, "b", rerank=True, note="pool note for b")
    _cited_related(conn, "w")
    _tick(conn)
    _tick(conn)
    reads = _count_calls(monkeypatch, recall, "cited_events")
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    leases.claim(conn, "a", "codex")  # a's own recall moves; b's and w's queue
    report = _tick(conn)
    assert [call[1]["tasks"] for call in sweeps] == [["a", "b"]]
    assert len(reads) == 1  # recall.affected's read, shared with the re-check
    assert _stale(report) == ["a"]
    for n in range(2):  # the queue's re-checks, with no writes since: one read a tick at most
        report = _tick(conn)
        assert len(reads) <= 2 + n
    assert len(sweeps) == 2
    _same_as_full(conn, report)


def test_the_comms_floor_audits_only_the_entity_types_a_tick_passes_over_and_no_pack_reads_its_tables():
    import pathlib
    import re

    root = pathlib.Path(nanny.__file__).parents[1]
    audited, calls = set(), 0
    for path in (root / "comms").glob("*.py"):
        text = path.read_text()
        calls += text.count("append_event(")
        found = re.findall(r'append_event\((?:self\.)?conn, "([a-z_]+)"', text)
        audited.update(found)
        calls -= len(found)
    assert calls == 0  # every comms event names its entity type where this test can read it
    assert audited == set(nanny.COMMS_ENTITIES) and set(nanny.COMMS_ENTITIES) <= set(nanny.NO_TASK_ROWS)
    schema = (root.parent / "schema.sql").read_text()
    tables = [name for name in re.findall(r"CREATE TABLE (\w+)", schema) if name.startswith(("mood", "botmail"))]
    assert len(tables) > 10
    pattern = re.compile(r"\b(" + "|".join(tables) + r")\b")
    for floor in ("context", "memory", "work"):  # what builds task rows, packs and recalls
        for path in (root / floor).glob("*.py"):
            assert not pattern.search(path.read_text()), path


def test_chat_between_ticks_rebuilds_no_recall_and_recounts_no_overdue_task(conn, monkeypatch):
    from mindos.comms import moods, posts

    make_task(conn, "t-late", due_at=clock.shift(clock.now_iso(), -60))
    _cited(conn, "a")
    _cited_related(conn, "w")  # even one any write can move
    moods.create(conn, "infra", title="Infra room")
    _tick(conn)
    _tick(conn)
    _not_recount_turn(conn)
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    calls = _recounts(monkeypatch)
    posts.add(conn, "infra", "codex", "deploy went out, pool task looks warm", via="terminal")
    report = _tick(conn)
    assert sweeps == [] and calls() == []
    assert sense.last_watermark(conn)["recall"]["pending"] == []
    _same_as_full(conn, report)


def _retain_a_memory(conn, monkeypatch, tmp_path):
    from mindos.memory import memories

    memories.retain(conn, "pool tasks warm up before noon")
    return "memory_retained"


def _ingest_a_session(conn, monkeypatch, tmp_path):
    import os

    from mindos.memory import sessions

    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(os.path.dirname(__file__)), "memory"))
    import sessionkit

    sessionkit.write(str(tmp_path / "misc" / "s.jsonl"),
                     sessionkit.generic_lines([("user", "warm the pool tasks"), ("assistant", "warmed")]))
    sessions.ingest(conn, "claude-code", str(tmp_path), apply=True)
    return "session_ingested"


@pytest.mark.parametrize("write", [_retain_a_memory, _ingest_a_session])
def test_a_row_only_related_sections_pack_queues_the_related_recalls_and_rebuilds_no_other(conn, monkeypatch,
                                                                                         tmp_path, write):
    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    for task_id in ("w1", "w2"):
        _cited_related(conn, task_id)
    _cited(conn, "a")
    _tick(conn)
    _tick(conn)
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    action = write(conn, monkeypatch, tmp_path)
    assert conn.execute("SELECT action FROM audit_events ORDER BY id DESC LIMIT 1").fetchone()[0] == action
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps] == [["w1"]]
    assert sense.last_watermark(conn)["recall"]["pending"] == ["w2"]
    _same_as_full(conn, report)


def test_a_prime_a_morning_brief_or_a_refused_input_between_ticks_rebuilds_no_recall_and_recounts_nothing(
        conn, monkeypatch):
    from mindos.autonomy import morning
    from mindos.context import prime

    make_task(conn, "t-late", due_at=clock.shift(clock.now_iso(), -60))
    _cited(conn, "a")
    _cited_related(conn, "w")
    _tick(conn)
    _tick(conn)
    _not_recount_turn(conn)
    prime.prime(conn, "codex")  # a session starts: its pack is read and audited
    morning.brief(conn, mark=True)
    with db.write(conn):  # what the command line records when an input looks like a credential
        ledger.append_event(conn, "input", "--owner", "secret_blocked", {"fields": ["--owner"], "kinds": ["token"]})
    actions = [row[0] for row in conn.execute("SELECT action FROM audit_events ORDER BY id DESC LIMIT 3")]
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")  # (the brief reads the overdue tasks itself)
    calls = _recounts(monkeypatch)
    assert actions == ["secret_blocked", "morning_brief", "context_primed"]
    report = _tick(conn)
    assert sweeps == [] and calls() == []
    assert sense.last_watermark(conn)["recall"]["pending"] == []
    _same_as_full(conn, report)


def test_a_heartbeat_rechecks_the_recalls_of_its_task_and_queues_no_related_one(conn, monkeypatch):
    from mindos.work import graph, leases

    monkeypatch.setattr(nanny, "RECALL_SLICE", 1)
    for task_id in ("w1", "w2"):
        _cited_related(conn, task_id)
    make_task(conn, "e", title="task e pool")
    make_task(conn, "c", title="task c pool")
    graph.add_dependency(conn, "c", "e")
    _cite(conn, "c")  # an edge to e: its recall may show e's lease
    leases.claim(conn, "e", "codex")
    _tick(conn)
    _tick(conn)
    sweeps = _count_calls(monkeypatch, recall, "stale_sweep")
    clock.advance(300)
    leases.heartbeat(conn, "e", "codex", note="still on it")
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps] == [["c"]]  # and no related recall queued
    assert sense.last_watermark(conn)["recall"]["pending"] == []
    _same_as_full(conn, report)
    leases.heartbeat(conn, "e", "codex", note="still on it")
    notes.add(conn, "e", content="pool task pool note")  # a note any related section can pick up
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps][1:] == [["c", "w1"]]
    assert sense.last_watermark(conn)["recall"]["pending"] == ["w2"]  # its turn is the next tick's
    report = _tick(conn)
    assert [call[1].get("tasks") for call in sweeps][2:] == [["w2"]]
    _same_as_full(conn, report)
