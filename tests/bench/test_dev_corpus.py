"""The second development corpus (bench/dev_corpus.py): well formed, in domains neither other
corpus covers, and memory-search keeps finding what it finds there."""

import os
import shutil
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import dev2_corpus  # noqa: E402
import dev_corpus as corpus  # noqa: E402
import heldout_corpus  # noqa: E402
import retrieval_corpus  # noqa: E402
import retrieval_eval  # noqa: E402


@pytest.mark.parametrize("corpus", [corpus, dev2_corpus], ids=["dev", "dev2"])
def test_every_query_names_rows_that_exist_and_every_kind_is_asked(corpus):
    keys = {key for key, _, _, _ in corpus.ROWS}
    assert len(keys) == len(corpus.ROWS)
    for kind, text, project, expected, outdated in corpus.QUERIES:
        assert kind in corpus.KINDS and text and project in corpus.PROJECTS
        assert set(expected) <= keys and (outdated is None or outdated in keys)
    assert {kind for kind, *_ in corpus.QUERIES} == set(corpus.KINDS)
    assert all(old in keys and new in keys for old, new in corpus.REPLACED)
    assert any(project == "" for _, _, project, _ in corpus.ROWS)  # fleet-wide rows


def test_its_domains_are_new():
    ours = {project.lower() for project in corpus.PROJECTS}
    assert not ours & {project.lower() for project in retrieval_corpus.PROJECTS + heldout_corpus.PROJECTS}


def test_the_engine_finds_what_it_finds_today(tmp_path):
    report = retrieval_eval.evaluate(home=str(tmp_path / "home"), corpus="dev")
    engine = report["overall"]["engine"]
    assert engine["recall@5"] >= 0.97 and engine["mrr"] >= 0.92 and engine["outdated_wins"] == 0
    assert report["by_kind"]["multi_hop"]["engine"]["recall@5"] >= 0.95
    assert report["by_kind"]["paraphrase"]["engine"]["recall@5"] >= 0.9
    assert report["by_kind"]["temporal"]["engine"]["recall@5"] == 1.0


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_recall_cost_counts_instructions_on_a_tiny_home(capsys, monkeypatch):
    import json

    import recall_cost

    # The floor process (the bare interpreter's import line) is the same for its three median
    # samples: count it once under callgrind (~4 s a run), as the two counted calls are.
    count_one, floors = recall_cost.instructions, []

    def instructions(argv, env):
        if argv[1:] != ["-c", recall_cost.FLOOR_CODE]:
            return count_one(argv, env)
        floors[:] = floors or [count_one(argv, env)]
        return floors[0]

    monkeypatch.setattr(recall_cost, "instructions", instructions)
    assert recall_cost.main(["--tasks", "40", "--calls", "1", "--interpreter", "current"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["floor"]["instructions"] == floors[0] > 0
    assert set(report["calls"]) == {"memory-search", "recall"}
    assert all(entry["ratio"] > 0.5 for entry in report["calls"].values())
    assert report["memory_embed"]["rows"] > 0 and 0 < report["learned"]["share"] < 1
