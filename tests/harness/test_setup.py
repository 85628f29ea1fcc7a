"""setup claude | codex | hermes: merge never clobbers, idempotent, reversible byte for byte,
dry-run, exact report, the home pinned, symlinks followed, nothing machine-specific in shared files."""

import json
import os
import sys
import tomllib

import pytest

from mindos.errors import InvalidInput, Refused
from mindos.harness import setup


@pytest.fixture(autouse=True)
def user_home(tmp_path, monkeypatch):
    """Every test gets its own HOME: setup claude writes ~/.claude.json."""
    path = tmp_path / "user"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "HERMES_HOME"):
        monkeypatch.delenv(name, raising=False)
    return path

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


def _local(project):
    return json.loads((project / ".claude" / "settings.local.json").read_text())


def test_claude_merges_idempotent_and_reversible(project, user_home, home):
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"permissions": {"allow": ["Bash(make)"]}},
                                                                        indent=2) + "\n")
    (project / "CLAUDE.md").write_text("# House rules\n\nNo force pushes.\n")
    claude_json = user_home / ".claude.json"  # the layout Claude Code writes: indent 2, no final newline
    claude_json.write_text(json.dumps({"numStartups": 3, "projects": {str(project): {"mcpServers": {},
                                                                                      "allowedTools": []}}}, indent=2))
    before = {**_tree(project), ".claude.json": claude_json.read_text()}
    report = setup.setup("claude", project_dir=str(project))
    assert report["changed"] and report["home"] == {"path": str(home), "rule": "HERMES_AUTOPILOT_HOME", "database": True}
    assert [f["path"] for f in report["files"]] == [str(project / ".claude" / "settings.local.json"),
                                                   str(claude_json), str(project / "CLAUDE.md")]
    local = _local(project)
    assert local["permissions"] == {"allow": ["Bash(make)"]}
    starts = local["hooks"]["SessionStart"]
    assert [g["matcher"] for g in starts] == ["startup", "resume", "clear", "compact"]
    assert "PreCompact" not in local["hooks"] and "Stop" not in local["hooks"]
    ours = starts[0]["hooks"][0]
    assert ours["type"] == "command" and ours["timeout"] == 15
    assert f"HERMES_AUTOPILOT_HOME={home} " in ours["command"] and " session-start --hook claude " in ours["command"]
    assert "--agent" not in ours["command"]  # the hook names the session
    server = json.loads(claude_json.read_text())["projects"][str(project)]["mcpServers"]["mindos"]
    assert server["env"]["HERMES_AUTOPILOT_HOME"] == str(home) and server["type"] == "stdio"
    assert json.loads(claude_json.read_text())["numStartups"] == 3
    memory = (project / "CLAUDE.md").read_text()
    assert memory.startswith("# House rules\n\nNo force pushes.\n")
    assert "recall -> claim -> act -> note -> receipt -> complete -> handoff" in memory
    # the shared, committed settings were not touched at all
    assert json.loads((project / ".claude" / "settings.json").read_text()) == CLAUDE_SETTINGS
    after_first = {**_tree(project), ".claude.json": claude_json.read_text()}
    again = setup.setup("claude", project_dir=str(project))
    assert again["changed"] is False and all(f["diff"] == "" for f in again["files"])
    assert {**_tree(project), ".claude.json": claude_json.read_text()} == after_first
    removed = setup.setup("claude", project_dir=str(project), remove=True)
    assert [c["action"] for f in removed["files"] for c in f["changes"]] == ["remove"] * 6
    assert {**_tree(project), ".claude.json": claude_json.read_text()} == before  # byte for byte
    assert setup.setup("claude", project_dir=str(project), remove=True)["changed"] is False


def test_claude_project_files_meant_for_git_hold_nothing_machine_specific(project, user_home, home):
    setup.setup("claude", project_dir=str(project), stop_gate=True)
    for shared in (project / "CLAUDE.md", project / ".claude" / "settings.json"):
        text = shared.read_text()
        assert setup.ROOT not in text and sys.executable not in text and str(home) not in text
        assert str(user_home) not in text
    local = (project / ".claude" / "settings.local.json").read_text()
    assert setup.ROOT in local and str(home) in local  # machine paths live in the personal file


def test_claude_moves_an_earlier_setups_hooks_out_of_the_shared_settings(project, home):
    legacy = json.loads(json.dumps(CLAUDE_SETTINGS))
    legacy["hooks"]["SessionStart"].append({"matcher": "", "hooks": [{"type": "command", "timeout": 15,
                                            "command": "MINDOS_HOOK=SessionStart /usr/bin/python3 /x/autopilot.py prime"
                                                       " --agent claude-code"}]})
    legacy["hooks"]["PreCompact"] = [{"matcher": "", "hooks": [{"type": "command", "command": "MINDOS_HOOK=PreCompact x"}]}]
    (project / ".claude" / "settings.json").write_text(json.dumps(legacy, indent=2) + "\n")
    report = setup.setup("claude", project_dir=str(project))
    shared = [f for f in report["files"] if f["path"].endswith("settings.json")][0]
    assert [c["action"] for c in shared["changes"]] == ["remove", "remove"]
    assert json.loads((project / ".claude" / "settings.json").read_text()) == CLAUDE_SETTINGS


def test_claude_stop_gate_is_opt_in(project, home):
    setup.setup("claude", project_dir=str(project), stop_gate=True)
    stop = _local(project)["hooks"]["Stop"]
    assert stop == [{"hooks": [{"type": "command", "timeout": 15, "command": setup.hook_command(None, "Stop", str(home))}]}]
    assert " stop-gate --hook claude " in stop[0]["hooks"][0]["command"]
    report = setup.setup("claude", project_dir=str(project))  # without the flag: the gate goes again
    assert [c["action"] for c in report["files"][0]["changes"]] == ["remove"]
    assert "Stop" not in _local(project)["hooks"]


def test_claude_dry_run_reports_and_writes_nothing(project, user_home):
    before = _tree(project)
    report = setup.setup("claude", project_dir=str(project), dry_run=True)
    assert report["dry_run"] and report["changed"] and _tree(project) == before
    assert not (user_home / ".claude.json").exists()
    added = [line for line in report["files"][0]["diff"].splitlines() if line.startswith("+")]
    assert any('"command": "MINDOS_HOOK=SessionStart' in line for line in added)


def test_claude_agent_change_updates_in_place(project):
    setup.setup("claude", project_dir=str(project))
    report = setup.setup("claude", project_dir=str(project), agent="reviewer")
    assert [c["action"] for c in report["files"][0]["changes"]] == ["update"] * 4
    text = (project / ".claude" / "settings.local.json").read_text()
    assert text.count("MINDOS_HOOK=") == 4 and text.count("--agent reviewer") == 4


def test_claude_creates_and_deletes_the_files_it_owns(tmp_path, user_home):
    empty = tmp_path / "empty"
    empty.mkdir()
    report = setup.setup("claude", project_dir=str(empty))
    assert [f["file"] for f in report["files"]] == ["create", "create", "create"]
    path = empty / ".claude" / "settings.local.json"
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    assert oct((user_home / ".claude.json").stat().st_mode & 0o777) == "0o600"
    removed = setup.setup("claude", project_dir=str(empty), remove=True)
    assert [f["file"] for f in removed["files"]] == ["delete", "delete", "delete"]
    assert _tree(empty) == {} and not (user_home / ".claude.json").exists()


def test_claude_pins_the_home_it_is_given_and_warns_without_a_database(project, tmp_path):
    elsewhere = tmp_path / "not-yet"
    report = setup.setup("claude", project_dir=str(project), home=str(elsewhere))
    assert report["home"]["path"] == str(elsewhere) and report["home"]["rule"] == "--home"
    assert report["home"]["database"] is False and "run 'init'" in report["home"]["warning"]
    assert f"HERMES_AUTOPILOT_HOME={elsewhere} " in _local(project)["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert not elsewhere.exists()  # setup never makes a home


def test_setup_follows_symlinked_config_files(project, tmp_path, user_home):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "settings.local.json").write_text('{\n  "env": {"A": "1"}\n}\n')
    (dotfiles / "AGENTS.md").write_text("# Shared rules\n")
    (dotfiles / "claude.json").write_text("{}")
    (project / ".claude" / "settings.local.json").symlink_to(dotfiles / "settings.local.json")
    (project / "CLAUDE.md").symlink_to(dotfiles / "AGENTS.md")
    (user_home / ".claude.json").symlink_to(dotfiles / "claude.json")
    report = setup.setup("claude", project_dir=str(project))
    assert report["files"][0]["symlink_to"] == str(dotfiles / "settings.local.json")
    for link in (project / ".claude" / "settings.local.json", project / "CLAUDE.md", user_home / ".claude.json"):
        assert link.is_symlink()
    assert "MINDOS_HOOK=" in (dotfiles / "settings.local.json").read_text()
    assert "mindos:begin" in (dotfiles / "AGENTS.md").read_text()
    assert "mindos.mcp" in (dotfiles / "claude.json").read_text()
    setup.setup("codex", project_dir=str(project))  # AGENTS.md is a regular file here; the link target stays one
    setup.setup("claude", project_dir=str(project), remove=True)
    assert (project / "CLAUDE.md").is_symlink() and (user_home / ".claude.json").is_symlink()
    assert (dotfiles / "settings.local.json").read_text() == '{\n  "env": {\n    "A": "1"\n  }\n}\n'
    assert (dotfiles / "AGENTS.md").read_text() == "# Shared rules\n"
    assert (dotfiles / "claude.json").read_text() == "{}"


def test_claude_refuses_an_mcp_server_it_did_not_write(project, user_home):
    theirs = {"mcpServers": {"mindos": {"command": "theirs"}}}
    (user_home / ".claude.json").write_text(json.dumps(theirs))
    with pytest.raises(Refused, match="that setup did not write"):
        setup.setup("claude", user=True)
    assert json.loads((user_home / ".claude.json").read_text()) == theirs


def test_claude_user_settings(user_home, home):
    report = setup.setup("claude", user=True)
    assert [f["path"] for f in report["files"]] == [str(user_home / ".claude" / "settings.json"),
                                                   str(user_home / ".claude.json"),
                                                   str(user_home / ".claude" / "CLAUDE.md")]
    assert json.loads((user_home / ".claude.json").read_text())["mcpServers"]["mindos"]["env"][
        "HERMES_AUTOPILOT_HOME"] == str(home)


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


def test_codex_mcp_entry_and_agents_section_reversible(project, home):
    before = _tree(project)
    report = setup.setup("codex", project_dir=str(project))
    assert [f["changes"][0]["action"] for f in report["files"]] == ["add", "add"]
    config = tomllib.loads((project / ".codex" / "config.toml").read_text())
    assert config["model"] == "o4" and config["mcp_servers"]["other"] == {"command": "npx"}
    command, args, env = setup.mcp_server_entry(str(home))
    assert config["mcp_servers"]["mindos"]["command"] == command and config["mcp_servers"]["mindos"]["args"] == args
    assert config["mcp_servers"]["mindos"]["env"]["HERMES_AUTOPILOT_HOME"] == str(home)  # Codex passes no MINDOS env
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
    assert not any("warning" in f for f in report["files"])  # user scope needs no project trust


def test_codex_project_scope_says_codex_must_trust_the_project(tmp_path):
    """Codex ignores an untrusted project's .codex/config.toml, MCP servers included: the
    report says so instead of leaving Codex silently without MindOS."""
    project = tmp_path / "proj"
    project.mkdir()
    report = setup.setup("codex", project_dir=str(project), dry_run=True)
    assert "trust" in report["files"][0]["warning"] and "--user" in report["files"][0]["warning"]


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


def test_the_hook_command_runs_prime_for_the_session_on_the_pinned_home(tmp_path, home):
    import subprocess

    command = setup.hook_command(None, "SessionStart", str(home))
    event = json.dumps({"session_id": "9f8e7d6c-5b4a", "cwd": str(tmp_path), "hook_event_name": "SessionStart",
                        "source": "startup"})
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_AUTOPILOT_HOME", "MINDOS_HOME")}
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60, input=event,
                          env={**env, "AUTOPILOT_HOME_SELECTOR": str(tmp_path / "none.json")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# MindOS prime for claude-code-9f8e7d6c digest=")


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
    assert f'os.environ["HERMES_AUTOPILOT_HOME"] = {str(home)!r}' in hook.read_text()  # pinned
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


def test_claude_warns_when_git_would_commit_the_personal_settings(tmp_path, monkeypatch):
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)  # no global excludes of this machine
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    report = setup.setup("claude", project_dir=str(repo))
    assert "git does not ignore it" in report["files"][0]["warning"]
    (repo / ".gitignore").write_text(".claude/settings.local.json\n")
    assert "warning" not in setup.setup("claude", project_dir=str(repo), agent="x")["files"][0]
