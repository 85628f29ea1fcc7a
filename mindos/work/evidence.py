"""The definition of done and the operator override's gates.

A task's ``requires_receipts`` kinds must each have a receipt on the task before it can be
completed, by ``complete`` or by ``update --status completed`` alike, so the generic update
is not a loophole around it; :func:`evidence_gate` is that one check.  Its refusal is
audited ``completion_blocked_evidence`` on its own (it survives the rolled-back
transaction).  A run receipt counts like any other: ``run`` is the kind of a run that ended
ok (:func:`mindos.work.receipts.run_kind`).

Kept apart from :mod:`mindos.work.lifecycle` so the task registry's override (``update``)
and the lifecycle (whose defect failures create tasks) can both use it without importing
each other.
"""

from mindos.core import validate
from mindos.store import ledger
from mindos.errors import Refused


def missing_receipt_kinds(conn, task):
    """Required receipt kinds of ``task`` with no receipt on the task yet (sorted)."""
    required = task.get("requires_receipts") or []
    if not required:
        return []
    have = {row[0] for row in conn.execute("SELECT DISTINCT kind FROM receipts WHERE task_id = ?", (task["id"],))}
    return sorted(kind for kind in required if kind not in have)


def evidence_gate(conn, task, actor="", via="complete"):
    """Enforce the task's definition of done inside the open write transaction.

    Returns ``{"required_evidence_met": True}`` when the task has requirements and all are
    met, None when it has none.  Otherwise audits ``completion_blocked_evidence`` (surviving
    the rollback) and raises Refused naming the missing kinds.
    """
    required = task.get("requires_receipts") or []
    if not required:
        return None
    missing = missing_receipt_kinds(conn, task)
    if missing:
        payload = {"gate": "requires_receipts", "missing": missing, "required": sorted(required), "via": via}
        if actor:
            payload["owner"] = actor
        ledger.append_refusal(conn, "task", task["id"], "completion_blocked_evidence", payload)
        raise Refused(
            f"definition of done not met: task '{task['id']}' is missing required receipt kinds:"
            f" {', '.join(missing)}; add those receipts first"
        )
    return {"required_evidence_met": True}


# ---------------------------------------------------------------------------------------
# The operator override (``update --status``)


def status_override_gate(conn, task, new_status, approved_by, payload):
    """Check an operator's ``update --status`` against the rules; add what they record to ``payload``.

    Moving to ``completed`` must meet the definition of done (the generic update is no
    loophole around it); ``ready_to_merge`` / ``ready_to_deploy`` pass the project's
    readiness gate.  Raises Refused otherwise.
    """
    if new_status == "completed":
        payload.update(evidence_gate(conn, task, via="update") or {})
        return
    if new_status in ("ready_to_merge", "ready_to_deploy"):
        from mindos.work import policies  # lazy: only readiness changes read policy files

        gate = policies.readiness_gate(conn, task["project"], new_status, approved_by)
        if gate:
            payload.update(gate)


def status_override_sets(task, new_status, payload):
    """The extra SET clauses of an override: a terminal status releases any held lease."""
    if new_status in validate.TERMINAL_STATUSES and task["lease_owner"]:
        payload["lease_released"] = task["lease_owner"]
        return ["lease_owner = ''", "lease_expires_at = NULL"]
    return []
