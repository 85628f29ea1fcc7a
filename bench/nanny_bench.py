#!/usr/bin/env python3
"""Benchmark the nanny tick the way cron runs it: one ``python3 ops.py nanny`` process.

Two figures, both as separate processes:
  * **Busy home**: ``--tasks`` tasks (default 100k, seeded by ``bench.seed_tasks`` with the
    audit event each creation writes) and a ledger topped up to ``--events`` events
    (default 500k), with work for the tick to find: ``--stale`` expired leases (repaired by
    stale-lease-recover), ``--stalled`` live leases whose progress state is past its stall
    deadline (escalated by stalled-lease-escalate) among ``--live`` live leases still making
    progress, ``--progress-history`` progress records left by earlier leases of completed
    tasks (what a lived-in home accumulates; the stall query must not read them), blocked
    and waiting-for-user tasks, and the overdue tasks the seed produces.  Timed: ``sense``, ``nanny --dry-run``, the first real tick (repairs, findings
    remembered), a second tick (everything carried forward).  Target: each under 10 s.
  * **Idle home**: a fresh home with nothing to do.  ``ops.py nanny`` is timed interleaved
    with the bare baseline ``python3 -c "import sqlite3, json, argparse"`` (the same
    baseline as bench.py); the figure is the ratio of medians.  Target: under 1.5.

  * **Instructions** (``--instructions``, needs valgrind): each tick counted under callgrind
    (bytecode caches warm) against the floor ``python3 -c "import sqlite3, json, argparse"``
    under the same interpreter, on the busy home (or a copy of ``--seeded-home``) and on the
    idle one: the first tick (everything in full), then ``--ticks`` ticks one after another,
    each named by its rotating slice (``receipts`` is the lightest: the idle tick's figure on
    a home with nothing new), and a tick after 1,000 new events.  Targets: the idle tick
    <= 1.5x, every tick after 1,000 new events and every slice tick <= 5x.

Quick run:  python3 bench/nanny_bench.py --tasks 10000 --events 50000 --reps 11
Full run:   python3 bench/nanny_bench.py            (seeding 100k/500k takes a few minutes)
Re-time:    python3 bench/nanny_bench.py --seeded-home /path/to/kept/home   (copies it first)
Counted:    python3 bench/nanny_bench.py --seeded-home /path/to/home --instructions --skip-timing
Results go to stdout as JSON and to bench/results/nanny-latest.json (gitignored).
"""

import argparse
import compileall
import json
import os
import re
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
from mindos.core import clock  # noqa: E402
from mindos.store import db, ledger  # noqa: E402

OPS = os.path.join(ROOT, "ops.py")


def _run(argv, env):
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return (time.perf_counter() - started) * 1000.0, proc


def seed_progress(conn, ids, *, stalled, live, history):
    """Live leases with progress records: ``stalled`` of them past their stall deadline, the
    rest of ``live`` still inside it; ``history`` completed tasks keeping an earlier lease's
    record (its deadline long past).  Taken from the end of ``ids``."""
    now = clock.now_iso()
    expires, changed, recent = clock.shift(now, 4 * 3600), clock.shift(now, -2 * 3600), clock.shift(now, -600)
    row = ("INSERT INTO heartbeats(task_id, owner, note, at, lease_epoch, action, progress_state, progress_changed_at,"
           " stall_minutes, stall_at) VALUES (?, ?, '', ?, ?, 'running the suite', 'tests-running', ?, 30, ?)")
    leased = ids[len(ids) - live:] if live else []
    with db.write(conn):
        for index, task_id in enumerate(leased):
            owner = bench.AGENTS[index % len(bench.AGENTS)]
            since = changed if index < stalled else recent
            conn.execute("UPDATE tasks SET status = 'running', lease_owner = ?, lease_expires_at = ?, lease_epoch = 2,"
                         " blocked_reason = '' WHERE id = ?", (owner, expires, task_id))
            conn.execute(row, (task_id, owner, now, 2, since, clock.shift(since, 1800)))
        for index, task_id in enumerate(ids[len(ids) - live - history:len(ids) - live]):
            conn.execute("UPDATE tasks SET status = 'completed' WHERE id = ?", (task_id,))
            conn.execute(row, (task_id, bench.AGENTS[index % len(bench.AGENTS)], changed, 1, changed,
                               clock.shift(changed, 1800)))


def seed_busy(home, tasks, events, stale, stalled=0, live=0, history=0):
    """Seed the busy home; return seeding facts."""
    started = time.perf_counter()
    info = bench.seed_tasks(home, tasks, dag=False)
    conn = db.connect(home)
    try:
        have = ledger.height(conn)
        with db.write(conn):
            for index in range(max(0, events - have)):
                ledger.append_event(conn, "task", info.ids[index % len(info.ids)], "heartbeat",
                                    {"owner": bench.AGENTS[index % len(bench.AGENTS)], "n": index})
        now = clock.now_iso()
        past = clock.shift(now, -3600)
        with db.write(conn):
            for index, task_id in enumerate(info.ids[:stale]):
                conn.execute("UPDATE tasks SET status = 'running', lease_owner = ?, lease_expires_at = ?,"
                             " lease_epoch = 1 WHERE id = ?", (bench.AGENTS[index % len(bench.AGENTS)], past, task_id))
            for task_id in info.ids[stale:stale + 100]:
                conn.execute("UPDATE tasks SET status = 'blocked', blocked_reason = 'vendor' WHERE id = ?", (task_id,))
            for task_id in info.ids[stale + 100:stale + 120]:
                conn.execute("UPDATE tasks SET status = 'waiting_for_user' WHERE id = ?", (task_id,))
        seed_progress(conn, info.ids, stalled=stalled, live=max(live, stalled), history=history)
        counts = {"tasks": conn.execute("SELECT count(*) FROM tasks").fetchone()[0],
                  "events": ledger.height(conn)}
    finally:
        conn.close()
    return {**counts, "stale_leases": stale, "stalled_leases": stalled, "live_leases": max(live, stalled),
            "progress_history": history, "seed_seconds": round(time.perf_counter() - started, 1)}


def time_busy(home):
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=home)
    env.pop("MINDOS_NOW", None)
    results = {}
    for label, argv in (("sense", ["sense"]), ("nanny_dry_run", ["nanny", "--dry-run"]),
                        ("nanny_first_tick", ["nanny"]), ("nanny_second_tick", ["nanny"])):
        ms, proc = _run([sys.executable, OPS, *argv], env)
        entry = {"seconds": round(ms / 1000.0, 2), "exit": proc.returncode}
        if proc.returncode == 0:
            report = json.loads(proc.stdout)
            if "state" in report:
                entry.update(state=report["state"], repairs=[(r["repair"], r["changed"]) for r in report["repairs"]],
                             new=report["findings"]["new_total"], carried=report["findings"]["carried"],
                             findings_total=report["findings"]["total"])
            else:
                entry.update(findings_total=report["total"], by_kind=report["by_kind"])
        else:
            entry["stderr"] = proc.stderr.strip().splitlines()[-1:]
        results[label] = entry
    return results


def time_idle(workdir, reps, python=sys.executable):
    home = os.path.join(workdir, "idle")
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=home)
    env.pop("MINDOS_NOW", None)
    subprocess.run([sys.executable, os.path.join(ROOT, "autopilot.py"), "init"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    _run([python, OPS, "nanny"], env)  # warm the page cache and write the lock file once
    base, tick = [], []
    for _ in range(reps):
        base.append(_run([python, "-c", bench.BASELINE_CODE], env)[0])
        ms, proc = _run([python, OPS, "nanny"], env)
        if proc.returncode != 0:
            raise SystemExit(f"idle nanny failed: {proc.stderr.strip()}")
        tick.append(ms)
    return {"reps": reps, "baseline_median_ms": round(statistics.median(base), 1),
            "nanny_median_ms": round(statistics.median(tick), 1),
            "ratio": round(statistics.median(tick) / statistics.median(base), 3),
            "state": json.loads(proc.stdout)["state"]}


_COLLECTED = re.compile(r"Collected : (\d+)")


def instructions(argv, env):
    """``(instructions, stdout)`` of one process under callgrind; a tick may exit 1 (a state
    that needs attention), anything else stops the bench."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found = _COLLECTED.search(proc.stderr)
    if proc.returncode not in (0, 1) or not found:
        raise SystemExit(f"nanny_bench: {' '.join(argv[-3:])} failed under valgrind (rc {proc.returncode}):"
                         f" {proc.stderr.strip().splitlines()[-1:]}")
    return int(found.group(1)), proc.stdout


def _counted_env(home):
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=home)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # warm bytecode caches, as an installed copy has
    env.pop("MINDOS_NOW", None)
    return env


def add_events(home, count):
    """``count`` new heartbeat events, as agents write them between two ticks."""
    conn = db.connect(home)
    try:
        ids = [row[0] for row in conn.execute("SELECT id FROM tasks ORDER BY seq DESC LIMIT 100")] or ["t-bench"]
        with db.write(conn):
            for index in range(count):
                ledger.append_event(conn, "task", ids[index % len(ids)], "heartbeat",
                                    {"owner": bench.AGENTS[index % len(bench.AGENTS)], "n": index})
    finally:
        conn.close()


def count_ticks(home, python, ticks, new_events=1000):
    """Instruction ratios of the nanny's ticks on ``home`` (see the module docstring)."""
    env = _counted_env(home)
    floor = statistics.median(instructions([python, "-c", bench.BASELINE_CODE], env)[0] for _ in range(3))

    def tick(label):
        count, out = instructions([python, OPS, "nanny"], env)
        report = json.loads(out)
        sweep = report["sweep"]
        return {"tick": label, "ratio": round(count / floor, 2), "instructions": count, "slice": sweep["slice"],
                "slice_part": sweep.get("slice_part"), "chain_window": sweep.get("chain_window"),
                "period_ticks": sweep.get("period_ticks"), "state": report["state"]}

    first = tick("first")
    for _ in range(5):  # one rotation uncounted: every module's bytecode cached, every turn's first run done
        subprocess.run([python, OPS, "nanny"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = [tick(index + 1) for index in range(ticks)]
    add_events(home, new_events)
    after = tick(f"after_{new_events}_events")
    by_slice = {}
    for row in rows:
        by_slice[row["slice"]] = max(by_slice.get(row["slice"], 0), row["ratio"])
    return {"floor_instructions": floor, "first_tick": first, "ticks": rows, "after_new_events": after,
            "max_ratio_by_slice": dict(sorted(by_slice.items())),
            "idle_tick_ratio": by_slice.get("receipts"), "max_slice_ratio": max(by_slice.values(), default=None),
            "period_ticks": rows[-1]["period_ticks"] if rows else None}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100000)
    parser.add_argument("--events", type=int, default=500000)
    parser.add_argument("--stale", type=int, default=50, help="expired leases seeded for the tick to recover")
    parser.add_argument("--stalled", type=int, default=20, help="live leases past their stall deadline")
    parser.add_argument("--live", type=int, default=500, help="live leases with a progress record (stalled included)")
    parser.add_argument("--progress-history", type=int, default=20000,
                        help="completed tasks keeping an earlier lease's progress record")
    parser.add_argument("--reps", type=int, default=21, help="idle tick / baseline pairs")
    parser.add_argument("--skip-busy", action="store_true")
    parser.add_argument("--seeded-home", help="time a copy of this already-seeded busy home instead of seeding one")
    parser.add_argument("--workdir")
    parser.add_argument("--instructions", action="store_true",
                        help="count each tick's instructions under callgrind against the floor (needs valgrind)")
    parser.add_argument("--ticks", type=int, default=10, help="ticks counted after the first (with --instructions)")
    parser.add_argument("--skip-timing", action="store_true", help="skip the wall-time figures")
    bench.add_interpreter_flag(parser)
    args = parser.parse_args(argv)
    compileall.compile_dir(os.path.join(ROOT, "mindos"), quiet=1)
    workdir = tempfile.mkdtemp(prefix="mindos-nanny-bench-", dir=args.workdir)
    results = {"meta": {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                        "baseline": f'python3 -c "{bench.BASELINE_CODE}"',
                        "interpreter": {"mode": args.interpreter, "startup_hooks": bench.startup_hooks()}}}
    try:
        python = bench.interpreter(args.interpreter, workdir)
        if not args.skip_timing:
            results["idle"] = time_idle(workdir, args.reps, python)
        if args.instructions:
            idle_home = os.path.join(workdir, "idle-counted")
            subprocess.run([sys.executable, os.path.join(ROOT, "autopilot.py"), "init"], check=True,
                           env=dict(os.environ, HERMES_AUTOPILOT_HOME=idle_home), stdout=subprocess.DEVNULL)
            results["idle_instructions"] = count_ticks(idle_home, python, args.ticks)
        if not args.skip_busy:
            home = os.path.join(workdir, "busy")
            if args.seeded_home:
                shutil.copytree(args.seeded_home, home)
                conn = db.connect(home)
                try:
                    results["busy_seed"] = {"tasks": conn.execute("SELECT count(*) FROM tasks").fetchone()[0],
                                            "events": ledger.height(conn), "copied_from": args.seeded_home}
                finally:
                    conn.close()
            else:
                results["busy_seed"] = seed_busy(home, args.tasks, args.events, args.stale, args.stalled, args.live,
                                                 args.progress_history)
            if not args.skip_timing:
                results["busy"] = time_busy(home)
            if args.instructions:
                results["busy_instructions"] = count_ticks(home, python, args.ticks)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    text = json.dumps(results, indent=2, sort_keys=True) + "\n"
    out_dir = os.path.join(HERE, "results")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "nanny-latest.json"), "w", encoding="utf-8") as handle:
        handle.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
