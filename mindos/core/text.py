"""Word tokens and token-Jaccard similarity: the one measure of "near-duplicate".

Notes (the near-duplicate guard, consolidation) and tasks (``similar``, ``dup-tasks``,
``similar_open_tasks``) all use these, so they agree on what "the same thing said twice"
means.  The word pattern is the one FTS5's unicode61 tokenizer applies: letters and digits,
with ``_`` a separator.
"""

import os
import re

from mindos.core import validate
from mindos.errors import InvalidInput

DEFAULT_NEAR_DUP_THRESHOLD = 0.8
_WORD = r"[^\W_]+"  # compiled by re on first use: most text is ASCII (below)
# On ASCII text the pattern's letters and digits are [A-Za-z0-9]: every other byte becomes a
# space and ``split`` does the rest, several times faster than the regex (ranking tokenizes
# every candidate row it scores)
_SEPARATOR_BYTES = bytes(c for c in range(256) if c > 127 or not chr(c).isalnum())
_ASCII_SEPARATORS = bytes.maketrans(_SEPARATOR_BYTES, b" " * len(_SEPARATOR_BYTES))


def words(text):
    """The word tokens of ``text`` in order (what FTS5's unicode61 tokenizer would index)."""
    if not text:
        return []
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_SEPARATORS).decode("ascii").split()
    return re.findall(_WORD, text)




def tokens(text):
    """The lowercase word-token set of ``text`` (the unit of token-Jaccard similarity)."""
    return {token.lower() for token in words(text)}


def jaccard(a, b):
    """Token-Jaccard similarity in [0, 1] of two texts or token sets; 0.0 when both are tokenless."""
    a = tokens(a) if isinstance(a, str) else a
    b = tokens(b) if isinstance(b, str) else b
    if not a or not b:
        return 0.0
    union = len(a | b)
    return len(a & b) / union


def near_dup_threshold(value=None, flag="--threshold"):
    """The near-duplicate threshold: ``value`` if given, else the env var, else 0.8; must be in (0, 1]."""
    if value is None:
        raw = os.environ.get("AUTOPILOT_NEAR_DUP_THRESHOLD", "")
        if not raw.strip():
            return DEFAULT_NEAR_DUP_THRESHOLD
        flag = "AUTOPILOT_NEAR_DUP_THRESHOLD"
        try:
            value = float(raw)
        except ValueError:
            raise InvalidInput(f"invalid {flag}: {validate.shown(raw, 40)} (expected a number in (0, 1])") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise InvalidInput(f"invalid {flag}: {validate.shown(value, 40)} (expected a number in (0, 1])")
    return float(value)


