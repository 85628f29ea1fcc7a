"""The MCP Streamable HTTP transport (``mindos-mcp --http HOST:PORT``), standard library only.

Design decisions
  * **One endpoint, JSON answers.**  ``POST /mcp`` carries one JSON-RPC message; a request
    is answered with ``Content-Type: application/json`` (one object, never an SSE stream: the
    server sends no requests or notifications of its own), a notification or response with
    ``202 Accepted`` and no body.  ``GET`` is ``405`` (no server-initiated stream);
    ``DELETE`` ends the session.  The protocol itself is :class:`mindos.mcp.server.Server`.
  * **Sessions.**  ``initialize`` (sent without ``Mcp-Session-Id``) opens a session and its
    answer carries a random ``Mcp-Session-Id``; any other message must carry it (missing:
    ``400``; unknown, ended or expired after :data:`SESSION_IDLE_SECONDS`: ``404``, so the
    client starts over).  At most ``max_sessions`` live at once (``503`` past that); an
    ``MCP-Protocol-Version`` header this server does not speak is ``400``.
  * **Safe by default.**  The default bind is loopback.  Any other address needs a bearer
    token (``--token-file``: a file only its owner can read, mode 0600 or stricter; a
    group- or world-readable one is refused), checked in constant time on every request
    (``401`` without it).  An ``Origin`` header must name a loopback origin or one given
    with ``--allow-origin`` (``403`` otherwise), and on a loopback bind the ``Host`` must be
    a loopback name too: a web page that rebinds its own DNS name to 127.0.0.1 is refused
    (the spec's DNS-rebinding rule).  A body past ``max_body`` bytes is ``413``, unread.
  * **Calls run on a pool of workers, one connection each.**  HTTP threads answer the
    immediate methods themselves and hand tool calls to :data:`WORKERS` threads, each with
    its own database connection (the home's, never created), so ``ping`` is never queued
    behind a call waiting on the write lock, and ``notifications/cancelled`` reaches a
    request still waiting.  A request cancelled before it committed answers
    ``{"error": {"code": -32800}}``.
  * **Group commit, one writer.**  The short write calls (claim, next, heartbeat, note, ...:
    see :data:`mindos.mcp.server.BATCHED`) go to one writer thread in arrival order; it takes
    the first with the ones queued behind it and runs them in one transaction, each under its
    own savepoint: one fsync for many calls, each still audited, fenced and answered on its
    own.  While a batch runs the next one gathers, so batches grow with the load (16 calls
    at most) and a lone call waits for nothing.  The other workers run everything else
    (reads, receipts, ...) alone; they and the writer take the home's write lock in the order
    they asked for it (:class:`mindos.store.db.Turns`).
  * **Lean per request.**  Plain request headers are split without the email parser
    (:func:`read_headers`; anything unusual still goes through it), and an answer leaves
    as one write with a ``Date`` formatted once a second; request lines are logged only at
    ``--log-level info``, with control characters escaped.
"""

import email.utils
import hmac
import http.client
import http.server
import io
import json
import logging
import os
import queue
import secrets
import stat
import threading
import time

from mindos.errors import InvalidInput, MindosError, Refused
from mindos.mcp import server as protocol

log = logging.getLogger(__name__)

ENDPOINT = "/mcp"
DEFAULT_MAX_BODY = protocol.MAX_LINE_BYTES
DEFAULT_MAX_SESSIONS = 64
SESSION_IDLE_SECONDS = 3600.0
WORKERS = 4
IDLE_CONNECTION_SECONDS = 120  # a keep-alive connection with no request for this long is closed
MIN_TOKEN_CHARS = 16
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def parse_address(text):
    """``(host, port)`` of ``HOST:PORT`` (``[::1]:PORT`` for IPv6; port 0: any free port)."""
    host, sep, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise InvalidInput(f"--http: {text!r:.80} is not HOST:PORT (e.g. 127.0.0.1:8765)")
    return host, int(port)


def is_loopback(host):
    """True for localhost and the loopback addresses (127.0.0.0/8, ::1)."""
    import ipaddress  # lazy: the HTTP transport only

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_token(path):
    """The bearer token in ``path``: a regular file only its owner may read (Refused otherwise)."""
    from mindos.core import files  # lazy: only --http with a token reads it

    try:  # no symlink, no FIFO or device, at most 4 KiB
        fd, info = files.open_regular(path, max_bytes=4097, what=f"--token-file {path!r:.200}")
    except MindosError as exc:
        raise InvalidInput(f"--token-file: {exc}") from None
    try:
        if info.st_mode & 0o077:
            raise Refused(f"--token-file: {path!r:.200} is readable by others (mode {stat.S_IMODE(info.st_mode):04o});"
                          " run chmod 600 on it", code="token_file_mode")
        data = os.read(fd, 4097)
    finally:
        os.close(fd)
    try:
        token = data.decode("ascii").strip()
    except UnicodeDecodeError:
        token = ""
    if len(token) < MIN_TOKEN_CHARS or len(token) > 4096 or any(c.isspace() for c in token):
        raise InvalidInput(f"--token-file: the token must be {MIN_TOKEN_CHARS} to 4096 printable ASCII characters"
                           " on one line (e.g. python3 -c 'import secrets; print(secrets.token_urlsafe(32))')")
    return token


def _host_name(value):
    """The host part of a ``Host`` header or of an origin's ``host[:port]``, lower-cased."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Headers(dict):
    """A request's headers by lower-cased name (the first of a repeated one wins, as with
    :class:`email.message.Message`): ``get`` and ``in`` ignore case.  What the handlers read."""

    __slots__ = ()

    def get(self, name, default=None):
        return dict.get(self, name.lower(), default)

    def __getitem__(self, name):
        return dict.get(self, name.lower())

    def __contains__(self, name):
        return dict.__contains__(self, name.lower())


# A header line the fast reader takes as is: a name of visible ASCII without ":", then ":".
# Anything else (folded lines, a bare CR, no colon, an empty name) goes to the email parser,
# exactly as http.server reads it.
_PLAIN_NAME = frozenset(chr(c) for c in range(0x21, 0x7F) if c != 0x3A)


def read_headers(rfile, message_class):
    """The header block of a request from ``rfile``, with http.client's limits (a line past
    65,536 bytes: :class:`http.client.LineTooLong`; past 100 lines: :class:`http.client.HTTPException`).

    Plain ``Name: value`` lines are split here (a :class:`Headers`); a block with anything
    else is parsed by :func:`http.client.parse_headers`, so odd input reads as it always did.
    The email parser costs more than the rest of a small request together."""
    lines = []
    while True:
        line = rfile.readline(65537)
        if len(line) > 65536:
            raise http.client.LineTooLong("header line")
        lines.append(line)
        if len(lines) > 100:
            raise http.client.HTTPException("got more than 100 headers")
        if line in (b"\r\n", b"\n", b""):
            break
    headers = Headers()
    for line in lines[:-1]:
        text = line.decode("iso-8859-1")
        name, colon, value = text.partition(":")
        value = value.rstrip("\r\n")
        if not colon or not name or "\r" in value or "\n" in value or not _PLAIN_NAME.issuperset(name):
            return http.client.parse_headers(io.BytesIO(b"".join(lines)), _class=message_class)
        key = name.lower()
        if key not in headers:
            headers[key] = value.lstrip(" \t")
    return headers


_DATE = (0, "")  # (second, its HTTP date): one formatting per second, not per answer


def http_date():
    """The ``Date`` header value for now (RFC 9110's IMF-fixdate)."""
    global _DATE
    now = int(time.time())
    cached = _DATE
    if cached[0] != now:
        cached = _DATE = (now, email.utils.formatdate(now, usegmt=True))
    return cached[1]


class Sessions:
    """The live sessions, at most ``limit``, each expiring after SESSION_IDLE_SECONDS idle."""

    def __init__(self, limit):
        self.limit = limit
        self.live = {}  # id -> [Session, last used (monotonic)]
        self.lock = threading.Lock()

    def open(self):
        """A new ``(id, Session)``; None when ``limit`` sessions are live."""
        now = time.monotonic()
        with self.lock:
            for key in [k for k, (_, used) in self.live.items() if now - used > SESSION_IDLE_SECONDS]:
                del self.live[key]
            if len(self.live) >= self.limit:
                return None
            key = secrets.token_hex(16)
            session = protocol.Session()
            self.live[key] = [session, now]
            return key, session

    def get(self, key):
        now = time.monotonic()
        with self.lock:
            entry = self.live.get(key)
            if entry is None or now - entry[1] > SESSION_IDLE_SECONDS:
                self.live.pop(key, None)
                return None
            entry[1] = now
            return entry[0]

    def close(self, key):
        with self.lock:
            return self.live.pop(key, None) is not None


class Pool:
    """The threads that run tool calls, each on its own connection to the home.

    Group commit: the calls that may share a transaction (:meth:`mindos.mcp.server.Server.batchable`)
    go to ONE writer thread, in arrival order.  It takes the first waiting call with the ones
    queued behind it (never waiting for more; at most :data:`mindos.mcp.server.MAX_BATCH`) and
    runs them in one transaction, each under its own savepoint.  The calls that arrive while a
    batch runs wait together for the next one, so the batches grow with the load, an idle
    server adds no latency, and no call is overtaken by later ones.  (Several writers would
    only split the waiting calls into smaller batches that queue for the same write lock.)
    Every other call (reads, receipts, ...) runs alone on one of ``workers - 1`` threads."""

    def __init__(self, mcp, home, workers=WORKERS):
        self.mcp = mcp
        self.writes = queue.Queue()  # batchable calls: the writer's
        self.jobs = queue.Queue()  # every other call
        self.threads = [threading.Thread(target=self._work, args=(home, self.writes), name="mcp-writer",
                                         daemon=True)]
        self.threads += [threading.Thread(target=self._work, args=(home, self.jobs), name=f"mcp-worker-{i}",
                                          daemon=True) for i in range(max(workers - 1, 1))]
        for thread in self.threads:
            thread.start()

    def run(self, job, session):
        """Run ``job`` on a worker and wait for its response (None: cancelled)."""
        done, slot = threading.Event(), []
        (self.writes if self.mcp.batchable(job) else self.jobs).put((job, session, slot, done))
        done.wait()
        return slot[0]

    def _work(self, home, jobs):
        store = protocol.Store(home)
        batchable = lambda item: self.mcp.batchable(item[0])  # noqa: E731 (never the stop marker: see gather)
        try:
            for group in protocol.batches(jobs, batchable):
                try:
                    answers = self.mcp.execute_batch([g[0] for g in group], store, [g[1] for g in group])
                except Exception:  # a bug: answer them, keep the worker
                    log.exception("requests %r failed", [g[0].request_id for g in group])
                    answers = [protocol._error(g[0].request_id, protocol.INTERNAL, "Internal error") for g in group]
                for (_, _, slot, done), answer in zip(group, answers):
                    slot.append(answer)
                    done.set()
        finally:
            store.close()

    def close(self):
        self.writes.put(None)
        for _ in self.threads[1:]:
            self.jobs.put(None)


class HTTPServer(http.server.ThreadingHTTPServer):
    """The listening server: configuration for the handlers, and a bound on open connections."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # listen backlog: a fleet of clients connecting at once is not reset

    def __init__(self, address, mcp, *, home=None, token=None, origins=(), max_sessions=DEFAULT_MAX_SESSIONS,
                 max_body=DEFAULT_MAX_BODY, workers=WORKERS):
        import socket  # lazy: the HTTP transport only

        host = address[0]
        if ":" in host:
            self.address_family = socket.AF_INET6
        self.mcp = mcp
        self.loopback = is_loopback(host)
        if not self.loopback and token is None:
            raise Refused(f"--http {host}: a non-loopback address needs --token-file (a bearer token every"
                          " client must send)", code="token_required")
        self.token = token
        self.origins = frozenset(origin.rstrip("/").lower() for origin in origins)
        self.sessions = Sessions(max_sessions)
        self.max_body = max_body
        self.connections = threading.BoundedSemaphore(max_sessions * 2 + 8)
        super().__init__(address, Handler)
        self.pool = Pool(mcp, home, workers)

    @property
    def url(self):
        host, port = self.server_address[:2]
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}{ENDPOINT}"

    def process_request(self, request, client_address):
        if not self.connections.acquire(blocking=False):  # too many open connections: drop this one
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.release()

    def server_close(self):
        super().server_close()
        self.pool.close()

    def origin_allowed(self, origin):
        origin = origin.strip().rstrip("/").lower()
        if origin in self.origins:
            return True
        scheme, sep, rest = origin.partition("://")
        return bool(sep) and scheme in ("http", "https") and _host_name(rest) in LOOPBACK_NAMES


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = IDLE_CONNECTION_SECONDS
    # the headers and the body go out as two writes: without TCP_NODELAY the body of a
    # keep-alive answer can wait for the client's delayed ACK
    disable_nagle_algorithm = True

    _server_name = None

    def version_string(self):
        if Handler._server_name is None:
            from mindos import __version__  # lazy: the Server header only

            Handler._server_name = f"mindos-mcp/{__version__}"
        return Handler._server_name

    _CONTROL = str.maketrans({c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))})

    def log_request(self, code="-", size="-"):
        if log.isEnabledFor(logging.INFO):  # the line is not even formatted otherwise
            super().log_request(code, size)

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        # the request line is the client's text: control characters are escaped, as http.server does
        log.info("%s %s", self.address_string(), (format % args).translate(self._CONTROL))

    # -- reading a request -------------------------------------------------------------

    def parse_request(self):
        """http.server's parse_request, with a plain request line (``METHOD PATH HTTP/1.x``)
        and plain headers read without the email parser (:func:`read_headers`); any other
        request line takes http.server's own path, so its errors are answered as before."""
        text = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = text.split()
        if len(words) != 3 or words[2] not in ("HTTP/1.1", "HTTP/1.0"):
            return super().parse_request()
        self.command, path, self.request_version = words
        self.requestline = text
        self.path = "/" + path.lstrip("/") if path.startswith("//") else path  # as http.server (gh-87389)
        self.close_connection = words[2] == "HTTP/1.0"
        try:
            self.headers = read_headers(self.rfile, self.MessageClass)
        except http.client.LineTooLong as err:
            self.send_error(431, "Line too long", str(err))
            return False
        except http.client.HTTPException as err:
            self.send_error(431, "Too many headers", str(err))
            return False
        connection = self.headers.get("Connection", "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive":
            self.close_connection = False
        if (self.headers.get("Expect", "").lower() == "100-continue" and self.request_version == "HTTP/1.1"
                and not self.handle_expect_100()):
            return False
        return True

    # -- answers -----------------------------------------------------------------------

    def _send(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        if self.request_version == "HTTP/0.9" or getattr(self, "_headers_buffer", None):
            self._send_slowly(status, data, body is not None, headers)
            return
        self.log_request(status)
        # the status line, the headers and the body in one write: one system call, one
        # segment for a small answer
        head = [f"{self.protocol_version} {status} {self.responses[status][0]}\r\n"
                f"Server: {self.version_string()}\r\nDate: {http_date()}\r\n"]
        if body is not None:
            head.append("Content-Type: application/json\r\n")
        head.append(f"Content-Length: {len(data)}\r\n")
        head.extend(f"{name}: {value}\r\n" for name, value in headers)
        head.append("\r\n")
        out = "".join(head).encode("latin-1")
        self.wfile.write(out + data if data and self.command != "HEAD" else out)

    def _send_slowly(self, status, data, typed, headers):
        """:meth:`_send` through http.server's own header calls (an HTTP/0.9 request, or headers
        already buffered)."""
        self.send_response(status)
        if typed:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if data and self.command != "HEAD":
            self.wfile.write(data)

    def _refuse(self, status, message, headers=(), code=protocol.INVALID_REQUEST):
        """An HTTP error with a JSON-RPC error that has no id as its body (a request body
        left unread closes the connection: it cannot be told from the next request)."""
        if not self._body_read and (self.headers.get("Content-Length", "0") != "0"
                                    or "Transfer-Encoding" in self.headers):
            self.close_connection = True
        self._send(status, {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}, headers)

    def _guard(self):
        """True when the request may go on; else the refusal has been sent."""
        self._body_read = False
        if self.path.split("?", 1)[0] != ENDPOINT:
            self._refuse(404, f"Not Found: the MCP endpoint is {ENDPOINT}")
            return False
        origin = self.headers.get("Origin")
        if origin is not None and not self.server.origin_allowed(origin):
            self._refuse(403, "Forbidden: Origin not allowed")
            return False
        if self.server.loopback and _host_name(self.headers.get("Host", "")) not in LOOPBACK_NAMES:
            self._refuse(403, "Forbidden: Host is not a loopback name")
            return False
        token = self.server.token
        if token is not None:
            given = self.headers.get("Authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
                self._refuse(401, "Unauthorized: a valid bearer token is required",
                             [("WWW-Authenticate", 'Bearer realm="mindos-mcp"')])
                return False
        version = self.headers.get("MCP-Protocol-Version")
        if version is not None and version not in protocol.PROTOCOL_VERSIONS:
            self._refuse(400, f"Bad Request: unsupported MCP-Protocol-Version {version[:40]!r}")
            return False
        return True

    def _session(self, required=True):
        """``(id, Session)`` named by Mcp-Session-Id; None after a refusal has been sent."""
        key = self.headers.get("Mcp-Session-Id")
        if key is None:
            self._refuse(400, "Bad Request: Mcp-Session-Id header is required")
            return None
        session = self.server.sessions.get(key)
        if session is None:
            self._refuse(404, "Not Found: unknown or expired session; initialize again")
            return None
        return key, session

    # -- methods -----------------------------------------------------------------------

    _body_read = False

    def do_POST(self):  # noqa: N802 (http.server's naming)
        if not self._guard():
            return
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self._refuse(411, "Length Required: send the body with a Content-Length")
            return
        if int(length) > self.server.max_body:
            self._refuse(413, f"Payload Too Large: a message is limited to {self.server.max_body} bytes")
            return
        kind = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        body = self.rfile.read(int(length))
        self._body_read = True
        if kind != "application/json":
            self._refuse(415, "Unsupported Media Type: send application/json")
            return
        try:
            message = protocol.parse(body.decode("utf-8"))
        except UnicodeDecodeError:
            self._refuse(400, "Parse error: the body is not UTF-8", code=protocol.PARSE_ERROR)
            return
        except protocol._RpcError as exc:
            self._refuse(400, exc.message, code=exc.code)
            return
        headers = []
        if isinstance(message, dict) and message.get("method") == "initialize" and "Mcp-Session-Id" not in self.headers:
            opened = self.server.sessions.open()
            if opened is None:
                self._refuse(503, "Service Unavailable: too many MCP sessions; retry later",
                             [("Retry-After", "5")])
                return
            key, session = opened
            headers.append(("Mcp-Session-Id", key))
        else:
            found = self._session()
            if found is None:
                return
            key, session = found
        try:
            answer = self.server.mcp.receive_message(message, session)
        except Exception:  # a bug: answer it, keep serving, keep the traceback on stderr
            log.exception("message failed")
            self._refuse(500, "Internal error", code=protocol.INTERNAL)
            return
        if isinstance(answer, protocol.Job):
            answer = self.server.pool.run(answer, session)
            if answer is None:
                answer = protocol._error(message.get("id"), protocol.REQUEST_CANCELLED,
                                         "Request cancelled; nothing was committed")
        if answer is None:
            self._send(202, None, headers)
        elif answer.get("id") is None and "error" in answer:
            self._send(400, answer, headers)
        else:
            self._send(200, answer, headers)

    def do_GET(self):  # noqa: N802
        if self._guard():
            self._refuse(405, "Method Not Allowed: this server opens no SSE stream", [("Allow", "POST, DELETE")])

    def do_DELETE(self):  # noqa: N802
        if not self._guard():
            return
        found = self._session()
        if found is not None:
            self.server.sessions.close(found[0])
            self._send(204)

    def _not_allowed(self):
        self._refuse(405, "Method Not Allowed", [("Allow", "POST, GET, DELETE")])

    do_PUT = do_PATCH = do_HEAD = do_OPTIONS = _not_allowed


def serve(address, tools, *, home=None, token=None, origins=(), max_sessions=DEFAULT_MAX_SESSIONS,
          max_body=DEFAULT_MAX_BODY, ready=None):
    """Serve MCP over HTTP at ``address`` (host, port) until interrupted; ``ready(url)`` is
    called once listening."""
    httpd = HTTPServer(address, protocol.Server(None, tools, home=home), home=home, token=token, origins=origins,
                       max_sessions=max_sessions, max_body=max_body)
    try:
        if ready is not None:
            ready(httpd.url)
        httpd.serve_forever(poll_interval=0.5)
    finally:
        httpd.server_close()
