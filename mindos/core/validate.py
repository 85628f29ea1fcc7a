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

# Pattern texts, compiled by re on first use (its cache): a call pays only for the ones
# it checks.
_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z"
_AGENT = r"[A-Za-z0-9][A-Za-z0-9._:@+-]{0,63}\Z"
_TAG = r"[a-z0-9:_./-]{1,64}\Z"
_HEX64 = r"[0-9a-f]{64}\Z"
# line breaks and other C0/C1 controls (tab allowed): a single-line field that holds one
# can forge a second line in a log, a listing or a terminal
_LINE_BREAKING = r"[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]"
_ASCII_INT = r"-?[0-9]{1,18}\Z"


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


# the shortest credential shape an id or a name can hold (xoxb- plus ten) is 15 characters
_SHORTEST_SECRET = 14


def not_secret(value, flag):
    """Refuse a credential-shaped id, name or tag (``secret_blocked``): it would be planted in
    every row, event and listing that names it, and an id can be neither redacted nor
    allowed.  The refusal carries ``audit`` (kinds and the flag, never the value) for the
    caller that holds the database to record."""
    if len(value) < _SHORTEST_SECRET:
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
    if not isinstance(value, str) or not re.match(_ID, value):
        raise InvalidInput(
            f"invalid {flag}: {shown(value)}"
            " (use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit)"
        )
    return not_secret(value, flag)


def agent(value, flag="--owner", *, secret_check=True):
    """An agent or owner name: 1-64 chars of [A-Za-z0-9._:@+-], starting alphanumeric, and
    not credential-shaped unless ``secret_check`` is off (a caller that audits the name
    through the write guard's identities itself)."""
    if not isinstance(value, str) or not re.match(_AGENT, value):
        raise InvalidInput(
            f"invalid {flag}: {shown(value)}"
            " (use 1-64 characters of A-Z a-z 0-9 . _ : @ + -, starting with a letter or digit)"
        )
    return not_secret(value, flag) if secret_check else value


def tag(value, flag="--tag"):
    """A tag or receipt kind: 1-64 chars of lowercase [a-z0-9:_./-]."""
    if not isinstance(value, str) or not re.match(_TAG, value):
        raise InvalidInput(f"invalid {flag}: {shown(value)} (use 1-64 characters of a-z 0-9 : _ . / -)")
    return not_secret(value, flag)


MAX_TAGS = 64


def tags(values, flag="--tag"):
    """Validate, de-duplicate and sort a list of tags (at most MAX_TAGS distinct)."""
    cleaned = sorted({tag(v, flag) for v in values or ()})
    if len(cleaned) > MAX_TAGS:
        raise InvalidInput(f"invalid {flag}: {len(cleaned)} values is over the limit of {MAX_TAGS}")
    return cleaned


def priority(value, flag="--priority"):
    """One of P0..P3."""
    if value not in PRIORITIES:
        raise InvalidInput(f"invalid {flag}: {shown(value, 40)} (choose from P0, P1, P2, P3)")
    return value


def status(value, flag="--status"):
    """One of the lifecycle statuses."""
    if value not in STATUSES:
        raise InvalidInput(f"invalid {flag}: {shown(value, 40)} (choose from {', '.join(STATUSES)})")
    return value


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


def line(value, flag, *, required=False, max_len=4096):
    """Single-line free text (a title, a reason, a branch): :func:`text` that also refuses
    newlines, carriage returns, NUL and the other control characters (tab allowed)."""
    value = text(value, flag, required=required, max_len=max_len)
    found = re.search(_LINE_BREAKING, value)
    if found:
        raise InvalidInput(f"invalid {flag}: contains a control character ({found.group()!r});"
                           " this field is a single line")
    return value


def title(value, flag="--title"):
    """A non-blank single-line title of at most MAX_TITLE characters."""
    return line(value, flag, required=True, max_len=MAX_TITLE)


def integer(value, flag):
    """An integer written in ASCII digits only (an optional leading ``-``): no ``+30``,
    ``1_000``, surrounding spaces, fullwidth or other-script digits, which ``int()`` takes."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str) or not re.match(_ASCII_INT, value):
        raise InvalidInput(f"invalid {flag}: expected an integer in ASCII digits, got {shown(value, 40)}")
    return int(value)


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
    if not isinstance(lowered, str) or not re.match(_HEX64, lowered):
        raise InvalidInput(f"invalid {flag}: expected a 64-character hex SHA-256 digest")
    return lowered


def positive_int(value, flag, *, minimum=1, maximum=10**9):
    """An integer within [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise InvalidInput(f"invalid {flag}: expected an integer from {minimum} to {maximum}, got {shown(value, 40)}")
    return value
