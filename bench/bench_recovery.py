#!/usr/bin/env python3
"""Benchmark the recovery commands on a large home: doctor, snapshot, snapshot-restore.

The issue's target home holds 100k tasks, 500k audit events and 50k notes: tasks and notes
are seeded by bench.py's seeders (each row with the audit event its command writes), and
the ledger is topped up with heartbeat events to the event total, so the chain verifies.
Each command runs as its own process (``python3 ops.py ...``), the way an operator runs it,
and is timed by wall clock:

  * ``doctor`` on the seeded home (read-only; also checked to leave state.db byte-identical),
  * ``snapshot --out`` of it and ``snapshot-check`` of the file,
  * ``snapshot-restore`` into a fresh home, and ``snapshot-restore --force`` over the
    seeded home itself (the two restore situations),
  * ``doctor`` on the restored home (which must be clean).

Each process's peak memory (``ru_maxrss`` of that one child, from ``os.wait4``) is
recorded too: snapshots and restores stream (a tar of a ``VACUUM INTO`` copy, a sealed
manifest and the receipt files), so their peak should stay flat as the home grows.

Targets: doctor < 15 s, snapshot and restore < 30 s each at 100k tasks; at 1M tasks
snapshot under 5 minutes and restore under 10, each with peak memory under 500 MB
(``--skip-doctor`` leaves the doctor runs out when only the backups are measured).

Quick run:  python3 bench/bench_recovery.py --tasks 2000 --events 10000 --notes 1000
Full run:   python3 bench/bench_recovery.py          (100k / 500k / 50k; seeding takes minutes)
Large run:  python3 bench/bench_recovery.py --tasks 1000000 --events 2000000 --notes 100000 --skip-doctor
            --workdir /var/tmp/mindos-1m   (seeding about 20 minutes; --reuse times it again)

Measured (2 shared cores, load average 5-12 from other work; wall seconds, CPU seconds, peak MB):

  home                         snapshot          check          restore --force    restore (unsigned)
  100k tasks, 500k events      14 s / 4.7 / 40    1.6 s / 0.6 / 25  56 s / 12 / 131    117 s / 25 / 131
  1M tasks, 2M events, 1.6 GB  119 s / 24 / 40    11 s / 2.9 / 25   127 s / 82 / 188   319 s / 189 / 173

An unsigned restore also runs the secret guard over every text value.
Results go to stdout (JSON) and bench/results/recovery-<time>.json (gitignored).
"""

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

import bench  # noqa: E402  (the seeders)
from mindos.store import db  # noqa: E402

OPS = os.path.join(ROOT, "ops.py")
TARGETS = {"doctor": 15.0, "snapshot": 30.0, "snapshot_restore_fresh": 30.0, "snapshot_restore_force": 30.0}
# at a million tasks: the whole doctor and a snapshot under 5 minutes, a restore under 10
TARGETS_1M = {"doctor": 300.0, "snapshot": 300.0, "snapshot_restore_fresh": 600.0, "snapshot_restore_force": 600.0}


def seed(home, tasks, events, notes):
    """Seed ``home``; return counts and the seconds it took."""
    started = time.perf_counter()
    info = bench.seed_tasks(home, tasks)
    bench.seed_memory(info, notes, 0)
    conn = db.connect(home)
    have = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    conn.close()
    if events > have:
        bench.seed_ledger(home, events - have)
    conn = db.connect(home)
    counts = {name: conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
              for name in ("tasks", "audit_events", "notes", "dependencies")}
    conn.close()
    return counts, time.perf_counter() - started


CPU = {}  # command label -> CPU seconds (user + system) of its process
PEAK_MB = {}  # command label -> peak resident memory (MB) of its process
MEMORY_TARGET_MB = 500.0


# runs ops.py in this interpreter and, at exit, writes its peak resident KiB (VmHWM) to the
# file BENCH_PEAK_FILE names
_PEAK_WRAPPER = """
import atexit, os, runpy, sys
def _peak():
    try:
        with open('/proc/self/status') as status:
            kib = next(line.split()[1] for line in status if line.startswith('VmHWM:'))
    except (OSError, StopIteration):
        return
    with open(os.environ['BENCH_PEAK_FILE'], 'w') as out:
        out.write(kib)
atexit.register(_peak)
_real_exit = os._exit
def _exit(code):  # the front door ends with os._exit, which skips atexit
    _peak()
    _real_exit(code)
os._exit = _exit
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name='__main__')
"""


def timed(argv, home, label):
    """Wall seconds of one ``ops.py`` process (its CPU seconds go to :data:`CPU`, a figure
    machine contention does not inflate)."""
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=home)
    env.pop("MINDOS_NOW", None)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as peak:
        env["BENCH_PEAK_FILE"] = peak.name
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-c", _PEAK_WRAPPER, OPS, *argv], stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)  # this one child's CPU time
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        proc = subprocess.CompletedProcess(argv, child.returncode, out.read().decode(), err.read().decode())
        hwm = peak.read().strip()
    # ru_maxrss of a child starts from its parent's high-water mark (fork and vfork alike), so
    # the child reports its own (VmHWM, per address space, reset by exec); ru_maxrss elsewhere
    PEAK_MB[label] = round(int(hwm) / 1024, 1) if hwm.isdigit() else round(usage.ru_maxrss / 1024, 1)
    CPU[label] = round(usage.ru_utime + usage.ru_stime, 2)
    if proc.returncode not in (0, 1) or proc.stderr:
        raise SystemExit(f"ops.py {' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return seconds, json.loads(proc.stdout), proc.returncode


def file_digest(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=100000)
    parser.add_argument("--events", type=int, default=500000)
    parser.add_argument("--notes", type=int, default=50000)
    parser.add_argument("--workdir", help="where to build the homes (default: a temp dir, removed afterwards)")
    parser.add_argument("--skip-doctor", action="store_true", help="time only the snapshot, check and restores")
    parser.add_argument("--reuse", action="store_true",
                        help="time against <workdir>/seeded as it is (seeded by an earlier run) instead of seeding")
    args = parser.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="mindos-bench-recovery-")
    os.makedirs(workdir, exist_ok=True)
    home, fresh = os.path.join(workdir, "seeded"), os.path.join(workdir, "fresh")
    result = {"sizes": {"tasks": args.tasks, "events": args.events, "notes": args.notes}, "timings": {}}
    try:
        if args.reuse and os.path.exists(os.path.join(home, "state.db")):
            conn = db.connect(home)
            counts = {name: conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
                      for name in ("tasks", "audit_events", "notes", "dependencies")}
            conn.close()
            result["seeded"], result["seed_seconds"] = counts, None
            result["sizes"] = {"tasks": counts["tasks"], "events": counts["audit_events"], "notes": counts["notes"]}
        else:
            counts, seconds = seed(home, args.tasks, args.events, args.notes)
            result["seeded"], result["seed_seconds"] = counts, round(seconds, 1)
        shutil.rmtree(fresh, ignore_errors=True)
        db_file = os.path.join(home, "state.db")
        before = file_digest(db_file)
        if not args.skip_doctor:
            t, report, rc = timed(["doctor"], home, "doctor")
            result["timings"]["doctor"] = round(t, 2)
            result["doctor_ok"] = report["ok"]
            result["doctor_left_db_identical"] = file_digest(db_file) == before
            t, _, _ = timed(["doctor", "--quick"], home, "doctor_quick")
            result["timings"]["doctor_quick"] = round(t, 2)
        result["database_bytes"] = os.path.getsize(db_file)
        snap = os.path.join(workdir, "snapshot.tar")
        if os.path.exists(snap):
            os.unlink(snap)
        t, made, _ = timed(["snapshot", "--out", snap], home, "snapshot")
        result["timings"]["snapshot"] = round(t, 2)
        result["snapshot_bytes"] = os.path.getsize(snap)
        t, _, _ = timed(["snapshot-check", snap], home, "snapshot_check")
        result["timings"]["snapshot_check"] = round(t, 2)
        # another home (initialized first, as restores need): the snapshot is signed by a key it does not hold
        db.connect(fresh).close()
        t, restored, _ = timed(["snapshot-restore", snap, "--trust-unsigned"], fresh, "snapshot_restore_fresh")
        result["timings"]["snapshot_restore_fresh"] = round(t, 2)
        t, _, _ = timed(["snapshot-restore", snap, "--force"], home, "snapshot_restore_force")
        result["timings"]["snapshot_restore_force"] = round(t, 2)
        if not args.skip_doctor:
            t, report, _ = timed(["doctor"], fresh, "doctor_restored")
            result["timings"]["doctor_restored"] = round(t, 2)
            result["restored_doctor_ok"] = report["ok"]
            result["restored_counts"] = report["counts"]
        result["restored_matches"] = restored["tables"] == made["counts"]
        targets = TARGETS_1M if result["sizes"]["tasks"] >= 1000000 else TARGETS
        result["within_targets"] = {k: result["timings"][k] < v for k, v in targets.items() if k in result["timings"]}
        result["within_memory_target"] = {k: v < MEMORY_TARGET_MB for k, v in PEAK_MB.items()
                                          if k.startswith("snapshot")}
        result["cpu_seconds"] = dict(CPU)
        result["peak_memory_mb"] = dict(PEAK_MB)
        result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(result, indent=2, sort_keys=True))
    out_dir = os.path.join(ROOT, "bench", "results")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"recovery-{time.strftime('%Y%m%dT%H%M%S')}.json"), "w") as handle:
        json.dump(result, handle, indent=2, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
