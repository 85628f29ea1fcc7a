"""Substring search through the full-text indexes: ``search`` and ``search-notes`` without
--rank read only the rows the word index names for a query of several words
(:func:`mindos.store.fts.substring_probe`), and ``search`` the rows its trigram index names
for any query of three characters or more; either way they answer exactly what reading
every row did."""

import random

import pytest

from mindos.core import clock
from mindos.memory import notes
from mindos.store import db, fts
from mindos.work import task_search, tasks

# Texts around "rate limit" that a substring match must see or must not, whatever their
# case, separators, prefixes and suffixes; non-ASCII neighbours too.
PIECES = ["rate limit", "RATE LIMIT", "Rate-Limit", "rate_limit", "ratelimit", "accelerate limits", "rate  limit",
          "first-rate limited", "rate limiter", "rate\tlimit", "the limit rate", "rate lim", "café rate limit",
          "rate limité", "déjà vu rate limits", "ß rate limit ß", "schema migration worker", "migration workers",
          "schema-migration worker", "migration worker's", "100% done", "C:\\tmp\\rate limit", "a_b c", "x y", "",
          "retry path", "deploy gateway", "gateway deploy", "cache api", "CACHE APIs", "cacheapi", "v2 api",
          "CAFÉ Rate Limit", "ÀB_C 50% off", "Straße rate"]
QUERIES = ["rate limit", "RATE limit", "rate-limit", "rate  limit", "ate limi", " limit", "rate limit ", "e l",
           "migration worker", "schema migration worker", "n worker", "worker's", "100% done", "% d", "\\tmp\\rate",
           "a_b c", "_b c", "x y", "cache api", "che ap", "ap", "café rate", "rate limité", "v2 api", "y",
           "deploy", "limit", "'", '"rate" limit', "rate limit*", "gateway deploy", "s d"]


def _corpus(conn, count, seed):
    rng = random.Random(seed)
    for n in range(count):
        words = [rng.choice(PIECES) for _ in range(rng.randrange(1, 4))]
        tasks.create(conn, task_id=f"s{n:03d}", project=rng.choice(["Trove", "Infra"]), title=" ".join(words[:2]) or "untitled",
                     description=rng.choice(PIECES), next_action=rng.choice(PIECES),
                     priority=rng.choice(["P0", "P1", "P2"]))
        for k in range(rng.randrange(0, 3)):
            notes.add(conn, f"s{n:03d}", content=f"{rng.choice(PIECES)} {n}.{k} {rng.choice(PIECES)}",
                      kind=rng.choice(["fact", "constraint"]), pinned=rng.random() < 0.2)
        clock.advance(minutes=rng.choice([0, 1]))  # equal timestamps: the orders' tie-breakers decide


@pytest.mark.parametrize("text,expected", [
    ("rate limit", '"limit"*'), ("rate limit.", '"limit"'), (" cache", '"cache"*'), ("-b-", '"b"'),
    ("schema migration worker", '"migration worker"*'), ('x "y" z*', '"y z"'), ("RATE Limit", '"limit"*'),
    ("cache", None), ("cache ", None), ("", None), ("café au", None), ("rate limité", None), ("   ", None),
])
def test_the_probe_names_whole_words_after_the_first_and_the_last_as_a_prefix(text, expected):
    assert fts.substring_probe(text) == expected


def _both(monkeypatch, module, call):
    """``call()`` with the index narrowing the search, and with every row read."""
    narrowed = call()
    monkeypatch.setattr(module, "SUBSTRING_NARROW", None)
    everything = call()
    monkeypatch.undo()
    return narrowed, everything


@pytest.mark.parametrize("seed", [1, 2])
def test_narrowed_substring_search_answers_exactly_what_reading_every_row_did(conn, monkeypatch, seed):
    _corpus(conn, 120, seed)
    with db.write(conn):  # a retired note and a superseded one stay out, as before
        conn.execute("UPDATE notes SET expires_at = '2000-01-01T00:00:00Z' WHERE id % 7 = 0 AND pinned = 0")
    notes.supersede(conn, conn.execute("SELECT min(id) FROM notes WHERE superseded_by IS NULL").fetchone()[0],
                    content="rate limit raised")
    hits = 0
    for query in QUERIES:
        for options in ({}, {"limit": 3}, {"status": "queued", "project": "Trove"}, {"priority": "P1"}):
            found, every = _both(monkeypatch, task_search, lambda: task_search.search(conn, query, **options))
            assert found == every, (query, options)
            hits += len(found)
        for options in ({}, {"limit": 2}, {"kind": "constraint", "project": "Infra"}, {"include_expired": True},
                        {"status": "queued"}, {"rerank": True, "limit": 5}):
            found, every = _both(monkeypatch, notes, lambda: notes.search(conn, query, **options))
            assert found == every, (query, options)
            hits += len(found)
    assert hits > 500, "the corpus matched almost nothing: the comparison proves little"


def _statements(conn, monkeypatch):
    seen = []
    real = db.Connection.execute

    def execute(self, sql, *args):
        seen.append(sql)
        return real(self, sql, *args)

    monkeypatch.setattr(db.Connection, "execute", execute)
    return seen


def _reads_the_index(seen):
    """Whether a search statement read the rows an index named: through its MATCH, or through
    the list of rowids it matched (fts._candidates)."""
    return any(("MATCH" in sql or "json_each(?) AS hit" in sql) and "LIKE" in sql for sql in seen)


def test_a_query_of_several_words_reads_the_rows_the_index_names(conn, monkeypatch):
    _corpus(conn, 40, 3)
    monkeypatch.setattr(fts, "TRIGRAMS", {})  # the word index's path, as on an SQLite without trigrams
    seen = _statements(conn, monkeypatch)
    assert notes.search(conn, "rate limit") and _reads_the_index(seen)
    seen.clear()
    assert task_search.search(conn, "rate limit") and _reads_the_index(seen)
    # the word index's few candidates are read once, as rowids, and then only their rows
    listed = next(sql for sql in seen if "json_each(?) AS hit" in sql and "LIKE" in sql)
    plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + listed, ["[1,2,3]", *["%rate limit%"] * 6])]
    assert plan[:2] == ["SCAN hit VIRTUAL TABLE INDEX 1:", "SEARCH t USING INTEGER PRIMARY KEY (rowid=?)"], plan
    assert "MATCH" not in listed


@pytest.mark.parametrize("query", ["limit", "ratelimit", "café rate", "rate limité"])
def test_a_query_the_word_index_cannot_bound_reads_every_row_or_the_trigram_index(conn, monkeypatch, query):
    _corpus(conn, 40, 4)
    seen = _statements(conn, monkeypatch)
    found = notes.search(conn, query), task_search.search(conn, query)
    assert _reads_the_index(seen) == fts.has(conn, "notes_trigram_fts")
    assert all("trigram_fts MATCH" in sql or "pairs_fts MATCH" in sql for sql in seen if "MATCH" in sql)
    monkeypatch.setattr(fts, "TRIGRAMS", {})  # a home without the trigram indexes (and the pair index)
    monkeypatch.setattr(fts, "PAIRS", {})
    seen.clear()
    assert (notes.search(conn, query), task_search.search(conn, query)) == found
    assert not _reads_the_index(seen)


@pytest.mark.parametrize("query", ["ap", "y", "% ", "é"])
def test_a_query_under_three_characters_reads_every_task(conn, monkeypatch, query):
    _corpus(conn, 40, 4)
    seen = _statements(conn, monkeypatch)
    task_search.search(conn, query)
    assert not _reads_the_index(seen)


def test_a_query_whose_words_match_many_rows_reads_every_row_or_the_trigram_index(conn, monkeypatch):
    _corpus(conn, 60, 5)
    every = task_search.search(conn, "rate limit"), notes.search(conn, "rate limit")
    monkeypatch.setattr(task_search, "SUBSTRING_NARROW", 3)
    monkeypatch.setattr(notes, "SUBSTRING_NARROW", 3)
    seen = _statements(conn, monkeypatch)
    assert (task_search.search(conn, "rate limit"), notes.search(conn, "rate limit")) == every
    if fts.has(conn, "tasks_trigram_fts"):  # the trigram indexes bound it whatever its words' counts
        assert [_reads_the_index([sql]) for sql in seen if sql.startswith("SELECT")] == [True, True]
    monkeypatch.setattr(fts, "TRIGRAMS", {})
    monkeypatch.setattr(fts, "PAIRS", {})
    seen.clear()
    assert (task_search.search(conn, "rate limit"), notes.search(conn, "rate limit")) == every
    assert not _reads_the_index(seen)


def _paths(monkeypatch, call):
    """``call()`` as it runs, through other pair tokens of the text (the pair index), through
    the trigram index alone (no pair index, no word probe, no walk first), walking first then
    through the trigram index, through other trigrams of the text, and reading every row."""
    found = {"as it runs": call()}
    weights = random.Random(7)  # any pair token the weights pick names every hit
    monkeypatch.setattr(fts, "_pages", lambda conn, name, keys: [weights.randrange(3) for _ in keys])
    found["other pairs"] = call()
    monkeypatch.setattr(fts, "PAIRS", {})
    monkeypatch.setattr(fts, "substring_probe", lambda text: None)
    monkeypatch.setattr(fts, "WALK_MAX", 0)
    found["trigrams"] = call()
    monkeypatch.setattr(fts, "WALK_MAX", 2000)
    found["walk, trigrams"] = call()
    rng = random.Random(5)  # any pair of trigrams the weights pick names every hit
    monkeypatch.setattr(fts, "trigram_spans", lambda conn, name, text: {at: rng.randrange(3) for at in range(len(text))})
    found["other trigrams"] = call()
    monkeypatch.setattr(task_search, "SUBSTRING_NARROW", None)
    monkeypatch.setattr(notes, "SUBSTRING_NARROW", None)
    found["every row"] = call()
    monkeypatch.undo()
    return found


TRICKY = QUERIES + ["CAFÉ RATE", "café", "Café Rate", "ÀB_C", "àb_c", "b_c 50%", "50% off", "STRASSE", "straße rate",
                    "%%%", "___", "\\\\", '"""', "e_l", "LIMIT", "te l", "IMIT", "rate limit 1", "zzz", "s00", "s01",
                    "Trove", "TROVE", "rove", "ove", "ß r", "É R"]


@pytest.mark.parametrize("seed", [1, 2])
def test_search_through_the_trigram_indexes_answers_exactly_what_reading_every_row_did(conn, monkeypatch, seed):
    if not fts.has(conn, "tasks_trigram_fts"):
        pytest.skip("SQLite without the trigram tokenizer")
    _corpus(conn, 120, seed)
    with db.write(conn):  # some texts rewritten and some rows gone: the triggers keep the indexes in step
        conn.execute("UPDATE tasks SET title = upper(title), blocked_reason = 'CAFÉ rate limit' WHERE seq % 5 = 0")
        conn.execute("UPDATE notes SET content = upper(content) WHERE id % 4 = 0")
        conn.execute("DELETE FROM tasks WHERE seq % 11 = 0")
        conn.execute("UPDATE notes SET expires_at = '2000-01-01T00:00:00Z' WHERE id % 7 = 0 AND pinned = 0")
    assert fts.drift(conn, "tasks_trigram_fts")["ok"] and fts.drift(conn, "notes_trigram_fts")["ok"]
    hits = walked = 0
    for query in TRICKY:
        for options in ({}, {"limit": 3}, {"limit": 1}, {"status": "queued", "project": "Trove"},
                        {"priority": "P1", "limit": 4}, {"project": "Infra", "limit": 50}):
            found = _paths(monkeypatch, lambda: task_search.search(conn, query, **options))
            assert len({repr(answer) for answer in found.values()}) == 1, (query, options)
            hits += len(found["every row"])
            walked += "limit" in options and len(found["every row"]) == options["limit"]
        for options in ({}, {"limit": 2}, {"kind": "constraint", "project": "Infra"}, {"include_expired": True},
                        {"status": "queued", "limit": 4}):
            found = _paths(monkeypatch, lambda: notes.search(conn, query, **options))
            assert len({repr(answer) for answer in found.values()}) == 1, (query, options)
            hits += len(found["every row"])
    assert hits > 3000 and walked > 50, "the corpus matched almost nothing: the comparison proves little"


def test_a_query_no_word_bounds_reads_the_tasks_the_trigram_index_names(conn, monkeypatch):
    if not fts.has(conn, "tasks_trigram_fts"):
        pytest.skip("SQLite without the trigram tokenizer")
    for n in range(30):  # every task says "payments", one says "retry payments": the word index cannot bound it
        tasks.create(conn, task_id=f"p{n:02d}", project="Trove", title=f"payments {n}",
                     description="retry payments" if n == 7 else "payments retry")
    monkeypatch.setattr(task_search, "SUBSTRING_NARROW", 10)
    monkeypatch.setattr(fts, "PAIRS", {})  # a home without the pair index (see the test below)
    seen = _statements(conn, monkeypatch)
    assert [t["id"] for t in task_search.search(conn, "Retry Payments", limit=5)] == ["p07"]
    # its 30 candidates (both ends of the text near each other) are read as rowids, once
    assert [_reads_the_index([sql]) and "json_each" in sql for sql in seen if "LIKE" in sql] == [True]
    monkeypatch.setattr(fts, "LISTED_PER_HIT", 1)  # 5 are too few: walk first, then match
    seen.clear()
    assert [t["id"] for t in task_search.search(conn, "Retry Payments", limit=5)] == ["p07"]
    walk, narrowed = [sql for sql in seen if "LIKE" in sql]
    plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + narrowed, ['"Retry Payments"', *["%x%"] * 6, 5])]
    assert plan[0].startswith("SCAN tasks_trigram_fts VIRTUAL TABLE INDEX 0:M"), plan
    assert plan[1] == "SEARCH t USING INTEGER PRIMARY KEY (rowid=?)", plan
    # the walk first: a bounded co-routine over the list order's index, never a sort of it
    plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + walk, [100, *["%x%"] * 6, 5])]
    assert "SCAN t USING INDEX idx_tasks_priority_updated" in plan and not any("TEMP B-TREE" in p for p in plan), plan
    seen.clear()
    assert len(task_search.search(conn, "payments", limit=5)) == 5  # found by the walk alone
    assert not any("MATCH" in sql for sql in seen)



def test_a_rare_phrase_of_common_words_reads_the_tasks_the_pair_index_names(conn, monkeypatch):
    if not fts.has(conn, "tasks_pairs_fts"):
        pytest.skip("SQLite without FTS5")
    for n in range(30):  # every task holds both words, only p07 the phrase: its pair token "try pay" is rare
        tasks.create(conn, task_id=f"p{n:02d}", project="Trove", title=f"payments retry {n:03d}",
                     description="Retry Payments now" if n == 7 else "retry, payments; retry-payments")
    assert fts.pair_probe(conn, "tasks_pairs_fts", "retry payments") == '"74727920706179"'  # "try pay"
    seen = _statements(conn, monkeypatch)
    assert [t["id"] for t in task_search.search(conn, "retry payments", limit=5)] == ["p07"]
    # its one candidate is read as a rowid from the pair index, and the LIKE decides it
    assert [_reads_the_index([sql]) and "json_each" in sql for sql in seen if "LIKE" in sql] == [True]
    # a text whose spaces lack three characters on a side has no token: the trigram index serves it
    assert fts.pair_tokens(conn, "y payments") == fts.pair_tokens(conn, "retry pa") == []
    assert fts.pair_tokens(conn, "a retry payments b") == fts.pair_tokens(conn, "retry payments")
    # of several tokens, the one whose postings take the fewest pages is read
    common, rare = fts.pair_tokens(conn, "payments retry 017")  # "nts ret" (every title), "try 017"
    monkeypatch.setattr(fts, "_pages", lambda conn, name, keys: [5 if key == b"0" + common.lower().encode() else 1
                                                                  for key in keys])
    assert fts.pair_probe(conn, "tasks_pairs_fts", "payments retry 017") == fts.quote(rare)
    assert [t["id"] for t in task_search.search(conn, "payments retry 017")] == ["p17"]


@pytest.mark.parametrize("text,tokens", [
    ("deploy gateway", ["loy gat"]), ("cache api", ["che api"]), ("RATE Limit", ["ate lim"]), ("in gateway", []),
    ("schema migration worker", ["ema mig", "ion wor"]), ("x in y", []), ("ab  cd ef", ["ab  cd "]),
    ("É Étés été", ["tés été"]), ("a a a a a a a", ["a a a a"]), ("abc\tdef ghi", ["def ghi"]),
])
def test_the_pair_tokens_of_a_text_are_its_spaces_with_three_characters_each_side(conn, text, tokens):
    # folded as the index's view folds (SQLite's lower(): ASCII letters), hex-encoded
    assert fts.pair_tokens(conn, text) == [token.encode().hex().upper() for token in tokens]
    assert [run.lower() for run in fts.pair_runs(text)] == [token.lower() for token in tokens]


def test_the_pair_index_names_every_task_holding_the_text_and_follows_every_write(conn):
    """Random texts (short words, runs of spaces, quotes, wildcards, non-ASCII case, texts
    longer than the view's chunks): every task holding a query as LIKE sees it is named by
    its pair probe, through inserts, updates and deletes, and the index never drifts."""
    if not fts.has(conn, "tasks_pairs_fts"):
        pytest.skip("SQLite without FTS5")
    from mindos.store import migrations

    rng = random.Random(11)
    alphabet = ["a", "A", "b", " ", " ", "ab", "abc", "XYZ", '"', "%", "_", "\\", "é", "É", "ß", "*", "NEAR", "(", ","]

    def text(longest):
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, longest)))

    size = migrations.PAIR_CHUNK
    for n in range(80):
        tasks.create(conn, task_id=f"r{n:02d}", project=rng.choice(["Trove", "Infra"]), title="t" + text(20),
                     description=text(3 * size if n % 10 == 0 else 40), next_action=text(12))
    with db.write(conn):
        conn.execute("UPDATE tasks SET title = upper(title), blocked_reason = 'ab  XYZ é' WHERE seq % 5 = 0")
        conn.execute("DELETE FROM tasks WHERE seq % 9 = 0")
    assert fts.drift(conn, "tasks_pairs_fts")["ok"] and not fts.window_drifts(conn, "tasks_pairs_fts", 0, 10 ** 9)
    conn.execute("INSERT INTO tasks_pairs_fts(tasks_pairs_fts) VALUES ('integrity-check')")
    rows = [row[0] for row in conn.execute("SELECT title || '|' || description || '|' || blocked_reason FROM tasks")]
    columns = ("id", "project", "title", "description", "next_action", "blocked_reason")
    checked = 0
    for row in rows:
        for start in range(0, max(len(row) - 6, 0), 5):
            query = row[start:start + rng.randrange(7, 24)]
            probe = fts.pair_probe(conn, "tasks_pairs_fts", query)
            if probe is None:
                continue
            holding = {seq for (seq,) in conn.execute(
                "SELECT seq FROM tasks WHERE " + " OR ".join(f"{c} LIKE ?1 ESCAPE '\\'" for c in columns),
                (fts.like_pattern(query),))}
            named = {seq for (seq,) in conn.execute("SELECT rowid FROM tasks_pairs_fts WHERE tasks_pairs_fts MATCH ?",
                                                     (probe,))}
            assert holding <= named, (query, probe)
            checked += bool(holding)
    assert checked > 200

def test_a_home_whose_sqlite_has_no_trigram_tokenizer_searches_as_before(tmp_path, monkeypatch):
    monkeypatch.setattr(db, "trigram_supported", lambda: False)
    conn = db.connect(str(tmp_path / "no-trigram"))
    try:
        assert not fts.has(conn, "tasks_trigram_fts")
        tasks.create(conn, task_id="n1", project="Trove", title="the retry payments job")
        tasks.create(conn, task_id="n2", project="Trove", title="payments retry")
        assert [t["id"] for t in task_search.search(conn, "retry payments")] == ["n1"]
        assert [t["id"] for t in task_search.search(conn, "retry payments", limit=1)] == ["n1"]
    finally:
        conn.close()


def test_a_home_without_fts5_searches_substrings_as_before(plain_conn):
    tasks.create(plain_conn, task_id="p1", project="Trove", title="the rate limit of the API")
    notes.add(plain_conn, "p1", content="rate limit is 60/min")
    assert [t["id"] for t in task_search.search(plain_conn, "rate limit")] == ["p1"]
    assert [n["content"] for n in notes.search(plain_conn, "rate limit")] == ["rate limit is 60/min"]


def test_search_notes_through_the_door_with_injection_shaped_text(cli_json):
    assert cli_json("autopilot", "create", "--project", "Trove", "--title", "x", "--id", "t-q")["id"] == "t-q"
    cli_json("autopilot", "note", "t-q", "--content", 'say "limit" OR NEAR(a b) * rate limit')
    for query in ['"limit" OR', 'NEAR(a b) *', ' OR NEAR(', 'rate limit', '* rate']:
        found = cli_json("autopilot", "search-notes", query)
        assert [n["task_id"] for n in found] == ["t-q"], query
        assert cli_json("autopilot", "search", query) == []


def test_a_big_home_narrows_note_searches_up_to_a_quarter_of_its_notes(conn, monkeypatch):
    monkeypatch.setattr(fts, "TRIGRAMS", {})  # the word index's path, as on an SQLite without trigrams
    tasks.create(conn, task_id="q1", project="Trove", title="quarter")
    for n in range(40):
        notes.add(conn, "q1", content=f"note {n}: " + ("the rate limit" if n < 9 else f"other words {n}"))
    monkeypatch.setattr(notes, "SUBSTRING_NARROW", 3)  # 9 matches: over the cap, under 40 // 4
    seen = _statements(conn, monkeypatch)
    assert len(notes.search(conn, "rate limit")) == 9 and _reads_the_index(seen)
    notes.add(conn, "q1", content="note 40: the rate limit again")  # 10 of 41: a quarter
    seen.clear()
    assert len(notes.search(conn, "rate limit")) == 10 and not _reads_the_index(seen)


RANKED = ["rate limit", "limit", "migration worker", "cache api", "deploy", "rate", "worker", "v2 api", "payments"]


@pytest.mark.parametrize("seed", [6, 7])
def test_ranked_note_search_scoring_first_answers_what_one_statement_did(conn, monkeypatch, seed):
    _corpus(conn, 120, seed)
    for n in range(30):  # equal scores across chunk boundaries: the note id settles them
        notes.add(conn, f"s{n:03d}", content="rate limit twin", kind="fact")
    with db.write(conn):
        conn.execute("UPDATE notes SET expires_at = '2000-01-01T00:00:00Z' WHERE id % 5 = 0 AND pinned = 0")
    compared = 0
    for query in RANKED:
        for options in ({}, {"limit": 1}, {"limit": 7}, {"limit": 40}, {"kind": "constraint", "project": "Infra"},
                        {"include_expired": True, "limit": 20}, {"status": "queued", "limit": 3},
                        {"rerank": True, "limit": 4}):
            found, every = _both_ranked(monkeypatch, lambda: notes.search(conn, query, rank=True, **options))
            assert found == every, (query, options)
            compared += len(found)
    assert compared > 500, "the corpus matched almost nothing: the comparison proves little"


def _both_ranked(monkeypatch, call):
    """The call's hits as it finds them, and as one statement joining every match before
    sorting (fts.text_search's ranked read) finds them."""
    scored_first = call()

    def one_statement(conn, name, expression, *, select, joins, where, params, ranked_order, limit):
        return fts.text_search(conn, name, "", select=select, joins=joins, where=where, params=params,
                               order=ranked_order, ranked_order=ranked_order, rank=True, limit=limit,
                               expression=expression)

    monkeypatch.setattr(fts, "ranked_rows", one_statement)
    together = call()
    monkeypatch.undo()
    return scored_first, together


def test_ranked_note_search_joins_only_the_best_matches(conn, monkeypatch):
    tasks.create(conn, task_id="r1", project="Trove", title="ranked")
    for n in range(200):
        notes.add(conn, "r1", content=f"rate limit note {n} " + "filler " * (n % 7))
    seen = _statements(conn, monkeypatch)
    assert len(notes.search(conn, "rate limit", rank=True, limit=5)) == 5
    joined = [sql for sql in seen if sql.startswith("WITH hit(seq, score) AS (VALUES")]
    chunk = joined[0].count("(?, ?)") if len(joined) == 1 else 0
    matches = conn.execute("SELECT count(*) FROM notes_fts WHERE notes_fts MATCH 'rate AND limit'").fetchone()[0]
    assert 16 <= chunk < matches / 2, (chunk, matches)  # one chunk (16, and the scores equal to its last)
    plan = " | ".join(row[3] for row in conn.execute(
        "EXPLAIN QUERY PLAN " + joined[0], [*[1, -1.0] * chunk, notes.clock.now_iso(), 5]))
    assert "SCAN notes" not in plan.replace("SCAN notes_fts", "") and "SCAN t" not in plan, plan


@pytest.mark.parametrize("text,expected", [
    ("abc", '"abc"'), ('a"bc', '"a""bc"'), ("rate ", '"rate "'), ("rate l", 'NEAR("rat" "e l", 2)'),
    ("rate limit", 'NEAR("rat" "mit", 6)'), ('"x" y "z"', 'NEAR("""x""" """z""", 5)'),
    ("aaaaaaaaaa", 'NEAR("aaa" "aaa", 6)'), ("retry payments", 'NEAR("ret" "nts", 10)'),
    ("schema migration worker", 'NEAR("sch" "ker", 19)'), ("abcdefghijklmno", 'NEAR("abc" "mno", 11)'),
])
def test_the_trigram_probe_is_a_phrase_or_a_near_pair_of_its_ends_exactly_as_far_apart(text, expected):
    assert fts.trigram_probe(text) == expected


@pytest.mark.parametrize("text,spans,expected", [
    ("retry payments", {0: 9, 4: 2, 5: 1, 6: 1, 11: 3}, 'NEAR(" pa" "pay", 0)'),  # the smallest of each half
    ("retry payments", {4: 2, 11: 3}, 'NEAR("y p" "nts", 6)'),  # unweighed trigrams are never picked
    ("retry payments", {n: 5 for n in range(12)}, 'NEAR("ret" "nts", 10)'),  # ties: the outermost
    ("rate l", {1: 0, 2: 0}, 'NEAR("ate" "te ", 0)'),
])
def test_the_trigram_probe_reads_the_smallest_posting_list_of_each_half(text, spans, expected):
    assert fts.trigram_probe(text, spans) == expected


def test_the_trigram_probe_matches_every_row_holding_the_text(tmp_path):
    """Random texts over a small alphabet (repeats, quotes, wildcards, non-ASCII case): every
    row holding a query as a substring, as LIKE sees it, matches its probe."""
    import sqlite3

    if not db.trigram_supported():
        pytest.skip("SQLite without the trigram tokenizer")
    rng = random.Random(9)
    alphabet = ["a", "A", "b", " ", "ab", '"', "%", "_", "\\", "é", "É", "ß", "aaa", "*", "NEAR", "(", ")"]
    scratch = sqlite3.connect(":memory:")
    try:
        scratch.execute("CREATE VIRTUAL TABLE tri USING fts5(x, y, tokenize='trigram')")
        rows = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(3, 30))) for _ in range(300)]
        scratch.executemany("INSERT INTO tri(rowid, x, y) VALUES (?, ?, ?)",
                            [(n, text, rows[(n * 7) % len(rows)]) for n, text in enumerate(rows)])
        checked = 0
        for row in rows[:150]:
            for start in range(0, len(row) - 2, 2):
                query = row[start:start + rng.randrange(3, 16)]
                if len(query) < 3:
                    continue
                holding = {n for (n,) in scratch.execute(
                    "SELECT rowid FROM tri WHERE x LIKE ?1 ESCAPE '\\' OR y LIKE ?1 ESCAPE '\\'", (fts.like_pattern(query),))}
                for spans in (None, {at: rng.randrange(4) for at in range(len(query) - 2)}):
                    probe = fts.trigram_probe(query, spans)  # the outermost pair, or any other by weight
                    named = {n for (n,) in scratch.execute("SELECT rowid FROM tri WHERE tri MATCH ?", (probe,))}
                    assert holding and holding <= named, (query, probe)
                checked += 1
        assert checked > 1000
    finally:
        scratch.close()


def test_search_notes_reads_the_notes_the_trigram_index_names(conn, monkeypatch):
    if not fts.has(conn, "notes_trigram_fts"):
        pytest.skip("SQLite without the trigram tokenizer")
    tasks.create(conn, task_id="n1", project="Trove", title="notes")
    for n in range(30):
        notes.add(conn, "n1", content="retry payments nightly" if n == 7 else f"payments retry {n}")
    seen = _statements(conn, monkeypatch)
    assert [n["content"] for n in notes.search(conn, "Retry Payments", limit=5)] == ["retry payments nightly"]
    listed = next(sql for sql in seen if "json_each(?) AS hit" in sql and "LIKE" in sql)  # 30 candidates, as rowids
    plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + listed, ["[1,2]", "%x%", notes.clock.now_iso(), 5])]
    assert plan[:2] == ["SCAN hit VIRTUAL TABLE INDEX 1:", "SEARCH n USING INTEGER PRIMARY KEY (rowid=?)"], plan
    assert not any(p.startswith(("SCAN n", "SCAN t")) for p in plan), plan
    monkeypatch.setattr(fts, "LISTED_PER_HIT", 1)  # more candidates than that: matched in the search itself
    seen.clear()
    assert [n["content"] for n in notes.search(conn, "Retry Payments", limit=5)] == ["retry payments nightly"]
    narrowed = next(sql for sql in seen if "notes_trigram_fts MATCH" in sql)
    plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + narrowed, [
        fts.trigram_probe("Retry Payments"), "%x%", notes.clock.now_iso(), 5])]
    assert plan[0].startswith("SCAN notes_trigram_fts VIRTUAL TABLE INDEX 0:M"), plan
    assert plan[1] == "SEARCH n USING INTEGER PRIMARY KEY (rowid=?)", plan
    assert not any(p.startswith(("SCAN n", "SCAN t")) and "VIRTUAL" not in p for p in plan), plan
    assert [n["content"] for n in notes.search(conn, "ry pa")] == ["retry payments nightly"]  # a piece of words


def test_trigram_spans_weigh_each_trigram_by_the_pages_of_its_postings(conn):
    """A trigram most tasks hold spans more leaf pages than one a few hold, in every segment
    summed; the probe then reads the rare one."""
    if not fts.has(conn, "tasks_trigram_fts"):
        pytest.skip("SQLite without the trigram tokenizer")
    with db.write(conn):  # small pages: a few hundred tasks make long posting lists
        conn.execute("INSERT INTO tasks_trigram_fts(tasks_trigram_fts, rank) VALUES ('pgsz', 64)")
    for n in range(300):
        tasks.create(conn, task_id=f"w{n:03d}", project="Trove",
                     title=f"common words {n}" + (" xqzy rare" if n % 50 == 0 else ""))
    with db.write(conn):
        fts.rebuild(conn, "tasks_trigram_fts")  # one big segment, then small ones for the writes after it
    tasks.create(conn, task_id="w-late", project="Trove", title="common words xqzy late")
    spans = fts.trigram_spans(conn, "tasks_trigram_fts", "words xqzy")  # "wor" ... "qzy"
    assert set(spans) == set(range(8))
    assert min(spans[0], spans[1], spans[2]) > 4 * max(spans[6], spans[7], 1), spans  # "wor" "ord" "rds" / "xqz" "qzy"
    assert fts.trigram_probe("words xqzy", spans) in ('NEAR("wor" "xqz", 5)', 'NEAR("wor" "qzy", 6)',
                                                     'NEAR("ds " "qzy", 3)', 'NEAR("s x" "qzy", 2)'), spans
    every = {f"w{n:03d}" for n in range(0, 300, 50)} | {"w-late"}
    assert {t["id"] for t in task_search.search(conn, "words xqzy", limit=500)} == {"w-late"}
    assert {t["id"] for t in task_search.search(conn, "xqzy", limit=500)} == every
    assert len(task_search.search(conn, "mon words", limit=500)) == 301


def test_trigram_spans_of_a_long_text_weigh_a_sample_of_each_half(conn):
    if not fts.has(conn, "tasks_trigram_fts"):
        pytest.skip("SQLite without the trigram tokenizer")
    tasks.create(conn, task_id="l1", project="Trove", title="long " * 100)
    text = "long " * 100
    spans = fts.trigram_spans(conn, "tasks_trigram_fts", text)
    assert len(spans) <= 2 * fts.SPANS_PER_HALF and min(spans) == 0 and max(spans) > len(text) // 2
    assert [t["id"] for t in task_search.search(conn, text.strip())] == ["l1"]
    assert task_search.search(conn, text + "x") == []


def test_search_notes_of_a_text_many_notes_hold_walks_the_newest_notes_first(conn, monkeypatch):
    if not fts.has(conn, "notes_trigram_fts"):
        pytest.skip("SQLite without the trigram tokenizer")
    tasks.create(conn, task_id="c1", project="Trove", title="common")
    tasks.create(conn, task_id="c2", project="Infra", title="common")
    for n in range(60):
        notes.add(conn, f"c{1 + n % 2}", content=f"payments note {n}" if n % 3 else f"other note {n}")
        clock.advance(minutes=1)
    monkeypatch.setattr(fts, "LISTED_PER_HIT", 1)  # more candidates than listed: walk first
    seen = _statements(conn, monkeypatch)
    found = notes.search(conn, "payments", limit=5)
    assert [n["content"] for n in found] == [f"payments note {n}" for n in (59, 58, 56, 55, 53)]
    walk = [sql for sql in seen if "LIKE" in sql]
    assert len(walk) == 1 and "MATCH" not in walk[0], walk  # the walk filled the limit: no match read after it
    plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + walk[0], [notes.clock.now_iso(), 100, "%x%", 5])]
    assert any(p.startswith("SCAN n USING INDEX idx_notes_live_newest") for p in plan), plan
    assert not any("TEMP B-TREE" in p for p in plan), plan
    seen.clear()
    assert [n["task_id"] for n in notes.search(conn, "payments", project="Infra", limit=3)] == ["c2"] * 3
    assert not any("MATCH" in sql for sql in seen if "LIKE" in sql)


def test_a_text_whose_candidates_spread_thin_skips_the_walk(conn, monkeypatch):
    """More candidates than listed, but so far apart that a walk of the rows would pass fewer
    than the limit of them: the search reads the trigram index's candidates at once."""
    if not fts.has(conn, "tasks_trigram_fts"):
        pytest.skip("SQLite without the trigram tokenizer")
    for n in range(180):  # every 60th task holds the text: 3 of them, 60 rowids apart
        tasks.create(conn, task_id=f"d{n:03d}", project="Trove", title=f"task {n}" + (" xqzy" if n % 60 == 0 else ""))
    every = [t["id"] for t in task_search.search(conn, "xqzy")]
    assert len(every) == 3
    monkeypatch.setattr(fts, "LISTED_PER_HIT", 1)  # 2 listed for 2 wanted, 60 rowids apart: a 40-row walk passes ~1
    seen = _statements(conn, monkeypatch)
    assert [t["id"] for t in task_search.search(conn, "xqzy", limit=2)] == every[:2]
    assert not any("ORDER BY" in sql and "AS w" in sql for sql in seen), seen  # no walk
    assert [_reads_the_index([sql]) for sql in seen if "LIKE" in sql] == [True]
    monkeypatch.setattr(fts, "WALK_PER_HIT", 100)  # a walk of 200 rows would pass ~6 of them: walk first
    seen.clear()
    assert [t["id"] for t in task_search.search(conn, "xqzy", limit=2)] == every[:2]
    assert any("AS w" in sql for sql in seen), seen


def test_the_triggers_and_the_view_spell_the_same_pair_tokens():
    """The pair index's triggers spell a row's tokens one way (words split through JSON, no
    recursive query) and its view, which FTS5 reads to rebuild it, another: the same tokens,
    on random texts (runs of spaces, line feeds, quotes, backslashes, control and non-ASCII
    characters, texts longer than the view's chunks), or a delete would not undo an insert."""
    import sqlite3

    from mindos.store import migrations

    rng = random.Random(3)
    alphabet = ["a", "B", " ", " ", "  ", "é", "É", "'", '"', "\\", "\n", "\t", "\x01", "ab c", "ß", "%", "_", "\u2028",
                "😀"]
    scratch = sqlite3.connect(":memory:")
    try:
        view = f"SELECT {migrations._pair_tokens('?1')}"
        trigger = f"SELECT {migrations._pair_tokens_of_words('?1')}"
        size = migrations.PAIR_CHUNK
        for _ in range(3000):
            text = "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 2, 4, 9, 60, size - 1, size + 2, 3 * size])))
            spelled = [scratch.execute(sql, (text,)).fetchone()[0] for sql in (view, trigger)]
            assert sorted((spelled[0] or "").split()) == sorted((spelled[1] or "").split()), text
    finally:
        scratch.close()


def test_an_ignored_rename_and_out_of_band_edits_leave_the_pair_index_whole(conn):
    """A rename that UPDATE OR IGNORE skips (its new id is taken) fires no trigger, so the
    row's tokens stay indexed; deleting it afterwards removes exactly them."""
    if not fts.has(conn, "tasks_pairs_fts"):
        pytest.skip("SQLite without FTS5")
    tasks.create(conn, task_id="one", project="Trove", title="retry payments now")
    tasks.create(conn, task_id="two", project="Trove", title="deploy gateway soon")
    with db.write(conn):
        conn.execute("UPDATE OR IGNORE tasks SET id = 'two' WHERE id = 'one'")
        conn.execute("UPDATE tasks SET title = 'cache api layer' WHERE id = 'two'")
    assert [t["id"] for t in task_search.search(conn, "retry payments")] == ["one"]
    with db.write(conn):
        conn.execute("DELETE FROM tasks WHERE id = 'one'")
    conn.execute("INSERT INTO tasks_pairs_fts(tasks_pairs_fts) VALUES ('integrity-check')")
    assert fts.drift(conn, "tasks_pairs_fts")["ok"]
    assert task_search.search(conn, "retry payments") == []
    assert [t["id"] for t in task_search.search(conn, "cache api")] == ["two"]
