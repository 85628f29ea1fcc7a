"""Dispatch (``next``): ordering, inheritance, aging, scope, skips, claiming, output shape."""

import json
import os
import random
from collections import defaultdict

import pytest
from conftest import script

from mindos.core import clock, validate
from mindos.work import dispatch, leases, lifecycle, rows, tasks
from mindos.errors import InvalidInput, Refused


def mk(conn, task_id, priority="P2", project="Trove", **kw):
    return tasks.create(conn, project=project, title=f"task {task_id}", task_id=task_id, priority=priority, **kw)


def pick(conn, **kw):
    task = dispatch.next_task(conn, **kw)["task"]
    return task["id"] if task else None


def state(conn):
    """Everything a refusal must leave alone: task rows, edges and the audit ledger."""
    rows = [tuple(r) for r in conn.execute("SELECT * FROM tasks ORDER BY seq")]
    edges = [tuple(r) for r in conn.execute("SELECT * FROM dependencies ORDER BY task_id, depends_on")]
    events = [tuple(r) for r in conn.execute("SELECT id, action, payload_json FROM audit_events ORDER BY id")]
    return rows, edges, events


def actions(conn):
    return [r[0] for r in conn.execute("SELECT action FROM audit_events ORDER BY id")]


def write_policy(conn, project, text):
    from mindos.work import policies

    path = policies.policy_path(conn.home, project)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def complete(conn, task_id):
    tasks.update(conn, task_id, status="completed")


def force_path(monkeypatch, path):
    """Pin the access path: a small --project scope sorted from its index, or the global
    indexes with dated rows from the deadline index / sorted from their created_at ranges."""
    if path == "small-scope":
        monkeypatch.setattr(dispatch, "SMALL_SCOPE_FLOOR", 10**6)
        monkeypatch.setattr(dispatch, "SMALL_SCOPE", 10**6)
        return
    monkeypatch.setattr(dispatch, "SMALL_SCOPE_FLOOR", 0)
    monkeypatch.setattr(dispatch, "SMALL_SCOPE", 0)
    monkeypatch.setattr(dispatch._Plan, "_use_deadline_index", lambda self, ranges: path == "deadline-index")


# ---------------------------------------------------------------------------------------
# Ordering rules and tie-breaks


def test_priority_first_then_oldest_created(conn):
    mk(conn, "p2", "P2")
    clock.advance(minutes=1)
    mk(conn, "p1-old", "P1")
    clock.advance(minutes=1)
    mk(conn, "p0", "P0")
    clock.advance(minutes=1)
    mk(conn, "p1-new", "P1")
    order = []
    for _ in range(4):
        task = dispatch.next_task(conn, claim=True, owner="codex")["task"]
        order.append(task["id"])
    assert order == ["p0", "p1-old", "p1-new", "p2"]
    assert dispatch.next_task(conn) == {"task": None}


def test_equal_created_at_breaks_ties_by_insertion_order(conn):
    for task_id in ("m", "b", "x", "a"):
        mk(conn, task_id, "P1")
    assert pick(conn) == "m"
    complete(conn, "m")
    assert pick(conn) == "b"


def test_earliest_deadline_first_and_undated_last_within_a_tier(conn):
    mk(conn, "undated-oldest", "P1")
    clock.advance(minutes=1)
    mk(conn, "due-late", "P1", due_at="2026-09-30T00:00:00Z")
    clock.advance(minutes=1)
    mk(conn, "due-soon", "P1", due_at="2026-08-25T00:00:00+02:00")
    clock.advance(minutes=1)
    mk(conn, "due-soon-newer", "P1", due_at="2026-08-24T22:00:00Z")  # same instant as due-soon
    order = []
    for _ in range(4):
        order.append(dispatch.next_task(conn, claim=True, owner="codex")["task"]["id"])
    assert order == ["due-soon", "due-soon-newer", "due-late", "undated-oldest"]


def test_deadline_never_beats_a_better_priority(conn):
    mk(conn, "p1-overdue", "P1", due_at="2026-08-01T00:00:00Z")
    clock.advance(minutes=1)
    mk(conn, "p0-undated", "P0")
    assert pick(conn) == "p0-undated"


# ---------------------------------------------------------------------------------------
# Aging


def test_aging_promotes_one_level_per_interval_and_fifo_wins_the_tier(conn):
    mk(conn, "old-p3", "P3")
    clock.advance(minutes=1)
    mk(conn, "fresh-p2", "P2")
    clock.advance(minutes=358)  # old-p3 has waited 359 minutes: not yet one level
    assert pick(conn) == "fresh-p2"
    clock.advance(minutes=1)  # 360 minutes: P3 ages into the P2 tier and is older
    result = dispatch.next_task(conn, explain=True)
    assert result["task"]["id"] == "old-p3"
    assert result["task"]["effective_priority"] == "P2"
    assert result["task"]["priority_boost"] == 1
    assert result["task"]["inherited_via"] is None
    assert result["task"]["priority"] == "P3"  # the stored priority is never mutated
    assert rows.get(conn, "old-p3")["priority"] == "P3"


def test_aging_is_capped_at_aging_boost(conn):
    mk(conn, "ancient-p3", "P3")
    clock.advance(days=3)
    mk(conn, "fresh-p0", "P0")
    result = dispatch.next_task(conn, explain=True)
    assert result["task"]["id"] == "fresh-p0"
    assert result["skipped"] == []  # ancient-p3 is in the P1 tier, below the pick: not a skip
    boosted = dispatch.next_task(conn, explain=True, aging_boost=3)
    assert boosted["task"]["id"] == "ancient-p3"
    assert (boosted["task"]["effective_priority"], boosted["task"]["priority_boost"]) == ("P0", 3)
    fast = dispatch.next_task(conn, explain=True, aging_minutes=60 * 24 * 2, aging_boost=3)
    assert fast["task"]["id"] == "fresh-p0"  # 3 days at 2 days per level: one level only


def test_p3_waiting_twelve_hours_dispatches_like_p1(conn):
    mk(conn, "p3", "P3")
    clock.advance(hours=12)
    mk(conn, "p1", "P1")  # fresh: still P1
    result = dispatch.next_task(conn, explain=True)
    assert (result["task"]["id"], result["task"]["effective_priority"]) == ("p3", "P1")
    assert result["task"]["priority_boost"] == 2


def test_aging_minutes_zero_is_strict_static_ordering(conn):
    mk(conn, "old-p3", "P3")
    clock.advance(days=10)
    mk(conn, "p2", "P2")
    assert pick(conn) == "old-p3"  # aged to P1
    assert pick(conn, aging_minutes=0) == "p2"
    assert pick(conn, aging_boost=0) == "p2"
    result = dispatch.next_task(conn, aging_minutes=0, explain=True)
    assert (result["task"]["effective_priority"], result["task"]["priority_boost"]) == ("P2", 0)


# ---------------------------------------------------------------------------------------
# Dependency priority inheritance


def test_inheritance_flows_up_a_chain_to_the_ready_prerequisite(conn):
    mk(conn, "p0", "P0", depends_on=["p2"])  # made first, so it is examined (and skipped) first
    mk(conn, "p2", "P2", depends_on=["p3"])
    mk(conn, "p3", "P3")
    clock.advance(minutes=1)
    mk(conn, "p1-rival", "P1")
    result = dispatch.next_task(conn, explain=True, aging_minutes=0)
    assert result["task"]["id"] == "p3"
    assert result["task"]["effective_priority"] == "P0"
    assert result["task"]["inherited_via"] == "p2"  # p2 passed p0's urgency on (issue 8)
    assert result["task"]["priority_boost"] == 0
    skipped = {s["task_id"]: s for s in result["skipped"]}
    assert skipped["p0"] == {"task_id": "p0", "reason": "unsatisfied_dependencies", "blocked_by": ["p2"]}
    complete(conn, "p3")
    assert dispatch.next_task(conn, explain=True)["task"]["inherited_via"] == "p0"
    assert pick(conn) == "p2"
    complete(conn, "p2")
    assert pick(conn) == "p0"
    complete(conn, "p0")
    assert pick(conn) == "p1-rival"
    assert [rows.get(conn, i)["priority"] for i in ("p3", "p2", "p0")] == ["P3", "P2", "P0"]


def test_inherited_via_names_the_nearest_conferring_dependent(conn):
    mk(conn, "base", "P3")
    mk(conn, "mid", "P2", depends_on=["base"])
    mk(conn, "far-p0", "P0", depends_on=["mid"])
    mk(conn, "near-p0", "P0", depends_on=["base"])
    result = dispatch.next_task(conn, explain=True)
    assert result["task"]["id"] == "base"
    assert result["task"]["inherited_via"] == "near-p0"


def test_terminal_dependents_confer_nothing(conn):
    mk(conn, "p3", "P3")
    mk(conn, "p0-cancelled", "P0", depends_on=["p3"])
    tasks.update(conn, "p0-cancelled", status="cancelled")
    mk(conn, "p2", "P2")
    mk(conn, "mid-failed", "P3", depends_on=["p3"])
    mk(conn, "p0-behind-failed", "P0", depends_on=["mid-failed"])
    tasks.update(conn, "mid-failed", status="failed")  # a terminal node does not relay either
    result = dispatch.next_task(conn, explain=True, aging_minutes=0)
    assert result["task"]["id"] == "p2"
    assert result["skipped"] == [{"task_id": "p0-behind-failed", "reason": "unsatisfied_dependencies",
                                  "blocked_by": ["mid-failed"]}]


def test_open_non_queued_dependents_confer_and_relay(conn):
    mk(conn, "leaf", "P3")
    mk(conn, "parked", "P3", depends_on=["leaf"])
    tasks.update(conn, "parked", status="blocked")
    mk(conn, "urgent", "P0", depends_on=["parked"])
    mk(conn, "p1", "P1")
    result = dispatch.next_task(conn, explain=True, aging_minutes=0)
    assert (result["task"]["id"], result["task"]["inherited_via"]) == ("leaf", "parked")  # parked relays it


def test_aging_and_inheritance_the_better_level_wins(conn):
    mk(conn, "old-p3", "P3")
    mk(conn, "p2-dependent", "P2", depends_on=["old-p3"])
    clock.advance(hours=13)  # old-p3 ages to P1, which beats the P2 it inherits
    mk(conn, "p1", "P1")
    result = dispatch.next_task(conn, explain=True)
    assert result["task"]["id"] == "old-p3"
    assert result["task"]["effective_priority"] == "P1"
    assert result["task"]["priority_boost"] == 2
    assert result["task"]["inherited_via"] is None
    static = dispatch.next_task(conn, explain=True, aging_minutes=0)
    assert static["task"]["id"] == "p1"  # without aging: old-p3 only inherits P2


@pytest.mark.parametrize("path", ["deadline-index", "range-sorted"])
@pytest.mark.parametrize("budget", [dispatch.PROBE_BUDGET, 3, 1])
def test_inheritance_same_answer_whether_probed_or_walked(conn, monkeypatch, budget, path):
    monkeypatch.setattr(dispatch, "PROBE_BUDGET", budget)
    force_path(monkeypatch, path)
    mk(conn, "p1-aged-head", "P1")  # keeps tier 0 non-empty only through inheritance below
    for index in range(6):
        mk(conn, f"leaf{index}", "P3", due_at=f"2026-08-2{index + 2}T00:00:00Z")
    mk(conn, "hub", "P2", depends_on=[f"leaf{i}" for i in range(3, 6)])
    mk(conn, "boss", "P0", depends_on=["hub"])
    assert pick(conn, aging_minutes=0) == "leaf3"
    complete(conn, "leaf3")
    assert pick(conn, aging_minutes=0) == "leaf4"


# ---------------------------------------------------------------------------------------
# Scope: tags (hard filter) and project


def test_tag_scope_is_a_hard_filter(conn):
    mk(conn, "p0-untagged", "P0")
    mk(conn, "p0-other-tag", "P0", tags=["infra"])
    mk(conn, "p3-safe", "P3", tags=["autopilot-safe"])
    mk(conn, "p2-safe-infra", "P2", tags=["autopilot-safe", "infra"])
    assert pick(conn, tags=["autopilot-safe"]) == "p2-safe-infra"
    assert pick(conn, tags=["autopilot-safe", "infra"]) == "p2-safe-infra"
    assert pick(conn, tags=["infra"]) == "p0-other-tag"
    claimed = dispatch.next_task(conn, tags=["autopilot-safe"], claim=True, owner="codex")["task"]
    assert claimed["id"] == "p2-safe-infra"
    assert pick(conn, tags=["autopilot-safe"]) == "p3-safe"
    assert pick(conn, tags=["autopilot-safe", "infra"]) is None  # empty scope dispatches nothing
    assert dispatch.next_task(conn, tags=["client:trove"], explain=True) == {
        "task": None, "considered": 0, "skipped": []}


def test_tag_filter_matches_whole_tags_only(conn):
    mk(conn, "a", "P0", tags=["client:trove-legacy"])
    mk(conn, "b", "P3", tags=["client:trove"])
    assert pick(conn, tags=["client:trove"]) == "b"
    assert pick(conn, tags=["trove"]) is None


@pytest.mark.parametrize("path", ["small-scope", "deadline-index", "range-sorted"])
def test_project_scope(conn, monkeypatch, path):
    force_path(monkeypatch, path)
    mk(conn, "other-p0", "P0", project="Other")
    mk(conn, "trove-p2", "P2", project="Trove")
    clock.advance(minutes=1)
    mk(conn, "trove-p1", "P1", project="Trove", tags=["infra"])
    mk(conn, "trove-p3", "P3", project="Trove", tags=["infra"])
    mk(conn, "trove-p0-dep", "P0", project="Trove", depends_on=["trove-p3"])
    assert pick(conn) == "other-p0"
    assert pick(conn, project="Trove") == "trove-p3"  # inherits P0 from a Trove dependent
    assert pick(conn, project="Trove", tags=["infra"]) == "trove-p3"
    complete(conn, "trove-p3")
    assert pick(conn, project="Trove") == "trove-p0-dep"
    assert pick(conn, project="Trove", tags=["infra"]) == "trove-p1"
    assert pick(conn, project="Nope") is None


def test_urgency_is_inherited_across_projects_but_scope_still_filters(conn):
    mk(conn, "lib-fix", "P3", project="Lib")
    mk(conn, "app-launch", "P0", project="App", depends_on=["lib-fix"])
    mk(conn, "lib-p1", "P1", project="Lib")
    assert pick(conn, project="Lib") == "lib-fix"
    assert pick(conn, project="App") is None


# ---------------------------------------------------------------------------------------
# Skip reasons under --explain


def test_explain_reports_every_skip_with_its_reason(conn):
    mk(conn, "blocked", "P0", depends_on=["prereq", "ghost"])
    mk(conn, "deferred", "P0", not_before="2026-08-22T09:00:00Z")
    mk(conn, "cooling", "P0")
    leases.claim(conn, "cooling", "codex")
    lifecycle.fail(conn, "cooling", "codex", reason="tests red", backoff_base=600)
    cooling = rows.get(conn, "cooling")
    assert cooling["status"] == "queued" and cooling["recover_after"] == "2026-08-21T09:10:00Z"
    mk(conn, "prereq", "P3")  # made last of the P0 tier, so the skips come first
    mk(conn, "ready", "P1")
    result = dispatch.next_task(conn, explain=True)
    assert result["task"]["id"] == "prereq"  # P3, but it inherits P0 from 'blocked'
    assert result["considered"] == 5  # 'ready' ranks below the pick: considered, outranked, not skipped
    assert result["skipped"] == [
        {"task_id": "blocked", "reason": "unsatisfied_dependencies", "blocked_by": ["ghost", "prereq"]},
        {"task_id": "deferred", "reason": "deferred_until", "not_before": "2026-08-22T09:00:00Z"},
        {"task_id": "cooling", "reason": "recovery_backoff", "recover_after": "2026-08-21T09:10:00Z"},
    ]  # same created_at: insertion order
    assert set(result) == {"task", "considered", "skipped"}
    clock.advance(minutes=10)  # the cooldown is over (recover_after <= now dispatches)
    complete(conn, "prereq")
    assert pick(conn) == "cooling"
    clock.set_now("2026-08-22T09:00:00Z")
    assert pick(conn) == "deferred"  # due now, and made before cooling
    leases.claim(conn, "deferred", "codex")
    assert pick(conn) == "cooling"


def test_explain_reports_skips_ranked_below_the_pick(conn):
    """Four queued tasks, two waiting on dependencies: every one is considered and each
    dependency-blocked one is reported with its blocking ids, though the pick ranks first."""
    mk(conn, "t1", "P0")
    mk(conn, "t2", "P1", depends_on=["t1"])
    mk(conn, "t3", "P2")
    mk(conn, "t4", "P3", depends_on=["t2", "t3"])
    result = dispatch.next_task(conn, project="Trove", explain=True)
    assert result["task"]["id"] == "t1"
    assert result["considered"] == 4
    assert result["skipped"] == [
        {"task_id": "t2", "reason": "unsatisfied_dependencies", "blocked_by": ["t1"]},
        {"task_id": "t4", "reason": "unsatisfied_dependencies", "blocked_by": ["t2", "t3"]},
    ]
    assert "truncated" not in result
    before = state(conn)
    claimed = dispatch.next_task(conn, claim=True, owner="codex", explain=True)
    assert claimed["task"]["id"] == "t1" and claimed["considered"] == 4
    assert [s["task_id"] for s in claimed["skipped"]] == ["t2", "t4"]
    assert rows.get(conn, "t3")["lease_owner"] == ""  # walking past the pick claims nothing more
    assert actions(conn) == [a for (_, a, _) in before[2]] + ["claimed"]


def test_cli_explain_reports_the_dependency_waits_of_four_queued_tasks(conn, cli_json):
    mk(conn, "t1", "P1")
    mk(conn, "t2", "P1", depends_on=["t1"])
    mk(conn, "t3", "P1")
    mk(conn, "t4", "P1", depends_on=["t3", "t1"])
    explained = cli_json("autopilot", "next", "--explain")
    assert explained["task"]["id"] == "t1" and explained["considered"] == 4
    assert explained["skipped"] == [
        {"task_id": "t2", "reason": "unsatisfied_dependencies", "blocked_by": ["t1"]},
        {"task_id": "t4", "reason": "unsatisfied_dependencies", "blocked_by": ["t1", "t3"]}]
    assert set(explained) == {"task", "considered", "skipped"}


def test_explain_past_the_pick_is_capped_and_says_so(conn, monkeypatch):
    monkeypatch.setattr(dispatch, "EXPLAIN_LIMIT", 2)
    for number in range(6):
        mk(conn, f"t{number}", "P2", depends_on=["t0"] if number else None)
    result = dispatch.next_task(conn, explain=True)
    assert result["task"]["id"] == "t0"
    assert result["considered"] == 3 and result["truncated"] is True
    assert [s["task_id"] for s in result["skipped"]] == ["t1", "t2"]


def test_explain_with_nothing_dispatchable(conn):
    mk(conn, "t2", "P2", depends_on=["t1"])
    mk(conn, "t1", "P2", depends_on=["t0"])
    mk(conn, "t0", "P2", not_before="2026-09-01T00:00:00Z")
    result = dispatch.next_task(conn, explain=True)
    assert result["task"] is None
    assert result["considered"] == 3
    assert [(s["task_id"], s["reason"]) for s in result["skipped"]] == [
        ("t2", "unsatisfied_dependencies"), ("t1", "unsatisfied_dependencies"), ("t0", "deferred_until")]


def test_queued_task_under_a_live_lease_is_not_dispatched(conn):
    mk(conn, "held", "P0")
    leases.claim(conn, "held", "hermes")
    tasks.update(conn, "held", status="queued")  # an odd state: queued but still leased
    mk(conn, "free", "P2")
    result = dispatch.next_task(conn, explain=True)
    assert result["task"]["id"] == "free"
    assert result["skipped"] == [{"task_id": "held", "reason": "live_lease", "lease_owner": "hermes",
                                  "lease_expires_at": "2026-08-21T09:30:00Z"}]
    clock.advance(minutes=31)  # expired: claimable again, and the new epoch fences the old holder
    claimed = dispatch.next_task(conn, claim=True, owner="codex")["task"]
    assert (claimed["id"], claimed["lease_owner"], claimed["lease_epoch"]) == ("held", "codex", 2)


def test_policy_missing_tag_is_skipped_even_without_claim(conn):
    write_policy(conn, "client-trove", "dispatch_requires_tag: client:trove\n")
    mk(conn, "untagged", "P0", project="client-trove")
    mk(conn, "tagged", "P1", project="client-trove", tags=["client:trove"])
    mk(conn, "elsewhere", "P2", project="Other")
    result = dispatch.next_task(conn, explain=True)
    assert result["task"]["id"] == "tagged"
    assert result["skipped"] == [{"task_id": "untagged", "reason": "policy_missing_tag",
                                  "required_tag": "client:trove"}]
    claimed = dispatch.next_task(conn, claim=True, owner="codex")["task"]
    assert claimed["id"] == "tagged"
    assert pick(conn) == "elsewhere"
    assert "claim_refused_policy" not in actions(conn)  # a dispatch skip is not a refusal
    os.remove(os.path.join(conn.home, "policies", "client-trove.yaml"))
    assert pick(conn) == "untagged"  # deleting the policy reopens dispatch immediately


def test_policy_wip_cap_steers_the_claim_elsewhere(conn):
    write_policy(conn, "Busy", "max_wip_per_owner: 1\n")
    mk(conn, "busy-1", "P0", project="Busy")
    mk(conn, "busy-2", "P0", project="Busy")
    mk(conn, "calm", "P3", project="Calm")
    assert dispatch.next_task(conn, claim=True, owner="codex")["task"]["id"] == "busy-1"
    result = dispatch.next_task(conn, claim=True, owner="codex", explain=True)
    assert result["task"]["id"] == "calm"
    assert result["skipped"] == [{"task_id": "busy-2", "reason": "policy_wip_cap", "held": ["busy-1"],
                                  "max_wip_per_owner": 1}]
    assert dispatch.next_task(conn, claim=True, owner="hermes")["task"]["id"] == "busy-2"  # another owner
    assert "claim_refused_policy" not in actions(conn)
    preview = dispatch.next_task(conn, owner="codex", explain=True)
    assert preview == {"task": None, "considered": 0, "skipped": []}


def test_malformed_policy_fails_closed_for_its_project_only(conn):
    write_policy(conn, "Broken", "dispatch_requires_tag: [a, b]\n")
    mk(conn, "broken-p0", "P0", project="Broken")
    mk(conn, "fine-p3", "P3", project="Fine")
    result = dispatch.next_task(conn, explain=True, claim=True, owner="codex")
    assert result["task"]["id"] == "fine-p3"
    assert result["skipped"][0]["task_id"] == "broken-p0"
    assert result["skipped"][0]["reason"] == "policy_invalid"
    assert "invalid policy" in result["skipped"][0]["error"]
    assert rows.get(conn, "broken-p0")["status"] == "queued"


def test_claim_skips_seam_conflicts_and_takes_the_next_best(conn):
    mk(conn, "holder", "P0")
    tasks.update(conn, "holder", worktree="/srv/wt", branch="feature-x")
    leases.claim(conn, "holder", "hermes")
    mk(conn, "same-worktree", "P0")
    tasks.update(conn, "same-worktree", worktree="/srv/wt")
    mk(conn, "same-branch", "P0")
    tasks.update(conn, "same-branch", branch="feature-x")
    mk(conn, "other-project-branch", "P1", project="Elsewhere")
    tasks.update(conn, "other-project-branch", branch="feature-x")  # another repository: no seam
    mk(conn, "free", "P2")
    before = actions(conn)
    result = dispatch.next_task(conn, claim=True, owner="codex", explain=True)
    assert result["task"]["id"] == "other-project-branch"
    assert result["skipped"] == [  # same created_at: insertion order
        {"task_id": "same-worktree", "reason": "seam_conflict",
         "holders": [{"task_id": "holder", "kind": "worktree", "value": "/srv/wt", "owner": "hermes"}]},
        {"task_id": "same-branch", "reason": "seam_conflict",
         "holders": [{"task_id": "holder", "kind": "branch", "value": "feature-x", "owner": "hermes"}]},
    ]
    assert actions(conn) == before + ["claimed"]  # no claim_refused_seam left behind
    assert pick(conn) == "same-worktree"  # without --claim seams are not checked (claim-time guard)
    assert dispatch.next_task(conn, claim=True, owner="codex")["task"]["id"] == "free"
    assert rows.get(conn, "same-branch")["lease_owner"] == ""


def test_unblock_scheduling_is_a_tie_break_only(conn):
    mk(conn, "leaf", "P1")
    clock.advance(minutes=1)
    mk(conn, "hub", "P1")
    for index in range(3):
        mk(conn, f"dep{index}", "P2", depends_on=["hub"])
    tasks.update(conn, "dep2", status="running")  # not queued: does not count
    assert pick(conn) == "leaf"
    result = dispatch.next_task(conn, prefer_unblocking=True)
    assert result["task"]["id"] == "hub"
    assert result["task"]["unblocks"] == 2
    assert set(result) == {"task"}
    explained = dispatch.next_task(conn, prefer_unblocking=True, explain=True)
    assert explained["unblock_scheduling"] is True
    assert explained["task"]["unblocks"] == 2
    mk(conn, "p0-leaf", "P0")
    assert pick(conn, prefer_unblocking=True) == "p0-leaf"  # priority is never overridden
    complete(conn, "p0-leaf")
    mk(conn, "dated-leaf", "P1", due_at="2026-12-01T00:00:00Z")
    assert pick(conn, prefer_unblocking=True) == "dated-leaf"  # nor are deadlines
    dated = dispatch.next_task(conn, prefer_unblocking=True)["task"]
    assert (dated["id"], dated["unblocks"]) == ("dated-leaf", 0)


def test_unblocks_breaks_ties_between_equal_deadlines(conn):
    mk(conn, "a-leaf", "P1", due_at="2026-09-01T00:00:00Z")
    mk(conn, "b-hub", "P1", due_at="2026-09-01T00:00:00Z")
    mk(conn, "waiter", "P3", depends_on=["b-hub"])
    assert pick(conn) == "a-leaf"
    assert pick(conn, prefer_unblocking=True) == "b-hub"


# ---------------------------------------------------------------------------------------
# Claiming


def test_claim_leases_atomically_and_reports_the_epoch(conn):
    mk(conn, "t1", "P1")
    result = dispatch.next_task(conn, claim=True, owner="codex", minutes=45)
    task = result["task"]
    assert set(result) == {"task"}
    assert task["status"] == "claimed"
    assert (task["lease_owner"], task["lease_epoch"]) == ("codex", 1)
    assert task["lease_expires_at"] == "2026-08-21T09:45:00Z"
    row = conn.execute("SELECT payload_json FROM audit_events WHERE action = 'claimed'").fetchone()
    payload = json.loads(row[0])
    assert payload["via"] == "next" and payload["owner"] == "codex" and payload["lease_epoch"] == 1
    assert dispatch.next_task(conn, claim=True, owner="hermes") == {"task": None}
    leases.release(conn, "t1", "codex", epoch=1)
    again = dispatch.next_task(conn, claim=True, owner="hermes")["task"]
    assert (again["lease_owner"], again["lease_epoch"]) == ("hermes", 2)


def test_claim_clears_a_finished_cooldown(conn):
    mk(conn, "t1", "P1")
    leases.claim(conn, "t1", "codex")
    lifecycle.fail(conn, "t1", "codex", reason="flaky", backoff_base=60)
    assert pick(conn) is None
    clock.advance(seconds=60)
    task = dispatch.next_task(conn, claim=True, owner="codex")["task"]
    assert task["id"] == "t1" and task["recover_after"] is None


def test_per_owner_cap_refuses_without_touching_anything(conn, monkeypatch):
    mk(conn, "a", "P1")
    mk(conn, "b", "P1")
    dispatch.next_task(conn, claim=True, owner="codex", max_active=1)
    before = state(conn)
    with pytest.raises(Refused, match=r"^owner 'codex' at lease capacity \(1/1\)$"):
        dispatch.next_task(conn, claim=True, owner="codex", max_active=1)
    assert state(conn) == before
    monkeypatch.setenv("AUTOPILOT_MAX_ACTIVE_PER_OWNER", "1")
    with pytest.raises(Refused, match="at lease capacity"):
        dispatch.next_task(conn, claim=True, owner="codex")
    assert dispatch.next_task(conn, claim=True, owner="codex", max_active=2)["task"]["id"] == "b"
    assert dispatch.next_task(conn, claim=True, owner="hermes")["task"] is None
    assert state(conn)[2][-1][1] == "claimed"


def test_a_refused_acquisition_moves_on_to_the_next_candidate(conn, monkeypatch):
    mk(conn, "first", "P0")
    mk(conn, "second", "P1")
    real = leases.acquire

    def flaky(conn, task, owner, **kw):
        if task["id"] == "first":  # as if another writer moved the row after it was read
            from mindos.errors import Conflict

            raise Conflict("lease changed since check: task 'first' was modified by another writer")
        return real(conn, task, owner, **kw)

    monkeypatch.setattr(leases, "acquire", flaky)
    result = dispatch.next_task(conn, claim=True, owner="codex", explain=True)
    assert result["task"]["id"] == "second"
    assert result["skipped"] == [{"task_id": "first", "reason": "claim_refused",
                                  "error": "lease changed since check: task 'first' was modified by another writer"}]
    assert rows.get(conn, "first")["lease_owner"] == ""


def test_next_without_claim_writes_nothing(conn):
    mk(conn, "t1", "P0")
    before = state(conn)
    dispatch.next_task(conn, explain=True, prefer_unblocking=True)
    assert state(conn) == before


# ---------------------------------------------------------------------------------------
# Bad input: refused before anything happens


@pytest.mark.parametrize("kwargs, message", [
    ({"claim": True}, "--claim requires --owner"),
    ({"project": ""}, "invalid --project"),
    ({"project": "../etc"}, "invalid --project"),
    ({"project": "x' OR 1=1 --"}, "invalid --project"),
    ({"project": "p" * 65}, "invalid --project"),
    ({"tags": ["Autopilot-Safe"]}, "invalid --tag"),
    ({"tags": ['a"] OR 1 --']}, "invalid --tag"),
    ({"tags": [""]}, "invalid --tag"),
    ({"owner": "bad owner", "claim": True}, "invalid --owner"),
    ({"owner": "x" * 100, "claim": True}, "invalid --owner"),
    ({"claim": True, "owner": "codex", "minutes": 0}, "invalid --minutes"),
    ({"claim": True, "owner": "codex", "minutes": 10**9}, "invalid --minutes"),
    ({"claim": True, "owner": "codex", "max_active": -1}, "invalid --max-active"),
    ({"aging_minutes": -1}, "invalid --aging-minutes"),
    ({"aging_boost": 4}, "invalid --aging-boost"),
    ({"aging_boost": -1}, "invalid --aging-boost"),
])
def test_bad_input_is_invalid_and_changes_nothing(conn, kwargs, message):
    mk(conn, "t1", "P1")
    before = state(conn)
    with pytest.raises(InvalidInput, match=message):
        dispatch.next_task(conn, **kwargs)
    assert state(conn) == before


def test_malformed_env_cap_is_refused(conn, monkeypatch):
    mk(conn, "t1", "P1")
    monkeypatch.setenv("AUTOPILOT_MAX_ACTIVE_PER_OWNER", "lots")
    before = state(conn)
    with pytest.raises(InvalidInput, match="AUTOPILOT_MAX_ACTIVE_PER_OWNER"):
        dispatch.next_task(conn, claim=True, owner="codex")
    assert state(conn) == before


def test_a_read_only_pick_reads_no_lease_setting(conn, monkeypatch):
    """A pick that takes no lease reads neither the lease window nor the owner's cap (the
    environment's malformed cap refuses claims only); given a window or a cap, it still checks
    them."""
    mk(conn, "t1", "P1")
    monkeypatch.setenv("AUTOPILOT_MAX_ACTIVE_PER_OWNER", "lots")
    assert dispatch.next_task(conn, owner="codex")["task"]["id"] == "t1"
    with pytest.raises(InvalidInput, match="AUTOPILOT_MAX_ACTIVE_PER_OWNER"):
        dispatch.next_task(conn, owner="codex", minutes=30)
    monkeypatch.delenv("AUTOPILOT_MAX_ACTIVE_PER_OWNER")
    with pytest.raises(InvalidInput, match="--minutes"):
        dispatch.next_task(conn, minutes=0)
    with pytest.raises(InvalidInput, match="--max-active"):
        dispatch.next_task(conn, max_active=-1)


# ---------------------------------------------------------------------------------------
# The front door


def test_cli_shape_without_flags(conn, cli, cli_json):
    mk(conn, "t1", "P1", tags=["infra"])
    data = cli_json("autopilot", "next")
    assert set(data) == {"task"}
    assert data["task"] == rows.get(conn, "t1")  # exactly the task object, no dispatch extras
    assert cli_json("autopilot", "next", "--tag", "docs") == {"task": None}
    rc, out, err = cli("autopilot", "next", "--project", "Trove", "--explain")
    assert (rc, err) == (0, "")
    explained = json.loads(out)
    assert set(explained) == {"task", "considered", "skipped"}
    assert explained["task"]["effective_priority"] == "P1"


def test_cli_claim_and_flags(conn, cli_json):
    mk(conn, "hub", "P2")
    mk(conn, "leaf", "P2")
    mk(conn, "w1", "P3", depends_on=["hub"])
    data = cli_json("autopilot", "next", "--claim", "--owner", "codex", "--minutes", "15", "--prefer-unblocking",
                    "--aging-minutes", "120", "--aging-boost", "3", "--max-active", "4")
    assert data["task"]["id"] == "hub"
    assert data["task"]["unblocks"] == 1
    assert (data["task"]["lease_epoch"], data["task"]["lease_expires_at"]) == (1, "2026-08-21T09:15:00Z")


@pytest.mark.parametrize("argv, message", [
    (["next", "--claim"], "--claim requires --owner"),
    (["next", "--tag", "NOT OK"], "invalid --tag"),
    (["next", "--project", "a/b"], "invalid --project"),
    (["next", "--aging-minutes", "soon"], "expected an integer in ASCII digits"),
    (["next", "--aging-boost", "9"], "invalid --aging-boost"),
    (["next", "--claim", "--owner", "codex", "--minutes", "-5"], "invalid --minutes"),
])
def test_cli_bad_input_exits_2_with_one_line(conn, cli, argv, message):
    mk(conn, "t1")
    before = state(conn)
    rc, out, err = cli("autopilot", *argv)
    assert rc == 2
    assert out == ""
    assert message in err and err.count("\n") == 1
    assert "Traceback" not in err
    assert state(conn) == before


def test_cli_capacity_refusal_exits_1(conn, cli):
    mk(conn, "a")
    mk(conn, "b")
    dispatch.next_task(conn, claim=True, owner="codex")
    rc, out, err = cli("autopilot", "next", "--claim", "--owner", "codex", "--max-active", "1")
    assert (rc, out) == (1, "")
    assert err == "owner 'codex' at lease capacity (1/1)\n"


def test_cli_help_has_an_example(cli):
    rc, out, err = cli("autopilot", "next", "--help")
    assert rc == 0
    assert "Example:" in out and "autopilot.py next" in out
    for flag in ("--project", "--tag", "--claim", "--owner", "--minutes", "--max-active", "--explain",
                 "--prefer-unblocking", "--aging-minutes", "--aging-boost"):
        assert flag in out


def test_subprocess_next_claim(conn, home):
    mk(conn, "t1", "P1")
    proc = script("autopilot.py", "next", "--claim", "--owner", "codex", home=home,
                  env={"MINDOS_NOW": "2026-08-21T10:00:00Z"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    task = json.loads(proc.stdout)["task"]
    assert (task["id"], task["lease_epoch"], task["lease_expires_at"]) == ("t1", 1, "2026-08-21T10:30:00Z")
    empty = script("autopilot.py", "next", home=home)
    assert (empty.returncode, json.loads(empty.stdout), empty.stderr) == (0, {"task": None}, "")


# ---------------------------------------------------------------------------------------
# Differential check against a brute-force model of the whole rule set


def reference(conn, now, *, project=None, tags=(), aging_minutes=360, aging_boost=2, prefer=False,
              annotations=None):
    """Every in-scope queued task in dispatch order as ``[(id, eligible)]``, computed naively."""
    by_id = {r["id"]: rows.row_to_task(r) for r in conn.execute("SELECT * FROM tasks")}
    seq = dict(conn.execute("SELECT id, seq FROM tasks").fetchall())
    deps, dependents = defaultdict(list), defaultdict(list)
    for task_id, prereq in conn.execute("SELECT task_id, depends_on FROM dependencies"):
        deps[task_id].append(prereq)
        dependents[prereq].append(task_id)

    def is_open(task_id):
        return by_id[task_id]["status"] not in validate.TERMINAL_STATUSES

    memo = {}

    def inherited(task_id):
        if task_id not in memo:
            best = int(by_id[task_id]["priority"][1])
            for dependent in dependents[task_id]:
                if is_open(dependent):
                    best = min(best, inherited(dependent))
            memo[task_id] = best
        return memo[task_id]

    def aged(task):
        if not aging_minutes or not aging_boost:
            return int(task["priority"][1])
        waited = clock.seconds_between(task["created_at"], now)
        return max(0, int(task["priority"][1]) - min(aging_boost, waited // (aging_minutes * 60)))

    def eligible(task):
        if any(by_id.get(p, {}).get("status") != "completed" for p in deps[task["id"]]):
            return False
        if task["not_before"] and task["not_before"] > now:
            return False
        if task["recover_after"] and task["recover_after"] > now:
            return False
        return not (task["lease_owner"] and task["lease_expires_at"] and task["lease_expires_at"] > now)

    scope = [t for t in by_id.values() if t["status"] == "queued" and (project is None or t["project"] == project)
             and all(tag in t["tags"] for tag in tags)]

    def key(task):
        unblocks = sum(1 for d in dependents[task["id"]] if by_id[d]["status"] == "queued")
        return (min(inherited(task["id"]), aged(task)), task["due_at"] is None, task["due_at"] or "",
                -unblocks if prefer else 0, task["created_at"], seq[task["id"]])

    def nearest_source(task_id, tier):
        """The direct dependent on a shortest route to a source of ``tier`` (smallest id on ties)."""
        level, seen, via = [task_id], {task_id}, {}
        while level:
            reached = {}
            for t in level:
                for d in dependents[t]:
                    if is_open(d) and d not in seen:
                        route = d if t == task_id else via[t]
                        reached[d] = min(route, reached.get(d, route))
            found = sorted(reached[d] for d in reached if int(by_id[d]["priority"][1]) <= tier)
            if found:
                return found[0]
            seen.update(reached)
            via.update(reached)
            level = sorted(reached)
        return None

    def annotate(task):
        tier = min(inherited(task["id"]), aged(task))
        via = nearest_source(task["id"], tier) if inherited(task["id"]) < aged(task) else None
        return {"effective_priority": f"P{tier}", "priority_boost": int(task["priority"][1]) - aged(task),
                "inherited_via": via}

    ordered = sorted(scope, key=key)
    if annotations is not None:
        annotations.update({t["id"]: annotate(t) for t in ordered})
    return [(t["id"], eligible(t)) for t in ordered]


def seed_random_pool(conn, rng, size=45):
    ids = []
    for index in range(size):
        clock.set_now("2026-08-20T00:00:00Z")
        clock.advance(minutes=rng.randrange(0, 60 * 40))
        task_id = f"r{index:02d}"
        depends = sorted(set(rng.sample(ids, min(len(ids), rng.randint(1, 2))))) if ids and rng.random() < 0.5 else []
        if rng.random() < 0.04:
            depends.append("ghost")
        due = f"2026-08-{rng.randint(20, 28)}T{rng.randrange(0, 24):02d}:00:00Z" if rng.random() < 0.3 else None
        not_before = "2026-08-21T12:00:00Z" if rng.random() < 0.1 else None
        tasks.create(conn, project=rng.choice(["X", "X", "Y"]), title=task_id, task_id=task_id,
                     priority=rng.choice(validate.PRIORITIES), depends_on=depends,
                     tags=rng.sample(["a", "b", "c"], rng.randrange(0, 3)), due_at=due, not_before=not_before)
        ids.append(task_id)
    clock.set_now("2026-08-21T09:00:00Z")
    for task_id in rng.sample(ids, 6):
        tasks.update(conn, task_id, status=rng.choice(["blocked", "cancelled", "completed", "running"]))
    return ids


MODES = [
    {},
    {"explain": True},
    {"prefer_unblocking": True},
    {"aging_minutes": 120, "aging_boost": 3},
    {"aging_minutes": 0},
    {"project": "X"},
    {"project": "Y", "explain": True, "prefer_unblocking": True},
    {"tags": ["a"]},
    {"tags": ["a", "b"], "aging_minutes": 600, "aging_boost": 1},
]


@pytest.mark.parametrize("budget, path", [
    (dispatch.PROBE_BUDGET, "small-scope"), (dispatch.PROBE_BUDGET, "deadline-index"), (4, "deadline-index"),
    (1, "range-sorted"), (dispatch.PROBE_BUDGET, "range-sorted"),
])
@pytest.mark.parametrize("seed", [1, 2])
def test_matches_brute_force_model(conn, monkeypatch, seed, budget, path):
    monkeypatch.setattr(dispatch, "PROBE_BUDGET", budget)
    force_path(monkeypatch, path)
    rng = random.Random(seed)
    seed_random_pool(conn, rng)
    steps = 0
    while steps < 40:
        now = clock.now_iso()
        for mode in MODES:
            ref_kw = {k: v for k, v in mode.items() if k in ("project", "tags", "aging_minutes", "aging_boost")}
            notes = {}
            order = reference(conn, now, prefer=mode.get("prefer_unblocking", False), annotations=notes, **ref_kw)
            expected = next((task_id for task_id, ok in order if ok), None)
            result = dispatch.next_task(conn, **mode)
            got = result["task"]["id"] if result["task"] else None
            assert got == expected, (mode, now, order[:6])
            if mode.get("explain"):
                # --explain considers every queued candidate in scope and reports each one
                # that could not be dispatched, above or below the pick, in dispatch order
                assert [s["task_id"] for s in result["skipped"]] == [t for t, ok in order if not ok], mode
                assert result["considered"] == len(order)
                if expected:
                    shown = {k: result["task"][k] for k in ("effective_priority", "priority_boost", "inherited_via")}
                    assert shown == notes[expected], mode
        expected = next((task_id for task_id, ok in reference(conn, now) if ok), None)
        if expected is None:
            break
        action = rng.random()
        if action < 0.5:
            claimed = dispatch.next_task(conn, claim=True, owner=rng.choice(["codex", "hermes"]))["task"]
            assert claimed["id"] == expected
        else:
            complete(conn, expected)
        clock.advance(minutes=rng.randrange(0, 240))
        steps += 1
    assert steps >= 10


def test_empty_scope_skips_the_fleet_wide_inheritance_walk(conn):
    # urgent work elsewhere would make an unscoped dispatch walk its prerequisites; a scope
    # with nothing queued in it must answer without that walk, and still find nothing
    tasks.create(conn, project="Other", title="prereq", task_id="pre", tags=["infra"])
    tasks.create(conn, project="Other", title="urgent", task_id="hot", priority="P0", depends_on=["pre"],
                 tags=["infra"])
    statements = []
    conn.set_trace_callback(statements.append)
    try:
        assert dispatch.next_task(conn, project="Empty") == {"task": None}
        assert dispatch.next_task(conn, tags=["security"]) == {"task": None}
    finally:
        conn.set_trace_callback(None)
    assert not [sql for sql in statements if "RECURSIVE walk" in sql]
    # the same scope machinery still finds inherited work when the scope has some
    assert dispatch.next_task(conn, tags=["infra"])["task"]["id"] == "pre"


def test_rare_tag_scope_reads_the_tag_index_and_keeps_the_order(conn):
    for number in range(120):
        tasks.create(conn, project="Pool", title=f"filler {number}", task_id=f"f{number:03d}", priority="P0")
    tasks.create(conn, project="Pool", title="rare late", task_id="r2", priority="P1", tags=["rare"])
    clock.advance(minutes=1)
    tasks.create(conn, project="Pool", title="rare urgent", task_id="r1", priority="P0", tags=["rare"])
    statements = []
    conn.set_trace_callback(statements.append)
    try:
        picked = dispatch.next_task(conn, tags=["rare"], explain=True)
    finally:
        conn.set_trace_callback(None)
    assert picked["task"]["id"] == "r1"  # P0 beats the older P1; fillers are out of scope
    assert picked["considered"] == 2 and picked["skipped"] == []  # r2 was outranked, not skipped
    assert any("FROM task_tags g" in sql for sql in statements)
    assert dispatch.next_task(conn, tags=["rare"], claim=True, owner="codex")["task"]["id"] == "r1"
    assert dispatch.next_task(conn, tags=["rare"], claim=True, owner="codex")["task"]["id"] == "r2"
    assert dispatch.next_task(conn, tags=["rare"]) == {"task": None}


def test_issue8_inherited_via_names_the_dependent_that_passed_the_urgency_on(conn):
    from mindos.work import graph

    for task_id, priority in (("a", "P3"), ("b", "P2"), ("c", "P0")):
        tasks.create(conn, project="P", title=task_id, task_id=task_id, priority=priority)
    graph.add_dependency(conn, "c", "b")  # c waits for b
    graph.add_dependency(conn, "b", "a")  # b waits for a
    pick = dispatch.next_task(conn, explain=True)["task"]
    assert pick["id"] == "a" and pick["effective_priority"] == "P0" and pick["inherited_via"] == "b"


def test_issue8_same_second_tasks_drain_in_insertion_order(conn):
    made = [tasks.create(conn, project="P", title=f"n{n}", task_id=f"z{9 - n}-{n}")["id"] for n in range(8)]
    drained = []
    for _ in made:
        drained.append(dispatch.next_task(conn, claim=True, owner="w")["task"]["id"])
    assert drained == made  # ids sort the other way round; the order made wins


# ---------------------------------------------------------------------------------------
# Choosing where dated rows come from (a cost choice: the rows and their order never change)


def _old_use_deadline_index(plan, ranges):
    """The choice as first written: every range sized by counting up to sample + 1 rows."""
    small, dense = True, False
    for stored, where in ranges:
        params = {**plan.params, "stored": stored, "m": plan.sample}
        head = (f"FROM tasks t INDEXED BY idx_tasks_status_priority WHERE t.status = 'queued'"
                f" AND t.priority = :stored{where}")
        if plan.conn.execute(f"SELECT count(*) FROM (SELECT 1 {head} LIMIT :m + 1)", params).fetchone()[0] > plan.sample:
            small = False
        if not dense:
            dense = plan.conn.execute(
                f"SELECT EXISTS (SELECT 1 FROM (SELECT t.due_at {head} LIMIT :m) WHERE due_at IS NOT NULL)",
                params).fetchone()[0] == 1
        if dense and not small:
            return True
    return False


@pytest.mark.parametrize("seed", range(6))
def test_the_deadline_index_choice_is_the_counting_ones(conn, monkeypatch, seed):
    rng = random.Random(seed)
    for n in range(rng.randint(0, 120)):
        mk(conn, f"t{n:03d}", rng.choice(validate.PRIORITIES),
           due_at=clock.format_ts(clock.now()) if rng.random() < rng.choice((0.0, 0.1, 0.9)) else None)
        clock.advance(minutes=rng.choice((1, 30, 400)))
    monkeypatch.setattr(dispatch, "SMALL_SCOPE_FLOOR", rng.choice((1, 5, 20, 60)))
    plan = dispatch._Plan(conn, None, (), False, False, rng.choice((0, 60, 360)), rng.choice((0, 1, 2, 3)))
    for tier in range(4):
        for op in ("=", ">"):
            ranges = plan._ranges(tier, op)
            assert plan._use_deadline_index(ranges) == _old_use_deadline_index(plan, ranges), (tier, op)


def test_next_claim_walks_once_while_the_write_lock_is_free(conn, monkeypatch):
    for n in range(6):
        mk(conn, f"t{n}", ("P0", "P2")[n % 2])
    plans = []
    real = dispatch._Plan.__init__
    monkeypatch.setattr(dispatch._Plan, "__init__", lambda self, *a, **kw: plans.append(1) or real(self, *a, **kw))
    assert dispatch.next_task(conn, claim=True, owner="a1")["task"]["id"] == "t0"
    assert len(plans) == 1  # no other writer: the pick is made once, under the lock
    monkeypatch.setattr(dispatch.db, "lock_is_free", lambda conn: False)
    assert dispatch.next_task(conn, claim=True, owner="a2")["task"]["id"] == "t2"
    assert len(plans) == 3  # a writer holds the lock: a dry pass while waiting, then the pick


def test_next_claim_chooses_its_sources_once_for_both_passes(conn, monkeypatch):
    monkeypatch.setattr(dispatch.db, "lock_is_free", lambda conn: False)  # another writer holds it: a dry pass
    for n in range(30):
        mk(conn, f"t{n:02d}", ("P0", "P2", "P3")[n % 3], due_at="2026-09-01T00:00:00Z" if n % 2 else None)
        clock.advance(minutes=200)
    made = []
    real = dispatch._Plan._use_deadline_index
    monkeypatch.setattr(dispatch._Plan, "_use_deadline_index", lambda self, ranges: made.append(ranges) or real(self, ranges))
    dry = dispatch.next_task(conn)["task"]["id"]
    chosen = len(made)
    assert chosen >= 2
    made.clear()
    assert dispatch.next_task(conn, claim=True, owner="a1")["task"]["id"] == dry
    assert len(made) == chosen  # the dry pass chose; the locked pass reused its choices
