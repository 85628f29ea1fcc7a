"""The operator dashboard: one compact text screen over the task registry.

:func:`collect` answers with indexed queries (status counts, live leases, overdue work,
the head of the queue) and returns plain data; :func:`render` turns it into text for a
person.  Every listing is capped so the screen stays one screen on a large fleet, with a
"... and N more" line instead of silent truncation.  User text (titles, owners) is shown
on one line with control characters shown as escapes (:func:`mindos.core.text.one_line`), so
a crafted title cannot redraw the operator's terminal.
"""

from mindos.core import clock, validate
from mindos.core.text import one_line
from mindos.store import sql

LIST_CAP = 10
TITLE_WIDTH = 60
_OPEN = sql.open_condition()
_COLUMNS = "id, project, title, status, priority, lease_owner, lease_expires_at, due_at, not_before, recover_after"


def collect(conn, *, cap=LIST_CAP):
    """Return the dashboard data: counts, live/stale leases, overdue and top queued tasks."""
    now = clock.now_iso()
    counts = {row[0]: row[1] for row in conn.execute("SELECT status, count(*) FROM tasks GROUP BY status")}

    def listing(where, order, params=()):
        total = conn.execute(f"SELECT count(*) FROM tasks WHERE {where}", params).fetchone()[0]
        rows = conn.execute(f"SELECT {_COLUMNS} FROM tasks WHERE {where} ORDER BY {order} LIMIT ?",
                            (*params, cap)).fetchall()
        return {"total": total, "tasks": [dict(row) for row in rows]}

    return {
        "now": now,
        "tasks_total": sum(counts.values()),
        "by_status": counts,
        "active_leases": listing("lease_owner <> '' AND lease_expires_at > ?", "lease_expires_at, id", (now,)),
        "stale_leases": conn.execute(
            f"SELECT count(*) FROM tasks WHERE lease_owner <> '' AND (lease_expires_at IS NULL"
            f" OR lease_expires_at <= ?) AND {_OPEN}", (now,)).fetchone()[0],
        "overdue": listing(f"due_at IS NOT NULL AND due_at < ? AND {_OPEN}", "due_at, id", (now,)),
        "top_queued": listing("status = 'queued'", "priority, due_at IS NULL, due_at, created_at, id"),
    }


def _clean(text, width=TITLE_WIDTH):
    return one_line(text or "", width)


def _span(seconds):
    seconds = max(0, seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m" if minutes else f"{seconds}s"


def _flags(task, now):
    flags = []
    if task["due_at"] and task["due_at"] < now and task["status"] not in validate.TERMINAL_STATUSES:
        flags.append(f"[OVERDUE {_span(clock.seconds_between(task['due_at'], now))}, due {task['due_at']}]")
    elif task["due_at"]:
        flags.append(f"due {task['due_at']}")
    if task["status"] == "queued" and task["not_before"] and task["not_before"] > now:
        flags.append(f"[DEFERRED until {task['not_before']}]")
    if task["status"] == "queued" and task["recover_after"] and task["recover_after"] > now:
        flags.append(f"[BACKOFF until {task['recover_after']}]")
    return flags


def _section(lines, label, listing, line_for):
    shown, total = listing["tasks"], listing["total"]
    if not total:
        lines.append(f"{label}: none")
        return
    lines.append(f"{label}: {total}" if len(shown) == total else f"{label}: {total} (showing {len(shown)})")
    lines.extend("  " + line_for(task) for task in shown)
    if total > len(shown):
        lines.append(f"  ... and {total - len(shown)} more")


def render(conn):
    """Return the dashboard as text."""
    data = collect(conn)
    now = data["now"]
    known = [s for s in validate.STATUSES if s in data["by_status"]]
    other = sorted(s for s in data["by_status"] if s not in validate.STATUSES)
    counts = " | ".join(f"{_clean(s, 32)} {data['by_status'][s]}" for s in known + other)
    lines = [f"MindOS dashboard  {now}",
             f"Tasks: {data['tasks_total']} total" + (f" | {counts}" if counts else "")]

    def lease_line(task):
        left = _span(clock.seconds_between(now, task["lease_expires_at"]))
        return (f"{task['id']}  {task['priority']}  {task['status']}  {_clean(task['lease_owner'], 32)}"
                f"  until {task['lease_expires_at']} ({left} left)  {_clean(task['title'])}")

    def overdue_line(task):
        return f"{task['id']}  {task['priority']}  {task['status']}  {' '.join(_flags(task, now))}  {_clean(task['title'])}"

    def queued_line(task):
        return "  ".join([task["id"], task["priority"], *_flags(task, now), _clean(task["title"])])

    _section(lines, "Active leases", data["active_leases"], lease_line)
    if data["stale_leases"]:
        lines.append(f"Stale leases: {data['stale_leases']} (expired; ops.py recover requeues them)")
    _section(lines, "Overdue", data["overdue"], overdue_line)
    _section(lines, "Top queued", data["top_queued"], queued_line)
    return "\n".join(lines) + "\n"
