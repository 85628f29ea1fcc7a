"""The record of wakes: what was composed and why, each wake's full text, its bundle, and
the duplicates the accepted take race produced.

A duplicate (the spec's measure of whether the race has become common) is a reply by one
agent to a post another agent had taken, from a wake that started before the take landed,
within two minutes of the take.
"""

import json

from mindos.core import clock, validate
from mindos.errors import InvalidInput, NotFound

KINDS = ("mention", "consider", "quiet", "arrival", "crosstalk")
OUTCOMES = ("running", "replied", "silent", "took", "empty", "failed", "timeout", "undeliverable", "abandoned")
DUPLICATE_SECONDS = 120


def _summary(row):
    return {"id": row["id"], "mood": row["slug"], "agent": row["agent"], "kind": row["kind"], "tools": row["tools"],
            "why": row["why"], "posts": json.loads(row["post_ids"]), "block": row["block"], "bundle": row["bundle_id"],
            "tokens": row["tokens"], "usd": row["cost_usd"], "warm": bool(row["warm"]), "outcome": row["outcome"],
            "detail": row["detail"], "reply_post": row["reply_post_id"], "created_at": row["created_at"],
            "finished_at": row["finished_at"], "loop_guard": row["loop_guard"],
            "fresh_failed": bool(row["fresh_failed"])}


def listing(conn, *, mood=None, agent=None, kind=None, outcome=None, since=None, limit=50):
    """Wakes newest first, filtered: ``{"wakes", "total_matching", "truncated"}``."""
    clauses, params = [], []
    if mood:
        from mindos.comms import moods  # lazy: name resolution only

        clauses.append("w.mood_id = ?")
        params.append(moods.resolve(conn, mood)["id"])
    if agent:
        clauses.append("w.agent = ?")
        params.append(validate.identifier(agent, "--agent"))
    if kind:
        if kind not in KINDS:
            raise InvalidInput(f"invalid --kind: {validate.shown(kind, 40)} (choose from {', '.join(KINDS)})")
        clauses.append("w.kind = ?")
        params.append(kind)
    if outcome:
        if outcome not in OUTCOMES:
            raise InvalidInput(f"invalid --outcome: {validate.shown(outcome, 40)} (choose from {', '.join(OUTCOMES)})")
        clauses.append("w.outcome = ?")
        params.append(outcome)
    if since:
        clauses.append("w.created_at >= ?")
        params.append(clock.normalize(since, "--since"))
    limit = validate.positive_int(limit, "--limit", maximum=10000)
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    total = conn.execute(f"SELECT count(*) FROM mood_wakes w{where}", params).fetchone()[0]
    rows = conn.execute(f"SELECT w.*, m.slug FROM mood_wakes w JOIN moods m ON m.id = w.mood_id{where}"
                        " ORDER BY w.id DESC LIMIT ?", (*params, limit)).fetchall()
    wakes = [_summary(r) for r in rows]
    return {"wakes": wakes, "total_matching": total, "truncated": total > len(wakes)}


def show(conn, wake_id):
    """One wake with its full text."""
    wake_id = validate.positive_int(wake_id, "wake id", maximum=2**62)
    row = conn.execute("SELECT w.*, m.slug FROM mood_wakes w JOIN moods m ON m.id = w.mood_id WHERE w.id = ?",
                       (wake_id,)).fetchone()
    if row is None:
        raise NotFound(f"no wake {wake_id}")
    result = _summary(row)
    result["text"] = row["body"]
    return result


def bundle(conn, bundle_id):
    """One bundle: its layers (in order, with sources) and its rendered text."""
    if not isinstance(bundle_id, str) or not 1 <= len(bundle_id) <= 64 or not bundle_id.isalnum():
        raise InvalidInput(f"invalid bundle id: {validate.shown(bundle_id)} (a bundle id is letters and digits)")
    row = conn.execute("SELECT * FROM mood_bundles WHERE id = ?", (bundle_id,)).fetchone()
    if row is None:
        raise NotFound(f"no bundle {bundle_id}")
    return {"bundle": row["id"], "agent": row["agent"], "layers": json.loads(row["layers"]), "text": row["body"],
            "created_at": row["created_at"]}


def duplicates(conn, *, within=DUPLICATE_SECONDS):
    """Replies to a taken post by another agent whose wake began before the take landed."""
    rows = conn.execute(
        "SELECT t.post_id, t.agent AS taker, t.created_at AS taken_at, w.id AS wake, w.agent, w.created_at AS woke_at,"
        " p.id AS reply, p.created_at AS replied_at"
        " FROM mood_takes t JOIN mood_wakes w ON w.agent <> t.agent AND w.created_at <= t.created_at"
        "  AND t.post_id IN (SELECT value FROM json_each(w.post_ids))"
        " JOIN mood_posts p ON p.id = w.reply_post_id"
        " ORDER BY t.created_at, w.id").fetchall()
    found = [{"post": r["post_id"], "taker": r["taker"], "taken_at": r["taken_at"], "agent": r["agent"],
              "wake": r["wake"], "reply": r["reply"], "replied_at": r["replied_at"]}
             for r in rows if abs(clock.seconds_between(r["taken_at"], r["replied_at"])) <= within]
    return {"duplicates": found, "count": len(found), "within_seconds": within}
