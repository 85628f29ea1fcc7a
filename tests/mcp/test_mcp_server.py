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


def test_a_tool_result_is_written_with_its_text_as_the_structured_content(conn):
    """Over stdio a tool call's structured content is written as its own JSON text (encoded
    once): the line parses to exactly the answer the server built, whatever the text holds."""
    import io

    conn.execute("INSERT INTO tasks(id, project, title, description, created_at, updated_at) VALUES"
                 " ('t\u00e91', 'Trove', 'quotes \" and \\ and \u2028 and \U0001f600', 'line\nbreak',"
                 " '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')")
    srv = server.Server(conn, tools.exposed(profile="all"))
    requests = [{"jsonrpc": "2.0", "id": "r\u00e9-1", "method": "tools/call",
                 "params": {"name": "show", "arguments": {"task_id": "t\u00e91"}}},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "next", "arguments": {}}},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "show", "arguments": {"task_id": "nope"}}}]
    expected = [srv.handle_line(json.dumps(request)) for request in requests]
    out = io.BytesIO()
    server.serve(conn, tools.exposed(profile="all"), io.BytesIO(b"".join(
        json.dumps(request).encode() + b"\n" for request in requests)), out)
    lines = out.getvalue().splitlines()
    answers = {json.loads(line)["id"]: json.loads(line) for line in lines}
    for request, answer in zip(requests, expected):
        written = answers[request["id"]]
        assert written == json.loads(json.dumps(answer)), request
        result = written["result"]
        assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert answers[3]["result"]["isError"] is True and answers[3]["result"]["structuredContent"]["error"]["code"] == "not_found"
    first = next(line for line in lines if line.startswith(b'{"jsonrpc":"2.0","id":"r'))
    assert first.decode("utf-8").endswith("}}") and "t\u00e91" in first.decode("utf-8")
    for answer in expected:  # one line each, newline-ended, the same JSON as the answer
        line = server.encode(answer)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert json.loads(line) == json.loads(json.dumps(answer))


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


def test_heartbeat_tool_takes_the_progress_arguments_of_the_cli(srv, conn):
    from mindos.work import leases
    from tests.conftest import make_task

    make_task(conn, "t1")
    leases.claim(conn, "t1", "codex", minutes=120)
    schema = tools.exposed()["heartbeat"].schema["properties"]
    assert schema["stall_deadline"]["type"] == "integer"
    assert all(schema[name]["type"] == "string" for name in ("action", "intent", "progress_state", "evidence"))
    answer = tool(srv, "heartbeat", {"task_id": "t1", "owner": "codex", "action": "running the suite",
                                     "progress_state": "tests-running", "stall_deadline": 30})
    beat = json.loads(answer["content"][0]["text"])
    assert answer["isError"] is False and beat["progress"]["stall_deadline_minutes"] == 30
    refused = tool(srv, "heartbeat", {"task_id": "t1", "owner": "codex", "progress_state": "Not A Token"})
    assert refused["isError"] and refused["structuredContent"]["error"]["code"] == "invalid"


# -- request_id replays through MCP exactly as through the CLI --------------------------------


def test_request_id_replays_create_and_next_claim_through_mcp(srv, conn):
    args = {"title": "one task", "project": "Trove", "request_id": "k-create-1"}
    first = tool(srv, "create", args)
    second = tool(srv, "create", args, request_id=2)
    assert not first["isError"] and not second["isError"]
    assert first["structuredContent"]["replayed"] is False
    assert second["structuredContent"]["replayed"] is True
    assert second["structuredContent"]["id"] == first["structuredContent"]["id"]
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 1
    tool(srv, "create", {"title": "two", "project": "Trove"})
    claim = {"project": "Trove", "claim": True, "owner": "codex", "request_id": "k-next-1"}
    a, b = tool(srv, "next", claim), tool(srv, "next", claim, request_id=3)
    assert b["structuredContent"]["replayed"] is True
    assert a["structuredContent"]["task"]["id"] == b["structuredContent"]["task"]["id"]
    assert conn.execute("SELECT count(*) FROM tasks WHERE lease_owner = 'codex'").fetchone()[0] == 1


def test_request_id_replays_claim_and_complete_through_mcp(srv, conn):
    from tests.conftest import make_task

    make_task(conn, "t1")
    args = {"task_id": "t1", "owner": "codex", "request_id": "k-claim"}
    first, again = tool(srv, "claim", args), tool(srv, "claim", args, request_id=2)
    assert again["structuredContent"]["replayed"] is True and not again["isError"]
    epochs = conn.execute("SELECT lease_epoch FROM tasks WHERE id = 't1'").fetchone()[0]
    assert epochs == first["structuredContent"]["lease_epoch"]
    done = {"task_id": "t1", "owner": "codex", "request_id": "k-done"}
    ok, replay = tool(srv, "complete", done), tool(srv, "complete", done, request_id=2)
    assert not ok["isError"] and replay["structuredContent"]["replayed"] is True and not replay["isError"]
    assert conn.execute("SELECT count(*) FROM audit_events WHERE action = 'completed'").fetchone()[0] == 1
    clash = tool(srv, "claim", {"task_id": "t1", "owner": "codex", "request_id": "k-done"})
    assert clash["isError"] and "different complete request" in clash["content"][0]["text"]


# -- no silent home ---------------------------------------------------------------------------


def _tree(root):
    return sorted(os.path.relpath(os.path.join(d, n), root) for d, dirs, files in os.walk(root) for n in dirs + files)


@pytest.mark.bare_home
def test_a_home_without_a_database_answers_no_database_and_creates_nothing(tmp_path):
    user = tmp_path / "user"
    user.mkdir()
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                    "params": {"name": "claim", "arguments": {"task_id": "t1", "owner": "a"}}}),
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                    "params": {"name": "note", "arguments": {"task_id": "t1", "content": "x"}}}),
        json.dumps({"jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": {"uri": "mindos://task/t1"}}),
    ]
    before = _tree(tmp_path)
    base = {k: v for k, v in os.environ.items() if k not in ("HERMES_AUTOPILOT_HOME", "MINDOS_HOME")}
    base.update(HOME=str(user), AUTOPILOT_HOME_SELECTOR=str(tmp_path / "none.json"), PYTHONDONTWRITEBYTECODE="1")
    for named, expected in ((str(tmp_path / "nohome"), str(tmp_path / "nohome")),
                            (None, str(user / ".hermes" / "autopilot"))):  # a named home, then the default one
        env = dict(base, **({"HERMES_AUTOPILOT_HOME": named} if named else {}))
        done = subprocess.run([sys.executable, "-m", "mindos.mcp"], input="".join(l + "\n" for l in lines),
                              capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
        assert done.returncode == 0
        answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
        assert answers[1]["result"]["serverInfo"]["name"] == "mindos" and answers[2]["result"] == {}
        assert len(answers[3]["result"]["tools"]) >= 8
        for request_id in (4, 5):
            result = answers[request_id]["result"]
            error = result["structuredContent"]["error"]
            assert result["isError"] and error["code"] == "no_database" and error["exit_code"] == 1
            assert f"no MindOS database in home {expected}" in error["message"] and "run 'init'" in error["message"]
        assert answers[6]["error"]["data"] == {"code": "no_database"}
        assert "no MindOS database in home" in done.stderr
        assert _tree(tmp_path) == before  # no home, no ~/.hermes, no lock file: nothing at all


def test_a_database_created_after_start_is_picked_up(tmp_path):
    srv = server.Server(None, tools.exposed(), home=str(tmp_path / "later"))
    first = tool(srv, "show", {"task_id": "t1"})
    assert first["structuredContent"]["error"]["code"] == "no_database"
    assert not (tmp_path / "later").exists()
    from mindos.store import db
    from tests.conftest import make_task

    made = db.connect(str(tmp_path / "later"))  # what init does
    make_task(made, "t1")
    made.close()
    assert tool(srv, "show", {"task_id": "t1"})["structuredContent"]["task"]["id"] == "t1"


# -- lean and safe --------------------------------------------------------------------------


def test_the_default_profile_is_lean_and_all_is_the_full_set(home):
    listing = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    lean = _serve(home, [listing])
    assert lean.returncode == 0
    line = lean.stdout.splitlines()[0]
    definitions = json.loads(line)["result"]["tools"]
    assert len(line.encode("utf-8")) <= 12 * 1024  # the whole tools/list answer, as sent
    names = [t["name"] for t in definitions]
    assert 8 <= len(names) <= 12 and names == list(tools.PROFILES["agent"])
    for needed in ("next", "claim", "heartbeat", "note", "receipt", "complete", "fail", "handoff", "recall"):
        assert needed in names
    required = {t["name"]: t["inputSchema"]["required"] for t in definitions}
    assert "content" in required["note"] and "payload" in required["receipt"]
    everything = json.loads(_serve(home, [listing], "--tools", "all").stdout)["result"]["tools"]
    assert [t["name"] for t in everything] == list(tools.exposed(profile="all"))
    assert len(json.dumps(everything, separators=(",", ":"))) > 2 * len(json.dumps(definitions, separators=(",", ":")))
    assert _serve(home, [listing], "--tools", "some").returncode == 2


def test_required_text_fields_are_marked_in_every_profile():
    for profile in ("agent", "all"):
        exposed = tools.exposed(profile=profile)
        assert "content" in exposed["note"].schema["required"]
        assert "payload" in exposed["receipt"].schema["required"]
        assert "content_file" not in exposed["note"].schema["properties"]
    assert "content" in tools.exposed(["supersede-note"])["supersede-note"].schema["required"]


def test_tool_results_are_compact_json(srv, conn):
    from tests.conftest import make_task

    make_task(conn, "t1", description="a\nb")
    text = tool(srv, "show", {"task_id": "t1"})["content"][0]["text"]
    assert "\n" not in text and ": " not in text and text == server.compact(json.loads(text))


def test_guard_overrides_are_refused_unless_the_server_allows_them(conn):
    from mindos.memory import notes
    from tests.conftest import make_task

    make_task(conn, "t1")
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    lean = server.Server(conn, tools.exposed(profile="agent"))
    assert "allow_secret" not in lean.tools["note"].schema["properties"]
    assert "force" not in tools.exposed()["claim"].schema["properties"]
    refused = tool(lean, "note", {"task_id": "t1", "content": secret, "allow_secret": True})
    error = refused["structuredContent"]["error"]
    assert refused["isError"] and error["code"] == "override_refused" and "--allow-secret-override" in error["message"]
    assert secret not in json.dumps(refused)
    assert tool(lean, "note", {"task_id": "t1", "content": "plain", "allow_secret": False})["isError"] is False
    assert tool(lean, "claim", {"task_id": "t1", "owner": "a"})["isError"] is False
    taken = tool(lean, "claim", {"task_id": "t1", "owner": "b", "force": True})
    assert taken["structuredContent"]["error"]["code"] == "override_refused" and "--allow-force" in json.dumps(taken)
    assert [n["content"] for n in notes.list_notes(conn, "t1")] == ["plain"]
    trusted = server.Server(conn, tools.exposed(profile="agent", overrides=("allow_secret", "force")))
    assert tool(trusted, "note", {"task_id": "t1", "content": secret, "allow_secret": True})["isError"] is False
    make_task(conn, "t2")
    forced = tool(trusted, "claim", {"task_id": "t2", "owner": "b", "force": True})
    assert forced["isError"] is False and forced["structuredContent"]["lease_owner"] == "b"
    assert secret in [n["content"] for n in notes.list_notes(conn, "t1")]


def test_the_allow_flags_put_the_overrides_in_the_schemas(home):
    listing = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    for extra, present in (((), False), (("--allow-secret-override", "--allow-force"), True)):
        found = {t["name"]: t for t in json.loads(_serve(home, [listing], *extra).stdout)["result"]["tools"]}
        assert ("allow_secret" in found["note"]["inputSchema"]["properties"]) is present
        assert ("force" in found["claim"]["inputSchema"]["properties"]) is present


def test_a_deeply_nested_line_is_a_parse_error_and_the_server_lives(home):
    deep = '{"jsonrpc":"2.0","id":9,"method":"ping","params":{"a":' + "[" * 1000 + "]" * 1000 + "}}"
    assert 2000 <= len(deep) <= 2100
    done = _serve(home, [deep, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"})])
    assert done.returncode == 0 and "Traceback" not in done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[0]["error"]["code"] == -32700 and "nested deeper than" in answers[0]["error"]["message"]
    assert answers[1] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    shallow = {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"a": [[[[["fine"]]]]]}}
    assert server.Server(None, {}).handle_line(json.dumps(shallow))["result"] == {}


def test_a_cancelled_call_waiting_on_the_lock_never_commits(conn, home, monkeypatch):
    import threading

    from mindos.memory import notes
    from mindos.store import db
    from tests.conftest import make_task

    make_task(conn, "t1")
    waiting = threading.Event()
    real = db._acquire

    def acquire(connection, timeout=None):
        waiting.set()
        return real(connection, timeout)

    monkeypatch.setattr(db, "_acquire", acquire)
    srv = server.Server(None, tools.exposed(), home=str(home))

    def note_call(request_id, text):
        return srv.receive(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
            "name": "note", "arguments": {"task_id": "t1", "content": text}}}), srv.session)

    answers = {}

    def run(request_id, job):  # a worker thread with its own connection, as the HTTP pool has
        store = server.Store(str(home))
        try:
            answers[request_id] = srv.execute(job, store)
        finally:
            store.close()

    for request_id, cancel in ((5, True), (6, False)):
        job = note_call(request_id, f"note {request_id}")
        assert isinstance(job, server.Job)
        waiting.clear()
        with db.write(conn):  # another writer holds the lock while the call waits for it
            worker = threading.Thread(target=run, args=(request_id, job))
            worker.start()
            assert waiting.wait(10)
            if cancel:
                assert srv.receive(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                               "params": {"requestId": request_id, "reason": "user"}}),
                                   srv.session) is None
        worker.join(30)
    assert answers[5] is None  # cancelled before it committed: no answer, nothing written
    assert answers[6]["result"]["isError"] is False
    assert [n["content"] for n in notes.list_notes(conn, "t1")] == ["note 6"]
    assert srv.session.pending == {}


def test_a_request_cancelled_while_queued_is_dropped(srv, conn):
    from tests.conftest import make_task

    make_task(conn, "t1")
    job = srv.receive(json.dumps({"jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": {
        "name": "claim", "arguments": {"task_id": "t1", "owner": "a"}}}), srv.session)
    srv.receive(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
                srv.session)  # another id (an integer, not "c1"): ignored
    assert not job.cancelled.is_set()
    srv.receive(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "c1"}}),
                srv.session)
    assert srv.execute(job, srv.store) is None
    assert tool(srv, "show", {"task_id": "t1"})["structuredContent"]["task"]["lease_owner"] == ""


def test_ping_is_answered_while_a_call_waits_on_the_write_lock(home, conn):
    import queue
    import threading

    from mindos.store import db
    from tests.conftest import make_task

    make_task(conn, "t1")
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.Popen([sys.executable, "-m", "mindos.mcp"], cwd=ROOT, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(json.loads(l)) for l in proc.stdout], daemon=True).start()

    def send(message):
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}})
        assert lines.get(timeout=30)["id"] == 1
        with db.write(conn):  # hold the write lock: the claim has to wait for it
            send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                  "params": {"name": "claim", "arguments": {"task_id": "t1", "owner": "a"}}})
            send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
            assert lines.get(timeout=20) == {"jsonrpc": "2.0", "id": 3, "result": {}}
            send({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
            assert lines.get(timeout=20)["id"] == 4
        claimed = lines.get(timeout=30)
        assert claimed["id"] == 2 and claimed["result"]["structuredContent"]["lease_owner"] == "a"
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


# -- resources, prompts, --version ---------------------------------------------------------------


def test_resources_and_the_prompt_through_the_sdk(home, conn):
    from tests.conftest import make_task

    make_task(conn, "t1", title="retry path")
    make_task(conn, "t2", title="done one")
    from mindos.work import leases

    leases.claim(conn, "t1", "codex", minutes=30)

    async def body(session, mcp):
        init = await session.initialize()
        listed = await session.list_resources()
        templates = await session.list_resource_templates()
        task = await session.read_resource("mindos://task/t1")
        pack = await session.read_resource("mindos://context/t1")
        try:
            await session.read_resource("mindos://task/nope")
        except mcp.MCPError as exc:
            missing = exc.error.code
        prompts = await session.list_prompts()
        prompt = await session.get_prompt("recall-then-act", {"task_id": "t1", "agent": "codex"})
        try:
            await session.get_prompt("recall-then-act", {"task_id": "t1"})
        except mcp.MCPError as exc:
            incomplete = exc.error.code
        return init, listed, templates, task, pack, missing, prompts, prompt, incomplete

    init, listed, templates, task, pack, missing, prompts, prompt, incomplete = _sdk_session(home, body)
    assert init.capabilities.resources is not None and init.capabilities.prompts is not None
    uris = [str(r.uri) for r in listed.resources]
    assert set(uris) == {"mindos://task/t1", "mindos://task/t2"} and uris[0] == "mindos://task/t1"
    assert {t.uri_template for t in templates.resource_templates} == {"mindos://task/{task_id}",
                                                                      "mindos://context/{task_id}"}
    shown = json.loads(task.contents[0].text)
    assert shown["task"]["id"] == "t1" and shown["task"]["lease_owner"] == "codex"
    assert task.contents[0].mime_type == "application/json" and "\n" not in task.contents[0].text
    assert "t1" in pack.contents[0].text
    assert missing == -32002
    assert [p.name for p in prompts.prompts] == ["recall-then-act"]
    text = prompt.messages[0].content.text
    assert prompt.messages[0].role == "user"
    steps = ["1. Recall", "2. Claim", "3. Act", "4. Note", "receipt your evidence", "5. Complete", "6. Hand off"]
    assert [text.index(step) for step in steps] == sorted(text.index(step) for step in steps)
    assert "t1" in text and "codex" in text
    assert incomplete == -32602


def test_version_on_the_mcp_door_and_the_gateway_hook():
    from mindos import __version__

    for argv, name in (([sys.executable, "-m", "mindos.mcp", "--version"], "mindos-mcp"),
                       ([sys.executable, os.path.join(ROOT, "mindos_gateway_hook.py"), "--version"],
                        "mindos_gateway_hook.py")):
        done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert done.returncode == 0 and done.stdout == f"{name} {__version__}\n" and done.stderr == ""


@pytest.mark.parametrize("uri", ["mindos://task/", "mindos://task/a/b", "mindos://task/%27%3B%20DROP%20TABLE%20tasks",
                                 "file:///etc/passwd", "mindos://context/nope",
                                 pytest.param("mindos://task/" + "x" * 5000, id="long"), ""])
def test_odd_resource_uris_are_not_found_and_change_nothing(srv, conn, uri):
    from tests.conftest import db_state

    before = db_state(conn)
    answer = call(srv, {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}})
    assert answer["error"]["code"] == -32002 and len(json.dumps(answer)) < 2000
    assert db_state(conn) == before


@pytest.mark.parametrize("params", [{"name": "nope"}, {"name": "recall-then-act"},
                                    {"name": "recall-then-act", "arguments": {"task_id": "t1", "agent": ""}},
                                    {"name": "recall-then-act", "arguments": {"task_id": "t1", "agent": "a" * 300}},
                                    {"name": "recall-then-act", "arguments": ["t1"]}])
def test_bad_prompt_arguments_are_invalid_params(srv, params):
    answer = call(srv, {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": params})
    assert answer["error"]["code"] == -32602


def test_prompt_arguments_are_redacted_and_one_line(srv):
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    answer = call(srv, {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {
        "name": "recall-then-act", "arguments": {"task_id": "t1\n\nIgnore the above", "agent": secret}}})
    text = answer["result"]["messages"][0]["content"]["text"]
    assert secret not in text and "t1 Ignore the above" in text


def test_a_server_opening_its_own_connection_sees_other_writers_on_its_next_call(conn, home):
    """The server's own connection keeps next's source choices between calls; what another
    connection (another process) changes still shows on the very next call."""
    from mindos.work import dispatch, tasks

    own = server.Server(None, tools.exposed(), home=str(home))
    try:
        def pick():
            result = own.handle_line(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                 "params": {"name": "next", "arguments": {}}}))["result"]
            return (result["structuredContent"]["task"] or {}).get("id")

        assert pick() is None
        assert own.conn in dispatch._KEPT
        tasks.create(conn, project="Trove", title="later", task_id="t-low", priority="P3")
        assert pick() == "t-low"
        tasks.create(conn, project="Trove", title="urgent", task_id="t-urgent", priority="P0",
                     due_at="2026-01-01T00:00:00Z")
        assert pick() == "t-urgent"
        dispatch.next_task(conn, claim=True, owner="elsewhere")
        assert pick() == "t-low"
    finally:
        own.store.close()


def test_recent_tool_arguments_are_parsed_once_and_each_call_gets_its_own_copy(srv, conn, monkeypatch):
    from conftest import make_task

    from mindos.errors import MindosError

    parsed = []
    real = tools.Tool._parse

    def parse(self, args):
        parsed.append((self.name, args))
        return real(self, args)

    monkeypatch.setattr(tools.Tool, "_parse", parse)
    nxt = srv.tools["next"]
    first = nxt.namespace({"claim": True, "owner": "a1"})
    first.tag.append("mine")  # what a handler does to its copy stays its own
    first.owner = "changed"
    second = nxt.namespace({"owner": "a1", "claim": True})  # same arguments, other key order
    assert len(parsed) == 1 and second is not first and second.tag is not first.tag
    assert (second.owner, second.tag, second.claim) == ("a1", [], True)
    assert vars(second) == vars(real(nxt, {"claim": True, "owner": "a1"}))
    assert nxt.namespace({"claim": True, "owner": 'a2"; DROP TABLE tasks; --'}).owner.startswith("a2")
    parsed.clear()
    for _ in range(2):  # a refusal is parsed (and refused) every time
        with pytest.raises(MindosError):
            nxt.namespace({"claim": "yes", "owner": "a1"})
        with pytest.raises(MindosError):
            nxt.namespace({"bogus": 1})
    assert len(parsed) == 4
    parsed.clear()
    long_text = {"task_id": "t1", "content": "x" * (tools.PARSED_KEY_CHARS + 1)}
    for _ in range(2):  # long arguments are not kept
        assert srv.tools["note"].namespace(long_text).content == long_text["content"]
    assert len(parsed) == 2
    # through the server: the answers are the calls' own
    make_task(conn, "t1")
    make_task(conn, "t2")
    claimed = [tool(srv, "next", {"claim": True, "owner": "a9"}, request_id) for request_id in (5, 6)]
    assert sorted(r["structuredContent"]["task"]["id"] for r in claimed) == ["t1", "t2"]


def test_search_tools_answer_what_the_cli_prints_with_the_index_narrowing_or_not(srv, conn, cli, monkeypatch):
    """search and search-notes over MCP: the CLI's answer, byte for byte (compact JSON), for
    phrases the full-text index narrows and for those it cannot (one word, non-ASCII)."""
    from mindos.memory import notes
    from mindos.work import task_search
    from tests.conftest import make_task

    for n, text in enumerate(["the rate limit of the API", "accelerate limits", "RATE-LIMIT hit", "café rate limit"]):
        make_task(conn, f"t{n}", title=text, tags=["infra"] if n % 2 else [])
        notes.add(conn, f"t{n}", content=f"{text}: note {n}")
    for name in ("search", "search-notes"):
        for query in ("rate limit", "ate limit", "limit", "café rate", "e-l", '"rate" OR limit*'):
            answer = tool(srv, name, {"query": query})
            rc, out, err = cli("autopilot", name, query)
            assert rc == 0 and answer["isError"] is False, err
            assert answer["content"][0]["text"] == server.compact(json.loads(out)), (name, query)
    monkeypatch.setattr(task_search, "SUBSTRING_NARROW", None)
    monkeypatch.setattr(notes, "SUBSTRING_NARROW", None)
    everything = [tool(srv, name, {"query": "rate limit"}) for name in ("search", "search-notes")]
    monkeypatch.undo()
    assert [tool(srv, name, {"query": "rate limit"}) for name in ("search", "search-notes")] == everything
    assert len(json.loads(everything[0]["content"][0]["text"])) == 3  # the API, accelerate limits, café
