"""Progress on a lease: what its holder says it is doing, how far it is, and when that last moved.

A heartbeat proves the holder is alive; progress proves it is getting somewhere.  A lease
whose holder keeps heartbeating but whose progress state has not changed by its stall
deadline is **stalled**: live, yet stuck.

The record is the lease's heartbeat row (``heartbeats``), bound to the lease epoch it was
written under.  A new lease (a claim, a transfer: both bump the epoch) starts with no
progress, so a previous holder's state and deadline never count against the next one, and
nothing has to be cleared when a lease ends.

Design decisions
  * **The progress state is a free token**, tag-shaped (1-64 characters of ``a-z 0-9 : _
    . / -``: ``planning``, ``tests-running``, ``step:3/5``), not a fixed vocabulary: the
    only question asked of it is "did it change?".  A heartbeat changes progress only when
    it carries a state different from the stored one; the first heartbeat of a lease starts
    the record.  Re-sending the same state (a retry) extends the lease and moves nothing.
  * **The stall deadline is armed per lease** (``--stall-deadline MINUTES``) and is sticky:
    later heartbeats without the flag keep it.  The lease stalls at
    ``progress_changed_at + MINUTES`` (stored as ``stall_at``, package clock); a changed
    state restarts the clock.  Without a deadline a lease never stalls.
  * **Action, intent and evidence are sticky too**: omitted on a later heartbeat of the same
    lease, they keep their last value.  The evidence must be a receipt of the same task.
  * **Found by one indexed query** that starts from the held leases (the partial index
    ``idx_tasks_lease_owner`` holds only held leases, however many tasks the home has) and
    reads each one's heartbeat row by its key.
  * **Escalation is recorded once per stall**: :func:`escalate` stamps ``escalated_at`` and
    audits ``lease_stall_escalated``; from then on the stall is a decision for a person
    (``stalled_lease_escalated``) rather than a snag, until the state changes or the lease
    ends.
"""

from mindos.core import clock, validate
from mindos.errors import InvalidInput, NotFound
from mindos.store import ledger, sql

MAX_TEXT = 1000  # action / intent: one line each

# every held lease on an open task with a live lease whose progress record is this lease's
# and whose stall deadline has passed (params: now, now)
_STALLED_FROM = (
    " FROM tasks t JOIN heartbeats h ON h.task_id = t.id"
    f" WHERE t.lease_owner <> '' AND t.lease_expires_at > ? AND {sql.open_condition('t')}"
    " AND h.lease_epoch = t.lease_epoch AND h.stall_at IS NOT NULL AND h.stall_at <= ?")
STALLED_COUNT_SQL = "SELECT count(*), count(h.escalated_at)" + _STALLED_FROM
# "+t.id": ordering by the id index would walk every task instead of the held leases
STALLED_SQL = ("SELECT t.id AS task_id, t.lease_owner AS owner, t.lease_epoch, t.lease_expires_at, h.progress_state,"
               " h.progress_changed_at, h.stall_minutes, h.stall_at, h.escalated_at" + _STALLED_FROM + " ORDER BY +t.id")


def check_state(value):
    """A progress state: a tag-shaped token (see the module docstring)."""
    return validate.tag(value, "--progress-state")


def check_fields(*, action=None, intent=None, progress_state=None, stall_deadline=None, evidence=None):
    """Validate a heartbeat's progress flags (None = not given); return them cleaned.
    ``stall_deadline`` arrives checked (a lease window, :func:`mindos.work.leases.check_minutes`)."""
    if action is not None:
        action = validate.line(action, "--action", max_len=MAX_TEXT)
    if intent is not None:
        intent = validate.line(intent, "--intent", max_len=MAX_TEXT)
    if progress_state is not None:
        progress_state = check_state(progress_state)
    if evidence is not None:
        evidence = validate.identifier(evidence, "--evidence")
    return {"action": action, "intent": intent, "progress_state": progress_state, "stall_deadline": stall_deadline,
            "evidence": evidence}


def check_evidence(conn, task_id, receipt_id):
    """Raise unless ``receipt_id`` is a receipt of ``task_id`` (read in the caller's transaction)."""
    row = conn.execute("SELECT task_id FROM receipts WHERE id = ?", (receipt_id,)).fetchone()
    if row is None:
        raise NotFound(f"unknown receipt '{receipt_id}' (--evidence names a receipt of task '{task_id}')")
    if row[0] != task_id:
        raise InvalidInput(f"invalid --evidence: receipt '{receipt_id}' belongs to task '{row[0]}', not '{task_id}'")
    return receipt_id


def record(conn, task, owner, note, now, fields):
    """Write the heartbeat row of ``task`` (a task dict read in the caller's ``db.write``),
    carrying the lease's progress forward; return the progress view (:func:`view`) plus
    ``changed`` (whether this heartbeat moved the progress state)."""
    epoch = task["lease_epoch"]
    row = conn.execute("SELECT * FROM heartbeats WHERE task_id = ?", (task["id"],)).fetchone()
    same = row is not None and row["lease_epoch"] == epoch and row["progress_changed_at"] is not None
    last = dict(row) if same else {"progress_state": "", "progress_changed_at": None, "stall_minutes": None,
                                   "escalated_at": None, "action": "", "intent": "", "evidence": ""}
    state = fields["progress_state"] if fields["progress_state"] is not None else last["progress_state"]
    changed = not same or state != last["progress_state"]
    changed_at = now if changed else last["progress_changed_at"]
    minutes = fields["stall_deadline"] if fields["stall_deadline"] is not None else last["stall_minutes"]
    stall_at = clock.shift(changed_at, minutes * 60) if minutes else None
    escalated_at = None if changed else last["escalated_at"]
    kept = {key: fields[key] if fields[key] is not None else last[key] for key in ("action", "intent", "evidence")}
    conn.execute(
        "INSERT INTO heartbeats(task_id, owner, note, at, lease_epoch, action, intent, evidence, progress_state,"
        " progress_changed_at, stall_minutes, stall_at, escalated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(task_id) DO UPDATE SET owner = excluded.owner, note = excluded.note, at = excluded.at,"
        " lease_epoch = excluded.lease_epoch, action = excluded.action, intent = excluded.intent,"
        " evidence = excluded.evidence, progress_state = excluded.progress_state,"
        " progress_changed_at = excluded.progress_changed_at, stall_minutes = excluded.stall_minutes,"
        " stall_at = excluded.stall_at, escalated_at = excluded.escalated_at",
        (task["id"], owner, note, now, epoch, kept["action"], kept["intent"], kept["evidence"], state, changed_at,
         minutes, stall_at, escalated_at))
    progress = view({"lease_epoch": epoch, "progress_state": state, "progress_changed_at": changed_at,
                     "stall_minutes": minutes, "stall_at": stall_at, "escalated_at": escalated_at, **kept}, now)
    progress["changed"] = changed
    return progress


def view(row, now):
    """The progress of one lease as commands print it."""
    stalled = bool(row["stall_at"]) and row["stall_at"] <= now
    return {"state": row["progress_state"], "changed_at": row["progress_changed_at"],
            "stall_deadline_minutes": row["stall_minutes"], "stall_at": row["stall_at"], "stalled": stalled,
            "escalated_at": row["escalated_at"], "action": row["action"], "intent": row["intent"],
            "evidence": row["evidence"], "lease_epoch": row["lease_epoch"]}


# A held lease's progress record: the heartbeats row (alias h) of the task's (alias t) current
# epoch that reported progress.  Joined into the lease listing's own query (LEFT JOIN: a lease
# that never reported progress has none) and read by show.
CURRENT = "h.task_id = t.id AND h.lease_epoch = t.lease_epoch AND h.progress_changed_at IS NOT NULL"
COLUMNS = ("h.action, h.intent, h.evidence, h.progress_state, h.progress_changed_at, h.stall_minutes, h.stall_at,"
           " h.escalated_at")


def current(row, now):
    """The progress view of a row holding :data:`COLUMNS` and ``lease_epoch`` (None when the
    LEFT JOIN found no record)."""
    return None if row["progress_changed_at"] is None else view(row, now)


def show_section(conn, task_id):
    """``show``'s ``progress`` key: the current lease's progress (None when there is none)."""
    row = conn.execute(f"SELECT t.lease_epoch, {COLUMNS} FROM tasks t JOIN heartbeats h ON {CURRENT}"
                       " WHERE t.id = ? AND t.lease_owner <> ''", (task_id,)).fetchone()
    return {"progress": None if row is None else view(row, clock.now_iso())}


def stalled(conn, *, now=None, limit=None):
    """Stalled leases (live, open, progress unchanged past the stall deadline), by task id.

    Each entry: task_id, owner, lease_epoch, lease_expires_at, progress_state,
    progress_changed_at, stall_minutes, stall_at, escalated_at.
    """
    now = now or clock.now_iso()
    query = STALLED_SQL
    params = [now, now]
    if limit is not None:
        query += " LIMIT ?"
        params.append(limit)
    return [dict(row) for row in conn.execute(query, params)]


def stalled_counts(conn, now=None):
    """``(stalled, of which escalated)`` counted in SQL."""
    now = now or clock.now_iso()
    row = conn.execute(STALLED_COUNT_SQL, (now, now)).fetchone()
    return row[0], row[1]


def escalate(conn, *, dry_run=False):
    """Escalate every stalled lease not yet escalated for its current stall.

    Returns ``{"dry_run", "escalated", "would_escalate", "already_escalated", "skipped"}``;
    entries are ``{"task_id", "owner", "lease_epoch", "progress_state",
    "progress_changed_at", "stall_at"}``.  Each escalation stamps ``escalated_at`` on the
    lease's progress record (guarded: it lands only while the record is as read) and audits
    ``lease_stall_escalated``.  Re-running it escalates nothing twice.
    """
    now = clock.now_iso()
    report = {"dry_run": bool(dry_run), "escalated": [], "would_escalate": [], "already_escalated": [],
              "skipped": []}
    candidates = []
    for row in stalled(conn, now=now):
        if row["escalated_at"]:
            report["already_escalated"].append(row["task_id"])
        else:
            candidates.append(row)
    entries = [{key: row[key] for key in ("task_id", "owner", "lease_epoch", "progress_state", "progress_changed_at",
                                          "stall_at")} for row in candidates]
    from mindos.work import sweeps  # lazy: only escalation applies through the sweep's loop

    def land(row, entry, now):
        # guarded: lands only while the progress record is exactly as read and still unescalated
        if not sql.compare_and_set(
                conn, "heartbeats", ["escalated_at = ?"], (now,),
                {"task_id": row["task_id"], "lease_epoch": row["lease_epoch"],
                 "progress_changed_at": row["progress_changed_at"], "stall_at": row["stall_at"]},
                extra="escalated_at IS NULL"):
            return False
        ledger.append_event(conn, "task", row["task_id"], "lease_stall_escalated", {
            **{key: value for key, value in entry.items() if key != "task_id"},
            "stall_deadline_minutes": row["stall_minutes"], "reason": "stalled"})
        return True

    return sweeps.escalate_each(conn, report, candidates, entries, land, dry_run=dry_run)


def metrics(conn):
    """Progress counters: stalled leases, and how many of them were escalated."""
    count, escalated = stalled_counts(conn)
    return {"stalled_leases": count, "stalled_leases_escalated": escalated}
