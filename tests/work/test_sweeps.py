"""ops.py recover (retry budget, backoff, dry run, lost races) and ops.py escalate (SLA sweep)."""

import json

import pytest

from conftest import script
from mindos.core import clock
from mindos.store import db
from mindos.work import leases, rows, sweeps, tasks
from mindos.errors import InvalidInput
from conftest import make_task as make


def state(conn):
    return ([tuple(r) for r in conn.execute("SELECT * FROM tasks ORDER BY id")],
            conn.execute("SELECT count(*) FROM audit_events").fetchone()[0])


def events(conn, action):
    rows = conn.execute("SELECT entity_id, payload_json FROM audit_events WHERE action = ? ORDER BY id", (action,))
    return [(r[0], json.loads(r[1])) for r in rows]


def stale(conn, task_id, owner="hermes", minutes=5):
    make(conn, task_id)
    return leases.claim(conn, task_id, owner, minutes=minutes)


# ---------------------------------------------------------------------------------------
# recover


def test_backoff_formula():
    assert [sweeps.backoff_seconds(n) for n in (1, 2, 3, 4, 7, 8, 500)] == [60, 120, 240, 480, 3600, 3600, 3600]
    assert sweeps.backoff_seconds(3, 0, 3600) == 0
    assert sweeps.backoff_seconds(3, 10, 25) == 25


def test_recover_requeues_expired_leases_with_backoff_and_audits(conn, cli_json):
    stale(conn, "a", minutes=5)
    stale(conn, "b", minutes=10)
    make(conn, "live")
    leases.claim(conn, "live", "codex", minutes=60)
    clock.advance(minutes=11)
    out = cli_json("ops", "recover")
    assert out["recovered"] == ["a", "b"] and out["failed"] == [] and out["skipped"] == []
    assert out["would_recover"] == [] and out["would_fail"] == [] and out["dry_run"] is False
    assert out["backoff"]["a"] == {"retry_count": 1, "backoff_seconds": 60, "recover_after": "2026-08-21T09:12:00Z"}
    task = rows.get(conn, "a")
    assert (task["status"], task["lease_owner"], task["lease_expires_at"], task["retry_count"]) == \
        ("queued", "", None, 1)
    assert task["recover_after"] == "2026-08-21T09:12:00Z" and task["lease_epoch"] == 1
    assert rows.get(conn, "live")["lease_owner"] == "codex"
    (entity, payload), _ = events(conn, "lease_recovered")
    assert entity == "a"
    assert payload["recover_after"] == "2026-08-21T09:12:00Z" and payload["previous_owner"] == "hermes"
    assert payload["retry_count"] == 1 and payload["lease_epoch"] == 1
    assert sweeps.metrics(conn) == {"tasks_in_backoff": 2}
    clock.advance(minutes=2)
    assert sweeps.metrics(conn) == {"tasks_in_backoff": 0}
    assert cli_json("ops", "recover")["recovered"] == []  # idempotent


def test_recover_budget_exhaustion_fails_with_the_spec_reason(conn):
    stale(conn, "t1")
    for expected in (1, 2, 3):
        clock.advance(minutes=6)
        out = sweeps.recover(conn, backoff_base=0)
        assert out["recovered"] == ["t1"] and out["backoff"]["t1"]["recover_after"] is None
        assert rows.get(conn, "t1")["retry_count"] == expected
        leases.claim(conn, "t1", "hermes", minutes=5)
    clock.advance(minutes=6)
    out = sweeps.recover(conn)
    assert out["failed"] == ["t1"] and out["recovered"] == [] and "t1" not in out["backoff"]
    task = rows.get(conn, "t1")
    assert (task["status"], task["blocked_reason"], task["retry_count"], task["lease_owner"]) == \
        ("failed", "max lease retries exceeded", 4, "")
    assert events(conn, "lease_recovery_failed")[0][1]["reason"] == "max lease retries exceeded"


def test_recover_dry_run_previews_and_mutates_nothing(conn, cli_json):
    stale(conn, "a")
    stale(conn, "b")
    with db.write(conn):
        conn.execute("UPDATE tasks SET retry_count = 3 WHERE id = 'b'")
    clock.advance(minutes=6)
    before = state(conn)
    out = cli_json("ops", "recover", "--dry-run", "--backoff-base", "100", "--backoff-cap", "150")
    assert out["dry_run"] is True
    assert out["would_recover"] == ["a"] and out["would_fail"] == ["b"]
    assert out["recovered"] == [] and out["failed"] == []
    assert out["backoff"] == {"a": {"retry_count": 1, "backoff_seconds": 100, "recover_after": "2026-08-21T09:07:40Z"}}
    assert state(conn) == before
    out = cli_json("ops", "recover", "--max-retries", "5")
    assert out["recovered"] == ["a", "b"]


def test_recover_reports_lost_races_as_skipped(conn, home, monkeypatch):
    stale(conn, "a")
    stale(conn, "b")
    clock.advance(minutes=6)
    real = sweeps._expired_leases

    def read_then_race(c, now):
        candidates = real(c, now)
        other = db.connect(str(home))
        try:  # between the sweep's read and its write, the holder of 'b' comes back
            leases.claim(other, "b", "codex")
        finally:
            other.close()
        return candidates

    monkeypatch.setattr(sweeps, "_expired_leases", read_then_race)
    out = sweeps.recover(conn)
    assert out["recovered"] == ["a"] and out["skipped"] == ["b"]
    task = rows.get(conn, "b")
    assert task["lease_owner"] == "codex" and task["retry_count"] == 0 and task["status"] == "claimed"


def test_recover_bad_flags(conn, cli):
    stale(conn, "a")
    clock.advance(minutes=6)
    before = state(conn)
    for argv in (["--max-retries", "-1"], ["--backoff-base", "-1"], ["--backoff-cap", "x"],
                 ["--max-retries", "999999"]):
        rc, out, err = cli("ops", "recover", *argv)
        assert rc == 2 and out == "" and "Traceback" not in err
    assert state(conn) == before
    with pytest.raises(InvalidInput):
        sweeps.recover(conn, max_retries=True)


def test_recover_subprocess(conn, home):
    stale(conn, "a")
    conn.close()
    proc = script("ops.py", "recover", home=home, env={"MINDOS_NOW": "2026-08-21T10:00:00Z"})
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["recovered"] == ["a"]


# ---------------------------------------------------------------------------------------
# escalate


def test_escalate_climbs_one_level_per_pass_and_audits(conn, cli_json):
    make(conn, "late", priority="P3", due_at="2026-08-21T08:00:00Z")
    make(conn, "top", priority="P0", due_at="2026-08-20T08:00:00Z")
    make(conn, "future", priority="P3", due_at="2026-08-22T08:00:00Z")
    make(conn, "undated", priority="P3")
    make(conn, "done", priority="P3", due_at="2026-08-20T08:00:00Z")
    tasks.update(conn, "done", status="completed")
    out = cli_json("ops", "escalate")
    assert out["escalated"] == [{"task_id": "late", "old_priority": "P3", "new_priority": "P2",
                                 "due_at": "2026-08-21T08:00:00Z"}]
    assert out["already_p0"] == ["top"] and out["skipped"] == [] and out["would_escalate"] == []
    assert events(conn, "priority_escalated") == [("late", {"old_priority": "P3", "new_priority": "P2",
                                                            "due_at": "2026-08-21T08:00:00Z", "reason": "overdue"})]
    for expected in ("P1", "P0"):
        cli_json("ops", "escalate")
        assert rows.get(conn, "late")["priority"] == expected
    out = cli_json("ops", "escalate")
    assert out["escalated"] == [] and out["already_p0"] == ["top", "late"]
    for tid, prio in (("future", "P3"), ("undated", "P3"), ("done", "P3")):
        assert rows.get(conn, tid)["priority"] == prio


def test_escalate_dry_run_changes_nothing(conn, cli_json):
    make(conn, "late", priority="P2", due_at="2026-08-21T08:59:59Z")
    before = state(conn)
    out = cli_json("ops", "escalate", "--dry-run")
    assert out["dry_run"] is True and out["escalated"] == []
    assert out["would_escalate"] == [{"task_id": "late", "old_priority": "P2", "new_priority": "P1",
                                      "due_at": "2026-08-21T08:59:59Z"}]
    assert state(conn) == before


def test_escalate_reports_lost_races_as_skipped(conn, home, monkeypatch):
    make(conn, "a", priority="P3", due_at="2026-08-21T08:00:00Z")
    make(conn, "b", priority="P3", due_at="2026-08-21T08:00:00Z")
    real = sweeps._overdue

    def read_then_race(c, now):
        candidates = real(c, now)
        other = db.connect(str(home))
        try:
            tasks.update(other, "b", priority="P1")
        finally:
            other.close()
        return candidates

    monkeypatch.setattr(sweeps, "_overdue", read_then_race)
    out = sweeps.escalate(conn)
    assert [e["task_id"] for e in out["escalated"]] == ["a"] and out["skipped"] == ["b"]
    assert rows.get(conn, "b")["priority"] == "P1"


def test_blocked_overdue_tasks_escalate_too(conn):
    make(conn, "blk", priority="P2", due_at="2026-08-21T08:00:00Z")
    tasks.update(conn, "blk", status="blocked")
    assert [e["task_id"] for e in sweeps.escalate(conn)["escalated"]] == ["blk"]
