"""Harness hooks: identity from the session, project from the working directory, the Stop gate."""

import json
import os
import subprocess
import sys

import pytest

from mindos.context import builder
from mindos.errors import InvalidInput
from mindos.harness import hooks
from mindos.memory import handoffs
from mindos.work import leases, receipts
from tests.conftest import ROOT, START, make_task


def event(session="5e1f0a9b-77c2-4d1e", **extra):
    return {"session_id": session, "hook_event_name": "SessionStart", "source": "startup", **extra}


# --------------------------------------------------------------------------- identity


def test_the_agent_carries_the_session_and_a_configured_agent_wins():
    assert hooks.session_agent(event(), "claude") == ("claude-code-5e1f0a9b", "session")
    assert hooks.session_agent(event("AB-cd_EF.12345"), "claude")[0] == "claude-code-abcdef12"
    assert hooks.session_agent(event(), "claude", "reviewer") == ("reviewer", "flag")
    assert hooks.session_agent({}, "claude") == ("claude-code", "harness")
    assert hooks.session_agent(event("---"), "claude") == ("claude-code", "harness")
    assert hooks.session_agent({"session_id": 42}, "claude") == ("claude-code", "harness")
    assert hooks.session_agent(event("ghp_" + "a" * 36), "claude")[0] == "claude-code-ghpaaaaa"


def test_parallel_sessions_do_not_share_leases(conn, tmp_path):
    make_task(conn, "t1", title="one")
    make_task(conn, "t2", title="two")
    a = hooks.session_agent(event("aaaa1111"), "claude")[0]
    b = hooks.session_agent(event("bbbb2222"), "claude")[0]
    leases.claim(conn, "t1", a)
    pack_a = hooks.session_start(conn, event("aaaa1111", cwd=str(tmp_path)), "claude", fmt="json")
    pack_b = hooks.session_start(conn, event("bbbb2222", cwd=str(tmp_path)), "claude", fmt="json")
    leased = builder.decode(pack_a)["leases"]  # printed as a table
    assert [e["task_id"] for e in leased] == ["t1"] and "leases" not in pack_b
    assert pack_b["next"]["id"] == "t2"


@pytest.mark.parametrize("raw, match", [
    ("{not json", "not JSON"), ("[1]", "expected a JSON object"), ('"x"', "expected a JSON object"),
    ("[" * 5000 + "]" * 5000, "not JSON|expected"), ("x" * (hooks.MAX_INPUT_BYTES + 1), "over"),
])
def test_bad_hook_input_is_refused_clearly(raw, match):
    with pytest.raises(InvalidInput, match=match):
        hooks.parse_input(raw)
    assert hooks.parse_input("") == {} and hooks.parse_input(b'{"a": 1}') == {"a": 1}


# --------------------------------------------------------------------------- project


def test_the_project_comes_from_the_working_directory(tmp_path):
    repo = tmp_path / "trove-web"
    (repo / ".git").mkdir(parents=True)
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    assert hooks.project_for(str(deep)) == ("trove-web", "repository")
    (repo / ".mindos-project").write_text("Trove\nanything else\n")
    assert hooks.project_for(str(deep)) == ("Trove", "project-file")
    (deep / ".mindos-project").write_text("Inner\n")
    assert hooks.project_for(str(deep)) == ("Inner", "project-file")  # the nearest file wins
    (deep / ".mindos-project").write_text("not a valid name!\n")
    assert hooks.project_for(str(deep)) == (None, None)
    plain = tmp_path / "plain"
    plain.mkdir()
    for cwd in (str(plain), "relative/path", "", None, 7, "/nul\x00here"):
        assert hooks.project_for(cwd) == (None, None)


def test_a_repository_name_scopes_only_when_the_ledger_knows_the_project(conn, tmp_path):
    make_task(conn, "t1", project="Trove")
    make_task(conn, "t2", project="Other")
    for name, expected in (("Trove", "Trove"), ("unknown-repo", None)):
        repo = tmp_path / name
        (repo / ".git").mkdir(parents=True)
        where = hooks.scope(conn, event(cwd=str(repo)), "claude")
        assert where["project"] == expected
    pack = hooks.session_start(conn, event(cwd=str(tmp_path / "Trove")), "claude", fmt="json")
    assert pack["project"] == "Trove" and pack["next"]["id"] == "t1"
    assert pack["scope"] == {"agent": "claude-code-5e1f0a9b", "agent_source": "session", "project": "Trove",
                             "project_source": "repository", "source": "startup"}
    assert hooks.scope(conn, event(cwd=str(tmp_path / "Trove")), "claude", project="Other")["project"] == "Other"


# --------------------------------------------------------------------------- the Stop gate


def stop(session="5e1f0a9b", active=False):
    return {"session_id": session, "hook_event_name": "Stop", "stop_hook_active": active}


AGENT = "claude-code-5e1f0a9b"


def test_the_stop_gate_blocks_once_for_a_lease_without_a_handoff(conn):
    make_task(conn, "t1", title="ship the parser")
    leases.claim(conn, "t1", AGENT)
    answer = hooks.stop_gate(conn, stop(), "claude")
    assert answer["decision"] == "block" and "t1" in answer["reason"] and "handoff" in answer["reason"]
    assert "\n" not in answer["reason"]
    assert hooks.stop_gate(conn, stop(active=True), "claude") == {}  # the continuation of a block
    assert hooks.stop_gate(conn, stop(), "claude") == {}  # never twice for one claim
    blocked = conn.execute("SELECT entity_id, payload_json FROM audit_events WHERE action = 'stop_gate_blocked'").fetchall()
    assert len(blocked) == 1 and blocked[0][0] == "t1" and json.loads(blocked[0][1])["agent"] == AGENT


@pytest.mark.parametrize("evidence", ["handoff", "receipt"])
def test_a_handoff_or_receipt_since_the_claim_lets_the_session_stop(conn, evidence):
    make_task(conn, "t1")
    leases.claim(conn, "t1", AGENT)
    if evidence == "handoff":
        handoffs.record(conn, "t1", from_agent=AGENT, objective="finish the parser")
    else:
        receipts.add(conn, "t1", "test", {"passed": 12})
    assert hooks.stop_gate(conn, stop(), "claude") == {}


def test_the_gate_ignores_other_sessions_and_expired_or_absent_leases(conn):
    make_task(conn, "t1")
    leases.claim(conn, "t1", "claude-code-otherses")
    assert hooks.stop_gate(conn, stop(), "claude") == {}
    assert hooks.stop_gate(conn, {}, "claude") == {}
    assert hooks.stop_gate(conn, stop(), "claude", agent="claude-code-otherses")["decision"] == "block"


def test_a_new_claim_arms_the_gate_again(conn):
    make_task(conn, "t1")
    leases.claim(conn, "t1", AGENT)
    assert hooks.stop_gate(conn, stop(), "claude")["decision"] == "block"
    leases.release(conn, "t1", AGENT)
    leases.claim(conn, "t1", AGENT)
    assert hooks.stop_gate(conn, stop(), "claude")["decision"] == "block"


# --------------------------------------------------------------------------- through the door


def _door(argv, stdin, home):
    return subprocess.run([sys.executable, os.path.join(ROOT, "autopilot.py"), *argv], input=stdin,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HERMES_AUTOPILOT_HOME": str(home), "MINDOS_NOW": START})


def test_prime_hook_and_stop_gate_through_the_door(conn, home, tmp_path):
    make_task(conn, "t1", project="Trove")
    done = _door(["session-start", "--hook", "claude"], json.dumps(event(cwd=str(tmp_path))), home)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("# MindOS prime for claude-code-5e1f0a9b digest=")
    leases.claim(conn, "t1", AGENT)
    done = _door(["stop-gate", "--hook", "claude"], json.dumps(stop()), home)
    assert done.returncode == 0 and json.loads(done.stdout)["decision"] == "block"
    done = _door(["stop-gate", "--hook", "claude"], json.dumps(stop(active=True)), home)
    assert done.returncode == 0 and json.loads(done.stdout) == {}


def test_hook_doors_refuse_bad_input_and_change_nothing(cli, conn):
    before = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    rc, out, err = cli("autopilot", "session-start")
    assert rc == 2 and out == "" and "--hook" in err
    rc, out, err = cli("autopilot", "session-start", "--hook", "claude", "--agent", "bad agent!")
    assert rc == 2 and out == "" and "invalid --agent" in err and err.count("\n") == 1
    rc, out, err = cli("autopilot", "session-start", "--hook", "codex")
    assert rc == 2 and out == ""
    rc, out, err = cli("autopilot", "stop-gate")
    assert rc == 2 and out == ""
    rc, out, err = cli("autopilot", "stop-gate", "--hook", "claude", "--agent", "bad agent!")
    assert rc == 2 and out == "" and "invalid --agent" in err
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == before


def test_hook_commands_are_never_mcp_tools():
    """Over MCP, stdin is the protocol stream: a hook command there would read the protocol as
    its event, so neither is a tool in any profile, nor can ``--allow`` expose it."""
    from mindos.errors import InvalidInput
    from mindos.mcp import tools

    for name in ("session-start", "stop-gate"):
        assert name in tools.NEVER and name not in tools.AGENT_TOOLS and name not in tools.allowable()
        assert name not in tools.exposed() and name not in tools.exposed(profile=tools.ALL)
        with pytest.raises(InvalidInput):
            tools.exposed([name])


def test_hook_door_with_malformed_stdin(conn, home):
    for raw in ("{not json", "[]", "ghp_" + "x" * 40):
        done = _door(["session-start", "--hook", "claude"], raw, home)
        assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
        assert "ghp_" not in done.stderr
