#!/usr/bin/env python3
"""Measure pack relevance: do recall's related sections carry the rows a careful person expects?

Uses the labelled corpus of bench/retrieval_corpus.py, loaded the way bench/retrieval_eval.py
loads it (six projects, notes, memories, facts and handoffs, replaced rows, filler notes).
Every labelled query becomes a task of its project whose title is the query's text, and its
pack is built with every related section on (project scope, the budget large enough that
nothing is dropped).  An expected row counts as found when the section of its kind packs it:

  note -> ``related_notes`` (``--related``), handoff -> ``related_handoffs``,
  fact -> ``related_facts``, memory -> ``related_semantic``.

Reported per query kind and per section: ``found`` (the share of expected rows packed, averaged
per query) and, for the temporal queries, ``outdated_packed`` (how often the replaced row is
packed: the sections never pack superseded, retracted or expired rows, so it should be 0).
The sections pack a few rows each, newest first or by BM25 (related notes), so this is the
measure any change to how packs match (stemming, groups, budgets) should be judged by.

``--corpus heldout`` runs the same over bench/heldout_corpus.py, the frozen held-out corpus.

Run:  python3 bench/pack_eval.py [--corpus first|heldout] [--filler N]   (JSON to stdout, a table to stderr)
"""

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (ROOT, HERE):
    if path not in sys.path:
        sys.path.insert(0, path)

import retrieval_eval  # noqa: E402

from mindos.context import params as pack_params  # noqa: E402
from mindos.context import recall  # noqa: E402
from mindos.core import clock  # noqa: E402
from mindos.work import rows, tasks  # noqa: E402

SECTION_OF = {"note": "related_notes", "handoff": "related_handoffs", "fact": "related_facts",
              "memory": "related_semantic"}
PACK = dict(budget=200_000, related=5, related_scope="project", related_handoffs=3, related_facts=5,
            related_semantic=5)


def packed_refs(pack):
    """``{(kind, id)}`` of every row the pack's related sections carry."""
    found = set()
    for kind, section in SECTION_OF.items():
        for entry in pack.get(section) or ():
            found.add((kind, entry["id"]))
    return found


def evaluate(home=None, filler_per_project=None, corpus="first"):
    """Build the corpus (``first`` or ``heldout``), pack a task per labelled query; return the report dict."""
    name = corpus
    corpus = retrieval_eval.load_corpus(corpus)
    if filler_per_project is None:
        filler_per_project = corpus.FILLER_PER_PROJECT
    home = home or tempfile.mkdtemp(prefix="mindos-pack-eval-")
    conn, keymap = retrieval_eval.build(home, filler_per_project, corpus)
    now = clock.now_iso()
    params = pack_params.make_params(**PACK)
    by_kind = {kind: {"queries": 0, "found": 0.0, "temporal": 0, "outdated_packed": 0} for kind in corpus.KINDS}
    by_section = {section: {"expected": 0, "found": 0} for section in SECTION_OF.values()}
    misses = []
    for number, (kind, text, project, expected, outdated) in enumerate(corpus.QUERIES):
        task = tasks.create(conn, task_id=f"probe-{number}", project=project or corpus.PROJECTS[0], title=text)
        pack = recall.build_pack(conn, rows.get(conn, task["id"]), params, now)
        packed = packed_refs(pack)
        hits = [key for key in expected if keymap[key] in packed]
        bucket = by_kind[kind]
        bucket["queries"] += 1
        bucket["found"] += len(hits) / len(expected)
        for key in expected:
            section = by_section[SECTION_OF[keymap[key][0]]]
            section["expected"] += 1
            section["found"] += key in hits
        if outdated:
            bucket["temporal"] += 1
            bucket["outdated_packed"] += keymap[outdated] in packed
        if len(hits) < len(expected):
            misses.append({"kind": kind, "query": text, "project": project,
                           "missed": [key for key in expected if key not in hits]})
    conn.close()
    clock.set_now(None)
    report = {"corpus": name if isinstance(name, str) else corpus.__name__, "queries": len(corpus.QUERIES),
              "filler_notes": filler_per_project * len(corpus.PROJECTS),
              "pack": PACK, "by_kind": {}, "by_section": {}, "misses": misses}
    total_found = total_queries = 0
    for kind, bucket in by_kind.items():
        entry = {"queries": bucket["queries"], "found": round(bucket["found"] / bucket["queries"], 3)}
        if bucket["temporal"]:
            entry["outdated_packed"] = round(bucket["outdated_packed"] / bucket["temporal"], 3)
        report["by_kind"][kind] = entry
        total_found += bucket["found"]
        total_queries += bucket["queries"]
    for section, bucket in by_section.items():
        report["by_section"][section] = {"expected": bucket["expected"],
                                         "found": round(bucket["found"] / bucket["expected"], 3)
                                         if bucket["expected"] else None}
    report["overall"] = {"found": round(total_found / total_queries, 3)}
    return report


def table(report):
    """The report as a plain-text table."""
    lines = [f"{'kind':<14} {'n':>3}  {'found':>6}  {'outdated packed':>15}"]
    for kind, entry in report["by_kind"].items():
        outdated = f"{entry['outdated_packed']:.3f}" if "outdated_packed" in entry else "-"
        lines.append(f"{kind:<14} {entry['queries']:>3}  {entry['found']:>6.3f}  {outdated:>15}")
    lines.append(f"{'overall':<14} {report['queries']:>3}  {report['overall']['found']:>6.3f}")
    lines.append("")
    for section, entry in report["by_section"].items():
        found = "-" if entry["found"] is None else f"{entry['found']:.3f}"
        lines.append(f"{section:<18} expected {entry['expected']:>3}  found {found}")
    return "\n".join(lines)


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description="Pack relevance: what recall's related sections carry.")
    retrieval_eval.add_corpus_flag(parser)
    retrieval_eval.add_filler_flag(parser)
    args = parser.parse_args(argv)
    report = evaluate(filler_per_project=args.filler, corpus=args.corpus)
    print(json.dumps(report, indent=2, sort_keys=True))
    print(table(report), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
