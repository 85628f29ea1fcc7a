"""The dependency graph: edges, cycle refusal, and the graph queries built on it.

An edge ``task_id -> depends_on`` means task_id waits until depends_on is completed.
Prerequisites may name tasks that do not exist yet; queries report them as ``missing``.
"""

from mindos import clock, db
from mindos.errors import Refused


def find_path(conn, start, goal):
    """Return the prerequisite path start -> ... -> goal (list of ids) or None.

    Walks edges task_id -> depends_on with a recursive CTE; used to name the cycle an edge
    goal -> start would close.
    """
    rows = conn.execute(
        """
        WITH RECURSIVE walk(id, path) AS (
            SELECT ?, ?
            UNION
            SELECT d.depends_on, walk.path || char(31) || d.depends_on
            FROM dependencies d JOIN walk ON d.task_id = walk.id
            WHERE instr(char(31) || walk.path || char(31), char(31) || d.depends_on || char(31)) = 0
        )
        SELECT path FROM walk WHERE id = ? LIMIT 1
        """,
        (start, start, goal),
    ).fetchone()
    return rows[0].split("\x1f") if rows else None


def add_edges(conn, task_id, prerequisites):
    """Add edges task_id -> each prerequisite inside the caller's write transaction.

    Refuses self-edges and edges that would close a cycle (naming it).  Returns
    ``{"added": [...], "existing": [...], "missing": [...]}``; missing prerequisites are
    kept as edges and reported.
    """
    added, existing, missing = [], [], []
    now = clock.now_iso()
    for prereq in dict.fromkeys(prerequisites):
        if prereq == task_id:
            raise Refused(f"dependency cycle: task '{task_id}' cannot depend on itself")
        cycle = find_path(conn, prereq, task_id)
        if cycle:
            raise Refused("dependency cycle: " + " -> ".join([task_id, *cycle]))
        cursor = conn.execute(
            "INSERT OR IGNORE INTO dependencies(task_id, depends_on, created_at) VALUES (?, ?, ?)",
            (task_id, prereq, now),
        )
        (added if cursor.rowcount else existing).append(prereq)
        if conn.execute("SELECT 1 FROM tasks WHERE id = ?", (prereq,)).fetchone() is None:
            missing.append(prereq)
    return {"added": added, "existing": existing, "missing": missing}


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


def newly_unblocked(conn, task_id):
    """Queued direct dependents of ``task_id`` whose prerequisites are now all completed.

    Call after marking ``task_id`` completed, inside the same transaction.
    """
    rows = conn.execute(
        "SELECT t.id FROM dependencies d JOIN tasks t ON t.id = d.task_id"
        " WHERE d.depends_on = ? AND t.status = 'queued' AND NOT EXISTS ("
        "   SELECT 1 FROM dependencies d2 LEFT JOIN tasks p ON p.id = d2.depends_on"
        "   WHERE d2.task_id = t.id AND (p.status IS NULL OR p.status <> 'completed'))"
        " ORDER BY t.id",
        (task_id,),
    )
    return [row[0] for row in rows]


def open_dependents(conn, task_id):
    """Non-terminal direct dependents of ``task_id`` (ids, sorted)."""
    rows = conn.execute(
        "SELECT t.id FROM dependencies d JOIN tasks t ON t.id = d.task_id"
        " WHERE d.depends_on = ? AND t.status NOT IN ('completed', 'failed', 'cancelled') ORDER BY t.id",
        (task_id,),
    )
    return [row[0] for row in rows]
