"""bench/phrase_probe.py's pair index (one token per space: three characters either side)
names every row holding a text as LIKE sees it, whatever the text (short words, repeated
spaces, quotes, wildcards, backslashes, non-ASCII case), and its tokens are what a query's
inner spaces promise."""

import os
import random
import sqlite3
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import phrase_probe  # noqa: E402

from mindos.store import fts  # noqa: E402


@pytest.mark.parametrize("text,expected", [
    ("retry payments", ["try pay"]), ("deploy gateway", ["loy gat"]), ("cache api", ["che api"]),
    ("schema migration worker", ["ema mig", "ion wor"]), ("in gateway", []), ("RATE Limit", ["ate lim"]),
    ("a b c", []), ("x in y", []), ("payments", []), ("go in gateway", ["in gat"]), ("é  ÉTÉ x", [" ÉtÉ"]),
    ("abc  d", ["abc "]), ("Straße Rate", ["aße rat"]),
])
def test_the_tokens_of_a_query_are_its_inner_spaces_with_known_sides(text, expected):
    assert phrase_probe.pair_tokens(text) == [gram.encode().hex().upper() for gram in expected]


def test_the_pair_index_names_every_row_holding_the_text():
    rng = random.Random(5)
    alphabet = ["a", "A", "b", " ", " ", "ab", "abc", "ABC", '"', "%", "_", "\\", "é", "É", "ß", "*", "NEAR", "(", ",", "\t"]
    scratch = sqlite3.connect(":memory:")
    try:
        scratch.execute(f"CREATE TABLE tasks(seq INTEGER PRIMARY KEY, {', '.join(phrase_probe.COLUMNS)})")
        rows = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40))) for _ in range(300)]
        scratch.executemany("INSERT INTO tasks(seq, title, description, next_action) VALUES (?, ?, ?, ?)",
                            [(n, text, rows[(n * 7) % len(rows)], None if n % 3 else "") for n, text in enumerate(rows)])
        phrase_probe.build(scratch)
        checked = 0
        for row in rows:
            for start in range(0, max(len(row) - 2, 0), 3):
                query = row[start:start + rng.randrange(3, 20)]
                tokens = phrase_probe.pair_tokens(query)
                if not tokens:
                    continue
                holding = {n for (n,) in scratch.execute(
                    "SELECT seq FROM tasks WHERE title LIKE ?1 ESCAPE '\\' OR description LIKE ?1 ESCAPE '\\'",
                    (fts.like_pattern(query),))}
                named = {n for (n,) in scratch.execute(
                    f"SELECT rowid FROM {phrase_probe.PAIRS} WHERE {phrase_probe.PAIRS} MATCH ?",
                    (" AND ".join(f'"{token}"' for token in tokens),))}
                assert holding and holding <= named, (query, tokens)
                checked += 1
        assert checked > 500
    finally:
        scratch.close()
