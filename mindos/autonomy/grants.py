"""Continuation grants: explicit, model-bound, time-limited permission to continue a task.

A grant names one exact model/provider string (``opencode/x-preview-f-free``), an autonomy
level, who granted it and for how many hours.  Nothing is inferred: a grant for one model
never authorizes another (the comparison is exact, case included), and a grant past its
``expires_at`` authorizes nothing -- the clock (:mod:`mindos.core.clock`) decides, so tests
and cron see the same rule.  A task has at most one live grant; declaring again supersedes
the previous one (kept as history), and every declaration is audited ``grant_declared``.

Levels are ordered, L0 < L1 < L2 < L3, and each includes the ones below it: a check at
``--level L2`` passes for an L2 or L3 grant and fails for L0/L1 (``level_too_low``).  The
levels carry no hidden behaviour: what a level permits is what the caller checks for.

:func:`authorize` is the check an agent adapter (or ``grant-check``) makes before
continuing; a refusal is audited ``grant_refused`` with the reason.
"""

from mindos.core import clock, validate
from mindos.errors import InvalidInput, Refused
from mindos.store import db, ledger
from mindos.work import rows

LEVELS = ("L0", "L1", "L2", "L3")
MAX_GRANT_HOURS = 24 * 30
MAX_MODEL = 128
_MODEL_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:/@+-")

_COLUMNS = "id, task_id, model, autonomy_level, granted_by, granted_at, expires_at, superseded_by, superseded_at"


def model(value, flag="--model"):
    """A model/provider binding: 1-128 characters of [A-Za-z0-9._:/@+-], starting alphanumeric, and
    not credential-shaped (it is stored in the grant and every event that checks it)."""
    if (not isinstance(value, str) or not 0 < len(value) <= MAX_MODEL or not value[0].isalnum()
            or not value.isascii() or set(value) - _MODEL_CHARS):
        raise InvalidInput(f"invalid {flag}: {validate.shown(value)}"
                           " (use 1-128 characters of A-Z a-z 0-9 . _ : / @ + -, starting with a letter or digit)")
    return validate.not_secret(value, flag)


def level(value, flag="--autonomy-level"):
    """An autonomy level, L0..L3."""
    if value not in LEVELS:
        raise InvalidInput(f"invalid {flag}: {validate.shown(value)} (use one of {', '.join(LEVELS)})")
    return value


def _record(row, now):
    grant = dict(row)
    grant["active"] = grant["superseded_by"] is None and grant["expires_at"] > now
    grant["expired"] = grant["expires_at"] <= now
    return grant


def declare(conn, task_id, *, model_name, autonomy_level, granted_by, grant_hours):
    """Record a live grant on an open task (superseding any previous one); return it.

    Audited ``grant_declared`` with model, level, granter, hours and expiry (plus the
    superseded grant id when there was one).  Terminal tasks are refused.
    """
    task_id = validate.identifier(task_id, "task id")
    model_name = model(model_name)
    autonomy_level = level(autonomy_level)
    granted_by = validate.agent(granted_by, "--granted-by")
    grant_hours = validate.positive_int(grant_hours, "--grant-hours", minimum=1, maximum=MAX_GRANT_HOURS)
    with db.write(conn):
        task = rows.require_task(conn, task_id, "status")
        if task["status"] in validate.TERMINAL_STATUSES:
            raise Refused(f"task '{task_id}' is {task['status']}: a finished task takes no continuation grant")
        now = clock.now_iso()
        expires_at = clock.shift(now, grant_hours * 3600)
        previous = conn.execute("SELECT id FROM grants WHERE task_id = ? AND superseded_by IS NULL",
                                (task_id,)).fetchone()
        if previous is not None:  # leave the one-live index first; linked to the new row below
            conn.execute("UPDATE grants SET superseded_by = 0, superseded_at = ? WHERE id = ?", (now, previous[0]))
        cursor = conn.execute(
            "INSERT INTO grants(task_id, model, autonomy_level, granted_by, granted_at, expires_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (task_id, model_name, autonomy_level, granted_by, now, expires_at),
        )
        if previous is not None:
            conn.execute("UPDATE grants SET superseded_by = ? WHERE id = ?", (cursor.lastrowid, previous[0]))
        grant_id = cursor.lastrowid
        payload = {"grant_id": grant_id, "model": model_name, "autonomy_level": autonomy_level,
                   "granted_by": granted_by, "grant_hours": grant_hours, "expires_at": expires_at}
        if previous is not None:
            payload["supersedes"] = previous[0]
        ledger.append_event(conn, "task", task_id, "grant_declared", payload)
        row = conn.execute(f"SELECT {_COLUMNS} FROM grants WHERE id = ?", (grant_id,)).fetchone()
    return _record(row, clock.now_iso())


def current(conn, task_id):
    """The task's live grant with ``active``/``expired`` flags, or None (reads only)."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM grants WHERE task_id = ? AND superseded_by IS NULL",
                       (task_id,)).fetchone()
    return None if row is None else _record(row, clock.now_iso())


def history(conn, task_id):
    """Every grant ever declared on the task, oldest first."""
    now = clock.now_iso()
    return [_record(row, now) for row in conn.execute(
        f"SELECT {_COLUMNS} FROM grants WHERE task_id = ? ORDER BY id", (task_id,))]


def show_section(conn, task_id):
    """What ``show`` adds for a task: ``{"grant": live grant or None}``."""
    return {"grant": current(conn, task_id)}


def recall_section(conn, task_id):
    """What a recall bundle adds, unsealed: ``{"grant": live grant or None}``."""
    return {"grant": current(conn, task_id)}


def check(conn, task_id, model_name, minimum_level="L0"):
    """Whether ``model_name`` may continue ``task_id`` at ``minimum_level`` now; reads only.

    Returns ``{"task_id", "model", "authorized", "reason", "grant"}``; reasons are
    ``granted``, ``no_grant``, ``grant_expired``, ``wrong_model`` and ``level_too_low``.
    """
    task_id = validate.identifier(task_id, "task id")
    model_name = model(model_name)
    minimum_level = level(minimum_level, "--level")
    rows.require_task(conn, task_id)
    grant = current(conn, task_id)
    if grant is None:
        reason = "no_grant"
    elif grant["expired"]:
        reason = "grant_expired"
    elif grant["model"] != model_name:
        reason = "wrong_model"
    elif LEVELS.index(grant["autonomy_level"]) < LEVELS.index(minimum_level):
        reason = "level_too_low"
    else:
        reason = "granted"
    return {"task_id": task_id, "model": model_name, "level": minimum_level, "authorized": reason == "granted",
            "reason": reason, "grant": grant}


_MESSAGES = {
    "no_grant": "task '{task_id}' has no continuation grant; a human must declare one",
    "grant_expired": "the grant on task '{task_id}' expired at {expires_at}; a human must declare a new one",
    "wrong_model": "the grant on task '{task_id}' binds model '{granted}', not '{model}'",
    "level_too_low": "the grant on task '{task_id}' is {granted_level}, below the {level} asked for",
}


def authorize(conn, task_id, model_name, minimum_level="L0"):
    """:func:`check`, raising Refused (audited ``grant_refused``) unless authorized."""
    result = check(conn, task_id, model_name, minimum_level)
    if result["authorized"]:
        return result
    grant = result["grant"] or {}
    message = _MESSAGES[result["reason"]].format(
        task_id=task_id, model=model_name, level=minimum_level, expires_at=grant.get("expires_at"),
        granted=grant.get("model"), granted_level=grant.get("autonomy_level"))
    with db.write(conn):
        ledger.append_refusal(conn, "task", task_id, "grant_refused", {
            "model": model_name, "level": minimum_level, "reason": result["reason"], "grant_id": grant.get("id")})
        raise Refused(message)


def expired_open(conn, limit=None):
    """Live grants past expiry on open tasks, soonest expired first (for ``sense``)."""
    from mindos.store import sql  # lazy: only the sweep reads task states here; recall's grant lookup does not

    query = ("SELECT g.task_id, g.id, g.model, g.autonomy_level, g.expires_at, t.status FROM grants g"
             " JOIN tasks t ON t.id = g.task_id WHERE g.superseded_by IS NULL AND g.expires_at <= ?"
             f" AND {sql.open_condition('t')} ORDER BY g.expires_at, g.task_id")
    params = [clock.now_iso()]
    if limit is not None:
        query += " LIMIT ?"
        params.append(limit)
    return [dict(row) for row in conn.execute(query, params)]


def metrics(conn):
    """Grant counters: live unexpired grants and refused continuation checks."""
    live = conn.execute("SELECT count(*) FROM grants WHERE superseded_by IS NULL AND expires_at > ?",
                        (clock.now_iso(),)).fetchone()[0]
    return {"grants_active": live, "grants_refused_total": ledger.count_action(conn, "grant_refused")}
