"""Answers with their history: memory-search ranks the record of a change with the answer.

When a current row answers a query and the row it replaced is hidden (a superseded note, a
memory forgotten ``--superseded-by`` it, a fact whose earlier value was retracted), an agent
asking "what is X" also needs to know that X changed, when and why.  The current row says
what X is now; the story of the change sits elsewhere: in the retraction's reason, or in a
note, memory or handoff that talks about the change.  This module finds both for the top
answers of a search and places them with the answer.

Design decisions
  * **Only for the top answers.**  The first TOP_ANSWERS current hits are checked for a
    hidden predecessor, each with one indexed lookup (a note's ``supersedes``; memories of
    the same project retracted in its favour; facts with the same subject and predicate
    whose window closed).  A search whose top answers replaced nothing pays those few
    lookups and nothing else.
  * **What the answer carries.**  An answer with a hidden predecessor gains ``change``:
    ``{"from": <the old text>, "at": <when it was replaced>, "reason": <the retraction's
    reason, facts only>}`` (null parts left out), so what changed, when and why travels with
    the answer even when nothing else records it.
  * **What a change record is.**  The words that differ between the old and the new text
    (compared by stem: "shift" and "shifts" are one word) say what changed (``braintree`` -> ``stripe``, ``5`` -> ``10``).  A change record is
    another live row of the search's scope that names the old value (it mentions a word
    only the old text had; a bare number counts only beside a new-only word, as in "from 5
    to 10"), or that names the new value together with a word of change
    (CHANGE_WORDS: general engineering vocabulary for a change, such as "moved",
    "switched", "raised", "replaced", "migrated", "instead").  Among the search's own
    candidates the best-scored one wins; when none qualifies, each text index is probed
    once (old-only words AND new-only words, by stem, newest first, a couple of rows).  When
    that finds none, a row written within RECORD_WINDOW_HOURS of the replacement records it
    when it names an old-only word (not a bare number) or says, with a word of change, that
    the subject both versions share changed ("Opening moved earlier so ..."); the one nearest
    in time wins: a record of a change is written with the change.
  * **Where it ranks.**  The change record is placed right after its answer (marked
    ``history_of: {"kind", "id"}`` of the answer), keeping its own score; the rest keep
    their order, and the list is then cut to the limit.  One record per answer, never the
    same record twice.
  * **Deterministic.**  Every choice is ordered by score, then newest, then kind and id.
"""

import os

from mindos.memory import retrieval
from mindos.store import fts

TOP_ANSWERS = 3
PROBE_ROWS = 2
OLD_PROBE_ROWS = 20  # the old-only probe reads more: most of its matches fall outside the window
# a row naming only the old value records the change when written within this many hours of it
RECORD_WINDOW_HOURS = 72
MAX_DIFF_WORDS = 8
# Words that say a value changed (matched as word prefixes: "moved", "moving", "switches").
# General engineering vocabulary, not fitted to any corpus.
CHANGE_WORDS = ("chang", "switch", "moved", "moving", "migrat", "replac", "rais", "lowered", "bump", "upgrad",
                "downgrad", "increas", "decreas", "reduc", "swap", "deprecat", "instead", "retir", "revert",
                "rolled back", "no longer", "formerly", "previous")


def _words(text):
    """The words of ``text`` that can say what changed, each as its shortest stem ("shifts"
    and "shift" are one word; see :func:`mindos.memory.retrieval.stems`)."""
    return {min(retrieval.stems(word) | {word}, key=lambda stem: (len(stem), stem))
            for word in retrieval.words(text or "") if word not in retrieval.STOPWORDS or word.isdigit()}


def predecessor(conn, hit, now):
    """``(old_text, at, reason)`` of the hidden row ``hit`` (a current memory-search hit)
    replaced, or None."""
    kind, ident = hit["kind"], hit["id"]
    if kind == "note":
        row = conn.execute("SELECT o.content, o.superseded_at FROM notes n JOIN notes o ON o.id = n.supersedes"
                           " WHERE n.id = ?", (ident,)).fetchone()
        return None if row is None else (row[0], row[1], None)
    if kind == "memory":
        row = conn.execute("SELECT m.content, m.retracted_at FROM memories m WHERE m.project = ?"
                           " AND m.retracted_at IS NOT NULL AND m.superseded_by = ?"
                           " ORDER BY m.retracted_at DESC, m.id LIMIT 1",
                           (hit.get("project") or "", ident)).fetchone()
        return None if row is None else (row[0], row[1], None)
    if kind == "fact":
        row = conn.execute(
            "SELECT o.subject || ' ' || o.predicate || ' ' || o.object, coalesce(o.retracted_at, o.valid_until),"
            " o.retract_reason FROM facts f JOIN facts o ON o.subject = f.subject AND o.predicate = f.predicate"
            " WHERE f.id = ? AND o.id <> f.id AND o.object <> f.object"
            " AND (o.retracted_at IS NOT NULL OR (o.valid_until IS NOT NULL AND o.valid_until <= ?))"
            " AND coalesce(o.retracted_at, o.valid_until) <= f.valid_from"
            # f is the first assertion of the subject and predicate once o closed (a predicate
            # may hold many values: a later, unrelated value replaced nothing)
            " AND NOT EXISTS (SELECT 1 FROM facts g WHERE g.subject = f.subject AND g.predicate = f.predicate"
            " AND g.id <> f.id AND g.id <> o.id AND g.valid_from >= coalesce(o.retracted_at, o.valid_until)"
            " AND (g.valid_from < f.valid_from OR (g.valid_from = f.valid_from AND g.id < f.id)))"
            " ORDER BY coalesce(o.retracted_at, o.valid_until) DESC, o.id DESC LIMIT 1",
            (ident, now)).fetchone()
        return None if row is None else (row[0], row[1], row[2])
    return None


class _Change:
    """The words that differ between a replaced text and its replacement, and those they share."""

    def __init__(self, old, new):
        old_words, new_words = _words(old), _words(new)
        self.old_only = sorted(old_words - new_words)[:MAX_DIFF_WORDS]
        self.new_only = sorted(new_words - old_words)[:MAX_DIFF_WORDS]
        self.shared = old_words & new_words

    def records(self, text):
        """True when ``text`` records this change: it names an old-only word (a bare number
        only together with a new-only word: "from 5 to 10"), or a new-only word with a word
        of change and at least two words the versions share (all of them when fewer)."""
        words = _words(text)
        old, new = words.intersection(self.old_only), words.intersection(self.new_only)
        if any(not word.isdigit() for word in old) or (old and new):
            return True
        if not new or len(words & self.shared) < min(2, len(self.shared)):
            return False
        return _says_change(text)

    def records_near(self, text):
        """True when ``text``, written about when the change was made, records it: it names a
        word only the old text had (not a bare number), or it says a change happened (a word
        of change) about at least two words the versions share."""
        words = _words(text)
        if any(not word.isdigit() for word in words.intersection(self.old_only)):
            return True
        shared = [word for word in self.shared if not word.isdigit()]
        # by root: "registr" (registration) is about "register" (registering)
        about = sum(1 for stem in shared if any(_same_root(stem, word) for word in words))
        return about >= min(2, len(shared)) > 0 and _says_change(text)


def _same_root(one, other):
    """True when two stems are one word's: equal, or sharing a prefix of at least 5 letters
    that leaves at most 2 letters of the shorter ("registr" and "register")."""
    if one == other:
        return True
    common = len(os.path.commonprefix((one, other)))
    return common >= 5 and common >= min(len(one), len(other)) - 2


def _says_change(text):
    joined = " " + " ".join(retrieval.words(text)) + " "
    return any(f" {word}" in joined for word in CHANGE_WORDS)


def _key(hit):
    return hit["kind"], hit["id"]


def _any_of(words):
    """An FTS5 expression matching any of ``words`` or a word they start (stems: "shift" finds
    "shifts")."""
    return "(" + " OR ".join(fts.quote(word) + "*" for word in words) + ")"


def _probe(conn, change, surfaces, params, make_hit):
    """Live rows of the scope naming an old-only AND a new-only word, newest first, a few per
    index (``surfaces``: the search's surface readers, notes, memories and handoffs only)."""
    if not change.old_only or not change.new_only:
        return []
    return _read(conn, f"{_any_of(change.old_only)} AND {_any_of(change.new_only)}", surfaces, params, make_hit)


def _probe_near(conn, change, surfaces, params, make_hit):
    """Live rows of the scope naming an old-only word that is not a bare number (what only
    the replaced text said) or a word both versions share, a few per index, newest first."""
    words = [word for word in change.old_only if not word.isdigit()] + sorted(change.shared)
    return _read(conn, _any_of(words), surfaces, params, make_hit, OLD_PROBE_ROWS) if words else []


def _read(conn, expression, surfaces, params, make_hit, cap=PROBE_ROWS):
    found = []
    for surface in surfaces:
        found.extend(make_hit(row) for row in surface.fetch(conn, [expression], {**params, "cap": cap}))
    return found


def _when(stamp):
    from mindos.core import clock  # lazy: only a probed record is placed in time

    try:
        return clock.parse(stamp).timestamp()
    except Exception:  # noqa: BLE001 - a malformed legacy timestamp is simply far away
        return None


def with_history(conn, ranked, *, now, surfaces, params, make_hit):
    """``ranked`` (current hits, best first) with each top answer's change (``change`` on the
    answer, its change record right after it); see the module docstring.  ``surfaces``,
    ``params`` and ``make_hit`` let the probe read rows the way the search does."""
    placed, extra = set(), {}
    for hit in ranked[:TOP_ANSWERS]:
        found = predecessor(conn, hit, now)
        if found is None:
            continue
        old, at, reason = found
        hit["change"] = {key: value for key, value in (("from", old), ("at", at), ("reason", reason)) if value}
        change = _Change(old, hit["text"])
        taken = placed | set(extra) | {_key(hit)}
        below = ranked[ranked.index(hit) + 1:]  # a record ranked above its answer is with it already
        above = {_key(other) for other in ranked[:ranked.index(hit)]}
        if any(change.records(other["text"]) for other in ranked[:ranked.index(hit)] if _key(other) not in taken):
            continue
        record = next((other for other in below if _key(other) not in taken and change.records(other["text"])), None)
        if record is None:
            known = {_key(other) for other in ranked} | above
            probed = [row for row in _probe(conn, change, surfaces, params, make_hit)
                      if _key(row) not in taken and _key(row) not in known and change.records(row["text"])]
            probed.sort(key=lambda row: (row["created_at"], row["kind"], str(row["id"])), reverse=True)
            record = probed[0] if probed else None
        if record is None and at:
            # a row written about when the change was made that names what only the old text
            # said, or says that the shared subject changed: the nearest in time to the
            # replacement wins (a record is written with its change)
            moment = _when(at)
            listed = {_key(other) for other in below}
            known = {_key(other) for other in ranked if _key(other) not in listed} | above
            fresh = [row for row in _probe_near(conn, change, surfaces, params, make_hit) if _key(row) not in listed]
            probed = [row for row in below + fresh
                      if _key(row) not in taken and _key(row) not in known and change.records_near(row["text"])
                      and moment is not None and _when(row["created_at"]) is not None
                      and abs(_when(row["created_at"]) - moment) <= RECORD_WINDOW_HOURS * 3600]
            probed.sort(key=lambda row: (abs(_when(row["created_at"]) - moment), row["kind"], str(row["id"])))
            record = probed[0] if probed else None
        if record is None:
            continue
        placed.add(_key(record))
        record["history_of"] = {"kind": hit["kind"], "id": hit["id"]}
        extra[_key(hit)] = record
    if not extra:
        return ranked
    result = []

    def emit(hit):
        result.append(hit)
        record = extra.get(_key(hit))
        if record is not None:
            emit(record)

    for hit in ranked:
        if _key(hit) not in placed:
            emit(hit)
    return result
