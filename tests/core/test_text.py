"""Word tokens (mindos/core/text.py): the one tokenizer behind FTS queries, near-duplicate
checks and ranking, with a fast path for ASCII text that must agree with the pattern."""

import random
import re

from mindos.core import text

# FTS5 unicode61's view of a word, as the module documents it
PATTERN = re.compile(r"[^\W_]+", re.UNICODE)


def test_ascii_fast_path_agrees_with_the_pattern_on_every_ascii_character():
    every = "".join(chr(c) for c in range(128))
    assert text.words(every) == PATTERN.findall(every)
    rng = random.Random(5)
    for _ in range(5000):
        sample = "".join(chr(rng.randrange(128)) for _ in range(rng.randrange(40)))
        assert text.words(sample) == PATTERN.findall(sample), repr(sample)


def test_words_keep_case_order_and_split_on_underscores_and_punctuation():
    assert text.words("Rate_limit hit: API-v2 (x9)\tdone\n") == ["Rate", "limit", "hit", "API", "v2", "x9", "done"]
    assert text.words("") == [] and text.words(None) == []


def test_non_ascii_text_uses_the_pattern():
    sample = "Café naïve_übung 東京 x²"
    assert text.words(sample) == PATTERN.findall(sample) == ["Café", "naïve", "übung", "東京", "x²"]


def test_inert_body_with_only_line_breaks_and_tabs_unprintable_is_returned_without_the_regex(monkeypatch):
    """A multiline body whose only unprintable characters are line breaks and tabs has nothing
    to escape: it comes back as it is without compiling the body's pattern (prime's text pack,
    an MCP text result), and every other body gets exactly the regex's answer."""
    rng = random.Random(5)
    pieces = ["a", " ", "\n", "\t", "\r", "\x1b[31m", "\u202e", "\u2028", "\x85", "é", "中", "\x7f", "\x0b", "\x00"]
    for _ in range(2000):
        value = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert text.inert(value, multiline=True) == re.sub(text._ACTIVE_IN_BODY, text._escaped, value), value
        assert text.inert(value) == re.sub(text._ACTIVE_IN_LINE, text._escaped, value), value
    called, sub = [], re.sub
    monkeypatch.setattr(text.re, "sub", lambda *a: called.append(a) or sub(*a))
    body = "# heading\n- one\tcolumn\n- two é 中\n"
    assert text.inert(body, multiline=True) is body and called == []
    assert text.inert("bell\x07\n", multiline=True) == "bell\\x07\n" and len(called) == 1
