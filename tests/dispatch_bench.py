#!/usr/bin/env python3
"""Seed a large dispatch pool and time ``next`` as agents run it (one process per call).

Not collected by pytest (the name does not start with ``test_``); tests import
:func:`seed_pool` for small pools.  The pool is realistic rather than friendly: mixed
priorities (5% P0, 20% P1, 50% P2, 25% P3), creation times spread over ``days`` days (so
aging promotes most old work), 15% with deadlines, 0-3 tags from a small vocabulary, a
Zipf-ish project spread, a dependency DAG (about half the tasks wait on 1-3 of the previous
200, some of them completed), plus some deferred, cooling-down and in-flight tasks.

    python3 tests/dispatch_bench.py --n 100000 --reps 15
    python3 tests/dispatch_bench.py --n 10000 --extra "--project proj-07" --extra "--tag security"

Each timed command runs interleaved with the baseline ``python3 -c "import sqlite3, json,
argparse"``; the report gives medians and the command/baseline ratio, both in wall time and
in child CPU time (user + system), which stays meaningful on a loaded machine.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from mindos import db  # noqa: E402

TAGS = ("autopilot-safe", "infra", "client:trove", "client:acme", "area:api", "area:db", "security", "perf",
        "docs", "backend", "frontend", "oncall")
PRIORITIES = (("P0", 5), ("P1", 20), ("P2", 50), ("P3", 25))


def _ts(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _priority(rng):
    roll = rng.randrange(100)
    for name, weight in PRIORITIES:
        if roll < weight:
            return name
        roll -= weight
    return "P3"


def seed_pool(home, n, *, now, seed=5, days=30, projects=20, dag=True, dated=0.15):
    """Insert ``n`` tasks (mostly queued) into a fresh ``home``; return their ids oldest first.

    ``now`` is an aware datetime: creation times end just before it.  Rows are written with
    SQL in one transaction (the public commands would take minutes at 100k).
    """
    rng = random.Random(seed)
    conn = db.connect(str(home))
    start = now - timedelta(days=days)
    step = timedelta(days=days) / max(n, 1)
    ids, rows, edges = [], [], []
    for index in range(n):
        task_id = f"t-{index:06d}-{rng.getrandbits(16):04x}"
        created = start + step * index
        roll = rng.random()
        status, lease_owner, lease_expires, not_before, recover_after = "queued", "", None, None, None
        if roll < 0.05:
            status = "completed"
        elif roll < 0.07:
            status, lease_owner, lease_expires = "running", "agent-" + str(rng.randrange(4)), _ts(now + timedelta(minutes=20))
        elif roll < 0.09:
            not_before = _ts(now + timedelta(hours=rng.randrange(1, 72)))
        elif roll < 0.10:
            recover_after = _ts(now + timedelta(minutes=rng.randrange(1, 60)))
        project = f"proj-{min(int(rng.paretovariate(1.2)) - 1, projects - 1):02d}"
        tags = sorted(set(rng.sample(TAGS, rng.randrange(4))))
        due = _ts(created + timedelta(days=rng.randrange(1, 60))) if rng.random() < dated else None
        rows.append((task_id, project, f"Task {index}", _priority(rng), status, json.dumps(tags), due, not_before,
                     recover_after, lease_owner, lease_expires, _ts(created), _ts(created)))
        if dag and index and rng.random() < 0.5:
            window = ids[max(0, index - 200):index]
            for dep in sorted(set(rng.sample(window, min(len(window), rng.randint(1, 3))))):
                edges.append((task_id, dep, _ts(created)))
        ids.append(task_id)
    try:
        with db.write(conn):
            conn.executemany(
                "INSERT INTO tasks(id, project, title, priority, status, tags, due_at, not_before, recover_after,"
                " lease_owner, lease_expires_at, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            conn.executemany("INSERT INTO dependencies(task_id, depends_on, created_at) VALUES (?,?,?)", edges)
    finally:
        conn.close()
    return ids


def _time(argv, env):
    """Wall and CPU (user + system of the child) milliseconds of one process, and its result."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = (time.perf_counter() - started) * 1000.0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000.0
    return wall, cpu, proc


def main(argv=None):
    parser = argparse.ArgumentParser(description="Time next / next --claim against a seeded pool.")
    parser.add_argument("--n", type=int, default=100000, help="tasks to seed (default 100000)")
    parser.add_argument("--reps", type=int, default=15, help="timed repetitions (default 15)")
    parser.add_argument("--extra", action="append", default=[], help="extra next flags to time as another case")
    parser.add_argument("--home", help="reuse/keep this home instead of a temp one")
    parser.add_argument("--days", type=float, default=30, help="creation times span this many days (default 30)")
    parser.add_argument("--dated", type=float, default=0.15, help="fraction of tasks with a due_at (default 0.15)")
    args = parser.parse_args(argv)
    home = args.home or tempfile.mkdtemp(prefix="mindos-dispatch-bench-")
    now = datetime.now(timezone.utc).replace(microsecond=0)
    if not os.path.exists(db.database_path(home)):
        started = time.perf_counter()
        seed_pool(home, args.n, now=now, days=args.days, dated=args.dated)
        print(f"seeded {args.n} tasks in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=home)
    env.pop("MINDOS_NOW", None)
    autopilot = os.path.join(ROOT, "autopilot.py")
    cases = [["next"], ["next", "--claim", "--owner", "x"]] + [["next", *extra.split()] for extra in args.extra]
    baseline = [sys.executable, "-c", "import sqlite3, json, argparse"]
    report = {}
    for case in cases:
        _time([sys.executable, autopilot, *case], env)  # warm-up
        cmd_ms, base_ms, cmd_cpu, base_cpu = [], [], [], []
        for _ in range(args.reps):
            wall, cpu, _ = _time(baseline, env)
            base_ms.append(wall)
            base_cpu.append(cpu)
            wall, cpu, proc = _time([sys.executable, autopilot, *case], env)
            if proc.returncode != 0:
                raise SystemExit(f"{' '.join(case)} failed: {proc.stderr.strip()}")
            cmd_ms.append(wall)
            cmd_cpu.append(cpu)
        command, base = statistics.median(cmd_ms), statistics.median(base_ms)
        command_cpu, base_cpu_ms = statistics.median(cmd_cpu), statistics.median(base_cpu)
        report[" ".join(case)] = {
            "median_ms": round(command, 1), "baseline_ms": round(base, 1), "ratio": round(command / base, 2),
            "cpu_ms": round(command_cpu, 1), "baseline_cpu_ms": round(base_cpu_ms, 1),
            "cpu_ratio": round(command_cpu / base_cpu_ms, 2) if base_cpu_ms else None,
        }
    print(json.dumps({"tasks": args.n, "cases": report}, indent=2))
    if not args.home:
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
