"""Human approvals as evidence, and the sweep for completions that carry no evidence.

An approval is not a flag on the task: it is a receipt of kind ``approval`` written through
:func:`mindos.work.receipts.add`, so it is hash-sealed exactly like any other receipt (doctor
re-verifies it) and can satisfy a ``requires_receipts: [approval]`` definition of done.
The approval itself is audited ``approval_granted`` in the same transaction.

``unverified_completions`` is read-only: completed tasks with no receipt at all
(``no_receipts``) and completions whose cited receipts have since vanished
(``evidence_receipt_missing``).
"""

from mindos.core import clock, validate
from mindos.errors import InvalidInput
from mindos.store import db, ledger
from mindos.work import rows

APPROVAL_KIND = "approval"


MAX_REASON = 4096


def approve(conn, task_id, by, *, note="", reason=None):
    """Record ``by``'s approval of ``task_id`` as a sealed ``approval`` receipt.

    ``reason`` (why it was approved) is sealed in the receipt and carried by the audit
    event; like the note it passes the receipt's secret guard (a credential-shaped reason
    is refused, nothing written).  Returns ``{"task_id", "approved_by", "approved_at",
    "receipt_id", "file_hash", "receipt"}`` plus ``reason`` when one was given.  Audited
    ``approval_granted`` with the receipt id and file hash.
    """
    from mindos.work import receipts  # lazy: loaded only on the path that needs it

    task_id = validate.identifier(task_id, "task id")
    by = validate.agent(by, "--by")
    note = validate.text(note or "", "--note", max_len=4096)
    if reason is not None:
        reason = validate.text(reason, "--reason", required=True, max_len=MAX_REASON).strip()
    now = clock.now_iso()
    with db.write(conn):
        task = rows.get(conn, task_id)
        payload = {"approved_by": by, "approved_at": now, "task_status": task["status"]}
        if note:
            payload["note"] = note
        if reason is not None:
            payload["reason"] = reason
        receipt = receipts.add(conn, task_id, APPROVAL_KIND, payload)
        event = {"approved_by": by, "receipt_id": receipt["receipt_id"], "file_hash": receipt["file_hash"],
                 "task_status": task["status"]}
        if reason is not None:
            event["reason"] = reason  # already through the receipt's guard above
        ledger.append_event(conn, "task", task_id, "approval_granted", event)
    result = {"task_id": task_id, "approved_by": by, "approved_at": now, "receipt_id": receipt["receipt_id"],
              "file_hash": receipt["file_hash"], "receipt": receipt}
    if reason is not None:
        result["reason"] = reason
    return result


def unverified_completions(conn):
    """Sweep completed tasks for missing evidence (read-only).

    Returns ``{"checked", "no_receipts": [...], "evidence_receipt_missing": [...],
    "findings"}``.  Citations come from the audited ``completed`` events of tasks that are
    completed now (archived tasks are gone from the live database and are not reported).
    """
    checked = conn.execute("SELECT count(*) FROM tasks WHERE status = 'completed'").fetchone()[0]
    bare = conn.execute(
        "SELECT id, project, title, updated_at FROM tasks t WHERE status = 'completed'"
        " AND NOT EXISTS (SELECT 1 FROM receipts r WHERE r.task_id = t.id) ORDER BY updated_at, id"
    ).fetchall()
    vanished = conn.execute(
        "SELECT e.entity_id, e.id, j.value FROM audit_events e"
        " JOIN tasks t ON t.id = e.entity_id AND t.status = 'completed',"
        " json_each(e.payload_json, '$.receipts') j"
        " WHERE e.action = 'completed' AND json_type(e.payload_json, '$.receipts') = 'array'"
        " AND NOT EXISTS (SELECT 1 FROM receipts r WHERE r.id = j.value AND r.task_id = e.entity_id)"
        " ORDER BY e.entity_id, e.id, j.value"
    ).fetchall()
    missing = {}
    for task_id, event_id, receipt_id in vanished:
        entry = missing.setdefault(task_id, {"task_id": task_id, "event_id": event_id, "missing_receipts": []})
        if receipt_id not in entry["missing_receipts"]:
            entry["missing_receipts"].append(receipt_id)
    report = {
        "checked": checked,
        "no_receipts": [{"task_id": r["id"], "project": r["project"], "title": r["title"],
                         "completed_at": r["updated_at"]} for r in bare],
        "evidence_receipt_missing": list(missing.values()),
    }
    report["findings"] = len(report["no_receipts"]) + len(report["evidence_receipt_missing"])
    return report


def metrics(conn):
    """Evidence counters: completed tasks with zero receipts (bare claims)."""
    count = conn.execute(
        "SELECT count(*) FROM tasks t WHERE status = 'completed'"
        " AND NOT EXISTS (SELECT 1 FROM receipts r WHERE r.task_id = t.id)"
    ).fetchone()[0]
    return {"completions_without_receipt": count}
