#!/usr/bin/env python3
"""Weigh other indexes for substring ``search`` of a rare phrase of common words (issue 32).

A substring search of a long text names its candidates through the trigram index with a
NEAR pair of two trigrams, the smallest of each half (``fts.trigram_probe``), and FTS5 reads
every posting of both.  In a phrase of common words ("cache api", "retry payments") every
trigram is common, so at a million tasks that is 100k-350k postings, 200-330 instructions
each.  This builds, beside the home's own trigram index, the candidates measured against it
and counts under callgrind what naming one phrase's candidates costs through each:

  * ``near``: the home's trigram index with the probe search uses today;
  * ``near3``: the same NEAR with a third trigram (the smallest of the middle third), to see
    whether FTS5's rowid leapfrog skips more with three runs than with two;
  * ``none``: a trigram index with ``detail=none`` (no positions), the same two trigrams
    ANDed (NEAR needs positions), which names more candidates;
  * ``pairs``: the pair index of schema 24 (``tasks_pairs_fts``: one token per space of the
    task text, the three characters either side of it), read through ``fts.pair_probe``
    (the token of the query's spaces with the shortest postings).  A rare phrase of common
    words has a rare pair.

Each figure is the instructions of ``SELECT rowid ... MATCH ? LIMIT 1000`` (what
``fts._rowids`` reads) minus those of the same program running ``SELECT 1``; rows is what
the statement returned.  Also printed: each index's size and build time.

It WRITES to the home it is given (a new table, and the pair index when the home predates
schema 24): run it on a copy only, e.g.
  cp -r /work/scale-homes/home-100000 /tmp/me-h100k
  python3 bench/phrase_probe.py --home /tmp/me-h100k [--python PY] [--build]
``--build`` creates the ``detail=none`` index (once) and brings the home to the current
schema; without it the existing indexes are measured.
"""

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from mindos.store import db, fts  # noqa: E402

PHRASES = ("retry payments", "deploy gateway", "rate limit", "schema migration worker", "cache api")
COLUMNS = ("id", "project", "title", "description", "next_action", "blocked_reason")
NONE, PAIRS = "phrase_probe_tri_none", "tasks_pairs_fts"
LIMIT = 1000  # as fts._rowids reads at most (CANDIDATES_LISTED)


def build(home):
    """The ``detail=none`` trigram index, and the home brought to the current schema (the
    pair index filled by its migration); seconds each took."""
    started = time.perf_counter()
    conn = db.connect(home)  # migrates
    conn.close()
    built = {PAIRS: time.perf_counter() - started}
    conn = sqlite3.connect(os.path.join(home, "state.db"))
    try:
        started = time.perf_counter()
        conn.execute(f"CREATE VIRTUAL TABLE {NONE} USING fts5({', '.join(COLUMNS)}, content='tasks',"
                     " content_rowid='seq', tokenize='trigram', detail=none)")
        conn.execute(f"INSERT INTO {NONE}({NONE}) VALUES ('rebuild')")
        conn.commit()
        built[NONE] = time.perf_counter() - started
    finally:
        conn.close()
    return built


def probes(conn, phrase):
    """``{label: (statement, MATCH expression)}``: what names ``phrase``'s candidates through
    each index present (see the module docstring)."""
    spans = fts.trigram_spans(conn, "tasks_trigram_fts", phrase)
    near = fts.trigram_probe(phrase, spans)
    found = {"near": ("tasks_trigram_fts", near)}
    runs = re.findall(r'"((?:[^"]|"")*)"', near)
    if len(runs) == 2:
        count = len(phrase) - 2
        folded = phrase.lower()
        first, last = folded.find(runs[0].replace('""', '"')), folded.rfind(runs[1].replace('""', '"'))
        third = min(range(count // 3, max(count // 3 + 1, 2 * count // 3)), key=lambda at: (spans.get(at, 0), at))
        trio = sorted({first, third, last})
        found["near3"] = ("tasks_trigram_fts", "NEAR(" + " ".join(fts.quote(phrase[at:at + 3]) for at in trio)
                          + f", {trio[-1] - trio[0] - 1})")
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (NONE,)).fetchone():
            found["none"] = (NONE, " AND ".join(f'"{run}"' for run in runs))
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (PAIRS,)).fetchone():
        probe = fts.pair_probe(conn, PAIRS, phrase)
        if probe is not None:
            found["pairs"] = (PAIRS, probe)
    return {label: (f"SELECT rowid FROM {name} WHERE {name} MATCH ? LIMIT {LIMIT}", expression)
            for label, (name, expression) in found.items()}


_PROGRAM = ("import sqlite3, sys\nconn = sqlite3.connect(sys.argv[1])\n"
            "conn.execute('SELECT count(*) FROM sqlite_master').fetchone()\n"
            "rows = conn.execute(sys.argv[2], sys.argv[3:]).fetchall()\nprint(len(rows))\n")


def instructions(python, path, sql, *params):
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python, "-c", _PROGRAM,
                           path, sql, *params], capture_output=True, text=True, env=env)
    found = re.search(r"Collected\s*:\s*(\d+)", proc.stderr)
    if proc.returncode or not found:
        return None, proc.stderr.strip().splitlines()[-1:]
    return int(found.group(1)), int(proc.stdout.split()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", required=True, help="a COPY of a home (written to)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter measured (a clean venv)")
    parser.add_argument("--build", action="store_true", help="build the detail=none index, migrate the home")
    parser.add_argument("--phrases", default=",".join(PHRASES))
    args = parser.parse_args(argv)
    path = os.path.join(args.home, "state.db")
    report = {"built_seconds": build(args.home) if args.build else None, "bytes": {}, "phrases": {}}
    conn = sqlite3.connect(path)
    for name in ("tasks_trigram_fts", NONE, PAIRS):
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone():
            report["bytes"][name] = conn.execute(f"SELECT sum(length(block)) FROM {name}_data").fetchone()[0]
    floor, _ = instructions(args.python, path, "SELECT 1")
    report["floor"] = floor
    for phrase in args.phrases.split(","):
        measured = {}
        for label, (sql, expression) in probes(conn, phrase).items():
            total, rows = instructions(args.python, path, sql, expression)
            measured[label] = {"expression": expression, "instructions": None if total is None else total - floor,
                               "rows": rows}
        report["phrases"][phrase] = measured
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
