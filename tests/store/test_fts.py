"""The FTS registry: every index declared once, searched safely, drift seen and repaired."""

import pytest

from conftest import make_task
from mindos.memory import notes
from mindos.store import db, fts


def _fts_tables(conn):
    return {row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%'")}


def test_every_fts_index_of_the_schema_is_registered(conn):
    if not fts.has(conn, "tasks_fts"):
        pytest.skip("SQLite without FTS5")
    assert _fts_tables(conn) == set(fts.INDEXES)
    for name, spec in fts.INDEXES.items():
        columns = [row[1] for row in conn.execute(f"PRAGMA table_info({name})")]
        assert tuple(columns) == spec.columns, name


def test_unknown_index_names_are_a_programming_error(conn):
    with pytest.raises(ValueError):
        fts.drift(conn, "tasks; DROP TABLE tasks")
    with pytest.raises(ValueError):
        fts.match_counts(conn, "nope_fts", ['"x"'], 5)


def test_match_counts_probe_only_what_the_cache_lacks(conn, monkeypatch):
    if not fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    make_task(conn, "t1")
    for text in ("alpha beta", "alpha", "gamma"):
        notes.add(conn, "t1", content=text)
    cache = {}
    assert fts.match_counts(conn, "notes_fts", ['"alpha"', '"gamma"'], 5, cache) == [2, 1]
    statements = []
    conn.set_trace_callback(lambda sql: sql.startswith("--") or statements.append(sql))  # not FTS5's own
    try:
        assert fts.match_counts(conn, "notes_fts", ['"gamma"', '"alpha"'], 5, cache) == [1, 2]
        assert statements == []  # both counts came from the cache
        assert fts.match_counts(conn, "notes_fts", ['"alpha"', '"beta"'], 1, cache) == [1, 1]
        assert len(statements) == 2  # another cap is another probe: one run of the counting statement each
        assert all(sql.count("MATCH") == 1 for sql in statements)
    finally:
        conn.set_trace_callback(None)
    assert fts.match_counts(conn, "notes_fts", ['"alpha"'], 5) == [2]  # no cache: probed every time


@pytest.mark.parametrize("text", ['" OR 1=1 --', "title:secret", "NEAR(a b)", "a* AND -b", "%_%", "'); DROP TABLE notes; --"])
def test_user_text_never_becomes_query_syntax(conn, text):
    make_task(conn, "t1", title="plain words only")
    for rank in (True, False):
        rows = fts.text_search(conn, "tasks_fts", text, select="t.id", order="t.id", ranked_order="t.id", rank=rank)
        assert rows == []
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 1


def test_drift_sees_missing_and_stale_rows_and_rebuild_repairs_them(conn):
    if not fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    make_task(conn, "t1")
    first = notes.add(conn, "t1", content="the gateway pool is capped")["id"]
    second = notes.add(conn, "t1", content="deploys wait for the freeze")["id"]
    assert fts.drift(conn, "notes_fts")["ok"] is True
    with db.write(conn):
        # drop one row from the index behind the triggers' back, and index a rowid no note has
        conn.execute("INSERT INTO notes_fts(notes_fts, rowid, content) VALUES ('delete', ?, ?)",
                     (first, "the gateway pool is capped"))
        conn.execute("INSERT INTO notes_fts(rowid, content) VALUES (999, 'ghost row')")
    report = fts.drift(conn, "notes_fts")
    assert report["method"] == "fts5vocab"
    assert (report["ok"], report["missing"], report["stale"]) == (False, [first], [999])
    assert report["indexed"] == 2 and report["source"] == 2  # a count comparison alone would call this fine
    with db.write(conn):
        fts.rebuild(conn, "notes_fts")
    assert fts.drift(conn, "notes_fts")["ok"] is True
    assert [n["id"] for n in notes.search(conn, "gateway", rank=True)] == [first]
    assert second


def test_a_note_without_a_word_is_indexed_without_tokens_and_that_is_no_drift(conn):
    """FTS5 holds a text of punctuation alone ("!!! ---") as a document with no token, so the
    vocabulary never names it: the whole check and the window check both see it as indexed,
    while a row the index lost, or holds as empty though its text has words, is still seen."""
    if not fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    make_task(conn, "t1")
    wordless = [notes.add(conn, "t1", content=text)["id"] for text in ("!!! ---", "— ... —", "?")]
    worded = notes.add(conn, "t1", content="the pool is capped")["id"]
    report = fts.drift(conn, "notes_fts")
    assert report["ok"] and (report["indexed"], report["source"]) == (4, 4), report
    assert not fts.window_drifts(conn, "notes_fts", 0, 10 ** 12)
    with db.write(conn):
        # behind the triggers' back: one wordless row leaves the index, and the worded row is
        # re-indexed as if its text were empty (a size row of zeros, like a wordless row's)
        conn.execute("INSERT INTO notes_fts(notes_fts, rowid, content) VALUES ('delete', ?, ?)",
                     (wordless[0], "!!! ---"))
        conn.execute("INSERT INTO notes_fts(notes_fts, rowid, content) VALUES ('delete', ?, ?)",
                     (worded, "the pool is capped"))
        conn.execute("INSERT INTO notes_fts(rowid, content) VALUES (?, '')", (worded,))
    report = fts.drift(conn, "notes_fts")
    assert (report["ok"], report["missing"]) == (False, [wordless[0], worded]), report
    assert fts.window_drifts(conn, "notes_fts", 0, 10 ** 12)
    assert fts.window_drifts(conn, "notes_fts", worded - 1, worded)
    assert not fts.window_drifts(conn, "notes_fts", wordless[0], worded - 1)
    with db.write(conn):
        fts.rebuild(conn, "notes_fts")
    assert fts.drift(conn, "notes_fts")["ok"] and not fts.window_drifts(conn, "notes_fts", 0, 10 ** 12)


def test_rebuild_needs_a_write_transaction(conn):
    with pytest.raises(RuntimeError):
        fts.rebuild(conn, "tasks_fts")


def _written_one_by_one(conn, count):
    make_task(conn, "t1")
    most = 0
    for n in range(count):
        notes.add(conn, "t1", content=f"note {n} on the payments rollout, step {n * 7}")
        most = max(most, fts.segments(conn, "notes_fts"))
    return most


def test_an_index_written_a_row_per_transaction_stays_in_few_segments(conn):
    if not fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    for name in fts.INDEXES:  # every index of a new home is set up to merge early
        assert conn.execute(f"SELECT v FROM {name}_config WHERE k = 'crisismerge'").fetchone()[0] == 4, name
    assert _written_one_by_one(conn, 80) <= 6  # FTS5's own defaults reach 16 and more


def test_segments_count_and_a_merge_step_leaves_what_matches_unchanged(conn):
    if not fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    with db.write(conn):  # FTS5's default: small segments pile up
        conn.execute("INSERT INTO notes_fts(notes_fts, rank) VALUES ('crisismerge', 16)")  # FTS5's default
    assert _written_one_by_one(conn, 40) > 6
    found = conn.execute("SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'payments' ORDER BY rowid").fetchall()
    with pytest.raises(RuntimeError):
        fts.merge(conn, "notes_fts", 100)  # a write: only inside a write transaction
    with db.write(conn):
        assert fts.merge(conn, "notes_fts", 1000) is True
    assert fts.segments(conn, "notes_fts") == 1
    with db.write(conn):
        assert fts.merge(conn, "notes_fts", 1000) is False  # nothing left to merge
    assert conn.execute("SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'payments' ORDER BY rowid").fetchall() == found
    assert len(found) == 40 and fts.segments(conn, "tasks_fts") >= 1 and fts.segments(conn, "facts_fts") == 0


def _pages(conn, name):
    """Every stored page of index ``name`` (the structure record included) and its settings."""
    return (conn.execute(f"SELECT id, block FROM {name}_data ORDER BY id").fetchall(),
            conn.execute(f"SELECT * FROM {name}_idx ORDER BY 1, 2").fetchall(),
            conn.execute(f"SELECT k, v FROM {name}_config ORDER BY k").fetchall())


def _merged_out(conn, name, pages=1000):
    """Merge steps until FTS5 finds nothing left to do; the changes they counted."""
    changes = 0
    while True:
        with db.write(conn):
            before = conn.total_changes
            worked = fts.merge(conn, name, pages)
            changes += conn.total_changes - before
        if not worked:
            return changes


def _integrity(conn, name):
    with db.write(conn):  # raises on a corrupt index
        conn.execute(f"INSERT INTO {name}({name}, rank) VALUES ('integrity-check', 1)")


def test_a_merge_step_merges_level_by_level_and_keeps_the_index_whole(conn):
    if not fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    with db.write(conn):
        conn.execute("INSERT INTO notes_fts(notes_fts, rank) VALUES ('crisismerge', 16)")  # FTS5's default
    _written_one_by_one(conn, 60)
    found = conn.execute("SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'payments' ORDER BY rowid").fetchall()
    segments = fts.segments(conn, "notes_fts")
    statements = []
    conn.set_trace_callback(statements.append)
    with db.write(conn):
        assert fts.merge(conn, "notes_fts", 1000) is True
    conn.set_trace_callback(None)
    assert any("('merge', 1000)" in sql for sql in statements)  # positive: level by level
    assert not any("('merge', -" in sql for sql in statements)  # never the whole index at once
    assert conn.execute("SELECT v FROM notes_fts_config WHERE k = 'usermerge'").fetchone()[0] == fts.USERMERGE
    _merged_out(conn, "notes_fts")
    assert fts.segments(conn, "notes_fts") < segments
    _integrity(conn, "notes_fts")
    assert conn.execute("SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'payments' ORDER BY rowid").fetchall() == found


def test_a_merge_step_with_nothing_written_since_rewrites_no_page(conn):
    if not fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    _written_one_by_one(conn, 30)
    _merged_out(conn, "notes_fts")
    pages = _pages(conn, "notes_fts")
    for _ in range(3):
        with db.write(conn):
            before = conn.total_changes
            assert fts.merge(conn, "notes_fts", 1000) is False
            assert conn.total_changes - before <= 1  # the command itself, no page
    assert _pages(conn, "notes_fts") == pages
    make_task(conn, "t2")
    notes.add(conn, "t2", content="one more note on the payments rollout")
    notes.add(conn, "t2", content="and another on the payments rollout")
    assert _merged_out(conn, "notes_fts") >= 2  # written since: merged again
    _integrity(conn, "notes_fts")


def test_merging_after_a_few_writes_does_not_rewrite_the_whole_index(conn):
    """The work follows what was written: a merged index of many pages plus a few fresh
    notes costs a few pages, not a rewrite of the whole index (a negative merge's cost)."""
    if not fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    make_task(conn, "t1")
    with db.write(conn):  # small pages: many of them from a small home
        conn.execute("INSERT INTO notes_fts(notes_fts, rank) VALUES ('pgsz', 128)")
        for n in range(400):
            extra = " ".join(f"w{n}x{m}" for m in range(40))
            notes.add(conn, "t1", content=f"note {n} on the payments rollout {extra}")
    with db.write(conn):
        conn.execute("INSERT INTO notes_fts(notes_fts) VALUES ('optimize')")
    size = conn.execute("SELECT count(*) FROM notes_fts_data").fetchone()[0]
    assert size > 100
    for n in range(8):
        notes.add(conn, "t1", content=f"fresh note {n} on the payments rollout")
    assert fts.segments(conn, "notes_fts") > 2
    changes = _merged_out(conn, "notes_fts", 50)
    assert 2 <= changes < size / 4, (changes, size)
    _integrity(conn, "notes_fts")
    assert len(notes.search(conn, "payments rollout", limit=500)) == 408


def test_one_word_ranked_here_comes_in_fts5s_own_bm25_order(conn):
    """The window ranking a caller can use for one common word: FTS5's order, not its walk."""
    make_task(conn, "t1", title="host")
    make_task(conn, "t2", title="other")
    texts = ["deploy", "deploy the deploy", "deploy a rather long note about many other things",
             "Deploy DEPLOY deploy", "nothing here", "deploy twice deploy", "a deploy", "deploy"]
    for n, text in enumerate(texts * 3):
        notes.add(conn, "t1" if n % 2 else "t2", content=f"{text} {n % 4} n{n}")
    found = [dict(row) for row in conn.execute(
        "SELECT n.id, n.content, bm25(notes_fts) AS score FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid"
        " WHERE notes_fts MATCH ? ORDER BY score, notes_fts.rowid", (fts.quote("deploy"),))]
    assert len(found) == 21
    ranked = fts.rank_one_word(conn, "notes_fts", "deploy", list(reversed(found)), lambda row: row["content"],
                               lambda row: row["id"], 5)
    assert [row["id"] for _, row in ranked] == [row["id"] for row in found]
    scores = [score for score, _ in ranked]
    assert scores == sorted(scores) and all(score < 0 for score in scores)
    # the scores are FTS5's up to one factor (the word's weight)
    ratios = {round(score / row["score"], 9) for score, row in ranked}
    assert len(ratios) == 1


@pytest.mark.parametrize("expression,word", [('"deploy"', "deploy"), ('"Deploy"', "deploy"), ('"a b"', None),
                                             ('"deploy"*', None), ('("deploy")', None), ('"x" OR "y"', None),
                                             ('""', None), ('"', None), ('"de""ploy"', None)])
def test_single_word_names_only_one_quoted_word(expression, word):
    assert fts.single_word(expression) == word


def test_totals_read_fts5s_own_record(conn):
    assert fts.totals(conn, "notes_fts") == (0, 0.0)
    make_task(conn, "t1", title="host")
    notes.add(conn, "t1", content="one two three")
    notes.add(conn, "t1", content="four five")
    assert fts.totals(conn, "notes_fts") == (2, 2.5)
    rows, average = fts.totals(conn, "tasks_fts")
    assert rows == 1 and average == 3.0  # "t1", "Trove", "host"


def test_the_trigram_index_is_checked_by_doctor_and_repaired_by_fts_rebuild(conn, home):
    """Substring search's trigram index is one of the registry's: drift in it is found by
    doctor's full-text check and repaired by fts-rebuild like any other index's."""
    from mindos.recovery import doctor, reindex

    if not fts.has(conn, "tasks_trigram_fts"):
        pytest.skip("SQLite without the trigram tokenizer")
    make_task(conn, "t1", title="retry payments nightly")
    make_task(conn, "t2", title="cache api warmup")
    seq, title = conn.execute("SELECT seq, title FROM tasks WHERE id = 't1'").fetchone()
    assert fts.drift(conn, "tasks_trigram_fts")["ok"] is True
    with db.write(conn):  # t1's trigrams dropped behind the triggers' back
        conn.execute("INSERT INTO tasks_trigram_fts(tasks_trigram_fts, rowid, id, project, title, description,"
                     " next_action, blocked_reason) SELECT 'delete', seq, id, project, title, description, next_action,"
                     " blocked_reason FROM tasks WHERE seq = ?", (seq,))
    drift = [p for p in doctor.run(str(home))["problems"] if p["kind"] == "fts_index_drift"]
    assert [(p["index"], p["missing"], p["method"]) for p in drift] == [("tasks_trigram_fts", [seq], "docsize")]
    report = reindex.rebuild(conn)
    assert report["fixed"] == ["tasks_trigram_fts"]
    assert [row[0] for row in conn.execute("SELECT rowid FROM tasks_trigram_fts WHERE tasks_trigram_fts MATCH ?",
                                           (fts.quote(title[3:12]),))] == [seq]


def test_a_trigram_index_holds_no_row_of_short_text_and_that_is_no_drift(conn):
    """A note of two characters has no trigram: the trigram index holds nothing of it, and
    its check (through the index's own document sizes) expects nothing; a ghost row is seen."""
    if not fts.has(conn, "notes_trigram_fts"):
        pytest.skip("SQLite without the trigram tokenizer")
    make_task(conn, "t1", title="ok")
    notes.add(conn, "t1", content="ok")
    notes.add(conn, "t1", content="a longer note")
    for name in ("tasks_trigram_fts", "notes_trigram_fts"):
        report = fts.drift(conn, name)
        assert report["ok"] and report["method"] == "docsize", report
        assert not fts.window_drifts(conn, name, 0, 10 ** 12)
    assert fts.drift(conn, "notes_trigram_fts")["source"] == 1
    with db.write(conn):
        conn.execute("INSERT INTO notes_trigram_fts(rowid, content) VALUES (999, 'ghost row')")
    report = fts.drift(conn, "notes_trigram_fts")
    assert (report["ok"], report["stale"], report["missing"]) == (False, [999], [])


def test_a_rebuilt_index_is_left_in_one_segment(conn):
    """A rebuild writes a big index as several segments on the low levels, where the
    automatic merges of the next few writes would rewrite it all inside some agent's call;
    the rebuild merges them at once, so the index is one segment (and still matches)."""
    if not db.trigram_supported():
        pytest.skip("SQLite without the trigram tokenizer")
    make_task(conn, "t1")
    words = "payments gateway rollout retry budget ledger queue worker cache schema".split()
    with db.write(conn):
        conn.executemany(
            "INSERT INTO notes(task_id, content, kind, source, created_at) VALUES ('t1', ?, 'observation', 'x',"
            " '2026-01-01T00:00:00Z')",
            [(" ".join(f"{words[(n * 7 + k) % 10]}{n * 31 + k}" for k in range(40)),) for n in range(4000)])
    with db.write(conn):  # a small write buffer: the rebuild flushes as at 10k tasks with the default one
        conn.execute("INSERT INTO notes_trigram_fts(notes_trigram_fts, rank) VALUES ('hashsize', 65536)")
        fts.rebuild(conn, "notes_trigram_fts")
    assert fts.segments(conn, "notes_trigram_fts") == 1
    assert conn.execute("SELECT count(*) FROM notes_trigram_fts WHERE notes_trigram_fts MATCH '\"ledger123\"'"
                        ).fetchone()[0] == conn.execute("SELECT count(*) FROM notes WHERE content LIKE '%ledger123%'"
                                                        ).fetchone()[0] > 0
