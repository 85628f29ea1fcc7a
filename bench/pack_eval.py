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

A second figure, ``efficiency``, measures how a pack spends its characters: the share of
a pack's characters that are content (titles, descriptions and next actions, note, memory
and snippet text, handoff text, fact triples; :data:`CONTENT_KEYS`) against the whole
pack as printed (canonical JSON: field names, ids, timestamps, counters and digests
included).  It is taken over every kind of pack on the same home: ``context`` of each
project's knowledge and chatter tasks, ``recall`` of each labelled query's task with every
related section on, ``resume`` and ``next --claim --recall`` with the default parameters,
and ``prime --format json`` of an agent holding a task per project; ``entries`` is the
same share over the packed entries alone (the objects and tables as printed; the budget
charges the objects and the tables' rows).

Measured (``efficiency`` / ``efficiency_bench_home`` ``overall``: whole pack, entries):

  pack format 1 (every entry carried all of its row's keys):  corpus home 0.125, 0.213;
                                                             bench home 0.290, 0.365
  pack format 2 (compact entries):                            corpus home 0.194, 0.396;
                                                             bench home 0.383, 0.525
  pack format 3 (a lean envelope as well):                    corpus home 0.244, 0.399;
                                                             bench home 0.423, 0.531
  pack format 4 (entry lists as tables, note and memory       corpus home 0.289, 0.496;
  dates, the header without the pack's task id):             bench home 0.482, 0.628
  pack format 5 (a column constant over a table hoisted      corpus home 0.309, 0.518;
  into its header; no default sections or budget, no        bench home 0.554, 0.669
  counter that is a table's row count, no never-leased
  lease, no bundle agent, no task status ``queued``):

Per pack kind on the bench home, format 3 -> 4 -> 5: context 0.461 -> 0.530 -> 0.616, recall
0.404 -> 0.456 -> 0.533, resume 0.364 -> 0.403 -> 0.443, prime_json 0.429 -> 0.497 -> 0.560.
What format 5 leaves around the content on the bench home is mostly what the spec names or
agents read: a recall's ``digest`` and ``core_digest`` (printed even when equal), its
``recalled_at``, resume's ``recall_digest``, ``lease_epoch`` and ``lease_expires_at`` beside its
bundle, ``used_chars``, ``truncated``, ``handoff_packed``, ``notes_pinned_packed``, prime's
``digest`` and ``held_recall_digest``, then ``pack_format``, the packs' ``task_id`` and the
entries' ids, kinds, sources and header rows.  Worked out from the shares (content is the
same 85,000 characters before and after), those 100 packs print about 154,000 characters and
0.60 would need about 11,800 of them gone: about as many as their digests and recall times.
The bench home's notes were all written on one date, so its date column is hoisted whole; a
home with notes on many dates scores somewhat lower.

A printed pack's tables are read back into entries (:func:`mindos.context.builder.decode`)
before content is counted, so content is counted exactly as before: the same keys, never a
column name.

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

from mindos.context import builder  # noqa: E402
from mindos.context import params as pack_params  # noqa: E402
from mindos.context import prime, recall  # noqa: E402
from mindos.core.canonical import canonical_json  # noqa: E402
from mindos.core import clock  # noqa: E402
from mindos.work import rows, tasks  # noqa: E402

SECTION_OF = {"note": "related_notes", "handoff": "related_handoffs", "fact": "related_facts",
              "memory": "related_semantic"}
PACK = dict(budget=200_000, related=5, related_scope="project", related_handoffs=3, related_facts=5,
            related_semantic=5)


# the keys whose values are content an agent reads (strings, or lists of strings)
CONTENT_KEYS = frozenset({"title", "via_task_title", "description", "next_action", "blocked_reason", "recap",
                          "content", "snippet", "objective", "evidence", "constraints", "decisions", "next_actions",
                          "risks", "files", "subject", "predicate", "object"})
# where each kind of pack keeps its packed entries (the rest is its envelope)
ENTRY_KEYS = ("task", "handoff", "dependencies", "notes", "related_notes", "related_handoffs", "dep_context",
              "related_sessions", "related_facts", "related_semantic", "receipts", "leases", "inbox", "constraints",
              "next", "held", "facts", "semantic", "sessions")


def content_chars(value):
    """The characters of ``value`` that are content (:data:`CONTENT_KEYS`), walked through (a
    table of a printed pack is read back into its entries first: its rows hold the content
    under the column names)."""
    if isinstance(value, dict):
        total = 0
        for key, item in value.items():
            if key in builder.TABLES and isinstance(item, list) and item and isinstance(item[0], list):
                total += content_chars(builder.TABLES[key].decode(item))
            elif key in CONTENT_KEYS and isinstance(item, str):
                total += len(item)
            elif key in CONTENT_KEYS and isinstance(item, list):  # a handoff's lists; prime's constraints are notes
                total += sum(len(part) if isinstance(part, str) else content_chars(part) for part in item)
            else:
                total += content_chars(item)
        return total
    if isinstance(value, list):
        return sum(content_chars(item) for item in value)
    return 0


def _entries(pack):
    """The packed entries of a flattened pack (recall bundles nest theirs under ``recall``)."""
    if isinstance(pack.get("recall"), dict):
        return _entries(pack["recall"])
    return [pack[key] for key in ENTRY_KEYS if pack.get(key)]


def efficiency(conn, corpus):
    """The content share of every kind of pack on the loaded ``corpus`` (see the module docstring)."""
    from mindos.context import pack as context

    packs = {"context": [], "recall": [], "resume": [], "next_recall": [], "prime_json": []}
    for project in corpus.PROJECTS:
        for suffix in ("notes", "filler"):
            packs["context"].append(context.pack_context(conn, f"{project.lower()}-{suffix}"))
    params = pack_params.make_params(**{**PACK, "budget": pack_params.DEFAULT_BUDGET})
    for number in range(len(corpus.QUERIES)):
        packs["recall"].append(builder.encode(recall.bundle(conn, f"probe-{number}", "eval-agent", params)))
    default = pack_params.make_params()
    for project in corpus.PROJECTS:
        agent = f"agent-{project.lower()}"
        packs["resume"].append(recall.resume(conn, f"{project.lower()}-notes", agent=agent, params=default))
        packs["prime_json"].append(prime.prime(conn, agent, fmt="json"))
        packs["next_recall"].append(recall.next_and_recall(conn, params=default, claim=True, owner=f"next-{agent}",
                                                           project=project))
    return _shares(packs)


def bench_home_efficiency(tasks_count=400, seed=7):
    """The content share of ``context``, ``recall`` (default parameters), ``resume`` and
    ``prime --format json`` on a home seeded the way bench/bench.py seeds its memory home
    (tasks with 5 notes each of 8-30 words on average, a handoff on one task in ten), at a
    small scale: a pack's share does not depend on how many other tasks there are."""
    import importlib.util

    # bench/bench.py by its path: a package named ``bench`` (the tests') may shadow it
    spec = importlib.util.spec_from_file_location("mindos_bench_seeding", os.path.join(HERE, "bench.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    home = tempfile.mkdtemp(prefix="mindos-pack-eff-")
    info = bench.seed_tasks(home, tasks_count, seed=seed)
    bench.seed_memory(info, 5 * tasks_count, tasks_count // 10)
    from mindos.context import pack as context
    from mindos.store import db

    conn = db.connect(home)
    try:
        default = pack_params.make_params()
        picked = info.ids[:: max(1, len(info.ids) // 40)][:40]
        packs = {"context": [context.pack_context(conn, task_id) for task_id in picked],
                 "recall": [builder.encode(recall.bundle(conn, task_id, "eval-agent", default)) for task_id in picked],
                 "resume": [], "prime_json": []}
        for number, task_id in enumerate(info.roots[:10]):
            agent = f"bench-agent-{number}"
            packs["resume"].append(recall.resume(conn, task_id, agent=agent, params=default))
            packs["prime_json"].append(prime.prime(conn, agent, fmt="json"))
        return _shares(packs)
    finally:
        conn.close()


def _shares(packs):
    report = {}
    all_content = all_chars = all_entry_chars = 0
    for name, found in packs.items():
        content = sum(content_chars(pack) for pack in found)
        chars = sum(len(canonical_json(pack)) for pack in found)
        entry_chars = sum(len(canonical_json(entry)) for pack in found for entry in _entries(pack))
        report[name] = {"packs": len(found), "content_share": round(content / chars, 3),
                        "entries_content_share": round(content / entry_chars, 3) if entry_chars else None}
        all_content, all_chars, all_entry_chars = all_content + content, all_chars + chars, all_entry_chars + entry_chars
    report["overall"] = {"content_share": round(all_content / all_chars, 3),
                         "entries_content_share": round(all_content / all_entry_chars, 3)}
    return report


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
    pack_efficiency = efficiency(conn, corpus)
    conn.close()
    clock.set_now(None)
    report = {"corpus": name if isinstance(name, str) else corpus.__name__, "queries": len(corpus.QUERIES),
              "filler_notes": filler_per_project * len(corpus.PROJECTS),
              "efficiency": pack_efficiency, "efficiency_bench_home": bench_home_efficiency(),
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
    for title, key in (("corpus home", "efficiency"), ("bench home", "efficiency_bench_home")):
        lines.append(f"{'pack (' + title + ')':<24} {'content share':>13}  {'of entries':>10}")
        for name, entry in report[key].items():
            share = "-" if entry["entries_content_share"] is None else f"{entry['entries_content_share']:.3f}"
            lines.append(f"{name:<24} {entry['content_share']:>13.3f}  {share:>10}")
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
