"""Lifecycle: complete (evidence, definition of done, newly_unblocked), fail (retry budget,
backoff, terminal), cancel, block/unblock, defer -- and the refusals leave the DB alone."""

import json

import pytest

from mindos.core import clock
from mindos.store import db
from mindos.work import leases, lifecycle, receipts, rows, tasks
from mindos.errors import InvalidInput, NotFound, Refused
from conftest import last_event, make_task as make

DIGEST = "ab" * 32


def held(conn, task_id="t1", owner="hermes", **kw):
    make(conn, task_id, **kw)
    return leases.claim(conn, task_id, owner)


def state(conn):
    return (
        [tuple(r) for r in conn.execute("SELECT * FROM tasks ORDER BY id")],
        [tuple(r) for r in conn.execute("SELECT * FROM receipts ORDER BY id")],
        conn.execute("SELECT count(*) FROM audit_events").fetchone()[0],
    )


def new_actions(conn, since):
    return [r[0] for r in conn.execute("SELECT action FROM audit_events WHERE id > ? ORDER BY id", (since,))]


def head(conn):
    return conn.execute("SELECT coalesce(max(id), 0) FROM audit_events").fetchone()[0]


def refused_unchanged(conn, fn, exc, match, *, allow=()):
    before, mark = state(conn), head(conn)
    with pytest.raises(exc, match=match):
        fn()
    after = state(conn)
    assert after[0] == before[0] and after[1] == before[1]
    assert new_actions(conn, mark) == list(allow)


# ---------------------------------------------------------------------------------------
# complete


def test_complete_requires_the_live_holder_and_reports_newly_unblocked(conn, cli_json):
    held(conn, "hub")
    make(conn, "leaf1", depends_on=["hub"])
    make(conn, "leaf2", depends_on=["hub", "other"])
    make(conn, "other")
    make(conn, "leaf3", depends_on=["hub"])
    tasks.update(conn, "leaf3", status="waiting_for_user")  # not queued: not reported
    out = cli_json("autopilot", "complete", "hub", "--owner", "hermes", "--epoch", "1", "--note", "tests pass")
    assert out["status"] == "completed" and out["lease_owner"] == "" and out["lease_expires_at"] is None
    assert out["newly_unblocked"] == ["leaf1"]
    assert "receipts" not in out and "required_evidence_met" not in out
    event = last_event(conn, "completed")
    assert event == {"owner": "hermes", "lease_epoch": 1, "previous_status": "claimed",
                     "newly_unblocked": ["leaf1"], "note": "tests pass"}


def test_complete_cites_sealed_receipts_and_records_recall_digest(conn):
    held(conn)
    r1 = receipts.add(conn, "t1", "verification", {"tests": "pass"})["receipt_id"]
    r2 = receipts.add(conn, "t1", "commit", {"sha": "abc123"})["receipt_id"]
    out = lifecycle.complete(conn, "t1", "hermes", receipts=[r1, r2, r1], recall_digest=DIGEST.upper())
    assert out["receipts"] == [r1, r2]
    assert out["recall_digest"] == DIGEST
    assert rows.get(conn, "t1")["recall_digest"] == DIGEST
    event = last_event(conn, "completed")
    assert event["receipts"] == [r1, r2] and event["recall_digest"] == DIGEST


def test_complete_refuses_unknown_foreign_and_unsealed_receipts(conn, cli):
    held(conn)
    make(conn, "t2")
    foreign = receipts.add(conn, "t2", "verification", {"ok": True})["receipt_id"]
    with db.write(conn):
        conn.execute("INSERT INTO receipts(id, task_id, kind, path, file_hash, created_at)"
                     " VALUES ('legacy', 't1', 'verification', 'x', '', '2026-08-21T09:00:00Z')")
    refused_unchanged(conn, lambda: lifecycle.complete(conn, "t1", "hermes", receipts=["r-nope"]), NotFound,
                      "unknown receipt 'r-nope'")
    refused_unchanged(conn, lambda: lifecycle.complete(conn, "t1", "hermes", receipts=[foreign]), Refused,
                      f"receipt '{foreign}' belongs to another task, not 't1'")
    refused_unchanged(conn, lambda: lifecycle.complete(conn, "t1", "hermes", receipts=["legacy"]), Refused,
                      "is not integrity-sealed")
    before = state(conn)
    for argv, code, phrase in [
        (["--receipt", "'; DROP TABLE receipts; --"], 2, "invalid --receipt"),
        (["--recall-digest", "xyz"], 2, "invalid --recall-digest"),
        (["--recall-digest", "a" * 63], 2, "invalid --recall-digest"),
        (["--note", "n" * 5000], 2, "invalid --note"),
    ]:
        rc, out, err = cli("autopilot", "complete", "t1", "--owner", "hermes", *argv)
        assert (rc, out) == (code, "") and phrase in err
    assert state(conn) == before


def test_definition_of_done_blocks_until_every_kind_exists(conn, cli):
    held(conn, requires_receipts=["verification", "commit"])
    mark = head(conn)
    before = state(conn)
    rc, out, err = cli("autopilot", "complete", "t1", "--owner", "hermes")
    assert (rc, out) == (1, "")
    assert "missing required receipt kinds: commit, verification" in err
    after = state(conn)
    assert after[0] == before[0]
    assert new_actions(conn, mark) == ["completion_blocked_evidence"]
    refusal = last_event(conn, "completion_blocked_evidence")
    assert refusal["missing"] == ["commit", "verification"] and refusal["gate"] == "requires_receipts"
    assert refusal["owner"] == "hermes"
    receipts.add(conn, "t1", "verification", {"tests": "pass"})
    with pytest.raises(Refused, match="missing required receipt kinds: commit$|commit;"):
        lifecycle.complete(conn, "t1", "hermes")
    receipts.add(conn, "t1", "commit", {"sha": "abc"})
    out = lifecycle.complete(conn, "t1", "hermes")
    assert out["required_evidence_met"] is True and out["status"] == "completed"
    assert last_event(conn, "completed")["required_evidence_met"] is True


def test_evidence_refusal_only_after_the_holder_check(conn):
    make(conn, requires_receipts=["verification"])
    refused_unchanged(conn, lambda: lifecycle.complete(conn, "t1", "hermes"), Refused, "is not leased")


def test_update_status_completed_is_not_a_loophole_around_requires_receipts(conn, cli, cli_json):
    make(conn, requires_receipts=["verification"])
    mark = head(conn)
    before = state(conn)
    rc, out, err = cli("autopilot", "update", "t1", "--status", "completed")
    assert (rc, out) == (1, "") and "missing required receipt kinds: verification" in err
    assert state(conn)[0] == before[0]
    assert new_actions(conn, mark) == ["completion_blocked_evidence"]
    assert last_event(conn, "completion_blocked_evidence")["via"] == "update"
    receipts.add(conn, "t1", "verification", {"ok": True})
    out = cli_json("autopilot", "update", "t1", "--status", "completed")
    assert out["status"] == "completed"
    assert last_event(conn, "updated")["required_evidence_met"] is True
    make(conn, "plain")
    cli_json("autopilot", "update", "plain", "--status", "completed")
    assert "required_evidence_met" not in last_event(conn, "updated")


# ---------------------------------------------------------------------------------------
# fail


def test_fail_requeues_under_exponential_backoff_then_fails_terminally(conn, cli_json):
    held(conn, "t1", "codex")
    make(conn, "child", depends_on=["t1"])
    expected = [(1, 60), (2, 120), (3, 240)]
    for count, seconds in expected:
        out = cli_json("autopilot", "fail", "t1", "--owner", "codex", "--reason", "tests red after rebase")
        assert out["status"] == "queued" and out["retry_count"] == count
        assert out["retry_scheduled"] is True and out["backoff_seconds"] == seconds
        assert out["recover_after"] == clock.shift(clock.now_iso(), seconds)
        assert out["lease_owner"] == ""
        event = last_event(conn, "task_failed")
        assert event["retry_count"] == count and event["recover_after"] == out["recover_after"]
        assert event["reason"] == "tests red after rebase"
        leases.claim(conn, "t1", "codex")  # a direct claim overrides the cooldown
    out = cli_json("autopilot", "fail", "t1", "--owner", "codex", "--reason", "still red")
    assert out["status"] == "failed" and out["retry_count"] == 4 and out["retry_scheduled"] is False
    assert out["blocked_reason"] == "still red" and out["recover_after"] is None
    assert out["dependents_stranded"] == ["child"]
    event = last_event(conn, "task_failed_terminal")
    assert event["dependents_stranded"] == ["child"] and event["no_retry"] is False and event["retry_count"] == 4


def test_fail_no_retry_cap_and_zero_base(conn):
    held(conn, "a")
    out = lifecycle.fail(conn, "a", "hermes", reason="unrecoverable", no_retry=True)
    assert out["status"] == "failed" and out["dependents_stranded"] == []
    assert last_event(conn, "task_failed_terminal")["no_retry"] is True
    held(conn, "b")
    out = lifecycle.fail(conn, "b", "hermes", backoff_base=0)
    assert out["status"] == "queued" and out["recover_after"] is None and out["backoff_seconds"] == 0
    held(conn, "c")
    with db.write(conn):
        conn.execute("UPDATE tasks SET retry_count = 9 WHERE id = 'c'")
    out = lifecycle.fail(conn, "c", "hermes", max_retries=20, backoff_base=120, backoff_cap=7200)
    assert out["backoff_seconds"] == 7200  # 120 * 2^9 capped
    held(conn, "d")
    out = lifecycle.fail(conn, "d", "hermes", max_retries=0)
    assert out["status"] == "failed" and out["blocked_reason"] == "failed (no reason given)"


def test_fail_bad_flags_refused_before_any_change(conn, cli):
    held(conn)
    before = state(conn)
    for argv in (["--max-retries", "-1"], ["--backoff-base", "-5"], ["--backoff-cap", "-1"],
                 ["--reason", "r" * 5000], ["--epoch", "x"]):
        rc, out, err = cli("autopilot", "fail", "t1", "--owner", "hermes", *argv)
        assert rc == 2 and out == "" and "Traceback" not in err
    assert state(conn) == before


def test_failures_and_recoveries_share_one_budget(conn):
    from mindos.work import sweeps

    make(conn)
    leases.claim(conn, "t1", "a", minutes=1)
    clock.advance(minutes=2)
    sweeps.recover(conn)
    leases.claim(conn, "t1", "a")
    out = lifecycle.fail(conn, "t1", "a", max_retries=2)
    assert out["retry_count"] == 2 and out["status"] == "queued"
    leases.claim(conn, "t1", "a")
    assert lifecycle.fail(conn, "t1", "a", max_retries=2)["status"] == "failed"


# ---------------------------------------------------------------------------------------
# cancel


def test_cancel_tolerates_unleased_and_own_lease_but_never_foreign_or_expired(conn, cli, cli_json):
    make(conn, "free")
    out = cli_json("autopilot", "cancel", "free", "--owner", "leo", "--reason", "obsolete")
    assert out["status"] == "cancelled"
    assert last_event(conn, "cancelled") == {"owner": "leo", "reason": "obsolete", "previous_status": "queued"}
    held(conn, "mine", "leo")
    out = lifecycle.cancel(conn, "mine", "leo")
    assert out["status"] == "cancelled" and out["lease_owner"] == ""
    assert last_event(conn, "cancelled")["lease_released"] == "leo"
    held(conn, "theirs", "hermes", )
    refused_unchanged(conn, lambda: lifecycle.cancel(conn, "theirs", "leo"), Refused,
                      r"leased by 'hermes' \(live\); cannot cancel over another owner's lease")
    clock.advance(minutes=31)
    refused_unchanged(conn, lambda: lifecycle.cancel(conn, "theirs", "leo"), Refused, r"expired 2026-08-21T09:30:00Z")
    refused_unchanged(conn, lambda: lifecycle.cancel(conn, "theirs", "hermes"), Refused,
                      "your lease on task 'theirs' expired")
    refused_unchanged(conn, lambda: lifecycle.cancel(conn, "free", "leo"), Refused, "already cancelled")
    rc, out, err = cli("autopilot", "cancel", "nope", "--owner", "leo")
    assert (rc, out) == (1, "") and "unknown task 'nope'" in err


# ---------------------------------------------------------------------------------------
# block / unblock


def test_block_releases_own_lease_and_unblock_requeues(conn, cli_json):
    held(conn, "t1", "leo")
    out = cli_json("autopilot", "block", "t1", "--owner", "leo", "--reason", "waiting on credentials")
    assert out["status"] == "blocked" and out["blocked_reason"] == "waiting on credentials"
    assert out["lease_owner"] == "" and out["lease_expires_at"] is None
    event = last_event(conn, "blocked")
    assert event["previous_status"] == "claimed" and event["lease_released"] == "leo"
    refused_unchanged(conn, lambda: lifecycle.block(conn, "t1", "leo", reason="again"), Refused,
                      "already blocked: waiting on credentials")
    out = cli_json("autopilot", "unblock", "t1", "--owner", "leo")
    assert out["status"] == "queued" and out["blocked_reason"] == ""
    assert last_event(conn, "unblocked") == {"owner": "leo", "previous_reason": "waiting on credentials",
                                             "previous_status": "blocked"}
    refused_unchanged(conn, lambda: lifecycle.unblock(conn, "t1", "leo"), Refused, r"is not blocked \(status queued\)")


def test_block_refuses_foreign_expired_terminal_and_blank_reason(conn, cli):
    held(conn, "t1", "hermes")
    refused_unchanged(conn, lambda: lifecycle.block(conn, "t1", "leo", reason="x"), Refused, "leased by 'hermes'")
    for reason in ("", "   "):
        before = state(conn)
        rc, out, err = cli("autopilot", "block", "t1", "--owner", "hermes", "--reason", reason)
        assert rc == 2 and "invalid --reason: must not be empty" in err
        assert state(conn) == before
    rc, out, err = cli("autopilot", "block", "t1", "--owner", "hermes")
    assert rc == 2 and "--reason" in err
    clock.advance(hours=1)
    refused_unchanged(conn, lambda: lifecycle.block(conn, "t1", "hermes", reason="x"), Refused, "expired")
    make(conn, "done")
    lifecycle.cancel(conn, "done", "leo")
    refused_unchanged(conn, lambda: lifecycle.block(conn, "done", "leo", reason="x"), Refused, "terminal")


def test_blocked_reason_with_injection_text_is_stored_verbatim(conn):
    make(conn)
    reason = "'); DELETE FROM tasks; -- \"quoted\" %_ NEAR( *"
    assert lifecycle.block(conn, "t1", "leo", reason=reason)["blocked_reason"] == reason
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 1


# ---------------------------------------------------------------------------------------
# defer


def test_defer_sets_and_clears_not_before_without_changing_status(conn, cli_json):
    make(conn)
    out = cli_json("autopilot", "defer", "t1", "--owner", "hermes", "--until", "2026-08-22T11:00:00+02:00")
    assert out["status"] == "queued" and out["not_before"] == "2026-08-22T09:00:00Z"
    assert last_event(conn, "deferred") == {"owner": "hermes", "not_before": "2026-08-22T09:00:00Z",
                                            "previous_not_before": None, "previous_status": "queued"}
    assert lifecycle.metrics(conn)["queued_deferred"] == 1
    out = cli_json("autopilot", "defer", "t1", "--owner", "hermes", "--until", "")
    assert out["not_before"] is None and out["status"] == "queued"
    event = last_event(conn, "deferral_cleared")
    assert event["previous_not_before"] == "2026-08-22T09:00:00Z" and event["owner"] == "hermes"
    assert lifecycle.metrics(conn)["queued_deferred"] == 0


def test_defer_refusals(conn, cli):
    held(conn, "t1", "hermes")
    refused_unchanged(conn, lambda: lifecycle.defer(conn, "t1", "leo", until="2026-09-01T00:00:00Z"), Refused,
                      "cannot defer another owner's leased task")
    before = state(conn)
    for until in ("tomorrow", "2026-13-45T00:00:00Z", "x" * 100):
        rc, out, err = cli("autopilot", "defer", "t1", "--owner", "hermes", "--until", until)
        assert rc == 2 and out == "" and "invalid --until" in err
    assert state(conn) == before
    lifecycle.complete(conn, "t1", "hermes")
    refused_unchanged(conn, lambda: lifecycle.defer(conn, "t1", "hermes", until=""), Refused, "terminal")
    with pytest.raises(InvalidInput):
        lifecycle.defer(conn, "t1", "bad owner", until="")


# ---------------------------------------------------------------------------------------
# metrics


def test_lifecycle_metrics_count_failures_and_evidence(conn):
    held(conn, "a")
    lifecycle.fail(conn, "a", "hermes")
    leases.claim(conn, "a", "hermes")
    lifecycle.fail(conn, "a", "hermes", no_retry=True)
    held(conn, "b", requires_receipts=["verification"])
    with pytest.raises(Refused):
        lifecycle.complete(conn, "b", "hermes")
    snapshot = lifecycle.metrics(conn)
    assert snapshot["failures_retried_total"] == 1
    assert snapshot["failures_terminal_total"] == 1
    assert snapshot["tasks_missing_required_evidence"] == 1
    assert snapshot["completions_blocked_by_evidence"] == 1
    receipts.add(conn, "b", "verification", {"ok": True})
    assert lifecycle.metrics(conn)["tasks_missing_required_evidence"] == 0
