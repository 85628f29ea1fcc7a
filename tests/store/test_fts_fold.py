"""The in-process BM25 (:func:`mindos.store.fts.bm25`, behind search --rank's bounded path and
related notes' common-word path) reads text exactly as the schema's FTS5 indexes tokenize it:
the same token characters, the same case folding and diacritic removal, for any script.  Each
test holds it against SQLite itself."""

import random
import sqlite3

import pytest

from conftest import make_task, seed_once
from mindos.memory import notes
from mindos.store import fts
from mindos.work import task_search, tasks

TEXTS = [
    "Café CAFÉ cafe café naïve NAÏVE façade Ångström Łódź Œuvre déjà-vu",
    "e\u0301cole E\u0301COLE ecole \u00e9cole",  # a combining accent, and the precomposed letter
    "Σίσυφος ΣΊΣΥΦΟΣ σίσυφοσ λόγος ΛΌΓΟΣ",  # Greek: final sigma, tonos kept
    "Привет МИР мир Ёжик ёжик",
    "İstanbul ISTANBUL ıstanbul Straße STRASSE ẞ",
    "東京 タワー 北京大学 한국어 テスト",
    "مرحبا بالعالم שָׁלוֹם עולם",
    "हिन्दी भाषा ภาษาไทย",  # vowel signs and viramas
    "ﬁle ﬂow ＦＵＬＬ ｗｉｄｔｈ x² Ⅻ ½ ①",
    "emoji 🚀 deploy 🔥 ok \u200b zero\u200bwidth\u00a0nbsp\u2009thin",
    "a.b,c;d—e–f…g «h» ‹i› „j“ (k) [l] {m} <n> ¿o? ¡p! §q ¶r",
    "rate_limit C++/C# user@example.com https://x.example/a?b=c#d 1.2.3 v2-beta",
    "\ue000private \U000f0000plane \u0378unassigned \U0001f9ffnew",
]


def _schema_index(conn, name="notes_fts"):
    """An in-memory copy of index ``name`` as the schema declares it (tokenizer options and
    all), over a plain table of (id, content)."""
    spec = fts.index(name)
    declared = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
    scratch = sqlite3.connect(":memory:")
    scratch.execute(f"CREATE TABLE {spec.table} ({spec.rowid} INTEGER PRIMARY KEY, {', '.join(spec.columns)})")
    scratch.execute(declared)
    scratch.execute(f"CREATE VIRTUAL TABLE terms USING fts5vocab({name}, instance)")
    return scratch


def _sqlite_tokens(conn, texts):
    """What the schema's notes index holds for each of ``texts``, in order."""
    scratch = _schema_index(conn)
    try:
        for at, text in enumerate(texts, 1):
            scratch.execute("INSERT INTO notes (id, content) VALUES (?, ?)", (at, text))
            scratch.execute("INSERT INTO notes_fts (rowid, content) VALUES (?, ?)", (at, text))
        found = {at: [] for at in range(1, len(texts) + 1)}
        for doc, term in scratch.execute("SELECT doc, term FROM terms ORDER BY doc, col, offset"):
            found[doc].append(term)
        return [found[at] for at in range(1, len(texts) + 1)]
    finally:
        scratch.close()


def _random_texts(count, seed):
    rng = random.Random(seed)
    pools = [(0x20, 0x7e), (0xa0, 0x24f), (0x300, 0x36f), (0x370, 0x52f), (0x590, 0x6ff), (0x900, 0xdff),
             (0x1e00, 0x1fff), (0x2000, 0x2bff), (0x3000, 0x30ff), (0x4e00, 0x4e80), (0xac00, 0xac40),
             (0xfb00, 0xfb4f), (0xff00, 0xffef), (0x10000, 0x1d7ff), (0x1f300, 0x1faff), (0xe0000, 0xe01ef),
             (0xd7fc, 0xd7ff), (0xfff0, 0xfffd)]
    texts = []
    for _ in range(count):
        chars = []
        for _ in range(rng.randint(1, 40)):
            low, high = rng.choice(pools)
            chars.append(chr(rng.randint(low, high)))
        texts.append("".join(chars))
    return texts


def test_the_tokens_are_the_schemas_index_tokens(conn):
    for text, expected in zip(TEXTS, _sqlite_tokens(conn, TEXTS)):
        assert fts.indexed_tokens(text) == expected, text


def test_random_text_of_many_scripts_tokenizes_as_sqlite_does(conn):
    texts = _random_texts(600, seed=5)
    for text, expected in zip(texts, _sqlite_tokens(conn, texts)):
        assert fts.indexed_tokens(text) == expected, ascii(text)


@pytest.mark.parametrize("text", ["", " ", "...", "\u0301", "\u0301\u0302", "A", "Ab_C-d", "\ud800x"])
def test_edge_texts(conn, text):
    if "\ud800" in text:  # a lone surrogate cannot reach SQLite: it separates
        assert fts.indexed_tokens(text) == ["x"]
        return
    assert fts.indexed_tokens(text) == _sqlite_tokens(conn, [text])[0]


def _fts5_notes(conn, expression):
    return [(row[0], row[1], row[2]) for row in conn.execute(
        "SELECT n.id, n.content, bm25(notes_fts) AS score FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid"
        " WHERE notes_fts MATCH ? ORDER BY score, notes_fts.rowid", (expression,))]


@pytest.fixture
def accented(conn):
    seed_once(conn, __name__ + ".accented", _accented)  # built once; each test gets a copy of the database
    return conn


def _accented(conn):
    make_task(conn, "t1", title="host")
    bodies = ["Café CAFÉ café", "cafe", "café au lait, a rather long note about coffee and many other things",
              "CAFÉ: «Café»—café…cafe!", "e\u0301cole et cafe\u0301", "Σίσυφος και σίσυφοσ ΣΊΣΥΦΟΣ café",
              "ΣΊΣΥΦΟΣ", "İstanbul café istanbul", "nothing to see", "Straße café STRASSE straße",
              "cafe cafe cafe cafe", "ﬁle café ＣＡＦＥ"]
    for n, body in enumerate(bodies):
        notes.add(conn, "t1", content=f"{body} n{n}")


@pytest.mark.parametrize("query", ["café", "CAFÉ", "cafe", "Σίσυφος", "σίσυφοσ", "İstanbul", "straße", "cafe\u0301",
                                   "café cafe", "café Straße", "ﬁle", "ＣＡＦＥ"])
def test_bm25_scores_and_orders_as_sqlite(accented, query):
    terms = [token.lower() for token in fts.tokens(query)]
    expression = fts.query(query)
    expected = _fts5_notes(accented, expression)
    assert expected, query  # the query matches something
    rows, average = fts.totals(accented, "notes_fts")
    hits = fts.match_counts(accented, "notes_fts", [fts.quote(term) for term in terms], 10 ** 6)
    scores = fts.bm25(terms, hits, rows, average, [content for _, content, _ in expected])
    assert scores == pytest.approx([score for _, _, score in expected], rel=1e-9), query
    order = sorted(range(len(expected)), key=lambda at: (scores[at], expected[at][0]))
    assert [expected[at][0] for at in order] == [row_id for row_id, _, _ in expected]


@pytest.mark.parametrize("word", ["café", "σίσυφοσ", "istanbul", "cafe"])
def test_one_word_ranked_here_comes_in_fts5s_order_for_folded_words(accented, word):
    expected = _fts5_notes(accented, fts.quote(word))
    found = [{"id": row_id, "content": content} for row_id, content, _ in reversed(expected)]
    ranked = fts.rank_one_word(accented, "notes_fts", word, found, lambda row: row["content"], lambda row: row["id"],
                               len(expected))
    assert [row["id"] for _, row in ranked] == [row_id for row_id, _, _ in expected]
    ratios = {round(score / fts5_score, 9) for (score, _), (_, _, fts5_score) in zip(ranked, expected)}
    assert len(ratios) == 1  # FTS5's scores, up to the word's weight


def test_search_ranks_accented_titles_as_sqlite_on_the_bounded_path(conn, monkeypatch):
    titles = ["Café crash", "CAFÉ café crash loop", "cafe", "Crème brûlée café menu item for the long week",
              "ÉCOLE café", "Café—café—CAFÉ", "Σίσυφος café"]
    for n, title in enumerate(titles):
        tasks.create(conn, project="P", title=title, task_id=f"c{n}")
    monkeypatch.setattr(task_search, "COMMON_WORD", 2)  # "café" is common: the bounded path ranks it here
    for query in ("café", "CAFÉ", "cafe", "Cafe\u0301"):
        found = task_search.search(conn, query, rank=True)
        expected = dict(conn.execute("SELECT t.id, bm25(tasks_fts) FROM tasks_fts JOIN tasks t"
                                     " ON t.seq = tasks_fts.rowid WHERE tasks_fts MATCH ?", (fts.query(query),)))
        assert sorted(task["id"] for task in found) == sorted(expected) and len(expected) == len(titles)
        # one word: its weight (counted only up to COMMON_WORD here) scales every score alike
        ratios = {round(task["score"] / expected[task["id"]], 9) for task in found}
        assert len(ratios) == 1, query


def test_the_schema_declares_its_indexes_with_the_default_tokenizer(conn):
    # indexed_tokens learns from a table with FTS5's default tokenizer: a tokenize= option on
    # an index would have to be taken up there too (the trigram indexes are never ranked nor
    # tokenized here: substring search only asks them for a quoted phrase)
    for name in fts.INDEXES:
        found = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()
        if name in fts.TRIGRAMS.values():
            assert found is None or "tokenize='trigram'" in found[0], name
            continue
        assert "tokenize" not in found[0].lower(), name


def test_characters_are_learned_once_and_from_any_thread(conn, monkeypatch):
    import threading

    monkeypatch.setattr(fts, "_FOLDS", {})
    opened = []
    real = sqlite3.connect
    monkeypatch.setattr(fts.sqlite3, "connect", lambda *a, **k: opened.append(a) or real(*a, **k))
    results = []
    worker = threading.Thread(target=lambda: results.append(fts.indexed_tokens("Ça VA, Ça va")))
    worker.start()
    worker.join()
    assert results == [["ca", "va", "ca", "va"]] and len(opened) == 1
    assert fts.indexed_tokens("ÇA Ça") == ["ca", "ca"] and len(opened) == 1  # nothing new: SQLite is not asked
    assert fts.indexed_tokens("plain ASCII only") == ["plain", "ascii", "only"] and len(opened) == 1
