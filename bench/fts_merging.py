#!/usr/bin/env python3
"""Measure how FTS5's ``crisismerge`` setting trades write time for index segments.

Every committed write adds a segment to a full-text index and every query term is looked up
in each segment, so the segments an index keeps are a cost every search pays; merging them
sooner is a cost writes pay.  This seeds one home the way bench.py seeds its memory home
(``--tasks`` tasks, ``--notes`` notes), merges its notes index to one segment, and then, for
each ``crisismerge`` value, writes ``--writes`` notes one per transaction through the core
(``notes.add``, as an agent's ``note`` call does) on a fresh copy of it, counting the notes
index's segments after each write.  Reported per value: the segments' mean and maximum and
the write's median and 99th percentile.  16 is FTS5's default; migration 11 sets 4.

Run:  python3 bench/fts_merging.py [--tasks 10000 --notes 50000 --writes 2000 --values 16,4,2]
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (ROOT, HERE):
    if path not in sys.path:
        sys.path.insert(0, path)

import bench  # noqa: E402
from mindos.memory import notes  # noqa: E402
from mindos.store import db, fts  # noqa: E402


def measure(home, value, writes, task_ids):
    """Segments after each of ``writes`` single-note writes at ``crisismerge`` = ``value``."""
    conn = db.connect(home)
    try:
        with db.write(conn):
            conn.execute("INSERT INTO notes_fts(notes_fts, rank) VALUES ('crisismerge', ?)", (value,))
        segments, seconds = [], []
        for n in range(writes):
            started = time.perf_counter()
            notes.add(conn, task_ids[n % len(task_ids)], content=f"fresh note {n} on the payments rollout, step {n * 7}")
            seconds.append(time.perf_counter() - started)
            segments.append(fts.segments(conn, "notes_fts"))
    finally:
        conn.close()
    seconds.sort()
    return {"crisismerge": value, "segments_mean": round(statistics.mean(segments), 1), "segments_max": max(segments),
            "write_median_ms": round(statistics.median(seconds) * 1000, 3),
            "write_p99_ms": round(seconds[int(len(seconds) * 0.99)] * 1000, 3)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10000)
    parser.add_argument("--notes", type=int, default=50000)
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--values", default="16,4,2", help="crisismerge values to compare (default 16,4,2)")
    args = parser.parse_args(argv)
    values = [int(value) for value in args.values.split(",") if value.strip()]
    if not db.fts5_supported():
        raise SystemExit("fts_merging: this SQLite has no FTS5")
    workdir = tempfile.mkdtemp(prefix="mindos-fts-merging-")
    try:
        seeded = os.path.join(workdir, "seeded")
        info = bench.seed_tasks(seeded, args.tasks)
        bench.seed_memory(info, args.notes, 0)
        conn = db.connect(seeded)
        try:
            with db.write(conn):  # one segment to start from (fts.merge goes level by level)
                conn.execute("INSERT INTO notes_fts(notes_fts) VALUES ('optimize')")
        finally:
            conn.close()
        results = []
        for value in values:
            home = os.path.join(workdir, f"crisismerge-{value}")
            shutil.copytree(seeded, home)
            results.append(measure(home, value, args.writes, info.ids))
            shutil.rmtree(home)
            print(json.dumps(results[-1]), file=sys.stderr)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps({"tasks": args.tasks, "notes": args.notes, "writes": args.writes, "results": results}, indent=2))


if __name__ == "__main__":
    main()
