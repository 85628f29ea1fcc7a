"""Reading the audit ledger: chain verification and the event stream.

Appending lives in :mod:`mindos.db` (inside the caller's transaction); this module only
reads.  Verification re-derives every hash from the stored fields and reports each broken
row instead of stopping at the first.
"""

import json

from mindos import clock, db, validate


def verify_chain(conn):
    """Recompute the chain; return ``{"ok", "events", "problems"}``.

    A ``hash_mismatch`` means a row's fields no longer hash to its stored hash (the row was
    edited); a ``broken_link`` means its prev_hash is not the previous row's hash (a row was
    removed, inserted or re-linked).
    """
    problems = []
    expected_prev = db.GENESIS_HASH
    count = 0
    event_hash = db.event_hash
    rows = conn.execute(
        "SELECT id, prev_hash, entity_type, entity_id, action, payload_json, created_at, hash"
        " FROM audit_events ORDER BY id"
    )
    rows.row_factory = None  # plain tuples: this loop runs hundreds of thousands of times
    for event_id, prev_hash, entity_type, entity_id, action, payload_json, created_at, stored in rows:
        count += 1
        if prev_hash != expected_prev:
            problems.append({"event_id": event_id, "kind": "broken_link"})
        if event_hash(event_id, prev_hash, entity_type, entity_id, action, payload_json, created_at) != stored:
            problems.append({"event_id": event_id, "kind": "hash_mismatch"})
        expected_prev = stored
    return {"ok": not problems, "events": count, "problems": problems}


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
            {
                "id": r["id"],
                "entity_type": r["entity_type"],
                "entity_id": r["entity_id"],
                "action": r["action"],
                "payload": json.loads(r["payload_json"]),
                "created_at": r["created_at"],
                "prev_hash": r["prev_hash"],
                "hash": r["hash"],
            }
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
