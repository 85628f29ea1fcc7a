"""The MCP server: JSON-RPC framing in-process, a real stdio session, and the official SDK client."""

import json
import os
import subprocess
import sys

import pytest

from mindos.mcp import server, tools

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def srv(conn):
    return server.Server(conn, tools.exposed(profile="all"))


def call(srv, payload):
    return srv.handle_line(json.dumps(payload))


def tool(srv, name, arguments, request_id=1):
    answer = call(srv, {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                        "params": {"name": name, "arguments": arguments}})
    return answer["result"]


# -- framing, in-process -------------------------------------------------------------------


def test_initialize_negotiates_the_protocol_version(srv):
    for asked, got in (("2025-06-18", "2025-06-18"), ("2024-11-05", "2024-11-05"), ("1999-01-01", "2025-11-25")):
        answer = call(srv, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                            "params": {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t"}}})
        assert answer["result"]["protocolVersion"] == got
        assert answer["result"]["capabilities"] == {"tools": {"listChanged": False}, "resources": {"listChanged": False},
                                                    "prompts": {"listChanged": False}}
        assert answer["result"]["serverInfo"]["name"] == "mindos"


@pytest.mark.parametrize("line, code", [
    ("{not json", -32700),
    ('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600),
    ('"a string"', -32600),
    ('{"id": 1, "method": "ping"}', -32600),
    ('{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": 5}', -32600),
    ('{"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}', -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}', -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe"}', -32601),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope"}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}', -32602),
])
def test_malformed_messages_get_json_rpc_errors(srv, line, code):
    answer = srv.handle_line(line)
    assert answer["jsonrpc"] == "2.0" and answer["error"]["code"] == code
    assert "result" not in answer


def test_notifications_and_responses_are_never_answered(srv):
    assert call(srv, {"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert call(srv, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}) is None
    assert call(srv, {"jsonrpc": "2.0", "id": 9, "result": {}}) is None
    assert call(srv, {"jsonrpc": "2.0", "id": "p", "method": "ping"}) == {"jsonrpc": "2.0", "id": "p", "result": {}}


def test_tool_errors_carry_the_stable_codes(srv, conn):
    from tests.conftest import make_task

    make_task(conn, "t1")
    missing = tool(srv, "claim", {"task_id": "nope", "owner": "a"})
    assert missing["isError"] and missing["structuredContent"]["error"]["code"] == "not_found"
    assert json.loads(missing["content"][0]["text"]) == missing["structuredContent"]
    assert tool(srv, "claim", {"task_id": "t1", "owner": "a"})["isError"] is False
    taken = tool(srv, "claim", {"task_id": "t1", "owner": "b"})
    assert taken["structuredContent"]["error"]["code"] in ("refused", "conflict")
    bad = tool(srv, "claim", {"task_id": "t1"})
    assert bad["structuredContent"]["error"] == {
        "code": "usage", "message": "missing required argument 'owner'", "exit_code": 2}
    invalid = tool(srv, "create", {"project": "P", "title": "x", "priority": "P9"})
    assert invalid["structuredContent"]["error"]["code"] in ("invalid", "usage")


def test_search_notes_tool_takes_the_rerank_options_of_the_cli(srv, conn):
    from mindos.memory import notes
    from tests.conftest import make_task

    make_task(conn, "t1")
    notes.add(conn, "t1", content="postgres pool sizing", pinned=True)
    schema = tools.exposed(profile="all")["search-notes"].schema["properties"]
    assert schema["rerank"]["type"] == "boolean" and schema["rank"]["type"] == "boolean"
    assert schema["recency_half_life_hours"]["type"] == schema["pinned_boost"]["type"] == "number"
    answer = tool(srv, "search-notes", {"query": "postgres pool", "rank": True, "rerank": True,
                                        "recency_half_life_hours": 24, "pinned_boost": 0.25})
    hits = json.loads(answer["content"][0]["text"])
    assert answer["isError"] is False and hits[0]["rank_score"] == 1.25
    refused = tool(srv, "search-notes", {"query": "postgres pool", "pinned_boost": 0.25})
    assert refused["isError"] and "need --rerank" in refused["structuredContent"]["error"]["message"]


def test_an_unexpected_exception_is_an_internal_error_and_the_server_goes_on(srv, monkeypatch, caplog):
    from mindos.work import leases

    def boom(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(leases, "claim", boom)
    answer = tool(srv, "claim", {"task_id": "t1", "owner": "a"})
    assert answer["isError"] and answer["structuredContent"]["error"]["code"] == "internal_error"
    assert "tool claim failed" in caplog.text
    assert call(srv, {"jsonrpc": "2.0", "id": 2, "method": "ping"})["result"] == {}


def test_error_messages_never_echo_a_secret(srv):
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    answer = tool(srv, "claim", {"task_id": "t1", "owner": "a", "minutes": 5, "epoch": 1, "max_active": 1,
                                 "force": False, "bogus": secret})
    assert secret not in json.dumps(answer)


def test_serve_refuses_an_oversized_line_and_goes_on(conn):
    import io

    lines = [b"x" * 5000 + b"\n", json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode() + b"\n",
             b"\xff\xfe\n"]
    out = io.BytesIO()
    server.serve(conn, tools.exposed(), io.BytesIO(b"".join(lines)), out, max_line=1000)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert answers[0]["error"]["code"] == -32600 and "limited to 1000 bytes" in answers[0]["error"]["message"]
    assert answers[1] == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert answers[2]["error"]["code"] == -32700


# -- a real stdio process ---------------------------------------------------------------------


def _serve(home, lines, *extra):
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "mindos.mcp", *extra], input="".join(l + "\n" for l in lines),
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)


def test_stdio_process_writes_only_json_lines_and_logs_on_stderr(home):
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "garbage",
        "",
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "create", "arguments": {"project": "P", "title": "hello",
                                                                "description": "line one\nline two"}}}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    ]
    done = _serve(home, lines, "--log-level", "info", "--tools", "all")
    assert done.returncode == 0
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    # tool calls run on the worker, so answers may overtake them: JSON-RPC matches by id
    assert sorted([a.get("id") for a in answers], key=str) == sorted([1, None, 2, 3], key=str)
    by_id = {a.get("id"): a for a in answers}
    assert by_id[None]["error"]["code"] == -32700
    assert by_id[2]["result"]["structuredContent"]["description"] == "line one\nline two"
    assert "serving" in done.stderr and "mindos-mcp: INFO" in done.stderr


def test_stdio_destructive_commands_need_allow(home):
    listing = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    names = [t["name"] for t in json.loads(_serve(home, [listing], "--tools", "all").stdout)["result"]["tools"]]
    assert "cancel" not in names and "recover" not in names
    names = [t["name"] for t in json.loads(_serve(home, [listing], "--allow", "cancel").stdout)["result"]["tools"]]
    assert "cancel" in names and "recover" not in names
    refused = _serve(home, [listing], "--allow", "init")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("mindos-mcp: error: --allow: 'init' cannot be exposed")


# -- the official MCP Python SDK as the client -----------------------------------------------


def _sdk_session(home, body, *extra):
    mcp = pytest.importorskip("mcp")
    anyio = pytest.importorskip("anyio")

    async def main():
        params = mcp.StdioServerParameters(command=sys.executable, args=["-m", "mindos.mcp", *extra], cwd=ROOT,
                                           env={"HERMES_AUTOPILOT_HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1"})
        async with mcp.stdio_client(params) as (read, write):
            async with mcp.ClientSession(read, write) as session:
                return await body(session, mcp)

    return anyio.run(main)


def test_sdk_initialize_and_list_tools(home):
    async def body(session, mcp):
        init = await session.initialize()
        listed = await session.list_tools()
        await session.send_ping()
        return init, listed

    init, listed = _sdk_session(home, body)
    assert init.server_info.name == "mindos"
    names = [t.name for t in listed.tools]
    assert names == list(tools.exposed(profile=tools.DEFAULT_PROFILE)) == list(tools.PROFILES["agent"])
    claim = next(t for t in listed.tools if t.name == "claim")
    assert claim.input_schema["required"] == ["task_id", "owner"]
    assert claim.input_schema["properties"]["minutes"]["type"] == "integer"


def test_sdk_full_cycle_claim_note_receipt_complete_handoff(home):
    async def body(session, mcp):
        await session.initialize()
        seen = {}
        created = await session.call_tool("create", {"project": "Trove", "title": "retry path", "priority": "P1"})
        task_id = created.structured_content["id"]
        picked = await session.call_tool("next", {"project": "Trove", "claim": True, "owner": "codex"})
        seen["next"] = picked.structured_content["task"]
        seen["note"] = (await session.call_tool("note", {"task_id": task_id, "content": "use backoff",
                                                          "kind": "decision", "source": "codex"})).structured_content
        seen["heartbeat"] = await session.call_tool("heartbeat", {"task_id": task_id, "owner": "codex",
                                                                   "note": "tests running"})
        seen["receipt"] = (await session.call_tool("receipt", {"task_id": task_id, "kind": "verification",
                                                                "payload": '{"tests": "pass"}'})).structured_content
        seen["complete"] = (await session.call_tool("complete", {"task_id": task_id, "owner": "codex",
                                                                  "note": "tests pass"})).structured_content
        seen["handoff"] = (await session.call_tool("handoff", {
            "task_id": task_id, "from_agent": "codex", "to_agent": "claude-code", "status": "done",
            "objective": "review the retry path", "evidence": ["tests pass"], "next_action": ["open PR"]})
        ).structured_content
        seen["inbox"] = (await session.call_tool("handoff-inbox", {"agent": "claude-code"})).structured_content
        seen["ack"] = (await session.call_tool("ack", {"task_id": task_id, "agent": "claude-code"})).structured_content
        seen["show"] = (await session.call_tool("show", {"task_id": task_id})).structured_content
        seen["again"] = await session.call_tool("complete", {"task_id": task_id, "owner": "codex"})
        seen["bad"] = await session.call_tool("note", {"task_id": task_id})
        try:
            await session.call_tool("no-such-tool", {})
        except mcp.MCPError as exc:
            seen["unknown"] = (exc.error.code, exc.error.message)
        return task_id, seen

    task_id, seen = _sdk_session(home, body, "--tools", "all")
    assert seen["next"]["id"] == task_id and seen["next"]["lease_owner"] == "codex"
    assert seen["note"]["content"] == "use backoff"
    assert seen["heartbeat"].is_error is False
    assert seen["receipt"]["kind"] == "verification"
    assert seen["complete"]["status"] == "completed"
    assert seen["handoff"]["to_agent"] == "claude-code"
    assert [item["task_id"] for item in seen["inbox"]["items"]] == [task_id]
    assert seen["ack"]["acked_by"] == "claude-code"
    assert seen["show"]["task"]["status"] == "completed"
    assert seen["again"].is_error and seen["again"].structured_content["error"]["code"] == "refused"
    assert seen["bad"].is_error and seen["bad"].structured_content["error"]["code"] == "usage"
    assert seen["unknown"] == (-32602, "Unknown tool: no-such-tool")


def test_sdk_high_level_client_in_auto_mode_falls_back_to_initialize(home):
    mcp = pytest.importorskip("mcp")
    anyio = pytest.importorskip("anyio")
    client_module = pytest.importorskip("mcp.client.client")

    async def main():
        params = mcp.StdioServerParameters(command=sys.executable, args=["-m", "mindos.mcp", "--tools", "all"],
                                           cwd=ROOT, env={"HERMES_AUTOPILOT_HOME": str(home),
                                                          "PYTHONDONTWRITEBYTECODE": "1"})
        async with client_module.Client(params, mode="auto") as client:  # probes server/discover first
            listed = await client.list_tools()
            created = await client.call_tool("create", {"project": "P", "title": "via auto mode"})
            return [t.name for t in listed.tools], created

    names, created = anyio.run(main)
    assert "claim" in names and created.is_error is False
