#!/usr/bin/env python3
"""Measure retrieval quality: memory-search against plain BM25, in the same run.

Builds a labelled corpus in a throwaway home (notes, memories, facts and handoffs, replaced
rows, seeded filler), runs every labelled query through three rankers and reports, per query
kind and overall:

  * ``recall@5`` -- the share of the expected rows found in the top 5 (averaged per query);
  * ``mrr`` -- mean reciprocal rank of the first expected row (0 when not in the top 50);
  * ``outdated_wins`` -- for temporal queries, how often the replaced row ranks above its
    replacement (or shows while the replacement does not).  memory-search is measured with
    ``--include-history`` here: without it outdated rows are never returned at all.

Rankers:
  * ``engine``        -- memory-search (stems, prefixes, synonyms, recency, supersession), scoped
                          to the asking project as an agent would call it;
  * ``bm25``          -- plain BM25: the raw query tokens OR-combined in each FTS index, scores
                          merged as-is, every row (no scope, no history awareness);
  * ``bm25_filtered`` -- plain BM25 with the same scope and outdated-row filter as the engine,
                          to separate the ranking gain from the filtering gain.

Corpora (``--corpus``):
  * ``first``   -- bench/retrieval_corpus.py (six projects, the default): the corpus the engine
                   was developed against;
  * ``dev``     -- bench/dev_corpus.py (eight other domains): a second development corpus,
                   to check a method on text it was not shaped on;
  * ``dev2``    -- bench/dev2_corpus.py (nine more domains): paraphrase questions sharing no
                   word with their answers, linked only by other rows of the home;
  * ``heldout`` -- bench/heldout_corpus.py (eight other domains, over 500 rows, 90 simulated
                   days): written without looking at the engine and frozen by a digest test;
                   it is never used to write synonyms or weights.

Semantic layer (``--semantic``): after loading the corpus, ``memory-embed --apply`` stores a
vector for every row from the encoder named by ``--embedder module:callable`` (the
``MINDOS_EMBEDDER`` plug-in point; default: the built-in encoder, whatever the environment
says), and the ``engine`` ranker asks ``memory-search --semantic`` (lexical and vector ranks
fused) instead of memory-search; the bm25 rankers are unchanged.  memory-search --semantic
takes no ``--include-history``, so its ``outdated_wins`` are read from that same ranking (it
never returns an outdated row).  The report then carries ``semantic``: the encoder, its
dimensions, the rows embedded and the embedding's seconds.  A real encoder's adapter:
bench/encoders/minilm.py (all-MiniLM-L6-v2; run with an interpreter that has
sentence-transformers, e.g. ``~/st-venv/bin/python bench/retrieval_eval.py --semantic
--embedder bench.encoders.minilm:encode``).

Run:  python3 bench/retrieval_eval.py [--corpus first|dev|dev2|heldout] [--semantic [--embedder module:callable]]
      (JSON to stdout, a table to stderr)
"""

import json
import os
import random
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (ROOT, HERE):
    if path not in sys.path:
        sys.path.insert(0, path)

import retrieval_corpus as corpus  # noqa: E402  (the default corpus)

from mindos.core import clock  # noqa: E402
from mindos.memory import handoffs, notes  # noqa: E402
from mindos.store import db  # noqa: E402
from mindos.work import tasks  # noqa: E402
from mindos.memory import facts, memories  # noqa: E402
from mindos.memory import memory_search as search  # noqa: E402

START = "2026-01-05T09:00:00Z"
TOP = 5
DEPTH = 50
CORPORA = {"first": "retrieval_corpus", "dev": "dev_corpus", "dev2": "dev2_corpus", "heldout": "heldout_corpus"}
STEP_MINUTES = 360  # time between labelled rows when the corpus does not say


def load_corpus(name="first"):
    """The corpus module called ``name`` (a key of CORPORA); a module is returned as it is."""
    if not isinstance(name, str):
        return name
    import importlib

    return importlib.import_module(CORPORA[name])


def _fact_parts(text):
    subject, predicate, obj = text.split()
    return subject, predicate, obj


def build(home, filler_per_project=None, corpus=corpus):
    """Load ``corpus`` (a name of CORPORA or a module) into a fresh home with
    ``filler_per_project`` filler notes per project (default: the corpus's own; half before the
    labelled rows, half after); return ``(conn, keymap)`` with key -> (kind, id).

    Labelled rows are ``corpus.STEP_MINUTES`` apart (default 6 hours); a replaced fact is
    retracted with its reason from ``corpus.RETRACT_REASONS`` (default "replaced"), and a
    replacing handoff is recorded on the task of the handoff it replaces, which supersedes it."""
    corpus = load_corpus(corpus)
    if filler_per_project is None:
        filler_per_project = corpus.FILLER_PER_PROJECT
    step = getattr(corpus, "STEP_MINUTES", STEP_MINUTES)
    reasons = getattr(corpus, "RETRACT_REASONS", {})
    clock.set_now(START)
    conn = db.connect(home)
    for project in corpus.PROJECTS:
        tasks.create(conn, task_id=f"{project.lower()}-notes", project=project, title=f"{project} knowledge")
        tasks.create(conn, task_id=f"{project.lower()}-filler", project=project, title=f"{project} chatter")
    rng = random.Random(7)

    def filler(count):
        for project in corpus.PROJECTS:
            for _ in range(count):
                text = " ".join(part for part in (rng.choice(corpus.FILLER_SUBJECTS), rng.choice(corpus.FILLER_PREDICATES),
                                                  rng.choice(corpus.FILLER_QUALIFIERS)) if part)
                notes.add(conn, f"{project.lower()}-filler", content=f"{text} ({project})")
            clock.advance(minutes=10)

    filler(filler_per_project // 2)
    replaced_by = {new: old for old, new in corpus.REPLACED}
    keymap = {}
    handoff_tasks = {}
    for key, surface, project, text in corpus.ROWS:
        clock.advance(minutes=step)
        task_id = f"{project.lower()}-notes" if project else None
        old = replaced_by.get(key)
        if surface == "note":
            if old:
                row = notes.supersede(conn, keymap[old][1], content=text)["note"]
            else:
                row = notes.add(conn, task_id, content=text)
            keymap[key] = ("note", row["id"])
        elif surface == "memory":
            row = memories.retain(conn, text, project=project or None)
            if old:
                memories.forget(conn, keymap[old][1], superseded_by=row["id"])
            keymap[key] = ("memory", row["id"])
        elif surface == "fact":
            if old:
                facts.retract(conn, keymap[old][1], reason=reasons.get(old, "replaced"))
            subject, predicate, obj = _fact_parts(text)
            row = facts.assert_fact(conn, subject=subject, predicate=predicate, obj=obj, source="eval", task=task_id)
            keymap[key] = ("fact", row["id"])
        else:
            handoff_task = handoff_tasks.get(old) or f"{key.replace('.', '-')}"
            if not old:
                tasks.create(conn, task_id=handoff_task, project=project, title=f"{project} work item")
            handoff_tasks[key] = handoff_task
            row = handoffs.record(conn, handoff_task, from_agent="hermes", to_agent="codex", objective=text)
            keymap[key] = ("handoff", row["id"])
    filler(filler_per_project - filler_per_project // 2)
    return conn, keymap


def _ranked_keys(hits, by_ref):
    return [by_ref.get((hit["kind"], hit["id"])) for hit in hits]


def _score(ranked, expected):
    top = ranked[:TOP]
    recall = sum(1 for key in expected if key in top) / len(expected)
    rr = 0.0
    for position, key in enumerate(ranked[:DEPTH], 1):
        if key in expected:
            rr = 1.0 / position
            break
    return recall, rr


def _outdated_wins(ranked, new, old):
    if old not in ranked:
        return False
    return new not in ranked or ranked.index(old) < ranked.index(new)


def _importable(embedder):
    """Make ``embedder``'s module importable as it is from the checkout: run as a script, this
    directory is first on sys.path, so ``bench`` would be bench/bench.py, not this package."""
    if embedder.split(".", 1)[0] == "bench" and "bench" not in sys.modules:
        import types

        package = types.ModuleType("bench")
        package.__path__ = [HERE]
        sys.modules["bench"] = package


def evaluate(home=None, filler_per_project=None, limit=DEPTH, corpus="first", semantic=False, embedder=None):
    """Build the corpus (``first`` or ``heldout``) and run every query through every ranker;
    return the report dict.

    ``filler_per_project`` scales the distractor notes (the labelled rows stay the same),
    to check that candidate selection still finds them in a large home; ``limit`` is the
    hits asked of memory-search (an agent's usual 10 sizes its candidate pool smaller than
    the default DEPTH).  ``semantic``: the engine is memory-search --semantic after every row
    is embedded by ``embedder`` (``module:callable``, named to the semantic layer as
    MINDOS_EMBEDDER would name it; None: the built-in encoder, whatever the environment says)."""
    corpus_name = corpus if isinstance(corpus, str) else getattr(corpus, "__name__", "custom")
    corpus = load_corpus(corpus)
    if filler_per_project is None:
        filler_per_project = corpus.FILLER_PER_PROJECT
    home = home or tempfile.mkdtemp(prefix="mindos-retrieval-")
    conn, keymap = build(home, filler_per_project, corpus)
    try:  # (build pinned the clock)
        return _run(conn, keymap, corpus, corpus_name, filler_per_project, limit, semantic, embedder)
    finally:
        conn.close()
        clock.set_now(None)


def _run(conn, keymap, corpus, corpus_name, filler_per_project, limit, semantic, embedder):
    """:func:`evaluate`'s report over the built home ``conn`` (``keymap``: the corpus keys of
    its rows); the caller closes the connection and unpins the clock."""
    by_ref = {ref: key for key, ref in keymap.items()}
    now = clock.now_iso()
    rankers = {
        "engine": lambda q, project, history: search.memory_search(
            conn, q, project=project, limit=limit, include_history=history, now=now),
        "bm25": lambda q, project, history: search.plain_bm25_search(
            conn, q, project=None, include_outdated=True, limit=DEPTH, now=now),
        "bm25_filtered": lambda q, project, history: search.plain_bm25_search(
            conn, q, project=project, include_outdated=history, limit=DEPTH, now=now),
    }
    embedded = None
    if semantic:
        from mindos.memory import embed
    
        env = {}
        if embedder:
            _importable(embedder)
            env[embed.ENV] = embedder
        done = embed.embed(conn, apply=True, env=env)
        embedded = {"encoder": done["encoder"], "dims": done["dims"], "embedded": sum(done["embedded"].values()),
                    "embed_seconds": done["seconds"]}
        rankers["engine"] = lambda q, project, history: search.semantic_search(
            conn, q, project=project, limit=limit, now=now, env=env)
    totals = {name: {kind: {"queries": 0, "recall": 0.0, "rr": 0.0, "outdated_wins": 0, "temporal": 0}
                     for kind in corpus.KINDS} for name in rankers}
    misses = []
    for kind, text, project, expected, outdated in corpus.QUERIES:
        for name, rank in rankers.items():
            ranked = _ranked_keys(rank(text, project, False), by_ref)
            recall, rr = _score(ranked, expected)
            bucket = totals[name][kind]
            bucket["queries"] += 1
            bucket["recall"] += recall
            bucket["rr"] += rr
            if outdated:
                history = _ranked_keys(rank(text, project, True), by_ref)
                bucket["temporal"] += 1
                bucket["outdated_wins"] += _outdated_wins(history, expected[0], outdated)
            if name == "engine" and recall < 1:
                misses.append({"kind": kind, "query": text, "project": project, "expected": list(expected),
                               "top5": ranked[:TOP]})
    report = {"corpus": corpus_name, "rows": len(corpus.ROWS),
              "filler_notes": filler_per_project * len(corpus.PROJECTS), "engine_limit": limit,
              "projects": len(corpus.PROJECTS), "queries": len(corpus.QUERIES), "by_kind": {}, "overall": {},
              "engine_misses": misses}
    if semantic:
        report["semantic"] = embedded
    for name in rankers:
        all_q = all_t = 0
        all_recall = all_rr = all_wins = 0.0
        for kind in corpus.KINDS:
            bucket = totals[name][kind]
            entry = {"recall@5": round(bucket["recall"] / bucket["queries"], 3),
                     "mrr": round(bucket["rr"] / bucket["queries"], 3)}
            if bucket["temporal"]:
                entry["outdated_wins"] = round(bucket["outdated_wins"] / bucket["temporal"], 3)
            report["by_kind"].setdefault(kind, {"queries": bucket["queries"]})[name] = entry
            all_q += bucket["queries"]
            all_recall += bucket["recall"]
            all_rr += bucket["rr"]
            all_t += bucket["temporal"]
            all_wins += bucket["outdated_wins"]
        report["overall"][name] = {"recall@5": round(all_recall / all_q, 3), "mrr": round(all_rr / all_q, 3),
                                   "outdated_wins": round(all_wins / all_t, 3) if all_t else 0.0}
    return report


def table(report):
    """The report as a plain-text table."""
    names = ("engine", "bm25", "bm25_filtered")
    lines = [f"engine: memory-search --semantic, encoder {report['semantic']['encoder']}"] if "semantic" in report else []
    lines += [f"{'kind':<14} {'n':>3}  " + "  ".join(f"{name + ' r@5/mrr/old':>28}" for name in names)]
    rows = list(report["by_kind"].items()) + [("overall", {"queries": report["queries"], **report["overall"]})]
    for kind, entry in rows:
        cells = []
        for name in names:
            item = entry[name]
            old = f"{item['outdated_wins']:.3f}" if "outdated_wins" in item and (kind in ("temporal", "overall")) else "  -  "
            cells.append(f"{item['recall@5']:>10.3f} /{item['mrr']:>6.3f} / {old:>5}")
        lines.append(f"{kind:<14} {entry['queries']:>3}  " + "  ".join(f"{cell:>28}" for cell in cells))
    return "\n".join(lines)


def add_filler_flag(parser):
    """``--filler N``: the distractor notes per project the corpus is built with."""
    parser.add_argument("--filler", type=int, default=None,
                        help="filler notes per project (default: the corpus's own, 40 for both)")


def add_corpus_flag(parser):
    """``--corpus first|dev|dev2|heldout``: which labelled corpus to build."""
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="first",
                        help="first: bench/retrieval_corpus.py (default); dev: bench/dev_corpus.py, a second"
                             " development corpus in other domains; dev2: bench/dev2_corpus.py, paraphrase"
                             " questions linked to their answers only by other rows; heldout:"
                             " bench/heldout_corpus.py, the frozen corpus written without looking at the engine")


def add_semantic_flags(parser):
    """``--semantic [--embedder module:callable]``: score memory-search --semantic instead."""
    parser.add_argument("--semantic", action="store_true",
                        help="embed every row (memory-embed --apply) and score memory-search --semantic as the engine")
    parser.add_argument("--embedder", metavar="MODULE:CALLABLE", default=None,
                        help="the encoder for --semantic, as MINDOS_EMBEDDER names one (default: the built-in"
                             " encoder), e.g. bench.encoders.minilm:encode")


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description="Retrieval quality: memory-search against plain BM25.")
    add_corpus_flag(parser)
    add_filler_flag(parser)
    parser.add_argument("--limit", type=int, default=DEPTH, help=f"hits asked of memory-search (default {DEPTH})")
    add_semantic_flags(parser)
    args = parser.parse_args(argv)
    if args.embedder and not args.semantic:
        parser.error("--embedder needs --semantic")
    from mindos.errors import InvalidInput, Refused

    try:
        report = evaluate(filler_per_project=args.filler, limit=args.limit, corpus=args.corpus,
                          semantic=args.semantic, embedder=args.embedder)
    except (InvalidInput, Refused) as exc:
        print(f"retrieval_eval: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2, sort_keys=True))
    print(table(report), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
