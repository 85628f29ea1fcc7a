"""End to end with the real Codex CLI (pinned in tests/e2e/install.sh) and a scripted model.

The user chose their MindOS home with ``HERMES_AUTOPILOT_HOME`` in the shell, ran ``setup
codex --user``, and runs ``codex exec``.  Codex starts MCP servers with a short allowlist of
environment variables, so the home must come from what setup wrote, not from the shell: the
scripted model's claim -> note -> receipt -> handoff must land in that home, and no second
home (``~/.hermes/autopilot``) may appear.  The model provider is given on the command line
(``-c model_providers.scripted=...``), so ``config.toml`` holds only what setup wrote.

Codex 0.171 ignores a project's ``.codex/config.toml`` (MCP servers included) until the
project is trusted; the project-scope test trusts it the way a user would.
"""

import json

import pytest

import e2ekit
from e2ekit import codex_client, world  # noqa: F401 (fixtures)
from model_server import FINAL_TEXT, Script, ScriptedModel

pytestmark = pytest.mark.slow

TASK = "t-e2e00011"
TITLE = "Codex e2e probe"
AGENTS_HEADING = "MindOS: shared tasks and memory"


def codex_loop(task=TASK, agent="codex"):
    return Script([
        ("claim", {"task_id": task, "owner": agent, "minutes": 30}),
        ("note", {"task_id": task, "kind": "decision", "source": agent, "content": "e2e: codex took the plain path"}),
        ("receipt", {"task_id": task, "kind": "verification", "payload": {"tests": "pass", "by": "codex-e2e"}}),
        ("handoff", {"task_id": task, "from_agent": agent, "status": "running", "objective": "finish the codex probe",
                     "evidence": ["scripted receipt recorded"], "next_action": ["review the probe"]}),
    ])


def mcp_calls(run):
    """The MCP tool-call items ``codex exec --json`` reported as completed."""
    found = []
    for event in run.jsonl():
        item = event.get("item") if isinstance(event, dict) else None
        if event.get("type") == "item.completed" and isinstance(item, dict) and item.get("type") == "mcp_tool_call":
            found.append(item)
    return found


@pytest.fixture
def codex_world(codex_client, world):
    world.create_task(TASK, TITLE)
    world.setup("codex", "--user")
    return world


# -- passes on today's code ---------------------------------------------------------------


def test_setup_codex_reaches_the_model(codex_world):
    """The AGENTS.md loop and the mindos MCP tools are in Codex's request to the model."""
    with ScriptedModel(Script()) as model:
        run = codex_world.codex("What should I work on?", model.base_url)
    assert run.returncode == 0, run.describe()
    body = model.main_requests()[0]["body"]
    assert AGENTS_HEADING in json.dumps(body, ensure_ascii=False), "the AGENTS.md section never reached the model"
    names = [tool.get("name") for tool in body.get("tools") or []]
    assert any("mindos" in str(name) for name in names), f"Codex offered no mindos MCP tools: {names}"
    assert FINAL_TEXT in run.stdout


# -- pending the "no silent homes" work of issue 26 ------------------------------------------


@pytest.mark.parametrize("scope", ["user", "project"])
def test_codex_mcp_calls_land_in_the_users_home(codex_client, world, scope):
    """``setup codex --user`` ($CODEX_HOME/config.toml), or the project's .codex/config.toml,
    which Codex reads only in a trusted project (``codex exec --trust`` records the trust)."""
    world.create_task(TASK, TITLE)
    world.setup("codex", "--user" if scope == "user" else "--project-dir=" + world.project)
    with ScriptedModel(codex_loop()) as model:
        run = world.codex("Work on the next MindOS task.", model.base_url,
                                *(["--trust"] if scope == "project" else []))
    assert run.returncode == 0, run.describe()
    assert not model.errors, model.errors
    assert model.steps == ["tool:claim", "tool:note", "tool:receipt", "tool:handoff", "final"], model.steps
    stray = world.stray_homes()
    failed = [result["text"][-300:] for result in model.tool_results if result["is_error"]]
    assert not stray and not failed, (
        f"Codex's MCP server used another home ({', '.join(stray) or 'none created'}); "
        f"tool errors: {failed}")
    actions = [event["action"] for event in world.events(TASK)]
    for action in ("created", "claimed", "note_added", "receipt_added", "handoff_recorded"):
        assert action in actions, f"{action} missing from the user's ledger: {actions}"
    assert len(mcp_calls(run)) == 4, "codex exec --json did not report the four MCP calls"
