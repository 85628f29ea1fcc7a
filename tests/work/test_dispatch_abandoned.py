"""Dispatch (``next``) after claims that were never completed: their leases expire, the task
stays ``claimed``, and the front of the queue moves on past rows of worse tiers.

What is pinned here: an abandoned claim is not handed out again by ``next`` (only a claim or
a recovery takes it back), its dependents stay blocked on it, urgency still passes through
it, and a dispatch runs the same statements however many claims were abandoned in front of
it (the inheritance probe of each worse-tier row it passes is part of the stream's own
statement, never one query per row).
"""

import pytest

from mindos.core import clock
from mindos.work import dispatch, graph, leases, rows

from test_dispatch import complete, force_path, mk, pick


def abandon(conn, count, owner="ghost"):
    """Claim ``count`` tasks through ``next --claim`` with one-minute leases, then let them expire."""
    claimed = [dispatch.next_task(conn, claim=True, owner=f"{owner}-{n}", minutes=1)["task"]["id"]
               for n in range(count)]
    clock.advance(minutes=5)
    return claimed


def statements(conn, **kw):
    seen = []
    conn.set_trace_callback(seen.append)
    try:
        result = dispatch.next_task(conn, **kw)
    finally:
        conn.set_trace_callback(None)
    return result["task"]["id"] if result["task"] else None, seen


def front(conn, dated, rounds=12):
    """A queue whose tier-0 rows alternate with P3 rows (each with an open P3 dependent chain
    that never reaches P0, so each must be probed and found not to inherit)."""
    for n in range(rounds):
        due = {"due_at": f"2026-09-{n + 1:02d}T00:00:00Z"} if dated else {}
        mk(conn, f"p3-{n:02d}", "P3", **due)
        mk(conn, f"up-{n:02d}", "P3", depends_on=[f"p3-{n:02d}"])
        mk(conn, f"top-{n:02d}", "P2", depends_on=[f"up-{n:02d}"])
        clock.advance(seconds=1)
        due = {"due_at": f"2026-09-{n + 1:02d}T12:00:00Z"} if dated else {}
        mk(conn, f"p0-{n:02d}", "P0", **due)
        clock.advance(seconds=1)


@pytest.mark.parametrize("dated", [True, False], ids=["dated", "undated"])
@pytest.mark.parametrize("kw", [{}, {"explain": True}, {"aging_minutes": 0}], ids=["plain", "explain", "no-aging"])
def test_statements_stay_flat_however_many_claims_were_abandoned(conn, monkeypatch, dated, kw):
    force_path(monkeypatch, "deadline-index")  # the global streams, as on a large fleet
    front(conn, dated)
    first, before = statements(conn, **kw)
    assert first == "p0-00"
    abandon(conn, 10)
    last, after = statements(conn, **kw)
    assert last == "p0-10"  # ten P3 rows (and their probes) now precede the head
    assert len(after) == len(before), (len(before), len(after))
    probe_queries = [sql for sql in after if "d.depends_on = :id" in sql or sql.lstrip().startswith("WITH RECURSIVE up")]
    assert probe_queries == []


def test_claim_statements_stay_flat_too(conn, monkeypatch):
    force_path(monkeypatch, "deadline-index")
    front(conn, True)
    _, before = statements(conn, claim=True, owner="early")
    abandon(conn, 9)
    _, after = statements(conn, claim=True, owner="late")
    assert len(after) == len(before)


@pytest.mark.parametrize("path", ["small-scope", "deadline-index", "range-sorted"])
def test_a_worse_row_ahead_of_the_head_still_inherits_after_abandoned_claims(conn, monkeypatch, path):
    force_path(monkeypatch, path)
    front(conn, True, rounds=6)
    mk(conn, "boss", "P0", depends_on=["up-03"])  # p3-03 inherits P0 through up-03
    abandon(conn, 3)  # p0-00 .. p0-02 abandoned: p3-00 .. p3-03 now precede the head p0-03
    assert pick(conn) == "p3-03"
    result = dispatch.next_task(conn, explain=True)
    assert result["task"]["id"] == "p3-03"
    assert set(dispatch.next_task(conn)["task"]) == set(rows.get(conn, "p3-03"))  # no working column shows
    assert set(result["task"]) == set(rows.get(conn, "p3-03")) | {"effective_priority", "priority_boost",
                                                                   "inherited_via"}
    assert result["task"]["effective_priority"] == "P0"
    assert result["task"]["inherited_via"] == "up-03"
    complete(conn, "p3-03")
    assert pick(conn) == "p0-03"


def test_an_abandoned_claim_is_not_dispatched_again(conn):
    mk(conn, "only", "P1")
    assert abandon(conn, 1) == ["only"]
    assert rows.get(conn, "only")["status"] == "claimed"
    assert pick(conn) is None
    assert dispatch.next_task(conn, claim=True, owner="late")["task"] is None
    assert dispatch.next_task(conn, explain=True) == {"task": None, "considered": 0, "skipped": []}
    # the lease is gone: a direct claim by someone else takes it over
    taken = leases.claim(conn, "only", "late")
    assert taken["lease_owner"] == "late" and taken["lease_epoch"] == 2


def test_dependents_of_an_abandoned_claim_stay_blocked(conn):
    mk(conn, "pre", "P0")
    mk(conn, "after", "P0", depends_on=["pre"])
    mk(conn, "low", "P3")
    assert abandon(conn, 1) == ["pre"]
    assert pick(conn) == "low"
    result = dispatch.next_task(conn, explain=True)
    assert result["skipped"] == [{"task_id": "after", "reason": "unsatisfied_dependencies", "blocked_by": ["pre"]}]
    complete(conn, "pre")
    assert pick(conn) == "after"


@pytest.mark.parametrize("path", ["small-scope", "deadline-index", "range-sorted"])
def test_urgency_passes_through_an_abandoned_claim(conn, monkeypatch, path):
    force_path(monkeypatch, path)
    mk(conn, "mid", "P0", due_at="2026-08-30T00:00:00Z")
    mk(conn, "boss", "P0", depends_on=["mid"])
    mk(conn, "p1", "P1", due_at="2026-09-02T00:00:00Z")
    assert abandon(conn, 1) == ["mid"]
    # work found later that the abandoned claim waits for: it inherits P0 through it
    mk(conn, "leaf", "P3", due_at="2026-09-01T00:00:00Z")
    graph.add_dependency(conn, "mid", "leaf")
    result = dispatch.next_task(conn, explain=True, aging_minutes=0)
    assert result["task"]["id"] == "leaf"
    assert not [key for key in result["task"] if key.startswith("_")]
    assert set(dispatch.next_task(conn, aging_minutes=0)["task"]) == set(rows.get(conn, "leaf"))
    assert result["task"]["effective_priority"] == "P0"
    assert result["task"]["inherited_via"] == "mid"
    assert pick(conn, aging_minutes=0) == "leaf"


def test_urgency_three_levels_up_reaches_a_row_ahead_of_the_head(conn, monkeypatch):
    # the row's stored rank carries urgency from three levels up, through open dependents
    force_path(monkeypatch, "deadline-index")
    front(conn, True, rounds=4)
    mk(conn, "boss", "P0", depends_on=["top-02"])
    abandon(conn, 2)
    assert pick(conn) == "p3-02"
    assert dispatch.next_task(conn, explain=True)["task"]["inherited_via"] == "up-02"
    claimed = dispatch.next_task(conn, claim=True, owner="late")["task"]
    assert claimed["id"] == "p3-02" and not [key for key in claimed if key.startswith("_")]


@pytest.mark.parametrize("path", ["small-scope", "deadline-index", "range-sorted"])
def test_an_inheriting_row_ahead_of_the_head_still_passes_every_dispatch_test(conn, monkeypatch, path):
    # the deadline stream reads a worse-tier row from its index entry and asks for the whole
    # row only once it inherits: the tests on the row itself must still apply then
    force_path(monkeypatch, path)
    front(conn, True, rounds=6)
    mk(conn, "later", "P3", due_at="2026-09-04T06:00:00Z", not_before="2026-12-01T00:00:00Z")
    mk(conn, "boss", "P0", depends_on=["later", "up-04"])
    abandon(conn, 4)  # head p0-04; ahead of it: p3-00 .. p3-04 and the deferred "later"
    assert pick(conn) == "p3-04"
    result = dispatch.next_task(conn, explain=True)
    assert result["task"]["id"] == "p3-04"
    assert {"task_id": "later", "reason": "deferred_until", "not_before": "2026-12-01T00:00:00Z"} in result["skipped"]
    assert pick(conn, project="Trove") == "p3-04"
    assert pick(conn, project="Elsewhere") is None
    clock.set_now("2026-12-01T00:00:00Z")
    assert pick(conn) == "later"  # due before p3-04, and no longer deferred


@pytest.mark.parametrize("budget", [20, 2])
def test_rows_ahead_of_the_head_that_do_not_inherit_never_reach_python(conn, monkeypatch, budget):
    # 28 rows ahead of the head, none inheriting P0: the deadline stream leaves them out in
    # its own statement (their stored rank does not reach the tier), so none is probed, none
    # costs budget, and even a budget of 2 never hands the tier to the walk down
    monkeypatch.setattr(dispatch, "PROBE_BUDGET", budget)
    force_path(monkeypatch, "deadline-index")
    front(conn, True, rounds=30)
    abandon(conn, 28)
    walked, probed = [], []
    real_walk, real_verdict = dispatch._Plan._walked, dispatch._Plan._verdict
    monkeypatch.setattr(dispatch._Plan, "_walked", lambda self, tier, after: walked.append(tier) or real_walk(self, tier, after))
    monkeypatch.setattr(dispatch._Plan, "_verdict",
                        lambda self, row, tier, left: probed.append(row["id"]) or real_verdict(self, row, tier, left))
    assert pick(conn) == "p0-28"
    assert walked == [] and probed == []
    mk(conn, "boss", "P0", depends_on=["up-27"])  # now one of them inherits: it alone is handed over
    assert pick(conn) == "p3-27"
    assert probed == ["p3-27"]


def test_urgency_at_the_top_of_a_long_chain_reaches_a_row_ahead_of_the_head(conn, monkeypatch):
    # a P0 added above a chain of eight open tasks: the row at its foot, ahead of the head,
    # inherits at once (the triggers recount the chain below the new edge)
    force_path(monkeypatch, "deadline-index")
    front(conn, True, rounds=4)
    mk(conn, "long", "P3", due_at="2026-09-03T06:00:00Z")
    chain = ["long"] + [f"link-{n}" for n in range(8)]
    for below, above in zip(chain, chain[1:]):
        mk(conn, above, "P3", depends_on=[below])
    abandon(conn, 3)  # head p0-03; ahead: p3-00 .. p3-03 and "long" (a chain of eight above it)
    assert pick(conn) == "p0-03"
    mk(conn, "boss", "P0", depends_on=["link-7"])
    assert pick(conn) == "long"
    assert dispatch.next_task(conn, explain=True)["task"]["inherited_via"] == "link-0"
