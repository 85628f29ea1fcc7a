"""The optional semantic layer: memory-embed, memory-status, memory-search --semantic, with the
built-in learned encoder and a toy plug-in (tests/memory/embedders.py)."""

import math
import os

import pytest

from conftest import make_task
from mindos.context import pack as context
from mindos.core import clock
from mindos.errors import InvalidInput, Refused
from mindos.memory import embed, facts, handoffs, memories, notes
from mindos.memory import memory_search as search

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.syspath_prepend(HERE)

    def use(name):
        monkeypatch.setenv(embed.ENV, f"embedders:{name}")

    return use


def _home(conn):
    make_task(conn, "t1", project="Data", title="ingest")
    for n in range(3):
        clock.advance(hours=1)
        notes.add(conn, "t1", content=f"kafka consumers lag behind the orders topic during batch {n}")
    clock.advance(hours=1)
    target = notes.add(conn, "t1", content="Lag spikes traced to a slow enrichment call")
    memories.retain(conn, "orders topic keeps seven days of events", project="Data")
    facts.assert_fact(conn, subject="service-ingest", predicate="uses", obj="kafka-3", source="codex")
    handoffs.record(conn, "t1", from_agent="codex", objective="consumer lag dashboards added")
    return target


def _vectors(conn):
    return conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]


def test_dry_run_reports_what_lacks_a_vector_and_writes_nothing(conn):
    _home(conn)
    report = embed.embed(conn)
    assert report["applied"] is False and report["encoder"] == embed.BUILTIN
    assert report["lacking"] == {"note": 4, "memory": 1, "fact": 1, "handoff": 1}
    assert _vectors(conn) == 0


def test_apply_embeds_every_row_once_with_the_builtin_encoder(conn):
    _home(conn)
    report = embed.embed(conn, apply=True)
    assert report["embedded"] == {"note": 4, "memory": 1, "fact": 1, "handoff": 1} and report["dims"] == embed.DIMS
    assert _vectors(conn) == 7
    again = embed.embed(conn, apply=True)
    assert again["lacking"] == dict.fromkeys(embed.SURFACES, 0) and _vectors(conn) == 7
    events = conn.execute("SELECT count(*) FROM audit_events WHERE action = 'memory_embedded'").fetchone()[0]
    assert events == 1
    status = embed.status(conn)
    assert status["coverage"] == 1.0 and status["encoder"] == embed.BUILTIN and status["builtin"] is True
    assert status["dims"] == embed.DIMS and status["learned"]["rows"] == 7
    notes.add(conn, "t1", content="a new note after embedding")
    assert embed.status(conn)["coverage"] < 1.0 and embed.embed(conn)["lacking"]["note"] == 1


def test_builtin_vectors_bring_learned_associates_close():
    encoder = embed.LearnedEncoder({"consumers": 3, "lag": 4, "dashboard": 3}, 100,
                                   {"consumers": [("lag", 1.0)], "lag": [("consumers", 0.9)]})
    consumers, lag, dashboard = encoder(["consumers", "lag spikes", "dashboard"])

    def cosine(a, b):
        return sum(x * y for x, y in zip(a, b))

    assert cosine(consumers, lag) > cosine(consumers, dashboard)
    assert math.isclose(sum(x * x for x in consumers), 1.0)
    assert encoder(["consumers"]) == [consumers]  # deterministic


def test_semantic_search_fuses_lexical_and_vector_ranks(conn):
    target = _home(conn)
    embed.embed(conn, apply=True)
    hits = search.semantic_search(conn, "why did the consumers fall behind", project="Data", limit=10)
    assert hits and all(set(hit["ranks"]) == {"lexical", "vector"} for hit in hits)
    assert all(hit["ranks"]["lexical"] or hit["ranks"]["vector"] for hit in hits)
    found = {(hit["kind"], hit["id"]): hit for hit in hits}
    assert found[("note", target["id"])]["ranks"]["vector"]  # no query word, close through "lag"
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert search.semantic_search(conn, "why did the consumers fall behind", project="Data", limit=10) == hits


def test_a_toy_plugin_encoder_is_used_and_named(conn, toy):
    _home(conn)
    toy("letters")
    assert embed.status(conn)["encoder"] == "embedders:letters"
    report = embed.embed(conn, apply=True)
    assert report["encoder"] == "embedders:letters" and report["dims"] == 3
    status = embed.status(conn)
    assert status["coverage"] == 1.0 and status["builtin"] is False and status["dims"] == 3
    hits = search.semantic_search(conn, "kafka consumers", project="Data", limit=3)
    assert hits and any(hit["ranks"]["vector"] for hit in hits)
    # switching back to the built-in encoder: every row lacks a vector from it again
    os.environ.pop(embed.ENV)
    assert embed.embed(conn)["lacking"]["note"] == 4
    assert embed.status(conn)["other_encoders"] == {"embedders:letters": 7}


@pytest.mark.parametrize("name, message", [
    ("short", "vectors for"), ("ragged", "a vector of"), ("nan", "non-finite"), ("boom", "the model is not loaded"),
    ("NOT_CALLABLE", "not callable"), ("missing_one", "cannot load"),
])
def test_a_broken_encoder_is_refused_and_nothing_is_written(conn, toy, name, message):
    _home(conn)
    toy(name)
    with pytest.raises(Refused, match=message):
        embed.embed(conn, apply=True)
    assert _vectors(conn) == 0


@pytest.mark.parametrize("value", ["nocolon", ":x", "mod:", "a b:c", "os:system; rm"])
def test_a_malformed_setting_is_a_usage_error(conn, monkeypatch, value):
    monkeypatch.setenv(embed.ENV, value)
    with pytest.raises(InvalidInput, match="MINDOS_EMBEDDER"):
        embed.status(conn)


def test_packs_never_read_vectors(conn):
    _home(conn)
    before = context.pack_context(conn, "t1")
    embed.embed(conn, apply=True)
    assert context.pack_context(conn, "t1") == before


def test_the_doors(conn, cli, cli_json, toy):
    _home(conn)
    assert cli_json("autopilot", "memory-embed")["applied"] is False
    assert cli_json("autopilot", "memory-embed", "--apply")["embedded"]["note"] == 4
    assert cli_json("autopilot", "memory-status")["coverage"] == 1.0
    hits = cli_json("autopilot", "memory-search", "kafka consumers", "--project", "Data", "--semantic")
    assert hits and "ranks" in hits[0]
    rc, out, err = cli("autopilot", "memory-search", "kafka", "--semantic", "--include-history")
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    toy("boom")
    rc, out, err = cli("autopilot", "memory-embed", "--apply")
    assert rc == 1 and out == "" and "the model is not loaded" in err and "Traceback" not in err
