"""setup check: per harness, the home setup pinned, the interpreter and version, the hook run
with a sample event within its timeout, and the MCP initialize handshake; exit 1 on any failure."""

import json

import pytest

import mindos
from mindos.harness import check, setup

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def user_home(tmp_path, monkeypatch):
    path = tmp_path / "user"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.setenv("HERMES_HOME", str(path / ".hermes"))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "proj"
    path.mkdir()
    return path


def test_claude_check_runs_the_hook_and_the_mcp_handshake(project, home):
    setup.setup("claude", project_dir=str(project))
    report = check.check("claude", project_dir=str(project))
    assert report["ok"] is True, report
    claude = report["harnesses"][0]
    assert claude["home"] == str(home) and claude["database"] is True and claude["version"] == mindos.__version__
    assert claude["hook"]["ok"] and claude["hook"]["seconds"] < claude["hook"]["timeout"] == setup.HOOK_TIMEOUT
    assert claude["mcp"]["ok"] and claude["mcp"]["server"] == "mindos" and claude["mcp"]["protocol"]


def test_codex_and_hermes_checks(project, home, user_home):
    (user_home / ".hermes").mkdir()
    (user_home / ".hermes" / "config.yaml").write_text("model: x\n")
    setup.setup("codex", project_dir=str(project))
    setup.setup("hermes")
    codex = check.check("codex", project_dir=str(project))["harnesses"][0]
    assert codex["ok"] and codex["home"] == str(home) and codex["mcp"]["ok"] and codex["hook"] is None, codex
    hermes = check.check("hermes")["harnesses"][0]
    assert hermes["ok"] and hermes["home"] == str(home) and hermes["hook"]["ok"] and hermes["mcp"] is None, hermes
    everything = check.check(None, project_dir=str(project))
    assert everything["ok"] and [h["harness"] for h in everything["harnesses"]] == ["codex", "hermes"]


def test_a_home_without_a_database_fails_the_check(project, tmp_path, cli):
    setup.setup("claude", project_dir=str(project), home=str(tmp_path / "nowhere"))
    rc, out, err = cli("autopilot", "setup", "check", "claude", "--project-dir", str(project))
    report = json.loads(out)
    assert rc == 1 and report["ok"] is False and err == ""
    claude = report["harnesses"][0]
    assert claude["database"] is False and claude["hook"]["ok"] is False and "no MindOS database" in claude["detail"]
    assert not (tmp_path / "nowhere").exists()


def test_a_broken_hook_fails_the_check(project, home):
    setup.setup("claude", project_dir=str(project))
    path = project / ".claude" / "settings.local.json"
    settings = json.loads(path.read_text())
    settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] = "MINDOS_HOOK=SessionStart exit 3"
    path.write_text(json.dumps(settings))
    claude = check.check("claude", project_dir=str(project))["harnesses"][0]
    assert claude["ok"] is False and claude["hook"]["ok"] is False and claude["hook"]["detail"].startswith("exit 3")


def test_nothing_set_up_fails(project, cli):
    rc, out, err = cli("autopilot", "setup", "check", "--project-dir", str(project))
    assert rc == 1 and json.loads(out)["ok"] is False and err == ""
    rc, out, err = cli("autopilot", "setup", "check", "codex", "--project-dir", str(project))
    report = json.loads(out)
    assert rc == 1 and report["harnesses"][0]["installed"] is False and "run setup codex" in report["harnesses"][0]["detail"]
    rc, out, err = cli("autopilot", "setup", "claude", "codex")
    assert rc == 2 and out == "" and "setup check codex" in err
    rc, out, err = cli("autopilot", "setup", "check", "claude", "--remove")
    assert rc == 2 and out == "" and "takes no --remove" in err
