"""One FTS MATCH helper: every MATCH condition is :func:`mindos.store.fts.match` (the
expression bound, never spliced) and every term built from user text is quoted by
:func:`mindos.store.fts.quote`, so FTS5 syntax and quotes typed by a user are plain words
whichever command searches."""

import ast
import os

import pytest

from conftest import ROOT, db_state, make_task
from mindos.store import fts

INJECTIONS = [
    'alpha" OR "beta',
    "alpha OR beta NOT gamma",
    "NEAR(alpha beta, 1)",
    "title: alpha",
    "{title description}: alpha",
    "alph* ^beta",
    "'); DROP TABLE notes; --",
    '"""',
    "alpha AND",
    "-alpha +beta",
]


@pytest.mark.parametrize("text", INJECTIONS)
def test_query_quotes_every_token_so_syntax_is_plain_text(conn, text):
    expression = fts.query(text, "OR")
    if expression is None:
        return
    # every term is a quoted string: nothing outside quotes but the joining operator
    for term in expression.split(" OR "):
        assert term.startswith('"') and term.endswith('"') and '"' not in term[1:-1].replace('""', "")
    # and SQLite accepts it as a MATCH expression over every index
    for name in fts.INDEXES:
        conn.execute(f"SELECT count(*) FROM {name} WHERE {fts.match(name)}", (expression,)).fetchone()


def test_quote_doubles_inner_quotes_and_match_binds():
    assert fts.quote('a"b') == '"a""b"'
    assert fts.match("notes_fts") == "notes_fts MATCH ?"
    assert fts.match("notes_fts", ":expr") == "notes_fts MATCH :expr"
    with pytest.raises(ValueError):
        fts.match("notes_fts MATCH 1 OR 1")


SEARCHES = [
    ("autopilot", ["search", "{text}", "--rank"]),
    ("autopilot", ["search", "{text}"]),
    ("autopilot", ["search-notes", "{text}", "--rank"]),
    ("autopilot", ["search-handoffs", "{text}", "--rank"]),
    ("autopilot", ["search-facts", "{text}", "--rank"]),
    ("autopilot", ["memory-search", "{text}"]),
]


@pytest.mark.parametrize("door, argv", SEARCHES, ids=[" ".join(a[:1] + a[2:]) for _, a in SEARCHES])
def test_injection_shaped_text_is_searched_as_words_by_every_search(conn, cli, door, argv):
    make_task(conn, "t1", title="alpha beta gamma")
    before = db_state(conn)
    for text in INJECTIONS:
        rc, out, err = cli(door, *[text if a == "{text}" else a for a in argv])
        assert (rc, err) == (0, ""), (text, err)
    assert db_state(conn) == before


def _strings(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.JoinedStr):
        for part in node.values:
            if isinstance(part, ast.Constant):
                yield part.value


# quoting of terms still written by modules another change owns (shrink this list as they move)
QUOTE_ALLOWED = {"mindos/store/fts.py", "mindos/store/sql.py"}  # sql.py quotes SQL identifiers, not FTS terms


def test_match_sql_and_term_quoting_live_in_the_fts_module_only():
    matches, quotes = [], []
    for folder, _, names in os.walk(os.path.join(ROOT, "mindos")):
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
            for node in ast.walk(tree):
                if rel != "mindos/store/fts.py" and any(" MATCH ?" in s or " MATCH :" in s for s in _strings(node)):
                    matches.append(f"{rel}:{node.lineno}")
                if (rel not in QUOTE_ALLOWED and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "replace" and len(node.args) == 2
                        and [getattr(a, "value", None) for a in node.args] == ['"', '""']):
                    quotes.append(f"{rel}:{node.lineno}")
    assert not matches, f"MATCH SQL assembled outside store/fts.py (use fts.match): {matches}"
    assert not quotes, f"FTS terms quoted outside store/fts.py (use fts.quote): {quotes}"
