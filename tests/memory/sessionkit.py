"""Transcript fixtures built from the vendors' documented on-disk shapes.

Claude Code (~/.claude/projects/<encoded-path>/<session-uuid>.jsonl): records with type,
message {role, content (str | blocks: text, thinking, tool_use, tool_result)}, timestamp,
sessionId, uuid, parentUuid, cwd, plus non-message records (summary,
file-history-snapshot, queue-operation, system).  Codex CLI rollouts
(~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl): {timestamp, type, payload}
envelopes: session_meta, turn_context, event_msg, response_item (message with
input_text/output_text blocks, reasoning, function_call, function_call_output).
"""

import json
import os


def _line(obj):
    return json.dumps(obj, separators=(",", ":"))


def claude_session(session_id="5f1c2a9e-0000-4000-8000-000000000001", cwd="/home/me/proj-a",
                   user="How do we fix the redirect cookie bug?",
                   answer="The redirect drops the session cookie because SameSite is Strict.",
                   at="2026-08-20T10:00:00.000Z"):
    """A short Claude Code session: every documented record kind once."""
    base = {"sessionId": session_id, "cwd": cwd, "version": "2.1.12", "gitBranch": "main", "userType": "external",
            "isSidechain": False}
    records = [
        {"type": "queue-operation", "operation": "dequeue", "timestamp": at, "sessionId": session_id},
        {**base, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": at,
         "message": {"role": "user", "content": user}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": at.replace("00:00.", "00:05."),
         "message": {"role": "assistant", "model": "claude-opus-4-5", "content": [
             {"type": "thinking", "thinking": "Let me look at the cookie settings."},
             {"type": "text", "text": answer},
             {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": "grep -rn SameSite ."}}]}},
        {**base, "type": "user", "uuid": "u2", "parentUuid": "a1", "timestamp": at.replace("00:00.", "00:06."),
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_01", "content": "app.py:12: samesite='Strict'"}]},
         "toolUseResult": {"stdout": "app.py:12: samesite='Strict'", "stderr": ""}},
        {**base, "type": "assistant", "uuid": "a2", "parentUuid": "u2", "timestamp": at.replace("00:00.", "00:09."),
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Switch it to Lax and retest."}]}},
        {"type": "summary", "summary": "Redirect cookie fix", "leafUuid": "a2"},
        {"type": "file-history-snapshot", "messageId": "a2", "snapshot": {"trackedFileBackups": {}}},
        {**base, "type": "system", "subtype": "turn_duration", "timestamp": at, "content": "done",
         "message": {"role": "system", "content": "hook ran"}},
    ]
    return "\n".join(_line(r) for r in records) + "\n"


def codex_rollout(session_id="019a2d7a-41c4-78b1-b7cc-a45d62a89cd5", user="Why does the login redirect loop?",
                  answer="The redirect loops because the cookie domain is wrong.", at="2026-08-20T11:00:00.000Z"):
    """A short Codex CLI rollout: session_meta, boilerplate, turn_context, event echoes, tools."""
    records = [
        {"timestamp": at, "type": "session_meta", "payload": {"id": session_id, "timestamp": at, "cwd": "/w/p",
                                                              "originator": "codex_cli_rs", "cli_version": "0.46.0"}},
        {"timestamp": at, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>\n  <cwd>/w/p</cwd>\n</environment_context>"}]}},
        {"timestamp": at, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": user}]}},
        {"timestamp": at, "type": "event_msg", "payload": {"type": "user_message", "message": user, "kind": "plain"}},
        {"timestamp": at, "type": "turn_context", "payload": {"cwd": "/w/p", "approval_policy": "never",
                                                              "model": "gpt-5-codex"}},
        {"timestamp": at, "type": "response_item", "payload": {"type": "reasoning", "summary": [],
                                                               "encrypted_content": "gAAAA"}},
        {"timestamp": at, "type": "response_item", "payload": {"type": "function_call", "name": "shell",
                                                               "arguments": "{\"command\":[\"ls\"]}", "call_id": "c1"}},
        {"timestamp": at, "type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1",
                                                               "output": "{\"output\":\"app.py\"}"}},
        {"timestamp": at.replace("00:00.", "00:30."), "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]}},
        {"timestamp": at, "type": "event_msg", "payload": {"type": "agent_message", "message": answer}},
        {"timestamp": at, "type": "response_item", "payload": {"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": "sandbox rules"}]}},
    ]
    return "\n".join(_line(r) for r in records) + "\n"


def generic_lines(pairs, at="2026-08-20T12:00:00Z"):
    """Generic {role, content, timestamp} lines."""
    return "".join(_line({"role": role, "content": content, "timestamp": at}) + "\n" for role, content in pairs)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def tree_hashes(root):
    """{relative path: bytes} of every file under root (for the never-mutated check)."""
    found = {}
    for directory, _, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, root)] = handle.read()
    return found
