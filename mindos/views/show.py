"""``show``: one task with everything known about it, across dimensions.

The task row (with its ``recap`` and, for a correction task, ``correction_of``), its
receipts, its audit trail, its dependency edges both ways, the correction tasks opened by
its defect failures and its live handoff, plus the sections other modules declare in
:data:`SECTION_PROVIDERS` (the lease's progress, the autonomy grant).  A view: it reads,
never writes.
"""

from mindos.core import load_module, validate
from mindos.memory import handoffs
from mindos.store import ledger
from mindos.work import receipts, rows

def receipts_for(conn, task_id):
    """The receipts indexed for a task, oldest first."""
    rows = conn.execute(
        "SELECT id, task_id, kind, path, file_hash, created_at FROM receipts WHERE task_id = ? ORDER BY created_at, id",
        (task_id,),
    )
    return [receipts.record_keys(conn, dict(row)) for row in rows]


SHOW_AUDIT_LIMIT = 200
MAX_AUDIT_LIMIT = 100000
# Modules of lower floors adding keys to a task's view: each defines
# ``show_section(conn, task_id) -> dict``, loaded by name (like metrics.PROVIDERS) so ``show``
# pays for it only when it runs.  Upper floors' sections (the continuation grant) are passed
# in by the caller, ``show(..., sections=...)``: a view never names an upper floor.
SECTION_PROVIDERS = ["mindos.work.progress"]


_TRAIL_COLUMNS = ("id", "action", "payload_json", "created_at")
_CHAIN_KEYS = ("entity_type", "entity_id", "prev_hash", "hash")


def audit_trail(conn, task_id, limit=SHOW_AUDIT_LIMIT):
    """``(events, total)``: the task's audit events, oldest first (at most ``limit``, the
    newest ones), read through :func:`mindos.store.ledger.events` without its chain fields,
    and how many there are in all."""
    found = ledger.events(conn, entity_id=task_id, limit=limit)
    trail = []
    for event in reversed(found["events"]):
        for key in _CHAIN_KEYS:
            del event[key]
        if "undecodable" in event:  # only the columns a trail shows count here
            event["undecodable"] = [key for key in event["undecodable"] if key in _TRAIL_COLUMNS]
            if not event["undecodable"]:
                del event["undecodable"], event["tampered"]
        trail.append(event)
    return trail, found["total_matching"]


def show(conn, task_id, *, limit=SHOW_AUDIT_LIMIT, sections=()):
    """The task with its receipts, audit trail, dependencies, dependents, corrections and live handoff.

    The trail holds the newest ``limit`` events (default SHOW_AUDIT_LIMIT, oldest first);
    ``audit_total`` and ``audit_truncated`` say whether older ones exist (``events
    --entity-id`` pages them).  ``sections``: callables ``(conn, task_id) -> dict`` of upper
    floors whose keys join the view (the ``show`` command passes the continuation grant's).
    """
    limit = validate.positive_int(limit, "--limit", maximum=MAX_AUDIT_LIMIT)
    task = rows.get(conn, validate.identifier(task_id, "task id"))
    deps = conn.execute(
        "SELECT d.depends_on AS id, t.status, t.title FROM dependencies d LEFT JOIN tasks t ON t.id = d.depends_on"
        " WHERE d.task_id = ? ORDER BY d.created_at, d.depends_on",
        (task_id,),
    )
    dependents = conn.execute(
        "SELECT t.id, t.status, t.title FROM dependencies d JOIN tasks t ON t.id = d.task_id"
        " WHERE d.depends_on = ? ORDER BY d.created_at, t.id",
        (task_id,),
    )
    corrections = conn.execute(
        # "<> ''" lets SQLite use the partial index on correction_of (a bound value alone cannot)
        "SELECT id, status, title FROM tasks WHERE correction_of = ? AND correction_of <> ''"
        " ORDER BY created_at, id", (task_id,))
    trail, total = audit_trail(conn, task_id, limit)
    view = {
        "task": task,
        "receipts": receipts_for(conn, task_id),
        "audit": trail,
        "audit_total": total,
        "audit_truncated": total > len(trail),
        "dependencies": [
            {"id": r["id"], "status": r["status"] or "missing", "title": r["title"],
             "satisfied": r["status"] == "completed"} for r in deps
        ],
        "dependents": [dict(r) for r in dependents],
        "corrections": [dict(r) for r in corrections],
        "handoff": handoffs.live(conn, task_id),
    }
    for name in SECTION_PROVIDERS:
        view.update(load_module(name).show_section(conn, task_id))
    for section in sections:
        view.update(section(conn, task_id))
    return view


