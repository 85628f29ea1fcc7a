"""The words a wake carries: page entries, the recovery copy, and filling ``{braces}``.

The code holds no words.  Every fixed line comes from the newest revision of its page saved
by a trusted editor (``Moods/Wake texts``, ``Moods/Dials``), re-read at most five minutes
stale, else from ``wake_texts.md`` beside the code (the recovery copy).  Rules, each from the
wake spec:

  * a revision whose ``full-tools`` text lacks "has your full tools", or whose ``look-only``
    text lacks "can look but not touch", is not used (the next older trusted revision is
    tried, then the recovery copy);
  * an entry a usable revision lacks comes from the recovery copy;
  * ``{field}`` is filled when the field is known; an unknown field stays as written;
  * a text that cannot be filled (a stray ``{`` or ``}``) is sent in the recovery copy's words.

Filling never uses ``str.format``: page text is data, and ``{0.__class__}`` must stay text.
"""

import os
import re
from datetime import timedelta

from mindos.core import clock
from mindos.errors import IntegrityError

# One source: wake_texts.md at the repository's top level.  A checkout reads it there; a built
# wheel carries a copy inside this package (setup.py's build step), like schema.sql.
_HERE = os.path.dirname(os.path.abspath(__file__))
RECOVERY_CANDIDATES = (os.path.join(_HERE, "wake_texts.md"),
                       os.path.join(os.path.dirname(os.path.dirname(_HERE)), "wake_texts.md"))
RECOVERY_PATH = next((path for path in RECOVERY_CANDIDATES if os.path.isfile(path)), RECOVERY_CANDIDATES[-1])
STALE_SECONDS = 300
_STALE = timedelta(seconds=STALE_SECONDS)  # compared as a timedelta: a tick asks thousands of times
REQUIRED = {"full-tools": "has your full tools", "look-only": "can look but not touch"}

_PAGE = re.compile(r"^# Page:\s*(.+?)\s*$")
_ENTRY = re.compile(r"^##\s+([a-z0-9][a-z0-9-]*)\s*$")
_PURPOSE = re.compile(r"^Purpose:\s*(.*)$")
_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def parse_entries(text):
    """``{key: {"purpose", "text"}}`` from ``## key`` / ``Purpose:`` / fenced-``text`` entries.

    An entry without a closed fenced block is skipped (a half-written entry is not words).
    """
    entries, key, purpose, block, inside = {}, None, "", [], False
    for line in text.splitlines():
        if inside:
            if line.strip() == "```":
                entries[key] = {"purpose": purpose, "text": "\n".join(block)}
                key, inside = None, False
            else:
                block.append(line)
            continue
        match = _ENTRY.match(line)
        if match:
            key, purpose = match.group(1), ""
            continue
        if key is None:
            continue
        match = _PURPOSE.match(line)
        if match:
            purpose = match.group(1)
        elif line.strip() in ("```text", "```"):
            inside, block = True, []
    return entries


def parse_recovery(text):
    """``{page: entries}`` from the recovery copy's ``# Page: name`` sections."""
    pages, current, lines = {}, None, []
    for line in text.splitlines():
        match = _PAGE.match(line)
        if match:
            if current is not None:
                pages[current] = parse_entries("\n".join(lines))
            current, lines = match.group(1), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        pages[current] = parse_entries("\n".join(lines))
    return pages


def load_recovery(path=RECOVERY_PATH):
    """The recovery copy's pages; raises IntegrityError when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as handle:
            return parse_recovery(handle.read())
    except (OSError, UnicodeDecodeError) as exc:
        raise IntegrityError(f"cannot read the wake texts recovery copy {path}: {exc}") from None


def usable(entries):
    """True unless an entry the record reads back lacks its phrase."""
    return all(key not in entries or phrase in entries[key]["text"] for key, phrase in REQUIRED.items())


_UNSEEN = object()
_TEMPLATES = {}  # template text -> its parts, or None for a stray brace (a tick fills the same few thousands of times)


def _parts(text):
    """``text`` split at its ``{fields}``: literal text at even places, field names at odd
    ones; None when a brace is left over once the fields are taken out (cached, bounded)."""
    stripped = _FIELD.sub("", text)
    parts = None if "{" in stripped or "}" in stripped else tuple(_FIELD.split(text))
    if len(_TEMPLATES) < 4096:  # bounded: the words pages hold a few hundred entries
        _TEMPLATES[text] = parts
    return parts


def fill(text, fields):
    """Fill known ``{fields}`` of ``text``; return None when the text cannot be filled."""
    parts = _TEMPLATES.get(text, _UNSEEN)
    if parts is _UNSEEN:
        parts = _parts(text)
    if parts is None:
        return None
    if len(parts) == 1:
        return text
    out = list(parts)
    for i in range(1, len(out), 2):
        value = fields.get(out[i])
        out[i] = "{" + out[i] + "}" if value is None else str(value)
    return "".join(out)


class Words:
    """The words in use, read through a per-process cache at most five minutes stale.

    One instance lives for one tick (or one polling loop); it holds no connection of its
    own.  ``source(page)`` says where a page's words came from (a revision id or
    ``"wake_texts.md"``) so a wake's record can name it.
    """

    def __init__(self, recovery_path=RECOVERY_PATH):
        self.recovery_path = recovery_path
        self._recovery = None
        self._cache = {}

    def recovery(self):
        if self._recovery is None:
            self._recovery = load_recovery(self.recovery_path)
        return self._recovery

    def _page(self, conn, page):
        now = clock.now()
        cached = self._cache.get(page)
        if cached is not None and now - cached[0] < _STALE:
            return cached
        from mindos.comms import pages  # lazy: the recovery-only path (tests, bench) never needs it

        entries, source = None, None
        for revision, body in pages.trusted_revisions(conn, page):
            parsed = parse_entries(body)
            if parsed and usable(parsed):
                entries, source = parsed, revision
                break
        if entries is None and cached is not None and cached[2] is not None:
            # read before and unreadable now: keep what was read (never fall back mid-run)
            entries, source = cached[1], cached[2]
        self._cache[page] = (now, entries, source)
        return self._cache[page]

    def source(self, conn, page):
        """The revision id a page's words come from, or ``"wake_texts.md"``."""
        return self._page(conn, page)[2] or "wake_texts.md"

    def text(self, conn, page, key, **fields):
        """The words of ``key`` on ``page``, filled; raises IntegrityError if no copy has it."""
        entries = self._page(conn, page)[1]
        recovery = self.recovery()  # read (or refused) first, as always, even when the page has the entry
        if entries and key in entries:
            filled = fill(entries[key]["text"], fields)
            if filled is not None:
                return filled
        recovery = recovery.get(page, {})
        if key not in recovery:
            raise IntegrityError(f"the wake text {page}/{key} is in neither the page nor wake_texts.md")
        filled = fill(recovery[key]["text"], fields)
        if filled is None:
            raise IntegrityError(f"the recovery copy of {page}/{key} has a stray brace")
        return filled

    def layer(self, conn, page):
        """``(revision, body)`` of the newest trusted revision of an instruction page, or None
        when it is unreadable or was never saved (cached like the words)."""
        now = clock.now()
        key = ("layer", page)
        cached = self._cache.get(key)
        if cached is not None and now - cached[0] < _STALE:
            return cached[1]
        from mindos.comms import pages  # lazy: see _page

        found = pages.trusted_revisions(conn, page, 1)
        value = found[0] if found else (cached[1] if cached else None)
        self._cache[key] = (now, value)
        return value
