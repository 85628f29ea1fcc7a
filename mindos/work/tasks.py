"""The task registry: create, read, list and correct tasks.

A task row carries its own lease fields, so later domains (leases, dispatch, lifecycle)
change a task with one guarded UPDATE.  Every mutation here runs in one write transaction
with its audit event.
"""

import json

from mindos.core import clock, validate
from mindos.store import db, fts, ledger, sql
from mindos.store.sql import open_condition
from mindos.errors import Conflict, InvalidInput
from mindos.work import rows

_CLEARABLE = ("description", "next_action", "due_at", "worktree", "branch", "pr_url", "not_before")
_EDITABLE = ("title", "description", "project", "priority", "next_action", "due_at", "worktree", "branch",
             "pr_url", "not_before", "requires_receipts")


def _new_id(conn):
    return sql.new_id(conn, "tasks", "t-", 4)


def init(conn):
    """Report the (now existing) home and the rule that chose it; connecting already built or
    upgraded the schema."""
    return {
        "home": conn.home,
        "home_rule": conn.home_rule,
        "database": conn.path,
        "schema_version": db.latest_version(),
        "fts5": fts.has(conn, "tasks_fts"),
        "receipts_dir": db.receipts_dir(conn.home),
    }


def create(conn, *, project, title, description="", priority="P2", next_action="", task_id=None,
           depends_on=(), tags=(), due_at=None, owner="", not_before=None, requires_receipts=(), correction_of=""):
    """Create a queued task (with its dependency edges and tags) and return it.

    ``correction_of`` (set by ``fail --cause defect``, never by a flag) links a correction
    task to the task whose defect it fixes.

    The returned dict adds ``missing_dependencies`` (prerequisite ids that do not exist yet)
    when any were named, and ``similar_open_tasks`` (open same-project near-duplicates, see
    :mod:`mindos.work.dedup`) when any exist.
    """
    project = validate.identifier(project, "--project")
    title = validate.title(title)
    description = validate.text(description or "", "--description")
    next_action = validate.text(next_action or "", "--next-action", max_len=4096)  # same limit as update
    priority = validate.priority(priority)
    if task_id is not None:
        task_id = validate.identifier(task_id, "--id")
    depends_on = [validate.identifier(d, "--depends-on") for d in depends_on or ()]
    tag_list = validate.tags(tags)
    kinds = validate.tags(requires_receipts, "--requires-receipt")
    due = validate.timestamp(due_at, "--due-at")
    deferred = validate.timestamp(not_before, "--not-before")
    owner = validate.agent(owner, "--owner") if owner else ""
    now = clock.now_iso()
    with db.write(conn):
        # guarded: no credential lands in a task row, its events or any listing of it
        from mindos.store import guard  # lazy: only writes that store text load the detector
        guard.check(conn, "task", task_id or "(new)",
                    {"title": title, "description": description, "next_action": next_action})
        if task_id is None:
            task_id = _new_id(conn)
        elif conn.execute("SELECT 1 FROM tasks WHERE id = ?", (task_id,)).fetchone():
            raise Conflict(f"task '{task_id}' already exists")
        conn.execute(
            "INSERT INTO tasks(id, project, title, description, priority, next_action, owner, tags, due_at,"
            " not_before, requires_receipts, correction_of, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (task_id, project, title, description, priority, next_action, owner, json.dumps(tag_list),
             due, deferred, json.dumps(kinds), correction_of, now, now),
        )
        edges = {"added": [], "missing": []}
        if depends_on:
            from mindos.work import graph  # lazy: only a task created with prerequisites needs it

            edges = graph.add_edges(conn, task_id, depends_on)
        payload = {"project": project, "title": title, "priority": priority, "tags": tag_list,
                   "depends_on": edges["added"]}
        for key, value in (("due_at", due), ("not_before", deferred), ("owner", owner),
                           ("requires_receipts", kinds), ("correction_of", correction_of)):
            if value:
                payload[key] = value
        if edges["missing"]:
            payload["missing_dependencies"] = edges["missing"]
        from mindos.work import dedup  # lazy: loaded only on the path that needs it

        similar = dedup.similar_open_tasks(conn, task_id, project, title, description)
        if similar:
            payload["similar_open_tasks"] = similar
        ledger.append_event(conn, "task", task_id, "created", payload)
        task = rows.get(conn, task_id)
    task["depends_on"] = edges["added"]
    if edges["missing"]:
        task["missing_dependencies"] = edges["missing"]
    if similar:
        task["similar_open_tasks"] = similar
    return task


def list_tasks(conn, *, status=None, project=None, tag=None, overdue=False, limit=None):
    """Tasks matching the filters, by priority then most recently updated."""
    clauses, params = rows.task_filters(status=status, project=project, tag=tag)
    if overdue:
        clauses.append(f"t.due_at IS NOT NULL AND t.due_at < ? AND {open_condition('t')}")
        params.append(clock.now_iso())
    sql = "SELECT t.* FROM tasks t"
    if clauses:
        sql += " WHERE " + " AND ".join(clauses)
    sql += f" ORDER BY {rows.LIST_ORDER}"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(validate.positive_int(limit, "--limit"))
    return [rows.row_to_task(row) for row in conn.execute(sql, params)]


def _clean_field(field, value):
    if field == "title":
        return validate.title(value)
    if field == "project":
        return validate.identifier(value, "--project")
    if field == "priority":
        return validate.priority(value)
    if field in ("due_at", "not_before"):
        return validate.timestamp(value, "--" + field.replace("_", "-"))
    if field == "requires_receipts":
        # a single '' clears the definition of done deliberately
        values = [v for v in value if v != ""]
        return json.dumps(validate.tags(values, "--requires-receipt"))
    flag = "--" + field.replace("_", "-")
    if field in ("worktree", "branch", "pr_url"):
        return validate.line(value, flag, max_len=4096)
    return validate.text(value, flag, max_len=validate.MAX_TEXT if field == "description" else 4096)


def update(conn, task_id, *, status=None, approved_by=None, **fields):
    """Change status and/or identity fields; return the updated task.

    ``''`` clears a clearable field.  Moving to a terminal status releases any held lease.
    Unknown field names are a programming error (KeyError).
    """
    for name in fields:
        if name not in _EDITABLE:
            raise KeyError(name)
    task_id = validate.identifier(task_id, "task id")
    changes = {name: _clean_field(name, value) for name, value in fields.items() if value is not None}
    if status is not None:
        status = validate.status(status)
    if not changes and status is None:
        raise InvalidInput("nothing to update: pass --status or a field to change")
    for name in ("title", "project", "priority"):
        if name in changes and changes[name] in ("", None):
            raise InvalidInput(f"invalid --{name}: cannot be cleared")
    from mindos.work import evidence  # lazy: only status overrides need the definition of done

    with db.write(conn):
        texts = {name: value for name, value in changes.items()
                 if name in ("title", "description", "next_action", "worktree", "branch", "pr_url")}
        if texts:  # guarded: refused before anything is read or written
            from mindos.store import guard  # lazy: only writes that store text load the detector
            guard.check(conn, "task", task_id, texts)
        before = rows.get(conn, task_id)
        sets, params = [], []
        for name, value in changes.items():
            sets.append(f"{name} = ?")
            params.append(value)
        payload = {name: (json.loads(v) if name == "requires_receipts" else v) for name, v in changes.items()}
        if status is not None and status != before["status"]:
            evidence.status_override_gate(conn, before, status, approved_by, payload)
            sets.append("status = ?")
            params.append(status)
            payload["status"] = status
            payload["previous_status"] = before["status"]
            sets.extend(evidence.status_override_sets(before, status, payload))
        sets.append("updated_at = ?")
        params.append(clock.now_iso())
        conn.execute(f"UPDATE tasks SET {', '.join(sets)} WHERE id = ?", (*params, task_id))
        ledger.append_event(conn, "task", task_id, "updated", payload)
        return rows.get(conn, task_id)


def metrics(conn):
    """Task-level counters for ``metrics``."""
    now = clock.now_iso()
    by_status = {row[0]: row[1] for row in conn.execute("SELECT status, count(*) FROM tasks GROUP BY status")}
    open_filter = open_condition()
    overdue = conn.execute(f"SELECT count(*) FROM tasks WHERE due_at < ? AND {open_filter}", (now,)).fetchone()[0]
    soon = conn.execute(
        f"SELECT count(*) FROM tasks WHERE due_at >= ? AND due_at <= ? AND {open_filter}",
        (now, clock.shift(now, 86400)),
    ).fetchone()[0]
    return {
        "tasks_total": sum(by_status.values()),
        "tasks_by_status": by_status,
        "overdue_tasks": overdue,
        "due_within_24h": soon,
        "receipts": conn.execute("SELECT count(*) FROM receipts").fetchone()[0],
        "audit_events": conn.execute("SELECT count(*) FROM audit_events").fetchone()[0],
    }
