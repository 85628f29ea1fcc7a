"""The audit ledger: the hash-chained append, verification and the event stream.

Every event is appended inside the caller's write transaction (:func:`append_event`), so a
change and its event commit together or not at all; refusals that must survive a rollback
go through :func:`append_refusal` and are written by :class:`mindos.store.db.write` after it
rolls back.  An event's hash covers its fields and the previous event's hash, so editing,
removing or re-linking any row breaks the chain from there on; :func:`verify_chain`
re-derives every hash and reports each broken row instead of stopping at the first.
"""

import json
import sqlite3

from mindos.core import canonical, clock, validate
from mindos.store import sql

GENESIS_HASH = "0" * 64
# the text columns of a ledger row, in preimage order (a row that cannot be decoded names them)
_TEXT_FIELDS = ("prev_hash", "entity_type", "entity_id", "action", "payload_json", "created_at", "hash")


class Undecodable(str):
    """A ledger value that is not valid UTF-8, shown with U+FFFD in place of the bad bytes.

    Nothing MindOS writes can produce one (every value is a Python str), so a row holding
    one was edited outside MindOS: readers name it instead of failing on it."""


def _lenient_text(data):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return Undecodable(data.decode("utf-8", "replace"))


def fetch_rows(conn, sql, params=()):
    """``conn.execute(sql, params).fetchall()`` for ledger reads that must survive a row with
    invalid UTF-8: on the decode failure the query runs again with such values read as
    :class:`Undecodable` (the common path pays nothing)."""
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if "decode" not in str(exc):
            raise
    saved = conn.text_factory
    conn.text_factory = _lenient_text
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.text_factory = saved


def mark_undecodable(event, row):
    """Name the undecodable fields of ``row`` on ``event`` (``undecodable`` and a ``tampered``
    flag); return ``event``.  A payload that could not be decoded is shown raw, never parsed."""
    bad = [key for key in row.keys() if isinstance(row[key], Undecodable)]
    if bad:
        event["undecodable"] = bad
        event["tampered"] = True
        if "payload_json" in bad:
            event["payload"], event["payload_raw"] = None, str(row["payload_json"])
    return event


def preimage(event_id, prev_hash, entity_type, entity_id, action, payload_json, created_at):
    """The text an event's hash is taken over: its fields joined by the unit separator."""
    return "\x1f".join((str(event_id), prev_hash, entity_type, entity_id, action, payload_json, created_at))


def event_hash(event_id, prev_hash, entity_type, entity_id, action, payload_json, created_at):
    """SHA-256 over the event's canonical form, chained to the previous event's hash.

    The fields are joined with the unit separator (0x1f).  None of them can contain it:
    ids and actions are validated tokens, payload_json is JSON (which escapes control
    characters) and created_at is a normalized timestamp.
    """
    return canonical.sha256_hex(preimage(event_id, prev_hash, entity_type, entity_id, action, payload_json,
                                         created_at))


def append_event(conn, entity_type, entity_id, action, payload=None):
    """Append one event to the audit chain inside the open write transaction; return its id."""
    if not conn.in_transaction:
        raise RuntimeError("append_event needs an open write transaction (use mindos.store.db.write)")
    last = conn.execute("SELECT id, hash FROM audit_events ORDER BY id DESC LIMIT 1").fetchone()
    prev_id, prev_hash = (last[0], last[1]) if last else (0, GENESIS_HASH)
    event_id = prev_id + 1
    payload_json = canonical.canonical_json(payload if payload is not None else {})
    created_at = clock.now_iso()
    digest = event_hash(event_id, prev_hash, entity_type, entity_id, action, payload_json, created_at)
    conn.execute(
        "INSERT INTO audit_events(id, entity_type, entity_id, action, payload_json, created_at, prev_hash, hash)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (event_id, entity_type, entity_id, action, payload_json, created_at, prev_hash, digest),
    )
    return event_id


def append_refusal(conn, entity_type, entity_id, action, payload=None):
    """Record a refusal event that lands whether the surrounding transaction commits or not."""
    if conn._pending_refusals is None:
        raise RuntimeError("append_refusal needs an open write transaction (use mindos.store.db.write)")
    conn._pending_refusals.append((entity_type, entity_id, action, payload))


PARALLEL_MIN_EVENTS = 200000  # below this a single scan is faster than starting workers
PARALLEL_MAX_WORKERS = 4
RANGES_PER_WORKER = 4


def verify_chain(conn, *, after=0, anchor=None, workers=None, upto=None):
    """Recompute the chain; return ``{"ok", "events", "problems"}``.

    A ``hash_mismatch`` means a row's fields no longer hash to its stored hash (the row was
    edited); a ``broken_link`` means its prev_hash is not the previous row's hash (a row was
    removed, inserted or re-linked).  Problems are ordered by event id.

    ``after`` and ``anchor``: verify only the events after event ``after``, the first of them
    linking to ``anchor`` (the pinned hash of a sealed checkpoint, proven by the caller);
    ``events`` then counts the events checked.  ``upto``: only the events up to that id, a
    window whose first event links to the stored hash of the event before it (no
    ``anchor``): the problems inside the window are those the full scan names there.

    Speed matters (the ledger grows without bound and doctor runs this on every sweep), so
    the check is one table scan that calls a SQL function per row: SQLite hands it the
    stored fields directly, without a Python row tuple or cursor step per event.  The
    function recomputes the hash (the preimage is exactly :func:`preimage`'s) and
    follows the links as the rowid-ordered scan passes; should rows ever arrive out of
    order, the links are re-derived by an indexed query instead.  A large ledger is split
    into id ranges (``RANGES_PER_WORKER`` a worker) checked by forked workers at once through
    :func:`mindos.core.workers.spread` (``workers``: at most this many processes, default
    the CPU count up to ``PARALLEL_MAX_WORKERS``); they only answer "clean or not", and each
    range that is not clean is scanned again here by the exact scan, linked where the whole
    scan links it, so the problems are always the ones that one scan names (and a tampered
    row costs a second pass over its range only).
    """
    after = int(after or 0)
    own_snapshot = not conn.in_transaction
    if own_snapshot:
        conn.execute("BEGIN")  # one read snapshot for the scan and any follow-up query
    try:
        if upto is not None:
            previous_id, previous_hash = _link_before(conn, after)
            count, broken, mismatched, undecodable = _scan(conn, after, upto, previous_hash, previous_id)
        else:
            anchor = GENESIS_HASH if anchor is None else anchor
            ranges = _parallel_ranges(conn, after, anchor, workers)
            if ranges is None:
                count, broken, mismatched, undecodable = _scan(conn, after, None, anchor)
            else:
                count, broken, mismatched, undecodable = _rescan_dirty(conn, after, anchor, ranges)
    finally:
        if own_snapshot:
            conn.execute("COMMIT")
    # a broken link names both rows: the one whose prev_hash is wrong and the row before it
    # (which is the edited one when a row was rewritten and re-hashed in place)
    problems = [{"event_id": event_id, "kind": "broken_link", "previous_event_id": previous}
                for event_id, previous in broken]
    problems += [{"event_id": event_id, "kind": "hash_mismatch"} for event_id in mismatched]
    # nothing MindOS writes is undecodable: the row was edited outside it (tampering)
    problems += [{"event_id": event_id, "kind": "undecodable_event", "fields": fields,
                  "detail": "the row holds bytes that are not valid UTF-8: it was edited outside MindOS"}
                 for event_id, fields in undecodable]
    problems.sort(key=lambda problem: (problem["event_id"], problem["kind"] != "broken_link", problem["kind"]))
    return {"ok": not problems, "events": count, "problems": problems}


def _scan(conn, after, upto, anchor, anchor_id=False):
    """The exact scan of the events in ``(after, upto]`` (``upto`` None: to the end), the first
    linking to ``anchor`` (the hash of event ``anchor_id``, default ``after``):
    ``(events, broken, mismatched, undecodable)``."""
    anchor_id = (after or None) if anchor_id is False else anchor_id
    prev, prev_id, last_id, ordered = anchor, anchor_id, after, True
    broken, mismatched, undecodable = [], [], []
    sha, join = canonical.sha256(), "\x1f".join

    def check(event_id, prev_hash, entity_type, entity_id, action, payload_json, created_at, stored):
        # the hot loop (once per event): locals only, the preimage of preimage() built inline
        nonlocal prev, prev_id, last_id, ordered
        if event_id <= last_id:
            ordered = False
        last_id = event_id
        if prev_hash != prev:
            broken.append((event_id, prev_id))
        prev, prev_id = stored, event_id
        try:
            if sha(join((str(event_id), prev_hash, entity_type, entity_id, action, payload_json, created_at)
                        ).encode("utf-8")).hexdigest() != stored:
                mismatched.append(event_id)
        except Exception:  # a non-text value was written into the row: it cannot be the original
            mismatched.append(event_id)
        return 0

    def check_bytes(event_id, *fields):
        # the fallback scan: text arrives as bytes so a row with invalid UTF-8 is named, not fatal
        nonlocal prev, prev_id, last_id, ordered
        decoded, bad = [], []
        for name, value in zip(_TEXT_FIELDS, fields):
            if isinstance(value, bytes):
                try:
                    value = value.decode("utf-8")
                except UnicodeDecodeError:
                    bad.append(name)
                    value = None
            decoded.append(value)
        if bad:
            undecodable.append((event_id, bad))
            if event_id <= last_id:
                ordered = False
            last_id = event_id
            if "prev_hash" not in bad and decoded[0] != prev:
                broken.append((event_id, prev_id))
            prev, prev_id = decoded[-1], event_id
            return 0
        return check(event_id, *decoded)

    check_name = _define(conn, "mindos_event_check", check)
    bytes_name = _define(conn, "mindos_event_check_bytes", check_bytes)
    where, params = "id > ?", [after]
    if upto is not None:
        where += " AND id <= ?"
        params.append(upto)
    try:
        count = conn.execute(
            f"SELECT count(*) FROM audit_events WHERE {check_name}("
            f" id, prev_hash, entity_type, entity_id, action, payload_json, created_at, hash) = 0 AND {where}",
            params).fetchone()[0]
    except sqlite3.OperationalError:
        # a value SQLite cannot hand over as text (invalid UTF-8): scan again with bytes
        prev, prev_id, last_id, ordered = anchor, anchor_id, after, True
        del broken[:], mismatched[:], undecodable[:]
        blobs = ", ".join(f"CAST({name} AS BLOB)" for name in _TEXT_FIELDS)
        count = conn.execute(
            f"SELECT count(*) FROM audit_events WHERE {bytes_name}(id, {blobs}) = 0 AND {where}",
            params).fetchone()[0]
    if not ordered:
        broken = [(event_id, previous) for event_id, previous in broken_links(conn)
                  if event_id > after and (upto is None or event_id <= upto)]
    return count, broken, mismatched, undecodable


def _parallel_ranges(conn, after, anchor, workers):
    """The chain after ``after`` checked over id ranges by forked workers
    (:func:`mindos.core.workers.spread`): ``[(after, upto, events or -1 when not clean)]``
    tiling it in id order; None when the ledger is small, this process cannot fork (one
    CPU, no ``fork``, other threads running), the check runs inside a write (a worker's own
    connection would read what is committed, not this transaction) or a worker died: the
    caller then runs the exact scan over the whole chain."""
    import os  # lazy: only the chain check of a large ledger forks

    from mindos.core import workers as pool  # lazy: the same

    if workers is None:
        workers = min(os.cpu_count() or 1, PARALLEL_MAX_WORKERS)
    path = getattr(conn, "path", None)
    if workers < 2 or not path or conn._pending_refusals is not None or not pool.can_fork():
        return None
    # the bounds by two index seeks; counting the rows first would walk the whole table once
    # more in this process before any worker starts (a second at ten million events)
    low = conn.execute("SELECT id FROM audit_events WHERE id > ? ORDER BY id LIMIT 1", (after,)).fetchall()
    high = conn.execute("SELECT max(id) FROM audit_events").fetchall()[0][0]  # (all: no statement left open)
    if not low or high - low[0][0] + 1 < PARALLEL_MIN_EVENTS:
        return None  # (a span of ids, not a count: gaps in the ids only make it larger)
    low = low[0][0]
    # more ranges than workers, handed out one at a time: a worker on a busy core takes fewer
    ranges = workers * RANGES_PER_WORKER
    step = (high - low + ranges) // ranges
    from urllib.parse import quote  # lazy: only workers open their own (read-only) connection

    # (this module sits below mindos.store.db, so the workers' open is spelled here, as db's is)
    flags = "mode=ro&immutable=1" if getattr(conn, "immutable", False) else "mode=ro"
    uri = f"file:{quote(os.path.abspath(path))}?{flags}"
    mmap_size = conn.execute("PRAGMA mmap_size").fetchall()[0][0]
    items = [(uri, mmap_size, after if index == 0 else low - 1 + index * step,
              min(high, low - 1 + (index + 1) * step), anchor if index == 0 else None)
             for index in range(ranges) if index == 0 or low - 1 + index * step < high]
    try:
        results = pool.spread(_range_task, items, max_workers=workers, big_enough=True,
                              chunks_per_worker=RANGES_PER_WORKER)
    except Exception:  # a worker died (killed, out of memory): the exact scan answers instead
        return None
    return [(lo, hi, result) for (_, _, lo, hi, _), result in zip(items, results)]


def _rescan_dirty(conn, after, anchor, ranges):
    """``_scan``'s answer for the whole chain from the ranges' answers: a clean range adds its
    events, a range that is not clean is scanned exactly, its first event linking where the
    whole scan would link it (the stored hash of the event before it; ``anchor`` when no
    event lies between ``after`` and it), so every problem is named as the one scan names it."""
    count, broken, mismatched, undecodable = 0, [], [], []
    for lo, hi, result in ranges:
        if result >= 0:
            count += result
            continue
        previous_id, previous_hash = _link_before(conn, lo) if lo > after else (None, None)
        if previous_id is None or previous_id <= after:
            previous_id, previous_hash = (after or None), anchor
        found = _scan(conn, lo, hi, previous_hash, previous_id)
        count += found[0]
        broken += found[1]
        mismatched += found[2]
        undecodable += found[3]
    return count, broken, mismatched, undecodable


def _range_task(item):
    """One worker's range: its own read-only connection (``uri``), ``_range_clean`` over
    ``(after, upto]``; -1 when it cannot answer."""
    uri, mmap_size, after, upto, anchor = item
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)
        try:
            conn.execute(f"PRAGMA mmap_size={int(mmap_size)}")  # read as the caller's connection reads
            return _range_clean(conn, after, upto, anchor)
        finally:
            conn.close()
    except Exception:
        return -1


_renamed = 0  # functions registered under a fresh name so far in this process (see _define)


def _define(conn, name, function):
    """Register ``function`` (8 arguments) on ``conn`` as ``name`` and return the name to call.

    SQLite refuses to redefine a function while any statement on the connection is still
    running, and inside a transaction that has read a full-text index FTS5 keeps one open
    until the commit (a restore that rebuilds the indexes, then verifies the chain, a second
    time on the same connection).  Then the function is registered under a fresh name
    instead: a name never used before is always accepted."""
    try:
        conn.create_function(name, 8, function)
        return name
    except sqlite3.OperationalError:
        global _renamed
        _renamed += 1
        fresh = f"{name}_{_renamed}"
        conn.create_function(fresh, 8, function)
        return fresh


class _Dirty(Exception):
    """Raised inside the range check to stop the scan at the first row that is not clean."""


def _range_clean(conn, after, upto, anchor=None):
    """Events in ``(after, upto]`` when that range is clean (the first links to ``anchor``, or
    to the stored hash of the event before it; every row hashes to its stored hash), else -1.

    It only answers "clean or not", so it can skip what the exact scan keeps: the id arrives
    as text (the preimage's own spelling of it, no ``str()`` per row), the link and the hash
    are one test, and the first row that fails stops the scan.  A value that is not text
    (the join raises) or not valid UTF-8 (the read raises) also ends it as "not clean"."""
    if anchor is None:
        anchor = _link_before(conn, after)[1]
    prev = anchor
    sha, join = canonical.sha256(), "\x1f".join

    def clean(event_id, prev_hash, entity_type, entity_id, action, payload_json, created_at, stored):
        # the hot loop (once per event): locals only, the preimage of preimage() built inline
        nonlocal prev
        if prev_hash != prev or sha(join((event_id, prev_hash, entity_type, entity_id, action, payload_json,
                                          created_at)).encode("utf-8")).hexdigest() != stored:
            raise _Dirty
        prev = stored
        return 0

    name = _define(conn, "mindos_event_clean", clean)
    try:
        return conn.execute(
            f"SELECT count(*) FROM audit_events WHERE {name}(CAST(id AS TEXT), prev_hash, entity_type,"
            " entity_id, action, payload_json, created_at, hash) = 0 AND id > ? AND id <= ?",
            (after, upto)).fetchone()[0]
    except sqlite3.Error:
        return -1


def _link_before(conn, after):
    """``(id, stored hash)`` of the last event at or before ``after``, which the next event
    links to; ``(None, GENESIS_HASH)`` when there is none."""
    rows = fetch_rows(conn, "SELECT id, hash FROM audit_events WHERE id <= ? ORDER BY id DESC LIMIT 1", (after,))
    return (rows[0][0], rows[0][1]) if rows else (None, GENESIS_HASH)


def broken_links(conn):
    """``[(event id, previous event id or None)]`` for every event whose prev_hash is not the
    hash of the event before it (indexed SQL)."""
    return [(row[0], row[1]) for row in conn.execute(
        "SELECT b.id, (SELECT max(a.id) FROM audit_events a WHERE a.id < b.id) FROM audit_events b"
        " WHERE b.prev_hash IS NOT coalesce("
        " (SELECT a.hash FROM audit_events a WHERE a.id < b.id ORDER BY a.id DESC LIMIT 1), ?) ORDER BY b.id",
        (GENESIS_HASH,))]


def parse_payload(event, payload_json):
    """Set ``event["payload"]`` from stored text; unparsable (tampered) text is kept raw.

    A ledger row edited by hand may hold anything; the commands that display the ledger must
    still show it, so the text lands under ``payload_raw`` with ``payload: null``.
    """
    try:
        event["payload"] = json.loads(payload_json)
    except (TypeError, ValueError, RecursionError):
        event["payload"] = None
        event["payload_raw"] = payload_json if isinstance(payload_json, str) else repr(payload_json)
    return event


def events(conn, *, action=None, entity_id=None, entity_type=None, since=None, until=None, limit=50,
           verify=False):
    """Query the ledger newest first with parsed payloads (``entity_type``: only events about
    that kind of entity, ``task``, ``memory``, ``note`` ...).

    Returns ``{"events", "total_matching", "truncated"}`` plus ``"verify"`` when asked.
    """
    limit = validate.positive_int(limit, "--limit", maximum=100000)
    clauses, params = sql.given([
        ("entity_type = ?", None if entity_type is None else validate.tag(entity_type, "--entity-type")),
        ("action = ?", action or None),
        ("entity_id = ?", entity_id or None),
        ("created_at >= ?", clock.normalize(since, "--since") if since else None),
        ("created_at <= ?", clock.normalize(until, "--until") if until else None),
    ])
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    total = conn.execute(f"SELECT count(*) FROM audit_events{where}", params).fetchone()[0]
    rows = fetch_rows(
        conn,
        "SELECT id, entity_type, entity_id, action, payload_json, created_at, prev_hash, hash"
        f" FROM audit_events{where} ORDER BY id DESC LIMIT ?",
        (*params, limit),
    )
    result = {
        "events": [
            mark_undecodable(parse_payload({
                "id": r["id"],
                "entity_type": r["entity_type"],
                "entity_id": r["entity_id"],
                "action": r["action"],
                "created_at": r["created_at"],
                "prev_hash": r["prev_hash"],
                "hash": r["hash"],
            }, r["payload_json"]), r)
            for r in rows
        ],
        "total_matching": total,
    }
    result["truncated"] = total > len(result["events"])
    if verify:
        result["verify"] = verify_chain(conn)
    return result


def count_action(conn, action):
    """How many events carry ``action`` (indexed; used by metrics counters)."""
    return conn.execute("SELECT count(*) FROM audit_events WHERE action = ?", (action,)).fetchone()[0]


def height(conn):
    """The ledger's height: the id of its newest event (0 when empty)."""
    return conn.execute("SELECT coalesce(max(id), 0) FROM audit_events").fetchone()[0]
