"""Retrieval quality: stems, prefixes, synonyms, memory-search (mindos/memory/retrieval.py),
and the measured evaluation against plain BM25 (bench/retrieval_eval.py)."""

import json
import os
import sys

import pytest

from mindos.core import clock
from mindos.memory import handoffs, notes
from mindos.errors import InvalidInput
from mindos.memory import facts, memories, retrieval
from mindos.memory import memory_search as search
from conftest import ROOT, make_task, scoped_facts


@pytest.mark.parametrize("word, stem", [("deployed", "deploy"), ("deploying", "deploy"), ("retries", "retry"),
                                        ("caching", "cache"), ("connection", "connect"), ("stopped", "stop")])
def test_stems(word, stem):
    assert stem in retrieval.stems(word)


def test_short_words_and_numbers_are_not_stemmed():
    assert retrieval.stems("api") == set() and retrieval.stems("2026") == set()


def test_stems_never_widen_into_a_vocabulary():
    """A 3-letter root would match unrelated words (tim* -> timeout) and merge their
    postings on every search; y becomes i only where English spells it so (retries, not
    gateways)."""
    assert retrieval.stems("time") == set() and retrieval.stems("kube") == set()
    assert "cach" in retrieval.stems("cache") and "polici" in retrieval.stems("policy")
    assert retrieval.stems("gateway") == set() and retrieval.stems("deploy") == set()
    assert retrieval.stems("payments") == {"payment"} and retrieval.stems("runs") == {"run"}  # not pay*
    assert retrieval.Group("k8s").expression() == '("k8s" OR "kube" OR "kubernet"*)'


def test_synonym_table_is_small_lowercase_and_symmetric():
    assert 20 <= len(retrieval.SYNONYM_GROUPS) <= 100
    for group in retrieval.SYNONYM_GROUPS:
        assert all(member == member.lower().strip() for member in group)
    def weight(word, text):
        return retrieval.Group(word).weight_in(set(text.split()), f" {text} ")

    assert weight("db", "database") == weight("k8s", "kubernetes") == weight("kubernetes", "k8s") == 0.8
    assert weight("database", "database") == 1.0 and weight("databases", "database") == 0.9
    assert retrieval.Group("certificate").expression() == '("cert" OR "ssl" OR "tls" OR "certificat"*)'  # subsumed terms left out


@pytest.mark.parametrize("text", ['" OR *', "NEAR(a b)", "col:value", "a AND NOT b", "^x", "'; DROP TABLE notes; --",
                                  "%_", "x" * 500])
def test_user_text_never_becomes_an_fts_operator(conn, text):
    make_task(conn, "t1")
    notes.add(conn, "t1", content="plain words AND more")
    search.memory_search(conn, text)  # must not raise
    assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 1


def test_stopword_only_queries_still_search(conn):
    memories.retain(conn, "what is it")
    assert [hit["text"] for hit in search.memory_search(conn, "what is")] == ["what is it"]


def _surfaces(conn):
    make_task(conn, "a1", project="Auth", title="auth work")
    make_task(conn, "b1", project="Billing", title="billing work")
    note = notes.add(conn, "a1", content="login sessions expire after 30 days")
    memories.retain(conn, "billing sessions expire after one day", project="Billing")
    fleet = memories.retain(conn, "session cookies are httponly")
    fact = facts.assert_fact(conn, subject="service-auth", predicate="session-store", obj="redis", source="codex",
                             task="a1")
    handoff = handoffs.record(conn, "a1", from_agent="hermes", objective="session expiry reviewed")
    return note, fleet, fact, handoff


def test_memory_search_ranks_every_surface_in_scope(conn):
    note, fleet, fact, handoff = _surfaces(conn)
    hits = search.memory_search(conn, "session expiry", project="Auth")
    assert {(h["kind"], h["id"]) for h in hits} == {("note", note["id"]), ("memory", fleet["id"]),
                                                    ("fact", fact["id"]), ("handoff", handoff["id"])}
    assert all(set(h) == {"kind", "id", "project", "task_id", "created_at", "score", "text"} for h in hits)
    assert all(h["project"] in ("Auth", "") for h in hits)
    assert hits == sorted(hits, key=lambda h: -h["score"])
    wide = search.memory_search(conn, "session expiry", project="Auth", scope="global")
    assert "Billing" in {h["project"] for h in wide}
    assert search.memory_search(conn, "session expiry", project="Nowhere") == \
        [h for h in hits if h["project"] == ""]


def test_a_facts_scope_is_its_linked_tasks_project(conn):
    """A project sees unlinked facts, its own tasks' facts and facts whose task is gone
    (project-less), never another project's; global sees them all."""
    made = scoped_facts(conn)
    hits = [h for h in search.memory_search(conn, "ledger store", project="Auth") if h["kind"] == "fact"]
    assert {h["id"]: h["project"] for h in hits} == {made["unlinked"]: "", made["auth"]: "Auth", made["orphan"]: ""}
    wide = [h for h in search.memory_search(conn, "ledger store", scope="global") if h["kind"] == "fact"]
    assert {h["id"]: h["project"] for h in wide} == {made["unlinked"]: "", made["auth"]: "Auth",
                                                      made["billing"]: "Billing", made["orphan"]: ""}


def test_outdated_rows_are_hidden_and_with_history_always_rank_below(conn):
    make_task(conn, "t1", project="Auth")
    old_note = notes.add(conn, "t1", content="redis 6 caches auth tokens exactly here")
    clock.advance(hours=1)
    new_note = notes.supersede(conn, old_note["id"], content="auth tokens cached")["note"]
    old_mem = memories.retain(conn, "auth token cache is redis 6", project="Auth")
    new_mem = memories.retain(conn, "token store", project="Auth")
    memories.forget(conn, old_mem["id"], superseded_by=new_mem["id"])
    old_fact = facts.assert_fact(conn, subject="auth-tokens", predicate="cached-in", obj="redis-6", source="x")
    facts.retract(conn, old_fact["id"], reason="upgraded")
    new_fact = facts.assert_fact(conn, subject="auth-tokens", predicate="cached-in", obj="redis-7", source="x")
    current = search.memory_search(conn, "redis 6 auth tokens cache", project="Auth")
    refs = {(h["kind"], h["id"]) for h in current}
    assert ("note", old_note["id"]) not in refs and ("memory", old_mem["id"]) not in refs
    assert ("fact", old_fact["id"]) not in refs and ("fact", new_fact["id"]) in refs
    history = search.memory_search(conn, "redis 6 auth tokens cache", project="Auth", include_history=True)
    order = [(h["kind"], h["id"]) for h in history]
    for old, new in ((("note", old_note["id"]), ("note", new_note["id"])),
                     (("memory", old_mem["id"]), ("memory", new_mem["id"])),
                     (("fact", old_fact["id"]), ("fact", new_fact["id"]))):
        assert order.index(old) > order.index(new)
    assert [h["outdated"] for h in history] == sorted(h["outdated"] for h in history)


def test_memory_search_without_fts5_matches_any_word_by_substring(conn, plain_conn, cli_json):
    note, fleet, fact, handoff = _surfaces(plain_conn)
    hits = search.memory_search(plain_conn, "session expiry", project="Auth")
    assert {(h["kind"], h["id"]) for h in hits} == {("note", note["id"]), ("memory", fleet["id"]),
                                                    ("fact", fact["id"]), ("handoff", handoff["id"])}
    assert all(set(h) == {"kind", "id", "project", "task_id", "created_at", "text"} for h in hits)  # minus score
    assert [h["created_at"] for h in hits] == sorted((h["created_at"] for h in hits), reverse=True)
    assert all(h["project"] in ("Auth", "") for h in hits)
    assert "Billing" in {h["project"] for h in search.memory_search(plain_conn, "session", scope="global")}
    assert search.memory_search(plain_conn, "!!! ???") == []
    assert search.memory_search(plain_conn, "the of") == []  # stopwords alone: their own words, no match here
    history = search.memory_search(plain_conn, "session expiry", project="Auth", include_history=True)
    assert {h["outdated"] for h in history} == {False}
    memories.forget(plain_conn, fleet["id"])
    assert ("memory", fleet["id"]) not in {(h["kind"], h["id"]) for h in
                                           search.memory_search(plain_conn, "session expiry", project="Auth")}
    outdated = search.memory_search(plain_conn, "session expiry", project="Auth", include_history=True)
    assert outdated[-1]["id"] == fleet["id"] and outdated[-1]["outdated"] is True  # outdated rows sort last
    cli_hits = cli_json("autopilot", "memory-search", "session expiry", "--project", "Auth", "--limit", "2")
    assert len(cli_hits) == 2 and "score" not in cli_hits[0]
    # the ranked engine finds the same rows where the words match literally
    _surfaces(conn)
    ranked = search.memory_search(conn, "session expiry", project="Auth")
    assert sorted((h["kind"], h["text"]) for h in ranked) == sorted((h["kind"], h["text"]) for h in hits)


@pytest.mark.parametrize("kwargs", [{"query": ""}, {"query": "x" * 1001}, {"query": "a", "project": "bad id!"},
                                    {"query": "a", "scope": "galaxy"}, {"query": "a", "scope": "project"},
                                    {"query": "a", "limit": 0}, {"query": "a", "limit": 10**6}])
def test_bad_memory_search_input_is_refused(conn, kwargs):
    query = kwargs.pop("query")
    with pytest.raises(InvalidInput):
        search.memory_search(conn, query, **kwargs)


def test_memory_search_cli(cli, cli_json, conn):
    _surfaces(conn)
    hits = cli_json("autopilot", "memory-search", "session expiry", "--project", "Auth", "--limit", "2")
    assert len(hits) == 2
    rc, out, err = cli("autopilot", "memory-search", "", "--project", "Auth")
    assert (rc, out) == (2, "") and err.count("\n") == 1


def test_ranked_search_notes_and_facts_use_the_engine(conn):
    facts.assert_fact(conn, subject="cluster-main", predicate="runs", obj="kubernetes-1.29", source="x")
    assert [f["object"] for f in facts.search(conn, "k8s", rank=True)] == ["kubernetes-1.29"]


def test_measured_retrieval_quality_beats_plain_bm25():
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import retrieval_eval
    finally:
        sys.path.remove(os.path.join(ROOT, "bench"))
    report = retrieval_eval.evaluate()
    clock.set_now("2026-08-21T09:00:00Z")
    assert report["projects"] >= 6 and report["queries"] >= 100
    assert set(report["by_kind"]) == {"exact", "morphological", "synonym", "paraphrase", "distractor", "temporal"}
    engine, plain = report["overall"]["engine"], report["overall"]["bm25"]
    assert engine["recall@5"] >= 0.9 and engine["outdated_wins"] <= 0.05
    assert engine["recall@5"] > plain["recall@5"] and engine["mrr"] > plain["mrr"]
    assert engine["recall@5"] >= 0.992 and engine["mrr"] >= 0.983  # the first corpus never regresses
    json.dumps(report)


def test_ranked_search_notes_matches_stems_prefixes_and_synonyms_conjunctively(conn):
    make_task(conn, "t1")
    wanted = notes.add(conn, "t1", content="database deployments happen on tuesdays")
    notes.add(conn, "t1", content="database backups happen nightly")
    hits = notes.search(conn, "db deploying", rank=True)
    assert [h["id"] for h in hits] == [wanted["id"]] and hits[0]["score"] < 0
    assert [h["id"] for h in notes.search(conn, "deploy tues", rank=True)] == [wanted["id"]]


def test_a_narrow_scope_finds_its_rows_behind_many_newer_rows_of_other_projects(conn):
    """Candidates are read newest first with the scope applied while reading, so a small
    project's older rows are found however many newer rows other projects have."""
    if not retrieval.fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    make_task(conn, "big", project="Big")
    make_task(conn, "small", project="Small")
    wanted = {notes.add(conn, "small", content=f"gateway timeout seen on shard s{n}")["id"] for n in range(3)}
    for n in range(4 * search.search_candidates(10) + 20):
        notes.add(conn, "big", content=f"gateway timeout seen on shard {n}")
    hits = search.memory_search(conn, "gateway timeout", project="Small", limit=10)
    assert {hit["id"] for hit in hits} == wanted
    assert len(search.memory_search(conn, "gateway timeout", limit=10)) == 10


def test_a_rare_words_rows_make_the_candidates_behind_a_common_words_newer_rows(conn):
    """The rows matching every rare group come first, then each group's own newest rows,
    rarest first: an old row carrying the query's rarest word is never crowded out by the
    many newer rows that match only a common one."""
    if not retrieval.fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    make_task(conn, "t1", project="Billing")
    wanted = notes.add(conn, "t1", content="invoices go out nightly from the scheduler")["id"]
    for n in range(3 * search.search_candidates(10)):
        notes.add(conn, "t1", content=f"billing scheduler change number {n}")
    hits = search.memory_search(conn, "when does the scheduler run each night", project="Billing", limit=10)
    assert hits[0]["id"] == wanted  # night* and scheduler beat scheduler alone, though older


def test_a_common_rarest_word_reads_only_its_newest_matches(conn, monkeypatch):
    """When even the rarest group matches more than SEARCH_POSTINGS rows, only its newest
    SEARCH_POSTINGS matches are read: a scope rejecting them all finds nothing older
    (the work stays bounded), and rows inside that window are found."""
    if not retrieval.fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    monkeypatch.setattr(retrieval, "SEARCH_POSTINGS", 20)
    make_task(conn, "old", project="Old")
    make_task(conn, "new", project="New")
    old = notes.add(conn, "old", content="gateway retries exhausted")["id"]
    for n in range(30):
        notes.add(conn, "new", content=f"gateway retries exhausted again {n}")
    assert search.memory_search(conn, "gateway", project="Old") == []
    inside = notes.add(conn, "old", content="gateway retries exhausted once more")["id"]
    assert [hit["id"] for hit in search.memory_search(conn, "gateway", project="Old")] == [inside]
    monkeypatch.setattr(retrieval, "SEARCH_POSTINGS", 1000)
    assert {hit["id"] for hit in search.memory_search(conn, "gateway", project="Old")} == {old, inside}


def test_memory_search_scores_are_coverage_times_recency(conn):
    """SQLite reads each candidate's age for the ranking: the score is exactly the
    documented coverage x recency of the row's stored timestamp, ages in whole hours."""
    clock.set_now("2026-03-01T00:00:00Z")
    make_task(conn, "t1", project="Ops")
    notes.add(conn, "t1", content="database failover drill")
    clock.set_now("2026-03-04T05:59:59Z")
    memories.retain(conn, "failover runbook lives in the wiki", project="Ops")
    clock.set_now("2026-06-01T12:30:00Z")
    now = clock.now_iso()
    hits = search.memory_search(conn, "db failover", project="Ops", now=now)
    query_groups = retrieval.groups("db failover")
    idf = retrieval.idf_weights(conn, query_groups, [("notes_fts", "notes"), ("memories_fts", "memories"),
                                                     ("facts_fts", "facts"), ("handoffs_fts", "handoffs")])
    assert len(hits) == 2
    for hit in hits:
        expected = retrieval.coverage(query_groups, idf, hit["text"]) * retrieval.recency(hit["created_at"], now)
        assert hit["score"] == round(expected, 6)
    assert retrieval.decay(None) < retrieval.decay(10**5) < retrieval.decay(0) == 1.0


@pytest.mark.parametrize("cap", [2, 4, 50])
def test_counting_words_first_gives_the_same_counts(conn, cap):
    """memory-search counts a group's own word before its prefixes and synonyms, and only
    the groups whose word stays under the cap in full: the counts are those of the one
    whole-group statement, capped alike."""
    if not retrieval.fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    make_task(conn, "t1")
    for text in ("connection refused", "connections dropped", "connected again", "connect timeout",
                 "database pool full", "db pool drained", "pooling off", "kubernetes node"):
        notes.add(conn, "t1", content=text)
    query_groups = retrieval.groups("connection pool db k8s zzz")
    plain = retrieval.group_counts(conn, query_groups, "notes_fts", cap)
    assert retrieval.counts_words_first(conn, query_groups, "notes_fts", cap)[0] == plain
    assert plain == [min(n, cap) for n in (4, 3, 2, 1, 0)]


def test_a_groups_probe_plan_is_worked_out_once_for_every_index(conn, monkeypatch):
    """A pack probes the same groups in several indexes: what the probes ask of a group (its
    match terms, prefixes, singular and plural bounds) is worked out on its first probe and
    reused, and the counts (roots bounds included) are those of the whole-group statements."""
    if not retrieval.fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    make_task(conn, "t1")
    for text in ("dashboards lag", "dashboard lag", "tests flaky", "test flaky", "caches cold"):
        notes.add(conn, "t1", content=text)
    handoffs.record(conn, "t1", from_agent="codex", objective="dashboard tests green")
    query_groups = retrieval.groups("dashboards test caches")
    built = []
    real = retrieval._probe_plan
    monkeypatch.setattr(retrieval, "_probe_plan", lambda group: built.append(group.word) or real(group))
    for index in ("notes_fts", "handoffs_fts", "notes_fts"):
        for cap in (1, 2, 50):
            counts = retrieval.counts_words_first(conn, query_groups, index, cap, roots=True)[0]
            assert counts == retrieval.group_counts(conn, query_groups, index, cap)
    assert sorted(built) == ["caches", "dashboards", "test"]
    assert [group._bounds for group in query_groups] == [('"dashboard"', None), (None, '"tests"'), ('"cache"', None)]


def test_a_word_common_on_its_own_is_read_through_the_word_alone(conn, monkeypatch):
    """When even the rarest group is common because its own word is, memory-search reads
    the newest rows carrying that word (a lazy walk) rather than merging every posting of
    its prefix terms; a word under the cap still finds its variants."""
    if not retrieval.fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    monkeypatch.setattr(retrieval, "DF_CAP", 5)
    monkeypatch.setattr(retrieval, "SEARCH_POSTINGS", 4)
    make_task(conn, "t1")
    old_variant = notes.add(conn, "t1", content="rollouts kept deploying overnight")["id"]
    assert [hit["id"] for hit in search.memory_search(conn, "deploy")] == [old_variant]
    plain = [notes.add(conn, "t1", content=f"deploy window {n}")["id"] for n in range(5)]
    new_variant = notes.add(conn, "t1", content="deployments paused for the freeze")["id"]
    # the word alone reaches the cap: the newest SEARCH_POSTINGS rows carrying it, no variant
    assert {hit["id"] for hit in search.memory_search(conn, "deploy")} == set(plain[1:])
    monkeypatch.setattr(retrieval, "DF_CAP", 301)
    monkeypatch.setattr(retrieval, "SEARCH_POSTINGS", 300)
    assert {hit["id"] for hit in search.memory_search(conn, "deploy")} == {*plain, old_variant, new_variant}


def _recorded_probes(monkeypatch):
    """The list every expression ``fts.match_counts`` is asked to count is appended to."""
    counted = []
    probe = retrieval.fts.match_counts
    monkeypatch.setattr(retrieval.fts, "match_counts",
                        lambda conn, name, expressions, cap, cache=None: counted.extend(expressions)
                        or probe(conn, name, expressions, cap, cache))
    return counted


def test_a_group_holding_a_term_already_at_the_cap_is_not_counted_again(conn, monkeypatch):
    """"test"* reaches the cap in the one-term group of "test"; the "suite" group holds it
    too, so it is at the cap without merging "test"*'s postings a second time."""
    if not retrieval.fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    make_task(conn, "t1")
    for n in range(6):
        notes.add(conn, "t1", content=f"the tests {n} pass again")
    notes.add(conn, "t1", content="one test suite")
    query_groups = retrieval.groups("test suite")  # "suite" after "test": the synonym phrase's group
    assert query_groups[0].match_terms() == ('"test"*',) and '"test"*' in query_groups[1].match_terms()
    counted = _recorded_probes(monkeypatch)
    counts, words = retrieval.counts_words_first(conn, query_groups, "notes_fts", 5)
    assert words == [1, 1] and counts == [5, 5]
    assert counted == ['"test"', '"suite"', '("test"*)']  # "suite" was never counted whole
    assert counts == retrieval.group_counts(conn, query_groups, "notes_fts", 5)


@pytest.mark.parametrize("cap", [1, 3, 8, 40])
def test_words_first_counts_match_the_plain_counts_on_a_mixed_corpus(conn, cap):
    """Many texts sharing stems, prefixes and synonyms: every query's counts equal the
    whole-group statement's, at every cap."""
    import random

    if not retrieval.fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    rng = random.Random(3)
    vocabulary = ("test tests testing suite specs deploy deployed deployments rollout release db database"
                  " databases postgres pg connection connections connect pool pooling cache caching k8s"
                  " kubernetes auth login signin token retry retries timeout").split()
    make_task(conn, "t1")
    for _ in range(60):
        notes.add(conn, "t1", content=" ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 6))))
    for _ in range(40):
        query_groups = retrieval.groups(" ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 5))))
        plain = retrieval.group_counts(conn, query_groups, "notes_fts", cap)
        assert retrieval.counts_words_first(conn, query_groups, "notes_fts", cap)[0] == plain
        assert retrieval.counts_words_first(conn, query_groups, "notes_fts", cap, roots=True)[0] == plain
        # a pack's related notes read a lone prefix group's newest rowids instead: same counts
        cache = {}
        assert retrieval.counts_words_first(conn, query_groups, "notes_fts", cap, cache, roots=True,
                                            window=True)[0] == plain
        for key, rowids in cache.items():
            if len(key) == 4:  # the newest rowids kept for the window are the window's rows
                assert rowids == [row[0] for row in conn.execute(
                    "SELECT rowid FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rowid DESC LIMIT ?",
                    (key[1], cap))]
                assert cache[key[:3]] == len(rowids)


def test_a_plural_whose_singular_is_common_is_never_merged_as_a_prefix(conn, monkeypatch):
    """Pack probes (``bounded``) count a plural under the cap through its singular first:
    "dashboard" alone reaches the cap, so the "dashboards" group has too, and its prefix
    term "dashboard"* (which merges every posting it covers) is never counted.  The answer
    is the one the plain counts give."""
    if not retrieval.fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    make_task(conn, "t1")
    for n in range(6):
        notes.add(conn, "t1", content=f"dashboard panel {n}")
    notes.add(conn, "t1", content="gauges lagging")
    query_groups = retrieval.groups("dashboards gauges")
    counted = _recorded_probes(monkeypatch)
    assert retrieval.bounded(conn, "notes_fts", query_groups, 4) == ('("gaug"*)', 1, 2, 1)
    assert '("dashboard"*)' not in counted and '"dashboard"' in counted
    assert retrieval.counts_words_first(conn, query_groups, "notes_fts", 5, roots=True)[0] == \
        retrieval.group_counts(conn, query_groups, "notes_fts", 5) == [5, 1]


def test_a_word_whose_plural_is_common_is_never_merged_as_a_prefix(conn, monkeypatch):
    """Pack probes (``bounded``) bound a group whose word the index holds under the cap by
    the word's plural: "tests" alone reaches the cap, so the "test" group has too, and
    neither its prefix term "test"* nor a group holding that prefix ("suite": test suite,
    spec*, suit*, test*) is merged.  The answer and the counts are the plain ones."""
    if not retrieval.fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    make_task(conn, "t1")
    for n in range(6):
        notes.add(conn, "t1", content=f"tests flaky on runner {n}")
    notes.add(conn, "t1", content="test gauges lagging")
    query_groups = retrieval.groups("test suite gauges")
    counted = _recorded_probes(monkeypatch)
    assert retrieval.bounded(conn, "notes_fts", query_groups, 4) == ('("gaug"*)', 1, 3, 1)
    assert '"tests"' in counted and not any('"test"*' in expression for expression in counted)
    assert retrieval.counts_words_first(conn, query_groups, "notes_fts", 5, roots=True)[0] == \
        retrieval.group_counts(conn, query_groups, "notes_fts", 5) == [5, 5, 1]
    assert retrieval.plural(retrieval.groups("write")[0]) == '"writes"'
    assert retrieval.plural(retrieval.groups("tests")[0]) is None
    assert retrieval.plural(retrieval.groups("42")[0]) is None


def test_newest_counts_are_the_counts_and_keep_the_newest_rowids(conn):
    """``fts.newest_counts`` counts as ``match_counts`` does (the same cache keys) and keeps
    each expression's newest rowids, which ``cached_newest`` hands back up to its cap."""
    if not retrieval.fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    make_task(conn, "t1")
    ids = [notes.add(conn, "t1", content=f"migration step {n}")["id"] for n in range(5)]
    notes.add(conn, "t1", content="unrelated words")
    cache = {}
    assert retrieval.fts.newest_counts(conn, "notes_fts", ['("migrat"*)', '"absent"'], 4, cache) == [4, 0]
    assert retrieval.fts.match_counts(conn, "notes_fts", ['("migrat"*)', '"absent"'], 4) == [4, 0]
    assert retrieval.fts.cached_newest(cache, "notes_fts", '("migrat"*)', 4, 3) == ids[::-1][:3]
    assert retrieval.fts.cached_newest(cache, "notes_fts", '"absent"', 4, 4) == []
    # not read at that cap, or asked for more than the cap: not known
    assert retrieval.fts.cached_newest(cache, "notes_fts", '("migrat"*)', 5, 3) is None
    assert retrieval.fts.cached_newest(cache, "notes_fts", '("migrat"*)', 4, 5) is None
    assert retrieval.fts.cached_newest(None, "notes_fts", '("migrat"*)', 4, 3) is None
