"""The held-out retrieval corpus (bench/heldout_corpus.py) keeps its shape and stays frozen.

The corpus measures whether retrieval generalises beyond the corpus it was tuned on, so it must
not drift: its content is pinned by a digest.  If this test fails because the corpus changed,
the change has to be deliberate (and the figures before and after are no longer comparable);
never edit the corpus to fit the engine.
"""

import collections
import os
import sys

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import heldout_corpus as corpus  # noqa: E402
import retrieval_eval  # noqa: E402

from mindos.core import canonical  # noqa: E402

DIGEST = "5e684321df5346a7dc1f3948eae5bf68db747772080c933421f9e0df105b20ce"
SURFACES = {"note", "memory", "fact", "handoff"}


def _data():
    return {name: getattr(corpus, name) for name in (
        "PROJECTS", "KINDS", "ROWS", "REPLACED", "RETRACT_REASONS", "QUERIES", "STEP_MINUTES",
        "FILLER_SUBJECTS", "FILLER_PREDICATES", "FILLER_QUALIFIERS", "FILLER_PER_PROJECT")}


def test_the_content_is_frozen():
    assert canonical.digest(_data()) == DIGEST, "bench/heldout_corpus.py changed: the held-out corpus is frozen"


def test_rows_cover_eight_projects_every_surface_and_fleet_wide_rows():
    keys = [key for key, _, _, _ in corpus.ROWS]
    assert len(keys) >= 500 and len(set(keys)) == len(keys)
    assert len(corpus.PROJECTS) == 8 and len(set(corpus.PROJECTS)) == 8
    per_project = collections.Counter(project for _, _, project, _ in corpus.ROWS)
    assert set(per_project) == set(corpus.PROJECTS) | {""}
    assert min(per_project[project] for project in corpus.PROJECTS) >= 40 and per_project[""] >= 20
    assert {surface for _, surface, _, _ in corpus.ROWS} == SURFACES
    for key, surface, project, text in corpus.ROWS:
        assert text.strip() and text == text.strip(), key
        if surface == "fact":
            assert len(text.split()) == 3, key
        if not project:
            assert surface in ("memory", "fact"), key


def test_every_surface_is_replaced_in_time_order():
    by_key = {row[0]: row for row in corpus.ROWS}
    position = {row[0]: number for number, row in enumerate(corpus.ROWS)}
    olds = [old for old, _ in corpus.REPLACED]
    assert len(set(olds)) == len(olds), "a row is replaced once"
    for old, new in corpus.REPLACED:
        assert old in by_key and new in by_key, (old, new)
        assert by_key[old][1] == by_key[new][1] and by_key[old][2] == by_key[new][2], (old, new)
        assert position[old] < position[new], (old, new)
    replaced_surfaces = collections.Counter(by_key[new][1] for _, new in corpus.REPLACED)
    assert set(replaced_surfaces) == SURFACES and min(replaced_surfaces.values()) >= 5
    assert any(by_key[new][2] == "" for _, new in corpus.REPLACED), "fleet-wide rows are replaced too"
    assert set(corpus.RETRACT_REASONS) == {old for old, new in corpus.REPLACED if by_key[new][1] == "fact"}
    assert corpus.STEP_MINUTES * len(corpus.ROWS) <= 90 * 24 * 60 < corpus.STEP_MINUTES * len(corpus.ROWS) * 1.01


def test_queries_cover_every_kind_and_name_existing_rows():
    keys = {row[0] for row in corpus.ROWS}
    replaced = dict(corpus.REPLACED)
    kinds = collections.Counter(kind for kind, _, _, _, _ in corpus.QUERIES)
    assert len(corpus.QUERIES) >= 150 and set(kinds) == set(corpus.KINDS)
    assert min(kinds.values()) >= 18
    assert set(corpus.KINDS) == {"exact", "morphological", "cross-project", "synonym", "multi-hop",
                                 "paraphrase", "temporal"}
    assert len({text for _, text, _, _, _ in corpus.QUERIES}) == len(corpus.QUERIES)
    for kind, text, project, expected, outdated in corpus.QUERIES:
        assert text.strip() and expected and set(expected) <= keys, text
        assert project is None or project in corpus.PROJECTS, text
        assert not set(expected) & set(replaced), f"{text}: expects a replaced row"
        if kind == "temporal":
            assert outdated and replaced.get(outdated) == expected[0], text
        else:
            assert outdated is None, text
        if kind == "multi-hop":
            assert len(expected) >= 2, text
    temporal = [q for q in corpus.QUERIES if q[0] == "temporal"]
    assert sum(len(q[3]) > 1 for q in temporal) >= 18, "most temporal queries also expect the change note"


def test_the_eval_loads_either_corpus():
    assert retrieval_eval.load_corpus("heldout") is corpus
    assert retrieval_eval.load_corpus("first").KINDS != corpus.KINDS
    parser = __import__("argparse").ArgumentParser()
    retrieval_eval.add_corpus_flag(parser)
    assert parser.parse_args([]).corpus == "first"
    assert parser.parse_args(["--corpus", "heldout"]).corpus == "heldout"


def test_the_loader_replaces_each_surface_its_own_way(tmp_path):
    """Replacing handoffs land on the task of the handoff they replace (superseding it); retracted
    facts carry the corpus's reason; the labelled rows span the 90 simulated days."""
    conn, keymap = retrieval_eval.build(str(tmp_path / "home"), 0, "heldout")
    try:
        assert len(keymap) == len(corpus.ROWS)
        by_key = {row[0]: row for row in corpus.ROWS}
        for old, new in corpus.REPLACED:
            surface, old_id = keymap[old]
            if surface == "handoff":
                row = conn.execute("SELECT superseded_by FROM handoffs WHERE id = ?", (old_id,)).fetchone()
                assert row[0] == keymap[new][1], (old, new)
            elif surface == "fact":
                row = conn.execute("SELECT retract_reason FROM facts WHERE id = ?", (old_id,)).fetchone()
                assert row[0] == corpus.RETRACT_REASONS[old]
            elif surface == "note":
                row = conn.execute("SELECT superseded_by FROM notes WHERE id = ?", (old_id,)).fetchone()
                assert row[0] == keymap[new][1] and by_key[new][1] == "note"
        first, last = conn.execute("SELECT min(created_at), max(created_at) FROM notes").fetchone()
        assert first.startswith("2026-01-05") and last.startswith("2026-04-0")
    finally:
        conn.close()
        retrieval_eval.clock.set_now(None)


def test_the_report_names_its_corpus_and_its_kinds():
    report = retrieval_eval.evaluate(filler_per_project=0, corpus="first")
    retrieval_eval.clock.set_now(None)
    first = retrieval_eval.load_corpus("first")
    assert report["corpus"] == "first" and list(report["by_kind"]) == list(first.KINDS)
    assert retrieval_eval.table(report).splitlines()[-1].startswith("overall")
