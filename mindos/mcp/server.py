"""The MCP server over stdio (its front door: :mod:`mindos.cli.mcp_server`).

Design decisions
  * **Standard library only, one long-lived connection.**  The server reads
    newline-delimited JSON-RPC 2.0 from stdin and writes one JSON line per response to
    stdout; it opens the database once, so a tool call costs a transaction, not a process
    start and a schema check.  Requests are answered in order, one at a time.
  * **stdout is the protocol.**  While the server runs, ``sys.stdout`` points at stderr, so
    nothing a handler (or a stray print) writes can corrupt the stream; logs go to stderr
    through :mod:`logging` (``--log-level``).
  * **The MCP methods of the initialize era**: ``initialize`` (the client's protocol
    version when this server speaks it, else the newest it does), ``ping``, ``tools/list``
    and ``tools/call``; notifications are accepted and never answered; anything else is
    ``-32601``.  Malformed JSON is ``-32700``, a message that is not a JSON-RPC 2.0 request
    ``-32600`` (batches included), bad ``tools/call`` params or an unknown tool ``-32602``.
  * **Tool failures are tool results.**  A refused call answers ``isError: true`` with
    ``{"error": {"code", "message", "exit_code"}}`` as its text and structured content, the
    code one of the stable codes of :func:`mindos.mcp.tools.error_code`.  An unexpected
    exception is logged with its traceback on stderr and answered as ``internal_error``;
    the server keeps serving.
"""

import json
import logging

from mindos import __version__
from mindos.cli import call_handler, safe_line
from mindos.core.text import inert
from mindos.errors import MindosError
from mindos.mcp import tools

log = logging.getLogger(__name__)

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL = -32700, -32600, -32601, -32602, -32603
MAX_LINE_BYTES = 16 * 1024 * 1024  # one request line; a longer one is refused without being held in memory
INSTRUCTIONS = (
    "MindOS is the shared task ledger and memory of this machine's agents. Start with prime "
    "(your leases, inbox, constraints, next task and the pack of the task you hold); claim or "
    "next --claim before acting; note what you learn; receipt your evidence; complete or fail; "
    "handoff before you stop."
)


class Server:
    """One MCP session over one database connection."""

    def __init__(self, conn, tools):
        self.conn = conn
        self.tools = tools
        self.initialized = False

    # -- JSON-RPC framing ------------------------------------------------------------

    def handle_line(self, line):
        """Answer one input line; return the response dict, or None for a notification."""
        try:
            message = json.loads(line)
        except ValueError as exc:
            return _error(None, PARSE_ERROR, f"Parse error: {exc}")
        if isinstance(message, list):
            return _error(None, INVALID_REQUEST, "Invalid Request: batches are not supported")
        if not isinstance(message, dict):
            return _error(None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
        has_id = "id" in message
        request_id = message.get("id")
        if has_id and (isinstance(request_id, bool) or not isinstance(request_id, (str, int, type(None)))):
            return _error(None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
        method = message.get("method")
        if message.get("jsonrpc") != "2.0":
            return _error(request_id, INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"')
        if method is None and ("result" in message or "error" in message):
            return None  # a response to a request this server never sends: nothing to answer
        if not isinstance(method, str):
            return _error(request_id, INVALID_REQUEST, "Invalid Request: method must be a string")
        params = message.get("params", {})
        if params is not None and not isinstance(params, dict):
            return _error(request_id, INVALID_REQUEST, "Invalid Request: params must be an object")
        params = params or {}
        if not has_id:
            if method == "notifications/initialized":
                self.initialized = True
            log.debug("notification %s", method)
            return None
        handler = {
            "initialize": self.initialize,
            "ping": lambda params: {},
            "tools/list": self.list_tools,
            "tools/call": self.call_tool,
        }.get(method)
        if handler is None:
            return _error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        try:
            return {"jsonrpc": "2.0", "id": request_id, "result": handler(params)}
        except _RpcError as exc:
            return _error(request_id, exc.code, exc.message)

    # -- methods ---------------------------------------------------------------------

    def initialize(self, params):
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "mindos", "version": __version__},
            "instructions": INSTRUCTIONS,
        }

    def list_tools(self, params):
        return {"tools": [tool.definition() for tool in self.tools.values()]}

    def call_tool(self, params):
        name = params.get("name")
        if not isinstance(name, str):
            raise _RpcError(INVALID_PARAMS, "Invalid params: tools/call needs a tool name")
        tool = self.tools.get(name)
        if tool is None:
            raise _RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        return self.run(tool, params.get("arguments"))

    def run(self, tool, args):
        """Run one tool call through its CLI handler; return the CallToolResult dict."""
        try:
            namespace = tool.namespace(args)
            result = call_handler(self.conn, namespace)  # request_id replays as through the CLI
        except MindosError as exc:
            return _tool_error(tools.error_code(exc), str(exc), exc.exit_code)
        except Exception as exc:  # a bug: keep serving, keep the traceback on stderr
            log.exception("tool %s failed", tool.name)
            return _tool_error(tools.INTERNAL_ERROR, f"internal error: {exc.__class__.__name__}", 1)
        code = 0
        if isinstance(result, tuple):
            result, code = result
        text = inert(result, multiline=True) if isinstance(result, str) else json.dumps(result, indent=2,
                                                                                          sort_keys=True)
        answer = {"content": [{"type": "text", "text": text}], "isError": code != 0}
        if isinstance(result, dict):
            answer["structuredContent"] = result
        return answer


class _RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


def _error(request_id, code, message):
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _tool_error(code, message, exit_code):
    error = {"code": code, "message": safe_line(message) or code, "exit_code": exit_code}
    return {"content": [{"type": "text", "text": json.dumps({"error": error}, sort_keys=True)}],
            "structuredContent": {"error": error}, "isError": True}


def _lines(stdin, limit):
    """Input lines; one longer than ``limit`` bytes is yielded as None (its rest skipped)."""
    while True:
        raw = stdin.readline(limit + 1)
        if not raw:
            return
        if len(raw) > limit and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):  # drain the oversized line without keeping it
                raw = stdin.readline(1 << 20)
            yield None
            continue
        yield raw


def serve(conn, tools, stdin, stdout, max_line=MAX_LINE_BYTES):
    """Answer requests from ``stdin`` (binary) on ``stdout`` (binary) until end of input."""
    server = Server(conn, tools)
    for raw in _lines(stdin, max_line):
        if raw is None:
            response = _error(None, INVALID_REQUEST, f"Invalid Request: a message is limited to {max_line} bytes")
        elif not raw.strip():
            continue
        else:
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                response = _error(None, PARSE_ERROR, "Parse error: input is not UTF-8")
            else:
                response = server.handle_line(line)
        if response is not None:
            stdout.write(json.dumps(response, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
            stdout.flush()
