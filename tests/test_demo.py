"""``autopilot.py demo``: the tour runs, narrates every step, and leaves nothing behind."""

import glob
import json
import os
import tempfile

from conftest import script

from mindos import demo

STEP_NAMES = [step.__name__.lstrip("_").replace("_", "-") for step in demo.STEPS]


def _demo_dirs():
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "mindos-demo-*")))


def test_run_returns_every_step_and_removes_its_home(home):
    before = _demo_dirs()
    result = demo.run()
    names = [step["step"] for step in result["steps"]]
    assert names == STEP_NAMES
    assert not os.path.exists(result["home"])
    assert _demo_dirs() == before
    assert not home.exists(), "the demo must never create the user's home"
    assert os.environ["HERMES_AUTOPILOT_HOME"] == str(home), "the caller's home selection is restored"


def test_steps_carry_the_facts_they_narrate():
    steps = {step["step"]: step for step in demo.run()["steps"]}
    assert [t["id"] for t in steps["create"]["data"]["tasks"]] == [t[0] for t in demo.TASKS]
    assert steps["plan"]["data"]["waves"][0] == ["demo-schema"]
    assert steps["plan"]["data"]["waves_total"] == len(steps["plan"]["data"]["critical_path"]) == 3
    fencing = steps["fencing"]["data"]
    assert fencing["current_epoch"] == fencing["stale_epoch"] + 1
    assert fencing["refused"].startswith(f"lease superseded (held epoch {fencing['stale_epoch']}, current")
    assert steps["handoff"]["data"]["acked_by"] == "codex"
    assert steps["context"]["data"]["used_chars"] <= 4000
    assert steps["verify-chain"]["data"]["ok"] is True
    assert steps["verify-chain"]["data"]["events"] > len(demo.TASKS)


def test_keep_leaves_a_verifiable_home(tmp_path):
    result = demo.run(keep=True)
    try:
        assert result["kept"] is True
        assert os.path.isfile(os.path.join(result["home"], "state.db"))
        assert f"home kept at {result['home']}" in result["narrative"]
        from mindos import audit, db

        conn = db.connect(result["home"])
        try:
            assert audit.verify_chain(conn)["ok"] is True
            assert conn.execute("SELECT count(*) FROM tasks WHERE project = 'demo'").fetchone()[0] == len(demo.TASKS)
        finally:
            conn.close()
    finally:
        import shutil

        shutil.rmtree(result["home"], ignore_errors=True)


def test_cli_narrative_mentions_each_step(cli, home):
    rc, out, err = cli("autopilot", "demo")
    assert rc == 0
    assert err == ""
    for number, step in enumerate(demo.STEPS, 1):
        assert f"\n{number}. " in out
    for phrase in ("wave 1: demo-schema", "lease superseded", "hermes -> codex", "codex acknowledged",
                   "chain ok", "has been removed"):
        assert phrase in out
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
    before = _demo_dirs()
    proc = script("autopilot.py", "demo", "--json", home=home)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    data = json.loads(proc.stdout)
    assert data["steps"][-1]["data"]["ok"] is True
    assert _demo_dirs() == before
    assert not home.exists()
