"""The MCP protocol layer, shared by the stdio transport (here) and the Streamable HTTP one
(:mod:`mindos.mcp.http_transport`); the front door is :mod:`mindos.cli.mcp_server`.

Design decisions
  * **Standard library only, long-lived connections.**  A tool call costs a transaction,
    not a process start and a schema check.  Over stdio the server reads newline-delimited
    JSON-RPC 2.0 from stdin and writes one JSON line per message to stdout.
  * **Requests are answered concurrently.**  A reading thread answers what needs no
    database at once (``initialize``, ``ping``, ``tools/list``, ``resources/templates/list``,
    ``prompts/list``, ``prompts/get``) and queues the rest (``tools/call``,
    ``resources/list``, ``resources/read``) for a worker that owns the connection, so a call
    waiting on another process's write lock never holds up a ``ping``.  Answers may
    therefore come back out of request order (JSON-RPC matches them by id).
  * **Group commit.**  Short write calls that are waiting together (:data:`BATCHED`:
    claim, next, heartbeat, note ...; :func:`gather` takes only what is already queued, so an
    idle server adds no latency) share one transaction, each under its own savepoint
    (:class:`mindos.store.db.batch`): one commit and one fsync for the group, while each
    call is still audited, fenced by its lease epoch and answered on its own, and a call that
    is refused or fails has only its own work rolled back.  Reads, receipts and the other
    calls run alone.  Answers are sent after the commit.
  * **Cancellation is honoured up to the commit.**  ``notifications/cancelled`` drops a
    queued request unanswered; a running one gets a commit gate on its connection
    (:attr:`mindos.store.db.Connection.commit_gate`): its next ``BEGIN`` or ``COMMIT``
    raises :class:`Cancelled` and the transaction rolls back, so a cancelled request that
    had not committed never does.  One that already committed answers as usual.  In a
    group commit the check runs before and after the call, under its savepoint.
  * **No silent homes.**  The home is resolved with the CLI's rules and never created: a
    home without a database still answers ``initialize``, ``ping`` and the lists, and every
    tool call answers the ``no_database`` error with the CLI's hint (the database is looked
    for again on each call, so ``init`` run later is picked up).
  * **Bounded input.**  A message is limited to :data:`MAX_LINE_BYTES` and
    :data:`MAX_DEPTH` levels of nesting; past either it is a JSON-RPC error, never a crash.
  * **stdout is the protocol.**  While the server runs, ``sys.stdout`` points at stderr, so
    nothing a handler (or a stray print) writes can corrupt the stream; logs go to stderr
    through :mod:`logging` (``--log-level``).
  * **Tool failures are tool results.**  A refused call answers ``isError: true`` with
    ``{"error": {"code", "message", "exit_code"}}`` as its text and structured content, the
    code one of the stable codes of :func:`mindos.mcp.tools.error_code`.  An unexpected
    exception is logged with its traceback on stderr and answered as ``internal_error``;
    the server keeps serving.  Results are compact JSON (no indentation: fewer tokens).
  * **Resources and a prompt.**  ``mindos://task/{task_id}`` (the task as ``show`` prints
    it) and ``mindos://context/{task_id}`` (its context pack) are resource templates;
    ``resources/list`` names the open tasks.  The ``recall-then-act`` prompt walks an agent
    through the loop (recall, claim, act, note, receipt, complete, handoff).
"""

import json
import logging
import queue
import threading

from mindos import __version__
from mindos.cli import call_handler, safe_line
from mindos.core.text import inert
from mindos.errors import MindosError, NotFound
from mindos.mcp import tools

log = logging.getLogger(__name__)

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL = -32700, -32600, -32601, -32602, -32603
RESOURCE_NOT_FOUND = -32002  # the MCP spec's code for resources/read of an unknown URI
REQUEST_CANCELLED = -32800   # HTTP only: the answer of a POST whose request was cancelled unanswered
# One message: a receipt payload may hold 1 MiB of JSON, which escaping can double.
MAX_LINE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 32  # nesting levels of one message (the deepest real request is about 6)
INSTRUCTIONS = (
    "MindOS is the shared task ledger and memory of this machine's agents. Recall before you act; "
    "claim (or next with claim: true) before acting; note what you learn; receipt your evidence; "
    "complete or fail; handoff before you stop."
)
TASK_URI, CONTEXT_URI = "mindos://task/", "mindos://context/"
RESOURCE_TEMPLATES = (
    {"uriTemplate": TASK_URI + "{task_id}", "name": "task", "mimeType": "application/json",
     "description": "A task with its receipts, audit trail, dependencies and dependents (as `show` prints it)."},
    {"uriTemplate": CONTEXT_URI + "{task_id}", "name": "context-pack", "mimeType": "application/json",
     "description": "A task's context pack: header, live handoff, unsatisfied deps, live notes (as `context`)."},
)
PROMPT = {
    "name": "recall-then-act", "title": "Recall, then act",
    "description": "Work one MindOS task the safe way: recall its memory first, then claim, act, note, "
                   "receipt, complete and hand off.",
    "arguments": [{"name": "task_id", "description": "the task to work", "required": True},
                  {"name": "agent", "description": "your agent name (the lease owner)", "required": True}],
}
OPEN_STATUSES = ("running", "claimed", "queued")  # resources/list: the tasks an agent may pick up or hold
RESOURCE_LIST_LIMIT = 50  # per status
# Methods answered on the reading thread (no database); the rest go to the worker.
QUEUED = frozenset({"tools/call", "resources/list", "resources/read"})
# Group commit: the tools whose calls may share one transaction (each under its own
# savepoint).  Each is short database work with no file I/O of its own; ``complete`` and
# ``fail`` only when they carry no receipt (a receipt may write its artifact file).  Every
# other call (reads, receipts, recall, prime ...) runs alone.
BATCHED = frozenset({"claim", "next", "heartbeat", "renew", "release", "note", "create", "handoff", "ack",
                     "fact-assert", "complete", "fail"})
WITHOUT_RECEIPT = frozenset({"complete", "fail"})
MAX_BATCH = 16  # calls in one transaction at most (a fair share of the write lock for other processes)
CACHE_KIB = 16384  # page cache of a server connection: next walks several hundred pages at 100k tasks


class Cancelled(MindosError):
    """The client cancelled the request (``notifications/cancelled``) before it committed."""

    code = "cancelled"


class Job:
    """One queued request: what to run and whether its client has cancelled it."""

    __slots__ = ("request_id", "method", "params", "cancelled", "namespace")

    def __init__(self, request_id, method, params):
        self.request_id, self.method, self.params = request_id, method, params
        self.namespace = None  # the arguments parsed, when a batch parsed them ahead
        self.cancelled = threading.Event()

    def check(self):
        """The commit gate: raise Cancelled once the request is cancelled."""
        if self.cancelled.is_set():
            raise Cancelled("request cancelled by the client; nothing was committed")


class Session:
    """One client's state: whether it initialized, and its requests not yet answered."""

    def __init__(self):
        self.initialized = False
        self.protocol_version = None
        self.pending = {}  # request id -> Job
        self.lock = threading.Lock()

    def add(self, job):
        with self.lock:
            self.pending[_key(job.request_id)] = job

    def done(self, job):
        with self.lock:
            if self.pending.get(_key(job.request_id)) is job:
                del self.pending[_key(job.request_id)]

    def cancel(self, request_id):
        """Mark the pending request ``request_id`` cancelled; True when there was one."""
        with self.lock:
            job = self.pending.get(_key(request_id))
        if job is None:
            return False
        job.cancelled.set()
        return True


def _key(request_id):
    return (type(request_id).__name__, request_id)  # "1" and 1 are different ids


class Store:
    """The database connection of one worker thread, opened on first use with the CLI's
    home rules and never created (``create=False``): until the home has a database every
    :meth:`get` raises the ``no_database`` NotFound, with the CLI's hint."""

    def __init__(self, home=None, conn=None):
        self.home, self.conn = home, conn

    def get(self):
        if self.conn is None:
            from mindos.store import db  # lazy: the protocol layer needs no store until a call

            self.conn = db.connect(self.home, create=False)
            # A long-lived connection among other writers: each of their commits makes SQLite
            # drop this connection's cached pages, and a memory map is torn down with them
            # (every page touched after that is a page fault).  Plain reads into a page cache
            # large enough for a call's pages cost less per call.
            self.conn.execute("PRAGMA mmap_size=0")
            self.conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            from mindos.work import dispatch  # lazy: as above

            dispatch.keep_choices(self.conn)  # next samples the queue now and then, not on every call
        return self.conn

    def close(self):
        if self.conn is not None:
            conn, self.conn = self.conn, None
            conn.close()


class Server:
    """The MCP methods over a tool table; one :class:`Session` per client (``session``
    is the stdio one).  ``conn``: the connection :meth:`handle_line` and :func:`serve` use
    (None: opened on demand in ``home``, never created)."""

    def __init__(self, conn, tools, *, home=None):
        self.tools = tools
        self.store = Store(home, conn)
        self.session = Session()
        self._readers = {}  # the show / context tools behind the resources, built on first use

    @property
    def conn(self):
        return self.store.conn

    # -- JSON-RPC framing ------------------------------------------------------------

    def handle_line(self, line, session=None):
        """Answer one input line here and now; return the response dict, or None for a
        notification (a queued method runs on this thread, on :attr:`store`)."""
        session = session or self.session
        answer = self.receive(line, session)
        if isinstance(answer, Job):
            return self.execute(answer, self.store, session)
        return answer

    def receive(self, line, session):
        """Read one message: its response (dict), None (nothing to answer), or a :class:`Job`
        to run on a worker with a connection (:meth:`execute`)."""
        try:
            message = parse(line)
        except _RpcError as exc:
            return _error(None, exc.code, exc.message)
        return self.receive_message(message, session)

    def receive_message(self, message, session):
        """:meth:`receive` for a message already parsed (by :func:`parse`)."""
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
            self.notify(session, method, params)
            return None
        if method in QUEUED:
            job = Job(request_id, method, params)
            session.add(job)
            return job
        handler = {
            "initialize": lambda params: self.initialize(params, session),
            "ping": lambda params: {},
            "tools/list": self.list_tools,
            "resources/templates/list": lambda params: {"resourceTemplates": list(RESOURCE_TEMPLATES)},
            "prompts/list": lambda params: {"prompts": [PROMPT]},
            "prompts/get": self.get_prompt,
        }.get(method)
        if handler is None:
            return _error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        try:
            return {"jsonrpc": "2.0", "id": request_id, "result": handler(params)}
        except _RpcError as exc:
            return _error(request_id, exc.code, exc.message)

    def notify(self, session, method, params):
        if method == "notifications/initialized":
            session.initialized = True
        elif method == "notifications/cancelled":
            request_id = params.get("requestId")
            if isinstance(request_id, (str, int)) and not isinstance(request_id, bool):
                found = session.cancel(request_id)
                log.info("cancel %r: %s", request_id, "pending" if found else "not pending (ignored)")
        log.debug("notification %s", method)

    def execute(self, job, store, session=None):
        """Run a queued request on ``store``'s connection; its response, or None when the
        client cancelled it before it committed (a cancelled request is not answered)."""
        session = session or self.session
        try:
            if job.cancelled.is_set():
                return None
            handler = {"tools/call": self.call_tool, "resources/list": self.list_resources,
                       "resources/read": self.read_resource}[job.method]
            try:
                return {"jsonrpc": "2.0", "id": job.request_id, "result": handler(job, store)}
            except _RpcError as exc:
                return _error(job.request_id, exc.code, exc.message, exc.data)
            except Cancelled:
                log.info("request %r cancelled before it committed", job.request_id)
                return None
        finally:
            session.done(job)

    def batchable(self, job):
        """Whether ``job`` may share a group-commit transaction with others (:data:`BATCHED`)."""
        if job is None or job.method != "tools/call":
            return False
        name = job.params.get("name")
        if not isinstance(name, str) or name not in BATCHED or name not in self.tools:
            return False
        args = job.params.get("arguments")
        return not (name in WITHOUT_RECEIPT and isinstance(args, dict) and args.get("receipt"))

    def execute_batch(self, jobs, store, sessions=None):
        """Run batchable ``jobs`` in one write transaction (group commit); their responses, in
        order (None for a cancelled one).  ``sessions``: each job's session (default: the
        stdio one for all).

        Each call runs under its own savepoint (:class:`mindos.store.db.batch`): one that is
        refused or fails has only its own work rolled back and answers its own error, the
        others commit together.  Nothing is answered before the commit.  Should the batch
        itself fail (its BEGIN or COMMIT, or a call that ended the transaction), every call
        is run again alone, so each still gets the answer it would have had."""
        sessions = sessions or [self.session] * len(jobs)
        if len(jobs) == 1:
            return [self.execute(jobs[0], store, sessions[0])]
        try:
            conn = store.get()
        except MindosError:
            return [self.execute(job, store, session) for job, session in zip(jobs, sessions)]
        import sqlite3  # lazy: loaded already by store.get()

        from mindos.store import db  # lazy: loaded already by store.get()

        for job in jobs:  # arguments are parsed before the write lock is taken
            tool = self.tools.get(job.params.get("name"))
            try:
                job.namespace = tool.namespace(job.params.get("arguments"))
            except Exception:  # noqa: BLE001 (parsed again in the call, which answers the error)
                job.namespace = None
        answers = []
        try:
            with db.batch(conn) as group:
                for job in jobs:
                    answers.append(self._execute_in(group, job, store))
                    if not conn.in_transaction:  # SQLite ended the transaction under the call
                        raise db.BatchBroken("the batch transaction ended under a call")
        except (MindosError, sqlite3.Error) as exc:  # BatchBroken is a MindosError
            log.info("a batch of %d calls failed (%s): each runs alone", len(jobs), exc)
            return [self.execute(job, store, session) for job, session in zip(jobs, sessions)]
        for job, session in zip(jobs, sessions):
            session.done(job)
        return answers

    def _execute_in(self, group, job, store):
        """:meth:`execute` for one call inside ``group`` (its session stays pending until the commit)."""
        if job.cancelled.is_set():
            return None
        try:
            return {"jsonrpc": "2.0", "id": job.request_id, "result": self.call_tool(job, store, group)}
        except _RpcError as exc:
            return _error(job.request_id, exc.code, exc.message, exc.data)
        except Cancelled:
            log.info("request %r cancelled before it committed", job.request_id)
            return None

    # -- methods ---------------------------------------------------------------------

    def initialize(self, params, session=None):
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        if session is not None:
            session.protocol_version = version
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}, "resources": {"listChanged": False},
                             "prompts": {"listChanged": False}},
            "serverInfo": {"name": "mindos", "version": __version__},
            "instructions": INSTRUCTIONS,
        }

    def list_tools(self, params):
        return {"tools": [tool.definition() for tool in self.tools.values()]}

    def call_tool(self, job, store, group=None):
        params = job.params
        name = params.get("name")
        if not isinstance(name, str):
            raise _RpcError(INVALID_PARAMS, "Invalid params: tools/call needs a tool name")
        tool = self.tools.get(name)
        if tool is None:
            raise _RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        try:
            conn = store.get()
        except MindosError as exc:  # no database in the home: the CLI's refusal, as a tool error
            return _tool_error(tools.error_code(exc), str(exc), exc.exit_code)
        if group is not None:
            def invoke(namespace):
                def body():
                    job.check()
                    result = call_handler(conn, namespace)
                    job.check()  # a cancel seen before the call's savepoint is released undoes this call only
                    return result

                return group.run(body)

            return self.run(tool, params.get("arguments"), conn, invoke=invoke, namespace=job.namespace)
        conn.commit_gate = job.check
        try:
            return self.run(tool, params.get("arguments"), conn)
        finally:
            conn.commit_gate = None

    def run(self, tool, args, conn=None, invoke=None, namespace=None):
        """Run one tool call through its CLI handler; return the CallToolResult dict.
        ``invoke(namespace)`` (a batch's savepoint) runs the handler instead of calling it
        here; ``namespace``: ``args`` parsed already."""
        conn = self.conn if conn is None else conn
        try:
            namespace = tool.namespace(args) if namespace is None else namespace
            # request_id replays as through the CLI
            result = call_handler(conn, namespace) if invoke is None else invoke(namespace)
        except Cancelled:
            raise
        except MindosError as exc:
            return _tool_error(tools.error_code(exc), str(exc), exc.exit_code)
        except Exception as exc:  # a bug: keep serving, keep the traceback on stderr
            log.exception("tool %s failed", tool.name)
            return _tool_error(tools.INTERNAL_ERROR, f"internal error: {exc.__class__.__name__}", 1)
        code = 0
        if isinstance(result, tuple):
            result, code = result
        text = inert(result, multiline=True) if isinstance(result, str) else compact(result)
        if isinstance(result, dict):
            # the text is the structured content's JSON already: encode() writes it as is
            return _Answer({"content": [{"type": "text", "text": text}], "isError": code != 0,
                            "structuredContent": result})
        return {"content": [{"type": "text", "text": text}], "isError": code != 0}

    # -- resources and the prompt ------------------------------------------------------

    def _reader(self, name):
        if name not in self._readers:
            self._readers[name] = tools.build_tool(tools.door_of()[name], name)
        return self._readers[name]

    def _read(self, store, name, args, uri=None):
        """The result of read-only command ``name`` (a dict); MindosError becomes a JSON-RPC error."""
        try:
            conn = store.get()
            namespace = self._reader(name).namespace(args)
            return namespace.handler(conn, namespace)
        except MindosError as exc:
            code = tools.error_code(exc)
            if uri is not None and code in ("not_found", "invalid", "usage"):  # the URI names no resource
                raise _RpcError(RESOURCE_NOT_FOUND, f"Resource not found: {safe_line(str(exc))}",
                                {"uri": safe_line(uri[:200])})
            raise _RpcError(INTERNAL, safe_line(str(exc)) or code, {"code": code}) from None

    def list_resources(self, job, store):
        found = []
        for status in OPEN_STATUSES:
            rows = self._read(store, "list", {"status": status, "limit": RESOURCE_LIST_LIMIT})
            for task in rows if isinstance(rows, list) else rows.get("tasks", []):
                found.append({"uri": TASK_URI + task["id"], "name": task["id"], "mimeType": "application/json",
                              "title": f"{task.get('title', '')} ({status})"[:200]})
        return {"resources": found}

    def read_resource(self, job, store):
        uri = job.params.get("uri")
        if not isinstance(uri, str):
            raise _RpcError(INVALID_PARAMS, "Invalid params: resources/read needs a uri")
        from urllib.parse import unquote  # lazy: resources only

        for prefix, name in ((TASK_URI, "show"), (CONTEXT_URI, "context")):
            if uri.startswith(prefix) and len(uri) > len(prefix) and "/" not in uri[len(prefix):]:
                result = self._read(store, name, {"task_id": unquote(uri[len(prefix):])}, uri)
                return {"contents": [{"uri": uri, "mimeType": "application/json", "text": compact(result)}]}
        raise _RpcError(RESOURCE_NOT_FOUND, "Resource not found: MindOS serves mindos://task/{task_id} and "
                                            "mindos://context/{task_id}", {"uri": safe_line(uri[:200])})

    def get_prompt(self, params):
        if params.get("name") != PROMPT["name"]:
            raise _RpcError(INVALID_PARAMS, f"Unknown prompt: {safe_line(str(params.get('name')))[:100]}")
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            raise _RpcError(INVALID_PARAMS, "Invalid params: prompt arguments must be an object")
        values = {}
        for spec in PROMPT["arguments"]:
            value = args.get(spec["name"])
            if not isinstance(value, str) or not value.strip() or len(value) > 200:
                raise _RpcError(INVALID_PARAMS, f"Invalid params: argument {spec['name']!r} must be a"
                                                " non-empty string of at most 200 characters")
            values[spec["name"]] = safe_line(value)
        task, agent = values["task_id"], values["agent"]
        text = (
            f"You are {agent}, working MindOS task {task}. Follow the loop, in order:\n"
            f"1. Recall first: call recall with task_id {task} and agent {agent}; read the pack (notes, "
            f"decisions, constraints, the live handoff) and keep its recall_digest.\n"
            f"2. Claim: call claim with task_id {task} and owner {agent} (a refusal means another agent "
            f"holds it: stop). Call heartbeat while you work.\n"
            f"3. Act on the task.\n"
            f"4. Note what you learn (note: task_id {task}, source {agent}); receipt your evidence "
            f"(receipt: task_id {task}, a JSON payload).\n"
            f"5. Complete (or fail with a reason), citing the recall_digest.\n"
            f"6. Hand off (handoff: from_agent {agent}) with evidence and the next action before you stop."
        )
        return {"description": PROMPT["description"],
                "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}


class _RpcError(Exception):
    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class _Answer(dict):
    """A tool result whose ``structuredContent`` is the JSON of its text (see :func:`encode`)."""


def encode(response):
    """One response as the line the transport writes (compact JSON, UTF-8, newline-ended).

    A tool call's result carries its structured content twice: as a JSON text and as the
    object itself.  The object is written as that text (one encoding instead of two; its
    keys sorted, as the text has them) instead of being encoded again."""
    result = response.get("result")
    if type(result) is _Answer and len(response) == 3 and len(result) == 3:
        text = result["content"][0]["text"]
        return "".join((
            '{"jsonrpc":"2.0","id":', json.dumps(response["id"], ensure_ascii=False), ',"result":{"content":[{"type":"text","text":',
            json.dumps(text, ensure_ascii=False), '}],"isError":', "true" if result["isError"] else "false",
            ',"structuredContent":', text, "}}\n")).encode("utf-8")
    return json.dumps(response, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def compact(value):
    """``value`` as compact JSON (keys sorted, no indentation): what results cost in tokens."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def parse(line):
    """The JSON value of one message; _RpcError(-32700) when it is not JSON or nests deeper
    than MAX_DEPTH (checked without recursion, so no message can exhaust the stack)."""
    try:
        message = json.loads(line)
    except RecursionError:
        raise _RpcError(PARSE_ERROR, f"Parse error: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        raise _RpcError(PARSE_ERROR, f"Parse error: {exc}") from None
    if line.count("[") + line.count("{") > MAX_DEPTH and _too_deep(message):
        raise _RpcError(PARSE_ERROR, f"Parse error: nested deeper than {MAX_DEPTH} levels")
    return message


def _too_deep(value):
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values() if isinstance(child, (dict, list)))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return False


def _error(request_id, code, message, data=None):
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _tool_error(code, message, exit_code):
    error = {"code": code, "message": safe_line(message) or code, "exit_code": exit_code}
    return {"content": [{"type": "text", "text": compact({"error": error})}],
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


def decode(raw, server, session, limit):
    """:meth:`Server.receive` for one raw input line (None: a line past ``limit`` bytes)."""
    if raw is None:
        return _error(None, INVALID_REQUEST, f"Invalid Request: a message is limited to {limit} bytes")
    if not raw.strip():
        return None
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        return _error(None, PARSE_ERROR, "Parse error: input is not UTF-8")
    return server.receive(line, session)


def gather(jobs, first, batchable, limit=MAX_BATCH):
    """Group commit's window: ``first`` plus the batchable jobs already waiting in ``jobs``
    (never waiting for more: an idle server adds no latency).  Returns ``(group, held)``:
    ``held`` is the first job that could not join (run next), False for the end-of-input
    marker, None when the queue ran dry."""
    group = [first]
    if not batchable(first):
        return group, None
    while len(group) < limit:
        try:
            job = jobs.get_nowait()
        except queue.Empty:
            return group, None
        if job is None:
            return group, False
        if not batchable(job):
            return group, job
        group.append(job)
    return group, None


def batches(jobs, batchable):
    """The jobs of ``jobs`` in group-commit groups (:func:`gather`: a job that could not
    join starts the next group), until the end-of-input marker (None)."""
    held = None
    while True:
        first = held if held is not None else jobs.get()
        if first is None:
            return
        group, held = gather(jobs, first, batchable)
        yield group
        if held is False:  # end of input came while gathering
            return


def serve(conn, tools, stdin, stdout, max_line=MAX_LINE_BYTES, *, home=None):
    """Answer requests from ``stdin`` (binary) on ``stdout`` (binary) until end of input.

    A reading thread answers the immediate methods and queues the rest; this thread runs
    the queue on ``conn`` (None: the home's database, opened when first needed, never
    created) and, at end of input, finishes what was queued.  Write calls found waiting
    together share one transaction (:func:`gather`, :meth:`Server.execute_batch`)."""
    server = Server(conn, tools, home=home)
    session = server.session
    jobs = queue.Queue()
    write_lock = threading.Lock()

    def write(response):
        data = encode(response)
        with write_lock:
            stdout.write(data)
            stdout.flush()

    def read():
        try:
            for raw in _lines(stdin, max_line):
                try:
                    answer = decode(raw, server, session, max_line)
                except Exception:  # a bug: keep reading, keep the traceback on stderr
                    log.exception("message failed")
                    answer = _error(None, INTERNAL, "Internal error")
                if isinstance(answer, Job):
                    jobs.put(answer)
                elif answer is not None:
                    write(answer)
        except (OSError, ValueError) as exc:  # stdin or stdout went away: stop reading, finish the queue
            log.info("reader stopped: %s", exc)
        finally:
            jobs.put(None)

    reader = threading.Thread(target=read, name="mcp-reader", daemon=True)
    reader.start()
    try:
        for group in batches(jobs, server.batchable):
            for response in server.execute_batch(group, server.store):
                if response is not None:
                    write(response)
    finally:
        if conn is None:
            server.store.close()
    reader.join(timeout=5)
