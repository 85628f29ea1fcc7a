"""Leases: claim, fencing epochs, seams, caps, heartbeat/renew/release/transfer, fleet view."""

import json
import subprocess
import sys

import pytest

from conftest import ROOT, last_event, script
from mindos.core import clock
from mindos.store import db
from mindos.work import leases, lifecycle, rows, sweeps, tasks
from mindos.errors import Conflict, InvalidInput, NotFound, Refused
from conftest import make_task as make


def state(conn):
    """Everything a refusal must leave alone."""
    return (
        [tuple(r) for r in conn.execute("SELECT * FROM tasks ORDER BY id")],
        [tuple(r) for r in conn.execute("SELECT * FROM heartbeats ORDER BY task_id")],
        conn.execute("SELECT count(*) FROM audit_events").fetchone()[0],
    )


def actions(conn, task_id=None):
    sql = "SELECT action FROM audit_events"
    rows = conn.execute(sql + (" WHERE entity_id = ?" if task_id else "") + " ORDER BY id",
                        (task_id,) if task_id else ())
    return [r[0] for r in rows]


def refused_unchanged(conn, fn, exc, match, *, allow=()):
    """Run ``fn``, expect ``exc`` matching ``match``; the DB changes only by ``allow`` events."""
    before = state(conn)
    n = conn.execute("SELECT max(id) FROM audit_events").fetchone()[0] or 0
    with pytest.raises(exc, match=match):
        fn()
    after = state(conn)
    assert after[0] == before[0] and after[1] == before[1]
    new = [r[0] for r in conn.execute("SELECT action FROM audit_events WHERE id > ? ORDER BY id", (n,))]
    assert new == list(allow)


# ---------------------------------------------------------------------------------------
# claim


def test_claim_bumps_epoch_sets_window_and_audits(conn):
    make(conn)
    task = leases.claim(conn, "t1", "hermes", minutes=30)
    assert task["status"] == "claimed"
    assert task["lease_owner"] == "hermes"
    assert task["lease_epoch"] == 1
    assert task["lease_expires_at"] == "2026-08-21T09:30:00Z"
    event = last_event(conn, "claimed")
    assert event["owner"] == "hermes" and event["lease_epoch"] == 1
    assert event["lease_expires_at"] == "2026-08-21T09:30:00Z"
    assert event["previous_status"] == "queued"
    assert "policy_overrides" not in event and "seam_overrides" not in event


def test_claim_cli_success_and_epoch_grows_monotonically(cli_json, conn):
    make(conn)
    out = cli_json("autopilot", "claim", "t1", "--owner", "hermes", "--minutes", "10")
    assert out["lease_epoch"] == 1 and out["lease_expires_at"] == "2026-08-21T09:10:00Z"
    cli_json("autopilot", "release", "t1", "--owner", "hermes", "--epoch", "1")
    out = cli_json("autopilot", "claim", "t1", "--owner", "codex")
    assert out["lease_epoch"] == 2 and out["lease_owner"] == "codex"


def test_claim_refuses_terminal_blocked_deps_and_live_leases(conn):
    make(conn, "done")
    leases.claim(conn, "done", "a")
    lifecycle.complete(conn, "done", "a")
    refused_unchanged(conn, lambda: leases.claim(conn, "done", "b"), Refused, r"completed \(terminal\)")

    make(conn, "blk")
    lifecycle.block(conn, "blk", "leo", reason="waiting on credentials")
    refused_unchanged(conn, lambda: leases.claim(conn, "blk", "b"), Refused,
                      r"task 'blk' is blocked: waiting on credentials; unblock it first")

    make(conn, "pre")
    make(conn, "dep", depends_on=["pre", "ghost"])
    refused_unchanged(conn, lambda: leases.claim(conn, "dep", "b"), Refused,
                      r"unsatisfied dependencies: ghost \(missing\), pre \(queued\)")

    make(conn, "held")
    leases.claim(conn, "held", "hermes")
    refused_unchanged(conn, lambda: leases.claim(conn, "held", "codex"), Refused,
                      r"task 'held' is leased by 'hermes' until 2026-08-21T09:30:00Z")
    refused_unchanged(conn, lambda: leases.claim(conn, "held", "hermes"), Refused,
                      r"already holds the lease on task 'held' \(epoch 1.*use renew")


def test_claim_bad_input_is_refused_cleanly(conn, cli):
    make(conn)
    before = state(conn)
    for argv, code, phrase in [
        (["claim", "nope", "--owner", "x"], 1, "unknown task 'nope'"),
        (["claim", "t1", "--owner", ""], 2, "invalid --owner"),
        (["claim", "t1", "--owner", "x; DROP TABLE tasks"], 2, "invalid --owner"),
        (["claim", "t1", "--owner", "a" * 5000], 2, "invalid --owner"),
        (["claim", "t1", "--owner", "x", "--minutes", "0"], 2, "invalid --minutes"),
        (["claim", "t1", "--owner", "x", "--minutes", "99999999"], 2, "invalid --minutes"),
        (["claim", "t1", "--owner", "x", "--minutes", "ten"], 2, "expected an integer in ASCII digits"),
        (["claim", "t1", "--owner", "x", "--max-active", "-1"], 2, "invalid --max-active"),
        (["claim", "../etc", "--owner", "x"], 2, "invalid task id"),
        (["claim", "t1", "--owner", "x", "--epoch", "7"], 1, r"lease superseded (held epoch 7, current 0)"),
    ]:
        rc, out, err = cli("autopilot", *argv)
        assert rc == code, (argv, rc, err)
        assert out == ""
        assert phrase in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1
    assert state(conn) == before


def test_claim_takes_over_an_expired_lease_and_fences_the_old_holder(conn):
    make(conn)
    leases.claim(conn, "t1", "hermes", minutes=5)
    clock.advance(minutes=6)
    task = leases.claim(conn, "t1", "codex")
    assert task["lease_owner"] == "codex" and task["lease_epoch"] == 2
    assert last_event(conn, "claimed")["expired_lease_taken_over"] == {"owner": "hermes", "lease_epoch": 1}
    refused_unchanged(conn, lambda: leases.heartbeat(conn, "t1", "hermes", epoch=1), Refused,
                      r"lease superseded \(held epoch 1, current 2\)")
    refused_unchanged(conn, lambda: leases.heartbeat(conn, "t1", "hermes"), Refused, "leased by 'codex'")


def test_deferred_and_cooling_tasks_are_claimable_and_claim_clears_cooldown(conn):
    make(conn, "cool")
    leases.claim(conn, "cool", "a")
    lifecycle.fail(conn, "cool", "a", reason="red")
    assert rows.get(conn, "cool")["recover_after"] == "2026-08-21T09:01:00Z"
    task = leases.claim(conn, "cool", "b")
    assert task["recover_after"] is None
    assert last_event(conn, "claimed")["cooldown_overridden"] == "2026-08-21T09:01:00Z"

    make(conn, "later", not_before="2026-08-25T00:00:00Z")
    task = leases.claim(conn, "later", "b")
    assert task["status"] == "claimed"
    assert task["not_before"] == "2026-08-25T00:00:00Z"
    assert last_event(conn, "claimed")["deferral_overridden"] == "2026-08-25T00:00:00Z"


def test_claim_any_open_status_with_no_live_lease(conn):
    make(conn)
    tasks.update(conn, "t1", status="waiting_for_review")
    task = leases.claim(conn, "t1", "reviewer")
    assert task["status"] == "claimed"
    assert last_event(conn, "claimed")["previous_status"] == "waiting_for_review"


# ---------------------------------------------------------------------------------------
# seams


def test_worktree_seam_conflicts_across_projects_and_is_audited(conn, cli):
    make(conn, "wt-1", project="A")
    make(conn, "wt-2", project="B")
    tasks.update(conn, "wt-1", worktree="/srv/wt")
    tasks.update(conn, "wt-2", worktree="/srv/wt")
    leases.claim(conn, "wt-1", "hermes")
    before = state(conn)
    rc, out, err = cli("autopilot", "claim", "wt-2", "--owner", "codex")
    assert rc == 1 and out == ""
    assert err.strip() == ("seam conflict: wt-1 holds worktree '/srv/wt' (owner hermes);"
                           " complete/release the holder first or pass --force")
    after = state(conn)
    assert after[0] == before[0] and after[2] == before[2] + 1
    assert actions(conn)[-1] == "claim_refused_seam"
    event = last_event(conn, "claim_refused_seam")
    assert event["owner"] == "codex"
    assert event["conflicts"] == [{"task_id": "wt-1", "kind": "worktree", "value": "/srv/wt", "owner": "hermes"}]
    assert rows.get(conn, "wt-2")["lease_owner"] == ""


def test_branch_seam_is_per_project_and_empty_values_never_conflict(conn):
    make(conn, "a1", project="A")
    make(conn, "a2", project="A")
    make(conn, "b1", project="B")
    make(conn, "e1", project="A")
    make(conn, "e2", project="A")
    for tid in ("a1", "a2", "b1"):
        tasks.update(conn, tid, branch="main")
    leases.claim(conn, "a1", "hermes")
    assert leases.seam_conflicts(conn, rows.get(conn, "b1")) == []
    leases.claim(conn, "b1", "codex")  # same branch, other project: a different repository
    refused_unchanged(conn, lambda: leases.claim(conn, "a2", "codex"), Refused,
                      r"a1 holds branch 'main' \(owner hermes\)", allow=["claim_refused_seam"])
    leases.claim(conn, "e1", "x")
    leases.claim(conn, "e2", "y")  # no worktree/branch: never a seam


def test_own_seam_still_conflicts_and_force_overrides_with_provenance(conn):
    make(conn, "w1")
    make(conn, "w2")
    tasks.update(conn, "w1", worktree="/srv/wt", branch="feat")
    tasks.update(conn, "w2", worktree="/srv/wt", branch="feat")
    leases.claim(conn, "w1", "hermes")
    conflicts = leases.seam_conflicts(conn, rows.get(conn, "w2"), "hermes")
    assert [(c["kind"], c.get("self")) for c in conflicts] == [("worktree", True), ("branch", True)]
    with pytest.raises(Refused, match="seam conflict"):
        leases.claim(conn, "w2", "hermes")
    task = leases.claim(conn, "w2", "hermes", force=True)
    assert task["lease_owner"] == "hermes"
    assert [c["kind"] for c in task["seam_overrides"]] == ["worktree", "branch"]
    assert [c["kind"] for c in last_event(conn, "claimed")["seam_overrides"]] == ["worktree", "branch"]


def test_expired_seam_holder_does_not_conflict(conn):
    make(conn, "w1")
    make(conn, "w2")
    tasks.update(conn, "w1", worktree="/srv/wt")
    tasks.update(conn, "w2", worktree="/srv/wt")
    leases.claim(conn, "w1", "hermes", minutes=1)
    clock.advance(minutes=2)
    assert leases.claim(conn, "w2", "codex")["lease_owner"] == "codex"


# ---------------------------------------------------------------------------------------
# per-owner cap


def test_max_active_cap_refuses_at_capacity_and_frees_on_completion(conn, cli):
    for tid in ("c1", "c2", "c3"):
        make(conn, tid)
    leases.claim(conn, "c1", "hermes", max_active=2)
    leases.claim(conn, "c2", "hermes", max_active=2)
    before = state(conn)
    rc, out, err = cli("autopilot", "claim", "c3", "--owner", "hermes", "--max-active", "2")
    assert (rc, out) == (1, "") and err.strip() == "owner 'hermes' at lease capacity (2/2)"
    assert state(conn) == before
    lifecycle.complete(conn, "c1", "hermes")
    assert leases.claim(conn, "c3", "hermes", max_active=2)["lease_owner"] == "hermes"
    assert last_event(conn, "claimed")["max_active"] == 2


def test_max_active_env_default_and_zero_means_unlimited(conn, monkeypatch, cli):
    make(conn, "c1")
    make(conn, "c2")
    leases.claim(conn, "c1", "hermes")
    monkeypatch.setenv("AUTOPILOT_MAX_ACTIVE_PER_OWNER", "1")
    refused_unchanged(conn, lambda: leases.claim(conn, "c2", "hermes"), Refused,
                      r"owner 'hermes' at lease capacity \(1/1\)")
    assert leases.claim(conn, "c2", "codex")["lease_owner"] == "codex"  # the cap is per owner
    leases.release(conn, "c2", "codex")
    assert leases.claim(conn, "c2", "hermes", max_active=0)["lease_owner"] == "hermes"  # flag beats env
    monkeypatch.setenv("AUTOPILOT_MAX_ACTIVE_PER_OWNER", "lots")
    rc, out, err = cli("autopilot", "claim", "c1", "--owner", "z")
    assert rc == 2 and "invalid AUTOPILOT_MAX_ACTIVE_PER_OWNER" in err


def test_expired_leases_do_not_count_against_the_cap(conn):
    make(conn, "c1")
    make(conn, "c2")
    leases.claim(conn, "c1", "hermes", minutes=1)
    clock.advance(minutes=2)
    assert leases.claim(conn, "c2", "hermes", max_active=1)["lease_owner"] == "hermes"


def test_the_acquiring_update_itself_refuses_at_capacity_when_the_precheck_is_bypassed(conn, monkeypatch, cli):
    """The cap lives in the acquiring UPDATE's WHERE clause, not only in the pre-check."""
    for tid in ("c1", "c2", "c3"):
        make(conn, tid)
    leases.claim(conn, "c1", "hermes")
    leases.claim(conn, "c2", "hermes")
    monkeypatch.setattr(leases, "live_lease_count", lambda *args, **kwargs: 0)  # the pre-check always passes
    refused_unchanged(conn, lambda: leases.claim(conn, "c3", "hermes", max_active=2), Refused,
                      r"^owner 'hermes' at lease capacity \(2/2\)$")

    def direct():
        with db.write(conn):
            leases.acquire(conn, rows.get(conn, "c3"), "hermes", minutes=30, max_active=2)

    refused_unchanged(conn, direct, Refused, r"^owner 'hermes' at lease capacity \(2/2\)$")
    monkeypatch.setenv("AUTOPILOT_MAX_ACTIVE_PER_OWNER", "2")
    before = state(conn)
    rc, out, err = cli("autopilot", "claim", "c3", "--owner", "hermes")
    assert (rc, out, err.strip()) == (1, "", "owner 'hermes' at lease capacity (2/2)")
    assert state(conn) == before
    # the guard counts the claimant only: another owner still gets the lease under the same bypass
    assert leases.claim(conn, "c3", "codex", max_active=2)["lease_owner"] == "codex"


def test_a_lease_taken_between_the_cap_check_and_the_write_is_refused_by_the_update(conn, monkeypatch):
    """A writer that slips in after the pre-check counted cannot push the owner past the cap."""
    for tid in ("c1", "c2", "c3"):
        make(conn, tid)
    leases.claim(conn, "c1", "hermes")
    real = leases.live_lease_count

    def count_then_race(c, owner, now=None, project=None):
        held = real(c, owner, now, project)
        # what a second dispatcher would have written had the write lock not been held
        c.execute("UPDATE tasks SET status = 'claimed', lease_owner = ?, lease_expires_at = ?,"
                  " lease_epoch = lease_epoch + 1 WHERE id = 'c2'", (owner, "2026-08-21T10:00:00Z"))
        return held

    monkeypatch.setattr(leases, "live_lease_count", count_then_race)
    refused_unchanged(conn, lambda: leases.claim(conn, "c3", "hermes", max_active=2), Refused,
                      r"^owner 'hermes' at lease capacity \(2/2\)$")
    assert rows.get(conn, "c2")["lease_owner"] == ""  # the racing write rolled back with the refusal
    assert rows.get(conn, "c3")["lease_epoch"] == 0


def test_acquire_with_a_stale_read_is_lease_changed_since_check(conn, home):
    make(conn)
    stale = rows.get(conn, "t1")
    other = db.connect(str(home))
    try:
        leases.claim(other, "t1", "codex")
    finally:
        other.close()
    before = state(conn)
    with pytest.raises(Conflict, match="lease changed since check"):
        with db.write(conn):
            leases.acquire(conn, stale, "hermes", minutes=30)
    assert state(conn) == before
    assert rows.get(conn, "t1")["lease_owner"] == "codex"


def test_acquire_requires_a_transaction(conn):
    make(conn)
    with pytest.raises(RuntimeError):
        leases.acquire(conn, rows.get(conn, "t1"), "hermes", minutes=30)


# ---------------------------------------------------------------------------------------
# heartbeat / renew / release


def test_heartbeat_forces_running_and_keeps_a_longer_window(conn, cli_json):
    make(conn)
    leases.claim(conn, "t1", "hermes", minutes=60)
    clock.advance(minutes=10)
    out = cli_json("autopilot", "heartbeat", "t1", "--owner", "hermes", "--epoch", "1", "--note", "verifying")
    assert out["status"] == "running"
    assert out["lease_expires_at"] == "2026-08-21T10:00:00Z"  # 15 minutes from now would shorten it
    assert out["lease_epoch"] == 1
    row = conn.execute("SELECT owner, note, at FROM heartbeats WHERE task_id = 't1'").fetchone()
    assert tuple(row) == ("hermes", "verifying", "2026-08-21T09:10:00Z")
    assert last_event(conn, "heartbeat")["note"] == "verifying"


def test_holder_mutations_refuse_unleased_foreign_expired_terminal_and_stale(conn):
    make(conn, "free")
    make(conn, "mine")
    make(conn, "gone")
    leases.claim(conn, "mine", "hermes", minutes=5)
    leases.claim(conn, "gone", "hermes")
    lifecycle.complete(conn, "gone", "hermes")
    calls = {
        "heartbeat": lambda t, o, **k: leases.heartbeat(conn, t, o, **k),
        "renew": lambda t, o, **k: leases.renew(conn, t, o, **k),
        "release": lambda t, o, **k: leases.release(conn, t, o, **k),
        "complete": lambda t, o, **k: lifecycle.complete(conn, t, o, **k),
        "fail": lambda t, o, **k: lifecycle.fail(conn, t, o, **k),
        "transfer": lambda t, o, **k: leases.transfer(conn, t, o, "someone-else", **k),
    }
    for verb, call in calls.items():
        refused_unchanged(conn, lambda: call("free", "hermes"), Refused, f"is not leased; claim it before you {verb}")
        refused_unchanged(conn, lambda: call("mine", "codex"), Refused, f"leased by 'hermes', not 'codex'; cannot {verb}")
        refused_unchanged(conn, lambda: call("mine", "hermes", epoch=9), Refused,
                          r"lease superseded \(held epoch 9, current 1\); reclaim")
        refused_unchanged(conn, lambda: call("gone", "hermes"), Refused, f"completed \\(terminal\\); cannot {verb}")
        refused_unchanged(conn, lambda: call("nope", "hermes"), NotFound, "unknown task 'nope'")
    clock.advance(minutes=6)
    for verb, call in calls.items():
        refused_unchanged(conn, lambda: call("mine", "hermes"), Refused,
                          f"lease on task 'mine' expired at 2026-08-21T09:05:00Z; reclaim it with claim before you {verb}")


def test_renew_keeps_status_and_epoch(conn, cli_json):
    make(conn)
    leases.claim(conn, "t1", "hermes")
    leases.heartbeat(conn, "t1", "hermes")
    clock.advance(minutes=5)
    out = cli_json("autopilot", "renew", "t1", "--owner", "hermes", "--minutes", "45", "--epoch", "1")
    assert out["status"] == "running" and out["lease_epoch"] == 1
    assert out["lease_expires_at"] == "2026-08-21T09:50:00Z"
    event = last_event(conn, "lease_renewed")
    assert event["previous_expires_at"] == "2026-08-21T09:30:00Z"  # the heartbeat kept the 30-minute claim
    assert event["lease_expires_at"] == "2026-08-21T09:50:00Z" and event["minutes"] == 45


def test_release_requeues_without_consuming_retry_budget(conn, cli_json):
    make(conn)
    leases.claim(conn, "t1", "hermes")
    out = cli_json("autopilot", "release", "t1", "--owner", "hermes", "--epoch", "1")
    assert out["status"] == "queued" and out["lease_owner"] == "" and out["lease_expires_at"] is None
    assert out["retry_count"] == 0 and out["lease_epoch"] == 1
    assert last_event(conn, "lease_released") == {"owner": "hermes", "lease_epoch": 1, "previous_status": "claimed"}


HOLDER_WRITES = {
    "heartbeat": lambda conn: leases.heartbeat(conn, "t1", "hermes", note="still here"),
    "renew": lambda conn: leases.renew(conn, "t1", "hermes", minutes=45),
    "release": lambda conn: leases.release(conn, "t1", "hermes"),
    "transfer": lambda conn: leases.transfer(conn, "t1", "hermes", "codex", minutes=45),
    "complete": lambda conn: lifecycle.complete(conn, "t1", "hermes"),
    "fail": lambda conn: lifecycle.fail(conn, "t1", "hermes", reason="red"),
    "fail-terminal": lambda conn: lifecycle.fail(conn, "t1", "hermes", no_retry=True),
}
STEALS = {  # each moves ONE lease column, so each clause of the guard is needed on its own
    "owner-only": "UPDATE tasks SET lease_owner = 'thief' WHERE id = 't1'",
    "expiry-only": "UPDATE tasks SET lease_expires_at = '2026-08-21T11:00:00Z' WHERE id = 't1'",
    "expired-only": "UPDATE tasks SET lease_expires_at = '2026-08-21T08:59:00Z' WHERE id = 't1'",
    "epoch-only": "UPDATE tasks SET lease_epoch = lease_epoch + 1 WHERE id = 't1'",
}


@pytest.mark.parametrize("steal", STEALS)
@pytest.mark.parametrize("verb", HOLDER_WRITES)
def test_guarded_holder_write_turns_a_lease_moved_after_the_check_into_a_refusal(conn, home, monkeypatch, verb,
                                                                                steal):
    """A lease that moved between the holder check and the write is never clobbered."""
    make(conn)
    leases.claim(conn, "t1", "hermes")
    checked = rows.get(conn, "t1")  # what the holder check saw
    thief = db.connect(str(home))
    try:
        thief.execute(STEALS[steal])  # committed by another writer after the check
    finally:
        thief.close()

    def stale(c, task_id, owner, epoch, verb_name, now):
        leases.check_holder(checked, owner, epoch, now, verb_name)
        return dict(checked)

    monkeypatch.setattr(leases, "holder_task", stale)
    stolen = state(conn)
    with pytest.raises(Conflict, match=r"^lease changed since check: task 't1' was modified by another writer"):
        HOLDER_WRITES[verb](conn)
    assert state(conn) == stolen  # the row is exactly as the thief left it, no heartbeat, no event


# ---------------------------------------------------------------------------------------
# transfer


def test_transfer_moves_ownership_bumps_epoch_and_keeps_status(conn, cli_json):
    make(conn)
    leases.claim(conn, "t1", "codex")
    leases.heartbeat(conn, "t1", "codex")
    out = cli_json("autopilot", "transfer", "t1", "--from-owner", "codex", "--to-owner", "claude-code",
                   "--minutes", "45", "--epoch", "1")
    assert out["lease_owner"] == "claude-code" and out["lease_epoch"] == 2 and out["status"] == "running"
    assert out["lease_expires_at"] == "2026-08-21T09:45:00Z"
    assert (out["from_owner"], out["from_epoch"]) == ("codex", 1)
    event = last_event(conn, "lease_transferred")
    assert (event["from_owner"], event["to_owner"], event["from_epoch"], event["to_epoch"]) == \
        ("codex", "claude-code", 1, 2)
    with pytest.raises(Refused, match=r"lease superseded \(held epoch 1, current 2\)"):
        leases.heartbeat(conn, "t1", "claude-code", epoch=1)
    with pytest.raises(Refused, match="leased by 'claude-code', not 'codex'"):
        leases.release(conn, "t1", "codex")
    assert leases.heartbeat(conn, "t1", "claude-code", epoch=2)["lease_owner"] == "claude-code"


def test_transfer_keeps_expiry_without_minutes_and_accepts_to_agent(conn, cli_json):
    make(conn)
    leases.claim(conn, "t1", "hermes", minutes=20)
    out = cli_json("autopilot", "transfer", "t1", "--from-owner", "hermes", "--to-agent", "codex")
    assert out["lease_owner"] == "codex" and out["lease_expires_at"] == "2026-08-21T09:20:00Z"


def test_transfer_same_owner_refused(conn, cli):
    make(conn)
    leases.claim(conn, "t1", "hermes")
    refused_unchanged(conn, lambda: leases.transfer(conn, "t1", "hermes", "hermes"), Refused,
                      "cannot transfer a lease to its current holder 'hermes'")
    rc, out, err = cli("autopilot", "transfer", "t1", "--from-owner", "hermes", "--to-owner", "bad owner")
    assert rc == 2 and "invalid --to-owner" in err


def write_policy(home, project, text):
    directory = home / "policies"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{project}.yaml").write_text(text, encoding="utf-8")


def test_transfer_refuses_a_receiver_at_its_lease_cap_flag_or_env(conn, monkeypatch, cli, cli_json):
    for tid in ("t1", "o1", "o2"):
        make(conn, tid)
    leases.claim(conn, "t1", "hermes")
    leases.claim(conn, "o1", "codex")
    leases.claim(conn, "o2", "codex")
    before = state(conn)
    rc, out, err = cli("autopilot", "transfer", "t1", "--from-owner", "hermes", "--to-owner", "codex",
                       "--max-active", "2")
    assert (rc, out, err.strip()) == (1, "", "owner 'codex' at lease capacity (2/2)")
    assert state(conn) == before  # like claim's capacity refusal: not audited, nothing written
    monkeypatch.setenv("AUTOPILOT_MAX_ACTIVE_PER_OWNER", "2")
    refused_unchanged(conn, lambda: leases.transfer(conn, "t1", "hermes", "codex"), Refused,
                      r"^owner 'codex' at lease capacity \(2/2\)$")
    # --force is the policy override, not a cap override (as for claim)
    refused_unchanged(conn, lambda: leases.transfer(conn, "t1", "hermes", "codex", force=True), Refused,
                      r"^owner 'codex' at lease capacity \(2/2\)$")
    # the giver's own leases never count for the receiver; a receiver under the cap takes it
    assert leases.transfer(conn, "t1", "hermes", "claude-code")["lease_owner"] == "claude-code"
    assert last_event(conn, "lease_transferred")["max_active"] == 2
    # --max-active 0 is the explicit "unlimited" that beats the env default
    out = cli_json("autopilot", "transfer", "t1", "--from-owner", "claude-code", "--to-owner", "codex",
                   "--max-active", "0")
    assert out["lease_owner"] == "codex" and out["lease_epoch"] == 3
    assert "max_active" not in last_event(conn, "lease_transferred")
    rc, out, err = cli("autopilot", "transfer", "t1", "--from-owner", "codex", "--to-owner", "x",
                       "--max-active", "-1")
    assert rc == 2 and out == "" and "invalid --max-active" in err


def test_transfer_enforces_the_receivers_project_wip_cap_and_force_overrides_it(conn, home, cli, cli_json):
    write_policy(home, "Trove", "max_wip_per_owner: 1\n")
    make(conn, "t1")
    make(conn, "held")
    make(conn, "elsewhere", project="Other")
    leases.claim(conn, "t1", "hermes")
    leases.claim(conn, "held", "codex")
    leases.claim(conn, "elsewhere", "claude-code")
    before = state(conn)
    rc, out, err = cli("autopilot", "transfer", "t1", "--from-owner", "hermes", "--to-owner", "codex")
    assert (rc, out) == (1, "")
    assert err.strip() == ("policy refused transfer: owner 'codex' holds 1/1 live leases in project 'Trove'"
                           " (max_wip_per_owner; held: held); finish one first or pass --force")
    after = state(conn)
    assert after[:2] == before[:2] and after[2] == before[2] + 1
    assert actions(conn)[-1] == "claim_refused_policy"
    assert last_event(conn, "claim_refused_policy") == {
        "owner": "codex", "reason": "policy_wip_cap", "held": ["held"], "max_wip_per_owner": 1,
        "via": "transfer", "from_owner": "hermes", "lease_epoch": 1}
    # a lease in another project does not count against this project's cap
    moved = leases.transfer(conn, "t1", "hermes", "claude-code")
    assert moved["lease_owner"] == "claude-code" and "policy_overrides" not in moved
    # --force is the deliberate override, recorded in the lease_transferred event
    out = cli_json("autopilot", "transfer", "t1", "--from-owner", "claude-code", "--to-owner", "codex", "--force")
    assert out["lease_owner"] == "codex"
    gate = {"reason": "policy_wip_cap", "held": ["held"], "max_wip_per_owner": 1}
    assert out["policy_overrides"] == [gate]
    assert last_event(conn, "lease_transferred")["policy_overrides"] == [gate]


def test_transfer_does_not_recheck_the_required_tag_of_a_task_already_leased(conn, home):
    """dispatch_requires_tag gates whether a task may be dispatched; transfer moves one already out."""
    write_policy(home, "Trove", "dispatch_requires_tag: client:trove\n")
    make(conn, "t1")
    leases.claim(conn, "t1", "hermes", force=True)
    moved = leases.transfer(conn, "t1", "hermes", "codex")
    assert moved["lease_owner"] == "codex" and "policy_overrides" not in moved
    assert "policy_overrides" not in last_event(conn, "lease_transferred")


def test_transfer_malformed_policy_fails_closed_even_with_force(conn, home):
    make(conn, "t1")
    leases.claim(conn, "t1", "hermes")
    write_policy(home, "Trove", "max_wip_per_owner: two\n")
    for force in (False, True):
        refused_unchanged(conn, lambda: leases.transfer(conn, "t1", "hermes", "codex", force=force), Refused,
                          r"invalid policy .*Trove.yaml:1:")


def test_the_transferring_update_itself_enforces_both_caps_when_prechecks_are_bypassed(conn, home, monkeypatch):
    from mindos.work import policies

    write_policy(home, "Trove", "max_wip_per_owner: 1\n")
    for tid in ("t1", "w1"):
        make(conn, tid)
    for tid in ("x1", "x2"):
        make(conn, tid, project="Other")
    leases.claim(conn, "t1", "hermes")
    leases.claim(conn, "x1", "codex")
    leases.claim(conn, "x2", "codex")
    real_gate = policies.wip_gate
    monkeypatch.setattr(leases, "live_lease_count", lambda *args, **kwargs: 0)
    monkeypatch.setattr(policies, "wip_gate", lambda *args, **kwargs: None)
    refused_unchanged(conn, lambda: leases.transfer(conn, "t1", "hermes", "codex", max_active=2), Refused,
                      r"^owner 'codex' at lease capacity \(2/2\)$")
    leases.claim(conn, "w1", "claude-code")
    refused_unchanged(conn, lambda: leases.transfer(conn, "t1", "hermes", "claude-code"), Refused,
                      r"^policy refused transfer: owner 'claude-code' holds 1/1 live leases in project 'Trove'"
                      r" \(max_wip_per_owner; held: w1\)", allow=["claim_refused_policy"])
    monkeypatch.setattr(policies, "wip_gate", real_gate)
    moved = leases.transfer(conn, "t1", "hermes", "claude-code", force=True)
    assert moved["lease_owner"] == "claude-code" and moved["policy_overrides"][0]["held"] == ["w1"]


# ---------------------------------------------------------------------------------------
# fencing: same-owner ABA


def test_same_owner_aba_old_epoch_is_rejected_after_recovery(conn, cli):
    make(conn)
    first = leases.claim(conn, "t1", "hermes", minutes=5)
    assert first["lease_epoch"] == 1
    clock.advance(minutes=6)
    assert sweeps.recover(conn, backoff_base=0)["recovered"] == ["t1"]
    second = leases.claim(conn, "t1", "hermes")
    assert second["lease_epoch"] == 2 and second["lease_owner"] == "hermes"
    for argv in (["heartbeat", "t1", "--owner", "hermes", "--epoch", "1"],
                 ["complete", "t1", "--owner", "hermes", "--epoch", "1"],
                 ["release", "t1", "--owner", "hermes", "--epoch", "1"],
                 ["renew", "t1", "--owner", "hermes", "--epoch", "1"],
                 ["fail", "t1", "--owner", "hermes", "--epoch", "1"]):
        before = state(conn)
        rc, out, err = cli("autopilot", *argv)
        assert rc == 1 and out == ""
        assert err.startswith("lease superseded (held epoch 1, current 2); reclaim"), err
        assert state(conn) == before
    # without --epoch the legacy unfenced behaviour still works for the live holder
    assert leases.renew(conn, "t1", "hermes")["lease_epoch"] == 2


# ---------------------------------------------------------------------------------------
# fleet view


def test_leases_view_orders_filters_and_hides_expired(conn, cli_json):
    make(conn, "a")
    make(conn, "b")
    make(conn, "c")
    make(conn, "free")
    leases.claim(conn, "a", "hermes", minutes=50)
    leases.claim(conn, "b", "codex", minutes=10)
    leases.claim(conn, "c", "hermes", minutes=1)
    clock.advance(minutes=2)
    live = cli_json("autopilot", "leases")
    assert [e["task_id"] for e in live] == ["b", "a"]
    assert live[0] == {"task_id": "b", "project": "Trove", "title": "task b", "status": "claimed",
                       "priority": "P2", "owner": "codex", "lease_expires_at": "2026-08-21T09:10:00Z",
                       "lease_epoch": 1, "live": True, "seconds_remaining": 480, "progress": None, "stalled": False}
    everything = cli_json("autopilot", "leases", "--all")
    assert [(e["task_id"], e["live"], e["seconds_remaining"]) for e in everything] == \
        [("c", False, 0), ("b", True, 480), ("a", True, 2880)]
    assert [e["task_id"] for e in cli_json("autopilot", "leases", "--all", "--owner", "hermes")] == ["c", "a"]
    assert cli_json("autopilot", "leases", "--owner", "nobody") == []


def test_lease_metrics(conn):
    make(conn, "a")
    make(conn, "b")
    leases.claim(conn, "a", "hermes", minutes=1)
    leases.claim(conn, "b", "hermes")
    assert leases.metrics(conn) == {"active_leases_by_owner": {"hermes": 2}, "stale_leases": 0}
    clock.advance(minutes=2)
    assert leases.metrics(conn) == {"active_leases_by_owner": {"hermes": 1}, "stale_leases": 1}


# ---------------------------------------------------------------------------------------
# real processes


def test_eight_processes_race_for_one_task_exactly_one_wins(conn, home):
    make(conn, "race")
    conn.close()
    env = {"HERMES_AUTOPILOT_HOME": str(home)}
    import os

    environment = dict(os.environ, **env)
    environment.pop("MINDOS_NOW", None)
    procs = [
        subprocess.Popen([sys.executable, os.path.join(ROOT, "autopilot.py"), "claim", "race", "--owner", f"agent-{i}"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
        for i in range(8)
    ]
    results = [(p.wait(timeout=60), *p.communicate()) for p in procs]
    winners = [r for r in results if r[0] == 0]
    losers = [r for r in results if r[0] != 0]
    assert len(winners) == 1 and len(losers) == 7
    assert winners[0][2] == ""
    owner = json.loads(winners[0][1])["lease_owner"]
    for rc, out, err in losers:
        assert rc == 1 and out == ""
        assert "locked" not in err and "Traceback" not in err
        assert f"task 'race' is leased by '{owner}'" in err
    check = db.connect(str(home))
    try:
        assert check.execute("SELECT count(*) FROM audit_events WHERE action = 'claimed'").fetchone()[0] == 1
        assert check.execute("SELECT lease_epoch FROM tasks WHERE id = 'race'").fetchone()[0] == 1
    finally:
        check.close()


def test_subprocess_claim_honours_pinned_clock(conn, home):
    make(conn)
    proc = script("autopilot.py", "claim", "t1", "--owner", "hermes", "--minutes", "15", home=home,
                  env={"MINDOS_NOW": "2026-08-21T10:00:00Z"})
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["lease_expires_at"] == "2026-08-21T10:15:00Z"


def test_validators_reject_bad_values_before_touching_the_db(conn):
    make(conn)
    with pytest.raises(InvalidInput):
        leases.claim(conn, "t1", "hermes", minutes=True)
    with pytest.raises(InvalidInput):
        leases.renew(conn, "t1", "hermes", epoch=-1)
    with pytest.raises(InvalidInput):
        leases.list_leases(conn, owner="bad owner")


def test_heartbeat_minutes_extends_and_never_shortens_a_longer_lease(conn, cli_json, cli):
    from mindos.work import tasks

    tasks.create(conn, project="P", title="x", task_id="hb")
    claimed = cli_json("autopilot", "claim", "hb", "--owner", "a", "--minutes", "120")
    beat = cli_json("autopilot", "heartbeat", "hb", "--owner", "a")
    assert beat["lease_expires_at"] == claimed["lease_expires_at"]  # default 15 never cuts a 2-hour lease
    beat = cli_json("autopilot", "heartbeat", "hb", "--owner", "a", "--minutes", "180")
    assert beat["lease_expires_at"] == "2026-08-21T12:00:00Z"
    tasks.create(conn, project="P", title="y", task_id="hb2")
    cli_json("autopilot", "claim", "hb2", "--owner", "a", "--minutes", "5")
    assert cli_json("autopilot", "heartbeat", "hb2", "--owner", "a")["lease_expires_at"] == "2026-08-21T09:15:00Z"
    assert cli_json("autopilot", "heartbeat", "hb2", "--owner", "a", "--minutes", "40")[
        "lease_expires_at"] == "2026-08-21T09:40:00Z"
    rc, out, err = cli("autopilot", "heartbeat", "hb2", "--owner", "a", "--minutes", "0")
    assert rc == 2 and "--minutes" in err
