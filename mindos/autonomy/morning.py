"""``ops.py morning``: the human brief -- what finished, what is stuck, what needs a decision.

The window runs from ``--since`` or, by default, from the last recorded brief (the newest
``morning_brief`` audit event), else the last 24 hours.  Reading the brief changes
nothing; ``--mark`` records it (one ``morning_brief`` event) so the next brief starts
where this one ended -- the form cron uses.  What is stuck and what needs a decision come
from the same findings as ``sense`` (so the brief and the nanny never disagree), the last
nanny tick's state is quoted as is, and every listing is capped with a "... and N more"
line.  Text for a person; ``--json`` gives the same data.
"""

from mindos.core import clock
from mindos.core.text import one_line
from mindos.store import db, ledger
from mindos.autonomy import nanny, sense

CAP = 10
TITLE_WIDTH = 60
DEFAULT_HOURS = 24


def _clean(text, width=TITLE_WIDTH):
    return one_line(text or "", width)


def last_brief(conn):
    """When the last brief was recorded (None when never)."""
    row = conn.execute("SELECT created_at FROM audit_events WHERE action = 'morning_brief' ORDER BY id DESC LIMIT 1"
                       ).fetchone()
    return row[0] if row else None


def collect(conn, *, since=None):
    """The brief's data: ``{"since", "since_rule", "now", "finished", "failed", "stuck",
    "decisions", "nanny", "counts"}``; reads only."""
    now = clock.now_iso()
    if since is not None:
        since, rule = clock.normalize(since, "--since"), "--since"
    else:
        since = last_brief(conn)
        rule = "last_brief"
        if since is None:
            since, rule = clock.shift(now, -DEFAULT_HOURS * 3600), f"last_{DEFAULT_HOURS}h"

    after = ">" if rule == "last_brief" else ">="  # what the last brief showed is not shown again

    def tasks(status):
        where = f"status = ? AND updated_at {after} ?"
        total = conn.execute(f"SELECT count(*) FROM tasks WHERE {where}", (status, since)).fetchone()[0]
        rows = conn.execute(f"SELECT id, project, title, priority, updated_at, blocked_reason FROM tasks WHERE {where}"
                            " ORDER BY updated_at DESC, id LIMIT ?", (status, since, CAP)).fetchall()
        return {"total": total, "tasks": [dict(row) for row in rows]}

    found = sense.sense(conn, limit=CAP)
    stuck = [item for item in found["findings"] if item["severity"] == "snag"]
    decisions = [item for item in found["findings"] if item["severity"] == "decision"]
    titles = {}
    ids = {subject for item in stuck + decisions for subject in item["subjects"]}
    for start in range(0, len(ids), 500):
        chunk = sorted(ids)[start:start + 500]
        for row in conn.execute(f"SELECT id, title FROM tasks WHERE id IN ({', '.join('?' for _ in chunk)})", chunk):
            titles[row[0]] = row[1]
    for item in stuck + decisions:
        item["titles"] = [titles[subject] for subject in item["subjects"] if subject in titles]
    by_severity = {"snag": 0, "decision": 0, **found["by_severity"]}
    return {
        "now": now, "since": since, "since_rule": rule,
        "finished": tasks("completed"), "failed": tasks("failed"),
        "stuck": {"total": by_severity["snag"], "findings": stuck},
        "decisions": {"total": by_severity["decision"], "findings": decisions},
        "nanny": nanny.last_tick(conn),
        "counts": {row[0]: row[1] for row in conn.execute("SELECT status, count(*) FROM tasks GROUP BY status")},
    }


def _finding_line(item):
    subjects = ", ".join(item["subjects"])
    title = f"  {_clean(item['titles'][0])}" if item.get("titles") else ""
    detail = item["detail"]
    extra = ""
    if item["kind"] == "blocked_task" and detail.get("blocked_reason"):
        extra = f"  ({_clean(detail['blocked_reason'], 50)})"
    elif item["kind"] == "awaiting_decision":
        extra = f"  ({detail['status']})"
    elif item["kind"] == "overdue_task":
        extra = f"  (due {detail['due_at']}, {detail['priority']})"
    elif item["kind"] == "stale_lease":
        extra = f"  (owner {_clean(detail['owner'], 32)}, expired {detail['lease_expires_at']})"
    elif item["kind"] == "grant_expired":
        extra = f"  (model {_clean(detail['model'], 40)}, expired {detail['expires_at']})"
    return f"{item['kind']}: {_clean(subjects, 80)}{extra}{title}"


def render(data):
    """The brief as text."""
    lines = [f"MindOS morning brief  {data['now']}", f"Since {data['since']} ({data['since_rule'].replace('_', ' ')})"]
    tick = data["nanny"]
    lines.append(f"Nanny: {tick['state']} at {tick['at']}" if tick else "Nanny: no tick recorded yet")
    lines.append("")

    def block(label, listing, line_for, total=None):
        items = listing
        total = len(items) if total is None else total
        if not total:
            lines.append(f"{label}: none")
            return
        lines.append(f"{label}: {total}")
        lines.extend("  " + line_for(item) for item in items)
        if total > len(items):
            lines.append(f"  ... and {total - len(items)} more")

    def task_line(task):
        reason = f"  ({_clean(task['blocked_reason'], 50)})" if task.get("blocked_reason") else ""
        return f"{task['id']}  {task['priority']}  {_clean(task['title'])}{reason}"

    block("Finished", data["finished"]["tasks"], task_line, data["finished"]["total"])
    block("Failed", data["failed"]["tasks"], task_line, data["failed"]["total"])
    block("Needs a decision", data["decisions"]["findings"], _finding_line, data["decisions"]["total"])
    block("Stuck", data["stuck"]["findings"], _finding_line, data["stuck"]["total"])
    return "\n".join(lines) + "\n"


def brief(conn, *, since=None, mark=False):
    """Collect the brief; with ``mark`` record it (``morning_brief``) as the next window's start."""
    data = collect(conn, since=since)
    if mark:
        with db.write(conn):
            ledger.append_event(conn, "brief", "morning", "morning_brief", {
                "since": data["since"], "finished": data["finished"]["total"], "failed": data["failed"]["total"],
                "stuck": data["stuck"]["total"], "decisions": data["decisions"]["total"]})
        data["marked"] = True
    return data
