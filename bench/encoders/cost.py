#!/usr/bin/env python3
"""What a real encoder costs: ``memory-embed --apply`` and one ``memory-search --semantic``,
wall seconds, over bench/recall_cost.py's seeded recall home.

The home is seeded by the standard interpreter running this script (bench/recall_cost.py's
``seed``: by default 10k tasks, 50k notes, 5k handoffs, 10k memories, 5k facts, 70k rows to
embed); the two commands then run as processes of ``--python`` (an interpreter that has the
encoder's libraries, e.g. a separate virtual environment with sentence-transformers) with
``MINDOS_EMBEDDER`` set to ``--embedder``.  ``--semantic-queries`` searches are timed one
process each (the first one loads the model like every other: each is a fresh process), and
the same queries without ``--semantic`` under the same interpreter, for comparison.

Run:  python3 bench/encoders/cost.py --python ~/st-venv/bin/python --embedder bench.encoders.minilm:encode
      [--tasks N] [--workdir DIR]   (JSON to stdout; the default home takes minutes to seed)
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
for path in (ROOT, BENCH):
    if path not in sys.path:
        sys.path.insert(0, path)

QUERIES = ("retry path payments", "db connection pool", "k8s deploy gateway")


def _timed(argv, env):
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"cost: {' '.join(argv[1:3])} failed (rc {proc.returncode}): {proc.stderr.strip()[-300:]}")
    return seconds, json.loads(proc.stdout)


def run(args):
    import recall_cost

    workdir = args.workdir or tempfile.mkdtemp(prefix="mindos-encoder-cost-")
    try:
        _, home, seed_seconds, _ = recall_cost.seed(workdir, args.tasks, 5 * args.tasks, args.tasks // 2,
                                                    args.tasks, args.tasks // 2)
        env = recall_cost._env(home)
        env["MINDOS_EMBEDDER"] = args.embedder
        autopilot = os.path.join(ROOT, "autopilot.py")
        embed_seconds, embedded = _timed([args.python, autopilot, "memory-embed", "--apply"], env)
        semantic, lexical = [], []
        for query in QUERIES:
            semantic.append(_timed([args.python, autopilot, "memory-search", query, "--semantic"], env)[0])
            lexical.append(_timed([args.python, autopilot, "memory-search", query], env)[0])
        _, status = _timed([args.python, autopilot, "memory-status"], env)
        return {"embedder": args.embedder, "python": args.python, "tasks": args.tasks,
                "seed_seconds": round(seed_seconds, 1),
                "memory_embed": {"wall_seconds": round(embed_seconds, 2), "rows": sum(embedded["embedded"].values()),
                                 "dims": embedded["dims"], "encoder_seconds": embedded["seconds"],
                                 "rows_per_second": round(sum(embedded["embedded"].values()) / embed_seconds, 1)},
                "memory_search_semantic": {"wall_seconds_median": round(statistics.median(semantic), 2),
                                           "wall_seconds": [round(value, 2) for value in semantic]},
                "memory_search": {"wall_seconds_median": round(statistics.median(lexical), 2)},
                "coverage": status["coverage"], "vector_bytes": status["embedded"] * 4 * (embedded["dims"] or 0)}
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Wall seconds of memory-embed --apply and memory-search --semantic"
                                                 " with a plug-in encoder over the seeded recall home.")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter that runs the commands (one that has the encoder's libraries)")
    parser.add_argument("--embedder", required=True, help="MINDOS_EMBEDDER, e.g. bench.encoders.minilm:encode")
    parser.add_argument("--tasks", type=int, default=10000, help="tasks seeded (rows to embed: 7 per task)")
    parser.add_argument("--workdir", help="where to seed the home (kept; default: a temp dir, removed)")
    args = parser.parse_args(argv)
    print(json.dumps(run(args), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
