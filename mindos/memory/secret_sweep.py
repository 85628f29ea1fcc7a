"""The secret sweep (``ops.py secret-scan``): what credential-shaped text is already stored.

The write side of the secret guard is :mod:`mindos.store.guard`: each write path passes its
fields through :func:`mindos.store.guard.guard` inside its write transaction, and the
detector (:mod:`mindos.core.secrets`) names what it finds by kind; the write is refused
(``secret_blocked``, recorded even though the write rolls back), stored redacted
(``secret_redacted``) or, on an explicit override, stored verbatim (``secret_allowed``).
This module reads only: :func:`sweep` finds what is already stored with the same detector;
:func:`metrics` counts the guard's outcomes.
"""

import json

from mindos.store import ledger
from mindos.store.guard import _row_findings
# kept only for mindos/memory/sessions.py until it moves to mindos/migration/ (its owner drops
# this line then); every other writer imports the guard from mindos.store (a layout test holds it)
from mindos.store.guard import guard  # noqa: F401


_HANDOFF_LISTS = ("evidence", "constraints", "decisions", "files", "next_actions", "risks")
# agent names a handoff row stores (acked_by can only ever equal to_agent, but legacy rows are swept too)
_HANDOFF_IDENTITIES = ("from_agent", "to_agent", "acked_by")


def sweep(conn, *, include_all=False):
    """Read-only fleet sweep of live notes, handoffs and tasks (``include_all``: superseded
    notes and handoffs too), with the write guard's detector, so it finds what the guard
    would refuse today.

    Every stored text is scanned: note content and source; handoff objective, status,
    commit, list fields and agent names (from_agent, to_agent, acked_by); task ids, names,
    text fields, tags, worktree, branch and pr_url (a URL with userinfo included).

    Returns ``{"findings": [{"table", "id", "task_id", "kinds", "fields", "superseded"}],
    "findings_total", "by_kind", "notes_scanned", "handoffs_scanned", "include_superseded"}``.
    Findings name kinds and row ids only, never values.
    """

    live = "" if include_all else " WHERE superseded_by IS NULL"
    findings, by_kind, scanned = [], {}, {"notes": 0, "handoffs": 0}
    rows = conn.execute(f"SELECT id, task_id, content, source, superseded_by FROM notes{live} ORDER BY id")
    for row in rows:
        scanned["notes"] += 1
        kinds, names = _row_findings({"content": row["content"], "source": row["source"]})
        if kinds:
            findings.append({"table": "notes", "id": row["id"], "task_id": row["task_id"], "kinds": kinds,
                             "fields": names, "superseded": row["superseded_by"] is not None})
    scalars = ("objective", "status", "commit_ref", *_HANDOFF_IDENTITIES)
    columns = ", ".join((*scalars, *_HANDOFF_LISTS))
    rows = conn.execute(f"SELECT id, task_id, superseded_by, {columns} FROM handoffs{live} ORDER BY id")
    for row in rows:
        scanned["handoffs"] += 1
        fields = {name: row[name] for name in scalars}
        for name in _HANDOFF_LISTS:
            try:
                value = json.loads(row[name] or "[]")
            except ValueError:
                value = row[name]  # a malformed legacy list is still text worth scanning
            fields[name] = value if isinstance(value, (str, list)) else str(value)
        kinds, names = _row_findings(fields)
        if kinds:
            findings.append({"table": "handoffs", "id": row["id"], "task_id": row["task_id"], "kinds": kinds,
                             "fields": names, "superseded": row["superseded_by"] is not None})
    task_columns = ("id", "project", "title", "description", "next_action", "blocked_reason", "owner", "tags",
                    "worktree", "branch", "pr_url", "lease_owner")
    rows = conn.execute(f"SELECT {', '.join(task_columns)} FROM tasks ORDER BY seq")
    for row in rows:  # every task field the write guard covers (legacy rows predate it)
        scanned["tasks"] = scanned.get("tasks", 0) + 1
        kinds, names = _row_findings({name: row[name] for name in task_columns})
        if kinds:
            findings.append({"table": "tasks", "id": row["id"], "task_id": row["id"], "kinds": kinds,
                             "fields": names, "superseded": False})
    for item in findings:
        for found in item["kinds"]:
            by_kind[found] = by_kind.get(found, 0) + 1
    return {"findings": findings, "findings_total": len(findings), "by_kind": by_kind,
            "notes_scanned": scanned["notes"], "handoffs_scanned": scanned["handoffs"],
            "tasks_scanned": scanned.get("tasks", 0),
            "include_superseded": bool(include_all)}


def metrics(conn):
    """Secret-guard counters for ``metrics`` (audit events by outcome)."""
    return {
        "secrets_blocked_total": ledger.count_action(conn, "secret_blocked"),
        "secrets_redacted_total": ledger.count_action(conn, "secret_redacted"),
        "secrets_allowed_total": ledger.count_action(conn, "secret_allowed"),
    }
