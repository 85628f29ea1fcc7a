#!/usr/bin/env python3
"""A/B timing: the same commands from two revisions, interleaved, against one seeded home.

A change that must not slow the common calls (a refactor, a layout move) is judged by
running both revisions side by side in one run, so machine load and cache state hit both
alike: each repetition times the base revision and the working tree back to back (the
order alternates), as separate processes, the way agents call them.

Example:
  python3 bench/ab.py --base 95f8c95 --tasks 10000 --reps 15
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the seeding and command specs are the main bench's)

ROOT = bench.ROOT
DEFAULT_COMMANDS = ("show", "create", "tag", "dep", "search --rank", "next --claim",
                    "note", "context --budget 4000 --related 5")


def checkout(rev, into):
    """Extract ``rev`` of this repository into ``into`` (git archive: no worktree bookkeeping)."""
    archive = subprocess.run(["git", "-C", ROOT, "archive", "--format=tar", rev], capture_output=True, check=True)
    os.makedirs(into, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(into, "mindos")], check=True)
    return into


SEED = """
import json, sys
sys.path.insert(0, sys.argv[1])
import bench
info = bench.seed_tasks(sys.argv[2], int(sys.argv[3]), reserve=int(sys.argv[4]))
bench.seed_memory(info, int(sys.argv[5]), int(sys.argv[6]))
print(json.dumps({"ids": list(info.ids), "reserved": list(info.reserved)}))
"""


def seed(base_root, home, tasks, reserve, notes, handoffs):
    """Seed ``home`` with the *base* revision's own bench code, so its schema is one both
    revisions open (a newer schema would be refused by the older code)."""
    import types

    proc = subprocess.run([sys.executable, "-c", SEED, os.path.join(base_root, "bench"), home, str(tasks),
                           str(reserve), str(notes), str(handoffs)], capture_output=True, text=True, check=True)
    return types.SimpleNamespace(**json.loads(proc.stdout.strip().splitlines()[-1]))


def run(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the revision to compare against (a commit or branch)")
    parser.add_argument("--head", default=None,
                        help="the revision to measure (default: this working tree)")
    parser.add_argument("--tasks", type=int, default=10000, help="tasks in the seeded home (default 10000)")
    parser.add_argument("--notes", type=int, default=None, help="notes (default 5 x tasks, at most 50000)")
    parser.add_argument("--reps", type=int, default=15, help="timed repetitions per command and side")
    parser.add_argument("--commands", default=",".join(DEFAULT_COMMANDS), help="comma-separated labels")
    parser.add_argument("--separate-homes", action="store_true",
                        help="seed one home per side, each with its own revision's bench code (for a base"
                             " whose schema is older than the head's: the head would migrate a shared home"
                             " and the base would then refuse it)")
    bench.add_interpreter_flag(parser)
    args = parser.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="mindos-ab-")
    try:
        python = bench.interpreter(args.interpreter, workdir)
        subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "mindos")], check=True)
        base_root = checkout(args.base, os.path.join(workdir, "base"))
        head_root = checkout(args.head, os.path.join(workdir, "head")) if args.head else ROOT
        notes = args.notes if args.notes is not None else min(args.tasks * 5, 50000)
        wanted = set(args.commands.split(","))
        roots = {"base": base_root, "head": head_root}
        homes = {side: os.path.join(workdir, "home-" + side if args.separate_homes else "home")
                 for side in roots}
        specs = {}
        for side in ("base", "head") if args.separate_homes else ("base",):
            info = seed(roots[side], homes[side], args.tasks, args.reps * 2 + 2, notes, max(args.tasks // 2, 1))
            specs[side] = {label: make for label, _, make in bench.task_specs(info, "ab") + bench.memory_specs(info, "ab")
                           if label in wanted}
        specs.setdefault("head", specs["base"])
        envs = {side: bench._env(homes[side]) for side in roots}
        sides = {"base": os.path.join(base_root, "autopilot.py"), "head": os.path.join(head_root, "autopilot.py")}
        samples = {label: {"base": [], "head": []} for label in specs["base"]}
        failures = []
        for rep in range(args.reps):
            for label in specs["base"]:
                order = ("base", "head") if rep % 2 == 0 else ("head", "base")
                for slot, side in enumerate(order):
                    argv_ = specs[side][label](rep * 2 + slot)
                    ms, proc = bench._run([python, sides[side], *argv_], envs[side])
                    if proc.returncode != 0:
                        failures.append({"side": side, "command": label, "stderr": proc.stderr.strip()[-200:]})
                        continue
                    samples[label][side].append(ms)
        results = {}
        for label, by_side in samples.items():
            if by_side["base"] and by_side["head"]:
                base, head = statistics.median(by_side["base"]), statistics.median(by_side["head"])
                low_base, low_head = min(by_side["base"]), min(by_side["head"])
                results[label] = {"base_median_ms": round(base, 2), "head_median_ms": round(head, 2),
                                  "head_over_base": round(head / base, 3), "samples": len(by_side["head"]),
                                  # the fastest call of each side: the least disturbed by machine load
                                  "base_min_ms": round(low_base, 2), "head_min_ms": round(low_head, 2),
                                  "head_over_base_min": round(low_head / low_base, 3)}
        return {"base": args.base, "head": args.head or "working tree", "tasks": args.tasks, "notes": notes, "reps": args.reps,
                "separate_homes": args.separate_homes, "interpreter": args.interpreter,
                "results": results, "failures": failures}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv=None):
    print(json.dumps(run(argv), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
