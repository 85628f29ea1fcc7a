#!/usr/bin/env python3
"""Write-lock fairness: N processes drain a queue with ``next --claim``, one CLI process per call.

    python3 bench/lock_fairness.py                      # 32 workers, 2,000 tasks, this checkout
    python3 bench/lock_fairness.py --root /tmp/old      # the same against another code tree
    python3 bench/lock_fairness.py --workers 8 --tasks 200

Each worker is a loop that starts ``next --claim --owner wN`` processes one after another
until the queue is empty, the way agents call the front door.  Every call's process times
its outermost write transaction from inside (``db.write`` wrapped before the command runs):
``wait`` is entering it (the write lock plus BEGIN IMMEDIATE), ``txn`` is from holding the
lock to commit.  Prints JSON: calls, failed calls (exit code != 0, with their stderr),
claims, double claims, and p50/p99/max of wait and txn in ms, plus p99 wait / p99 txn.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _call(root, owner, out_path):
    """One timed ``next --claim`` in this process (the code under test comes from ``root``)."""
    sys.path.insert(0, root)
    from mindos.store import db

    timings = []
    original_enter, original_exit = db.write.__enter__, db.write.__exit__

    def enter(self):
        outer = not self.conn.in_transaction
        started = time.perf_counter()
        result = original_enter(self)
        if outer:
            self._bench = (started, time.perf_counter())
        return result

    def exit_(self, *exc):
        try:
            return original_exit(self, *exc)
        finally:
            mark = getattr(self, "_bench", None)
            if mark:
                timings.append(((mark[1] - mark[0]) * 1000, (time.perf_counter() - mark[1]) * 1000))

    db.write.__enter__, db.write.__exit__ = enter, exit_
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from mindos.cli import run

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = run("autopilot", ["next", "--claim", "--owner", owner])
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
    task = None
    if rc == 0:
        task = (json.loads(out.getvalue()).get("task") or {}).get("id")
    line = json.dumps({"owner": owner, "rc": rc, "task": task, "timings": timings, "err": err.getvalue()[-300:]})
    fd = os.open(out_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)
    sys.stdout.write("empty\n" if rc == 0 and task is None else "more\n")
    return 0


def _worker(root, home, owner, out_path):
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=home)
    empties = 0
    while empties < 1:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--call", "--root", root, "--owner", owner,
                               "--out", out_path], capture_output=True, text=True, env=env)
        if proc.stdout.strip() == "empty":
            empties += 1
        elif proc.returncode != 0 and not proc.stdout.strip():
            time.sleep(0.01)
    return 0


def _seed(root, home, count):
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from mindos.store import db, ledger\n"
        "from mindos.work import tasks\n"
        "conn = db.connect(sys.argv[2])\n"
        "with db.write(conn):\n"
        "    for n in range(int(sys.argv[3])):\n"
        "        tasks.create(conn, project='Bench', title=f'drain {n}', task_id=f'd{n:05d}')\n"
    )
    subprocess.run([sys.executable, "-c", code, root, home, str(count)], check=True)


def _percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))], 2)


def measure(root, workers, count):
    home = tempfile.mkdtemp(prefix="mindos-lockbench-")
    out_path = os.path.join(home, "calls.jsonl")
    try:
        _seed(root, home, count)
        started = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", "--root", root,
                                   "--home", home, "--owner", f"w{n:02d}", "--out", out_path])
                 for n in range(workers)]
        for proc in procs:
            proc.wait()
        elapsed = time.perf_counter() - started
        with open(out_path, encoding="utf-8") as handle:
            calls = [json.loads(line) for line in handle if line.strip()]
        claimed = [call["task"] for call in calls if call["task"]]
        waits = [w for call in calls for w, _ in call["timings"]]
        txns = [t for call in calls for _, t in call["timings"]]
        failed = [call for call in calls if call["rc"] != 0]
        p99_wait, p99_txn = _percentile(waits, 0.99), _percentile(txns, 0.99)
        return {
            "code": root, "workers": workers, "tasks": count, "seconds": round(elapsed, 1), "calls": len(calls),
            "failed_calls": len(failed), "failures": [call["err"].strip() for call in failed][:5],
            "claims": len(claimed), "distinct_claims": len(set(claimed)), "double_claims": len(claimed) - len(set(claimed)),
            "wait_ms": {"p50": _percentile(waits, 0.5), "p99": p99_wait, "max": _percentile(waits, 1.0)},
            "txn_ms": {"p50": _percentile(txns, 0.5), "p99": p99_txn, "max": _percentile(txns, 1.0)},
            "p99_wait_over_p99_txn": round(p99_wait / p99_txn, 2) if p99_wait is not None and p99_txn else None,
        }
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=ROOT, help="code tree to measure (default: this checkout)")
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--call", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--home", help=argparse.SUPPRESS)
    parser.add_argument("--owner", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.call:
        return _call(os.path.abspath(args.root), args.owner, args.out)
    if args.worker:
        return _worker(os.path.abspath(args.root), args.home, args.owner, args.out)
    print(json.dumps(measure(os.path.abspath(args.root), args.workers, args.tasks), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
