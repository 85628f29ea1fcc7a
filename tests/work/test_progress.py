"""Progress-aware heartbeats: action, intent, progress state, stall deadline and evidence on a
lease; stalled leases found (indexed), listed, counted, and escalated once."""

import json

import pytest

from conftest import last_event, make_task, refused_unchanged, script
from mindos.core import clock
from mindos.errors import InvalidInput, NotFound, Refused
from mindos.views import metrics, show
from mindos.work import leases, lifecycle, progress, receipts

AWS = "AKIA2R29TQLR0VLG5W1H"


@pytest.fixture
def held(conn):
    """Task t1 claimed by hermes for four hours (epoch 1)."""
    make_task(conn, "t1")
    leases.claim(conn, "t1", "hermes", minutes=240)
    return conn


def beat(conn, task_id="t1", owner="hermes", **kw):
    return leases.heartbeat(conn, task_id, owner, **kw)


def heartbeat_row(conn, task_id="t1"):
    return dict(conn.execute("SELECT * FROM heartbeats WHERE task_id = ?", (task_id,)).fetchone())


# ---------------------------------------------------------------------------------------
# Recording progress


def test_a_heartbeat_records_action_intent_state_deadline_and_evidence(held, cli_json):
    receipt = receipts.add(held, "t1", kind="ci", payload={"passed": 12})
    out = cli_json("autopilot", "heartbeat", "t1", "--owner", "hermes", "--epoch", "1", "--action", "running pytest",
                   "--intent", "prove the retry fix", "--progress-state", "tests-running", "--stall-deadline", "45",
                   "--evidence", receipt["receipt_id"])
    assert out["status"] == "running"
    assert out["heartbeat"] == {"owner": "hermes", "note": "", "at": "2026-08-21T09:00:00Z",
                                "action": "running pytest", "intent": "prove the retry fix", "evidence": receipt["receipt_id"]}
    assert out["progress"] == {"state": "tests-running", "changed": True, "changed_at": "2026-08-21T09:00:00Z",
                               "stall_deadline_minutes": 45, "stall_at": "2026-08-21T09:45:00Z", "stalled": False,
                               "escalated_at": None}
    row = heartbeat_row(held)
    assert (row["lease_epoch"], row["progress_state"], row["stall_minutes"], row["evidence"]) == (
        1, "tests-running", 45, receipt["receipt_id"])
    event = last_event(held, "heartbeat")
    assert event["action"] == "running pytest" and event["intent"] == "prove the retry fix"
    assert event["evidence"] == receipt["receipt_id"] and event["progress_state"] == "tests-running"
    assert event["progress_changed"] is True and event["stall_at"] == "2026-08-21T09:45:00Z"
    assert event["stall_deadline_minutes"] == 45 and event["stalled"] is False


def test_a_plain_heartbeat_still_works_and_its_event_is_unchanged(held, cli_json):
    out = cli_json("autopilot", "heartbeat", "t1", "--owner", "hermes", "--note", "verifying")
    assert out["progress"]["state"] == "" and out["progress"]["stall_at"] is None
    assert out["progress"]["stalled"] is False
    assert set(last_event(held, "heartbeat")) == {"owner", "lease_epoch", "lease_expires_at", "previous_status", "note"}


def test_re_sending_the_same_state_is_a_retry_that_moves_nothing_but_the_lease(held, cli_json):
    argv = ("autopilot", "heartbeat", "t1", "--owner", "hermes", "--progress-state", "editing", "--stall-deadline",
            "30", "--action", "editing leases.py")
    first = cli_json(*argv)
    clock.advance(minutes=10)
    again = cli_json(*argv)
    assert again["progress"] == {**first["progress"], "changed": False}
    assert again["progress"]["changed_at"] == "2026-08-21T09:00:00Z"
    assert again["heartbeat"]["at"] == "2026-08-21T09:10:00Z"
    before, after = heartbeat_row(held), None
    cli_json(*argv)
    after = heartbeat_row(held)
    assert after == before  # same instant, same arguments: the row is identical
    assert last_event(held, "heartbeat")["progress_changed"] is False


def test_a_new_state_restarts_the_stall_clock(held):
    beat(held, progress_state="planning", stall_deadline=20)
    clock.advance(minutes=15)
    moved = beat(held, progress_state="editing")
    assert moved["progress"]["changed"] is True
    assert moved["progress"]["changed_at"] == "2026-08-21T09:15:00Z"
    assert moved["progress"]["stall_at"] == "2026-08-21T09:35:00Z"  # the deadline is kept, from the change


def test_action_intent_evidence_and_deadline_are_kept_until_given_again(held):
    receipt = receipts.add(held, "t1", kind="ci", payload={"ok": True})
    beat(held, action="a1", intent="i1", evidence=receipt["receipt_id"], progress_state="s1", stall_deadline=30)
    out = beat(held, note="just alive")
    assert out["heartbeat"]["action"] == "a1" and out["heartbeat"]["intent"] == "i1"
    assert out["heartbeat"]["evidence"] == receipt["receipt_id"] and out["progress"]["stall_deadline_minutes"] == 30
    out = beat(held, action="", stall_deadline=60)
    assert out["heartbeat"]["action"] == "" and out["progress"]["stall_at"] == "2026-08-21T10:00:00Z"


def test_a_new_lease_starts_without_the_previous_holders_progress(held):
    beat(held, progress_state="tests-running", stall_deadline=10, action="old holder")
    clock.advance(minutes=30)
    assert [row["task_id"] for row in progress.stalled(held)] == ["t1"]
    leases.release(held, "t1", "hermes")
    assert progress.stalled(held) == [] and show.show(held, "t1")["progress"] is None
    leases.claim(held, "t1", "codex", minutes=60)
    assert show.show(held, "t1")["progress"] is None
    out = beat(held, owner="codex", progress_state="tests-running")
    assert out["progress"]["changed"] is True and out["progress"]["stall_at"] is None
    assert out["heartbeat"]["action"] == ""


def test_a_transfer_starts_a_fresh_progress_record(held):
    beat(held, progress_state="s1", stall_deadline=10)
    clock.advance(minutes=11)
    assert len(progress.stalled(held)) == 1
    leases.transfer(held, "t1", "hermes", "codex")
    assert progress.stalled(held) == []


# ---------------------------------------------------------------------------------------
# Stalled leases: found, surfaced, counted


def test_a_live_lease_past_its_stall_deadline_is_stalled_everywhere(held, cli_json):
    make_task(held, "t2")
    leases.claim(held, "t2", "codex", minutes=240)
    beat(held, progress_state="tests-running", stall_deadline=30)
    beat(held, "t2", "codex", progress_state="editing", stall_deadline=120)
    clock.advance(minutes=29)
    assert progress.stalled(held) == []
    clock.advance(minutes=1)  # the deadline itself is the stall
    assert beat(held, progress_state="tests-running")["progress"]["stalled"] is True
    found = progress.stalled(held)
    assert [(row["task_id"], row["owner"], row["stall_at"]) for row in found] == [
        ("t1", "hermes", "2026-08-21T09:30:00Z")]
    listed = {entry["task_id"]: entry for entry in cli_json("autopilot", "leases")}
    assert listed["t1"]["stalled"] is True and listed["t2"]["stalled"] is False
    assert listed["t1"]["progress"]["state"] == "tests-running"
    assert [entry["task_id"] for entry in cli_json("autopilot", "leases", "--stalled")] == ["t1"]
    assert cli_json("autopilot", "leases", "--stalled", "--owner", "codex") == []
    view = cli_json("autopilot", "show", "t1")
    assert view["progress"]["stalled"] is True and view["progress"]["changed_at"] == "2026-08-21T09:00:00Z"
    counters = cli_json("autopilot", "metrics")
    assert counters["stalled_leases"] == 1 and counters["stalled_leases_escalated"] == 0
    sensed = cli_json("ops", "sense")
    assert sensed["by_kind"]["stalled_lease"] == 1
    assert [f["subjects"] for f in sensed["findings"] if f["kind"] == "stalled_lease"] == [["t1"]]


def test_expired_finished_and_deadline_free_leases_are_never_stalled(conn):
    for task_id in ("gone", "done", "free"):
        make_task(conn, task_id)
        leases.claim(conn, task_id, "hermes", minutes=240)
    beat(conn, "gone", progress_state="s", stall_deadline=5, minutes=15)
    conn.execute("UPDATE tasks SET lease_expires_at = ? WHERE id = 'gone'", (clock.shift(clock.now_iso(), 600),))
    beat(conn, "done", progress_state="s", stall_deadline=5)
    beat(conn, "free", progress_state="s")
    clock.advance(minutes=11)  # gone's lease has expired: a stale lease, recover's business
    lifecycle.complete(conn, "done", "hermes")
    assert progress.stalled(conn) == [] and metrics.collect(conn)["stalled_leases"] == 0


@pytest.mark.parametrize("query", [progress.STALLED_SQL, progress.STALLED_COUNT_SQL], ids=["list", "count"])
def test_the_stall_query_reads_only_held_leases_through_their_index(conn, query):
    plan = " | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {query}", ("x", "x")))
    assert "SCAN t USING INDEX idx_tasks_lease_owner" in plan, plan
    assert "SEARCH h USING INDEX sqlite_autoindex_heartbeats_1 (task_id=?)" in plan, plan
    assert "SCAN h" not in plan, plan


def test_the_stall_query_skips_progress_records_of_finished_leases(conn):
    """Earlier leases' records (a lived-in home keeps one per task ever heartbeated) are never
    read: the query starts from the held leases, so its cost does not grow with them."""
    def finished(first, last):
        for n in range(first, last):
            make_task(conn, f"old-{n}")
            leases.claim(conn, f"old-{n}", "hermes")
            beat(conn, f"old-{n}", progress_state="s", stall_deadline=1)
            lifecycle.complete(conn, f"old-{n}", "hermes")

    def steps():
        counted = []
        conn.set_progress_handler(lambda: counted.append(1), 1)
        try:
            assert progress.stalled(conn) == []
        finally:
            conn.set_progress_handler(None, 1)
        return len(counted)

    make_task(conn, "live")
    leases.claim(conn, "live", "codex", minutes=240)
    beat(conn, "live", "codex", progress_state="s", stall_deadline=60)
    finished(0, 5)
    clock.advance(minutes=5)
    few = steps()
    finished(5, 80)
    assert steps() == few


# ---------------------------------------------------------------------------------------
# Bad input: clear errors, the database unchanged


@pytest.mark.parametrize("argv, code, needle", [
    (["--progress-state", ""], 2, "--progress-state"),
    (["--progress-state", "Tests Running"], 2, "--progress-state"),
    (["--progress-state", "x" * 65], 2, "--progress-state"),
    (["--progress-state", "'; DROP TABLE tasks; --"], 2, "--progress-state"),
    (["--stall-deadline", "0"], 2, "--stall-deadline"),
    (["--stall-deadline", "43201"], 2, "--stall-deadline"),
    (["--stall-deadline", "-5"], 2, "--stall-deadline"),
    (["--stall-deadline", "ten"], 2, "--stall-deadline"),
    (["--stall-deadline", "+30"], 2, "--stall-deadline"),
    (["--action", "line one\nline two"], 2, "--action"),
    (["--intent", "x" * 1001], 2, "--intent"),
    (["--action", "bad\x00byte"], 2, "--action"),
    (["--evidence", "../etc/passwd"], 2, "--evidence"),
    (["--evidence", "r-missing"], 1, "unknown receipt 'r-missing'"),
])
def test_bad_progress_flags_are_refused_with_the_flag_named_and_nothing_stored(held, cli, argv, code, needle):
    before = heartbeat_row_or_none(held), held.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    rc, out, err = cli("autopilot", "heartbeat", "t1", "--owner", "hermes", *argv)
    assert (rc, out) == (code, "") and needle in err and len(err.strip().splitlines()) == 1, err
    assert (heartbeat_row_or_none(held), held.execute("SELECT count(*) FROM audit_events").fetchone()[0]) == before


def heartbeat_row_or_none(conn):
    row = conn.execute("SELECT * FROM heartbeats WHERE task_id = 't1'").fetchone()
    return tuple(row) if row else None


def test_evidence_must_be_a_receipt_of_the_same_task(held):
    make_task(held, "t2")
    other = receipts.add(held, "t2", kind="ci", payload={"ok": True})
    refused_unchanged(held, lambda: beat(held, evidence=other["receipt_id"]), InvalidInput,
                      f"receipt '{other['receipt_id']}' belongs to task 't2', not 't1'")
    refused_unchanged(held, lambda: beat(held, evidence="r-nope"), NotFound, "unknown receipt 'r-nope'")


def test_progress_flags_on_a_lease_you_do_not_hold_are_refused(held, cli):
    rc, _, err = cli("autopilot", "heartbeat", "t1", "--owner", "codex", "--progress-state", "s")
    assert rc == 1 and "leased by 'hermes'" in err
    rc, _, err = cli("autopilot", "heartbeat", "missing", "--owner", "codex", "--progress-state", "s")
    assert rc == 1 and "unknown task 'missing'" in err
    refused_unchanged(held, lambda: beat(held, epoch=7, progress_state="s"), Refused, "lease superseded")


@pytest.mark.parametrize("flag", ["--action", "--intent"])
def test_a_credential_in_action_or_intent_is_refused_and_audited(held, cli, flag):
    rc, out, err = cli("autopilot", "heartbeat", "t1", "--owner", "hermes", flag, f"using {AWS} now",
                       "--progress-state", "s", "--json-errors")
    assert rc == 1 and out == "" and json.loads(err)["error"]["code"] == "secret_blocked"
    assert AWS not in err
    blocked = last_event(held, "secret_blocked")
    assert blocked["fields"] == [flag.lstrip("-")]
    assert held.execute("SELECT count(*) FROM heartbeats").fetchone()[0] == 0


def test_a_credential_shaped_progress_state_is_refused(held, cli):
    rc, _, err = cli("autopilot", "heartbeat", "t1", "--owner", "hermes", "--progress-state",
                     "xoxb-2718281828-akia2r29tqlr0vlg5w1h")
    assert rc == 1 and "secret guard" in err
    assert held.execute("SELECT count(*) FROM heartbeats").fetchone()[0] == 0


# ---------------------------------------------------------------------------------------
# Escalation


def stall(conn, task_id="t1", owner="hermes", deadline=30):
    beat(conn, task_id, owner, progress_state="tests-running", stall_deadline=deadline)
    clock.advance(minutes=deadline + 1)


def test_escalate_stalled_escalates_each_stall_once_and_audits_it(held, cli_json):
    stall(held)
    planned = cli_json("ops", "escalate-stalled", "--dry-run")
    assert [entry["task_id"] for entry in planned["would_escalate"]] == ["t1"] and planned["escalated"] == []
    assert last_event(held, "lease_stall_escalated") is None
    done = cli_json("ops", "escalate-stalled")
    assert done["escalated"] == [{"task_id": "t1", "owner": "hermes", "lease_epoch": 1,
                                  "progress_state": "tests-running", "progress_changed_at": "2026-08-21T09:00:00Z",
                                  "stall_at": "2026-08-21T09:30:00Z"}]
    event = last_event(held, "lease_stall_escalated")
    assert event["owner"] == "hermes" and event["stall_deadline_minutes"] == 30 and event["reason"] == "stalled"
    again = cli_json("ops", "escalate-stalled")
    assert again["escalated"] == [] and again["already_escalated"] == ["t1"]
    assert held.execute("SELECT count(*) FROM audit_events WHERE action = 'lease_stall_escalated'").fetchone()[0] == 1
    assert cli_json("autopilot", "metrics")["stalled_leases_escalated"] == 1
    assert cli_json("autopilot", "show", "t1")["progress"]["escalated_at"] == "2026-08-21T09:31:00Z"


def test_an_escalated_stall_is_a_decision_until_progress_moves(held):
    from mindos.autonomy import sense

    stall(held)
    progress.escalate(held)
    report = sense.sense(held)
    found = [item for item in report["findings"] if item["kind"].startswith("stalled_lease")]
    assert [(item["kind"], item["severity"]) for item in found] == [("stalled_lease_escalated", "decision")]
    assert report["by_severity"]["decision"] == 1
    moved = beat(held, progress_state="fixing")
    assert moved["progress"]["escalated_at"] is None and moved["progress"]["stalled"] is False
    assert not [item for item in sense.sense(held)["findings"] if item["kind"].startswith("stalled_lease")]


def test_escalation_that_lost_a_race_is_skipped(held, monkeypatch):
    stall(held)
    real = progress.stalled

    def moved_on(conn, **kw):
        rows = real(conn, **kw)
        beat(held, progress_state="fixing")  # the holder moves on between the read and the write
        return rows

    monkeypatch.setattr(progress, "stalled", moved_on)
    report = progress.escalate(held)
    assert report["skipped"] == ["t1"] and report["escalated"] == []
    assert last_event(held, "lease_stall_escalated") is None


def test_a_subprocess_heartbeat_uses_the_package_clock(held, home):
    env = {"MINDOS_NOW": "2026-08-21T09:00:00Z"}
    proc = script("autopilot.py", "heartbeat", "t1", "--owner", "hermes", "--progress-state", "s",
                  "--stall-deadline", "5", home=home, env=env)
    assert proc.returncode == 0 and proc.stderr == ""
    proc = script("ops.py", "sense", home=home, env={"MINDOS_NOW": "2026-08-21T09:05:00Z"})
    assert json.loads(proc.stdout)["by_kind"].get("stalled_lease") == 1
    proc = script("autopilot.py", "heartbeat", "t1", "--owner", "hermes", "--progress-state", "s",
                  "--stall-deadline", "abc", home=home)
    assert proc.returncode == 2 and proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1
