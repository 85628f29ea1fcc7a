#!/usr/bin/env python3
"""Benchmark the MindOS front doors the way agents call them: one process per command.

What is measured
  * Per home size N (default 1k, 10k, 100k tasks with a dependency DAG, tags, mixed
    priorities and ages), the median wall time of ``python3 autopilot.py <command>`` run as a
    separate process, against the median of the baseline ``python3 -c "import sqlite3, json,
    argparse"`` measured in the same run.  Baseline and command runs are interleaved
    (baseline, command, baseline, command, ...) so machine noise hits both alike; the ratio
    command/baseline is the figure that travels between machines.  Each entry also has the
    median CPU time (user + system) of both and their ``cpu_ratio``: the cost without the
    waits, such as a write's fsync, that the disk decides.
  * Audit-chain verification throughput (events/second), in-process over a large seeded
    ledger (default 300k events).
  * Concurrent dispatch: P processes each doing K sequential ``next --claim`` over one shared
    pool; throughput plus a check that no task was claimed twice.
  * Shared memory at scale: note / context / search-notes / search-handoffs over a home with
    10k tasks, 50k notes and 5k handoffs.
  * Recall at scale: the memory home plus 10k memories and 5k facts, a fifth of the tasks
    completed (so --dep-context finds evidence) and 1,000 live handoffs citing an audited
    recall: ``recall`` with every section on, ``recall-verify``, ``memory-search`` (each
    against the baseline), and the wall time of ``ops.py recall-stale`` over the cited
    handoffs.  Before it is timed the recall home gets what cron gives a lived-in home: one
    real ``ops.py nanny`` tick (it merges the full-text indexes the seeding fragmented),
    then a few fresh writes through the core, as agents make between ticks (``--no-upkeep``
    times it as seeded instead).

Seeding writes rows with SQL inside one transaction (the public commands would take hours
at 100k), but every seeded row gets the audit event its command would have written, through
``ledger.append_event``, so the seeded chain verifies.  Commands whose name is not (yet)
registered in a front door are reported under ``skipped`` rather than timed.

Quick run:   python3 bench/bench.py --sizes 1000 --reps 5     (under a minute)
Full run:    python3 bench/bench.py                           (about five minutes on two cores)
The ledger, concurrency and memory sections scale with the largest ``--sizes`` value unless
given explicitly; at the default sizes they run at full scale (300k events, 8 x 50 claims,
10k tasks with 50k notes and 5k handoffs).
Results go to stdout (JSON) and to bench/results/ (gitignored).
"""

import argparse
import compileall
import json
import os
import platform
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from mindos.core import clock  # noqa: E402
from mindos.store import db, ledger

AUTOPILOT = os.path.join(ROOT, "autopilot.py")
OPS = os.path.join(ROOT, "ops.py")
BASELINE_CODE = "import sqlite3, json, argparse"
# The interpreter every timed process runs (baseline and commands alike); run() points it at
# a clean one unless told otherwise (see clean_interpreter).
PYTHON = sys.executable
DEFAULT_SIZES = (1000, 10000, 100000)
SECTIONS = ("tasks", "ledger", "concurrency", "memory", "recall")

VERBS = ("Fix", "Add", "Refactor", "Document", "Investigate", "Migrate", "Harden", "Benchmark", "Review",
         "Deploy", "Rotate", "Upgrade")
OBJECTS = ("retry path", "connection pool", "auth tokens", "rate limit", "cache layer", "schema migration",
           "CI pipeline", "log rotation", "TLS certificate", "search index", "billing export", "webhook handler")
AREAS = ("payments", "gateway", "scheduler", "api", "worker", "dashboard", "ingest", "notifications")
NEXT_ACTIONS = ("Inspect evidence", "Run the test suite", "Ask for review", "Write a reproduction",
                "Check the dashboards", "Open a PR", "")
TAGS = ("autopilot-safe", "infra", "client:trove", "client:acme", "area:api", "area:db", "area:ui", "security",
        "perf", "docs", "flaky", "oncall", "release:2026.09", "needs-review", "backend", "frontend")
AGENTS = ("hermes", "codex", "claude-code", "opencode")
NOTE_KINDS = ("fact", "decision", "observation", "evidence", "constraint")
PRIORITY_WEIGHTS = (("P0", 5), ("P1", 20), ("P2", 50), ("P3", 25))
SEARCH_QUERIES = ("retry payments", "deploy gateway", "rate limit", "schema migration worker", "cache api")
# phrases the seeded handoff objectives contain, so the substring path times real hits
HANDOFF_QUERIES = ("retry path", "connection pool", "rate limit", "cache layer", "webhook handler")


# ---------------------------------------------------------------------------------------
# Seeding


def _ts(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class Seed:
    """What a seeded home holds, so commands can pick valid arguments."""

    def __init__(self, home, n):
        self.home = home
        self.n = n
        self.ids = []          # every seeded task id, oldest first
        self.roots = []        # tasks without prerequisites (dispatchable)
        self.reserved = []     # deferred roots kept out of `next` for claim/heartbeat/complete
        self.edges = 0
        self.events = 0
        self.notes = 0
        self.handoffs = 0
        self.seconds = 0.0


def _pick_priority(rng):
    roll = rng.randrange(100)
    for name, weight in PRIORITY_WEIGHTS:
        if roll < weight:
            return name
        roll -= weight
    return "P3"


def _title(rng):
    return f"{rng.choice(VERBS)} {rng.choice(OBJECTS)} in {rng.choice(AREAS)} service"


_DOMAIN_WORDS = tuple(w for phrase in OBJECTS + AREAS for w in phrase.split()) + (
    "deploy", "window", "tests", "flaky", "latency", "timeout", "rollback", "replica")


def _vocabulary(size=3000):
    """A fixed vocabulary of pronounceable filler words with Zipf weights (real text is Zipfian)."""
    rng = random.Random(3)
    onsets, vowels, codas = "bcdfghjklmnprstvwz", "aeiou", ("", "n", "r", "s", "t", "l", "nd", "st")
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(rng.randint(1, 3)))
                  + rng.choice(codas))
    ordered = sorted(words)
    rng.shuffle(ordered)
    weights, total = [], 0.0
    for rank in range(1, size + 1):
        total += 1.0 / rank
        weights.append(total)
    return tuple(ordered), weights


_FILLER, _FILLER_WEIGHTS = _vocabulary()


def _sentence(rng, words=12):
    """Free text: Zipfian filler with a domain word about one word in six (searches stay selective)."""
    filler = rng.choices(_FILLER, cum_weights=_FILLER_WEIGHTS, k=words)
    out = [rng.choice(_DOMAIN_WORDS) if rng.random() < 0.16 else word for word in filler]
    return " ".join(out).capitalize() + "."


def seed_tasks(home, n, *, seed=7, dag=True, reserve=0, projects=20, days=60):
    """Seed ``n`` queued tasks into a fresh ``home``; return a :class:`Seed`.

    Tasks are created oldest first across ``days`` days; with ``dag`` about 55% of them
    depend on 1-3 earlier tasks from the previous 200 (edges only point backwards, so the
    graph is acyclic by construction).  ``reserve`` extra prerequisite-free tasks are
    deferred a year so ``next`` never picks them; explicit claims may still take them.
    """
    rng = random.Random(seed)
    info = Seed(home, n)
    started = time.perf_counter()
    conn = db.connect(home)
    now = clock.now().replace(tzinfo=timezone.utc)
    start = now - timedelta(days=days)
    step = timedelta(days=days) / max(n + reserve, 1)
    deferred_until = _ts(now + timedelta(days=365))
    project_names = [f"proj-{i:02d}" for i in range(projects)]
    used = set()
    try:
        with db.write(conn):
            for index in range(n + reserve):
                while True:
                    task_id = f"t-{rng.getrandbits(32):08x}"
                    if task_id not in used:
                        used.add(task_id)
                        break
                created = start + step * index
                created_at = _ts(created)
                clock.set_now(created)
                # Zipf-ish: a few busy projects, a long tail of quiet ones
                project = project_names[min(int(rng.paretovariate(1.2)) - 1, projects - 1)]
                reserved = index >= n
                priority = "P2" if reserved else _pick_priority(rng)
                tags = sorted(set(rng.sample(TAGS, rng.randrange(4))))
                due = _ts(created + timedelta(days=rng.randrange(1, 90))) if rng.random() < 0.15 else None
                not_before = deferred_until if reserved else None
                deps = []
                if dag and not reserved and index and rng.random() < 0.55:
                    window = info.ids[max(0, index - 200):index]
                    deps = sorted(set(rng.sample(window, min(len(window), rng.randint(1, 3)))))
                title = _title(rng)
                conn.execute(
                    "INSERT INTO tasks(id, project, title, description, priority, next_action, tags, due_at,"
                    " not_before, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (task_id, project, title, _sentence(rng), priority, rng.choice(NEXT_ACTIONS),
                     json.dumps(tags), due, not_before, created_at, created_at),
                )
                if deps:
                    conn.executemany(
                        "INSERT INTO dependencies(task_id, depends_on, created_at) VALUES (?, ?, ?)",
                        [(task_id, dep, created_at) for dep in deps],
                    )
                    info.edges += len(deps)
                payload = {"project": project, "title": title, "priority": priority, "tags": tags,
                           "depends_on": deps}
                if due:
                    payload["due_at"] = due
                if not_before:
                    payload["not_before"] = not_before
                ledger.append_event(conn, "task", task_id, "created", payload)
                info.events += 1
                if reserved:
                    info.reserved.append(task_id)
                else:
                    info.ids.append(task_id)
                    if not deps:
                        info.roots.append(task_id)
    finally:
        clock.set_now(None)
        conn.close()
    info.seconds = time.perf_counter() - started
    return info


def seed_ledger(home, events, *, seed=11):
    """Append ``events`` audit events to a fresh ``home`` (for verification throughput)."""
    rng = random.Random(seed)
    conn = db.connect(home)
    try:
        with db.write(conn):
            for index in range(events):
                entity = f"t-{index % 5000:08x}"
                ledger.append_event(conn, "task", entity, "heartbeat",
                                {"owner": rng.choice(AGENTS), "note": _sentence(rng, 6), "n": index})
    finally:
        conn.close()


def seed_memory(info, notes, handoffs, *, seed=13):
    """Add ``notes`` live notes and ``handoffs`` live handoffs over the seeded tasks.

    Rows and audit events have the shapes ``note`` and ``handoff`` write (``note_added``,
    ``handoff_recorded`` with the same canonical payload hash), minus the per-row secret
    scan and near-duplicate check, which are what make 50k individual calls slow.
    """
    rng = random.Random(seed)
    from mindos.core.canonical import canonical_json, sha256_hex

    conn = db.connect(info.home)
    started = time.perf_counter()
    now = clock.now_iso()
    try:
        with db.write(conn):
            for _ in range(notes):
                task_id = rng.choice(info.ids)
                kind = rng.choice(NOTE_KINDS)
                source = rng.choice(AGENTS)
                pinned = rng.random() < 0.05
                cursor = conn.execute(
                    "INSERT INTO notes(task_id, kind, content, source, pinned, created_at) VALUES (?,?,?,?,?,?)",
                    (task_id, kind, _sentence(rng, rng.randint(8, 30)), source, int(pinned), now),
                )
                ledger.append_event(conn, "note", task_id, "note_added",
                                {"note_id": cursor.lastrowid, "kind": kind, "source": source, "pinned": pinned})
                info.notes += 1
            for task_id in rng.sample(info.ids, min(handoffs, len(info.ids))):
                fields = {
                    "from_agent": rng.choice(AGENTS), "to_agent": rng.choice(AGENTS), "recall_digest": "",
                    "status": "running", "objective": f"{_title(rng)}, then {rng.choice(NEXT_ACTIONS) or 'report'}",
                    "commit_ref": f"{rng.getrandbits(28):07x}", "evidence": [_sentence(rng, 5)], "constraints": [],
                    "decisions": [_sentence(rng, 6)], "files": [f"src/{rng.choice(AREAS)}.py"],
                    "next_actions": [rng.choice(NEXT_ACTIONS) or "open PR"], "risks": [],
                }
                payload_hash = sha256_hex(canonical_json({"task_id": task_id, **fields}))
                cursor = conn.execute(
                    "INSERT INTO handoffs(task_id, from_agent, to_agent, status, objective, evidence, constraints,"
                    " decisions, files, commit_ref, next_actions, risks, payload_hash, created_at)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (task_id, fields["from_agent"], fields["to_agent"], fields["status"], fields["objective"],
                     *(json.dumps(fields[k]) for k in ("evidence", "constraints", "decisions", "files")),
                     fields["commit_ref"], json.dumps(fields["next_actions"]), json.dumps(fields["risks"]),
                     payload_hash, now),
                )
                ledger.append_event(conn, "handoff", task_id, "handoff_recorded",
                                {"handoff_id": cursor.lastrowid, "from_agent": fields["from_agent"],
                                 "to_agent": fields["to_agent"], "status": fields["status"],
                                 "payload_hash": payload_hash, "supersedes": None})
                info.handoffs += 1
        info.events += info.notes + info.handoffs
    finally:
        conn.close()
    return time.perf_counter() - started


# ---------------------------------------------------------------------------------------
# Timing


def registered_commands():
    """The command names the autopilot front door currently routes."""
    from mindos.cli import doors

    return set(doors.commands(doors.AUTOPILOT))


def startup_hooks():
    """The .pth files of this interpreter's site directories that run code at every start
    (their ``import`` lines): what a clean interpreter leaves out."""
    import site

    found = []
    for directory in [*site.getsitepackages(), site.getusersitepackages()]:
        try:
            names = sorted(name for name in os.listdir(directory) if name.endswith(".pth"))
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as handle:
                    if any(line.startswith(("import ", "import\t")) for line in handle):
                        found.append(os.path.join(directory, name))
            except OSError:
                continue
    return found


def clean_interpreter(where):
    """A clean copy of this interpreter: a venv made under ``where`` without pip and without
    the system site-packages, so its start runs no .pth hooks of this machine's packages.

    A hook there (a sandbox's certificate injection, a coverage or debugger shim) runs in
    the baseline and every command alike and can import dozens of modules on its own: on
    the machine these figures were first taken on, one added about 40 ms to every start.
    That inflates the baseline, hides what a command imports that the hook already loaded,
    and flatters every ratio.  MindOS needs nothing outside the standard library."""
    path = os.path.join(where, "clean-python")
    proc = subprocess.run([sys.executable, "-m", "venv", "--without-pip", path], capture_output=True, text=True)
    python = os.path.join(path, "bin", "python3")
    if proc.returncode != 0 or not os.path.exists(python):
        reason = (proc.stderr.strip().splitlines() or ["no interpreter was made"])[-1]
        raise SystemExit(f"bench: cannot make a clean interpreter ({reason}); run with --interpreter current")
    return python


def add_interpreter_flag(parser):
    """``--interpreter clean|current``: what every bench runs its timed processes on."""
    parser.add_argument("--interpreter", choices=("clean", "current"), default="clean",
                        help="run the timed processes on a clean venv of this interpreter (default: no .pth"
                             " startup hooks of installed packages; see clean_interpreter) or on this"
                             " interpreter as it is")


def interpreter(mode, where):
    """The interpreter for ``--interpreter mode``: a clean venv made under ``where``, or this one."""
    return clean_interpreter(where) if mode == "clean" else sys.executable


def _env(home):
    env = dict(os.environ)
    env["HERMES_AUTOPILOT_HOME"] = home
    env.pop("MINDOS_NOW", None)
    return env


def _run(argv, env):
    """``(wall ms, process)`` of one run of ``argv``."""
    wall_ms, _, proc = _run_timed(argv, env)
    return wall_ms, proc


def _run_timed(argv, env):
    """``(wall ms, CPU ms, process)``: the CPU time (user + system) is the child's own, from
    the rusage of reaped children (the bench runs one child at a time); unlike the wall time
    it leaves out waits on the disk (a write command's fsync) and on other processes."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall_ms = (time.perf_counter() - started) * 1000.0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_ms = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000.0
    return wall_ms, cpu_ms, proc


def _error(label, argv, proc):
    return {"command": label, "argv": argv, "exit": proc.returncode,
            "stderr": proc.stderr.strip().splitlines()[-1:] or [""]}


def _stats(samples, sizes):
    return {"median_ms": round(statistics.median(samples), 2), "min_ms": round(min(samples), 2),
            "max_ms": round(max(samples), 2), "samples": len(samples),
            "stdout_bytes_median": int(statistics.median(sizes))}


class Bench:
    """Interleaved command/baseline timing against one home."""

    def __init__(self, home, reps):
        self.env = _env(home)
        self.reps = reps
        self.baseline = [PYTHON, "-c", BASELINE_CODE]

    def time_commands(self, specs):
        """Time ``specs`` (label, argv-maker) interleaved with the baseline; return results."""
        results, errors = {}, []
        live = []
        for label, make in specs:
            argv = make(-1)  # warm-up call (not timed): fills the page cache, proves the command works
            _, proc = _run([PYTHON, AUTOPILOT, *argv], self.env)
            if proc.returncode != 0:
                errors.append(_error(label, argv, proc))
                continue
            live.append((label, make))
        samples = {label: ([], [], [], [], []) for label, _ in live}
        for rep in range(self.reps):
            for label, make in live:
                base_ms, base_cpu, _ = _run_timed(self.baseline, self.env)
                argv = make(rep)
                cmd_ms, cmd_cpu, proc = _run_timed([PYTHON, AUTOPILOT, *argv], self.env)
                if proc.returncode != 0:
                    errors.append(_error(label, argv, proc))
                    continue
                for column, value in enumerate((cmd_ms, base_ms, len(proc.stdout.encode("utf-8")), cmd_cpu, base_cpu)):
                    samples[label][column].append(value)
        all_base = []
        for label, (cmd, base, sizes, cmd_cpu, base_cpu) in samples.items():
            if not cmd:
                continue
            all_base.extend(base)
            entry = _stats(cmd, sizes)
            entry["baseline_median_ms"] = round(statistics.median(base), 2)
            entry["ratio"] = round(statistics.median(cmd) / statistics.median(base), 3)
            entry["cpu_median_ms"] = round(statistics.median(cmd_cpu), 2)
            entry["baseline_cpu_median_ms"] = round(statistics.median(base_cpu), 2)
            entry["cpu_ratio"] = round(statistics.median(cmd_cpu) / max(statistics.median(base_cpu), 1e-6), 3)
            results[label] = entry
        baseline = round(statistics.median(all_base), 2) if all_base else None
        return results, baseline, errors


def _available(specs, registered):
    live, skipped = [], {}
    for label, needs, make in specs:
        if needs in registered:
            live.append((label, make))
        else:
            skipped[label] = f"'{needs}' is not registered in autopilot.py"
    return live, skipped


def task_specs(info, run_id):
    """(label, command name, argv maker) for the registry and dispatch commands."""
    ids, reserved = info.ids, info.reserved
    n = len(ids)

    def spread(rep, pool):
        return pool[(rep * 7919 + 13) % len(pool)]

    def dep_pair(rep):
        later = (rep * 104729 + n // 2) % n
        later = max(later, 1)
        earlier = (later * 31 + rep) % later
        return ids[later], ids[earlier]

    def reserved_task(rep):
        return reserved[rep + 1]  # rep -1 is the warm-up

    return [
        ("show", "show", lambda rep: ["show", spread(rep, ids)]),
        ("create", "create", lambda rep: ["create", "--project", "bench", "--title",
                                          f"Bench task {run_id} {rep}", "--priority", "P3", "--tag", "bench"]),
        ("tag", "tag", lambda rep: ["tag", spread(rep, ids), "--tag", f"bench:{run_id}-{rep + 1}"]),
        ("dep", "dep", lambda rep: ["dep", *dep_pair(rep)]),
        ("search --rank", "search", lambda rep: ["search", SEARCH_QUERIES[rep % len(SEARCH_QUERIES)], "--rank"]),
        ("list --limit 20", "list", lambda rep: ["list", "--limit", "20"]),
        ("verify-chain", "verify-chain", lambda rep: ["verify-chain"]),
        ("next", "next", lambda rep: ["next"]),
        ("next --claim", "next", lambda rep: ["next", "--claim", "--owner", f"bench-next-{rep + 1}"]),
        ("claim", "claim", lambda rep: ["claim", reserved_task(rep), "--owner", "bench", "--minutes", "30"]),
        ("heartbeat", "heartbeat", lambda rep: ["heartbeat", reserved_task(rep), "--owner", "bench",
                                                "--note", "still going"]),
        ("complete", "complete", lambda rep: ["complete", reserved_task(rep), "--owner", "bench",
                                              "--note", "bench done"]),
    ]


def memory_specs(info, run_id):
    ids = info.ids

    def spread(rep):
        return ids[(rep * 7919 + 101) % len(ids)]

    return [
        ("note", "note", lambda rep: ["note", spread(rep), "--kind", "observation", "--source", "bench",
                                      "--content", f"Bench observation {run_id}-{rep + 1}: latency is steady"]),
        ("context --budget 4000 --related 5", "context",
         lambda rep: ["context", spread(rep), "--budget", "4000", "--related", "5"]),
        ("search-notes --rank", "search-notes",
         lambda rep: ["search-notes", SEARCH_QUERIES[rep % len(SEARCH_QUERIES)], "--rank"]),
        ("search-handoffs", "search-handoffs",
         lambda rep: ["search-handoffs", HANDOFF_QUERIES[rep % len(HANDOFF_QUERIES)]]),
        ("search-handoffs --rank", "search-handoffs",
         lambda rep: ["search-handoffs", HANDOFF_QUERIES[rep % len(HANDOFF_QUERIES)], "--rank"]),
    ]


def _wanted(specs, commands):
    if not commands:
        return specs
    return [spec for spec in specs if spec[0] in commands]


def bench_size(workdir, n, reps, registered, commands):
    """Seed a home of ``n`` tasks and time the task + dispatch commands against it."""
    home = os.path.join(workdir, f"home-{n}")
    info = seed_tasks(home, n, reserve=reps + 1)
    specs = _wanted(task_specs(info, f"n{n}"), commands)
    live, skipped = _available(specs, registered)
    results, baseline, errors = Bench(home, reps).time_commands(live)
    shutil.rmtree(home, ignore_errors=True)
    return {
        "tasks": n, "dependency_edges": info.edges, "roots": len(info.roots), "seeded_events": info.events,
        "seed_seconds": round(info.seconds, 2), "baseline_median_ms": baseline, "commands": results,
        "skipped": skipped,
    }, errors


def bench_ledger(workdir, events):
    """In-process verify_chain throughput over ``events`` seeded events."""
    from mindos.store import ledger

    home = os.path.join(workdir, "home-ledger")
    started = time.perf_counter()
    seed_ledger(home, events)
    seed_seconds = time.perf_counter() - started
    conn = db.connect(home)
    try:
        started = time.perf_counter()
        report = ledger.verify_chain(conn)
        seconds = time.perf_counter() - started
    finally:
        conn.close()
    shutil.rmtree(home, ignore_errors=True)
    return {
        "events": report["events"], "ok": report["ok"], "seed_seconds": round(seed_seconds, 2),
        "verify_seconds": round(seconds, 3), "events_per_second": int(report["events"] / seconds) if seconds else None,
    }


def lease_tally(home):
    """``(tasks leased, claims audited)`` of a raced home, which is then removed: a race
    is sound when every claim is one audited lease."""
    conn = sqlite3.connect(db.database_path(home))
    try:
        leased = conn.execute("SELECT count(*) FROM tasks WHERE lease_owner <> ''").fetchone()[0]
        audited = conn.execute("SELECT count(*) FROM audit_events WHERE action = 'claimed'").fetchone()[0]
    finally:
        conn.close()
    shutil.rmtree(home, ignore_errors=True)
    return leased, audited


def _fan_out(processes, calls_each, argv_for, env):
    """Run ``processes`` threads, each making ``calls_each`` sequential calls of
    ``argv_for(index)``; return ``(wall_seconds, [(index, ms, proc), ...])``."""
    done, lock = [], threading.Lock()

    def worker(index):
        for _ in range(calls_each):
            ms, proc = _run(argv_for(index), env)
            with lock:
                done.append((index, ms, proc))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(processes)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, done


def bench_concurrency(workdir, processes, claims_each, registered):
    """``processes`` dispatchers each doing ``claims_each`` sequential ``next --claim``.

    The same fan-out of the bare baseline, half before and half after, gives the throughput
    the machine allows for that many process starts; their ratio shows what the shared write
    lock costs on top.
    """
    if "next" not in registered:
        return {"skipped": "'next' is not registered in autopilot.py"}, []
    home = os.path.join(workdir, "home-pool")
    pool = processes * claims_each + max(20, processes * claims_each // 4)
    seed_tasks(home, pool, dag=False)
    env = _env(home)
    baseline = [PYTHON, "-c", BASELINE_CODE]
    half = max(1, claims_each // 2)
    base_wall, base_calls = _fan_out(processes, half, lambda i: baseline, env)
    wall, calls = _fan_out(processes, claims_each,
                           lambda i: [PYTHON, AUTOPILOT, "next", "--claim", "--owner", f"worker-{i}"], env)
    more_wall, more_calls = _fan_out(processes, half, lambda i: baseline, env)
    base_wall, base_calls = base_wall + more_wall, base_calls + more_calls
    claimed, errors = {}, []
    for index, _, proc in calls:
        if proc.returncode != 0:
            errors.append(_error("next --claim (concurrent)", proc.args[2:], proc))
            continue
        task_id = _picked_id(proc.stdout)
        if task_id:
            claimed.setdefault(task_id, []).append(f"worker-{index}")
    leased, audited = lease_tally(home)
    total = sum(len(owners) for owners in claimed.values())
    ms = sorted(call[1] for call in calls)
    throughput = total / wall if wall else None
    base_throughput = len(base_calls) / base_wall if base_wall else None
    return {
        "processes": processes, "claims_per_process": claims_each, "pool_tasks": pool,
        "claims": total, "distinct_tasks": len(claimed), "leased_rows": leased, "claimed_events": audited,
        "double_claims": sorted(t for t, owners in claimed.items() if len(owners) > 1),
        "wall_seconds": round(wall, 2), "claims_per_second": round(throughput, 1) if throughput else None,
        "call_median_ms": round(statistics.median(ms), 1) if ms else None,
        "call_p95_ms": round(ms[int(len(ms) * 0.95)], 1) if ms else None,
        "baseline_calls_per_second": round(base_throughput, 1) if base_throughput else None,
        "ratio": round(base_throughput / throughput, 3) if throughput and base_throughput else None,
    }, errors


def _picked_id(stdout):
    """The task id a ``next --claim`` response names (None when the queue was empty)."""
    try:
        data = json.loads(stdout)
    except ValueError:
        return None
    task = data.get("task") if isinstance(data, dict) else None
    if isinstance(task, dict):
        return task.get("id")
    return task if isinstance(task, str) else None


def bench_memory(workdir, tasks, notes, handoffs, reps, registered, commands):
    """Time the shared-memory commands over a home with many notes and handoffs."""
    home = os.path.join(workdir, "home-memory")
    info = seed_tasks(home, tasks)
    memory_seconds = seed_memory(info, notes, handoffs)
    specs = _wanted(memory_specs(info, "mem"), commands)
    live, skipped = _available(specs, registered)
    results, baseline, errors = Bench(home, reps).time_commands(live)
    shutil.rmtree(home, ignore_errors=True)
    return {
        "tasks": tasks, "notes": info.notes, "handoffs": info.handoffs,
        "seed_seconds": round(info.seconds + memory_seconds, 2), "baseline_median_ms": baseline,
        "commands": results, "skipped": skipped,
    }, errors


RECALL_FLAGS = ("--budget", "8000", "--related", "5", "--related-handoffs", "3", "--dep-context", "3",
                "--related-facts", "5", "--related-semantic", "5", "--rerank")
MEMORY_QUERIES = ("retry path payments", "db connection pool", "k8s deploy gateway", "rate limit api",
                  "cache layer timeout")


def seed_recall(info, memories, facts, cited, *, seed=17):
    """Add ``memories`` memories, ``facts`` facts, complete a fifth of the tasks (with their
    prerequisite edges intact) and make ``cited`` live handoffs cite a real audited recall.

    Memory and fact rows get the events memory-retain / fact-assert write; the cited recalls
    go through the real ``recall`` core (so their digests and parameters are genuine).
    Returns ``(seconds, cited task ids)``.
    """
    rng = random.Random(seed)
    from mindos.core.canonical import canonical_json
    from mindos.memory import memories as memory_store

    conn = db.connect(info.home)
    started = time.perf_counter()
    now = clock.now_iso()
    projects = sorted({row[0] for row in conn.execute("SELECT DISTINCT project FROM tasks")})
    try:
        with db.write(conn):
            for n in range(memories):
                project = rng.choice(projects) if rng.random() < 0.8 else ""
                text = f"{_sentence(rng, rng.randint(6, 20))} ({n})"
                mid = memory_store.memory_id(project, text)
                conn.execute("INSERT INTO memories(id, project, kind, content, tags, source, engine, created_at)"
                             " VALUES (?, ?, 'fact', ?, '[]', 'bench', ?, ?)",
                             (mid, project, text, memory_store.ENGINE, now))
                ledger.append_event(conn, "memory", mid, "memory_retained",
                                {"project": project, "kind": "fact", "tags": [], "source": "bench",
                                 "chars": len(text), "engine": memory_store.ENGINE})
            for n in range(facts):
                subject = f"{rng.choice(AREAS)}-{rng.choice(_DOMAIN_WORDS)}".lower()
                predicate = rng.choice(("uses", "reads", "writes-to", "owned-by", "depends-on"))
                obj = f"{rng.choice(_DOMAIN_WORDS)}-{n}".lower()
                cursor = conn.execute("INSERT INTO facts(subject, predicate, object, source, valid_from, created_at)"
                                      " VALUES (?, ?, ?, 'bench', ?, ?)", (subject, predicate, obj, now, now))
                ledger.append_event(conn, "fact", str(cursor.lastrowid), "fact_asserted",
                                {"subject": subject, "predicate": predicate, "object": obj, "source": "bench"})
            done = rng.sample(info.ids, len(info.ids) // 5)
            conn.execute("UPDATE tasks SET status = 'completed' WHERE id IN (SELECT value FROM json_each(?))",
                         (canonical_json(done),))
            for task_id in done:
                ledger.append_event(conn, "task", task_id, "completed", {"owner": "bench"})
        info.events += memories + facts + len(done)
        rows = conn.execute("SELECT h.task_id FROM handoffs h JOIN tasks t ON t.id = h.task_id"
                            " WHERE h.superseded_by IS NULL AND t.status <> 'completed' ORDER BY h.id LIMIT ?",
                            (cited,)).fetchall()
        cited_ids = [task_id for (task_id,) in rows]
        cite(conn, cited_ids, ALL_SECTIONS)
        info.events += len(cited_ids)
    finally:
        conn.close()
    return time.perf_counter() - started, cited_ids


ALL_SECTIONS = dict(budget=8000, related=5, related_handoffs=3, dep_context=3, related_facts=5,
                    related_semantic=5, rerank=True)
LEGACY_SECTIONS = dict(budget=8000, related=5)


def cite(conn, task_ids, sections):
    """Recall each task (audited, through the real core), then record a handoff on it citing
    the recall's core digest, the way an agent does (audited too, so later handoffs move other
    tasks' related sections exactly as in a live fleet)."""
    from mindos.context import recall
    from mindos.memory import handoffs

    params = recall.make_params(**sections)
    for task_id in task_ids:
        sealed = recall.recall(conn, task_id, agent="bench", params=params)
        handoffs.record(conn, task_id, from_agent="bench", to_agent="codex", status="running",
                        objective=f"continue {task_id} from the recalled context", next_actions=["verify"],
                        recall_digest=sealed["core_digest"])


def time_recall_stale(home, reps, errors):
    """Median wall time of ``ops.py recall-stale`` and of ``recall-stale --recompute`` (a few
    runs each), with the verdict counts and how many items the ledger proved unchanged."""
    env, result = _env(home), {}
    for label, extra in (("default", []), ("recompute", ["--recompute"])):
        runs, entry = [], {}
        for _ in range(max(1, min(reps, 2))):
            ms, proc = _run([PYTHON, OPS, "recall-stale", *extra], env)
            if proc.returncode not in (0, 1):
                errors.append(_error("recall-stale", ["recall-stale", *extra], proc))
                break
            runs.append(ms)
            report = json.loads(proc.stdout)
            entry.update(checked=report["checked"], counts=report["counts"],
                         proven_by_ledger=sum(item.get("checked_by") == "ledger" for item in report["items"]))
        if runs:
            entry["median_seconds"] = round(statistics.median(runs) / 1000, 3)
        result[label] = entry
    return result


def tick_and_trickle(info, errors, cited, *, notes=20, others=5, seed=19):
    """Bring the recall home to the state cron keeps a lived-in home in: one real nanny tick
    (``ops.py nanny``, which also merges fragmented full-text indexes), then the writes
    agents make before the next tick (``notes`` notes and ``others`` memories, facts and
    handoffs, each its own transaction through the real core; the handoffs go to tasks no
    ``cited`` handoff is on, so each citation stays live).  Returns the tick's
    ``index_upkeep`` and the segments each index is left with."""
    from mindos.memory import facts as fact_store, handoffs, memories as memory_store, notes as note_store
    from mindos.store import fts

    proc = subprocess.run([PYTHON, OPS, "nanny"], env=_env(info.home), capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        errors.append(_error("nanny", ["nanny"], proc))
        return {}
    upkeep = json.loads(proc.stdout).get("index_upkeep", [])
    rng = random.Random(seed)
    conn = db.connect(info.home)
    try:
        for n in range(notes):
            note_store.add(conn, rng.choice(info.ids), content=f"{_sentence(rng)} (fresh {n})")
        uncited = sorted(set(info.ids) - set(cited))
        for n in range(others):
            task_id = rng.choice(uncited)
            memory_store.retain(conn, f"{_sentence(rng)} (fresh {n})", source="bench")
            fact_store.assert_fact(conn, subject=f"fresh-{n}", predicate="uses", obj=rng.choice(_DOMAIN_WORDS).lower(),
                                   source="bench")
            handoffs.record(conn, task_id, from_agent="bench", to_agent="codex", status="running",
                            objective=f"{_sentence(rng, 8)} (fresh {n})")
        segments = {name: fts.segments(conn, name) for name in ("notes_fts", "handoffs_fts", "facts_fts", "memories_fts")}
    finally:
        conn.close()
    info.notes += notes
    info.events += notes + 3 * others
    return {"index_upkeep": upkeep, "fresh_writes": notes + 3 * others, "segments_after_fresh_writes": segments}


def recall_specs(info, cited):
    ids = info.ids

    def spread(rep):
        return ids[(rep * 7919 + 101) % len(ids)]

    def digest_for(task_id):
        conn = db.connect(info.home)
        try:
            from mindos.context import recall

            return recall.bundle(conn, task_id, "bench", recall.make_params(**ALL_SECTIONS))["digest"]
        finally:
            conn.close()

    verify_task = cited[0] if cited else ids[0]
    verify_digest = digest_for(verify_task)
    return [
        ("recall --related 5 (legacy sections)", "recall",
         lambda rep: ["recall", spread(rep), "--agent", "bench", "--budget", "8000", "--related", "5"]),
        ("recall (all sections)", "recall", lambda rep: ["recall", spread(rep), "--agent", "bench", *RECALL_FLAGS]),
        ("recall-verify (all sections)", "recall-verify",
         lambda rep: ["recall-verify", verify_task, "--digest", verify_digest, "--agent", "bench", *RECALL_FLAGS]),
        ("memory-search", "memory-search",
         lambda rep: ["memory-search", MEMORY_QUERIES[rep % len(MEMORY_QUERIES)], "--limit", "10"]),
        ("memory-search --project", "memory-search",
         lambda rep: ["memory-search", MEMORY_QUERIES[rep % len(MEMORY_QUERIES)], "--project", "proj-00"]),
    ]


def bench_recall(workdir, scale, reps, registered, commands, upkeep=True):
    """Time recall, recall-verify and memory-search over the recall home, and recall-stale.

    The home is first brought to a lived-in state (:func:`tick_and_trickle`) unless
    ``upkeep`` is false: then it is timed as seeded, its indexes as fragmented as the seeding
    left them, as if cron had never run."""
    home = os.path.join(workdir, "home-recall")
    info = seed_tasks(home, scale["memory_tasks"])
    memory_seconds = seed_memory(info, scale["notes"], scale["handoffs"])
    recall_seconds, cited = seed_recall(info, scale["memories"], scale["facts"], scale["cited"])
    errors = []
    lived_in = tick_and_trickle(info, errors, cited) if upkeep else {"index_upkeep": None}
    specs = _wanted(recall_specs(info, cited), commands)
    live, skipped = _available(specs, registered)
    results, baseline, timing_errors = Bench(home, reps).time_commands(live)
    errors.extend(timing_errors)
    stale = {"cited_handoffs": len(cited)}
    if not commands or "recall-stale" in commands:
        # the handoffs first cite recalls made with every section on, then recalls made with
        # the legacy sections only (--related 5): recall-stale recomputes each as recorded
        stale["all_sections"] = time_recall_stale(home, reps, errors)
        conn = db.connect(home)
        try:
            cite(conn, cited, LEGACY_SECTIONS)
        finally:
            conn.close()
        stale["related_5"] = time_recall_stale(home, reps, errors)
    shutil.rmtree(home, ignore_errors=True)
    return {
        "tasks": scale["memory_tasks"], "notes": info.notes, "handoffs": info.handoffs,
        "memories": scale["memories"], "facts": scale["facts"],
        "seed_seconds": round(info.seconds + memory_seconds + recall_seconds, 2), "baseline_median_ms": baseline,
        "commands": results, "skipped": skipped, "recall_stale": stale, "lived_in": lived_in,
    }, errors


# ---------------------------------------------------------------------------------------
# Entry point


def _int_list(values):
    out = []
    for value in values:
        for part in str(value).split(","):
            if part.strip():
                out.append(int(part.replace("_", "").replace("k", "000")))
    return out


def build_parser():
    parser = argparse.ArgumentParser(
        prog="bench/bench.py", description="Time the MindOS front doors as separate processes.",
        epilog="Example:\n  python3 bench/bench.py --sizes 1000 --reps 5",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--sizes", nargs="+", default=[",".join(map(str, DEFAULT_SIZES))],
                        help="task counts to seed (default 1000 10000 100000; commas or spaces)")
    parser.add_argument("--reps", type=int, default=15, help="timed repetitions per command (default 15)")
    parser.add_argument("--commands", help="comma-separated command labels to time (default: all)")
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"comma-separated sections to run (default {','.join(SECTIONS)})")
    parser.add_argument("--ledger-events", type=int,
                        help="events in the verify ledger (default 3 x the largest size, at most 300000)")
    parser.add_argument("--processes", type=int, default=8, help="concurrent next --claim dispatchers (default 8)")
    parser.add_argument("--claims", type=int,
                        help="sequential claims per dispatcher (default largest size / 200, 5..50)")
    parser.add_argument("--memory-tasks", type=int,
                        help="tasks in the memory home (default the largest size, at most 10000)")
    parser.add_argument("--notes", type=int, help="notes in the memory home (default 5 x memory tasks)")
    parser.add_argument("--handoffs", type=int, help="handoffs in the memory home (default memory tasks / 2)")
    parser.add_argument("--memories", type=int, help="memories in the recall home (default memory tasks)")
    parser.add_argument("--facts", type=int, help="facts in the recall home (default memory tasks / 2)")
    parser.add_argument("--cited", type=int,
                        help="live handoffs citing an audited recall in the recall home (default 1000, at most handoffs)")
    parser.add_argument("--out", help="results directory (default bench/results)")
    parser.add_argument("--workdir", help="where to build the throwaway homes (default: a temp dir)")
    parser.add_argument("--no-upkeep", action="store_true",
                        help="time the recall home as seeded, without the nanny tick and the fresh writes after it")
    add_interpreter_flag(parser)
    parser.add_argument("--no-compile", action="store_true",
                        help="skip byte-compiling the package first (timings then include compilation if"
                             " no bytecode is cached)")
    return parser


def run(argv=None):
    """Run the benchmark; return ``(results, exit_code)``."""
    args = build_parser().parse_args(argv)
    try:
        sizes = _int_list(args.sizes)
    except ValueError:
        raise SystemExit("bench: --sizes takes task counts such as 1000 or 10k") from None
    if not sizes or min(sizes) < 10:
        raise SystemExit("bench: every --sizes value must be at least 10")
    sections = {s.strip() for s in args.sections.split(",") if s.strip()}
    unknown = sections - set(SECTIONS)
    if unknown:
        raise SystemExit(f"bench: unknown section(s): {', '.join(sorted(unknown))}")
    commands = {c.strip() for c in args.commands.split(",")} if args.commands else None
    if args.reps < 1:
        raise SystemExit("bench: --reps must be at least 1")
    # The other sections scale with the largest size, so a quick run stays quick and the
    # default run measures the full scale: 300k events, 8 x 50 claims, 10k/50k/5k memory.
    largest = max(sizes) if sizes else DEFAULT_SIZES[-1]
    scale = {
        "ledger_events": args.ledger_events if args.ledger_events is not None else min(300000, 3 * largest),
        "processes": args.processes,
        "claims": args.claims if args.claims is not None else min(50, max(5, largest // 200)),
        "memory_tasks": args.memory_tasks if args.memory_tasks is not None else min(10000, largest),
    }
    scale["notes"] = args.notes if args.notes is not None else 5 * scale["memory_tasks"]
    scale["handoffs"] = args.handoffs if args.handoffs is not None else scale["memory_tasks"] // 2
    scale["memories"] = args.memories if args.memories is not None else scale["memory_tasks"]
    scale["facts"] = args.facts if args.facts is not None else scale["memory_tasks"] // 2
    scale["cited"] = min(args.cited if args.cited is not None else 1000, scale["handoffs"])
    # Cached bytecode for the package, so each process pays what an installed copy pays
    # (PYTHONDONTWRITEBYTECODE may be set, and then nothing would ever be cached).
    if not args.no_compile:
        compileall.compile_dir(os.path.join(ROOT, "mindos"), quiet=1)
    registered = registered_commands()
    results = {
        "meta": {
            "started_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
            "platform": platform.platform(), "cpus": os.cpu_count(), "reps": args.reps,
            "fts5": db.fts5_supported(), "baseline": f'python3 -c "{BASELINE_CODE}"', "scale": scale,
            "interpreter": {"mode": args.interpreter, "startup_hooks": startup_hooks()},
        },
    }
    errors = []
    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="mindos-bench-", dir=args.workdir)
    global PYTHON
    try:
        PYTHON = interpreter(args.interpreter, workdir)
        results["meta"]["interpreter"]["path"] = PYTHON
        if "tasks" in sections:
            results["sizes"] = {}
            for n in sizes:
                results["sizes"][str(n)], errs = bench_size(workdir, n, args.reps, registered, commands)
                errors.extend(errs)
        if "ledger" in sections:
            results["verify_chain"] = bench_ledger(workdir, scale["ledger_events"])
        if "concurrency" in sections:
            results["concurrency"], errs = bench_concurrency(workdir, scale["processes"], scale["claims"],
                                                             registered)
            errors.extend(errs)
        if "memory" in sections:
            results["memory"], errs = bench_memory(workdir, scale["memory_tasks"], scale["notes"], scale["handoffs"],
                                                   args.reps, registered, commands)
            errors.extend(errs)
        if "recall" in sections:
            results["recall"], errs = bench_recall(workdir, scale, args.reps, registered, commands,
                                                   upkeep=not args.no_upkeep)
            errors.extend(errs)
    finally:
        PYTHON = sys.executable  # the clean one goes with the workdir
        shutil.rmtree(workdir, ignore_errors=True)
    results["errors"] = errors
    failed = bool(errors) or bool(results.get("concurrency", {}).get("double_claims"))
    failed = failed or results.get("verify_chain", {}).get("ok") is False
    out_dir = args.out or os.path.join(ROOT, "bench", "results")
    os.makedirs(out_dir, exist_ok=True)
    stamp = results["meta"]["started_at"].replace(":", "").replace("-", "")
    results["meta"]["written_to"] = os.path.join(out_dir, f"bench-{stamp}.json")
    text = json.dumps(results, indent=2, sort_keys=True) + "\n"
    for path in (results["meta"]["written_to"], os.path.join(out_dir, "latest.json")):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    return results, (1 if failed else 0)


def main(argv=None):
    results, code = run(argv)
    sys.stdout.write(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
