"""The task lifecycle past the claim: complete, fail, cancel, block, unblock, defer.

``complete`` and ``fail`` are holder-only: they check the caller holds a live lease (fenced by
``--epoch`` when given) and land as guarded UPDATEs that repeat the lease as checked, so a
lease stolen between read and write becomes ``lease changed since check``.  ``cancel`` and
``block`` are operator transitions that tolerate an unleased task but never override a
foreign or expired lease.

The definition of done (``requires_receipts``) is enforced by
:func:`mindos.work.evidence.evidence_gate`, used by both ``complete`` and ``update --status
completed``, so the generic update is not a loophole around it.

``complete --recap`` stores what was done, one bounded paragraph, on the task row, where
``show``, the dependency context of dependent tasks' packs and handoff views read it.

``fail --cause`` names why an attempt failed.  ``transient`` and ``infra`` (and no cause at
all) requeue under the backoff exactly as before; a ``defect`` within the retry budget
requeues the task behind ONE correction task instead: a new task of the same project,
priority and tags, carrying the reason and the cited receipts, linked by ``correction_of``
and made a prerequisite of the failed task, so dispatch routes the fix first (and lends it
the failed task's urgency).  While that correction is open, another defect failure reuses
it instead of making a second one.
"""


from mindos.core import clock, validate
from mindos.store import db, ledger, sql
from mindos.errors import Conflict, InvalidInput, NotFound, Refused
from mindos.work import leases, rows
from mindos.work.evidence import evidence_gate



def _read(conn, task_id):
    return rows.get(conn, validate.identifier(task_id, "task id"))


def _get(conn, task_id):
    return rows.get(conn, task_id)


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

MAX_RECAP = 2000
CAUSES = ("transient", "infra", "defect")


def check_recap(recap):
    """A recap: '' (none) or non-blank text of at most MAX_RECAP characters once trimmed
    (a file's final newline does not count), returned trimmed."""
    if recap is None or recap == "":
        return ""
    if not isinstance(recap, str):
        raise InvalidInput("invalid --recap: expected text")
    return validate.text(recap.strip(), "--recap", required=True, max_len=MAX_RECAP)


def complete(conn, task_id, owner, *, epoch=None, note="", receipts=(), recall_digest="", recap=""):
    """Complete a task the caller holds; return it with ``newly_unblocked``.

    ``receipts`` cite sealed receipts of the same task (recorded in the ``completed`` event
    and output only when given); ``recall_digest`` is stored on the task.  A task with
    ``requires_receipts`` completes only when every kind has a receipt, and then carries
    ``required_evidence_met: true``.  ``recap`` (guarded, at most MAX_RECAP characters) is
    stored on the task and recorded in the ``completed`` event.
    """
    from mindos.work import graph  # lazy: only completion walks the graph

    owner = validate.agent(owner)
    epoch = leases.check_epoch(epoch)
    note = validate.text(note or "", "--note", max_len=4096)
    recap = check_recap(recap)
    digest = validate.digest(recall_digest)
    receipt_ids = [validate.identifier(r, "--receipt") for r in receipts or ()]
    now = clock.now_iso()
    with db.write(conn):
        from mindos.store import guard  # lazy: only writes that store text load the detector
        guard.check(conn, "task", task_id, {"note": note, "recap": recap})
        task = leases.holder_task(conn, task_id, owner, epoch, "complete", now)
        cited = _cited_receipts(conn, task["id"], receipt_ids)
        evidence = evidence_gate(conn, task, owner, "complete")
        sets, params = sql.given([("recall_digest = ?", digest or None), ("recap = ?", recap or None)], [
            "status = 'completed'", "lease_owner = ''", "lease_expires_at = NULL", "recover_after = NULL",
            "updated_at = ?"], [now])
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
        if recap:
            payload["recap"] = recap
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
         backoff_cap=3600, cause=None, receipts=()):
    """Record a failed attempt by the holder; return the task.

    ``retry_count`` += 1 (the budget shared with recovery).  While it is <= ``max_retries``
    (and not ``no_retry``) the task is requeued under the recovery cooldown (audited
    ``task_failed``; output ``retry_scheduled: true``, ``backoff_seconds``); otherwise it
    fails terminally with the reason in blocked_reason and names ``dependents_stranded``
    (audited ``task_failed_terminal``).

    ``cause`` (transient, infra, defect; None keeps the output exactly as before) is
    recorded in the event and the output.  A ``defect`` requeued within the budget waits for
    a correction task instead of a cooldown: output ``correction_task`` (its id) and
    ``correction_created`` (False when an open correction was reused), audited
    ``correction_task_created`` on the failed task.  ``receipts`` cite sealed receipts of
    the task as the failure's evidence (recorded, and carried by a correction task).
    """
    from mindos.work import graph, sweeps  # lazy: only failure walks the graph and backs off

    owner = validate.agent(owner)
    epoch = leases.check_epoch(epoch)
    reason = validate.line(reason or "", "--reason", max_len=4096)
    if cause is not None and cause not in CAUSES:
        raise InvalidInput(f"invalid --cause: {validate.shown(cause, 40)} (choose from {', '.join(CAUSES)})")
    receipt_ids = [validate.identifier(r, "--receipt") for r in receipts or ()]
    max_retries, backoff_base, backoff_cap = sweeps.check_budget(max_retries, backoff_base, backoff_cap)
    now = clock.now_iso()
    with db.write(conn):
        from mindos.store import guard  # lazy: only writes that store text load the detector
        guard.check(conn, "task", task_id, {"reason": reason})
        task = leases.holder_task(conn, task_id, owner, epoch, "fail", now)
        cited = _cited_receipts(conn, task["id"], receipt_ids)
        count = task["retry_count"] + 1
        payload = {"owner": owner, "lease_epoch": task["lease_epoch"], "previous_status": task["status"],
                   "reason": reason, "retry_count": count, "max_retries": max_retries}
        extra = {}
        if cause is not None:
            extra["cause"] = cause
        if receipt_ids:
            extra["receipts"] = cited
        payload.update(extra)
        if not no_retry and count <= max_retries:
            # requeued: a defect waits for its correction task, anything else for a cooldown
            defect = cause == "defect"
            seconds = 0 if defect else sweeps.backoff_seconds(count, backoff_base, backoff_cap)
            after = None if defect else sweeps.recover_after(now, seconds)
            leases.guarded_update(conn, task, [
                "status = 'queued'", "lease_owner = ''", "lease_expires_at = NULL", "retry_count = ?",
                "recover_after = ?", "updated_at = ?"], [count, after, now], now)
            if defect:
                correction, created = _correction(conn, task, reason, cited)
                added = {"correction_task": correction, "correction_created": created}
                payload.update(added)
            else:
                added = {}
                payload.update({"recover_after": after, "backoff_seconds": seconds})
            ledger.append_event(conn, "task", task["id"], "task_failed", payload)
            result = _get(conn, task["id"])
            result.update({"retry_scheduled": True, "backoff_seconds": seconds, **added, **extra})
            return result
        leases.guarded_update(conn, task, [
            "status = 'failed'", "lease_owner = ''", "lease_expires_at = NULL", "retry_count = ?",
            "recover_after = NULL", "blocked_reason = ?", "updated_at = ?"],
            [count, reason or "failed (no reason given)", now], now)
        stranded = graph.open_dependents(conn, task["id"])
        payload.update({"no_retry": bool(no_retry), "dependents_stranded": stranded})
        ledger.append_event(conn, "task", task["id"], "task_failed_terminal", payload)
        result = _get(conn, task["id"])
    result.update({"retry_scheduled": False, "dependents_stranded": stranded, **extra})
    return result


def open_corrections(conn, task_id):
    """Ids of the open (non-terminal) correction tasks of ``task_id``, oldest first."""
    return [row[0] for row in conn.execute(
        "SELECT id FROM tasks WHERE correction_of = ? AND correction_of <> ''"  # "<> ''": the partial index
        f" AND status NOT IN {sql.TERMINAL_SQL} ORDER BY created_at, id",
        (task_id,))]


def _correction(conn, task, reason, cited):
    """The correction task of a defect failure of ``task``, inside the open write transaction:
    ``(id, created)``.  An open correction is reused (never a second one); otherwise a new
    task inherits the failed task's project, priority and tags, carries the reason and the
    cited receipts, and becomes its prerequisite.  The failed task is audited
    ``correction_task_created`` (or, on reuse, nothing beyond its ``task_failed``)."""
    from mindos.work import graph, tasks  # lazy: only a defect failure creates a task

    existing = open_corrections(conn, task["id"])
    if existing:
        graph.add_edges(conn, task["id"], existing[:1])  # re-linked if someone removed the edge
        return existing[0], False
    prefix = "Correct the defect in: "
    title = prefix + " ".join(task["title"].split())[: validate.MAX_TITLE - len(prefix)]
    lines = [f"Correction for task {task['id']} ({' '.join(task['title'].split())}), which failed with a defect."]
    lines.append(f"Reason: {reason}" if reason else "Reason: (none given)")
    if cited:
        lines.append("Evidence (receipts of the failed task): " + ", ".join(cited))
    lines.append(f"When this is completed, task {task['id']} is dispatchable again.")
    correction = tasks.create(conn, project=task["project"], title=title, description="\n".join(lines),
                              priority=task["priority"], tags=task.get("tags") or (), correction_of=task["id"])
    graph.add_edges(conn, task["id"], [correction["id"]])
    event = {"correction_task": correction["id"], "cause": "defect", "reason": reason, "depends_on": correction["id"]}
    if cited:
        event["receipts"] = cited
    ledger.append_event(conn, "task", task["id"], "correction_task_created", event)
    return correction["id"], True


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


_DONE = {"cancel": "cancelled", "block": "blocked"}


def _operator(conn, task_id, owner, reason, verb, refuse, sets, params, now):
    """An operator transition (``verb``: cancel or block): the reason guarded, the task read,
    ``refuse(task)`` given its say, the caller's own live lease released with it, audited
    (``cancelled`` / ``blocked``, with owner, reason and previous_status); the task returned."""
    with db.write(conn):
        from mindos.store import guard  # lazy: only writes that store text load the detector
        guard.check(conn, "task", task_id, {"reason": reason})
        task = _read(conn, task_id)
        refuse(task)
        released = _refuse_foreign_or_expired(task, owner, now, verb)
        _guarded_status(conn, task, sets, params)
        payload = {"owner": owner, "reason": reason, "previous_status": task["status"]}
        if released:
            payload.update({"lease_released": released, "lease_epoch": task["lease_epoch"]})
        ledger.append_event(conn, "task", task["id"], _DONE[verb], payload)
        return _get(conn, task["id"])


def cancel(conn, task_id, owner, *, reason=""):
    """Cancel a task (unleased, or under the caller's own live lease); return it.

    Audited ``cancelled`` with owner, reason and previous_status.
    """
    owner = validate.agent(owner)
    reason = validate.line(reason or "", "--reason", max_len=4096)
    now = clock.now_iso()

    def refuse(task):
        if task["status"] in validate.TERMINAL_STATUSES:
            raise Refused(f"task '{task['id']}' is already {task['status']} (terminal); cannot cancel")

    return _operator(conn, task_id, owner, reason, "cancel", refuse, ["status = 'cancelled'", "lease_owner = ''",
                     "lease_expires_at = NULL", "recover_after = NULL", "updated_at = ?"], [now], now)


def block(conn, task_id, owner, *, reason):
    """Park a task as ``blocked`` with a reason; releases the caller's own live lease.

    Refuses terminal or already-blocked tasks and foreign or expired leases.  Audited
    ``blocked`` with previous_status.
    """
    owner = validate.agent(owner)
    reason = validate.line(reason, "--reason", required=True, max_len=4096)
    now = clock.now_iso()

    def refuse(task):
        if task["status"] in validate.TERMINAL_STATUSES:
            raise Refused(f"task '{task['id']}' is {task['status']} (terminal); cannot block")
        if task["status"] == "blocked":
            raise Refused(f"task '{task['id']}' is already blocked: {' '.join(task['blocked_reason'].split())[:200]}")

    return _operator(conn, task_id, owner, reason, "block", refuse, ["status = 'blocked'", "blocked_reason = ?",
                     "lease_owner = ''", "lease_expires_at = NULL", "updated_at = ?"], [reason, now], now)


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
    """Lifecycle counters: deferrals, failures, correction tasks and the definition of done."""
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
        "correction_tasks_created_total": ledger.count_action(conn, "correction_task_created"),
        "tasks_missing_required_evidence": missing,
        "completions_blocked_by_evidence": ledger.count_action(conn, "completion_blocked_evidence"),
    }
