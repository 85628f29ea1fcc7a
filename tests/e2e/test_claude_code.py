"""End to end with the real Claude Code CLI (pinned in tests/e2e/install.sh) and a scripted model.

After ``setup claude`` a user runs ``claude -p``; the model endpoint is ours (127.0.0.1), so
we see exactly what Claude Code sends and we decide what "the model" does: call the MindOS
MCP tools in the loop claim -> note -> receipt -> handoff, or end its turn.  The tests read
the outcome where a user would: the model's requests (did the pack reach it?) and
``autopilot.py events`` (did the calls land in the user's ledger?).

Each test has its own throwaway HOME, CODEX_HOME and MindOS home (see e2ekit.World).  The
only thing a test adds beyond ``setup`` is ``--allowedTools mcp__mindos`` (the permission a
user grants the MindOS tools once) on the runs whose model calls them.
"""

import json
import re

import pytest

import e2ekit
from e2ekit import claude_client  # noqa: F401 (fixtures)
from model_server import FINAL_TEXT, Script, ScriptedModel

pytestmark = pytest.mark.slow

TASK = "t-e2e00001"
TITLE = "Wire the e2e probe"
URGENT = "Urgent e2e follow-up"
ALLOW = ("--allowedTools", "mcp__mindos")
DEFAULT_TOOLS_MAX_BYTES = 12 * 1024   # the budget for the default profile's definitions
# How Claude Code hands a Stop hook's block to the model: "Stop hook feedback:" and the reason
# (a {"decision": "block"} on stdout adds a "Stop hook blocking error from command ..." too).
STOP_FEEDBACK = re.compile(r"Stop hook (?:blocking error|feedback)")
STOP_LABELS = ("Stop hook feedback", "Stop hook blocking error")


def loop_script(task=TASK, *, handoff=True):
    """claim -> note -> receipt -> handoff on ``task``, as the agent the pack named."""
    calls = [
        ("claim", lambda turn: {"task_id": task, "owner": turn.agent("claude-code"), "minutes": 30}),
        ("note", lambda turn: {"task_id": task, "kind": "decision", "source": turn.agent("claude-code"),
                               "content": "e2e: the scripted agent chose the plain path"}),
        ("receipt", {"task_id": task, "kind": "verification", "payload": {"tests": "pass", "by": "e2e"}}),
    ]
    if handoff:
        calls.append(("handoff", lambda turn: {
            "task_id": task, "from_agent": turn.agent("claude-code"), "status": "running",
            "objective": "finish the e2e probe", "evidence": ["scripted receipt recorded"],
            "next_action": ["review the probe"]}))
    return Script(calls)


def pack_agent(text):
    found = re.search(r"MindOS prime for ([A-Za-z0-9_.:@-]+)", text)
    return found.group(1) if found else None


def mindos_tools(body):
    return [tool for tool in body.get("tools") or [] if str(tool.get("name", "")).startswith("mcp__mindos__")]


@pytest.fixture(scope="module")
def loop(claude_client, tmp_path_factory):
    """One ``setup claude`` world and one ``claude -p`` session whose model runs the loop."""
    world = e2ekit.World(tmp_path_factory.mktemp("claude-loop"))
    world.create_task(TASK, TITLE)
    world.setup("claude", "--project-dir", world.project)
    with ScriptedModel(loop_script()) as model:
        run = world.claude("Work on the next MindOS task.", model.base_url, *ALLOW)
    return world, model, run


# -- passes on today's code ---------------------------------------------------------------


def test_setup_claude_pack_reaches_the_model(loop):
    world, model, run = loop
    assert run.returncode == 0, run.describe()
    first = model.main_requests()[0]["body"]
    text = json.dumps(first, ensure_ascii=False)
    assert "MindOS prime for" in text, "the SessionStart pack never reached the model"
    assert TITLE in text and TASK in text, "the pack reached the model without the next task"


def test_resumed_session_gets_a_fresh_pack(loop):
    world, model, run = loop
    assert run.json and run.json.get("session_id"), run.describe()
    # Claude Code skips a hook output identical to one already in the session, so the ledger
    # changes first: the resumed session's pack must name the new, more urgent task.
    world.autopilot("create", "--project", e2ekit.PROJECT, "--title", URGENT, "--id", "t-e2e00002", "--priority", "P0")
    with ScriptedModel(Script()) as resumed:
        again = world.claude("Carry on.", resumed.base_url, "--resume", run.json["session_id"])
    assert again.returncode == 0, again.describe()
    assert URGENT in resumed.transcript(), "SessionStart on resume brought no fresh pack to the model"


def _session_after(command, world):
    """Run a session, then ``command`` (/clear or /compact) in it, then resume what follows;
    return the model of that last run.  The ledger changes around ``command`` so that a
    task only the ``clear``/``compact`` hook could have shown tells us that hook fired."""
    world.create_task(TASK, TITLE)
    world.setup("claude", "--project-dir", world.project)
    with ScriptedModel(Script()) as model:
        first = world.claude("Hello.", model.base_url)
    assert first.returncode == 0, first.describe()
    world.autopilot("create", "--project", e2ekit.PROJECT, "--title", URGENT, "--id", "t-e2e00002", "--priority", "P0")
    # compaction asks the model for a summary: a fixed one, so no pack text survives in it
    with ScriptedModel(Script(final="<summary>The user said hello.</summary>")) as model:
        middle = world.claude(command, model.base_url, "--resume", first.json["session_id"])
    assert middle.returncode == 0, middle.describe()
    world.autopilot("cancel", "t-e2e00002", "--owner", "e2e", "--reason", "superseded")
    world.autopilot("create", "--project", e2ekit.PROJECT, "--title", "Later e2e task", "--id", "t-e2e00003",
                    "--priority", "P0")
    with ScriptedModel(Script()) as model:
        last = world.claude("Carry on.", model.base_url, "--resume", middle.json["session_id"])
    assert last.returncode == 0, last.describe()
    return model


def test_compacted_session_gets_the_pack(claude_client, tmp_path):
    model = _session_after("/compact", e2ekit.World(tmp_path / "compact"))
    assert URGENT in model.transcript(), "SessionStart on compact brought no pack to the model"


def test_cleared_session_gets_the_pack(claude_client, tmp_path):
    model = _session_after("/clear", e2ekit.World(tmp_path / "clear"))
    assert URGENT in model.transcript(), "SessionStart on clear brought no pack to the model"


# -- pending the setup claude / MCP work of issue 26 -----------------------------------------


def test_scripted_mcp_loop_lands_in_the_cli_ledger(loop):
    """setup claude registers the MCP server; the calls land in the home the CLI uses."""
    world, model, run = loop
    assert not model.errors, f"{model.errors[0]} -- does setup claude register the MCP server?"
    assert run.returncode == 0, run.describe()
    assert model.steps == ["tool:claim", "tool:note", "tool:receipt", "tool:handoff", "final"], model.steps
    failed = [r["text"] for r in model.tool_results if r["is_error"]]
    assert not failed, f"MindOS tools answered with errors: {failed}"
    assert run.json["result"] == FINAL_TEXT
    actions = [event["action"] for event in world.events(TASK)]
    for action in ("created", "claimed", "note_added", "receipt_added", "handoff_recorded"):
        assert action in actions, f"{action} missing from the user's ledger: {actions}"
    assert world.stray_homes() == [], "a second MindOS home was created"


def test_pack_names_the_session_identity(loop):
    """The hook reads the harness's stdin JSON: claude-code plus a short session id."""
    world, model, run = loop
    agent = pack_agent(model.transcript())
    session = (run.json or {}).get("session_id", "")
    assert agent, "no pack reached the model"
    match = re.fullmatch(r"claude-code-([0-9a-f]{4,})", agent)
    assert match and session.replace("-", "").startswith(match.group(1)), \
        f"the pack was primed for {agent!r}, not claude-code-<short id of session {session}>"


def test_default_mcp_profile_is_lean(loop):
    """The default profile is about ten tools, their definitions at most 12 KB as sent."""
    world, model, run = loop
    tools = mindos_tools(model.main_requests()[0]["body"])
    assert tools, "Claude Code offered no MindOS tools"
    size = sum(len(json.dumps(tool, separators=(",", ":"))) for tool in tools)
    assert 6 <= len(tools) <= 14 and size <= DEFAULT_TOOLS_MAX_BYTES, \
        f"{len(tools)} MindOS tools, {size} bytes of definitions in the model's request"


def test_setup_pins_the_home_for_a_claude_started_without_it(claude_client, tmp_path):
    """The user chose the home with a shell variable when running setup; Claude Code is later
    started where that variable is not set (an IDE, a login shell): hook and MCP server still
    use that home, and no other home appears."""
    world = e2ekit.World(tmp_path / "pinned")
    world.create_task(TASK, TITLE)
    world.setup("claude", "--project-dir", world.project)
    bare = {key: value for key, value in world.env.items() if key != "HERMES_AUTOPILOT_HOME"}
    with ScriptedModel(loop_script()) as model:
        run = world.claude("Work on the next MindOS task.", model.base_url, *ALLOW, env=bare)
    assert run.returncode == 0, run.describe()
    assert TITLE in model.transcript(), "the SessionStart hook did not find the home setup was run for"
    assert not model.errors, model.errors
    failed = [r["text"][-300:] for r in model.tool_results if r["is_error"]]
    assert not failed, f"MindOS tools answered with errors: {failed}"
    actions = [event["action"] for event in world.events(TASK)]
    assert "handoff_recorded" in actions, actions
    assert world.stray_homes() == [], "a second MindOS home was created"


def _stop_world(tmp_path):
    world = e2ekit.World(tmp_path / "stop")
    world.create_task(TASK, TITLE)
    world.setup("claude", "--project-dir", world.project, "--stop-gate")
    return world


def test_stop_gate_blocks_once_then_lets_the_session_end(claude_client, tmp_path):
    """A session ending with a live lease and no handoff is asked, once, for a handoff."""
    world = _stop_world(tmp_path)
    with ScriptedModel(Script([("claim", lambda turn: {"task_id": TASK, "owner": turn.agent("claude-code")})])) as model:
        run = world.claude("Take the next task, then stop.", model.base_url, *ALLOW)
    assert run.returncode == 0, run.describe()
    assert not model.errors, model.errors
    assert model.steps == ["tool:claim", "final", "final"], \
        f"expected the stop blocked exactly once (two final turns), got {model.steps}"
    last = json.dumps(model.main_requests()[-1]["body"], ensure_ascii=False)
    blocks = max(last.count(label) for label in STOP_LABELS)
    assert blocks == 1 and "handoff" in STOP_FEEDBACK.split(last, 1)[1][:2000].lower(), \
        "the gate's reason (asking for a handoff) did not reach the model exactly once"


def test_stop_gate_stays_quiet_after_a_handoff(claude_client, tmp_path):
    world = _stop_world(tmp_path)
    with ScriptedModel(loop_script()) as model:
        run = world.claude("Work the task and hand it off.", model.base_url, *ALLOW)
    assert run.returncode == 0, run.describe()
    assert not model.errors, model.errors
    assert model.steps.count("final") == 1, f"the gate blocked a session that handed off: {model.steps}"
    assert not STOP_FEEDBACK.search(model.transcript())


def test_session_start_under_a_held_write_lock(claude_client, tmp_path):
    """Another writer holds the lock for 60 s: the hook still exits 0 in time with the pack."""
    world = e2ekit.World(tmp_path / "locked")
    world.create_task(TASK, TITLE)
    world.setup("claude", "--project-dir", world.project)
    hooks = [hook for matcher, hook in e2ekit.installed_hooks(world, "SessionStart")
             if matcher in ("", "*") or "startup" in matcher]
    assert hooks, "setup claude installed no SessionStart hook for startup"
    with e2ekit.LockHolder(world.mindos_home, seconds=60) as lock:
        for hook in hooks:
            payload = {"session_id": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "cwd": world.project,
                       "hook_event_name": "SessionStart", "source": "startup",
                       "transcript_path": f"{world.root}/transcript.jsonl"}
            code, out, err, seconds = e2ekit.run_hook(world, hook, payload)
            budget = e2ekit.hook_seconds(hook)
            assert code == 0 and seconds <= budget + 1.0, \
                f"the hook exited {code} after {seconds:.1f} s (promised {budget:g} s): {err.strip()[-300:]}"
            assert TITLE in out, "the hook emitted no pack while the lock was held"
        with ScriptedModel(Script()) as model:
            run = world.claude("What is next?", model.base_url)
        assert lock.held(), "the lock holder let go early: the test proved nothing"
    assert run.returncode == 0, run.describe()
    assert TITLE in model.transcript(), "with the write lock held the pack never reached the model"
