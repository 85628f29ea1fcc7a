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


def verify_chain(conn):
    """Recompute the chain; return ``{"ok", "events", "problems"}``.

    A ``hash_mismatch`` means a row's fields no longer hash to its stored hash (the row was
    edited); a ``broken_link`` means its prev_hash is not the previous row's hash (a row was
    removed, inserted or re-linked).  Problems are ordered by event id.

    Speed matters (the ledger grows without bound and doctor runs this on every sweep), so
    the check is one table scan that calls a SQL function per row: SQLite hands it the
    stored fields directly, without a Python row tuple or cursor step per event.  The
    function recomputes the hash (the preimage is exactly :func:`preimage`'s) and
    follows the links as the rowid-ordered scan passes; should rows ever arrive out of
    order, the links are re-derived by an indexed query instead.
    """
    state = {"prev": GENESIS_HASH, "prev_id": None, "last_id": 0, "ordered": True}
    broken, mismatched, undecodable = [], [], []

    def check(event_id, prev_hash, entity_type, entity_id, action, payload_json, created_at, stored):
        if event_id <= state["last_id"]:
            state["ordered"] = False
        state["last_id"] = event_id
        if prev_hash != state["prev"]:
            broken.append((event_id, state["prev_id"]))
        state["prev"], state["prev_id"] = stored, event_id
        try:
            text = preimage(event_id, prev_hash, entity_type, entity_id, action, payload_json, created_at)
            intact = sha(text.encode("utf-8")).hexdigest() == stored
        except Exception:  # a non-text value was written into the row: it cannot be the original
            intact = False
        if not intact:
            mismatched.append(event_id)
        return 0

    def check_bytes(event_id, *fields):
        # the fallback scan: text arrives as bytes so a row with invalid UTF-8 is named, not fatal
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
            if event_id <= state["last_id"]:
                state["ordered"] = False
            state["last_id"] = event_id
            if "prev_hash" not in bad and decoded[0] != state["prev"]:
                broken.append((event_id, state["prev_id"]))
            state["prev"], state["prev_id"] = decoded[-1], event_id
            return 0
        return check(event_id, *decoded)

    conn.create_function("mindos_event_check", 8, check)
    conn.create_function("mindos_event_check_bytes", 8, check_bytes)
    own_snapshot = not conn.in_transaction
    if own_snapshot:
        conn.execute("BEGIN")  # one read snapshot for the scan and any follow-up query
    try:
        sha = canonical.sha256()
        try:
            count = conn.execute(
                "SELECT count(*) FROM audit_events WHERE mindos_event_check("
                " id, prev_hash, entity_type, entity_id, action, payload_json, created_at, hash) = 0"
            ).fetchone()[0]
        except sqlite3.OperationalError:
            # a value SQLite cannot hand over as text (invalid UTF-8): scan again with bytes
            state.update(prev=GENESIS_HASH, prev_id=None, last_id=0, ordered=True)
            del broken[:], mismatched[:], undecodable[:]
            blobs = ", ".join(f"CAST({name} AS BLOB)" for name in _TEXT_FIELDS)
            count = conn.execute(
                f"SELECT count(*) FROM audit_events WHERE mindos_event_check_bytes(id, {blobs}) = 0").fetchone()[0]
        if not state["ordered"]:
            broken = broken_links(conn)
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
