"""The scripted model endpoint itself (no client needed, so these run everywhere, fast).

They pin the wire shapes the real clients were seen to accept: Anthropic Messages events
(message_start ... message_stop, a tool_use block filled by input_json_delta) and Responses
events (response.created ... response.completed, a function_call item that carries Codex's
``namespace`` for MCP tools).
"""

import json
import urllib.request

import pytest

from model_server import FINAL_TEXT, SIDE_TEXT, Script, ScriptedModel, fit_arguments, reports_error

CLAIM_SCHEMA = {"type": "object", "properties": {"task_id": {"type": "string"}, "owner": {"type": "string"}}}
RECEIPT_SCHEMA = {"type": "object", "properties": {"task_id": {"type": "string"}, "payload": {"type": "string"}}}


def post(model, path, body):
    request = urllib.request.Request(model.base_url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        raw = response.read().decode()
    events = []
    for chunk in raw.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines() if ": " in line)
        if "data" in lines:
            events.append((lines.get("event"), json.loads(lines["data"])))
    return events


@pytest.fixture
def model():
    script = Script([("claim", lambda turn: {"task_id": "t-1", "owner": turn.agent("fallback")}),
                     ("receipt", {"task_id": "t-1", "payload": {"tests": "pass"}})])
    with ScriptedModel(script) as server:
        yield server


def anthropic_body(messages, tools=True):
    body = {"model": "m", "stream": True, "messages": messages}
    if tools:
        body["tools"] = [{"name": "Bash", "input_schema": {}},
                         {"name": "mcp__mindos__claim", "input_schema": CLAIM_SCHEMA},
                         {"name": "mcp__mindos__receipt", "input_schema": RECEIPT_SCHEMA}]
    return body


def test_anthropic_tool_calls_then_final_text(model):
    pack = {"role": "user", "content": "# MindOS prime for claude-code-1a2b digest=x"}
    events = post(model, "/v1/messages?beta=true", anthropic_body([pack]))
    assert [name for name, _ in events][:2] == ["message_start", "content_block_start"]
    assert events[-1][0] == "message_stop"
    block = events[1][1]["content_block"]
    assert block["type"] == "tool_use" and block["name"] == "mcp__mindos__claim"
    delta = next(data["delta"] for name, data in events if name == "content_block_delta")
    assert json.loads(delta["partial_json"]) == {"task_id": "t-1", "owner": "claude-code-1a2b"}
    assert next(data for name, data in events if name == "message_delta")["delta"]["stop_reason"] == "tool_use"

    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": block["id"], "content": "{}"}]}
    events = post(model, "/v1/messages", anthropic_body([pack, result]))
    delta = next(data["delta"] for name, data in events if name == "content_block_delta")
    assert json.loads(delta["partial_json"]) == {"task_id": "t-1", "payload": '{"tests": "pass"}'}  # fitted to a string

    second = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "is_error": True,
                                           "content": [{"type": "text", "text": "boom"}]}]}
    events = post(model, "/v1/messages", anthropic_body([pack, result, second]))
    assert next(data["delta"] for name, data in events if name == "content_block_delta")["text"] == FINAL_TEXT
    assert model.steps == ["tool:claim", "tool:receipt", "final"]
    assert model.tool_results[-1] == {"text": "boom", "is_error": True}
    assert "MindOS prime for claude-code-1a2b" in model.transcript()


def test_side_requests_get_a_short_text_and_do_not_advance_the_script(model):
    events = post(model, "/v1/messages", anthropic_body([{"role": "user", "content": "title?"}], tools=False))
    assert next(data["delta"] for name, data in events if name == "content_block_delta")["text"] == SIDE_TEXT
    assert model.steps == [] and model.main_requests() == []


def test_a_tool_the_client_did_not_offer_is_a_loud_text(model):
    body = {"model": "m", "stream": True, "messages": [], "tools": [{"name": "Bash", "input_schema": {}}]}
    events = post(model, "/v1/messages", body)
    text = next(data["delta"] for name, data in events if name == "content_block_delta")["text"]
    assert text.startswith("SCRIPT ERROR") and "'claim'" in text
    assert model.errors == [text] and model.steps == ["error"]


def test_responses_function_call_carries_the_codex_namespace(model):
    tools = [{"type": "function", "name": "exec_command", "parameters": {}},
             {"type": "namespace", "name": "mcp__mindos", "tools": [
                 {"type": "function", "name": "claim", "parameters": CLAIM_SCHEMA},
                 {"type": "function", "name": "receipt", "parameters": RECEIPT_SCHEMA}]}]
    body = {"model": "gpt-5", "stream": True, "tools": tools, "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]}
    events = post(model, "/v1/responses", body)
    assert [name for name, _ in events] == ["response.created", "response.output_item.added",
                                             "response.output_item.done", "response.completed"]
    item = events[2][1]["item"]
    assert item["type"] == "function_call" and item["namespace"] == "mcp__mindos" and item["name"] == "claim"
    assert json.loads(item["arguments"]) == {"task_id": "t-1", "owner": "fallback"}
    body["input"] += [dict(item), {"type": "function_call_output", "call_id": item["call_id"],
                                   "output": 'Wall time: 0.01 seconds\nOutput:\n{"error":{"code":"not_found"}}'}]
    events = post(model, "/v1/responses", body)
    assert events[2][1]["item"]["name"] == "receipt"
    assert model.tool_results == [{"text": 'Wall time: 0.01 seconds\nOutput:\n{"error":{"code":"not_found"}}',
                                   "is_error": True}]
    assert events[-1][1]["response"]["status"] == "completed"


def test_helpers():
    assert reports_error('{"error": {"code": "busy"}}') and not reports_error('{"id": "t-1"}')
    assert not reports_error("no json here") and not reports_error("{broken")
    schema = {"properties": {"a": {"type": "array"}, "o": {"type": "object"}, "s": {"type": "string"}}}
    assert fit_arguments({"a": "x", "o": '{"k": 1}', "s": {"k": 1}, "z": 3}, schema) == \
        {"a": ["x"], "o": {"k": 1}, "s": '{"k": 1}', "z": 3}
