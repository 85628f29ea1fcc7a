"""Leases: who may work on a task right now, fenced by a monotonic epoch.

The lease lives on the task row (``lease_owner``, ``lease_expires_at``, ``lease_epoch``), so
every lease change is ONE guarded UPDATE whose WHERE clause repeats the lease exactly as it
was checked.  Inside ``db.write`` (BEGIN IMMEDIATE) nobody can interleave, but callers such
as dispatch read candidates before they write, so the guard is what turns a stale read into
a ``lease changed since check`` refusal instead of clobbering another agent's claim.

The per-owner caps are part of that same statement: the acquiring UPDATE (and the
transferring one) counts the receiving owner's live leases in a subquery of its WHERE
clause, so the cap holds even for a caller whose pre-check ran on a stale count.  The
pre-checks exist to produce the specific refusal; the statement is what enforces it.

Fencing: every acquisition (and every transfer) bumps ``lease_epoch``.  A holder passes the
epoch it was issued back on each mutation; a process whose lease expired, was recovered and
was re-acquired by the same owner name is then rejected as superseded, although its owner
name still matches (the ABA case).  Passing no epoch keeps the unfenced legacy behaviour.

Interface used by dispatch (``next --claim``), stable:
  * :func:`acquire` -- take the lease on a task dict already read in the transaction.
  * :func:`seam_conflicts` -- live leases on the same worktree / project branch.
  * :func:`max_active_cap` -- the per-owner cap in force (flag, else env).
  * :func:`live_lease_count` (and :func:`mindos.work.rows.lease_is_live`).
"""

import os
from datetime import timedelta

from mindos.core import clock, validate
from mindos.store import db, ledger, sql
from mindos.errors import Conflict, InvalidInput, Refused
from mindos.work import rows

DEFAULT_MINUTES = 30
HEARTBEAT_MINUTES = 15
MAX_MINUTES = 43200  # 30 days: a lease is a claim on attention, not a deed
MAX_ACTIVE_ENV = "AUTOPILOT_MAX_ACTIVE_PER_OWNER"
_TERMINAL_SQL = sql.TERMINAL_SQL
# live leases of one owner (params: owner, now); the cap subqueries of the guarded UPDATEs use it too
# (``lease_owner <> ''`` lets it read the held-lease partial index instead of every task)
_LIVE_COUNT_SQL = ("SELECT count(*) FROM tasks WHERE lease_owner = ? AND lease_owner <> '' AND lease_expires_at > ?"
                   f" AND status NOT IN {_TERMINAL_SQL}")


# ---------------------------------------------------------------------------------------
# Small shared helpers


def expiry(minutes, now=None):
    """Storage text for ``now`` plus ``minutes`` minutes."""
    base = clock.parse(now) if now else clock.now()
    return clock.format_ts(base + timedelta(minutes=minutes))


def check_minutes(minutes, flag="--minutes"):
    """Validate a lease window in minutes (1 .. 30 days)."""
    return validate.positive_int(minutes, flag, minimum=1, maximum=MAX_MINUTES)


def check_epoch(epoch):
    """Validate an optional ``--epoch`` (None means unfenced)."""
    if epoch is None:
        return None
    return validate.positive_int(epoch, "--epoch", minimum=0, maximum=2**62)


def max_active_cap(max_active=None):
    """The per-owner live-lease cap in force: ``max_active`` if given, else the env default.

    Returns None for "unlimited".  0 means unlimited too (flag or env).  A malformed env value
    is refused rather than silently ignored.
    """
    if max_active is None:
        raw = os.environ.get(MAX_ACTIVE_ENV, "").strip()
        if not raw:
            return None
        if not (raw.isascii() and raw.isdigit()):
            raise InvalidInput(f"invalid {MAX_ACTIVE_ENV}: expected a non-negative integer, got {raw!r:.40}")
        max_active = int(raw)
        flag = MAX_ACTIVE_ENV
    else:
        flag = "--max-active"
    validate.positive_int(max_active, flag, minimum=0, maximum=10**6)
    return max_active or None


def live_lease_count(conn, owner, now=None, project=None):
    """How many live leases ``owner`` holds (optionally within one project)."""
    return _count_live(conn, owner, now or clock.now_iso(), project)


def _count_live(conn, owner, now, project=None):
    # the recount after a guarded UPDATE refused: deliberately not the public pre-check hook
    sql, params = _LIVE_COUNT_SQL, [owner, now]
    if project is not None:
        sql += " AND project = ?"
        params.append(project)
    return conn.execute(sql, params).fetchone()[0]


def _capacity(owner, held, cap):
    return Refused(f"owner '{owner}' at lease capacity ({held}/{cap})")


def _read(conn, task_id):
    return rows.get(conn, validate.identifier(task_id, "task id"))


def _clip(value, width=200):
    value = " ".join(str(value).split())
    return value if len(value) <= width else value[: width - 3] + "..."


# ---------------------------------------------------------------------------------------
# Seams


def seam_conflicts(conn, task, owner=None, now=None):
    """Other live leases that share this task's seam.

    A seam is an identical non-empty worktree path (any project), or the same non-empty
    branch within the same project.  Returns ``[{"task_id", "kind": "worktree"|"branch",
    "value", "owner"}]`` ordered by task id.  ``owner`` (the claimant) does not filter: a
    seam held by the claimant on another task still conflicts (the spec's ``--force``
    example "holder is you"); such entries carry ``"self": true``.
    """
    worktree, branch = task.get("worktree") or "", task.get("branch") or ""
    if not worktree and not branch:
        return []
    now = now or clock.now_iso()
    rows = conn.execute(
        "SELECT id, lease_owner, worktree, branch, project FROM tasks"
        " WHERE lease_owner <> '' AND lease_expires_at > ? AND id <> ?"
        f" AND status NOT IN {_TERMINAL_SQL}"
        " AND ((? <> '' AND worktree = ?) OR (? <> '' AND branch = ? AND project = ?))"
        " ORDER BY id",
        (now, task["id"], worktree, worktree, branch, branch, task["project"]),
    ).fetchall()
    conflicts = []
    for row in rows:
        kinds = []
        if worktree and row["worktree"] == worktree:
            kinds.append(("worktree", worktree))
        if branch and row["branch"] == branch and row["project"] == task["project"]:
            kinds.append(("branch", branch))
        for kind, value in kinds:
            entry = {"task_id": row["id"], "kind": kind, "value": value, "owner": row["lease_owner"]}
            if owner is not None and row["lease_owner"] == owner:
                entry["self"] = True
            conflicts.append(entry)
    return conflicts


def seam_message(conflicts):
    """The one-line refusal naming every conflicting holder."""
    held = ", ".join(
        f"{c['task_id']} holds {c['kind']} '{_clip(c['value'])}' (owner {c['owner']})" for c in conflicts
    )
    return f"seam conflict: {held}; complete/release the holder first or pass --force"


# ---------------------------------------------------------------------------------------
# Acquisition


def claim_guard(conn, task, owner, now):
    """Raise Refused when ``task`` cannot be leased by ``owner`` at all (no override exists).

    Checks, in order: terminal, blocked (with its reason), unsatisfied dependencies, a live
    lease (another owner's, or the caller's own -- use renew).  Shared with resume.
    """
    task_id = task["id"]
    if task["status"] in validate.TERMINAL_STATUSES:
        raise Refused(f"task '{task_id}' is {task['status']} (terminal); it cannot be claimed")
    if task["status"] == "blocked":
        reason = _clip(task.get("blocked_reason") or "no reason recorded")
        raise Refused(f"task '{task_id}' is blocked: {reason}; unblock it first")
    waiting = rows.blockers(conn, task_id)
    if waiting:
        named = ", ".join(f"{b['id']} ({b['status']})" for b in waiting[:20])
        more = f" and {len(waiting) - 20} more" if len(waiting) > 20 else ""
        raise Refused(f"task '{task_id}' has unsatisfied dependencies: {named}{more}")
    if rows.lease_is_live(task, now):
        if task["lease_owner"] == owner:
            raise Refused(
                f"owner '{owner}' already holds the lease on task '{task_id}' (epoch {task['lease_epoch']},"
                f" expires {task['lease_expires_at']}); use renew to extend it"
            )
        raise Refused(
            f"task '{task_id}' is leased by '{task['lease_owner']}' until {task['lease_expires_at']};"
            " ask the holder to release or transfer it"
        )


def acquire(conn, task, owner, *, minutes, max_active=None, force=False, now=None, payload=None,
            policy_lookup=None):
    """Take the lease on ``task`` for ``owner``; return the updated task dict.

    ``task`` is the task dict already read inside the caller's ``db.write`` transaction.
    Refusals (each a Refused, in this order): terminal; blocked with its reason; unsatisfied
    dependencies; a live lease (another owner's, or the caller's own: use renew); seam
    conflict (unless ``force``; audited ``claim_refused_seam``); project policy gates (unless
    ``force``; audited ``claim_refused_policy``; a forced override is recorded as
    ``policy_overrides`` in the ``claimed`` event); per-owner cap (``max_active`` or env
    AUTOPILOT_MAX_ACTIVE_PER_OWNER): ``owner '<name>' at lease capacity (n/max)``.

    The write is one guarded UPDATE: it lands only while the lease is exactly as read and the
    cap still holds (counted inside the statement, whatever the pre-check saw), else
    ``lease changed since check`` (Conflict) or the capacity refusal.
    It bumps lease_epoch, sets status ``claimed`` and ``lease_expires_at = now + minutes``,
    clears recover_after (the cooldown), and audits ``claimed`` with owner, lease_epoch,
    lease_expires_at and previous_status; ``payload`` adds keys to that event (e.g. dispatch
    context); ``policy_lookup`` (a :class:`mindos.work.policies.Lookup`) is the caller's
    per-call policy reader.  The returned dict also carries ``policy_overrides`` / ``seam_overrides`` when
    ``force`` overrode something.
    """
    from mindos.work import policies  # lazy: loaded only on the path that needs it

    if not conn.in_transaction:
        raise RuntimeError("leases.acquire must run inside db.write")
    owner = validate.agent(owner)
    minutes = check_minutes(minutes)
    cap = max_active_cap(max_active)
    now = now or clock.now_iso()
    task_id = task["id"]
    claim_guard(conn, task, owner, now)

    event = {"owner": owner, "previous_status": task["status"], "minutes": minutes}
    conflicts = seam_conflicts(conn, task, owner, now)
    if conflicts and not force:
        ledger.append_refusal(conn, "task", task_id, "claim_refused_seam", {"owner": owner, "conflicts": conflicts})
        raise Refused(seam_message(conflicts))
    if conflicts:
        event["seam_overrides"] = conflicts
    gate = policies.dispatch_gate(conn, task, owner, policy_lookup)
    if gate and not force:
        ledger.append_refusal(conn, "task", task_id, "claim_refused_policy", {"owner": owner, **gate})
        raise Refused(policies.gate_message(task, owner, gate))
    if gate:
        event["policy_overrides"] = [gate]
    if cap is not None:
        held = live_lease_count(conn, owner, now)
        if held >= cap:
            raise _capacity(owner, held, cap)
        event["max_active"] = cap
    if task.get("recover_after") and task["recover_after"] > now:
        event["cooldown_overridden"] = task["recover_after"]
    if task.get("not_before") and task["not_before"] > now:
        event["deferral_overridden"] = task["not_before"]
    if task.get("lease_owner"):  # an expired lease left behind: fenced off by the new epoch
        event["expired_lease_taken_over"] = {"owner": task["lease_owner"], "lease_epoch": task["lease_epoch"]}

    expires = expiry(minutes, now)
    # guarded: lands only if the lease is still exactly as checked and the cap still holds
    landed = sql.compare_and_set(
        conn, "tasks",
        ["status = 'claimed'", "lease_owner = ?", "lease_expires_at = ?", "lease_epoch = lease_epoch + 1",
         "recover_after = NULL", "updated_at = ?"], (owner, expires, now),
        {"id": task_id, "status": task["status"], "lease_owner": task["lease_owner"],
         "lease_expires_at": task["lease_expires_at"], "lease_epoch": task["lease_epoch"]},
        extra=f"? IS NULL OR ({_LIVE_COUNT_SQL}) < ?", extra_params=(cap, owner, now, cap))
    if not landed:
        if cap is not None:
            held = _count_live(conn, owner, now)
            if held >= cap:
                raise _capacity(owner, held, cap)
        raise Conflict(f"lease changed since check: task '{task_id}' was modified by another writer; re-read and retry")
    claimed = rows.get(conn, task_id)
    event.update(payload or {})
    event.update({"lease_epoch": claimed["lease_epoch"], "lease_expires_at": expires})
    ledger.append_event(conn, "task", task_id, "claimed", event)
    for key in ("policy_overrides", "seam_overrides"):
        if key in event:
            claimed[key] = event[key]
    return claimed


def claim(conn, task_id, owner, *, minutes=DEFAULT_MINUTES, epoch=None, max_active=None, force=False):
    """Claim ``task_id`` for ``owner`` (see :func:`acquire`); return the claimed task.

    ``epoch`` makes the claim a compare-and-swap on the epoch the caller last saw: if the
    task's lease_epoch moved on, the claim is refused as superseded.
    """
    owner = validate.agent(owner)
    minutes = check_minutes(minutes)
    epoch = check_epoch(epoch)
    max_active_cap(max_active)  # validate before taking the write lock
    # lazy: acquire needs it; loaded before the write lock so it guards SQL, not imports
    from mindos.work import policies  # noqa: F401
    with db.write(conn):
        task = _read(conn, task_id)
        if epoch is not None and epoch != task["lease_epoch"]:
            raise Refused(_superseded(epoch, task["lease_epoch"], "re-read the task before claiming"), code="lease_superseded")
        return acquire(conn, task, owner, minutes=minutes, max_active=max_active, force=force)


# ---------------------------------------------------------------------------------------
# Holder-only mutations


def _superseded(held, current, advice="reclaim the task with claim to get a fresh epoch"):
    return f"lease superseded (held epoch {held}, current {current}); {advice}"


def check_holder(task, owner, epoch, now, verb):
    """Raise Refused unless ``owner`` holds a live lease on ``task`` (at ``epoch`` if given).

    Order: terminal, unleased, stale epoch, foreign holder, expired lease.
    """
    task_id = task["id"]
    if task["status"] in validate.TERMINAL_STATUSES:
        raise Refused(f"task '{task_id}' is {task['status']} (terminal); cannot {verb}")
    if not task["lease_owner"]:
        raise Refused(f"task '{task_id}' is not leased; claim it before you {verb}")
    if epoch is not None and epoch != task["lease_epoch"]:
        raise Refused(_superseded(epoch, task["lease_epoch"]), code="lease_superseded")
    if task["lease_owner"] != owner:
        state = "" if rows.lease_is_live(task, now) else f" (expired {task['lease_expires_at']})"
        raise Refused(f"task '{task_id}' is leased by '{task['lease_owner']}'{state}, not '{owner}'; cannot {verb}")
    if not rows.lease_is_live(task, now):
        raise Refused(
            f"lease on task '{task_id}' expired at {task['lease_expires_at']}; reclaim it with claim before you {verb}"
        )


def guarded_update(conn, task, sets, params, now, *, guard="", guard_params=()):
    """Apply ``sets`` to ``task`` only while its lease is exactly as checked and still live.

    Owner, expiry and epoch must each still match (a steal that moves any one of them is
    caught); ``guard`` is an extra SQL condition (with ``guard_params``) that must also hold.
    Raises Conflict ``lease changed since check`` when the row moved on or ``guard`` failed.
    """
    match = {"id": task["id"], "lease_owner": task["lease_owner"], "lease_expires_at": task["lease_expires_at"],
             "lease_epoch": task["lease_epoch"]}
    extra = "lease_expires_at > ?" + (f" AND ({guard})" if guard else "")
    if not sql.compare_and_set(conn, "tasks", sets, params, match, extra=extra, extra_params=(now, *guard_params)):
        raise Conflict(f"lease changed since check: task '{task['id']}' was modified by another writer; re-read and retry")


def holder_task(conn, task_id, owner, epoch, verb, now):
    """Read ``task_id`` inside the open transaction and check ``owner`` holds it; return it."""
    task = _read(conn, task_id)
    check_holder(task, owner, epoch, now, verb)
    return task


def heartbeat(conn, task_id, owner, *, note="", epoch=None, minutes=HEARTBEAT_MINUTES, action=None, intent=None,
              progress_state=None, stall_deadline=None, evidence=None):
    """Record liveness and progress: status ``running``, lease extended to ``minutes`` (default
    15) from now -- never shortened: a longer live lease (a 2-hour claim) keeps its expiry;
    return the task with ``heartbeat`` and ``progress``.

    ``action``/``intent`` (one line each), ``progress_state`` (a tag-shaped token),
    ``stall_deadline`` (minutes) and ``evidence`` (a receipt id of this task) update the
    lease's progress record (:mod:`mindos.work.progress`; None keeps the last value).  Free
    text passes the secret guard.  Upserts the heartbeats row and audits ``heartbeat`` with
    the fields given and the progress it leaves.
    """
    from mindos.work import progress  # lazy: only heartbeats read the progress rules

    minutes = check_minutes(minutes)
    owner = validate.agent(owner)
    note = validate.text(note or "", "--note", max_len=4096)
    epoch = check_epoch(epoch)
    if stall_deadline is not None:
        stall_deadline = check_minutes(stall_deadline, "--stall-deadline")
    fields = progress.check_fields(action=action, intent=intent, progress_state=progress_state,
                                   stall_deadline=stall_deadline, evidence=evidence)
    now = clock.now_iso()
    with db.write(conn):
        from mindos.store import guard  # lazy: only writes that store text load the detector
        guard.check(conn, "task", task_id, {"note": note, "action": fields["action"] or "",
                                            "intent": fields["intent"] or ""})
        task = holder_task(conn, task_id, owner, epoch, "heartbeat", now)
        if fields["evidence"] is not None:
            progress.check_evidence(conn, task["id"], fields["evidence"])
        expires = expiry(minutes, now)
        if task["lease_expires_at"] and task["lease_expires_at"] > expires:
            expires = task["lease_expires_at"]  # a heartbeat proves liveness; it never shortens a lease
        guarded_update(conn, task, ["status = 'running'", "lease_expires_at = ?", "updated_at = ?"],
                       [expires, now], now)
        made = progress.record(conn, task, owner, note, now, fields)
        payload = {"owner": owner, "lease_epoch": task["lease_epoch"], "lease_expires_at": expires,
                   "previous_status": task["status"]}
        if note:
            payload["note"] = note
        for key in ("action", "intent", "evidence"):
            if fields[key]:
                payload[key] = fields[key]
        if made["state"] or made["stall_at"]:
            payload.update(progress_state=made["state"], progress_changed=made["changed"],
                           progress_changed_at=made["changed_at"])
        if made["stall_at"]:
            payload.update(stall_deadline_minutes=made["stall_deadline_minutes"], stall_at=made["stall_at"],
                           stalled=made["stalled"])
        ledger.append_event(conn, "task", task["id"], "heartbeat", payload)
        result = rows.get(conn, task["id"])
    result["heartbeat"] = {"owner": owner, "note": note, "at": now, "action": made["action"],
                           "intent": made["intent"], "evidence": made["evidence"]}
    result["progress"] = {key: made[key] for key in ("state", "changed", "changed_at", "stall_deadline_minutes",
                                                     "stall_at", "stalled", "escalated_at")}
    return result


def renew(conn, task_id, owner, *, minutes=DEFAULT_MINUTES, epoch=None):
    """Extend a live lease to now + ``minutes``, keeping status and epoch; return the task."""
    owner = validate.agent(owner)
    minutes = check_minutes(minutes)
    epoch = check_epoch(epoch)
    now = clock.now_iso()
    with db.write(conn):
        task = holder_task(conn, task_id, owner, epoch, "renew", now)
        expires = expiry(minutes, now)
        guarded_update(conn, task, ["lease_expires_at = ?", "updated_at = ?"], [expires, now], now)
        ledger.append_event(conn, "task", task["id"], "lease_renewed", {
            "owner": owner, "lease_epoch": task["lease_epoch"], "minutes": minutes,
            "previous_expires_at": task["lease_expires_at"], "lease_expires_at": expires,
        })
        return rows.get(conn, task["id"])


def release(conn, task_id, owner, *, epoch=None):
    """Hand a live lease back: status ``queued``, lease cleared, no retry budget consumed.

    Audited ``lease_released``; returns the task.
    """
    owner = validate.agent(owner)
    epoch = check_epoch(epoch)
    now = clock.now_iso()
    with db.write(conn):
        task = holder_task(conn, task_id, owner, epoch, "release", now)
        guarded_update(conn, task, ["status = 'queued'", "lease_owner = ''", "lease_expires_at = NULL",
                                    "updated_at = ?"], [now], now)
        ledger.append_event(conn, "task", task["id"], "lease_released", {
            "owner": owner, "lease_epoch": task["lease_epoch"], "previous_status": task["status"],
        })
        return rows.get(conn, task["id"])


def transfer(conn, task_id, from_owner, to_owner, *, minutes=None, epoch=None, max_active=None, force=False):
    """Reassign a live lease from its holder to another agent; return the task.

    Status is preserved, the epoch bumps (the old holder's token dies at once), the window
    becomes now + ``minutes`` or keeps its current expiry.  Audited ``lease_transferred``
    with both owners and both epochs.  Same-owner, foreign, expired, unleased and terminal
    transfers are refused.

    A transfer is an acquisition by the receiving owner, so the caps that "stop one agent
    from hogging dispatch" apply to ``to_owner`` exactly as a claim would apply them:
      * the per-owner cap (``max_active``, else env AUTOPILOT_MAX_ACTIVE_PER_OWNER; 0 =
        unlimited): ``owner '<name>' at lease capacity (n/max)``, not audited, and -- as for
        claim -- not overridden by ``force`` (pass ``max_active=0`` deliberately instead);
      * the project's ``max_wip_per_owner``: refused with the held ids and audited
        ``claim_refused_policy`` (``via: transfer``) like a claim's policy refusal; ``force``
        overrides it and the override is recorded as ``policy_overrides`` in the
        ``lease_transferred`` event (and the returned task).
    Both caps are also counted inside the guarded UPDATE itself.  ``dispatch_requires_tag``
    is not re-checked: it decides whether a task may be dispatched at all, and this one is
    already out (claimed past the gate, or forced with provenance); moving it dispatches
    nothing new.  A malformed policy file refuses the transfer even with ``force``.
    """
    from mindos.work import policies  # lazy: loaded only on the path that needs it

    from_owner = validate.agent(from_owner, "--from-owner")
    to_owner = validate.agent(to_owner, "--to-owner")
    if minutes is not None:
        minutes = check_minutes(minutes)
    epoch = check_epoch(epoch)
    cap = max_active_cap(max_active)
    if from_owner == to_owner:
        raise Refused(f"cannot transfer a lease to its current holder '{from_owner}'; use renew to extend it")
    now = clock.now_iso()
    with db.write(conn):
        task = holder_task(conn, task_id, from_owner, epoch, "transfer", now)
        event = {"from_owner": from_owner, "to_owner": to_owner, "from_epoch": task["lease_epoch"]}
        wip = policies.wip_cap(conn, task["project"])  # a malformed policy fails closed, force or not
        gate = policies.wip_gate(conn, task, to_owner) if wip else None
        if gate and not force:
            _refuse_wip(conn, task, from_owner, to_owner, gate)
        if gate:
            event["policy_overrides"] = [gate]
        if force:
            wip = None
        if cap is not None:
            held = live_lease_count(conn, to_owner, now)
            if held >= cap:
                raise _capacity(to_owner, held, cap)
            event["max_active"] = cap
        expires = expiry(minutes, now) if minutes is not None else task["lease_expires_at"]
        # guarded: the receiver's caps are recounted in the statement that moves the lease
        guard = (f"(? IS NULL OR ({_LIVE_COUNT_SQL}) < ?)"
                 f" AND (? IS NULL OR ({_LIVE_COUNT_SQL} AND project = ? AND id <> ?) < ?)")
        try:
            guarded_update(conn, task, ["lease_owner = ?", "lease_expires_at = ?", "lease_epoch = lease_epoch + 1",
                                        "updated_at = ?"], [to_owner, expires, now], now, guard=guard,
                           guard_params=(cap, to_owner, now, cap, wip, to_owner, now, task["project"], task["id"],
                                         wip))
        except Conflict:
            _diagnose_transfer(conn, task, from_owner, to_owner, cap, wip, now)
            raise
        moved = rows.get(conn, task["id"])
        event.update({"to_epoch": moved["lease_epoch"], "lease_expires_at": expires, "status": task["status"]})
        ledger.append_event(conn, "task", task["id"], "lease_transferred", event)
    moved["from_owner"] = from_owner
    moved["from_epoch"] = task["lease_epoch"]
    if "policy_overrides" in event:
        moved["policy_overrides"] = event["policy_overrides"]
    return moved


def _refuse_wip(conn, task, from_owner, to_owner, gate):
    from mindos.work import policies  # lazy: loaded only on the path that needs it

    ledger.append_refusal(conn, "task", task["id"], "claim_refused_policy", {
        "owner": to_owner, **gate, "via": "transfer", "from_owner": from_owner, "lease_epoch": task["lease_epoch"]})
    raise Refused(policies.gate_message(task, to_owner, gate, verb="transfer"))


def _diagnose_transfer(conn, task, from_owner, to_owner, cap, wip, now):
    """After the guarded transfer UPDATE refused: raise the cap refusal that explains it, if any."""
    from mindos.work import policies  # lazy: loaded only on the path that needs it

    if cap is not None:
        held = _count_live(conn, to_owner, now)
        if held >= cap:
            raise _capacity(to_owner, held, cap)
    if wip is not None:
        held = policies.wip_held(conn, task["project"], to_owner, exclude=task["id"])
        if len(held) >= wip:
            _refuse_wip(conn, task, from_owner, to_owner,
                        {"reason": "policy_wip_cap", "held": held, "max_wip_per_owner": wip})


# ---------------------------------------------------------------------------------------
# Fleet view and metrics


def list_leases(conn, *, include_expired=False, owner=None, stalled=False):
    """Held leases, soonest expiry first.

    Each entry: task_id, project, title, status, priority, owner, lease_expires_at,
    lease_epoch, live, seconds_remaining (0 once expired), progress (the lease's progress
    record, None when it never reported any) and stalled (live, and its progress state
    unchanged past its stall deadline).  Expired-but-held leases (what recover will sweep)
    appear only with ``include_expired``; ``stalled`` keeps only the stalled ones.
    """
    from mindos.work import progress  # lazy: only the listing reads the progress records

    now = clock.now_iso()
    # each lease's progress record comes with it (one statement, LEFT JOIN: none is None)
    sql = ("SELECT t.id, t.project, t.title, t.status, t.priority, t.lease_owner, t.lease_expires_at, t.lease_epoch,"
           f" {progress.COLUMNS} FROM tasks t LEFT JOIN heartbeats h ON {progress.CURRENT}"
           f" WHERE t.lease_owner <> '' AND t.status NOT IN {_TERMINAL_SQL}")
    params = []
    if owner is not None:
        sql += " AND t.lease_owner = ?"
        params.append(validate.agent(owner))
    if not include_expired:
        sql += " AND t.lease_expires_at > ?"
        params.append(now)
    sql += " ORDER BY t.lease_expires_at, t.id"
    entries = []
    for row in conn.execute(sql, params):
        expires = row["lease_expires_at"]
        live = bool(expires) and expires > now
        entries.append({
            "task_id": row["id"], "project": row["project"], "title": row["title"], "status": row["status"],
            "priority": row["priority"], "owner": row["lease_owner"], "lease_expires_at": expires,
            "lease_epoch": row["lease_epoch"], "live": live,
            "seconds_remaining": clock.seconds_between(now, expires) if live else 0,
            "progress": progress.current(row, now),
        })
        entries[-1]["stalled"] = bool(live and entries[-1]["progress"] and entries[-1]["progress"]["stalled"])
    return [entry for entry in entries if entry["stalled"]] if stalled else entries


def metrics(conn):
    """Lease counters: live leases per owner and expired-but-held (stale) leases."""
    now = clock.now_iso()
    rows = conn.execute(
        "SELECT lease_owner, count(*) FROM tasks WHERE lease_owner <> '' AND lease_expires_at > ?"
        f" AND status NOT IN {_TERMINAL_SQL} GROUP BY lease_owner ORDER BY lease_owner",
        (now,),
    )
    stale = conn.execute(
        "SELECT count(*) FROM tasks WHERE lease_owner <> '' AND (lease_expires_at IS NULL OR lease_expires_at <= ?)"
        f" AND status NOT IN {_TERMINAL_SQL}",
        (now,),
    ).fetchone()[0]
    return {"active_leases_by_owner": {row[0]: row[1] for row in rows}, "stale_leases": stale}
