"""Reading the audit ledger: chain verification and the event stream.

Appending lives in :mod:`mindos.db` (inside the caller's transaction); this module only
reads.  Verification re-derives every hash from the stored fields and reports each broken
row instead of stopping at the first.
"""

import json

from mindos import clock, db, files, validate


def verify_chain(conn):
    """Recompute the chain; return ``{"ok", "events", "problems"}``.

    A ``hash_mismatch`` means a row's fields no longer hash to its stored hash (the row was
    edited); a ``broken_link`` means its prev_hash is not the previous row's hash (a row was
    removed, inserted or re-linked).  Problems are ordered by event id.

    Speed matters (the ledger grows without bound and doctor runs this on every sweep), so
    the check is one table scan that calls a SQL function per row: SQLite hands it the
    stored fields directly, without a Python row tuple or cursor step per event.  The
    function recomputes the hash (the preimage is exactly :func:`db.event_hash`'s) and
    follows the links as the rowid-ordered scan passes; should rows ever arrive out of
    order, the links are re-derived by an indexed query instead.
    """
    sha = files.sha256_constructor()
    join = "\x1f".join
    state = {"prev": db.GENESIS_HASH, "prev_id": None, "last_id": 0, "ordered": True}
    broken, mismatched = [], []

    def check(event_id, prev_hash, entity_type, entity_id, action, payload_json, created_at, stored):
        if event_id <= state["last_id"]:
            state["ordered"] = False
        state["last_id"] = event_id
        if prev_hash != state["prev"]:
            broken.append((event_id, state["prev_id"]))
        state["prev"], state["prev_id"] = stored, event_id
        try:
            preimage = join((str(event_id), prev_hash, entity_type, entity_id, action, payload_json, created_at))
            intact = sha(preimage.encode("utf-8")).hexdigest() == stored
        except Exception:  # a non-text value was written into the row: it cannot be the original
            intact = False
        if not intact:
            mismatched.append(event_id)
        return 0

    conn.create_function("mindos_event_check", 8, check)
    own_snapshot = not conn.in_transaction
    if own_snapshot:
        conn.execute("BEGIN")  # one read snapshot for the scan and any follow-up query
    try:
        count = conn.execute(
            "SELECT count(*) FROM audit_events WHERE mindos_event_check("
            " id, prev_hash, entity_type, entity_id, action, payload_json, created_at, hash) = 0"
        ).fetchone()[0]
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
    problems.sort(key=lambda problem: (problem["event_id"], problem["kind"] != "broken_link"))
    return {"ok": not problems, "events": count, "problems": problems}


def broken_links(conn):
    """``[(event id, previous event id or None)]`` for every event whose prev_hash is not the
    hash of the event before it (indexed SQL)."""
    return [(row[0], row[1]) for row in conn.execute(
        "SELECT b.id, (SELECT max(a.id) FROM audit_events a WHERE a.id < b.id) FROM audit_events b"
        " WHERE b.prev_hash IS NOT coalesce("
        " (SELECT a.hash FROM audit_events a WHERE a.id < b.id ORDER BY a.id DESC LIMIT 1), ?) ORDER BY b.id",
        (db.GENESIS_HASH,))]


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


def events(conn, *, action=None, entity_id=None, since=None, until=None, limit=50, verify=False):
    """Query the ledger newest first with parsed payloads.

    Returns ``{"events", "total_matching", "truncated"}`` plus ``"verify"`` when asked.
    """
    limit = validate.positive_int(limit, "--limit", maximum=100000)
    clauses, params = [], []
    if action:
        clauses.append("action = ?")
        params.append(action)
    if entity_id:
        clauses.append("entity_id = ?")
        params.append(entity_id)
    if since:
        clauses.append("created_at >= ?")
        params.append(clock.normalize(since, "--since"))
    if until:
        clauses.append("created_at <= ?")
        params.append(clock.normalize(until, "--until"))
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    total = conn.execute(f"SELECT count(*) FROM audit_events{where}", params).fetchone()[0]
    rows = conn.execute(
        "SELECT id, entity_type, entity_id, action, payload_json, created_at, prev_hash, hash"
        f" FROM audit_events{where} ORDER BY id DESC LIMIT ?",
        (*params, limit),
    )
    result = {
        "events": [
            parse_payload({
                "id": r["id"],
                "entity_type": r["entity_type"],
                "entity_id": r["entity_id"],
                "action": r["action"],
                "created_at": r["created_at"],
                "prev_hash": r["prev_hash"],
                "hash": r["hash"],
            }, r["payload_json"])
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
