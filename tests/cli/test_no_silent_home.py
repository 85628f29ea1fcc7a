"""No home is ever created by anything but ``init``: every front door, hook and setup run
against a missing home refuses (or, for hooks, answers nothing) and leaves no new file."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

EVENT = json.dumps({"session_id": "s-1", "cwd": "/", "hook_event_name": "SessionStart", "source": "startup"})
FIRST_TURN = json.dumps({"hook_event_name": "pre_llm_call", "session_id": "s-1", "extra": {"is_first_turn": True}})
MCP_CALLS = "\n".join(json.dumps(m) for m in (
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list", "arguments": {}}},
)) + "\n"

CALLS = [
    ("autopilot.py", ["list"], ""),
    ("autopilot.py", ["create", "--project", "P", "--title", "t"], ""),
    ("autopilot.py", ["prime", "--agent", "a"], ""),
    ("autopilot.py", ["session-start", "--hook", "claude"], EVENT),
    ("autopilot.py", ["stop-gate", "--hook", "claude"], json.dumps({"session_id": "s-1", "stop_hook_active": False})),
    ("autopilot.py", ["recall", "t-1", "--agent", "a"], ""),
    ("autopilot.py", ["dashboard"], ""),
    ("autopilot.py", ["metrics"], ""),
    ("autopilot.py", ["setup", "check"], ""),
    ("ops.py", ["recover"], ""),
    ("ops.py", ["secret-scan"], ""),
    ("mood_poller.py", ["tick", "--dry-run"], ""),
    ("mindos_gateway_hook.py", [], FIRST_TURN),
]


def _files(root):
    return sorted(os.path.relpath(os.path.join(base, name), root)
                  for base, dirs, files in os.walk(root) for name in files + dirs)


def _env(tmp_path, variant):
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_AUTOPILOT_HOME", "MINDOS_HOME", "MINDOS_NOW")}
    env.update(HOME=str(tmp_path / "user"), AUTOPILOT_HOME_SELECTOR=str(tmp_path / "no-selector.json"),
               HERMES_HOME=str(tmp_path / "user" / ".hermes-none"))
    if variant == "pinned":
        env["HERMES_AUTOPILOT_HOME"] = str(tmp_path / "user" / "missing-home")
    return env  # "default": ~/.hermes/autopilot under the temporary HOME


def _run(argv, stdin, env, cwd):
    return subprocess.run([sys.executable, *argv], input=stdin, capture_output=True, text=True, timeout=60,
                          env=env, cwd=cwd)


@pytest.mark.slow
@pytest.mark.bare_home
@pytest.mark.parametrize("variant", ["pinned", "default"])
def test_no_door_or_hook_creates_a_home(tmp_path, variant):
    (tmp_path / "user").mkdir()
    env = _env(tmp_path, variant)
    before = _files(tmp_path)
    for door, argv, stdin in CALLS:
        done = _run([os.path.join(ROOT, door), *argv], stdin, env, str(tmp_path / "user"))
        where = f"{door} {' '.join(argv)}"
        assert "Traceback" not in done.stderr, where
        if door == "mindos_gateway_hook.py":  # a hook never breaks the agent: nothing injected, why on stderr
            assert done.returncode == 0 and json.loads(done.stdout) == {}, where
            assert "no MindOS database" in done.stderr and done.stderr.count("\n") == 1, where
        else:
            assert done.returncode != 0 and done.stdout == "" or door == "autopilot.py" and argv[:2] == ["setup", "check"], where
        assert _files(tmp_path) == before, f"{where} created {sorted(set(_files(tmp_path)) - set(before))}"


@pytest.mark.slow
@pytest.mark.bare_home
def test_setup_pins_a_missing_home_without_creating_it(tmp_path):
    (tmp_path / "user").mkdir()
    project = tmp_path / "proj"
    project.mkdir()
    env = _env(tmp_path, "pinned")
    for harness in ("claude", "codex"):
        done = _run([os.path.join(ROOT, "autopilot.py"), "setup", harness, "--project-dir", str(project)], "", env,
                    str(project))
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["home"]["path"] == env["HERMES_AUTOPILOT_HOME"] and report["home"]["database"] is False
    assert not os.path.exists(env["HERMES_AUTOPILOT_HOME"])
    # the installed hook, run as Claude Code runs it, refuses and creates nothing either
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    done = subprocess.run(command, shell=True, input=EVENT, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1 and done.stdout == "" and "no MindOS database" in done.stderr
    assert not os.path.exists(env["HERMES_AUTOPILOT_HOME"])


@pytest.mark.slow
@pytest.mark.bare_home
def test_the_mcp_server_creates_no_home(tmp_path):
    (tmp_path / "user").mkdir()
    env = _env(tmp_path, "pinned")
    before = _files(tmp_path)
    done = _run(["-m", "mindos.mcp"], MCP_CALLS, {**env, "PYTHONPATH": ROOT}, str(tmp_path / "user"))
    assert "Traceback" not in done.stderr
    assert _files(tmp_path) == before
