"""Operator search: substring over task text, BM25 with --rank, and the no-FTS5 fallback."""

import json

import pytest

from conftest import seed_once
from mindos.core import clock
from mindos.store import db
from mindos.work import task_search, tasks
from mindos.errors import InvalidInput

NASTY = ['"', "'", '"unbalanced', "a OR", "OR", "AND NOT", "NEAR(", "NEAR(a b, 2)", "title:deploy", "{title}: x",
         "*", "dep*", "^start", "(((", ")", "-minus", "+plus", "a:b:c", "\\", "%", "_", "[x]", "\x01"]


def _ids(results):
    return [r["id"] for r in results]


@pytest.fixture
def seeded(conn):
    seed_once(conn, __name__ + ".seeded", _seed)  # built once; each test gets a copy of the database
    return conn


def _seed(conn):
    rows = [
        ("t1", "Trove", "Rate limit the deploy API", "", "P1", ""),
        ("t2", "Trove", "Write docs", "explains the rate limit", "P2", ""),
        ("t3", "Infra", "Rotate logs", "", "P2", "check the limit of disk"),
        ("t4", "Infra", "100% done _really_", "path C:\\tmp", "P0", ""),
    ]
    for task_id, project, title, description, priority, next_action in rows:
        tasks.create(conn, project=project, title=title, description=description, priority=priority,
                     next_action=next_action, task_id=task_id)
        clock.advance(minutes=1)
    with db.write(conn):
        conn.execute("UPDATE tasks SET blocked_reason = 'waiting on vendor quota' WHERE id = 't3'")


@pytest.fixture
def nofts(tmp_path, monkeypatch):
    monkeypatch.setattr(db, "fts5_supported", lambda: False)
    connection = db.connect(str(tmp_path / "nofts-home"))
    yield connection
    connection.close()


def test_substring_covers_every_text_field(seeded):
    assert _ids(task_search.search(seeded, "deploy")) == ["t1"]  # title
    assert _ids(task_search.search(seeded, "explains")) == ["t2"]  # description
    assert _ids(task_search.search(seeded, "disk")) == ["t3"]  # next_action
    assert _ids(task_search.search(seeded, "vendor quota")) == ["t3"]  # blocked_reason
    assert _ids(task_search.search(seeded, "infra")) == ["t4", "t3"]  # project, case-insensitive
    assert _ids(task_search.search(seeded, "t2")) == ["t2"]  # id


def test_substring_orders_like_list(seeded):
    assert _ids(task_search.search(seeded, "limit")) == ["t1", "t3", "t2"]
    listed = [t["id"] for t in tasks.list_tasks(seeded) if t["id"] in ("t1", "t2", "t3")]
    assert _ids(task_search.search(seeded, "limit")) == listed


def test_wildcards_in_the_query_are_literal(seeded):
    assert _ids(task_search.search(seeded, "100%")) == ["t4"]
    assert _ids(task_search.search(seeded, "%")) == ["t4"]
    assert _ids(task_search.search(seeded, "_really_")) == ["t4"]
    assert _ids(task_search.search(seeded, "_")) == ["t4"]
    assert _ids(task_search.search(seeded, "C:\\tmp")) == ["t4"]
    assert task_search.search(seeded, "r%y") == []


def test_filters(seeded):
    assert _ids(task_search.search(seeded, "limit", project="Trove")) == ["t1", "t2"]
    assert _ids(task_search.search(seeded, "limit", priority="P2")) == ["t3", "t2"]
    tasks.update(seeded, "t2", status="blocked")
    assert _ids(task_search.search(seeded, "limit", status="blocked")) == ["t2"]
    assert _ids(task_search.search(seeded, "limit", limit=1)) == ["t1"]


def test_tag_filter(seeded):
    from mindos.work import tags

    tags.add(seeded, "t3", ["autopilot-safe"])
    tags.add(seeded, "t2", ["autopilot-safe-not"])
    assert _ids(task_search.search(seeded, "limit", tag="autopilot-safe")) == ["t3"]
    assert _ids(task_search.search(seeded, "limit", tag="autopilot-safe", rank=True)) == ["t3"]


@pytest.mark.parametrize("kwargs,flag", [
    ({"status": "done"}, "--status"),
    ({"priority": "P5"}, "--priority"),
    ({"project": "../x"}, "--project"),
    ({"tag": "Bad Tag"}, "--tag"),
    ({"limit": 0}, "--limit"),
])
def test_bad_filters_are_refused_naming_the_flag(seeded, kwargs, flag):
    with pytest.raises(InvalidInput, match=f"^invalid {flag}"):
        task_search.search(seeded, "limit", **kwargs)


def test_huge_or_broken_queries_are_refused(seeded):
    with pytest.raises(InvalidInput, match="^invalid query"):
        task_search.search(seeded, "x" * (task_search.MAX_QUERY + 1))
    with pytest.raises(InvalidInput, match="^invalid query"):
        task_search.search(seeded, "bad \udcff")


def test_blank_query_matches_nothing(seeded):
    assert task_search.search(seeded, "") == []
    assert task_search.search(seeded, "   ") == []
    assert task_search.search(seeded, "", rank=True) == []


def test_rank_returns_scores_most_relevant_first(seeded):
    hits = task_search.search(seeded, "rate limit", rank=True)
    assert set(_ids(hits)) == {"t1", "t2"}  # conjunctive: t3 has 'limit' but not 'rate'
    scores = [h["score"] for h in hits]
    assert all(isinstance(s, float) and s < 0 for s in scores)
    assert scores == sorted(scores)
    assert "score" not in task_search.search(seeded, "rate limit")[0]


def test_rank_prefers_the_denser_match(conn):
    tasks.create(conn, project="P", title="deploy deploy deploy", task_id="dense")
    tasks.create(conn, project="P", title="deploy once among many other unrelated words here", task_id="sparse")
    assert _ids(task_search.search(conn, "deploy", rank=True)) == ["dense", "sparse"]


def test_rank_tokenless_query_returns_empty(seeded):
    for query in ("!!!", "***", '""', "---", "_"):
        assert task_search.search(seeded, query, rank=True) == []


@pytest.mark.parametrize("query", NASTY)
@pytest.mark.parametrize("rank", [False, True])
def test_fts_syntax_is_plain_text_and_never_raises(seeded, query, rank):
    assert isinstance(task_search.search(seeded, query, rank=rank), list)


def test_fts_operators_do_not_change_the_meaning(seeded):
    # 'OR' is a word here, not an operator: nothing contains 'deploy' AND 'or' AND 'docs'
    assert task_search.search(seeded, "deploy OR docs", rank=True) == []
    # a column filter would match t1; as plain words it needs the word 'title' too
    assert task_search.search(seeded, "title:deploy", rank=True) == []
    tasks.create(seeded, project="P", title="deploy: fix the title bar", task_id="t5")
    assert _ids(task_search.search(seeded, "title:deploy", rank=True)) == ["t5"]
    assert task_search.search(seeded, "NEAR(deploy docs)", rank=True) == []


def test_fts_index_follows_updates(seeded):
    tasks.update(seeded, "t3", title="Rotate journald archives")
    assert _ids(task_search.search(seeded, "journald", rank=True)) == ["t3"]
    assert task_search.search(seeded, "logs", rank=True) == []


def test_without_fts5_rank_degrades_to_substring(nofts):
    for task_id, title in (("a", "Rate limit the deploy API"), ("b", "rate limiter docs"), ("c", "unrelated")):
        tasks.create(nofts, project="P", title=title, task_id=task_id)
    ranked = task_search.search(nofts, "rate limit", rank=True)
    plain = task_search.search(nofts, "rate limit")
    assert ranked == plain and _ids(plain) == ["a", "b"]
    assert all("score" not in hit for hit in ranked)
    assert task_search.search(nofts, "!!!", rank=True) == []
    for query in NASTY:
        task_search.search(nofts, query, rank=True)


def test_cli_search(seeded, cli):
    rc, out, err = cli("autopilot", "search", "rate limit", "--rank", "--project", "Trove")
    assert rc == 0 and err == ""
    hits = json.loads(out)
    assert set(_ids(hits)) == {"t1", "t2"} and all("score" in h for h in hits)
    rc, out, err = cli("autopilot", "search", "deploy", "--status", "nope")
    assert (rc, out) == (2, "") and err.startswith("invalid --status")


@pytest.mark.parametrize("limit", [1, 3, 4, 5, 12, 50])
def test_ranked_search_without_filters_lists_what_the_general_path_lists(conn, limit):
    """The unfiltered ranked search scores every match once and joins only the best (ties at the
    cut included): row for row what the general ranked path returns, whatever the limit."""
    from mindos.store import fts
    from mindos.work.rows import LIST_ORDER

    for n in range(30):  # many exact BM25 ties (identical texts), settled by priority, recency and id
        tasks.create(conn, project="Trove", title="rate limit the gateway" if n % 3 else "rate limit",
                     description="rate" * (n % 2), priority=f"P{n % 4}", task_id=f"r{n:02d}")
        if n % 5 == 0:
            clock.advance(seconds=1)
    tasks.create(conn, project="Trove", title="unrelated", task_id="u1")
    for text in ("rate limit", "gateway", "rate", "nothing-matches"):
        expected = fts.text_search(conn, "tasks_fts", text, select="t.*", order="t.id", ranked_order=LIST_ORDER,
                                   rank=True, limit=limit)
        got = task_search.search(conn, text, rank=True, limit=limit)
        assert [(r["id"], r["score"]) for r in got] == [(row["id"], row["score"]) for row in expected], text



# ---------------------------------------------------------------------------------------
# The bounded ranking: a query with a common word is ranked over the newest matches


def _fts5_scores(conn, query):
    from mindos.store import fts

    rows = conn.execute("SELECT t.id, bm25(tasks_fts) FROM tasks_fts JOIN tasks t ON t.seq = tasks_fts.rowid"
                        " WHERE tasks_fts MATCH ?", (fts.query(query),)).fetchall()
    return {row[0]: row[1] for row in rows}


@pytest.fixture
def retry_home(conn):
    """Twelve tasks that all carry "retry", a few of them "payments" too, of varied lengths."""
    for n in range(12):
        extra = " in payments" if n % 3 == 0 else ""
        tasks.create(conn, project="Trove" if n % 2 else "Infra", title=f"Fix retry path {n}{extra}",
                     description="retry " * (n % 4) + "and some more words" * (n % 2), task_id=f"r{n:02d}",
                     priority="P1" if n % 5 == 0 else "P2")
        clock.advance(minutes=1)
    return conn


def test_the_bm25_computed_here_is_fts5s_own(retry_home):
    from mindos.store import fts

    rows, average = fts.totals(retry_home, "tasks_fts")
    assert rows == 12 and average > 0
    for query in ("retry", "retry payments", "retry retry path", "fix more"):
        terms = [token.lower() for token in fts.tokens(query)]
        hits = [retry_home.execute("SELECT count(*) FROM tasks_fts WHERE tasks_fts MATCH ?", (fts.quote(term),))
                .fetchone()[0] for term in terms]
        expected = _fts5_scores(retry_home, query)
        ids = sorted(expected)
        texts = {row["id"]: " ".join(row[c] or "" for c in task_search._INDEXED).lower()
                 for row in retry_home.execute("SELECT * FROM tasks")}
        scores = fts.bm25(terms, hits, rows, average, [fts.tokens(texts[task_id]) for task_id in ids])
        assert scores == pytest.approx([expected[task_id] for task_id in ids], rel=1e-9), query


def test_a_home_without_common_words_ranks_exactly_as_fts5(retry_home):
    for query in ("retry", "retry payments", "fix path"):
        found = task_search.search(retry_home, query, rank=True)
        expected = _fts5_scores(retry_home, query)
        assert {task["id"]: task["score"] for task in found} == expected
        assert [task["score"] for task in found] == sorted(task["score"] for task in found)


def test_a_common_word_ranks_the_newest_matches_only(retry_home, monkeypatch):
    from mindos.store import fts

    monkeypatch.setattr(task_search, "COMMON_WORD", 5)
    monkeypatch.setattr(task_search, "RANK_WINDOW", 4)
    found = task_search.search(retry_home, "retry", rank=True)
    assert sorted(_ids(found)) == ["r08", "r09", "r10", "r11"]  # the four newest matches
    scores = [task["score"] for task in found]
    assert scores == sorted(scores)
    # the scores: FTS5's formula, the common word weighing as one matching COMMON_WORD tasks
    rows, average = fts.totals(retry_home, "tasks_fts")
    texts = {task["id"]: " ".join(task[c] or "" for c in task_search._INDEXED).lower() for task in found}
    assert scores == fts.bm25(["retry"], [5], rows, average, [fts.tokens(texts[task["id"]]) for task in found])
    # conjunctive as ever: every word must match, and a rarer word's matches are the window
    assert sorted(_ids(task_search.search(retry_home, "retry payments", rank=True))) == ["r00", "r03", "r06", "r09"]
    # filters apply before the window: the four newest of the project
    assert sorted(_ids(task_search.search(retry_home, "retry", rank=True, project="Infra"))) == [
        "r04", "r06", "r08", "r10"]
    assert _ids(task_search.search(retry_home, "retry", rank=True, limit=2)) == _ids(found)[:2]
    assert task_search.search(retry_home, "retry zzzunknown", rank=True) == []


def test_the_bounded_ranking_is_deterministic_and_settles_ties_in_the_list_order(conn, monkeypatch):
    monkeypatch.setattr(task_search, "COMMON_WORD", 3)
    for n, priority in enumerate(("P2", "P1", "P2", "P1", "P3")):
        tasks.create(conn, project="Trove", title="same words here", priority=priority, task_id=f"s{n}")
        clock.advance(minutes=1)
    found = task_search.search(conn, "same words", rank=True)
    assert len({task["score"] for task in found}) == 1
    assert _ids(found) == _ids(task_search.search(conn, "same words", rank=False))  # the list order
    assert _ids(found) == _ids(task_search.search(conn, "same words", rank=True))


def test_the_cli_ranks_a_common_word_within_the_window(retry_home, cli_json, monkeypatch):
    monkeypatch.setattr(task_search, "COMMON_WORD", 5)
    monkeypatch.setattr(task_search, "RANK_WINDOW", 3)
    found = cli_json("autopilot", "search", "retry path", "--rank", "--limit", "2")
    assert len(found) == 2 and all(task["id"] in ("r09", "r10", "r11") for task in found)
    assert all(isinstance(task["score"], float) for task in found)
