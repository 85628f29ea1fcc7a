"""The semantic layer's fusion (lexical ranking first, weighted reciprocal ranks), the
retrieval eval's --semantic switch, and the real-encoder adapter's plug-in path
(bench/encoders/minilm.py) without torch."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, make_task, script
from mindos.core import clock
from mindos.memory import embed, notes
from mindos.memory import memory_search as search
from test_embed import toy  # noqa: F401 (the fixture naming a toy encoder)

HERE = os.path.dirname(os.path.abspath(__file__))


def _lexical(*ids):
    return [{"kind": "note", "id": ident} for ident in ids]


def test_a_vector_ranking_alone_never_displaces_the_lexical_first_answer():
    """With the textbook k=60 a row both rankings place fifth and first outranked the lexical
    engine's first answer; now the lexical first answer keeps first place, a vector-only first
    row still enters the top five, and agreement near the top still lifts a row."""
    fused = embed.fuse(_lexical("a", "b", "c", "d", "e", "f"), [("note", "x"), ("note", "e"), ("note", "b")], 10)
    order = [key[1] for key, _, _, _ in fused]
    assert order[0] == "a"
    assert order.index("x") < 5
    assert order.index("b") == 1 and order.index("e") < order.index("c")
    scores = [score for _, score, _, _ in fused]
    assert scores == sorted(scores, reverse=True)
    assert fused[0] == (("note", "a"), 1.0, 1, None)


def test_equal_fused_scores_rank_the_better_lexical_rank_first():
    # lexical 1st alone: 2/(1+1) = 1.0; lexical 3rd and vector 1st: 2/4 + 1/2 = 1.0
    fused = embed.fuse(_lexical("z", "y", "a"), [("note", "a")], 3)
    assert [key[1] for key, _, _, _ in fused] == ["z", "a", "y"]
    assert fused[0][1] == fused[1][1] == 1.0


def test_semantic_search_keeps_the_lexical_first_answer_a_plugin_ranks_lower(conn, toy):
    make_task(conn, "t1", project="Data", title="ingest")
    texts = ["kafka consumers lag behind the orders topic and the consumers lag more each hour",
             "kafka consumers restarted after the deploy",
             "kafka consumers lag on the ingest cluster",
             "kafka topic retention raised, the broker disks are fine"]
    rows = []
    for text in texts:
        clock.advance(hours=1)
        rows.append(notes.add(conn, "t1", content=text))
    lexical = search.memory_search(conn, "kafka consumers lag", project="Data", limit=10)
    lexical_ids = [hit["id"] for hit in lexical]
    broker = rows[3]["id"]
    assert lexical_ids.index(broker) >= 2  # the plug-in's favourite is lexically weak
    toy("brokers")
    embed.embed(conn, apply=True)
    hits = search.semantic_search(conn, "kafka consumers lag", project="Data", limit=10)
    assert hits[0]["id"] == lexical_ids[0] and hits[0]["ranks"] == {"lexical": 1, "vector": None}
    found = {hit["id"]: hit for hit in hits}
    assert found[broker]["ranks"]["vector"] == 1 and hits.index(found[broker]) < 3


def _retrieval_eval(monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))  # the corpora are imported by name
    monkeypatch.syspath_prepend(HERE)
    import retrieval_eval

    return retrieval_eval


def test_the_eval_scores_memory_search_semantic_with_the_named_encoder(monkeypatch):
    monkeypatch.setenv(embed.ENV, "embedders:boom")  # the eval's own --embedder wins, then is restored
    evaluation = _retrieval_eval(monkeypatch)
    report = evaluation.evaluate(corpus="dev2", semantic=True, embedder="embedders:letters")
    assert os.environ[embed.ENV] == "embedders:boom"
    assert report["semantic"]["encoder"] == "embedders:letters" and report["semantic"]["dims"] == 3
    assert report["semantic"]["embedded"] > len(evaluation.load_corpus("dev2").ROWS)
    assert "encoder embedders:letters" in evaluation.table(report).splitlines()[0]
    builtin = evaluation.evaluate(corpus="dev2", semantic=True)
    assert builtin["semantic"]["encoder"] == embed.BUILTIN
    # the built-in encoder's --semantic never scores below plain memory-search's overall recall
    plain = evaluation.evaluate(corpus="dev2")
    assert "semantic" not in plain
    assert builtin["overall"]["engine"]["recall@5"] >= plain["overall"]["engine"]["recall@5"]
    assert builtin["overall"]["bm25"] == plain["overall"]["bm25"]
    json.dumps(report)


def test_the_eval_refuses_a_broken_encoder_in_one_line(monkeypatch, capsys):
    evaluation = _retrieval_eval(monkeypatch)
    assert evaluation.main(["--corpus", "dev2", "--semantic", "--embedder", "embedders:boom"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.strip().splitlines() == [err.strip()] and "the model is not loaded" in err
    with pytest.raises(SystemExit):
        evaluation.main(["--embedder", "embedders:letters"])  # --embedder needs --semantic


no_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is not None,
                              reason="torch is installed here: the adapter would load the real model")


@no_torch
def test_the_minilm_adapter_is_found_as_a_user_names_it_and_refused_without_torch(conn, home):
    """``MINDOS_EMBEDDER=bench.encoders.minilm:encode`` from a checkout: the module imports
    without torch (its imports are lazy); embedding without torch is one refusal."""
    make_task(conn, "t1", project="Data", title="ingest")
    notes.add(conn, "t1", content="kafka consumers lag")
    env = {embed.ENV: "bench.encoders.minilm:encode"}
    status = script("autopilot.py", "memory-status", home=home, env=env)
    assert status.returncode == 0 and json.loads(status.stdout)["encoder"] == "bench.encoders.minilm:encode"
    done = script("autopilot.py", "memory-embed", "--apply", home=home, env=env)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    assert "No module named" in done.stderr and "cannot load" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@no_torch
def test_the_eval_script_finds_the_adapter_beside_bench_py():
    """Run as a script, bench/ is first on sys.path and ``bench`` would be bench/bench.py:
    --embedder bench.encoders.minilm:encode still reaches the adapter (refused: no torch)."""
    done = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "retrieval_eval.py"), "--corpus", "dev2",
                           "--semantic", "--embedder", "bench.encoders.minilm:encode"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert "No module named" in done.stderr and "cannot load" not in done.stderr, done.stderr
