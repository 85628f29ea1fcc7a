"""A scripted model endpoint on 127.0.0.1 for the end-to-end tests (standard library only).

It speaks just enough of two wire protocols for the real clients to run a whole turn:

  * the Anthropic Messages API (``POST /v1/messages``, streamed as server-sent events), which
    Claude Code calls at ``ANTHROPIC_BASE_URL``;
  * the OpenAI Responses API (``POST /v1/responses``, streamed), which Codex calls through a
    custom model provider whose ``base_url`` points here.

Every request is recorded (method, path, headers, parsed JSON body) so a test can look for
the text a hook injected.  The replies follow a :class:`Script`: for the agent's main turn (a
request that offers the MindOS MCP tools) the n-th reply is the n-th scripted tool call
(``tool_use`` block / ``function_call`` item), where n is the number of tool results the
client has already sent back, then the final text.  A side request (Claude Code asks its
small model for titles, quota checks and the like) gets a short text.

A scripted tool is named by its MindOS command (``claim``); the server answers with the
client's own name for it (``mcp__mindos__claim`` in Claude Code) taken from the offered
tools.  A tool the client did not offer is not invented: the reply is a text saying so,
which the test sees in the result and in :attr:`ScriptedModel.errors`.
"""

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FINAL_TEXT = "MINDOS-E2E-DONE"
SIDE_TEXT = "ok"


class Script:
    """The tool calls of the main turn, in order, then ``final``.

    ``calls`` is a list of ``(command, arguments)``; ``arguments`` is a dict, or a callable
    taking a :class:`Turn` and returning the dict (for an argument that depends on what the
    client sent: an earlier result, the agent name the injected pack gave)."""

    def __init__(self, calls=(), final=FINAL_TEXT):
        self.calls = list(calls)
        self.final = final


class Turn:
    """What a main-turn request carried: ``results`` (``[{"text", "is_error"}]`` of the tool
    results so far) and ``transcript`` (the whole request body as JSON text)."""

    def __init__(self, results, transcript):
        self.results = results
        self.transcript = transcript

    def agent(self, default):
        """The agent name the MindOS pack in this request was primed for, else ``default``."""
        import re

        found = re.search(r"MindOS prime for ([A-Za-z0-9_.:@-]+)", self.transcript)
        return found.group(1) if found else default


def _fit(value, schema):
    """``value`` reshaped to the offered property ``schema`` (a JSON text where a string is
    wanted, the parsed value where an object is, a one-item list where an array is)."""
    if not isinstance(schema, dict):
        return value
    kind = schema.get("type")
    if kind == "string" and not isinstance(value, str):
        return json.dumps(value)
    if kind in ("object", "array") and isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = value
        if kind == "object" and isinstance(parsed, dict):
            return parsed
        if kind == "array":
            return parsed if isinstance(parsed, list) else [value]
    if kind == "array" and not isinstance(value, list):
        return [value]
    return value


def fit_arguments(arguments, schema):
    """Scripted ``arguments`` adapted to the tool's offered input ``schema``."""
    properties = (schema or {}).get("properties") or {}
    return {name: _fit(value, properties.get(name)) for name, value in arguments.items()}


def _tool_name(offered, command):
    """The client's name for the MindOS tool ``command`` among ``offered`` names, else None."""
    for name in offered:
        if name == command:
            return name
    for name in offered:
        if "mindos" in name.lower() and (name.endswith("__" + command) or name.endswith("." + command)
                                         or name.endswith("/" + command)):
            return name
    return None


def _schema_of(tool):
    """The input schema of an offered tool (Anthropic ``input_schema``, OpenAI ``parameters``)."""
    for key in ("input_schema", "parameters", "inputSchema"):
        if isinstance(tool.get(key), dict):
            return tool[key]
    return {}


def reports_error(text):
    """Does a tool result's text carry a MindOS error object (``{"error": {...}}``)?  Codex
    prefixes MCP results with ``Wall time: ...\nOutput:\n``, so the JSON is searched for."""
    start = text.find("{")
    if start < 0:
        return False
    try:
        doc = json.loads(text[start:])
    except ValueError:
        return False
    return isinstance(doc, dict) and isinstance(doc.get("error"), dict)


def _text_of(content):
    """The text inside a tool result's content (a string, or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text_of(part.get("text", "") if isinstance(part, dict) else part) for part in content)
    return "" if content is None else str(content)


class ScriptedModel(ThreadingHTTPServer):
    """``with ScriptedModel(script) as model:`` serves on ``model.base_url`` in a thread."""

    daemon_threads = True

    def __init__(self, script=None):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = script or Script()
        self.requests = []        # {"method", "path", "headers", "body"} in arrival order
        self.errors = []          # scripted tools the client did not offer, bad requests
        self.tool_results = []    # [{"text", "is_error"}] the client sent back (main turn, latest request)
        self.steps = []           # what each main-turn reply was: "tool:<command>" or "final" or "error"
        self.offered = {}         # the client's tool name -> its input schema (latest main request)
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.thread = None

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self):
        # a short poll: shutdown() waits for the loop to see it, half a second at the default
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                                       name="scripted-model", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()
        return False

    # -- what the tests read --------------------------------------------------------

    def bodies(self, path_part=""):
        return [r["body"] for r in self.requests if path_part in r["path"] and isinstance(r["body"], dict)]

    def transcript(self):
        """Every recorded request body as one string (for "does this text reach the model")."""
        return "\n".join(json.dumps(r["body"], ensure_ascii=False) for r in self.requests)

    def main_requests(self):
        return [r for r in self.requests if r.get("main")]

    # -- deciding the reply ---------------------------------------------------------

    def next_step(self, offered, results, body):
        """``("tool", name, arguments)`` or ``("text", text)`` for a main-turn request that
        has ``results`` so far and offers ``offered`` (``{name: input schema}``)."""
        index = len(results)
        with self.lock:
            self.tool_results = list(results)
            self.offered = dict(offered)
        if index >= len(self.script.calls):
            with self.lock:
                self.steps.append("final")
            return ("text", self.script.final)
        command, arguments = self.script.calls[index]
        name = _tool_name(list(offered), command)
        if name is None:
            message = (f"SCRIPT ERROR: the client offered no MindOS tool {command!r}"
                       f" (offered: {', '.join(offered) or 'none'})")
            with self.lock:
                self.errors.append(message)
                self.steps.append("error")
            return ("text", message)
        if callable(arguments):
            arguments = arguments(Turn(list(results), json.dumps(body, ensure_ascii=False)))
        with self.lock:
            self.steps.append(f"tool:{command}")
        return ("tool", name, fit_arguments(arguments, offered[name]))

    def new_id(self, prefix):
        with self.lock:
            return f"{prefix}_{next(self.ids):04d}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ScriptedModel

    def log_message(self, fmt, *args):  # quiet: the tests read self.server.requests
        pass

    # -- plumbing -------------------------------------------------------------------

    def _record(self, body):
        entry = {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
        with self.server.lock:
            self.server.requests.append(entry)
        return entry

    def _read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding", "").lower() in ("gzip", "zstd", "br"):
            if self.headers["Content-Encoding"].lower() == "gzip":
                import gzip

                raw = gzip.decompress(raw)
            else:
                return {"undecoded": self.headers["Content-Encoding"], "bytes": len(raw)}
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return {"unparsed": raw[:2000].decode("utf-8", "replace")}

    def _json(self, status, doc):
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events):
        """Send ``[(event name, data dict)]`` as one complete server-sent-event stream."""
        chunks = [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events]
        payload = b"".join(chunks)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_HEAD(self):
        self._record(None)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self._record(None)
        path = self.path.split("?", 1)[0]
        if path.endswith("/models"):
            self._json(200, {"data": [], "models": [], "object": "list"})
        else:
            self._json(404, {"error": {"type": "not_found_error", "message": f"no {path} here"}})

    def do_POST(self):
        body = self._read_body()
        entry = self._record(body)
        path = self.path.split("?", 1)[0]
        if path.endswith("/messages/count_tokens"):
            return self._json(200, {"input_tokens": 100})
        if path.endswith("/messages"):
            return self._anthropic(entry, body if isinstance(body, dict) else {})
        if path.endswith("/responses"):
            return self._responses(entry, body if isinstance(body, dict) else {})
        if path.endswith("/chat/completions"):
            self.server.errors.append(f"unexpected chat/completions request at {path}")
        return self._json(404, {"error": {"type": "not_found_error", "message": f"no {path} here"}})

    # -- Anthropic Messages ---------------------------------------------------------

    def _anthropic(self, entry, body):
        offered = {t["name"]: _schema_of(t) for t in body.get("tools") or [] if isinstance(t, dict) and t.get("name")}
        main = bool(offered)  # the agent's turn offers tools; side requests (titles, checks) do not
        entry["main"] = main
        if main:
            results = [{"text": _text_of(block.get("content")), "is_error": bool(block.get("is_error"))}
                       for message in body.get("messages") or [] if isinstance(message, dict)
                       and isinstance(message.get("content"), list)
                       for block in message["content"] if isinstance(block, dict) and block.get("type") == "tool_result"]
            step = self.server.next_step(offered, results, body)
        else:
            step = ("text", SIDE_TEXT)
        model = body.get("model") or "scripted"
        message_id = self.server.new_id("msg")
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if step[0] == "tool":
            block = {"type": "tool_use", "id": self.server.new_id("toolu"), "name": step[1], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(step[2])}]
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": step[1]}]
            stop = "end_turn"
        if not body.get("stream"):
            final = dict(block)
            if step[0] == "tool":
                final["input"] = step[2]
            else:
                final["text"] = step[1]
            return self._json(200, {"id": message_id, "type": "message", "role": "assistant", "model": model,
                                    "content": [final], "stop_reason": stop, "stop_sequence": None, "usage": usage})
        events = [
            ("message_start", {"type": "message_start", "message": {
                "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": dict(usage, output_tokens=1)}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("ping", {"type": "ping"}),
        ]
        events += [("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": d}) for d in deltas]
        events += [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        self._sse(events)

    # -- OpenAI Responses -----------------------------------------------------------

    def _responses(self, entry, body):
        offered, where = {}, {}  # display name -> input schema; display name -> (namespace or None, name)
        for tool in body.get("tools") or []:
            if not isinstance(tool, dict):
                continue
            if tool.get("type") == "namespace":  # Codex groups an MCP server's tools: mcp__<server>
                for inner in tool.get("tools") or []:
                    if isinstance(inner, dict) and inner.get("name"):
                        display = f"{tool.get('name')}__{inner['name']}"
                        offered[display] = _schema_of(inner)
                        where[display] = (tool.get("name"), inner["name"])
            elif tool.get("name"):
                offered[tool["name"]] = _schema_of(tool)
            elif isinstance(tool.get("function"), dict) and tool["function"].get("name"):
                offered[tool["function"]["name"]] = _schema_of(tool["function"])
        main = bool(offered)
        entry["main"] = main
        inputs = body.get("input") or []
        if main:
            results = []
            for item in inputs:
                if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
                    output = item.get("output")
                    failed = isinstance(output, dict) and output.get("success") is False
                    text = _text_of(output.get("content") if isinstance(output, dict) else output)
                    results.append({"text": text, "is_error": failed or reports_error(text)})
            step = self.server.next_step(offered, results, body)
        else:
            step = ("text", SIDE_TEXT)
        response_id = self.server.new_id("resp")
        if step[0] == "tool":
            namespace, name = where.get(step[1], (None, step[1]))
            item = {"type": "function_call", "id": self.server.new_id("fc"), "call_id": self.server.new_id("call"),
                    "name": name, "arguments": json.dumps(step[2]), "status": "completed"}
            if namespace:
                item["namespace"] = namespace
        else:
            item = {"type": "message", "id": self.server.new_id("msg"), "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": step[1], "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        response = {"id": response_id, "object": "response", "status": "in_progress", "model": body.get("model"),
                    "output": []}
        events = [
            ("response.created", {"type": "response.created", "response": response}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                            "item": dict(item, status="in_progress")}),
        ]
        if step[0] == "text":
            events.append(("response.output_text.delta", {"type": "response.output_text.delta", "output_index": 0,
                                                          "content_index": 0, "item_id": item["id"], "delta": step[1]}))
        events += [
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": dict(
                response, status="completed", output=[item], usage=usage)}),
        ]
        if not body.get("stream", True):
            return self._json(200, dict(response, status="completed", output=[item], usage=usage))
        self._sse(events)


if __name__ == "__main__":  # a manual probe: serve, print every request, until ^C
    import sys
    import time

    server = ScriptedModel(Script([("claim", {})]))
    with server:
        print(server.base_url, flush=True)
        seen = 0
        try:
            while True:
                time.sleep(0.2)
                while seen < len(server.requests):
                    r = server.requests[seen]
                    seen += 1
                    print(json.dumps({k: r[k] for k in ("method", "path")}), len(json.dumps(r["body"])), flush=True)
                    with open(sys.argv[1] if len(sys.argv) > 1 else "/tmp/e2e-probe.jsonl", "a") as out:
                        out.write(json.dumps(r) + "\n")
        except KeyboardInterrupt:
            pass
