"""``autopilot.py demo``: the tour runs, narrates every step, and leaves nothing behind."""

import glob
import json
import os
import shutil
import tempfile

import pytest
from conftest import script

from mindos.demo import tour
from mindos.store import db, ledger

STEP_NAMES = [step.__name__.lstrip("_").replace("_", "-") for step in tour.STEPS]
FAKE_KEY = "AKIAIOSFODNN7EXAMPLE"
pytestmark = pytest.mark.bare_home  # the demo must never create the home


def _demo_dirs(tmp=None):
    """The demo homes in ``tmp`` (default: the temp directory); a test that asserts the demo
    removed its home gives the demo a private one, so other runs' demos cannot be counted."""
    return set(glob.glob(os.path.join(str(tmp or tempfile.gettempdir()), "mindos-demo-*")))


def test_run_returns_every_step_and_removes_its_home(home, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = _demo_dirs(tmp_path)
    result = tour.run()
    assert [step["step"] for step in result["steps"]] == STEP_NAMES
    assert os.path.dirname(result["home"]) == str(tmp_path) and not os.path.exists(result["home"])
    assert _demo_dirs(tmp_path) == before
    assert not home.exists(), "the demo must never create the user's home"
    assert os.environ["HERMES_AUTOPILOT_HOME"] == str(home), "the caller's home selection is restored"


def test_steps_carry_the_facts_they_narrate():
    steps = {step["step"]: step["data"] for step in tour.run()["steps"]}
    assert [t["id"] for t in steps["create"]["tasks"]] == [t[0] for t in tour.TASKS]
    assert "autopilot-safe" in steps["create"]["tagged"]["tags"]
    assert steps["search"]["hits"] == ["demo-schema"]
    assert steps["plan"]["waves"][0] == ["demo-schema"]
    assert steps["plan"]["waves_total"] == len(steps["plan"]["critical_path"]) == 3
    fencing = steps["fencing"]
    assert fencing["current_epoch"] == fencing["stale_epoch"] + 1
    assert fencing["refused"].startswith(
        f"lease superseded (held epoch {fencing['stale_epoch']}, current {fencing['current_epoch']})")
    assert steps["complete"]["status"] == "completed"
    assert steps["complete"]["newly_unblocked"] == ["demo-retry", "demo-tests"]
    # P1 beats P2 among the ready autopilot-safe tasks
    assert steps["next-claim"]["task_id"] == "demo-retry"
    assert steps["next-claim"]["owner"] == "codex"
    assert steps["notes"]["stored"] == 2
    assert "secret guard" in steps["notes"]["refused"] and FAKE_KEY not in steps["notes"]["refused"]
    assert steps["handoff"]["acked_by"] == "claude-code"
    context = steps["context"]
    assert context["used_chars"] <= 4000 and context["truncated"] is False
    assert context["notes"] == list(reversed(steps["notes"]["note_ids"])), "the pinned note packs first"
    recalled = steps["recall"]
    assert recalled["fresh"] is False and recalled["current_digest"] != recalled["digest"]
    assert recalled["sections_changed"] == ["notes"] and len(recalled["notes_added"]) == 1
    stall = steps["stall"]
    assert (stall["stalled"], stall["findings"], stall["repairs"], stall["state"], stall["decisions"]) == (
        True, ["demo-tests"], ["stalled-lease-escalate"], "decision_needed", ["stalled_lease_escalated"])
    assert steps["verify-chain"]["ok"] is True
    for action in ("created", "task_tagged", "claimed", "heartbeat", "lease_released", "receipt_added",
                   "completed", "note_added", "secret_blocked", "handoff_recorded", "handoff_acknowledged",
                   "context_recalled", "lease_stall_escalated", "repair_applied", "nanny_tick"):
        assert action in steps["verify-chain"]["actions"]


def test_the_demo_puts_the_callers_clock_back():
    from mindos.core import clock

    before = clock.pinned()
    tour.run()
    assert clock.pinned() == before
    clock.set_now(None)
    try:
        tour.run()
        assert clock.pinned() is None
    finally:
        clock.set_now(before)


def test_keep_leaves_a_verifiable_home_without_the_secret():
    result = tour.run(keep=True)
    try:
        assert result["kept"] is True
        assert f"home kept at {result['home']}" in result["narrative"]
        conn = db.connect(result["home"])
        try:
            assert ledger.verify_chain(conn)["ok"] is True
            assert conn.execute("SELECT count(*) FROM tasks WHERE project = 'demo'").fetchone()[0] == len(tour.TASKS)
            stored = " ".join(r[0] for r in conn.execute("SELECT content FROM notes"))
            trail = " ".join(r[0] for r in conn.execute("SELECT payload_json FROM audit_events"))
            assert FAKE_KEY not in stored and FAKE_KEY not in trail
            receipts = conn.execute("SELECT path FROM receipts").fetchall()
            # rows store paths relative to the home, so the files must be inside it
            assert receipts and all(os.path.isfile(os.path.join(result["home"], r[0])) for r in receipts)
        finally:
            conn.close()
    finally:
        shutil.rmtree(result["home"], ignore_errors=True)


def test_cli_narrative_mentions_each_step(cli, home):
    rc, out, err = cli("autopilot", "demo")
    assert rc == 0
    assert err == ""
    for number, step in enumerate(tour.STEPS, 1):
        assert f"\n{number:2d}. " in out
    for phrase in ("wave 1: demo-schema", "lease superseded", "newly unblocked: demo-retry, demo-tests",
                   "-> demo-retry (P1)", "secret guard", "codex -> claude-code", "claude-code acknowledged",
                   "pinned first", "alive but stalled: true", "1 stalled_lease finding(s) on demo-tests",
                   "the nanny ran stalled-lease-escalate and reports decision_needed", "chain ok", "has been removed"):
        assert phrase in out
    assert FAKE_KEY not in out
    assert not home.exists()


def test_cli_json_is_structured(cli_json, home):
    data = cli_json("autopilot", "demo", "--json")
    assert [s["step"] for s in data["steps"]] == STEP_NAMES
    assert "narrative" not in data
    assert data["kept"] is False and not os.path.exists(data["home"])
    assert not home.exists()


def test_cli_rejects_unknown_flags(cli, home):
    rc, out, err = cli("autopilot", "demo", "--bogus")
    assert rc == 2
    assert out == ""
    assert "unrecognized arguments: --bogus" in err
    assert not home.exists()


def test_real_front_door_runs_the_demo(home, tmp_path):
    private = tmp_path / "tmp"
    private.mkdir()
    before = _demo_dirs(private)
    proc = script("autopilot.py", "demo", "--json", home=home, env={"TMPDIR": str(private)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    data = json.loads(proc.stdout)
    assert data["steps"][-1]["data"]["ok"] is True
    assert os.path.dirname(data["home"]) == str(private)  # it ran in the private temp directory
    assert _demo_dirs(private) == before
    assert not home.exists()


def test_an_existing_home_is_left_exactly_as_it_was(conn, cli, home):
    from mindos.work import tasks

    tasks.create(conn, project="mine", title="My own task", task_id="t-mine")
    before = sorted(os.listdir(home))
    events = conn.execute("SELECT count(*), max(hash) FROM audit_events").fetchone()
    rc, out, err = cli("autopilot", "demo", "--keep")
    assert rc == 0 and err == ""
    kept = out.strip().splitlines()[-1].removeprefix("home kept at ")
    try:
        assert kept != str(home) and os.path.isdir(kept)
        assert sorted(os.listdir(home)) == before
        assert tuple(conn.execute("SELECT count(*), max(hash) FROM audit_events").fetchone()) == tuple(events)
        assert [r[0] for r in conn.execute("SELECT id FROM tasks")] == ["t-mine"]
    finally:
        shutil.rmtree(kept, ignore_errors=True)
