"""The temporal hybrid rerank: lexical match x recency decay + pinned bonus.

One scoring function for every command that reranks notes: the related notes of a context
pack or recall (``--related N --rerank``) and ``search-notes --rank --rerank``.

Design decisions
  * **Lexical part.**  BM25 normalized so the best match in the candidate set is 1.0
    (FTS5's bm25 is more negative for better matches, so ``score / best`` lies in (0, 1]).
    A row without a score -- the substring fallback of a SQLite without FTS5, which is
    already newest first -- counts as 1.0.
  * **Recency part.**  ``0.5 ** (age_hours / half_life)`` with the age floored to whole
    hours, so a row's score (and a sealed recall digest over it) is stable within the hour
    instead of moving on every recomputation.
  * **Pinned bonus.**  A flat ``boost`` added for pinned notes.
  * **Order.**  Best ``rank_score`` first (rounded to 6 places); ties newest first
    (``created_at``, then ``id``, descending), so the order never depends on the input's.
  * **Candidate set.**  A caller asking for N rows reranks the best POOL x N of its lexical
    order, so a fresh or pinned note a little below the cut can still surface.
"""

import functools
import math

from mindos.core import clock, validate
from mindos.errors import InvalidInput

POOL = 4  # a rerank scores this many times the rows asked for, then keeps the best
DEFAULT_HALF_LIFE_HOURS = 168
DEFAULT_PINNED_BOOST = 0.5
MAX_HALF_LIFE_HOURS = 87600
MAX_PINNED_BOOST = 100.0


def _number(value, flag, low, high, *, low_open=True):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise InvalidInput(f"invalid {flag}: expected a number, got {validate.shown(value, 40)}")
    if (value <= low if low_open else value < low) or value > high:
        bound = "(" if low_open else "["
        raise InvalidInput(f"invalid {flag}: expected a number in {bound}{low}, {high}], got {validate.shown(value, 40)}")
    return value


def options(half_life=None, boost=None, *, rerank=True):
    """The validated ``(recency_half_life_hours, pinned_boost)``, defaults filled in;
    ``(None, None)`` without ``rerank``, where giving either is refused.

    The half-life must lie in (0, MAX_HALF_LIFE_HOURS], the boost in [0, MAX_PINNED_BOOST]."""
    if not rerank:
        if half_life is not None or boost is not None:
            raise InvalidInput("--recency-half-life-hours and --pinned-boost need --rerank")
        return None, None
    half_life = _number(DEFAULT_HALF_LIFE_HOURS if half_life is None else half_life, "--recency-half-life-hours",
                        0, MAX_HALF_LIFE_HOURS)
    boost = _number(DEFAULT_PINNED_BOOST if boost is None else boost, "--pinned-boost", 0, MAX_PINNED_BOOST,
                    low_open=False)
    return half_life, boost


@functools.lru_cache(maxsize=65536)
def age_hours(created_at, now):
    """Whole hours from ``created_at`` to ``now`` (0 for a future row); a pure function of
    its two timestamps, so a sweep scoring the same notes for many tasks parses each once."""
    return max(0, clock.seconds_between(created_at, now) // 3600)


def score(note, best, now, half_life, boost):
    """Hybrid score of one note: normalized BM25 x recency decay (+ pinned boost).

    ``best`` is the best (most negative) BM25 score in the candidate set, or None when no
    candidate has one."""
    lexical = 1.0 if "score" not in note or not best else note["score"] / best
    value = lexical * math.pow(0.5, age_hours(note["created_at"], now) / half_life)
    return round(value + (boost if note.get("pinned") else 0.0), 6)


def rerank(candidates, now, half_life, boost):
    """Score every note of ``candidates`` (each gains ``rank_score``) and return them best
    first, ties newest first.  Changes the note dicts in place."""
    best = min((note["score"] for note in candidates if "score" in note), default=None)
    for note in candidates:
        note["rank_score"] = score(note, best, now, half_life, boost)
    return sorted(candidates, key=lambda note: (note["rank_score"], note["created_at"], note["id"]), reverse=True)
