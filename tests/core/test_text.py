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
