"""Input rules shared by every command.

Each validator returns the clean value or raises :class:`InvalidInput` naming the flag.
Ids, projects and agent names are restricted to a safe charset so they can never become a
path outside the home, a LIKE wildcard, or an FTS5 operator.
"""

import re

from mindos.core import clock
from mindos.errors import InvalidInput, Refused

PRIORITIES = ("P0", "P1", "P2", "P3")
STATUSES = (
    "queued",
    "claimed",
    "running",
    "waiting_for_user",
    "waiting_for_review",
    "waiting_for_agent",
    "blocked",
    "ready_to_merge",
    "ready_to_deploy",
    "completed",
    "failed",
    "cancelled",
)
TERMINAL_STATUSES = ("completed", "failed", "cancelled")
LEASED_STATUSES = ("claimed", "running")

MAX_TITLE = 500
MAX_TEXT = 65536

# Charsets of ids, names and tags, checked with str methods (see within): compiling a
# pattern costs more than the check, and every call checks an id or a name.
_DIGITS = "0123456789"
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" + _DIGITS
_ID_CHARS = _ALNUM + "._-"
_AGENT_CHARS = _ALNUM + "._:@+-"
_TAG_CHARS = "abcdefghijklmnopqrstuvwxyz" + _DIGITS + ":_./-"
HEX_DIGITS = _DIGITS + "abcdef"
# line breaks and other C0/C1 controls (tab allowed): a single-line field that holds one
# can forge a second line in a log, a listing or a terminal (compiled by re on first use)
_LINE_BREAKING = r"[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]"


def within(value, charset, first=None, shortest=1, longest=64):
    """True when ``value`` is a str of ``shortest``..``longest`` characters, all of them in
    ``charset`` and the first in ``first`` (when given).  ``str.strip`` removes characters
    of the set from both ends, so it leaves nothing exactly when every character is in it."""
    return (isinstance(value, str) and shortest <= len(value) <= longest and not value.strip(charset)
            and (first is None or value[0] in first))


def ascii_integer(value):
    """True when ``value`` is an integer written in ASCII digits: an optional leading ``-``
    and 1-18 digits, nothing else (no ``+30``, ``1_000``, spaces, fullwidth or other-script
    digits, which ``int()`` would take)."""
    digits = value[1:] if isinstance(value, str) and value.startswith("-") else value
    return within(digits, _DIGITS, longest=18)


def ascii_number(value):
    """True when ``value`` is a decimal number written in ASCII: an optional leading ``-``,
    digits with at most one ``.`` among or around them, nothing else (no exponent, ``nan``,
    ``inf``, ``_``, spaces, fullwidth or other-script digits, which ``float()`` takes)."""
    if not isinstance(value, str):
        return False
    digits = value[1:] if value.startswith("-") else value
    whole, _, fraction = digits.partition(".")
    return (0 < len(digits) <= 32 and (whole or fraction) != "" and (not whole or within(whole, _DIGITS, longest=32))
            and (not fraction or within(fraction, _DIGITS, longest=32)))


def shown(value, width=80):
    """How an error message shows a rejected value: its repr clipped to ``width`` characters,
    or ``<redacted>`` when the secret guard flags it (never echo a credential to stderr).

    The detector is imported here, on the error path only, so valid input never pays for it.
    """
    if isinstance(value, str) and value:
        from mindos.core import secrets  # lazy: loaded only on the path that needs it

        if secrets.scan(value):
            return "<redacted>"
    return f"{value!r:.{width}}"


# the shortest credential shape an id or a name can hold (xoxb- plus ten) is 15 characters;
# public: the restore checks (recovery.rowcheck) clear a column of shorter values at once
SHORTEST_SECRET = 14


def not_secret(value, flag):
    """Refuse a credential-shaped id, name or tag (``secret_blocked``): it would be planted in
    every row, event and listing that names it, and an id can be neither redacted nor
    allowed.  The refusal carries ``audit`` (kinds and the flag, never the value) for the
    caller that holds the database to record."""
    if len(value) < SHORTEST_SECRET:
        return value
    from mindos.core import secrets  # lazy: only long names pay for the detector

    kinds = secrets.scan(value)
    if kinds:
        field = flag.lstrip("-").replace("-", "_").replace(" ", "_")
        error = Refused(f"secret guard: refused a credential-shaped {field} ({flag}: {', '.join(kinds)}); an id"
                        " or name cannot be redacted or allowed, use a plain one", code="secret_blocked")
        error.audit = {"kinds": kinds, "fields": [field]}
        raise error
    return value


def identifier(value, flag="id"):
    """A task/receipt/project id: 1-64 chars of [A-Za-z0-9._-], starting alphanumeric, and
    not credential-shaped (:func:`not_secret`)."""
    if not within(value, _ID_CHARS, _ALNUM):
        raise InvalidInput(
            f"invalid {flag}: {shown(value)}"
            " (use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit)"
        )
    return not_secret(value, flag)


def agent(value, flag="--owner", *, secret_check=True):
    """An agent or owner name: 1-64 chars of [A-Za-z0-9._:@+-], starting alphanumeric, and
    not credential-shaped unless ``secret_check`` is off (a caller that audits the name
    through the write guard's identities itself)."""
    if not within(value, _AGENT_CHARS, _ALNUM):
        raise InvalidInput(
            f"invalid {flag}: {shown(value)}"
            " (use 1-64 characters of A-Z a-z 0-9 . _ : @ + -, starting with a letter or digit)"
        )
    return not_secret(value, flag) if secret_check else value


def tag(value, flag="--tag"):
    """A tag or receipt kind: 1-64 chars of lowercase [a-z0-9:_./-]."""
    if not within(value, _TAG_CHARS):
        raise InvalidInput(f"invalid {flag}: {shown(value)} (use 1-64 characters of a-z 0-9 : _ . / -)")
    return not_secret(value, flag)


MAX_TAGS = 64


def tags(values, flag="--tag"):
    """Validate, de-duplicate and sort a list of tags (at most MAX_TAGS distinct)."""
    cleaned = sorted({tag(v, flag) for v in values or ()})
    if len(cleaned) > MAX_TAGS:
        raise InvalidInput(f"invalid {flag}: {len(cleaned)} values is over the limit of {MAX_TAGS}")
    return cleaned


def one_of(value, flag, choices):
    """``value`` when it is one of ``choices``; else InvalidInput naming them."""
    if value not in choices:
        raise InvalidInput(f"invalid {flag}: {shown(value, 40)} (choose from {', '.join(choices)})")
    return value


def priority(value, flag="--priority"):
    """One of P0..P3."""
    return one_of(value, flag, PRIORITIES)


def status(value, flag="--status"):
    """One of the lifecycle statuses."""
    return one_of(value, flag, STATUSES)


def text(value, flag, *, required=False, max_len=MAX_TEXT):
    """Free text stored exactly; ``required`` refuses blank values."""
    if not isinstance(value, str):
        raise InvalidInput(f"invalid {flag}: expected text")
    if required and not value.strip():
        raise InvalidInput(f"invalid {flag}: must not be empty")
    if len(value) > max_len:
        raise InvalidInput(f"invalid {flag}: {len(value)} characters is over the limit of {max_len}")
    if "\x00" in value:
        raise InvalidInput(f"invalid {flag}: contains a NUL character")
    if not value.isascii():
        try:  # argv bytes that are not UTF-8 arrive as lone surrogates, which SQLite cannot store
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(f"invalid {flag}: not valid UTF-8 text") from None
    return value


def single_line(value):
    """True when the str ``value`` holds no line break, NUL or other control character (tab
    allowed): the one test of a one-line field, which :func:`line` enforces."""
    return re.search(_LINE_BREAKING, value) is None


def line(value, flag, *, required=False, max_len=4096):
    """Single-line free text (a title, a reason, a branch): :func:`text` that also refuses
    newlines, carriage returns, NUL and the other control characters (tab allowed)."""
    value = text(value, flag, required=required, max_len=max_len)
    if not single_line(value):
        found = re.search(_LINE_BREAKING, value).group()
        raise InvalidInput(f"invalid {flag}: contains a control character ({found!r}); this field is a single line")
    return value


def title(value, flag="--title"):
    """A non-blank single-line title of at most MAX_TITLE characters."""
    return line(value, flag, required=True, max_len=MAX_TITLE)


def integer(value, flag):
    """An integer written in ASCII digits only (an optional leading ``-``): no ``+30``,
    ``1_000``, surrounding spaces, fullwidth or other-script digits, which ``int()`` takes."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not ascii_integer(value):
        raise InvalidInput(f"invalid {flag}: expected an integer in ASCII digits, got {shown(value, 40)}")
    return int(value)


def number(value, flag):
    """A decimal number written in ASCII (:func:`ascii_number`); an int or float passes as it is."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if not ascii_number(value):
        raise InvalidInput(f"invalid {flag}: expected a number in ASCII digits, got {shown(value, 40)}")
    return float(value)


def timestamp(value, flag):
    """An ISO 8601 instant normalized for storage; '' or None clears (returns None)."""
    if value is None or value == "":
        return None
    return clock.normalize(value, flag)


def digest(value, flag="--recall-digest"):
    """A 64-character lowercase hex SHA-256 digest ('' allowed: no digest)."""
    if value in (None, ""):
        return ""
    lowered = value.lower() if isinstance(value, str) else value
    if not within(lowered, HEX_DIGITS, shortest=64):
        raise InvalidInput(f"invalid {flag}: expected a 64-character hex SHA-256 digest")
    return lowered


def positive_int(value, flag, *, minimum=1, maximum=10**9):
    """An integer within [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise InvalidInput(f"invalid {flag}: expected an integer from {minimum} to {maximum}, got {shown(value, 40)}")
    return value


def seconds(value, flag="--seconds", *, maximum=600):
    """A time bound: a number (never a bool) above 0 and at most ``maximum``, as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= maximum:
        raise InvalidInput(f"invalid {flag}: expected a number above 0 and at most {maximum:g}, got {shown(value, 40)}")
    return float(value)
