"""Word tokens and token-Jaccard similarity: the one measure of "near-duplicate"; and
:func:`inert`, the one rule for text that reaches a terminal or an agent.

Notes (the near-duplicate guard, consolidation) and tasks (``similar``, ``dup-tasks``,
``similar_open_tasks``) all use these, so they agree on what "the same thing said twice"
means.  The word pattern is the one FTS5's unicode61 tokenizer applies: letters and digits,
with ``_`` a separator.

Stored text is agent- and user-written: a title holding ESC sequences could clear the
screen or retitle the terminal of whoever reads a text view, and a bidi override could
show a command other than the one written.  Every text rendering (``prime --format text``,
the gateway hook, the dashboard, the morning brief, every command that prints text) passes
through :func:`inert`, which writes such characters as visible escapes.
"""

import os
import re

from mindos.core import validate
from mindos.errors import InvalidInput

DEFAULT_NEAR_DUP_THRESHOLD = 0.8
# What a terminal or a reader acts on instead of showing: C0 controls (a multi-line body keeps
# newline and tab), DEL, the C1 controls (ESC's 8-bit twins, CSI and OSC among them), the
# line and paragraph separators, and the bidi marks, embeddings, overrides and isolates that
# reorder what is shown (compiled by re on first use)
_ACTIVE_IN_BODY = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
_ACTIVE_IN_LINE = "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
# their ASCII members (\x00-\x1f and \x7f, a body keeping its line breaks and tabs) as bytes,
# so ASCII text is cleared by one byte scan (see inert; a test compares them with the classes)
_ASCII_ACTIVE_IN_LINE = bytes(range(0x20)) + b"\x7f"
_ASCII_ACTIVE_IN_BODY = _ASCII_ACTIVE_IN_LINE.replace(b"\t", b"").replace(b"\n", b"")
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
        if not validate.ascii_number(raw.strip()):
            raise InvalidInput(f"invalid {flag}: {validate.shown(raw, 40)} (expected a number in (0, 1])")
        value = float(raw)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise InvalidInput(f"invalid {flag}: {validate.shown(value, 40)} (expected a number in (0, 1])")
    return float(value)


def inert(value, *, multiline=False):
    """``value`` with every character a terminal or a reader would act on written as a visible
    escape (``\\x1b``, ``\\u202e``); ``multiline`` keeps newlines and tabs (a body of several
    lines), otherwise they are escaped too.  Printable text is returned as it is (none of those
    characters is printable), and applying it twice changes nothing more."""
    if value.isascii():  # one byte scan, cheaper on long text than the printable test of every character
        active = _ASCII_ACTIVE_IN_BODY if multiline else _ASCII_ACTIVE_IN_LINE
        if len(value.encode("ascii").translate(None, active)) == len(value):
            return value
    elif value.isprintable() or multiline and value.replace("\n", "").replace("\t", "").isprintable():
        return value  # (a body whose only unprintable characters are line breaks and tabs: no regex compiled)
    return re.sub(_ACTIVE_IN_BODY if multiline else _ACTIVE_IN_LINE, _escaped, value)


def _escaped(match):
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(value, width=None):
    """``value`` as one line of a text view: every run of whitespace (line breaks included) one
    space, every other active character a visible escape (:func:`inert`), clipped to ``width``
    characters with an ellipsis."""
    line = inert(" ".join(str(value if value is not None else "").split()))
    return line if width is None or len(line) <= width else line[:width - 1] + "\u2026"
