"""The one clock, and the one timestamp format.

Every time-dependent rule (leases, TTLs, backoff, aging, deferral, deadlines) reads
:func:`now`.  Tests move time with :func:`set_now` / :func:`advance`; subprocess tests can
pin it with the ``MINDOS_NOW`` environment variable (an ISO 8601 instant).  Nothing in the
package calls ``datetime.now`` or ``time.time`` for rule decisions.

Timestamps are stored as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC, whole seconds) so that text order
is time order and SQL can compare them directly.
"""

import os
from datetime import datetime, timedelta, timezone

from mindos.errors import InvalidInput

_override = None

_ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
# Accept 'Z', '+HH:MM', '+HHMM' offsets and a space instead of 'T'; fromisoformat does the rest.
_ZULU = ("z", "Z")


def now():
    """Return the current instant as an aware UTC datetime (whole seconds)."""
    if _override is not None:
        return _override
    pinned = os.environ.get("MINDOS_NOW")
    if pinned:
        return parse(pinned, "MINDOS_NOW")
    return datetime.now(timezone.utc).replace(microsecond=0)


def now_iso():
    """Return :func:`now` formatted for storage."""
    return format_ts(now())


def set_now(value):
    """Pin the clock (tests only); ``None`` releases it.  Accepts a datetime or ISO text."""
    global _override
    if value is None or isinstance(value, datetime):
        _override = value if value is None else value.astimezone(timezone.utc).replace(microsecond=0)
    else:
        _override = parse(value, "clock")


def pinned():
    """The instant :func:`set_now` pinned (None while the clock runs free), to restore later."""
    return _override


def advance(seconds=0, *, minutes=0, hours=0, days=0):
    """Move a pinned clock forward (pins it at the current time first if needed)."""
    set_now(now() + timedelta(seconds=seconds, minutes=minutes, hours=hours, days=days))


def format_ts(moment):
    """Format an aware datetime for storage."""
    utc = moment.astimezone(timezone.utc)
    # explicit padding: strftime('%Y') drops leading zeros for years < 1000 on glibc,
    # which would break "text order is time order"
    return (f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}"
            f"T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}Z")


def parse(text, flag="timestamp"):
    """Parse any ISO 8601 instant (naive means UTC) into an aware UTC datetime.

    Raises InvalidInput naming ``flag`` when the text is not a timestamp.
    """
    if isinstance(text, str) and len(text) == 20 and text[10] == "T" and text[19] == "Z" and text[:19].isascii():
        try:  # the storage format itself, the common case: no regex, no zone arithmetic
            moment = datetime.fromisoformat(text[:19])
        except ValueError:
            moment = None  # not a timestamp after all: the general path below says so
        # an offset or a fraction inside those 19 characters is not the storage format: the
        # general path reads it (and refuses an offset followed by Z)
        if moment is not None and moment.tzinfo is None and not moment.microsecond:
            return moment.replace(tzinfo=timezone.utc)
    if not isinstance(text, str) or not text.strip() or len(text) > 64:
        raise InvalidInput(f"invalid {flag}: expected an ISO 8601 timestamp, got {text!r:.80}")
    candidate = text.strip()
    if candidate.endswith(_ZULU):
        candidate = candidate[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(candidate)
    except ValueError:
        raise InvalidInput(f"invalid {flag}: expected an ISO 8601 timestamp, got {text!r:.80}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc).replace(microsecond=0)
    except OverflowError:  # e.g. 0001-01-01T00:00:00+01:00 has no UTC representation
        raise InvalidInput(f"invalid {flag}: {text!r:.80} is out of range") from None


def normalize(text, flag="timestamp"):
    """Parse ISO text and return it in the storage format."""
    return format_ts(parse(text, flag))


def shift(moment_text, seconds):
    """Return storage text for ``moment_text`` plus ``seconds``."""
    try:
        return format_ts(parse(moment_text) + timedelta(seconds=seconds))
    except OverflowError:
        raise InvalidInput(f"timestamp out of range: {moment_text} shifted by {seconds} seconds") from None


def seconds_between(earlier_text, later_text):
    """Whole seconds from one stored timestamp to another (negative if reversed)."""
    return int((parse(later_text) - parse(earlier_text)).total_seconds())
