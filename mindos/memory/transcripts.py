"""Transcript line formats: what a vendor's session JSONL line says, as plain messages.

Session ingestion (:mod:`mindos.memory.sessions`) reads agents' raw transcripts; this module
turns their lines into ``(role, text, at)`` messages and counts everything else.  The shapes
come from the vendors' documented on-disk formats, not from guesses:

  * **Claude Code** (``~/.claude/projects/<encoded-path>/<session-uuid>.jsonl``): one record a
    line with ``type`` (``user``, ``assistant``, ``system``, ``summary``,
    ``file-history-snapshot``, ``queue-operation``), ``message: {role, content}``,
    ``timestamp``, ``sessionId``, ``uuid``/``parentUuid``, ``cwd``.  ``content`` is a string
    or a list of blocks: ``text`` (kept), ``thinking`` (skipped), ``tool_use`` (a tool call)
    and, in user records, ``tool_result`` (a tool result).
  * **Codex CLI** rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl``): one
    ``{timestamp, type, payload}`` envelope a line; ``session_meta`` (``payload.id`` is the
    session id), ``turn_context``, ``event_msg`` (a UI echo of messages already present as
    response items, so skipped to avoid double counting), ``compacted`` and
    ``response_item`` whose ``payload.type`` is ``message`` (``role`` plus ``content``
    blocks ``input_text``/``output_text``), ``reasoning``, or a tool call/output
    (``function_call``, ``function_call_output``, ``custom_tool_call``, ``local_shell_call``
    ...).  The harness's injected ``<environment_context>`` / ``<user_instructions>`` user
    turns are boilerplate, not conversation.
  * **Generic** lines: ``{role, content, timestamp}`` (content a string or a list of
    ``{type: text, text}`` blocks); role ``tool`` or an assistant turn that only carries
    ``tool_calls`` is a tool record.

Design decisions
  * **Honest counting, never garbage.**  Only ``user`` and ``assistant`` turns with text
    become messages; tool calls and results, unknown roles, malformed lines (not a JSON
    object) and records of no known shape are each counted under their own name.  A file
    with zero messages is reported ``unsupported`` by the caller.
  * **Detection per line** by shape (``message`` -> Claude Code, ``payload`` -> Codex,
    ``role`` -> generic), so a file mixing formats still yields what it can and says so.
"""

import json
import re

from mindos.core import clock
from mindos.errors import InvalidInput

ROLES = ("user", "assistant")
# (re.ASCII: \d is 0-9 only, so a timestamp in other-script digits takes the full parse and is dropped)
_PLAIN_UTC = re.compile(r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?Z\Z",
                        re.ASCII)
FORMATS = ("claude-code", "codex", "generic")
COUNTERS = ("lines", "blank_lines", "malformed_lines", "tool_calls_skipped", "tool_results_skipped",
            "unknown_roles_skipped", "other_records_skipped", "unrecognized_records", "empty_messages_skipped")
MAX_MESSAGE_CHARS = 100_000  # a message longer than this is stored clipped (counted)

_CLAUDE_SKIPPED_TYPES = ("system", "summary", "file-history-snapshot", "queue-operation", "progress")
_CODEX_TOOL_TYPES = ("function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
                     "local_shell_call", "local_shell_call_output", "web_search_call", "tool_search_call")
_CODEX_BOILERPLATE = ("<environment_context>", "<user_instructions>", "<permissions instructions>")


def new_counts():
    """A zeroed counter dict (every key of COUNTERS)."""
    return dict.fromkeys(COUNTERS, 0)


def _timestamp(value):
    if not isinstance(value, str) or not value:
        return None
    if _PLAIN_UTC.match(value):  # the common vendor shape, 2026-08-20T10:00:05.123Z: no parse needed
        return value[:19] + "Z"
    try:
        return clock.normalize(value, "timestamp")
    except InvalidInput:
        return None


def _block_texts(blocks, counts, text_types):
    """Text of a content block list; tool blocks counted.  Returns (text, tool_calls, tool_results)."""
    texts, calls, results = [], 0, 0
    for block in blocks:
        if isinstance(block, str):
            texts.append(block)
            continue
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in text_types and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind in ("tool_use", "server_tool_use", "function_call"):
            calls += 1
        elif kind in ("tool_result", "function_call_output", "web_search_tool_result"):
            results += 1
    return "\n".join(text for text in texts if text.strip()), calls, results


def _message(role, content, at, counts, text_types=("text",)):
    """Turn a role + content into a message, counting what is skipped; None when skipped."""
    if isinstance(content, str):
        text, calls, results = content, 0, 0
    elif isinstance(content, list):
        text, calls, results = _block_texts(content, counts, text_types)
    else:
        text, calls, results = "", 0, 0
    counts["tool_calls_skipped"] += calls
    counts["tool_results_skipped"] += results
    if role not in ROLES:
        counts["unknown_roles_skipped"] += 1
        return None
    if not text.strip():
        if not (calls or results):
            counts["empty_messages_skipped"] += 1
        return None
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[:MAX_MESSAGE_CHARS]
        counts["clipped_messages"] = counts.get("clipped_messages", 0) + 1
    return role, text, at


def parse_line(obj, counts, meta):
    """One decoded line -> ``(role, text, at)`` or None; updates ``counts`` and ``meta``
    (``formats``: per-format line counts, ``session_id``: the first id a line names)."""
    formats = meta["formats"]
    if "message" in obj and isinstance(obj.get("type"), str):
        formats["claude-code"] = formats.get("claude-code", 0) + 1
        if not meta.get("session_id") and isinstance(obj.get("sessionId"), str):
            meta["session_id"] = obj["sessionId"]
        message = obj["message"]
        if obj["type"] in _CLAUDE_SKIPPED_TYPES or not isinstance(message, dict):
            counts["other_records_skipped"] += 1
            return None
        role = message.get("role", obj["type"])
        return _message(role, message.get("content"), _timestamp(obj.get("timestamp")), counts)
    if "payload" in obj and isinstance(obj.get("type"), str):
        formats["codex"] = formats.get("codex", 0) + 1
        payload = obj["payload"]
        kind = obj["type"]
        if kind == "session_meta" and isinstance(payload, dict):
            if not meta.get("session_id") and isinstance(payload.get("id"), str):
                meta["session_id"] = payload["id"]
            counts["other_records_skipped"] += 1
            return None
        if kind != "response_item" or not isinstance(payload, dict):
            counts["other_records_skipped"] += 1
            return None
        item = payload.get("type")
        if item in _CODEX_TOOL_TYPES:
            counts["tool_calls_skipped" if not item.endswith("_output") else "tool_results_skipped"] += 1
            return None
        if item != "message":
            counts["other_records_skipped"] += 1
            return None
        content = payload.get("content")
        if isinstance(content, list) and content and isinstance(content[0], dict) \
                and isinstance(content[0].get("text"), str) and content[0]["text"].lstrip().startswith(_CODEX_BOILERPLATE):
            counts["other_records_skipped"] += 1
            return None
        return _message(payload.get("role"), content, _timestamp(obj.get("timestamp")), counts,
                        text_types=("input_text", "output_text", "text"))
    if "role" in obj:
        formats["generic"] = formats.get("generic", 0) + 1
        role = obj.get("role")
        if role == "tool":
            counts["tool_results_skipped"] += 1
            return None
        if role == "assistant" and obj.get("tool_calls"):
            counts["tool_calls_skipped"] += len(obj["tool_calls"]) if isinstance(obj["tool_calls"], list) else 1
        at = _timestamp(obj.get("timestamp") or obj.get("created_at") or obj.get("at"))
        return _message(role, obj.get("content"), at, counts)
    if obj.get("type") in _CLAUDE_SKIPPED_TYPES:  # Claude Code bookkeeping records carry no message
        formats["claude-code"] = formats.get("claude-code", 0) + 1
        counts["other_records_skipped"] += 1
        return None
    counts["unrecognized_records"] += 1
    return None


def parse(data):
    """Parse a transcript's bytes.  Returns ``{"messages": [(role, text, at)], "counts",
    "format", "session_id"}``; ``format`` is the dominant line format (``mixed`` when several
    appear, ``unknown`` when none)."""
    counts = new_counts()
    meta = {"formats": {}, "session_id": None}
    messages = []
    text = data.decode("utf-8", errors="replace")
    loads = json.loads
    for line in text.splitlines():
        counts["lines"] += 1
        if not line.strip():
            counts["blank_lines"] += 1
            counts["lines"] -= 1
            continue
        try:
            obj = loads(line)
        except (ValueError, RecursionError):
            counts["malformed_lines"] += 1
            continue
        if not isinstance(obj, dict):
            counts["malformed_lines"] += 1
            continue
        found = parse_line(obj, counts, meta)
        if found is not None:
            messages.append(found)
    seen = meta["formats"]
    if not seen:
        fmt = "unknown"
    elif len(seen) == 1:
        fmt = next(iter(seen))
    else:
        fmt = "mixed"
    return {"messages": messages, "counts": counts, "format": fmt, "session_id": meta["session_id"]}
