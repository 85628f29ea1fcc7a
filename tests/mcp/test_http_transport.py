"""The MCP Streamable HTTP transport: raw HTTP against an in-process server, the front door's
refusals, and the official SDK's streamable HTTP client (including 8 clients racing ``next --claim``)."""

import contextlib
import http.client
import json
import os
import subprocess
import sys
import threading

import pytest

from mindos.errors import InvalidInput, Refused
from mindos.mcp import http_transport, server, tools

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOKEN = "s3cret-token-for-the-tests-0123456789"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


@pytest.fixture
def httpd(home):
    made = []

    def start(**options):
        srv = http_transport.HTTPServer(("127.0.0.1", 0), server.Server(None, tools.exposed(profile="agent"),
                                                                        home=str(home)),
                                        home=str(home), **options)
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        made.append(srv)
        return srv

    yield start
    for srv in made:
        srv.shutdown()
        srv.server_close()


def request(srv, body=None, headers=None, method="POST", path="/mcp"):
    """``(status, headers, JSON body or None)`` of one HTTP request to ``srv``."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=60)
    sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    sent.update(headers or {})
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    try:
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        raw = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(raw) if raw else None
    finally:
        conn.close()


def open_session(srv, headers=None):
    status, got, body = request(srv, INIT, headers)
    assert status == 200 and body["result"]["serverInfo"]["name"] == "mindos"
    return got["mcp-session-id"]


def with_session(key, **more):
    return {"Mcp-Session-Id": key, "MCP-Protocol-Version": "2025-11-25", **more}


# -- the transport over raw HTTP --------------------------------------------------------------


def test_a_session_from_initialize_to_delete(httpd, conn):
    from tests.conftest import make_task

    make_task(conn, "t1")
    srv = httpd()
    key = open_session(srv)
    assert 32 <= len(key) <= 128 and all(0x21 <= ord(c) <= 0x7E for c in key)
    status, _, body = request(srv, {"jsonrpc": "2.0", "method": "notifications/initialized"}, with_session(key))
    assert (status, body) == (202, None)
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert request(srv, ping, with_session(key))[::2] == (200, {"jsonrpc": "2.0", "id": 2, "result": {}})
    status, got, body = request(srv, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "claim", "arguments": {"task_id": "t1", "owner": "remote"}}}, with_session(key))
    assert status == 200 and got["content-type"] == "application/json"
    assert body["id"] == 3 and body["result"]["structuredContent"]["lease_owner"] == "remote"
    assert request(srv, ping)[0] == 400                                   # no session id
    assert request(srv, ping, with_session("f" * 32))[0] == 404           # unknown session
    assert request(srv, ping, with_session(key, **{"MCP-Protocol-Version": "1999-01-01"}))[0] == 400
    assert request(srv, ping, with_session(key), method="GET")[0] == 405  # no server-initiated stream
    assert request(srv, ping, with_session(key), path="/other")[0] == 404
    status, _, body = request(srv, b"{not json", with_session(key))
    assert status == 400 and body["error"]["code"] == -32700 and body["id"] is None
    assert request(srv, b"ping", with_session(key, **{"Content-Type": "text/plain"}))[0] == 415
    assert request(srv, None, with_session(key), method="DELETE")[0] == 204
    assert request(srv, ping, with_session(key))[0] == 404                # ended: the client initializes again


def test_origin_and_host_are_checked_against_dns_rebinding(httpd):
    srv = httpd(origins=["https://app.example"])
    for origin in ("http://evil.example", "http://localhost.evil.example", "null", "http://127.0.0.1.nip.io"):
        status, _, body = request(srv, INIT, {"Origin": origin})
        assert status == 403 and body["error"]["code"] == -32600 and body["id"] is None, origin
    for origin in ("http://localhost:6274", "http://127.0.0.1:9", "https://app.example"):
        assert request(srv, INIT, {"Origin": origin})[0] == 200, origin
    port = srv.server_address[1]
    assert request(srv, INIT, {"Host": f"evil.example:{port}"})[0] == 403  # a rebinding page's Host
    assert request(srv, INIT, {"Host": f"localhost:{port}"})[0] == 200


def test_a_bearer_token_is_required_when_configured(httpd):
    srv = httpd(token=TOKEN)
    status, got, body = request(srv, INIT)
    assert status == 401 and got["www-authenticate"].startswith("Bearer") and body["error"]["code"] == -32600
    assert request(srv, INIT, {"Authorization": "Bearer wrong-token-wrong-token"})[0] == 401
    assert request(srv, INIT, {"Authorization": f"Basic {TOKEN}"})[0] == 401
    key = open_session(srv, {"Authorization": f"Bearer {TOKEN}"})
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert request(srv, ping, with_session(key))[0] == 401  # every request, not only the first
    assert request(srv, ping, with_session(key, Authorization=f"Bearer {TOKEN}"))[0] == 200


def test_a_non_loopback_address_needs_a_token(home):
    mcp = server.Server(None, {}, home=str(home))
    with pytest.raises(Refused, match="needs --token-file"):
        http_transport.HTTPServer(("0.0.0.0", 0), mcp, home=str(home))
    assert http_transport.is_loopback("127.0.0.2") and http_transport.is_loopback("::1")
    assert not http_transport.is_loopback("10.0.0.5") and not http_transport.is_loopback("0.0.0.0")
    assert http_transport.parse_address("[::1]:8765") == ("::1", 8765)
    for bad in ("8765", "host:", "host:http", "host:70000", ":8765"):
        with pytest.raises(InvalidInput):
            http_transport.parse_address(bad)


def test_the_token_file_must_be_private(tmp_path):
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o644)
    with pytest.raises(Refused, match="readable by others"):
        http_transport.read_token(str(path))
    path.chmod(0o640)
    with pytest.raises(Refused, match="chmod 600"):
        http_transport.read_token(str(path))
    path.chmod(0o600)
    assert http_transport.read_token(str(path)) == TOKEN
    link = tmp_path / "link"
    link.symlink_to(path)
    with pytest.raises(InvalidInput):
        http_transport.read_token(str(link))
    short = tmp_path / "short"
    short.write_text("abc")
    short.chmod(0o600)
    with pytest.raises(InvalidInput, match="16 to 4096"):
        http_transport.read_token(str(short))


def test_body_size_and_session_count_are_limited(httpd):
    srv = httpd(max_body=2048, max_sessions=2)
    key = open_session(srv)
    big = {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"pad": "x" * 4096}}
    status, _, body = request(srv, big, with_session(key))
    assert status == 413 and "limited to 2048 bytes" in body["error"]["message"]
    second = open_session(srv)
    status, got, body = request(srv, INIT)
    assert status == 503 and got["retry-after"] and "too many MCP sessions" in body["error"]["message"]
    assert request(srv, None, with_session(second), method="DELETE")[0] == 204
    open_session(srv)  # a freed slot is usable again
    assert request(srv, {"jsonrpc": "2.0", "id": 3, "method": "ping"}, with_session(key))[0] == 200


def test_ping_over_http_while_a_call_waits_on_the_write_lock_and_cancel_before_commit(httpd, conn, monkeypatch):
    from mindos.memory import notes
    from mindos.store import db
    from tests.conftest import make_task

    make_task(conn, "t1")
    waiting = threading.Event()
    real = db._acquire

    def acquire(connection, timeout=None):
        if connection is not conn:  # the server's worker, not this test's own write below
            waiting.set()
        return real(connection, timeout)

    monkeypatch.setattr(db, "_acquire", acquire)
    srv = httpd()
    key = open_session(srv)
    answers = {}

    def call(request_id, text):
        answers[request_id] = request(srv, {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
            "name": "note", "arguments": {"task_id": "t1", "content": text}}}, with_session(key))

    for request_id, cancel in ((7, True), (8, False)):
        waiting.clear()
        with db.write(conn):  # another writer holds the lock
            caller = threading.Thread(target=call, args=(request_id, f"note {request_id}"))
            caller.start()
            assert waiting.wait(20)
            assert request(srv, {"jsonrpc": "2.0", "id": 100 + request_id, "method": "ping"},
                           with_session(key))[::2] == (200, {"jsonrpc": "2.0", "id": 100 + request_id, "result": {}})
            if cancel:
                assert request(srv, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                     "params": {"requestId": request_id}}, with_session(key))[0] == 202
        caller.join(60)
    status, _, body = answers[7]
    assert status == 200 and body["id"] == 7 and body["error"]["code"] == server.REQUEST_CANCELLED
    assert answers[8][2]["result"]["isError"] is False
    assert [n["content"] for n in notes.list_notes(conn, "t1")] == ["note 8"]


@pytest.mark.bare_home
def test_a_missing_home_over_http_answers_no_database_and_stays_missing(httpd, home, tmp_path):
    before = sorted(os.listdir(tmp_path))
    srv = httpd()
    key = open_session(srv)
    status, _, body = request(srv, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "show", "arguments": {"task_id": "t1"}}}, with_session(key))
    assert status == 200 and body["result"]["structuredContent"]["error"]["code"] == "no_database"
    assert not home.exists() and sorted(os.listdir(tmp_path)) == before


# -- the front door ------------------------------------------------------------------------------


@contextlib.contextmanager
def http_process(home, *extra):
    """A ``mindos-mcp --http 127.0.0.1:0`` process; yields its endpoint URL."""
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.Popen([sys.executable, "-m", "mindos.mcp", "--http", "127.0.0.1:0", *extra], cwd=ROOT, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for line in proc.stderr:
            if "serving MCP over Streamable HTTP at " in line:
                url = line.rsplit(" ", 1)[-1].strip()
                break
        assert url, "the server did not start"
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep draining its log
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_front_door_refuses_unsafe_http_setups(home, tmp_path):
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home))

    def run(*argv):
        return subprocess.run([sys.executable, "-m", "mindos.mcp", *argv], capture_output=True, text=True, cwd=ROOT,
                              env=env, timeout=60, stdin=subprocess.DEVNULL)

    done = run("--http", "0.0.0.0:0")
    assert done.returncode == 1 and done.stderr.strip().endswith("needs --token-file (a bearer token every client must send)")
    loose = tmp_path / "token"
    loose.write_text(TOKEN)
    loose.chmod(0o644)
    done = run("--http", "0.0.0.0:0", "--token-file", str(loose))
    assert done.returncode == 1 and "readable by others" in done.stderr and done.stdout == ""
    assert run("--token-file", str(loose)).returncode == 2  # a token goes with --http
    assert run("--http", "nonsense").returncode == 2


def _sdk(url, body, token=None):
    mcp = pytest.importorskip("mcp")
    anyio = pytest.importorskip("anyio")
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def main():
        headers = {"Authorization": f"Bearer {token}"} if token else None
        async with create_mcp_http_client(headers=headers) as client:
            async with streamable_http_client(url, http_client=client) as (read, write):
                async with mcp.ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session, mcp)

    return anyio.run(main)


def test_the_sdk_streamable_http_client_runs_the_agent_loop(home, conn, tmp_path):
    from tests.conftest import make_task

    make_task(conn, "t1", project="Trove")
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)

    async def body(session, mcp):
        seen = {"tools": [t.name for t in (await session.list_tools()).tools]}
        picked = await session.call_tool("next", {"project": "Trove", "claim": True, "owner": "laptop"})
        seen["next"] = picked.structured_content["task"]["id"]
        seen["note"] = (await session.call_tool("note", {"task_id": "t1", "content": "from afar"})).is_error
        seen["receipt"] = (await session.call_tool("receipt", {"task_id": "t1", "kind": "verification",
                                                                "payload": '{"tests": "pass"}'})).is_error
        seen["complete"] = (await session.call_tool("complete", {"task_id": "t1", "owner": "laptop"})
                            ).structured_content["status"]
        seen["handoff"] = (await session.call_tool("handoff", {"task_id": "t1", "from_agent": "laptop",
                                                                "to_agent": "server", "objective": "review"})).is_error
        await session.send_ping()
        seen["resource"] = json.loads((await session.read_resource("mindos://task/t1")).contents[0].text)
        seen["refused"] = (await session.call_tool("note", {"task_id": "t1", "content": "x", "allow_secret": True})
                           ).structured_content["error"]["code"]
        return seen

    with http_process(home, "--token-file", str(token_file)) as url:
        seen = _sdk(url, body, TOKEN)
        with pytest.raises(Exception):  # without the token the handshake is refused (401)
            _sdk(url, lambda session, mcp: None)
    assert seen["tools"] == list(tools.PROFILES["agent"])
    assert seen["next"] == "t1" and seen["note"] is False and seen["receipt"] is False
    assert seen["complete"] == "completed" and seen["handoff"] is False
    assert seen["resource"]["task"]["status"] == "completed"
    assert seen["refused"] == "override_refused"
    shown = subprocess.run([sys.executable, os.path.join(ROOT, "autopilot.py"), "show", "t1"], capture_output=True,
                           text=True, cwd=ROOT, env=dict(os.environ, HERMES_AUTOPILOT_HOME=str(home)), timeout=60)
    assert json.loads(shown.stdout)["task"]["status"] == "completed"  # the same ledger the CLI reads


@pytest.mark.slow
def test_eight_sdk_clients_race_next_claim_over_two_thousand_tasks(home, conn):
    anyio = pytest.importorskip("anyio")
    from mindos.store import db
    from tests.conftest import make_task

    pool = 2000
    with db.write(conn):
        for index in range(pool):
            make_task(conn, f"r{index:04d}", title=f"race {index}")
    claims, failures = [], []

    async def body_for(owner):
        async def body(session, mcp):
            while True:
                try:
                    answer = await session.call_tool("next", {"claim": True, "owner": owner})
                except Exception as exc:  # a transport or protocol failure
                    failures.append(repr(exc))
                    if len(failures) > 20:
                        return
                    continue
                if answer.is_error:
                    failures.append(answer.structured_content)
                    if len(failures) > 20:
                        return
                    continue
                task = answer.structured_content["task"]
                if task is None:
                    return
                claims.append((task["id"], owner))
        return body

    with http_process(home) as url:
        async def race():
            async with anyio.create_task_group() as group:
                for index in range(8):
                    group.start_soon(anyio.to_thread.run_sync, _sdk, url, await body_for(f"agent-{index}"))

        anyio.run(race)
    owners = {}
    for task_id, owner in claims:
        owners.setdefault(task_id, []).append(owner)
    assert failures == []
    assert [t for t, o in owners.items() if len(o) > 1] == []  # 0 double claims
    assert len(claims) == len(owners) == pool
    leased = conn.execute("SELECT count(*) FROM tasks WHERE lease_owner <> ''").fetchone()[0]
    claimed = conn.execute("SELECT count(*) FROM audit_events WHERE action = 'claimed'").fetchone()[0]
    assert leased == claimed == pool
    assert len({owner for _, owner in claims}) == 8


@pytest.mark.slow
def test_thirty_two_http_clients_race_for_leases_with_group_commit(home, conn):
    """32 keep-alive clients through one server: claims share transactions, yet every call is
    answered on its own (its own id, its own task), none fails and no task is leased twice."""
    from urllib.parse import urlsplit

    from mindos.store import db, ledger
    from tests.conftest import make_task

    pool, clients = 640, 32
    with db.write(conn):
        for index in range(pool):
            make_task(conn, f"r{index:04d}", title=f"race {index}")
    claims, failures, lock = [], [], threading.Lock()

    def client(index, url):
        try:
            race(index, url)
        except Exception as exc:  # a reset connection, a timeout: a failed call
            with lock:
                failures.append(repr(exc))

    def race(index, url):
        owner = f"agent-{index:02d}"
        link = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

        def post(message):
            link.request("POST", url.path, body=json.dumps(message).encode(), headers=headers)
            response = link.getresponse()
            raw = response.read()
            return response, json.loads(raw) if raw else None

        response, _ = post(INIT)
        headers.update(with_session(response.getheader("Mcp-Session-Id")))
        post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        request_id = 1
        while True:
            request_id += 1
            _, answer = post({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                              "params": {"name": "next", "arguments": {"claim": True, "owner": owner}}})
            result = (answer or {}).get("result")
            if answer.get("id") != request_id or result is None or result.get("isError"):
                with lock:
                    failures.append(answer)
                if len(failures) > 20:
                    return
                continue
            task = result["structuredContent"]["task"]
            if task is None:
                link.close()
                return
            with lock:
                claims.append((task["id"], owner, task.get("lease_owner")))

    with http_process(home) as url:
        endpoint = urlsplit(url)
        threads = [threading.Thread(target=client, args=(i, endpoint)) for i in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []
    owners = {}
    for task_id, owner, lease_owner in claims:
        assert lease_owner in (None, owner), "each answer is its own call's"
        owners.setdefault(task_id, []).append(owner)
    assert [t for t, o in owners.items() if len(o) > 1] == []  # 0 double claims
    assert len(claims) == len(owners) == pool
    leased = dict(conn.execute("SELECT id, lease_owner FROM tasks"))
    assert all(leased[task_id] == o[0] for task_id, o in owners.items())
    claimed = conn.execute("SELECT count(*) FROM audit_events WHERE action = 'claimed'").fetchone()[0]
    assert claimed == pool
    assert ledger.verify_chain(conn)["ok"]


def test_the_pool_writer_batches_what_waited_in_arrival_order_and_reads_pass_it(conn, home):
    # one writer takes the group-commit calls in arrival order: the first waits for the write
    # lock alone, the two that arrive meanwhile share the next transaction, and a read is
    # answered by another worker while the writer waits
    import time

    from mindos.store import db
    from tests.conftest import make_task

    make_task(conn, "t1")
    mcp = server.Server(None, tools.exposed(profile="agent"), home=str(home))
    sizes, real = [], mcp.execute_batch

    def execute_batch(jobs, store, sessions=None):
        sizes.append(len(jobs))
        return real(jobs, store, sessions)

    mcp.execute_batch = execute_batch
    pool = http_transport.Pool(mcp, str(home), workers=3)
    line = db.turns(conn)
    answers, callers = {}, []

    def call(request_id, name="note", arguments=None):
        job = server.Job(request_id, "tools/call", {"name": name, "arguments": arguments or {
            "task_id": "t1", "content": f"note {request_id}"}})
        mcp.session.add(job)
        answers[request_id] = pool.run(job, mcp.session)

    def until(check):
        deadline = time.monotonic() + 20
        while not check():
            assert time.monotonic() < deadline, "the pool never got there"
            time.sleep(0)

    try:
        with db.write(conn):  # another writer holds the lock while three calls arrive, one by one
            callers.append(threading.Thread(target=call, args=(11,)))
            callers[-1].start()
            until(lambda: len(line.queue) == 2)  # the writer took 11 and waits for the lock
            for request_id in (12, 13):
                callers.append(threading.Thread(target=call, args=(request_id,)))
                callers[-1].start()
                until(lambda: pool.writes.qsize() == request_id - 11)
            call(14, "show", {"task_id": "t1"})  # a read: not queued behind the writer
            assert answers[14]["result"]["structuredContent"]["task"]["id"] == "t1"
            assert sorted(answers) == [14] and pool.writes.qsize() == 2
        for caller in callers:
            caller.join(20)
    finally:
        pool.close()
    assert sorted(answers) == [11, 12, 13, 14]
    assert all(not answer["result"]["isError"] for answer in answers.values())
    assert sizes == [1, 1, 2]  # 11 alone, the read alone, then 12 and 13 in one transaction
    contents = [row[0] for row in conn.execute(
        "SELECT content FROM notes WHERE task_id = 't1' AND content LIKE 'note 1%' ORDER BY id")]
    assert contents == ["note 11", "note 12", "note 13"]
    assert not line.queue and line.owner is None


# -- the lean request reader and answer writer ------------------------------------------------


def raw_exchange(srv, data, read_all=True):
    """The raw bytes the server answers to ``data`` sent on one fresh connection."""
    import socket

    with socket.create_connection(("127.0.0.1", srv.server_address[1]), timeout=30) as sock:
        sock.sendall(data)
        if not read_all:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


@pytest.mark.parametrize("block", [
    b"Host: a\r\nX-One: 1\r\nx-one: 2\r\nContent-Type:application/json; charset=utf-8\r\nEmpty:\r\n\r\n",
    b"Host: a\r\nX-Folded: first\r\n  second\r\nX-After: 3\r\n\r\n",  # an obsolete folded line
    b"Host: a\r\nno colon here\r\nX-After: 3\r\n\r\n",                # not a header: the rest is body
    b"Host: a\r\nBad Name: 1\r\nX-After: 3\r\n\r\n",
    b"Host: a\r\n:empty name\r\nX-After: 3\r\n\r\n",
    b"Host: a\r\nX-Cr: one\rtwo\r\nX-After: 3\r\n\r\n",
    b"Host: a\nX-Bare-Lf:  spaced value \n\n",
    b"Host: caf\xe9\r\nX-Tab:\tt\r\n\r\n",
])
def test_the_header_reader_reads_what_the_email_parser_reads(block):
    import io

    expected = http.client.parse_headers(io.BytesIO(block))
    got = http_transport.read_headers(io.BytesIO(block), http.client.HTTPMessage)
    for name in ("host", "X-ONE", "x-folded", "X-After", "content-type", "empty", "x-cr", "x-bare-lf", "x-tab",
                 "bad name", "missing"):
        assert got.get(name) == expected.get(name), name
        assert got.get(name, "d") == expected.get(name, "d"), name
        assert (name in got) == (name in expected), name
    assert got["x-one"] == expected["x-one"]


def test_the_header_reader_keeps_http_clients_limits():
    import io

    with pytest.raises(http.client.LineTooLong):
        http_transport.read_headers(io.BytesIO(b"X-Long: " + b"a" * 70000 + b"\r\n\r\n"), http.client.HTTPMessage)
    with pytest.raises(http.client.HTTPException):
        http_transport.read_headers(io.BytesIO(b"".join(b"X-%d: 1\r\n" % i for i in range(101)) + b"\r\n"),
                                    http.client.HTTPMessage)
    plain = http_transport.read_headers(io.BytesIO(b"".join(b"X-%d: 1\r\n" % i for i in range(99)) + b"\r\n"),
                                        http.client.HTTPMessage)
    assert isinstance(plain, http_transport.Headers) and plain.get("x-98") == "1"


def test_raw_requests_odd_lines_and_limits_are_answered_and_the_server_goes_on(httpd):
    srv = httpd()
    body = json.dumps(INIT).encode()
    post = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)) + body
    # keep-alive: two requests on one connection, each answered in full, with Date and Server
    answer = raw_exchange(srv, post + post, read_all=False)
    assert answer.count(b"HTTP/1.1 200 OK\r\n") == 2 and answer.count(b'"serverInfo"') == 2
    head = answer.split(b"\r\n\r\n", 1)[0].decode()
    assert "\r\nServer: mindos-mcp/" in head and "\r\nDate: " in head and " GMT" in head
    assert "\r\nContent-Type: application/json\r\n" in head and "\r\nMcp-Session-Id: " in head
    length = int(head.split("Content-Length: ", 1)[1].split("\r\n", 1)[0])
    assert len(answer.split(b"\r\n\r\n", 1)[1].split(b"HTTP/1.1", 1)[0]) == length
    # HTTP/1.0 is answered, then the connection closes (no keep-alive asked)
    answer = raw_exchange(srv, post.replace(b"HTTP/1.1", b"HTTP/1.0", 1))
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and b'"serverInfo"' in answer
    # a folded header line takes the email parser's path and still works
    folded = post.replace(b"Content-Type: application/json\r\n", b"X-Note: a\r\n  b\r\nContent-Type: application/json\r\n")
    assert raw_exchange(srv, folded.replace(b"HTTP/1.1", b"HTTP/1.0", 1)).startswith(b"HTTP/1.1 200 OK\r\n")
    # limits and bad request lines, each answered with its status
    assert raw_exchange(srv, b"POST /mcp HTTP/1.1\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n").startswith(
        b"HTTP/1.1 431 ")
    many = b"".join(b"X-%d: 1\r\n" % i for i in range(120))
    assert raw_exchange(srv, b"POST /mcp HTTP/1.1\r\n" + many + b"\r\n").startswith(b"HTTP/1.1 431 ")
    # (http.server's own path: a version it cannot read is answered as HTTP/0.9, a bare body)
    assert b"Error code: 505" in raw_exchange(srv, b"POST /mcp HTTP/2.0\r\n\r\n")
    assert b"Error code: 400" in raw_exchange(srv, b"POST /mcp HTTP/1.x\r\n\r\n")
    assert raw_exchange(srv, b"BREW /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").startswith(b"HTTP/1.1 501 ")
    assert raw_exchange(srv, b"POST //mcp HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n" % len(body) + body).startswith(b"HTTP/1.1 200 OK")
    assert request(srv, INIT)[0] == 200  # and the server goes on


def test_request_lines_are_logged_with_control_characters_escaped(httpd, caplog):
    import logging

    srv = httpd()
    with caplog.at_level(logging.INFO, logger="mindos.mcp.http_transport"):
        raw_exchange(srv, b"GET /mcp\x1b[31m HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    lines = [record.getMessage() for record in caplog.records if "GET" in record.getMessage()]
    assert lines and all("\x1b" not in line for line in lines) and any("\\x1b[31m" in line for line in lines)
