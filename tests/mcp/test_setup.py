"""setup claude | codex: merge never clobbers, idempotent, reversible, dry-run, exact report."""

import json
import os
import tomllib

import pytest

from mindos.errors import InvalidInput, Refused
from mindos.mcp import setup

CLAUDE_SETTINGS = {
    "permissions": {"allow": ["Bash(ls)"]},
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo mine"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
    },
}


def _tree(root):
    found = {}
    for base, _, files in os.walk(root):
        for name in files:
            path = os.path.join(base, name)
            with open(path, encoding="utf-8") as handle:
                found[os.path.relpath(path, root)] = handle.read()
    return found


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text(json.dumps(CLAUDE_SETTINGS, indent=2) + "\n")
    (root / ".codex").mkdir()
    (root / ".codex" / "config.toml").write_text('model = "o4"\n\n[mcp_servers.other]\ncommand = "npx"\n')
    (root / "AGENTS.md").write_text("# Rules\n\nBe kind.\n")
    return root


def test_claude_merges_idempotent_and_reversible(project):
    before = _tree(project)
    report = setup.setup("claude", project_dir=str(project))
    assert report["changed"] and [c["action"] for c in report["files"][0]["changes"]] == ["add", "add"]
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == CLAUDE_SETTINGS["permissions"]
    assert settings["hooks"]["PreToolUse"] == CLAUDE_SETTINGS["hooks"]["PreToolUse"]
    start = settings["hooks"]["SessionStart"]
    assert start[0] == CLAUDE_SETTINGS["hooks"]["SessionStart"][0]  # theirs first, untouched
    ours = start[1]["hooks"][0]
    assert ours["type"] == "command" and " prime --agent claude-code " in ours["command"] and ours["timeout"] == 15
    assert settings["hooks"]["PreCompact"][0]["hooks"][0]["command"].startswith("MINDOS_HOOK=PreCompact ")
    after_first = _tree(project)
    again = setup.setup("claude", project_dir=str(project))
    assert again["changed"] is False and again["files"][0]["diff"] == "" and _tree(project) == after_first
    removed = setup.setup("claude", project_dir=str(project), remove=True)
    assert [c["action"] for c in removed["files"][0]["changes"]] == ["remove", "remove"]
    assert json.loads((project / ".claude" / "settings.json").read_text()) == CLAUDE_SETTINGS
    assert _tree(project) == before
    assert setup.setup("claude", project_dir=str(project), remove=True)["changed"] is False


def test_claude_dry_run_reports_and_writes_nothing(project):
    before = _tree(project)
    report = setup.setup("claude", project_dir=str(project), dry_run=True)
    assert report["dry_run"] and report["changed"] and _tree(project) == before
    added = [line for line in report["files"][0]["diff"].splitlines() if line.startswith("+")]
    assert any('"command": "MINDOS_HOOK=SessionStart' in line for line in added)


def test_claude_agent_change_updates_in_place(project):
    setup.setup("claude", project_dir=str(project))
    report = setup.setup("claude", project_dir=str(project), agent="reviewer")
    assert [c["action"] for c in report["files"][0]["changes"]] == ["update", "update"]
    text = (project / ".claude" / "settings.json").read_text()
    assert text.count("MINDOS_HOOK=") == 2 and "--agent reviewer" in text


def test_claude_creates_and_deletes_a_file_it_owns(tmp_path):
    report = setup.setup("claude", project_dir=str(tmp_path))
    path = tmp_path / ".claude" / "settings.json"
    assert report["files"][0]["file"] == "create" and path.exists()
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    assert setup.setup("claude", project_dir=str(tmp_path), remove=True)["files"][0]["file"] == "delete"
    assert not path.exists()


def test_claude_user_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    report = setup.setup("claude", user=True)
    assert report["files"][0]["path"] == str(tmp_path / ".claude" / "settings.json")


@pytest.mark.parametrize("content, match", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "does not hold a JSON object"),
    ('{"hooks": []}', "'hooks' is not an object"),
    ('{"hooks": {"SessionStart": {}}}', "'hooks.SessionStart' is not a list"),
])
def test_claude_refuses_what_it_cannot_merge_and_touches_nothing(tmp_path, content, match):
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(Refused, match=match):
        setup.setup("claude", project_dir=str(tmp_path))
    assert path.read_text() == content


def test_codex_mcp_entry_and_agents_section_reversible(project):
    before = _tree(project)
    report = setup.setup("codex", project_dir=str(project))
    assert [f["changes"][0]["action"] for f in report["files"]] == ["add", "add"]
    config = tomllib.loads((project / ".codex" / "config.toml").read_text())
    assert config["model"] == "o4" and config["mcp_servers"]["other"] == {"command": "npx"}
    command, args, env = setup.mcp_server_entry()
    assert config["mcp_servers"]["mindos"]["command"] == command and config["mcp_servers"]["mindos"]["args"] == args
    agents = (project / "AGENTS.md").read_text()
    assert agents.startswith("# Rules\n\nBe kind.\n") and "recall" in agents.lower() and "handoff" in agents
    after = _tree(project)
    assert setup.setup("codex", project_dir=str(project))["changed"] is False and _tree(project) == after
    setup.setup("codex", project_dir=str(project), remove=True)
    assert _tree(project) == before


def test_codex_into_an_empty_project_then_out_again(tmp_path):
    empty = tmp_path / "empty"  # not tmp_path itself: the test home lives there
    empty.mkdir()
    report = setup.setup("codex", project_dir=str(empty), dry_run=True)
    assert [f["file"] for f in report["files"]] == ["create", "create"] and _tree(empty) == {}
    setup.setup("codex", project_dir=str(empty))
    assert sorted(_tree(empty)) == [".codex/config.toml", "AGENTS.md"]
    setup.setup("codex", project_dir=str(empty), remove=True)
    assert _tree(empty) == {}


def test_codex_user_config_follows_codex_home(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "ch"))
    report = setup.setup("codex", user=True)
    assert [f["path"] for f in report["files"]] == [str(tmp_path / "ch" / "config.toml"),
                                                     str(tmp_path / "ch" / "AGENTS.md")]


@pytest.mark.parametrize("content, match", [
    ('[mcp_servers.mindos]\ncommand = "theirs"\n', "that setup did not write"),
    ("this is = = not toml", "not valid TOML"),
    (setup.TOML_BEGIN + "\n[mcp_servers.mindos]\n", "no end marker"),
])
def test_codex_refuses_what_it_cannot_merge(tmp_path, content, match):
    path = tmp_path / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(Refused, match=match):
        setup.setup("codex", project_dir=str(tmp_path))
    assert path.read_text() == content and not (tmp_path / "AGENTS.md").exists()


def test_invalid_setup_requests(tmp_path):
    with pytest.raises(InvalidInput, match="not a directory"):
        setup.setup("claude", project_dir=str(tmp_path / "missing"))
    with pytest.raises(InvalidInput, match="exclusive"):
        setup.setup("claude", project_dir=str(tmp_path), user=True)
    with pytest.raises(InvalidInput, match="unknown harness"):
        setup.setup("cursor", project_dir=str(tmp_path))


def test_cli_setup_prints_the_report(tmp_path, cli):
    rc, out, err = cli("autopilot", "setup", "claude", "--project-dir", str(tmp_path), "--dry-run")
    assert rc == 0 and err == "" and json.loads(out)["dry_run"] is True
    rc, out, err = cli("autopilot", "setup", "claude", "--user", "--project-dir", str(tmp_path))
    assert rc == 2 and out == "" and "not allowed with argument" in err


def test_the_hook_command_runs_prime(tmp_path, home):
    import subprocess

    command = setup.hook_command("claude-code", "SessionStart")
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, HERMES_AUTOPILOT_HOME=str(home)))
    assert done.returncode == 0 and done.stdout.startswith("# MindOS prime for claude-code digest=")


@pytest.fixture
def hermes_home(tmp_path, monkeypatch):
    base = tmp_path / "hermes"
    base.mkdir()
    (base / "config.yaml").write_text("model: anthropic/claude\nplatform_toolsets:\n  cli: [web]\n")
    monkeypatch.setenv("HERMES_HOME", str(base))
    return base


def test_hermes_hook_and_config_block_reversible(hermes_home, home):
    import shlex
    import subprocess

    before = _tree(hermes_home)
    report = setup.setup("hermes")
    assert [f["file"] for f in report["files"]] == ["create", "update"]
    hook = hermes_home / "mindos" / "mindos_gateway_hook.py"
    assert hook.stat().st_mode & 0o111
    config = (hermes_home / "config.yaml").read_text()
    assert config.startswith("model: anthropic/claude\nplatform_toolsets:\n  cli: [web]\n")
    assert f"    - command: {hook}" in config and "  context_pack_max_bytes: 4096" in config
    assert setup.setup("hermes")["changed"] is False
    # Hermes runs the command with shlex.split and no shell: the shim answers a first turn
    done = subprocess.run(shlex.split(str(hook)), input='{"hook_event_name": "pre_llm_call", "session_id": "s",'
                          ' "extra": {"is_first_turn": true}}', capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, HERMES_AUTOPILOT_HOME=str(home)))
    assert done.returncode == 0 and json.loads(done.stdout)["context"].startswith("# MindOS prime for hermes")
    removed = setup.setup("hermes", remove=True)
    assert [f["file"] for f in removed["files"]] == ["delete", "update"]
    assert _tree(hermes_home) == before and not (hermes_home / "mindos").exists()


@pytest.mark.parametrize("content", ["hooks: {}\n", "model: x\nmindos_bridge:\n  context_pack: false\n"])
def test_hermes_refuses_a_config_with_its_own_hooks(hermes_home, content):
    (hermes_home / "config.yaml").write_text(content)
    with pytest.raises(Refused, match="already has a top-level"):
        setup.setup("hermes")
    assert (hermes_home / "config.yaml").read_text() == content and not (hermes_home / "mindos").exists()


def test_hermes_refuses_a_hook_file_it_did_not_write(hermes_home):
    (hermes_home / "mindos").mkdir()
    (hermes_home / "mindos" / "mindos_gateway_hook.py").write_text("print('mine')\n")
    with pytest.raises(Refused, match="not written by setup hermes"):
        setup.setup("hermes")
    with pytest.raises(InvalidInput, match="does not apply"):
        setup.setup("hermes", project_dir=str(hermes_home))
