"""Learned term associations: co-occurrence counts kept in SQLite, learned on write, relearned
by fts-rebuild, used by memory-search to bridge vocabulary gaps; deterministic."""

from conftest import make_task
from mindos.core import clock
from mindos.memory import facts, handoffs, learned, memories, notes, retrieval
from mindos.memory import memory_search as search
from mindos.recovery import reindex


def _counts(conn):
    """The learned counts by term text (term numbers depend on the order terms were met)."""
    return (sorted(tuple(row) for row in conn.execute("SELECT term, df FROM term_df")),
            sorted(tuple(row) for row in conn.execute("SELECT a.term, b.term, p.n FROM term_pairs p"
                                                      " JOIN term_df a ON a.id = p.term JOIN term_df b ON b.id = p.other")))


def _stream_home(conn):
    """A home whose notes talk about consumers together with lag, and one note about the lag
    itself that never says "consumers"."""
    make_task(conn, "ing", project="Data", title="ingest")
    make_task(conn, "misc", project="Data", title="misc")
    for n in range(3):
        clock.advance(hours=1)
        notes.add(conn, "ing", content=f"kafka consumers lag behind the orders topic during batch {n}")
    for n in range(30):
        clock.advance(hours=1)
        notes.add(conn, "misc", content=f"dashboard panel {n} renders the weekly revenue chart")
    clock.advance(hours=1)
    target = notes.add(conn, "misc", content="Lag spikes traced to a slow enrichment call in the pipeline")
    for n in range(12):  # newer rows naming a query word but nothing about the backlog
        clock.advance(hours=1)
        notes.add(conn, "misc", content=f"the release train fell on holiday {n}")
    return target


def test_terms_drop_stopwords_numbers_and_short_words():
    assert learned.terms("The DB pool is 10 and the pool-size is ok") == ["pool", "size"]
    assert len(learned.terms(" ".join(f"word{n}x" for n in range(100)))) == learned.MAX_TERMS


def test_every_write_surface_is_learned_in_its_transaction(conn):
    make_task(conn, "t1", project="Shop")
    notes.add(conn, "t1", content="checkout latency grows with cart size")
    memories.retain(conn, "checkout latency budget is tight", project="Shop")
    facts.assert_fact(conn, subject="service-checkout", predicate="uses", obj="redis-7", source="codex")
    handoffs.record(conn, "t1", from_agent="codex", objective="checkout latency measured")
    marks = dict(conn.execute("SELECT surface, upto FROM learned_upto").fetchall())
    assert set(marks) == {"note", "memory", "fact", "handoff"}
    df = dict(_counts(conn)[0])
    assert df["checkout"] == 4 and df["latency"] == 3 and df["redis"] == 1
    assert conn.execute("SELECT p.n FROM term_pairs p JOIN term_df a ON a.id = p.term JOIN term_df b ON b.id = p.other"
                        " WHERE a.term = 'checkout' AND b.term = 'latency'").fetchone()[0] == 3


def test_catch_up_is_bounded_and_rebuild_gives_the_same_counts(conn):
    make_task(conn, "t1")
    for n in range(5):
        notes.add(conn, "t1", content=f"queue depth alarm fired on shard {n} worker")
    incremental = _counts(conn)
    with conn:  # rows written behind the engine's back (an import): learned a few per write
        for n in range(learned.CATCH_UP + 10):
            conn.execute("INSERT INTO notes(task_id, kind, content, source, created_at) VALUES (?,?,?,?,?)",
                         ("t1", "fact", f"raw imported queue note {n}", "operator", clock.now_iso()))
    with conn:
        assert learned.catch_up(conn) == learned.CATCH_UP
        assert learned.catch_up(conn) == 10
        assert learned.catch_up(conn) == 0
    caught_up = _counts(conn)
    with conn:
        report = learned.rebuild(conn)
    assert report["rows"] == 5 + learned.CATCH_UP + 10
    assert _counts(conn) == caught_up  # integer counts: order of learning does not matter
    assert incremental != caught_up


def test_associates_are_strong_shared_neighbours_and_common_words_lend_nothing(conn):
    _stream_home(conn)
    found = learned.associates(conn, ["consumers", "behind", "dashboard", "nothing"])
    assert "lag" in [word for word, _ in found["consumers"]]
    assert all(strength >= learned.MIN_STRENGTH for _, strength in found["consumers"])
    assert "behind" not in [word for word, _ in found["consumers"]]  # a word of the query itself
    assert "nothing" not in found
    assert learned.associates(conn, []) == {}


def test_memory_search_finds_the_paraphrase_through_learned_associations(conn, monkeypatch):
    target = _stream_home(conn)
    query = "why did the consumers fall behind"
    # the learned layer alone: the shipped everyday readings ("fall behind" -> lag) switched off
    monkeypatch.setattr(retrieval, "everyday_readings", lambda tokens: {})
    hits = search.memory_search(conn, query, project="Data", limit=5)
    assert ("note", target["id"]) in [(hit["kind"], hit["id"]) for hit in hits]
    # without the learned associations, stored or lent by the candidates (and the feedback,
    # which also bridges it: see test_retrieval_feedback.py) the note shares no word with the query
    saved = learned.expansions
    try:
        learned.expansions = lambda conn, groups: {}
        monkeypatch.setattr(search, "FEEDBACK_WEIGHT", 0.0)
        monkeypatch.setattr(learned, "LOCAL_ASSOCIATES", 0)
        plain = search.memory_search(conn, query, project="Data", limit=5)
    finally:
        learned.expansions = saved
    assert ("note", target["id"]) not in [(hit["kind"], hit["id"]) for hit in plain]
    direct = [hit for hit in hits if "consumers" in hit["text"]]
    assert direct and hits.index(direct[0]) < [h["id"] for h in hits].index(target["id"])  # words beat associates


def test_associations_are_deterministic_for_identical_state(conn):
    _stream_home(conn)
    groups = retrieval.groups("why did the consumers fall behind")
    assert learned.expansions(conn, groups) == learned.expansions(conn, groups)
    first = search.memory_search(conn, "why did the consumers fall behind", project="Data")
    with conn:
        learned.rebuild(conn)
    assert search.memory_search(conn, "why did the consumers fall behind", project="Data") == first


def test_fts_rebuild_relearns_through_the_door(conn, cli_json):
    _stream_home(conn)
    with conn:
        conn.execute("DELETE FROM term_pairs")
    report = cli_json("ops", "fts-rebuild")
    assert report["learned"]["rows"] == 3 + 30 + 1 + 12 and report["learned"]["pairs"] > 0
    assert "learned" not in cli_json("ops", "fts-rebuild", "--dry-run")
    assert "learned" not in reindex.rebuild(conn)  # the nanny's repair runs leave it alone


def test_a_database_without_the_tables_searches_as_before(conn):
    make_task(conn, "t1", project="Shop")
    notes.add(conn, "t1", content="checkout canary lane")
    with conn:
        conn.execute("DROP TABLE term_pairs")
    assert learned.associates(conn, ["checkout"]) == {}
    notes.add(conn, "t1", content="checkout second lane")  # writes skip learning
    assert search.memory_search(conn, "checkout", project="Shop")


def test_the_bulk_read_gives_every_word_the_associates_a_query_gets(conn):
    _stream_home(conn)
    df, rows, context = learned.every_associate(conn)
    assert rows == learned.rows_learned(conn) and df["consumers"] == 3
    for word in ("consumers", "lag", "kafka", "dashboard"):
        assert context.get(word) == learned.associates(conn, [word], rare=False).get(word), word
    assert context["consumers"]


def test_a_batch_import_is_learned_in_one_pass(conn, tmp_path, monkeypatch):
    import json

    bank = tmp_path / "bank.jsonl"
    bank.write_text("".join(json.dumps({"content": f"kafka consumers lag behind topic {n}", "project": "Data",
                                        "created_at": "2025-01-02T03:04:05Z"}) + "\n"
                            for n in range(5)))
    passes = []
    real = learned.catch_up
    monkeypatch.setattr(learned, "catch_up", lambda conn, limit=learned.CATCH_UP: passes.append(limit) or real(conn, limit))
    assert memories.import_bank(conn, str(bank), apply=True)["imported"] == 5
    assert passes == [learned.CATCH_UP + 5]  # one pass for the batch, never one per row
    assert dict(conn.execute("SELECT term, df FROM term_df"))["consumers"] == 5


def test_coverage_counts_an_associate_only_where_the_group_misses():
    groups = retrieval.groups("consumers lag")
    idf = [1.0, 1.0]
    plain = retrieval.coverage_of(groups, idf)
    bridged = retrieval.coverage_of(groups, idf, {0: [("kafka", 0.4)]})
    assert plain("kafka lag") == 0.5 and bridged("kafka lag") == 0.7
    assert bridged("consumers lag") == plain("consumers lag") == 1.0


def test_a_rare_words_pairs_seen_once_count_a_common_words_do_not(conn, monkeypatch):
    make_task(conn, "gym", project="Gym", title="front desk")
    notes.add(conn, "gym", content="members locked out before opening: door controller schedule reset")
    for n in range(learned.RARE_DF + 2):
        clock.advance(hours=1)
        notes.add(conn, "gym", content=f"weekly towel order {n} placed with the laundry")
    notes.add(conn, "gym", content="towel rail squeaks near the sauna")
    found = learned.associates(conn, ["locked", "towel"])
    # "locked" (one row) lends its neighbours, seen once; "towel" (in more than RARE_DF rows)
    # lends only pairs seen in MIN_PAIR rows or more ("order" and "weekly", never "rail")
    assert {term for term, _ in found["locked"]} <= {"members", "out", "opening", "door", "controller", "before"}
    assert found["locked"] and "rail" not in {term for term, _ in found.get("towel", ())}
    monkeypatch.setattr(learned, "RARE_DF", 0)  # every word needs MIN_PAIR rows: a young home lends nothing
    assert "locked" not in learned.associates(conn, ["locked", "towel"])


def test_memory_search_bridges_through_a_pair_seen_once(conn, monkeypatch):
    monkeypatch.setattr(retrieval, "everyday_readings", lambda tokens: {})
    monkeypatch.setattr(search, "FEEDBACK_WEIGHT", 0.0)  # the associations alone
    make_task(conn, "gym", project="Gym", title="front desk")
    notes.add(conn, "gym", content="members lockout again, controller firmware suspected")
    target = notes.add(conn, "gym", content="Door controller firmware resets the access schedule after a power cut")
    for n in range(10):
        clock.advance(hours=1)
        notes.add(conn, "gym", content=f"weekly towel order {n} placed with the laundry")
    hits = [(hit["kind"], hit["id"]) for hit in search.memory_search(conn, "why the lockout", project="Gym")]
    assert ("note", target["id"]) in hits
    monkeypatch.setattr(learned, "RARE_DF", 0)
    hits = [(hit["kind"], hit["id"]) for hit in search.memory_search(conn, "why the lockout", project="Gym")]
    assert ("note", target["id"]) not in hits
