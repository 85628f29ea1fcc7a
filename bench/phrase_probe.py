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
  * ``pairs``: a contentless ``detail=none`` index of one token per space of each indexed
    column, the three characters before it and the three after (hex-encoded so that any
    character is one token; ASCII case folded, as LIKE folds), matched by the tokens of the
    query's inner spaces (:func:`pair_tokens`).  A rare phrase of common words has a rare
    pair.

Each figure is the instructions of ``SELECT rowid ... MATCH ? LIMIT 1000`` (what
``fts._rowids`` reads) minus those of the same program running ``SELECT 1``; rows is what
the statement returned.  Also printed: each index's size and build time.

It WRITES to the database it is given (two new tables): run it on a copy only, e.g.
  cp -r /work/scale-homes/home-100000 /tmp/me-h100k
  python3 bench/phrase_probe.py --db /tmp/me-h100k/state.db [--python PY] [--build]
``--build`` creates the two indexes (once); without it the existing ones are measured.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from mindos.store import fts  # noqa: E402

PHRASES = ("retry payments", "deploy gateway", "rate limit", "schema migration worker", "cache api")
COLUMNS = ("id", "project", "title", "description", "next_action", "blocked_reason")
NONE, PAIRS = "phrase_probe_tri_none", "phrase_probe_pairs"


def _pairs_of(column):
    """SQL: the space-separated pair tokens of one column (NULL when it has none): its words
    split at each ' ' (json_quote escapes everything else, so the array is always valid),
    each word's last three characters, a space and the next word's first three, folded as
    lower() folds (ASCII only, as LIKE) and hex-encoded."""
    words = f"json_each('[' || replace(json_quote({column}), ' ', '\",\"') || ']')"
    return (f"(SELECT group_concat(g, ' ') FROM (SELECT hex(lower(substr(value, -3) || ' ' ||"
            f" substr(lead(value) OVER (ORDER BY key), 1, 3))) AS g FROM {words}) WHERE g != '')")


def pair_tokens(text):
    """The pair tokens every row holding ``text`` has (one per inner space of ``text`` whose
    three characters before and after it are known: inside the text, or a whole word of it
    when a space bounds it on the other side), or [] when there is none."""
    words = text.split(" ")
    tokens = []
    for at in range(len(words) - 1):
        before, after = words[at], words[at + 1]
        if at == 0 and len(before) < 3:
            continue  # the text may start inside a longer word: its last three are unknown
        if at + 1 == len(words) - 1 and len(after) < 3:
            continue
        gram = before[-3:] + " " + after[:3]
        folded = "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in gram)
        tokens.append(folded.encode("utf-8", "surrogatepass").hex().upper())
    return tokens


def build(conn):
    started = time.perf_counter()
    conn.execute(f"CREATE VIRTUAL TABLE {NONE} USING fts5({', '.join(COLUMNS)}, content='tasks',"
                 " content_rowid='seq', tokenize='trigram', detail=none)")
    conn.execute(f"INSERT INTO {NONE}({NONE}) VALUES ('rebuild')")
    conn.commit()
    built = {NONE: time.perf_counter() - started}
    started = time.perf_counter()
    conn.execute(f"CREATE VIRTUAL TABLE {PAIRS} USING fts5(pairs, content='', detail=none)")
    text = " || ' ' || ".join(f"coalesce({_pairs_of(column)}, '')" for column in COLUMNS)
    conn.execute(f"INSERT INTO {PAIRS}(rowid, pairs) SELECT seq, {text} FROM tasks")
    conn.commit()
    built[PAIRS] = time.perf_counter() - started
    return built


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
    parser.add_argument("--db", required=True, help="a COPY of a home's state.db (two tables are added)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter measured (a clean venv)")
    parser.add_argument("--build", action="store_true", help="build the two candidate indexes first")
    parser.add_argument("--phrases", default=",".join(PHRASES))
    args = parser.parse_args(argv)
    import sqlite3

    conn = sqlite3.connect(args.db)
    report = {"built_seconds": build(conn) if args.build else None, "bytes": {}, "phrases": {}}
    for name in ("tasks_trigram_fts", NONE, PAIRS):
        report["bytes"][name] = conn.execute(f"SELECT sum(length(block)) FROM {name}_data").fetchone()[0]
    spans_conn = sqlite3.connect(args.db)
    floor, _ = instructions(args.python, args.db, "SELECT 1")
    report["floor"] = floor
    for phrase in args.phrases.split(","):
        spans = fts.trigram_spans(spans_conn, "tasks_trigram_fts", phrase)
        near = fts.trigram_probe(phrase, spans)
        runs = re.findall(r'"((?:[^"]|"")*)"', near)
        count = len(phrase) - 2
        third = min(range(count // 3, max(count // 3 + 1, 2 * count // 3)), key=lambda at: (spans.get(at, 0), at))
        first = phrase.lower().find(runs[0].replace('""', '"').lower()) if runs else -1
        probes = {"near": (f"SELECT rowid FROM tasks_trigram_fts WHERE tasks_trigram_fts MATCH ? LIMIT 1000", near)}
        if len(runs) == 2 and first >= 0:
            # the three runs, each as far from the first as the text puts it (NEAR with the widest gap)
            last = phrase.lower().rfind(runs[1].replace('""', '"').lower())
            trio = sorted({first, third, last})
            probes["near3"] = ("SELECT rowid FROM tasks_trigram_fts WHERE tasks_trigram_fts MATCH ? LIMIT 1000",
                               "NEAR(" + " ".join(fts.quote(phrase[at:at + 3]) for at in trio)
                               + f", {trio[-1] - trio[0] - 1})")
            probes["none"] = (f"SELECT rowid FROM {NONE} WHERE {NONE} MATCH ? LIMIT 1000",
                              " AND ".join(f'"{run}"' for run in runs))
        tokens = pair_tokens(phrase)
        if tokens:
            probes["pairs"] = (f"SELECT rowid FROM {PAIRS} WHERE {PAIRS} MATCH ? LIMIT 1000",
                               " AND ".join(f'"{token}"' for token in tokens))
        measured = {}
        for label, (sql, expression) in probes.items():
            total, rows = instructions(args.python, args.db, sql, expression)
            measured[label] = {"expression": expression, "instructions": None if total is None else total - floor,
                               "rows": rows}
        report["phrases"][phrase] = measured
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
