"""Task rows: how a tasks row becomes the task dict every command prints, and how one is read.

The leaf of the work dimension: every other work module reads tasks through here, so the
row shape, the list order and the shared filter flags are defined once.
"""

import json

from mindos.core import clock, validate
from mindos.errors import NotFound
from mindos.store import sql

# Columns stored as JSON text (seq is internal: it only keys the FTS index; unmet_deps and
# dependent_rank are derived, see mindos.store.db.DERIVED_COLUMNS).
_JSON_COLUMNS = ("tags", "requires_receipts")


# The JSON text of a tags or receipts list -> its parsed list, kept for the next row with the
# same text (a fleet has a few hundred distinct tag sets): a dict lookup and a list copy
# instead of a parse, each row.  Lists of strings only, so the copy is a whole copy.
_PARSED = {}
_PARSED_KEEP = 1024
_PARSED_CHARS = 512


def _json_list(text):
    known = _PARSED.get(text)
    if known is not None:
        return list(known)
    value = json.loads(text)
    if type(value) is list and len(text) <= _PARSED_CHARS and all(type(item) is str for item in value):
        if len(_PARSED) >= _PARSED_KEEP:
            _PARSED.clear()
        _PARSED[text] = tuple(value)
    return value


def row_to_task(row):
    """Turn a tasks row into the task dict every command prints."""
    task = sql.row_dict(row)
    task.pop("seq", None)
    task.pop("unmet_deps", None)  # derived readiness (kept by triggers): never part of a task shown
    task.pop("dependent_rank", None)  # derived inherited urgency (kept by triggers): likewise
    for column in _JSON_COLUMNS:
        if column in task:
            task[column] = _json_list(task[column])
    return task


def lease_is_live(task, now=None):
    """True when ``task`` (a dict) carries an unexpired lease.  Here rather than with the
    lease commands: a view that only reports a lease (a recall bundle) never loads those."""
    now = now or clock.now_iso()
    return bool(task.get("lease_owner")) and bool(task.get("lease_expires_at")) and task["lease_expires_at"] > now


def unknown_task(task_id):
    """The one refusal for a task id that names no task (NotFound, ``not_found``)."""
    return NotFound(f"unknown task {validate.shown(task_id)}")


def require_task(conn, task_id, columns="1"):
    """The tasks row (``columns`` of it) for ``task_id``; raise :func:`unknown_task` when
    there is none.  Every "does this task exist" check goes through here, so the query and
    its message are written once."""
    row = conn.execute(f"SELECT {columns} FROM tasks WHERE id = ?", (task_id,)).fetchone()
    if row is None:
        raise unknown_task(task_id)
    return row


def get(conn, task_id):
    """Return the task dict for ``task_id`` or raise NotFound."""
    return row_to_task(require_task(conn, task_id, "*"))


def blockers(conn, task_id):
    """Direct prerequisites of ``task_id`` that are not completed: ``[{"id", "status"}]``.

    A prerequisite that does not exist reports status ``missing``.
    """
    rows = conn.execute(
        "SELECT d.depends_on, coalesce(t.status, 'missing') FROM dependencies d"
        " LEFT JOIN tasks t ON t.id = d.depends_on"
        " WHERE d.task_id = ? AND (t.status IS NULL OR t.status <> 'completed')"
        " ORDER BY d.created_at, d.depends_on",
        (task_id,),
    )
    return [{"id": row[0], "status": row[1]} for row in rows]


LIST_ORDER = "t.priority, t.updated_at DESC, t.id"


def task_filters(*, status=None, project=None, priority=None, tag=None):
    """Validated WHERE clauses (over alias ``t``) and parameters for the task filter flags."""
    # tags is a canonical JSON array of validated tags, so '"tag"' matches whole tags only
    return sql.given([
        ("t.status = ?", validate.status(status) if status else None),
        ("t.project = ?", validate.identifier(project, "--project") if project else None),
        ("t.priority = ?", validate.priority(priority) if priority else None),
        ("instr(t.tags, ?) > 0", json.dumps(validate.tag(tag)) if tag else None),
    ])


