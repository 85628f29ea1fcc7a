#!/usr/bin/env python3
"""Benchmark the MCP server against the same calls as processes.

What is measured
  * **Latency at N tasks** (default 10k, seeded by bench/bench.py's ``seed_tasks``): the
    p50 wall time (and the stdio server's mean CPU per call, the figure a busy machine does
    not inflate) of ``claim``, ``note``, ``next --claim`` and the reads ``show`` and
    ``next`` (no claim) sent to one long-lived
    ``python3 -m mindos.mcp`` server over stdio (write the request line, read the response
    line) and to one ``mindos-mcp --http 127.0.0.1:0`` server over Streamable HTTP (one
    keep-alive connection, one POST per call), against the same calls as
    ``python3 autopilot.py ...`` processes.  The three are interleaved so machine noise hits
    them alike; ``stdio_ratio`` and ``http_ratio`` are MCP p50 / process p50 (``speedup`` is
    its inverse for stdio).  Explicit claims take tasks deferred out of dispatch, so
    ``next --claim`` and ``claim`` never collide.
  * **32 HTTP clients through one server** (``http-race``): each keeps calling
    ``next --claim`` for its own owner until the pool is claimed; claims per second, p50, p90,
    p99 and the slowest call's latency, the server's CPU per claim, double claims and failed
    calls (both must be 0).
  * **Reads on a home of yours** (``reads``, with ``--home``): the p50 and the server's CPU
    per call of ``search`` and ``search-notes`` (substring and ``--rank``, over
    bench.py's SEARCH_QUERIES) and ``show`` through one ``--tools all`` stdio server on an
    existing home (a copy of a scale home: the calls only read it).  ``--base-tree DIR``
    runs a second server from another source tree (a ``git archive`` of a base commit)
    interleaved call by call with this one, checks that both answer alike, and reports
    each p50 and their ratio.
  * **Tool definitions**: the bytes of the ``tools/list`` result as the server sends it,
    for the default profile and for ``--tools all``.
  * **Racing servers**: S servers (default 8), each on its own connection, keep calling
    ``next --claim`` for their own owner until the queue of P tasks (default 2,000) is
    empty.  Reported: claims, distinct tasks, double claims (a task handed out twice),
    failed calls (a JSON-RPC error or ``isError``), leased rows and ``claimed`` audit
    events; the run fails unless double claims and failed calls are both 0 and every
    task was claimed exactly once.

Quick run:   python3 bench/bench_mcp.py --tasks 1000 --reps 10 --race-tasks 200
Full run:    python3 bench/bench_mcp.py          (10k tasks, 30 reps, 8 servers x 2,000 tasks)
Reads:       python3 bench/bench_mcp.py --sections reads --home COPY-OF-A-SCALE-HOME --reps 30 [--base-tree DIR]
Results go to stdout (JSON) and to bench/results/ (gitignored); exit 1 when the race check fails.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (ROOT, os.path.join(ROOT, "bench")):
    if path not in sys.path:
        sys.path.insert(0, path)

import bench  # noqa: E402  (seeding is shared with the main benchmark)
from mindos.store import db  # noqa: E402

AUTOPILOT = os.path.join(ROOT, "autopilot.py")


class Server:
    """One ``python3 -m mindos.mcp`` process and a blocking request/response client."""

    def __init__(self, home, *extra, root=ROOT):
        env = bench._env(home)
        if root != ROOT:
            env["PYTHONPATH"] = root  # another source tree (bench_reads --base-tree)
        self.proc = subprocess.Popen([sys.executable, "-m", "mindos.mcp", *extra], cwd=root, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.notify("notifications/initialized")

    def notify(self, method):
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode()
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        if answer.get("id") != self.next_id:
            raise RuntimeError(f"out-of-order answer: {answer}")
        return answer

    def call(self, name, arguments):
        """``(ms, ok, result)`` of one tools/call."""
        started = time.perf_counter()
        answer = self.request("tools/call", {"name": name, "arguments": arguments})
        ms = (time.perf_counter() - started) * 1000.0
        result = answer.get("result")
        ok = result is not None and not result.get("isError")
        return ms, ok, (result or {}).get("structuredContent") if ok else answer

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


class HttpServer(Server):
    """One ``mindos-mcp --http 127.0.0.1:0`` process and a keep-alive Streamable HTTP client."""

    def __init__(self, home):
        import http.client
        from urllib.parse import urlsplit

        env = bench._env(home)
        self.proc = subprocess.Popen([sys.executable, "-m", "mindos.mcp", "--http", "127.0.0.1:0"], cwd=ROOT,
                                     env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        url = None
        for line in self.proc.stderr:
            if "Streamable HTTP at " in line:
                url = urlsplit(line.rsplit(" ", 1)[-1].strip())
                break
        if url is None:
            raise RuntimeError("the HTTP server did not start")
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()
        self.path = url.path
        self.http = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
        self.session = None
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.notify("notifications/initialized")

    def _post(self, message):
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.session:
            headers.update({"Mcp-Session-Id": self.session, "MCP-Protocol-Version": "2025-11-25"})
        self.http.request("POST", self.path, body=json.dumps(message).encode(), headers=headers)
        response = self.http.getresponse()
        body = response.read()
        self.session = self.session or response.getheader("Mcp-Session-Id")
        return json.loads(body) if body else None

    def notify(self, method):
        self._post({"jsonrpc": "2.0", "method": method})

    def request(self, method, params):
        self.next_id += 1
        answer = self._post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        if answer.get("id") != self.next_id:
            raise RuntimeError(f"out-of-order answer: {answer}")
        return answer

    def close(self):
        self.http.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)


def _p50(samples):
    return round(statistics.median(samples), 2) if samples else None


def bench_latency(workdir, tasks, reps, python=sys.executable):
    """p50 of claim / note / next --claim through one MCP server vs as processes (run on ``python``)."""
    home = os.path.join(workdir, "home-latency")
    info = bench.seed_tasks(home, tasks, reserve=3 * reps)
    env = bench._env(home)
    server = Server(home)
    remote = HttpServer(home)
    labels = ("claim", "note", "next --claim", "show", "next (read)")
    mcp, over_http, proc = ({label: [] for label in labels} for _ in range(3))
    errors = []
    explicit = iter(info.reserved)

    def process(label, argv):
        ms, done = bench._run([python, AUTOPILOT, *argv], env)
        if done.returncode != 0:
            errors.append(bench._error(label, argv, done))
        proc[label].append(ms)

    cpu = {label: [] for label in labels}  # the stdio server's own CPU seconds per call

    def served(label, name, arguments, via=server, into=mcp):
        before = _cpu_fine(via.proc.pid) if via is server else None
        ms, ok, result = via.call(name, arguments)
        if before is not None:
            after = _cpu_fine(via.proc.pid)
            if after is not None:
                cpu[label].append(after - before)
        if not ok:
            errors.append({"command": label, "via": "http" if via is remote else "mcp", "answer": result})
        into[label].append(ms)

    try:
        for rep in range(reps):
            mine, remote_one, theirs = next(explicit), next(explicit), next(explicit)
            served("claim", "claim", {"task_id": mine, "owner": "mcp-agent"})
            served("claim", "claim", {"task_id": remote_one, "owner": "http-agent"}, remote, over_http)
            process("claim", ["claim", theirs, "--owner", "proc-agent"])
            served("note", "note", {"task_id": mine, "content": f"mcp observation {rep}", "source": "mcp-agent"})
            served("note", "note", {"task_id": remote_one, "content": f"http observation {rep}",
                                    "source": "http-agent"}, remote, over_http)
            process("note", ["note", theirs, "--content", f"process observation {rep}", "--source", "proc-agent"])
            served("next --claim", "next", {"claim": True, "owner": "mcp-agent"})
            served("next --claim", "next", {"claim": True, "owner": "http-agent"}, remote, over_http)
            process("next --claim", ["next", "--claim", "--owner", "proc-agent"])
            served("show", "show", {"task_id": mine})
            served("show", "show", {"task_id": remote_one}, remote, over_http)
            process("show", ["show", theirs])
            served("next (read)", "next", {})
            served("next (read)", "next", {}, remote, over_http)
            process("next (read)", ["next"])
    finally:
        server.close()
        remote.close()
        shutil.rmtree(home, ignore_errors=True)
    commands = {}
    for label in mcp:
        m, h, p = _p50(mcp[label]), _p50(over_http[label]), _p50(proc[label])
        # the server's CPU per call, averaged: what the call costs when the machine is shared,
        # beside its wall time (a thread that exits mid-call is not counted: none do)
        spent = cpu[label]
        commands[label] = {"mcp_p50_ms": m, "http_p50_ms": h, "process_p50_ms": p,
                           "mcp_server_cpu_ms": round(sum(spent) * 1000 / len(spent), 3) if spent else None,
                           "speedup": round(p / m, 1) if m and p else None,
                           "stdio_ratio": round(m / p, 3) if m and p else None,
                           "http_ratio": round(h / p, 3) if h and p else None,
                           "samples": len(mcp[label])}
    return {"tasks": tasks, "reps": reps, "commands": commands, "load_average_1m": round(os.getloadavg()[0], 2)}, errors


READS = (
    ("search", "search", lambda rep: {"query": bench.SEARCH_QUERIES[rep % len(bench.SEARCH_QUERIES)]}),
    ("search 'rate limit'", "search", lambda rep: {"query": "rate limit"}),
    ("search --rank", "search", lambda rep: {"query": bench.SEARCH_QUERIES[rep % len(bench.SEARCH_QUERIES)],
                                             "rank": True}),
    ("search-notes", "search-notes", lambda rep: {"query": bench.SEARCH_QUERIES[rep % len(bench.SEARCH_QUERIES)]}),
    ("search-notes --rank", "search-notes",
     lambda rep: {"query": bench.SEARCH_QUERIES[rep % len(bench.SEARCH_QUERIES)], "rank": True}),
    ("show", "show", None),
)


def bench_reads(home, reps, base_tree=None):
    """p50 and server CPU per call of the READS calls on an existing ``home`` (read only),
    through one ``--tools all`` stdio server; with ``base_tree``, a second server from that
    source tree interleaved call by call (answers compared)."""
    conn = db.connect(home, create=False)
    try:
        task_id = conn.execute("SELECT id FROM tasks ORDER BY seq LIMIT 1").fetchone()[0]
    finally:
        conn.close()
    servers = {"mcp": Server(home, "--tools", "all", "--home", home)}
    if base_tree:
        servers["base"] = Server(home, "--tools", "all", "--home", home, root=os.path.abspath(base_tree))
    commands, errors = {}, []
    try:
        for label, name, make in READS:
            make = make or (lambda rep: {"task_id": task_id})
            ms = {key: [] for key in servers}
            cpu = {key: [] for key in servers}
            for rep in range(-3, reps):  # three warm-up calls each
                order = list(servers.items())
                if rep % 2:
                    order.reverse()  # each goes first half the time
                answers = {}
                for key, server in order:
                    before = _cpu_fine(server.proc.pid)
                    took, ok, answers[key] = server.call(name, make(rep))
                    after = _cpu_fine(server.proc.pid)
                    if not ok:
                        errors.append({"command": label, "via": key, "answer": answers[key]})
                    if rep >= 0:
                        ms[key].append(took)
                        if before is not None and after is not None:
                            cpu[key].append(after - before)
                if len(answers) == 2 and answers["mcp"] != answers["base"]:
                    errors.append({"command": label, "differs": make(rep)})
            row = {"mcp_p50_ms": _p50(ms["mcp"]), "samples": len(ms["mcp"]),
                   "mcp_server_cpu_ms": round(statistics.mean(cpu["mcp"]) * 1000, 3) if cpu["mcp"] else None}
            if base_tree:
                row["base_p50_ms"] = _p50(ms["base"])
                row["base_server_cpu_ms"] = round(statistics.mean(cpu["base"]) * 1000, 3) if cpu["base"] else None
                row["ratio"] = round(row["mcp_p50_ms"] / row["base_p50_ms"], 3) if row["base_p50_ms"] else None
            commands[label] = row
    finally:
        for server in servers.values():
            server.close()
    return {"home": home, "reps": reps, "base_tree": base_tree, "commands": commands,
            "load_average_1m": round(os.getloadavg()[0], 2)}, errors


def bench_definitions(workdir):
    """Bytes of the tools/list result as sent, for the default profile and for --tools all."""
    home = os.path.join(workdir, "home-definitions")
    db.connect(home).close()
    sizes = {}
    try:
        for label, extra in (("default", ()), ("all", ("--tools", "all"))):
            server = Server(home, *extra)
            try:
                result = server.request("tools/list", {})["result"]
            finally:
                server.close()
            sizes[label] = {"tools": len(result["tools"]),
                            "bytes": len(json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode())}
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return sizes


def bench_race(workdir, servers, pool):
    """``servers`` MCP servers racing ``next --claim`` until ``pool`` tasks are all claimed."""
    home = os.path.join(workdir, "home-race")
    bench.seed_tasks(home, pool, dag=False)
    clients = [Server(home) for _ in range(servers)]
    claims, failures, lock = [], [], threading.Lock()

    def worker(index):
        owner = f"server-{index}"
        while True:
            ms, ok, result = clients[index].call("next", {"claim": True, "owner": owner})
            if not ok:
                with lock:
                    failures.append({"server": index, "answer": result})
                if len(failures) > 50:
                    return
                continue
            task = result.get("task")
            if task is None:
                return
            with lock:
                claims.append((task["id"], owner, ms))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(servers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    for client in clients:
        client.close()
    leased, audited, owners, ms = _race_tally(home, claims)
    per_server = {}
    for _, owner, _ in claims:
        per_server[owner] = per_server.get(owner, 0) + 1
    report = {
        "servers": servers, "pool_tasks": pool, "claims": len(claims), "distinct_tasks": len(owners),
        "double_claims": sorted(t for t, o in owners.items() if len(o) > 1), "failed_calls": len(failures),
        "leased_rows": leased, "claimed_events": audited, "wall_seconds": round(wall, 2),
        "claims_per_second": round(len(claims) / wall, 1) if wall else None,
        "call_p50_ms": _p50(ms), "call_p95_ms": round(ms[int(len(ms) * 0.95)], 2) if ms else None,
        "claims_per_server": dict(sorted(per_server.items())),
    }
    report["ok"] = (not report["double_claims"] and not failures and len(claims) == pool == len(owners)
                    == leased == audited)
    return report, failures[:5]


def bench_http_race(workdir, clients, pool):
    """``clients`` keep-alive HTTP clients through ONE ``mindos-mcp --http`` server, each calling
    ``next --claim`` for its own owner until the ``pool`` tasks are all claimed.  Reported:
    claims per second over the race, p50/p99 call latency, double claims, failed calls."""
    import http.client
    from urllib.parse import urlsplit

    home = os.path.join(workdir, "home-http-race")
    conn = db.connect(home)
    try:
        from mindos.work import tasks as work_tasks

        with db.write(conn):
            for index in range(pool):
                work_tasks.create(conn, task_id=f"race{index:05d}", project="Race", title=f"race {index}")
    finally:
        conn.close()
    first = HttpServer(home)  # starts the server; its own session is not used in the race
    endpoint = (first.http.host, first.http.port, first.path)
    claims, failures, lock = [], [], threading.Lock()
    barrier = threading.Barrier(clients + 1)

    def worker(index):
        owner = f"http-{index:02d}"
        link = http.client.HTTPConnection(endpoint[0], endpoint[1], timeout=120)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

        def post(message):
            link.request("POST", endpoint[2], body=json.dumps(message).encode(), headers=headers)
            response = link.getresponse()
            raw = response.read()
            return response, json.loads(raw) if raw else None

        try:
            response, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
            headers.update({"Mcp-Session-Id": response.getheader("Mcp-Session-Id"),
                            "MCP-Protocol-Version": "2025-11-25"})
            post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        finally:
            barrier.wait()
        request_id = 1
        while True:
            request_id += 1
            started = time.perf_counter()
            try:
                _, answer = post({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                                  "params": {"name": "next", "arguments": {"claim": True, "owner": owner}}})
            except Exception as exc:  # noqa: BLE001 (a transport failure is a failed call)
                answer = {"exception": repr(exc)}
            ms = (time.perf_counter() - started) * 1000
            result = (answer or {}).get("result")
            if answer.get("id") != request_id or result is None or result.get("isError"):
                with lock:
                    failures.append({"client": index, "answer": answer})
                if len(failures) > 50:
                    return
                continue
            task = result["structuredContent"]["task"]
            if task is None:
                link.close()
                return
            with lock:
                claims.append((task["id"], owner, ms))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started, client_cpu = time.perf_counter(), time.process_time()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    client_cpu = time.process_time() - client_cpu
    cpu = _cpu_seconds(first.proc.pid)
    first.close()
    leased, audited, owners, ms = _race_tally(home, claims)
    report = {
        "clients": clients, "pool_tasks": pool, "claims": len(claims),
        "double_claims": sorted(t for t, o in owners.items() if len(o) > 1), "failed_calls": len(failures),
        "leased_rows": leased, "claimed_events": audited, "wall_seconds": round(wall, 2),
        "claims_per_second": round(len(claims) / wall, 1) if wall else None,
        "call_p50_ms": _p50(ms), "call_p90_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.90))], 2) if ms else None,
        "call_p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 2) if ms else None,
        "call_max_ms": round(ms[-1], 2) if ms else None,
    }
    if cpu is not None:
        # the server's own CPU per claim (setup included): what one free core would sustain
        report["server_cpu_ms_per_claim"] = round(cpu * 1000 / max(len(claims), 1), 3)
        report["claims_per_second_one_free_core"] = round(len(claims) / cpu, 1) if cpu else None
    # the clients' own CPU per claim (this process, all 32 threads): on a shared machine it is
    # taken from the server's share
    report["client_cpu_ms_per_claim"] = round(client_cpu * 1000 / max(len(claims), 1), 3)
    report["load_average_1m"] = round(os.getloadavg()[0], 2)
    report["ok"] = (not report["double_claims"] and not failures and len(claims) == pool == len(owners)
                    == leased == audited)
    return report, failures[:5]


def _cpu_seconds(pid):
    """User + system CPU seconds of process ``pid`` so far (Linux /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _cpu_fine(pid):
    """CPU seconds of process ``pid`` so far, in nanoseconds resolution: the time on a CPU of
    each of its threads (Linux /proc/PID/task/*/schedstat); the tick-counted figure of
    :func:`_cpu_seconds` when the kernel keeps no schedstat, or None."""
    try:
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat", encoding="ascii") as handle:
                total += int(handle.read().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        return _cpu_seconds(pid)


def _race_tally(home, claims):
    """``(leased, audited, {task: [owners]}, sorted claim ms)`` of a raced home (removed)."""
    leased, audited = bench.lease_tally(home)
    owners = {}
    for task_id, owner, _ in claims:
        owners.setdefault(task_id, []).append(owner)
    return leased, audited, owners, sorted(c[2] for c in claims)


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Example:\n  python3 bench/bench_mcp.py --tasks 10000 --reps 30 --servers 8 --race-tasks 2000")
    p.add_argument("--tasks", type=int, default=10000, help="tasks in the latency home (default 10000)")
    p.add_argument("--reps", type=int, default=30, help="timed calls per command and mode (default 30)")
    p.add_argument("--servers", type=int, default=8, help="racing MCP servers (default 8)")
    p.add_argument("--race-tasks", type=int, default=2000, help="tasks the servers race for (default 2000)")
    p.add_argument("--http-clients", type=int, default=32, help="HTTP clients through one server (default 32)")
    p.add_argument("--http-tasks", type=int, default=3000, help="tasks the HTTP clients race for (default 3000)")
    p.add_argument("--sections", default="definitions,latency,race,http-race",
                   help="comma-separated: definitions, latency, race, http-race, reads (needs --home)")
    p.add_argument("--home", help="reads: an existing home to read (a copy of a scale home; never written)")
    p.add_argument("--base-tree", help="reads: also time a server from this source tree, interleaved")
    p.add_argument("--out", help="results directory (default bench/results)")
    p.add_argument("--workdir", help="where to build the throwaway homes (default: a temp dir)")
    bench.add_interpreter_flag(p)
    return p


def run(argv=None):
    """Run the benchmark; return ``(results, exit_code)``."""
    args = build_parser().parse_args(argv)
    sections = set(args.sections.split(","))
    workdir = args.workdir or tempfile.mkdtemp(prefix="mindos-bench-mcp-")
    results, errors = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "interpreter": args.interpreter}, []
    try:
        if "definitions" in sections:
            results["definitions"] = bench_definitions(workdir)
        if "latency" in sections:
            python = bench.interpreter(args.interpreter, workdir)
            results["latency"], errs = bench_latency(workdir, args.tasks, args.reps, python)
            errors += errs
        if "reads" in sections:
            if not args.home:
                raise SystemExit("bench_mcp: --sections reads needs --home")
            results["reads"], errs = bench_reads(os.path.abspath(args.home), args.reps, args.base_tree)
            errors += errs
        if "race" in sections:
            results["race"], errs = bench_race(workdir, args.servers, args.race_tasks)
            errors += errs
        if "http-race" in sections:
            results["http_race"], errs = bench_http_race(workdir, args.http_clients, args.http_tasks)
            errors += errs
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    results["errors"] = errors
    out = args.out or os.path.join(ROOT, "bench", "results")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"mcp-{time.strftime('%Y%m%dT%H%M%S')}.json"), "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2, sort_keys=True)
    ok = not errors and results.get("race", {}).get("ok", True) and results.get("http_race", {}).get("ok", True)
    return results, 0 if ok else 1


def main(argv=None):
    results, code = run(argv)
    sys.stdout.write(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
