#!/usr/bin/env python3
"""The cost curve: what each call and each periodic tick costs as a home grows.

For each size N (default 10k, 100k and 1M tasks) it builds one home and measures, against
the process floor ``python3 -c "import sqlite3, json, argparse"`` run by the same clean
interpreter:

  * **Agent calls** (one process each, the way agents shell out): show, list, claim, next,
    create, note, next --claim, context --related 5, memory-search, recall --related 5,
    search, search --rank, prime, and an idle ``mood_poller.py tick``.  Each gets an instruction count
    (valgrind callgrind, bytecode caches warm) divided by the floor's, and a wall-time ratio
    from interleaved runs (floor, call, floor, call, ...).
  * **Ticks**: the nanny's first tick on the home, one period of ticks with nothing new (the
    rotating whole-home checks each take a turn), one after 1,000 new events: instructions
    up to ``--tick-callgrind-max`` tasks, wall and CPU time above it; then full ``doctor``
    and ``doctor --since-checkpoint`` after 10k new events (wall, peak memory).
  * **Verification**: ``autopilot.py verify-chain`` throughput (events/s, wall).
  * **Backups**: ``snapshot`` and ``snapshot-restore`` into a fresh home, wall time and peak
    resident memory of the process (its own ru_maxrss, read by a small wrapper process).
    Then, in that restored home with every open task cancelled first (in SQL: the
    dependency guard would refuse archiving the DAG's finished prerequisites otherwise),
    ``archive`` of every task, ``archive-check`` and ``archive-restore`` of the file, the same
    way (``--no-archive`` skips them).

How the homes are built
  Through the store's own writers in bulk, as bench.py does (the CLI one call at a time
  would take days at 1M): each task, note, handoff, memory and fact row is inserted with the
  audit event its command writes, appended through ``ledger.append_event`` so the chain
  verifies; filler heartbeat events bring the ledger to ten events per task.  Per N tasks:
  N notes, N/20 handoffs, N/10 memories, N/20 facts, a fifth of the tasks completed, a
  dependency DAG over the rest.  Then one real nanny tick is *not* run: the first tick is
  one of the measurements.  Built homes are kept under ``--workdir`` (``home-N``, with a
  marker file) and reused by later runs when ``--keep`` is given, since a 1M home takes a
  while to build.

What is reused between calls
  Agent calls run against one working copy of the built home (made once per size); each
  write adds one row, which moves no other call's cost.  The tick sequence then runs on that
  copy in order (first, idle, after 1,000 events), because each tick's state is the previous
  one's.

Quick run:  python3 bench/scale.py --sizes 10k --reps 3
Full run:   python3 bench/scale.py --workdir /var/tmp/mindos-scale --keep   (the 1M home: ~2 GB)
Results: JSON on stdout and bench/results/scale-latest.json; ``--markdown`` also prints the
README table.
"""

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (ROOT, HERE):
    if path not in sys.path:
        sys.path.insert(0, path)

import bench  # noqa: E402
from mindos.store import db, ledger  # noqa: E402

AUTOPILOT = os.path.join(ROOT, "autopilot.py")
OPS = os.path.join(ROOT, "ops.py")
POLLER = os.path.join(ROOT, "mood_poller.py")
FLOOR = ("-c", bench.BASELINE_CODE)
MARKER = "scale-home.json"
BUILD_VERSION = 2          # bump when the home's recipe changes, so kept homes are rebuilt
RESERVE = 64               # deferred prerequisite-free tasks kept for explicit claims

# Peak resident memory of one child process: the wrapper runs it and reads its rusage.
_PEAK_WRAPPER = ("import resource, subprocess, sys\n"
                 "proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
                 "sys.stderr.write(proc.stderr.decode('utf-8', 'replace'))\n"
                 "print(proc.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")


# ---------------------------------------------------------------------------------------
# Building a home


def recipe(n):
    return {"version": BUILD_VERSION, "tasks": n, "notes": n, "handoffs": max(n // 20, 1),
            "memories": max(n // 10, 1), "facts": max(n // 20, 1), "events": 10 * n, "cited": min(100, n // 100)}


def _counts(home):
    conn = db.connect(home)
    try:
        return {name: conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
                for name in ("tasks", "dependencies", "notes", "handoffs", "memories", "facts", "audit_events")}
    finally:
        conn.close()


def build_home(home, n, log):
    """Seed a fresh ``home`` with the recipe for ``n`` tasks; return its description."""
    want = recipe(n)
    shutil.rmtree(home, ignore_errors=True)
    _door(AUTOPILOT, home, "init")
    started = time.perf_counter()
    info = bench.seed_tasks(home, n, reserve=RESERVE)
    log(f"  {n} tasks in {time.perf_counter() - started:.0f} s")
    bench.seed_memory(info, want["notes"], want["handoffs"])
    log(f"  {want['notes']} notes, {want['handoffs']} handoffs ({time.perf_counter() - started:.0f} s)")
    _, cited = bench.seed_recall(info, want["memories"], want["facts"], want["cited"])
    log(f"  {want['memories']} memories, {want['facts']} facts ({time.perf_counter() - started:.0f} s)")
    have = _counts(home)["audit_events"]
    if want["events"] > have:
        bench.seed_ledger(home, want["events"] - have)
    log(f"  ledger topped up to {want['events']} events ({time.perf_counter() - started:.0f} s)")
    learned = relearn(home)
    log(f"  term associations learned over {learned['rows']} rows ({time.perf_counter() - started:.0f} s)")
    described = {"recipe": want, "ids": info.ids[:: max(len(info.ids) // 2000, 1)], "reserved": info.reserved,
                 "cited": cited, "seconds": round(time.perf_counter() - started, 1), "counts": _counts(home),
                 "bytes": os.path.getsize(os.path.join(home, "state.db"))}
    with open(os.path.join(home, MARKER), "w", encoding="utf-8") as handle:
        json.dump(described, handle)
    return described


def relearn(home):
    """What ``fts-rebuild`` does for the learned term associations, in-process: bulk seeding
    bypasses the writers' incremental learning, and a home left with that backlog would make
    every later write pay a share of it (a lived-in home has none)."""
    from mindos.memory import learned

    conn = db.connect(home)
    try:
        with db.write(conn):
            return learned.rebuild(conn)
    finally:
        conn.close()


def kept_home(home, n):
    """The description of an already built home for ``n`` tasks, or None."""
    try:
        with open(os.path.join(home, MARKER), encoding="utf-8") as handle:
            described = json.load(handle)
    except (OSError, ValueError):
        return None
    return described if described.get("recipe") == recipe(n) else None


# ---------------------------------------------------------------------------------------
# Running and counting


class Runner:
    """Runs a door (or the floor) on one home with the clean interpreter."""

    def __init__(self, python, home, callgrind=True):
        self.python = python
        self.home = home
        self.callgrind = callgrind and shutil.which("valgrind") is not None
        self.env = dict(os.environ, HERMES_AUTOPILOT_HOME=home)
        self.env.pop("MINDOS_NOW", None)
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)   # bytecode caches warm, as agents run it

    def argv(self, door, args):
        return [self.python, *FLOOR] if door is None else [self.python, door, *args]

    def run(self, door, args, ok=(0,)):
        started = time.perf_counter()
        proc = subprocess.run(self.argv(door, args), env=self.env, capture_output=True, text=True)
        ms = (time.perf_counter() - started) * 1000.0
        if proc.returncode not in ok:
            tail = (proc.stderr.strip().splitlines() or [""])[-1]
            raise RuntimeError(f"{os.path.basename(door or 'floor')} {' '.join(args)} exited {proc.returncode}: {tail}")
        return ms, proc

    def instructions(self, door, args, ok=(0,), output=False):
        """Instructions of one run under callgrind (None without valgrind); with ``output``,
        ``(instructions, stdout)``."""
        if not self.callgrind:
            return (None, "") if output else None
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                               *self.argv(door, args)], env=self.env, capture_output=True, text=True)
        if proc.returncode not in ok:
            tail = (proc.stderr.strip().splitlines() or [""])[-1]
            raise RuntimeError(f"callgrind {' '.join(args)} exited {proc.returncode}: {tail}")
        found = re.search(r"Collected\s*:\s*(\d+)", proc.stderr)
        count = int(found.group(1)) if found else None
        return (count, proc.stdout) if output else count

    def cpu(self, door, args, ok=(0,)):
        """``(wall ms, CPU ms, stdout)`` of one run; the CPU time is the child's own (user +
        system, from the rusage of reaped children)."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        ms, proc = self.run(door, args, ok=ok)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000.0
        return ms, cpu, proc.stdout

    def peak(self, door, args, ok=(0,)):
        """``(wall seconds, peak resident MB)`` of one run."""
        started = time.perf_counter()
        proc = subprocess.run([self.python, "-c", _PEAK_WRAPPER, *self.argv(door, args)], env=self.env,
                              capture_output=True, text=True)
        seconds = time.perf_counter() - started
        code, rss_kb = proc.stdout.split()
        if int(code) not in ok:
            tail = (proc.stderr.strip().splitlines() or [""])[-1]
            raise RuntimeError(f"{' '.join(args)} exited {code}: {tail}")
        return round(seconds, 2), round(int(rss_kb) / 1024, 1)


def _door(door, home, *args):
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=home)
    env.pop("MINDOS_NOW", None)
    proc = subprocess.run([sys.executable, door, *args], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{os.path.basename(door)} {' '.join(args)}: {proc.stderr.strip()}")
    return json.loads(proc.stdout) if proc.stdout.strip().startswith(("{", "[")) else proc.stdout


def supports(door, command, flag=None):
    """Whether the installed front door has ``command`` (and ``flag``)."""
    proc = subprocess.run([sys.executable, door, command, "--help"], capture_output=True, text=True)
    return proc.returncode == 0 and (flag is None or flag in proc.stdout)


def agent_calls(described):
    """(label, door, argv maker) of the per-call table; makers take a run number."""
    ids, reserved = described["ids"], iter(described["reserved"])
    queries = bench.SEARCH_QUERIES
    pick = lambda run: ids[(run * 7919 + 13) % len(ids)]  # noqa: E731
    return [
        ("show", AUTOPILOT, lambda run: ["show", pick(run)]),
        ("list --limit 20", AUTOPILOT, lambda run: ["list", "--limit", "20"]),
        ("claim", AUTOPILOT, lambda run: ["claim", next(reserved), "--owner", "scale", "--minutes", "30"]),
        ("next", AUTOPILOT, lambda run: ["next"]),
        ("create", AUTOPILOT, lambda run: ["create", "--project", "scale", "--title", f"Scale task {run}",
                                           "--priority", "P3"]),
        ("note", AUTOPILOT, lambda run: ["note", pick(run), "--kind", "observation", "--source", "scale",
                                         "--content", f"Scale observation {run}: latency is steady"]),
        ("next --claim", AUTOPILOT, lambda run: ["next", "--claim", "--owner", f"scale-{run}"]),
        ("context --related 5", AUTOPILOT, lambda run: ["context", pick(run), "--budget", "4000", "--related", "5"]),
        ("memory-search", AUTOPILOT, lambda run: ["memory-search", bench.MEMORY_QUERIES[run % 5], "--limit", "10"]),
        ("recall --related 5", AUTOPILOT, lambda run: ["recall", pick(run), "--agent", "scale", "--budget", "8000",
                                                       "--related", "5"]),
        ("search", AUTOPILOT, lambda run: ["search", queries[run % len(queries)]]),
        ("search --rank", AUTOPILOT, lambda run: ["search", queries[run % len(queries)], "--rank"]),
        ("prime", AUTOPILOT, lambda run: ["prime", "--agent", "scale", "--format", "json"]),
        ("mood_poller tick (idle)", POLLER, lambda run: ["tick"]),
    ]


def measure_calls(runner, described, reps, only, log):
    floor_instr = runner.instructions(None, [])
    results = {}
    run = 0
    for label, door, make in agent_calls(described):
        if only and label not in only:
            continue
        try:
            runner.run(door, make(run))               # warm-up: page cache, bytecode caches
            run += 1
            instr = runner.instructions(door, make(run))
            run += 1
            walls, floors = [], []
            for _ in range(reps):
                floors.append(runner.run(None, [])[0])
                walls.append(runner.run(door, make(run))[0])
                run += 1
        except (RuntimeError, StopIteration) as exc:
            results[label] = {"error": str(exc) or "ran out of reserved tasks"}
            continue
        entry = {"wall_ms": round(statistics.median(walls), 1),
                 "wall_ratio": round(statistics.median(walls) / statistics.median(floors), 2)}
        if instr and floor_instr:
            entry.update(instructions=instr, ratio=round(instr / floor_instr, 2))
        results[label] = entry
        log(f"    {label}: {entry}")
    return floor_instr, results


def _more_events(home, count, seed):
    """``count`` new audit events the way a working fleet makes them: notes through the core."""
    from mindos.memory import notes as note_store

    rng = random.Random(seed)
    conn = db.connect(home)
    try:
        ids = [row[0] for row in conn.execute("SELECT id FROM tasks WHERE status NOT IN ('completed', 'cancelled')"
                                              " ORDER BY rowid DESC LIMIT 500")]
        with db.write(conn):
            for n in range(count):
                note_store.add(conn, rng.choice(ids), content=f"{bench._sentence(rng)} (tick {seed}-{n})")
    finally:
        conn.close()


def measure_ticks(runner, floor_instr, workdir, log, callgrind_ticks, archive=True):
    """The nanny's ticks (the first, one period of idle ones, one after 1,000 new events),
    the doctor both ways, verification and backups.  A tick is measured either by its
    instructions (``callgrind_ticks``) or by its wall and CPU time, the CPU time also as a
    ratio to the floor's (what machine load inflates least); never both, since each tick
    leaves the home in the next tick's state."""
    home = runner.home
    ticks = {}
    floor_cpu = statistics.median(runner.cpu(None, [])[1] for _ in range(5))

    def tick(label, counted):
        if counted and callgrind_ticks and runner.callgrind:
            instr, out = runner.instructions(OPS, ["nanny"], ok=(0, 1), output=True)
            entry = {"instructions": instr, "ratio": round(instr / floor_instr, 2) if instr and floor_instr else None}
        else:
            wall, cpu, out = runner.cpu(OPS, ["nanny"], ok=(0, 1))
            entry = {"wall_s": round(wall / 1000, 2), "cpu_ratio": round(cpu / floor_cpu, 2)}
        try:
            sweep = json.loads(out).get("sweep") or {}
        except ValueError:
            sweep = {}
        if sweep:
            entry["sweep"] = {key: sweep.get(key) for key in ("mode", "slice", "period_ticks") if key in sweep}
        ticks[label] = entry
        log(f"    {label}: {entry}")
        return sweep

    first = tick("nanny (first tick)", False)
    period = max(1, min(int(first.get("period_ticks") or 1), 8))
    for n in range(period):
        tick(f"nanny (idle, nothing new) {n + 1}/{period}", True)
    _more_events(home, 1000, seed=1)
    tick("nanny (after 1,000 events)", True)

    seconds, rss = runner.peak(OPS, ["doctor"], ok=(0, 1))
    ticks["doctor"] = {"wall_s": seconds, "peak_mb": rss}
    log(f"    doctor: {ticks['doctor']}")
    if supports(OPS, "doctor", "--since-checkpoint"):
        runner.run(OPS, ["checkpoint"], ok=(0,))
        _more_events(home, 10000, seed=3)
        seconds, rss = runner.peak(OPS, ["doctor", "--since-checkpoint"], ok=(0, 1))
        ticks["doctor --since-checkpoint (10k new events)"] = {"wall_s": seconds, "peak_mb": rss}
    else:
        ticks["doctor --since-checkpoint (10k new events)"] = {"skipped": "this version has no --since-checkpoint"}
    log(f"    since-checkpoint: {ticks['doctor --since-checkpoint (10k new events)']}")

    ms, proc = runner.run(AUTOPILOT, ["verify-chain"], ok=(0, 1))
    report = json.loads(proc.stdout)
    ticks["verify-chain"] = {"events": report["events"], "ok": report["ok"], "wall_s": round(ms / 1000, 2),
                             "events_per_s": int(report["events"] / (ms / 1000)) if ms else None}
    log(f"    verify: {ticks['verify-chain']}")

    out = os.path.join(workdir, "scale-snapshot")
    shutil.rmtree(out, ignore_errors=True)
    if os.path.exists(out + ".json"):
        os.unlink(out + ".json")
    target = out if _snapshot_is_directory() else out + ".json"
    seconds, rss = runner.peak(OPS, ["snapshot", "--out", target])
    ticks["snapshot"] = {"wall_s": seconds, "peak_mb": rss, "bytes": _size(target)}
    log(f"    snapshot: {ticks['snapshot']}")
    fresh = os.path.join(workdir, "scale-restored")
    shutil.rmtree(fresh, ignore_errors=True)
    _door(AUTOPILOT, fresh, "init")
    restorer = Runner(runner.python, fresh, callgrind=False)
    seconds, rss = restorer.peak(OPS, ["snapshot-restore", target, "--trust-unsigned"])
    ticks["snapshot-restore (fresh home)"] = {"wall_s": seconds, "peak_mb": rss}
    log(f"    restore: {ticks['snapshot-restore (fresh home)']}")
    if archive and supports(OPS, "archive-check"):
        ticks.update(measure_archive(restorer, workdir, log))
    shutil.rmtree(fresh, ignore_errors=True)
    shutil.rmtree(target, ignore_errors=True) if os.path.isdir(target) else os.unlink(target)
    return ticks


def measure_archive(runner, workdir, log):
    """``archive`` (every task: the open ones are cancelled first, in SQL), ``archive-check``
    and ``archive-restore`` on ``runner``'s home: wall time and peak memory of each."""
    from mindos.store.sql import TERMINAL_SQL

    conn = db.connect(runner.home)
    try:
        with db.write(conn):
            conn.execute(f"UPDATE tasks SET status = 'cancelled' WHERE status NOT IN {TERMINAL_SQL}")
    finally:
        conn.close()
    target = os.path.join(workdir, "scale-archive.tar")
    if os.path.exists(target):
        os.unlink(target)
    measured = {}
    for label, args in (("archive (every task)", ["archive", "--before", "2100-01-01T00:00:00Z", "--out", target]),
                        ("archive-check", ["archive-check", target]),
                        ("archive-restore", ["archive-restore", target])):
        seconds, rss = runner.peak(OPS, args)
        measured[label] = {"wall_s": seconds, "peak_mb": rss}
        if label.startswith("archive ("):
            measured[label]["bytes"] = _size(target)
        log(f"    {label}: {measured[label]}")
    os.unlink(target)
    return measured


def _snapshot_is_directory():
    """Whether this version's snapshot --out names a directory (a streaming snapshot)."""
    proc = subprocess.run([sys.executable, OPS, "snapshot", "--help"], capture_output=True, text=True)
    return "directory" in proc.stdout.split("--out", 1)[-1][:300]


def _size(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(top, name)) for top, _, names in os.walk(path) for name in names)
    return os.path.getsize(path)


# ---------------------------------------------------------------------------------------
# Entry point


def markdown(result):
    sizes = [entry["tasks"] for entry in result["sizes"]]
    labels = []
    for entry in result["sizes"]:
        for label in [*entry["calls"], *entry["ticks"]]:
            if label not in labels:
                labels.append(label)
    head = "| call | " + " | ".join(f"{n:,} tasks" for n in sizes) + " |"
    lines = [head, "|---|" + "---|" * len(sizes)]
    for label in labels:
        cells = []
        for entry in result["sizes"]:
            value = entry["calls"].get(label) or entry["ticks"].get(label) or {}
            parts = []
            if "ratio" in value and value["ratio"] is not None:
                parts.append(f"{value['ratio']}×")
            if "wall_ms" in value:
                parts.append(f"{value['wall_ms']:.0f} ms")
            if "wall_s" in value:
                parts.append(f"{value['wall_s']} s")
            if "cpu_ratio" in value:
                parts.append(f"CPU {value['cpu_ratio']}× floor")
            if "peak_mb" in value:
                parts.append(f"{value['peak_mb']:.0f} MB")
            if "events_per_s" in value:
                parts.append(f"{value['events_per_s']:,} ev/s")
            if "skipped" in value or "error" in value:
                parts.append("n/a")
            cells.append(", ".join(parts) or "–")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _sizes(text):
    out = []
    for part in text.split(","):
        part = part.strip().lower().replace("_", "")
        if part:
            scale = {"k": 1000, "m": 1000000}.get(part[-1], 1)
            out.append(int(float(part.rstrip("km")) * scale))
    return out


def run(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10k,100k,1m", help="home sizes in tasks (default 10k,100k,1m)")
    parser.add_argument("--reps", type=int, default=3, help="interleaved wall-time runs per call (default 3)")
    parser.add_argument("--workdir", help="where homes are built (default: a temp dir, removed afterwards)")
    parser.add_argument("--keep", action="store_true", help="keep built homes under --workdir and reuse them")
    parser.add_argument("--calls", nargs="*", help="only these agent-call labels")
    parser.add_argument("--no-ticks", action="store_true", help="skip ticks, doctor and backups")
    parser.add_argument("--no-calls", action="store_true", help="skip the agent calls (ticks, doctor and backups only)")
    parser.add_argument("--no-callgrind", action="store_true", help="wall times only")
    parser.add_argument("--no-archive", action="store_true", help="skip the archive measurements after the backups")
    parser.add_argument("--tick-callgrind-max", type=int, default=100000,
                        help="count the nanny ticks' instructions up to this home size (default 100000);"
                             " larger homes report their wall and CPU time")
    parser.add_argument("--build-only", action="store_true", help="build (and keep) the homes, measure nothing")
    parser.add_argument("--markdown", action="store_true", help="also print the README table")
    bench.add_interpreter_flag(parser)
    args = parser.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="mindos-scale-")
    os.makedirs(workdir, exist_ok=True)
    log = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    python = bench.interpreter(args.interpreter, workdir)
    result = {"python": sys.version.split()[0], "floor": bench.BASELINE_CODE, "sizes": []}
    try:
        for n in _sizes(args.sizes):
            built = os.path.join(workdir, f"home-{n}")
            described = kept_home(built, n) if args.keep else None
            if described is None:
                log(f"building the {n:,}-task home in {built}")
                described = build_home(built, n, log)
            if args.build_only:
                continue
            work = os.path.join(workdir, f"work-{n}")
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(built, work)
            runner = Runner(python, work, callgrind=not args.no_callgrind)
            log(f"measuring {n:,} tasks")
            floor_instr, calls = measure_calls(runner, described, args.reps, ["none"] if args.no_calls else args.calls,
                                               log)
            ticks = {} if args.no_ticks else measure_ticks(runner, floor_instr, workdir, log,
                                                           callgrind_ticks=n <= args.tick_callgrind_max,
                                                           archive=not args.no_archive)
            result["sizes"].append({"tasks": n, "home": described["counts"], "db_bytes": described["bytes"],
                                    "build_seconds": described["seconds"], "floor_instructions": floor_instr,
                                    "calls": calls, "ticks": ticks})
            shutil.rmtree(work, ignore_errors=True)
            if not args.keep:
                shutil.rmtree(built, ignore_errors=True)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "scale-latest.json"), "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
    print(json.dumps(result, indent=1))
    if args.markdown:
        print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(run())
