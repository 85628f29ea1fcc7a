"""The task lifecycle past the claim: complete, fail, cancel, block, unblock, defer.

``complete`` and ``fail`` are holder-only: they check the caller holds a live lease (fenced by
``--epoch`` when given) and land as guarded UPDATEs that repeat the lease as checked, so a
lease stolen between read and write becomes ``lease changed since check``.  ``cancel`` and
``block`` are operator transitions that tolerate an unleased task but never override a
foreign or expired lease.

The definition of done (``requires_receipts``) is enforced by :func:`evidence_gate`, used by
both ``complete`` and ``update --status completed``, so the generic update is not a loophole
around it.  Its refusal is audited ``completion_blocked_evidence`` on its own (it survives
the rolled-back transaction).
"""


from mindos.core import clock, validate
from mindos.store import db, ledger, sql
from mindos.errors import Conflict, NotFound, Refused
from mindos.work import leases, rows



def _read(conn, task_id):
    return rows.get(conn, validate.identifier(task_id, "task id"))


def _get(conn, task_id):
    return rows.get(conn, task_id)


# ---------------------------------------------------------------------------------------
# Evidence


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


def _cited_receipts(conn, task_id, receipt_ids):
    """Validate ``--receipt`` citations: sealed receipts of this very task (deduplicated)."""
    cited = []
    for receipt_id in dict.fromkeys(receipt_ids or ()):
        row = conn.execute("SELECT task_id, file_hash FROM receipts WHERE id = ?", (receipt_id,)).fetchone()
        if row is None:
            raise NotFound(f"unknown receipt '{receipt_id}'")
        if row["task_id"] != task_id:
            raise Refused(f"receipt '{receipt_id}' belongs to another task, not '{task_id}'")
        if not row["file_hash"]:
            raise Refused(f"receipt '{receipt_id}' is not integrity-sealed; only sealed receipts can be cited")
        cited.append(receipt_id)
    return cited


# ---------------------------------------------------------------------------------------
# Holder-only transitions


def complete(conn, task_id, owner, *, epoch=None, note="", receipts=(), recall_digest=""):
    """Complete a task the caller holds; return it with ``newly_unblocked``.

    ``receipts`` cite sealed receipts of the same task (recorded in the ``completed`` event
    and output only when given); ``recall_digest`` is stored on the task.  A task with
    ``requires_receipts`` completes only when every kind has a receipt, and then carries
    ``required_evidence_met: true``.
    """
    from mindos.work import graph  # lazy: only completion walks the graph

    owner = validate.agent(owner)
    epoch = leases.check_epoch(epoch)
    note = validate.text(note or "", "--note", max_len=4096)
    digest = validate.digest(recall_digest)
    receipt_ids = [validate.identifier(r, "--receipt") for r in receipts or ()]
    now = clock.now_iso()
    with db.write(conn):
        from mindos.store import guard  # lazy: only writes that store text load the detector
        guard.check(conn, "task", task_id, {"note": note})
        task = leases.holder_task(conn, task_id, owner, epoch, "complete", now)
        cited = _cited_receipts(conn, task["id"], receipt_ids)
        evidence = evidence_gate(conn, task, owner, "complete")
        sets = ["status = 'completed'", "lease_owner = ''", "lease_expires_at = NULL", "recover_after = NULL",
                "updated_at = ?"]
        params = [now]
        if digest:
            sets.append("recall_digest = ?")
            params.append(digest)
        leases.guarded_update(conn, task, sets, params, now)
        freed = graph.newly_unblocked(conn, task["id"])
        payload = {"owner": owner, "lease_epoch": task["lease_epoch"], "previous_status": task["status"],
                   "newly_unblocked": freed}
        if note:
            payload["note"] = note
        if receipt_ids:
            payload["receipts"] = cited
        if digest:
            payload["recall_digest"] = digest
        if evidence:
            payload.update(evidence)
        ledger.append_event(conn, "task", task["id"], "completed", payload)
        result = _get(conn, task["id"])
    result["newly_unblocked"] = freed
    if receipt_ids:
        result["receipts"] = cited
    if evidence:
        result.update(evidence)
    return result


def fail(conn, task_id, owner, *, epoch=None, reason="", no_retry=False, max_retries=3, backoff_base=60,
         backoff_cap=3600):
    """Record a failed attempt by the holder; return the task.

    ``retry_count`` += 1 (the budget shared with recovery).  While it is <= ``max_retries``
    (and not ``no_retry``) the task is requeued under the recovery cooldown (audited
    ``task_failed``; output ``retry_scheduled: true``, ``backoff_seconds``); otherwise it
    fails terminally with the reason in blocked_reason and names ``dependents_stranded``
    (audited ``task_failed_terminal``).
    """
    from mindos.work import graph, sweeps  # lazy: only failure walks the graph and backs off

    owner = validate.agent(owner)
    epoch = leases.check_epoch(epoch)
    reason = validate.line(reason or "", "--reason", max_len=4096)
    max_retries, backoff_base, backoff_cap = sweeps.check_budget(max_retries, backoff_base, backoff_cap)
    now = clock.now_iso()
    with db.write(conn):
        from mindos.store import guard  # lazy: only writes that store text load the detector
        guard.check(conn, "task", task_id, {"reason": reason})
        task = leases.holder_task(conn, task_id, owner, epoch, "fail", now)
        count = task["retry_count"] + 1
        payload = {"owner": owner, "lease_epoch": task["lease_epoch"], "previous_status": task["status"],
                   "reason": reason, "retry_count": count, "max_retries": max_retries}
        if not no_retry and count <= max_retries:
            seconds = sweeps.backoff_seconds(count, backoff_base, backoff_cap)
            after = sweeps.recover_after(now, seconds)
            leases.guarded_update(conn, task, [
                "status = 'queued'", "lease_owner = ''", "lease_expires_at = NULL", "retry_count = ?",
                "recover_after = ?", "updated_at = ?"], [count, after, now], now)
            payload.update({"recover_after": after, "backoff_seconds": seconds})
            ledger.append_event(conn, "task", task["id"], "task_failed", payload)
            result = _get(conn, task["id"])
            result.update({"retry_scheduled": True, "backoff_seconds": seconds})
            return result
        leases.guarded_update(conn, task, [
            "status = 'failed'", "lease_owner = ''", "lease_expires_at = NULL", "retry_count = ?",
            "recover_after = NULL", "blocked_reason = ?", "updated_at = ?"],
            [count, reason or "failed (no reason given)", now], now)
        stranded = graph.open_dependents(conn, task["id"])
        payload.update({"no_retry": bool(no_retry), "dependents_stranded": stranded})
        ledger.append_event(conn, "task", task["id"], "task_failed_terminal", payload)
        result = _get(conn, task["id"])
    result.update({"retry_scheduled": False, "dependents_stranded": stranded})
    return result


# ---------------------------------------------------------------------------------------
# Operator transitions


def _refuse_foreign_or_expired(task, owner, now, verb):
    """Operator transitions tolerate no lease, accept the caller's live lease, refuse the rest."""
    if not task["lease_owner"]:
        return None
    if task["lease_owner"] != owner:
        state = "live" if rows.lease_is_live(task, now) else f"expired {task['lease_expires_at']}"
        raise Refused(
            f"task '{task['id']}' is leased by '{task['lease_owner']}' ({state}); cannot {verb} over another"
            " owner's lease (ask the holder, or run ops.py recover once it is expired)"
        )
    if not rows.lease_is_live(task, now):
        raise Refused(
            f"your lease on task '{task['id']}' expired at {task['lease_expires_at']}; reclaim it or run"
            f" ops.py recover before you {verb}"
        )
    return task["lease_owner"]


def _guarded_status(conn, task, sets, params):
    """UPDATE that lands only while status and lease are exactly as read."""
    if not sql.compare_and_set(conn, "tasks", sets, params, {
            "id": task["id"], "status": task["status"], "lease_owner": task["lease_owner"],
            "lease_expires_at": task["lease_expires_at"], "lease_epoch": task["lease_epoch"]}):
        raise Conflict(f"lease changed since check: task '{task['id']}' was modified by another writer; re-read and retry")


def cancel(conn, task_id, owner, *, reason=""):
    """Cancel a task (unleased, or under the caller's own live lease); return it.

    Audited ``cancelled`` with owner, reason and previous_status.
    """
    owner = validate.agent(owner)
    reason = validate.line(reason or "", "--reason", max_len=4096)
    now = clock.now_iso()
    with db.write(conn):
        from mindos.store import guard  # lazy: only writes that store text load the detector
        guard.check(conn, "task", task_id, {"reason": reason})
        task = _read(conn, task_id)
        if task["status"] in validate.TERMINAL_STATUSES:
            raise Refused(f"task '{task['id']}' is already {task['status']} (terminal); cannot cancel")
        released = _refuse_foreign_or_expired(task, owner, now, "cancel")
        _guarded_status(conn, task, ["status = 'cancelled'", "lease_owner = ''", "lease_expires_at = NULL",
                                     "recover_after = NULL", "updated_at = ?"], [now])
        payload = {"owner": owner, "reason": reason, "previous_status": task["status"]}
        if released:
            payload.update({"lease_released": released, "lease_epoch": task["lease_epoch"]})
        ledger.append_event(conn, "task", task["id"], "cancelled", payload)
        return _get(conn, task["id"])


def block(conn, task_id, owner, *, reason):
    """Park a task as ``blocked`` with a reason; releases the caller's own live lease.

    Refuses terminal or already-blocked tasks and foreign or expired leases.  Audited
    ``blocked`` with previous_status.
    """
    owner = validate.agent(owner)
    reason = validate.line(reason, "--reason", required=True, max_len=4096)
    now = clock.now_iso()
    with db.write(conn):
        from mindos.store import guard  # lazy: only writes that store text load the detector
        guard.check(conn, "task", task_id, {"reason": reason})
        task = _read(conn, task_id)
        if task["status"] in validate.TERMINAL_STATUSES:
            raise Refused(f"task '{task['id']}' is {task['status']} (terminal); cannot block")
        if task["status"] == "blocked":
            raise Refused(f"task '{task['id']}' is already blocked: {' '.join(task['blocked_reason'].split())[:200]}")
        released = _refuse_foreign_or_expired(task, owner, now, "block")
        _guarded_status(conn, task, ["status = 'blocked'", "blocked_reason = ?", "lease_owner = ''",
                                     "lease_expires_at = NULL", "updated_at = ?"], [reason, now])
        payload = {"owner": owner, "reason": reason, "previous_status": task["status"]}
        if released:
            payload.update({"lease_released": released, "lease_epoch": task["lease_epoch"]})
        ledger.append_event(conn, "task", task["id"], "blocked", payload)
        return _get(conn, task["id"])


def unblock(conn, task_id, owner):
    """Requeue a blocked task and clear its reason; audited ``unblocked``; return it."""
    owner = validate.agent(owner)
    now = clock.now_iso()
    with db.write(conn):
        task = _read(conn, task_id)
        if task["status"] != "blocked":
            raise Refused(f"task '{task['id']}' is not blocked (status {task['status']}); nothing to unblock")
        _guarded_status(conn, task, ["status = 'queued'", "blocked_reason = ''", "updated_at = ?"], [now])
        ledger.append_event(conn, "task", task["id"], "unblocked", {
            "owner": owner, "previous_reason": task["blocked_reason"], "previous_status": "blocked",
        })
        return _get(conn, task["id"])


def defer(conn, task_id, owner, *, until):
    """Set (or with ``''`` clear) a task's not_before; its status never changes.

    Refuses terminal tasks and tasks under another owner's live lease.  Audited ``deferred``
    or ``deferral_cleared`` with owner, previous_status and previous_not_before.
    """
    owner = validate.agent(owner)
    if until is None:
        raise Refused("defer needs --until (an ISO 8601 instant, or '' to clear)")
    not_before = validate.timestamp(until, "--until")
    now = clock.now_iso()
    with db.write(conn):
        task = _read(conn, task_id)
        if task["status"] in validate.TERMINAL_STATUSES:
            raise Refused(f"task '{task['id']}' is {task['status']} (terminal); cannot defer")
        if rows.lease_is_live(task, now) and task["lease_owner"] != owner:
            raise Refused(
                f"task '{task['id']}' is leased by '{task['lease_owner']}' until {task['lease_expires_at']};"
                " cannot defer another owner's leased task"
            )
        _guarded_status(conn, task, ["not_before = ?", "updated_at = ?"], [not_before, now])
        action = "deferred" if not_before else "deferral_cleared"
        ledger.append_event(conn, "task", task["id"], action, {
            "owner": owner, "not_before": not_before, "previous_not_before": task["not_before"],
            "previous_status": task["status"],
        })
        return _get(conn, task["id"])


def metrics(conn):
    """Lifecycle counters: deferrals, failures and the definition of done."""
    now = clock.now_iso()
    deferred = conn.execute(
        "SELECT count(*) FROM tasks WHERE status = 'queued' AND not_before IS NOT NULL AND not_before > ?", (now,),
    ).fetchone()[0]
    missing = conn.execute(
        f"SELECT count(*) FROM tasks t WHERE t.requires_receipts <> '[]' AND t.status NOT IN {sql.TERMINAL_SQL}"
        " AND EXISTS (SELECT 1 FROM json_each(t.requires_receipts) k WHERE NOT EXISTS ("
        "   SELECT 1 FROM receipts r WHERE r.task_id = t.id AND r.kind = k.value))"
    ).fetchone()[0]
    return {
        "queued_deferred": deferred,
        "failures_retried_total": ledger.count_action(conn, "task_failed"),
        "failures_terminal_total": ledger.count_action(conn, "task_failed_terminal"),
        "tasks_missing_required_evidence": missing,
        "completions_blocked_by_evidence": ledger.count_action(conn, "completion_blocked_evidence"),
    }


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
