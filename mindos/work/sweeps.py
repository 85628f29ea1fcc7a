"""Operator sweeps: stale-lease recovery (with retry budget and backoff) and SLA escalation.

Both sweeps read their candidates first and then apply each change with a guarded UPDATE
whose WHERE clause repeats the row exactly as read, inside one write transaction.  A row
that moved between the read and the write (a holder renewed, an operator re-prioritized)
is not clobbered: it lands in ``skipped``.  ``--dry-run`` reports what a pass would do and
writes nothing.

The retry budget is shared with ``fail``: every recovery and every failure bumps
``retry_count``; while ``retry_count <= max_retries`` the task is requeued under an
exponential cooldown ``recover_after = now + min(cap, base * 2^(retry_count-1))`` seconds
(base 0 disables it), past the budget it fails with ``max lease retries exceeded``.
"""

from mindos.core import clock, validate
from mindos.store import db, ledger, sql

DEFAULT_MAX_RETRIES = 3
DEFAULT_BACKOFF_BASE = 60
DEFAULT_BACKOFF_CAP = 3600
RETRIES_EXCEEDED = "max lease retries exceeded"
_TERMINAL_SQL = sql.TERMINAL_SQL
_NEXT_PRIORITY = {"P1": "P0", "P2": "P1", "P3": "P2"}


def check_budget(max_retries, backoff_base, backoff_cap):
    """Validate the retry-budget flags; return them."""
    validate.positive_int(max_retries, "--max-retries", minimum=0, maximum=1000)
    validate.positive_int(backoff_base, "--backoff-base", minimum=0, maximum=86400 * 30)
    validate.positive_int(backoff_cap, "--backoff-cap", minimum=0, maximum=86400 * 365)
    return max_retries, backoff_base, backoff_cap


def backoff_seconds(retry_count, base=DEFAULT_BACKOFF_BASE, cap=DEFAULT_BACKOFF_CAP):
    """The cooldown after the ``retry_count``-th retry: min(cap, base * 2^(retry_count-1)); 0 disables."""
    if base <= 0 or retry_count <= 0:
        return 0
    exponent = min(retry_count - 1, 62)  # past this the cap always wins; keeps the integer small
    return min(cap, base * (2 ** exponent))


def recover_after(now, seconds):
    """The ``recover_after`` stamp for a cooldown of ``seconds`` from ``now`` (None for none)."""
    return clock.shift(now, seconds) if seconds else None


def _expired_leases(conn, now):
    rows = conn.execute(
        "SELECT id, status, lease_owner, lease_expires_at, lease_epoch, retry_count FROM tasks"
        " WHERE lease_owner <> '' AND (lease_expires_at IS NULL OR lease_expires_at <= ?)"
        f" AND status NOT IN {_TERMINAL_SQL} ORDER BY lease_expires_at, id",
        (now,),
    )
    return [dict(row) for row in rows]


def recover(conn, *, dry_run=False, max_retries=DEFAULT_MAX_RETRIES, backoff_base=DEFAULT_BACKOFF_BASE,
            backoff_cap=DEFAULT_BACKOFF_CAP, task_ids=None):
    """Requeue expired held leases (consuming retry budget) or fail them past the budget;
    ``task_ids`` narrows the sweep to those tasks (one repaired finding).

    Returns ``{"dry_run", "recovered", "failed", "would_recover", "would_fail", "backoff",
    "skipped"}``: id lists, plus ``backoff`` mapping each requeued id to its retry_count,
    backoff_seconds and recover_after.  Audits ``lease_recovered`` (with recover_after) or
    ``lease_recovery_failed`` (reason ``max lease retries exceeded``) per task.
    """
    max_retries, backoff_base, backoff_cap = check_budget(max_retries, backoff_base, backoff_cap)
    now = clock.now_iso()
    report = {"dry_run": bool(dry_run), "recovered": [], "failed": [], "would_recover": [], "would_fail": [],
              "backoff": {}, "skipped": []}
    candidates = _expired_leases(conn, now)
    if task_ids is not None:
        wanted = set(task_ids)
        candidates = [task for task in candidates if task["id"] in wanted]
    if dry_run:
        for task in candidates:
            count = task["retry_count"] + 1
            if count > max_retries:
                report["would_fail"].append(task["id"])
            else:
                seconds = backoff_seconds(count, backoff_base, backoff_cap)
                report["would_recover"].append(task["id"])
                report["backoff"][task["id"]] = {"retry_count": count, "backoff_seconds": seconds,
                                                 "recover_after": recover_after(now, seconds)}
        return report
    if not candidates:
        return report
    with db.write(conn):
        now = clock.now_iso()
        for task in candidates:
            count = task["retry_count"] + 1
            failing = count > max_retries
            seconds = 0 if failing else backoff_seconds(count, backoff_base, backoff_cap)
            after = None if failing else recover_after(now, seconds)
            if failing:
                sets = "status = 'failed', blocked_reason = ?, recover_after = NULL"
                params = [RETRIES_EXCEEDED]
            else:
                sets = "status = 'queued', recover_after = ?"
                params = [after]
            # guarded: lands only if the lease is still exactly as read and still expired
            landed = sql.compare_and_set(
                conn, "tasks", [sets, "lease_owner = ''", "lease_expires_at = NULL", "retry_count = ?", "updated_at = ?"],
                (*params, count, now),
                {"id": task["id"], "status": task["status"], "lease_owner": task["lease_owner"],
                 "lease_expires_at": task["lease_expires_at"], "lease_epoch": task["lease_epoch"],
                 "retry_count": task["retry_count"]},
                extra="lease_expires_at IS NULL OR lease_expires_at <= ?", extra_params=(now,))
            if not landed:
                report["skipped"].append(task["id"])
                continue
            payload = {"previous_owner": task["lease_owner"], "lease_epoch": task["lease_epoch"],
                       "lease_expires_at": task["lease_expires_at"], "previous_status": task["status"],
                       "retry_count": count, "max_retries": max_retries}
            if failing:
                payload["reason"] = RETRIES_EXCEEDED
                ledger.append_event(conn, "task", task["id"], "lease_recovery_failed", payload)
                report["failed"].append(task["id"])
            else:
                payload.update({"recover_after": after, "backoff_seconds": seconds})
                ledger.append_event(conn, "task", task["id"], "lease_recovered", payload)
                report["recovered"].append(task["id"])
                report["backoff"][task["id"]] = {"retry_count": count, "backoff_seconds": seconds,
                                                 "recover_after": after}
    return report


def _overdue(conn, now):
    rows = conn.execute(
        "SELECT id, priority, due_at, status FROM tasks WHERE due_at IS NOT NULL AND due_at < ?"
        f" AND status NOT IN {_TERMINAL_SQL} ORDER BY due_at, id",
        (now,),
    )
    return [dict(row) for row in rows]


def escalate(conn, *, dry_run=False):
    """Bump every overdue non-terminal task one priority level (P3->P2->P1->P0).

    Returns ``{"dry_run", "escalated", "would_escalate", "already_p0", "skipped"}``;
    escalation entries are ``{"task_id", "old_priority", "new_priority", "due_at"}``.  Each
    bump audits ``priority_escalated`` with old/new priority, due_at and reason ``overdue``.
    """
    now = clock.now_iso()
    report = {"dry_run": bool(dry_run), "escalated": [], "would_escalate": [], "already_p0": [], "skipped": []}
    candidates = _overdue(conn, now)
    bumps = []
    for task in candidates:
        if task["priority"] == "P0":
            report["already_p0"].append(task["id"])
        elif task["priority"] in _NEXT_PRIORITY:
            bumps.append(task)
        else:  # a priority outside P0..P3 cannot be ranked; never guess
            report["skipped"].append(task["id"])
    entries = [{"task_id": t["id"], "old_priority": t["priority"], "new_priority": _NEXT_PRIORITY[t["priority"]],
                "due_at": t["due_at"]} for t in bumps]

    def land(task, entry, now):
        # guarded: lands only if priority, deadline and openness are exactly as read
        if not sql.compare_and_set(
                conn, "tasks", ["priority = ?", "updated_at = ?"], (entry["new_priority"], now),
                {"id": task["id"], "priority": task["priority"], "due_at": task["due_at"]},
                extra=f"due_at < ? AND status NOT IN {_TERMINAL_SQL}", extra_params=(now,)):
            return False
        ledger.append_event(conn, "task", task["id"], "priority_escalated", {
            "old_priority": entry["old_priority"], "new_priority": entry["new_priority"],
            "due_at": task["due_at"], "reason": "overdue",
        })
        return True

    return escalate_each(conn, report, bumps, entries, land, dry_run=dry_run)


def escalate_each(conn, report, rows, entries, land, *, dry_run):
    """The apply half of an escalation sweep: with ``dry_run`` the ``entries`` are only
    reported (``would_escalate``); otherwise, in one write, ``land(row, entry, now)`` runs for
    each (a guarded write plus its event; False when the row moved on since it was read) and
    each entry lands in ``escalated`` or its row's ``task_id`` in ``skipped``."""
    if dry_run:
        report["would_escalate"] = entries
        return report
    if not rows:
        return report
    with db.write(conn):
        now = clock.now_iso()
        for row, entry in zip(rows, entries):
            if land(row, entry, now):
                report["escalated"].append(entry)
            else:
                report["skipped"].append(entry["task_id"])
    return report


def metrics(conn):
    """Recovery counters: queued tasks still inside a retry cooldown."""
    count = conn.execute(
        "SELECT count(*) FROM tasks WHERE status = 'queued' AND recover_after IS NOT NULL AND recover_after > ?",
        (clock.now_iso(),),
    ).fetchone()[0]
    return {"tasks_in_backoff": count}
