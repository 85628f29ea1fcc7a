#!/usr/bin/env python3
"""Benchmark session ingestion and the migration inventory through the real front doors.

What is measured (each as one ``python3 autopilot.py|ops.py ...`` process, wall time):
  * ``session-ingest --apply`` over FILES Claude Code-shaped transcripts holding LINES
    lines in total (user text, assistant text with thinking and tool_use blocks, tool
    results, bookkeeping records) -- target: 100k lines under 30 s;
  * the same command again over the unchanged files (one hash read each) -- target: under 2 s;
  * ``search-sessions --rank`` over the result;
  * ``migrate-inventory`` over a tree of TREE_FILES files (an Autopilot home among Hermes,
    Obsidian and plain files) -- target: 10k files under 10 s.

Quick run:  python3 bench/bench_portability.py --lines 20000 --tree-files 2000
Full run:   python3 bench/bench_portability.py            (100k lines, 10k-file tree)
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ("redirect cookie session lease deploy rollback migrate schema index token cache retry queue worker "
         "handoff receipt ledger audit snapshot vault profile skill cron budget context pack digest"
         " app.py:12 status: retries=3 timeout=30 `grep -rn` https://example.com/docs").split()


def _text(rng, n=18):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def transcripts(root, lines, files, rng):
    """Write ``files`` Claude Code-shaped sessions with ``lines`` lines in total."""
    per = lines // files
    for f in range(files):
        sid = f"5f1c2a9e-0000-4000-8000-{f:012d}"
        path = os.path.join(root, f"-home-me-proj-{f % 7}", f"{sid}.jsonl")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        out = []
        for i in range(per):
            at = f"2026-08-{1 + (f % 20):02d}T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
            kind = i % 5
            if kind == 0:
                rec = {"type": "user", "message": {"role": "user", "content": _text(rng)}}
            elif kind in (1, 3):
                rec = {"type": "assistant", "message": {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": _text(rng, 8)}, {"type": "text", "text": _text(rng, 30)},
                    {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "ls"}}]}}
            elif kind == 2:
                rec = {"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{i - 1}", "content": _text(rng, 12)}]}}
            else:
                rec = {"type": "file-history-snapshot", "messageId": f"m{i}", "snapshot": {}}
            rec.update({"sessionId": sid, "uuid": f"u{i}", "timestamp": at, "cwd": "/home/me/proj"})
            out.append(json.dumps(rec))
        with open(path, "w") as handle:
            handle.write("\n".join(out) + "\n")


def tree(root, count, rng):
    """A migration tree of ``count`` files: an Autopilot home, a Hermes home, an Obsidian vault, clutter."""
    sys.path.insert(0, ROOT)
    from mindos.store import db, db as _  # noqa: F401
    from mindos.work import tasks
    home = os.path.join(root, "old-autopilot")
    conn = db.connect(home)
    for i in range(200):
        tasks.create(conn, project="Bench", title=f"task {i} {_text(rng, 4)}", task_id=f"t{i}")
    conn.close()
    hermes = os.path.join(root, "hermes")
    for sub in ("profiles", "skills", "cron"):
        os.makedirs(os.path.join(hermes, sub), exist_ok=True)
    with open(os.path.join(hermes, "cron", "jobs.json"), "w") as handle:
        handle.write('{"jobs": []}')
    vault = os.path.join(root, "vault")
    os.makedirs(os.path.join(vault, ".obsidian"), exist_ok=True)
    made = 4
    while made < count:
        where = vault if made % 2 else os.path.join(hermes, "skills", f"s{made % 50}")
        os.makedirs(where, exist_ok=True)
        with open(os.path.join(where, f"note-{made}.md"), "w") as handle:
            handle.write(_text(rng, 40) + "\n")
        made += 1


def timed(argv, home):
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=home)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and not proc.stdout):
        raise SystemExit(f"{argv[:3]} failed: {proc.stderr.strip()}")
    return elapsed, proc


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--tree-files", type=int, default=10_000)
    parser.add_argument("--skip-inventory", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(11)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        store, home = os.path.join(tmp, "store"), os.path.join(tmp, "home")
        transcripts(store, args.lines, args.files, rng)
        ingest = [os.path.join(ROOT, "autopilot.py"), "session-ingest", "--source", "claude-code", "--root", store,
                  "--apply"]
        timed([os.path.join(ROOT, "autopilot.py"), "init"], home)
        first, proc = timed(ingest, home)
        report = json.loads(proc.stdout)
        second, proc = timed(ingest, home)
        again = json.loads(proc.stdout)
        search, _ = timed([os.path.join(ROOT, "autopilot.py"), "search-sessions", "redirect cookie", "--rank"], home)
        results["session_ingest"] = {
            "lines": report["totals"]["lines"], "files": args.files, "messages": report["messages_written"],
            "first_run_s": round(first, 3), "unchanged_rerun_s": round(second, 3),
            "rerun_unchanged_files": again["unchanged"], "search_sessions_rank_s": round(search, 3),
            "targets": {"first_run_s": 30, "unchanged_rerun_s": 2},
        }
        if not args.skip_inventory:
            migrate_root = os.path.join(tmp, "machine")
            tree(migrate_root, args.tree_files, rng)
            inv_home = os.path.join(tmp, "inv-home")
            out = os.path.join(tmp, "inventory.json")
            timed([os.path.join(ROOT, "autopilot.py"), "init"], inv_home)
            took, proc = timed([os.path.join(ROOT, "ops.py"), "migrate-inventory", "--root", migrate_root,
                                "--out", out], inv_home)
            doc = json.loads(proc.stdout) if proc.stdout else {}
            results["migrate_inventory"] = {"tree_files": args.tree_files, "seconds": round(took, 3),
                                            "exit": proc.returncode, "sources": doc.get("sources_total"),
                                            "target_s": 10}
    print(json.dumps(results, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
