"""The dependency graph: edges, cycle refusal, and the graph queries built on it.

An edge ``task_id -> depends_on`` means task_id waits until depends_on is completed.
Prerequisites may name tasks that do not exist yet; queries report them as ``missing``.

Design decisions
  * Cycle refusal is on the hot path (every ``dep`` and every ``create --depends-on``), so
    it is a bounded, bidirectional reachability test in SQL: the dependents of the task and
    the prerequisites of the new prerequisite are walked by recursive CTEs whose inner
    ``LIMIT`` grows geometrically, and whichever closure is exhausted first answers.  A new
    task has no dependents, so the usual case costs one tiny query.  Only a refusal pays for
    naming the cycle (:func:`find_path`: one closure query plus a breadth-first search).
  * ``blocked-by`` and ``impact`` load the transitive closure's edges with one recursive
    CTE and take depths from a breadth-first search, so a task reached along several paths
    is reported once, at its minimum depth (direct edges are depth 1).
  * ``critical-path`` and ``plan`` share one model of the open graph, loaded with one query
    for the in-scope open tasks and one for their unsatisfied edges, then solved in one
    topological pass:
      - the scope is every open task (not completed, cancelled or failed) matching the
        ``--project`` / ``--tag`` filters; ``open_tasks`` and ``by_status`` count only it;
      - an edge to a completed prerequisite is satisfied and leaves the graph;
      - an edge to anything else outside the scope is a permanent blocker node: a missing
        id (status ``missing``), a live task outside the scope (its live status), or a
        cancelled or failed task (terminal but never satisfied: the claim guard refuses
        its dependents forever, so the plan must not call them ready);
      - blocker nodes and everything downstream of them are ``unschedulable`` in the plan,
        and they count as nodes in the critical path, which measures the serial waves the
        scope needs (a chain held by a missing id still needs its waves once it appears);
      - ``waves_total`` is therefore the critical-path length of the same scope by
        construction.  Without blockers it is the number of listed waves; when a blocked
        chain is longer than every schedulable one it exceeds ``len(waves)``.
    Ties break to the smallest id at every step, and tasks within a wave order by dispatch
    preference (priority, earliest due_at with undated last, oldest created_at, id).
"""

from mindos.core import clock, validate
from mindos.store import db, ledger
from mindos.store.sql import open_condition
from mindos.work import rows
from mindos.work.rows import blockers  # noqa: F401 (the graph's query; in rows so a claim's guard skips this module)
from mindos.errors import NotFound, Refused

# Statuses that are still work to do (index-friendly IN list instead of NOT IN).
OPEN_STATUSES = tuple(s for s in validate.STATUSES if s not in validate.TERMINAL_STATUSES)
SETTLED_STATUSES = ("completed", "cancelled")
_PRIORITY_RANK = {p: rank for rank, p in enumerate(validate.PRIORITIES)}
_CYCLE_NAME_LIMIT = 20  # ids shown before a long cycle is abbreviated

# Bounded closure walks: count the rows reached (at most the LIMIT) and whether goal is one.
_REACH_UP = (
    "WITH RECURSIVE r(id) AS (SELECT ? UNION SELECT d.depends_on FROM dependencies d"
    " JOIN r ON d.task_id = r.id LIMIT ?) SELECT count(*), coalesce(max(id = ?), 0) FROM r"
)
_REACH_DOWN = (
    "WITH RECURSIVE r(id) AS (SELECT ? UNION SELECT d.task_id FROM dependencies d"
    " JOIN r ON d.depends_on = r.id LIMIT ?) SELECT count(*), coalesce(max(id = ?), 0) FROM r"
)
# Every edge inside the prerequisite closure of a task, with the prerequisite's live row.
_CLOSURE_UP = (
    "WITH RECURSIVE r(id) AS (SELECT ? UNION SELECT d.depends_on FROM dependencies d JOIN r ON d.task_id = r.id)"
    " SELECT d.task_id, d.depends_on, p.status, p.title FROM r JOIN dependencies d ON d.task_id = r.id"
    " LEFT JOIN tasks p ON p.id = d.depends_on"
)
# Every edge inside the dependent closure of a task, with the dependent's live row.
_CLOSURE_DOWN = (
    "WITH RECURSIVE r(id) AS (SELECT ? UNION SELECT d.task_id FROM dependencies d JOIN r ON d.depends_on = r.id)"
    " SELECT d.depends_on, d.task_id, t.status, t.title FROM r JOIN dependencies d ON d.depends_on = r.id"
    " JOIN tasks t ON t.id = d.task_id"
)


# ---------------------------------------------------------------------------------------
# Edges and cycle refusal


def reaches(conn, start, goal):
    """True when ``start`` depends on ``goal`` transitively (or is it).

    Walks the dependents of ``goal`` and the prerequisites of ``start`` alternately, each
    bounded by a growing LIMIT; the first closure that finds ``goal``/``start`` or runs out
    decides.  Cost is about twice the smaller closure, never the whole table.
    """
    if start == goal:
        return True
    limit = 64
    while True:
        for sql, origin, target in ((_REACH_DOWN, goal, start), (_REACH_UP, start, goal)):
            count, found = conn.execute(sql, (origin, limit, target)).fetchone()
            if found:
                return True
            if count < limit:  # this closure is complete and never met the target
                return False
        limit *= 8


def find_path(conn, start, goal):
    """Return the prerequisite path start -> ... -> goal (list of ids) or None.

    Follows edges task_id -> depends_on; the path is a shortest one, choosing the smallest
    id at each step, so the cycle an edge goal -> start would close is named the same way
    every time.  ``find_path(conn, x, x)`` is ``[x]``.
    """
    if start == goal:
        return [start]
    adjacency = {}
    for task_id, prereq, _status, _title in conn.execute(_CLOSURE_UP, (start,)):
        adjacency.setdefault(task_id, []).append(prereq)
    parent = {start: None}
    frontier = [start]
    while frontier and goal not in parent:
        following = []
        for node in frontier:
            for prereq in sorted(adjacency.get(node, ())):
                if prereq not in parent:
                    parent[prereq] = node
                    following.append(prereq)
        frontier = sorted(following)
    if goal not in parent:
        return None
    path, node = [], goal
    while node is not None:
        path.append(node)
        node = parent[node]
    return path[::-1]


def _cycle_message(ids):
    if len(ids) > _CYCLE_NAME_LIMIT:
        hidden = len(ids) - _CYCLE_NAME_LIMIT
        ids = [*ids[: _CYCLE_NAME_LIMIT // 2], f"... ({hidden} more)", *ids[-_CYCLE_NAME_LIMIT // 2:]]
    return "dependency cycle: " + " -> ".join(ids)


def _refuse_cycle(conn, task_id, prereq):
    if prereq == task_id:
        raise Refused(f"dependency cycle: {task_id} -> {task_id} (a task cannot depend on itself)")
    if reaches(conn, prereq, task_id):
        path = find_path(conn, prereq, task_id) or [prereq, task_id]
        raise Refused(_cycle_message([task_id, *path]))


def add_edges(conn, task_id, prerequisites):
    """Add edges task_id -> each prerequisite inside the caller's write transaction.

    Refuses self-edges and edges that would close a cycle (naming it).  Returns
    ``{"added": [...], "existing": [...], "missing": [...]}``; missing prerequisites are
    kept as edges and reported.
    """
    added, existing, missing = [], [], []
    now = clock.now_iso()
    for prereq in dict.fromkeys(prerequisites):
        _refuse_cycle(conn, task_id, prereq)
        cursor = conn.execute(
            "INSERT OR IGNORE INTO dependencies(task_id, depends_on, created_at) VALUES (?, ?, ?)",
            (task_id, prereq, now),
        )
        (added if cursor.rowcount else existing).append(prereq)
        if conn.execute("SELECT 1 FROM tasks WHERE id = ?", (prereq,)).fetchone() is None:
            missing.append(prereq)
    return {"added": added, "existing": existing, "missing": missing}


def add_dependency(conn, task_id, prereq):
    """``dep``: make ``task_id`` wait for ``prereq``; audited ``dependency_added``.

    Refuses an unknown task, a self-edge and a cycle (naming it).  A prerequisite that does
    not exist yet is accepted and listed under ``missing``.  Re-adding an existing edge
    changes nothing, records no event and reports ``already_present: true``.  Returns the
    edge with the task's remaining unsatisfied direct ``blockers``.
    """
    task_id = validate.identifier(task_id, "task")
    prereq = validate.identifier(prereq, "prerequisite")
    with db.write(conn):
        rows.require_task(conn, task_id)
        edges = add_edges(conn, task_id, [prereq])
        added = bool(edges["added"])
        if added:
            payload = {"depends_on": prereq}
            if edges["missing"]:
                payload["missing"] = True
            ledger.append_event(conn, "task", task_id, "dependency_added", payload)
        return {
            "task_id": task_id,
            "depends_on": prereq,
            "added": added,
            "already_present": not added,
            "missing_dependencies": edges["missing"],
            "missing": edges["missing"],  # alias of missing_dependencies (the name create uses)
            "blockers": blockers(conn, task_id),
        }


def remove_dependency(conn, task_id, prereq):
    """``dep-remove``: delete the edge ``task_id -> prereq``; audited ``dependency_removed``.

    Refuses an unknown task and an edge that does not exist.  Returns the removed edge with
    the task's remaining unsatisfied direct ``blockers``.
    """
    task_id = validate.identifier(task_id, "task")
    prereq = validate.identifier(prereq, "prerequisite")
    with db.write(conn):
        rows.require_task(conn, task_id)
        cursor = conn.execute("DELETE FROM dependencies WHERE task_id = ? AND depends_on = ?", (task_id, prereq))
        if not cursor.rowcount:
            raise NotFound(f"no dependency edge: task '{task_id}' does not depend on '{prereq}'")
        ledger.append_event(conn, "task", task_id, "dependency_removed", {"depends_on": prereq})
        return {"task_id": task_id, "depends_on": prereq, "removed": True, "blockers": blockers(conn, task_id)}


# ---------------------------------------------------------------------------------------
# Helpers other domains call (claim guard, completion, cancellation)


def newly_unblocked(conn, task_id):
    """Queued direct dependents of ``task_id`` whose prerequisites are now all completed.

    Call after marking ``task_id`` completed, inside the same transaction.
    """
    rows = conn.execute(
        # CROSS JOIN pins the join order: start from the indexed edges of this one task
        # (without it the planner may scan every queued task at 100k rows)
        "SELECT t.id FROM dependencies d CROSS JOIN tasks t ON t.id = d.task_id"
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
        "SELECT t.id FROM dependencies d CROSS JOIN tasks t ON t.id = d.task_id"
        f" WHERE d.depends_on = ? AND {open_condition('t')} ORDER BY t.id",
        (task_id,),
    )
    return [row[0] for row in rows]


# ---------------------------------------------------------------------------------------
# Transitive views from one task


def _min_depths(start, adjacency):
    """Breadth-first depths from ``start`` (excluded) over ``adjacency``: {id: depth}."""
    depth = {start: 0}
    frontier = [start]
    level = 0
    while frontier:
        level += 1
        following = []
        for node in frontier:
            for neighbour in adjacency.get(node, ()):
                if neighbour not in depth:
                    depth[neighbour] = level
                    following.append(neighbour)
        frontier = following
    del depth[start]
    return depth


def blocked_by(conn, task_id):
    """``blocked-by``: every transitive prerequisite of ``task_id``.

    Each entry carries ``id``, ``depth`` (direct = 1; a prerequisite reached along several
    paths is listed once, at its minimum depth), live ``status`` (``missing`` when the id
    names no task), ``title`` (null when missing) and ``satisfied`` (completed).  The walk
    continues through completed prerequisites.  Top-level ``blocked`` is true when any entry
    is unsatisfied.  Ordered by depth, then id.
    """
    task_id = validate.identifier(task_id, "task")
    own = rows.require_task(conn, task_id, "status, title")
    adjacency, info = {}, {}
    for dependent, prereq, status, title in conn.execute(_CLOSURE_UP, (task_id,)):
        adjacency.setdefault(dependent, []).append(prereq)
        info[prereq] = (status or "missing", title)
    depths = _min_depths(task_id, adjacency)
    entries = []
    for prereq, depth in sorted(depths.items(), key=lambda item: (item[1], item[0])):
        status, title = info[prereq]
        entries.append({"id": prereq, "depth": depth, "status": status, "title": title,
                        "satisfied": status == "completed"})
    unsatisfied = sum(1 for entry in entries if not entry["satisfied"])
    return {"task_id": task_id, "status": own["status"], "blocked": unsatisfied > 0,
            "unsatisfied": unsatisfied, "blockers": entries}


def impact(conn, task_id):
    """``impact``: every transitive dependent of ``task_id`` (what waits on it).

    Each entry carries ``id``, ``title``, ``depth`` (direct = 1, minimum over paths),
    live ``status`` and ``settled`` (1 when completed or cancelled, else 0).  The summary
    gives ``impacted`` (entries), ``open`` (unsettled entries) and ``by_status``.  An id
    that names no task but is a missing prerequisite of others is reported with status
    ``missing``; an id that is neither raises NotFound.
    """
    task_id = validate.identifier(task_id, "task")
    row = conn.execute("SELECT status FROM tasks WHERE id = ?", (task_id,)).fetchone()
    adjacency, info = {}, {}
    for prereq, dependent, status, title in conn.execute(_CLOSURE_DOWN, (task_id,)):
        adjacency.setdefault(prereq, []).append(dependent)
        info[dependent] = (status, title)
    if row is None and not adjacency:
        raise rows.unknown_task(task_id)
    depths = _min_depths(task_id, adjacency)
    dependents, by_status = [], {}
    for dependent, depth in sorted(depths.items(), key=lambda item: (item[1], item[0])):
        status, title = info[dependent]
        by_status[status] = by_status.get(status, 0) + 1
        dependents.append({"id": dependent, "title": title, "depth": depth, "status": status,
                           "settled": 1 if status in SETTLED_STATUSES else 0})
    return {
        "task_id": task_id,
        "status": row["status"] if row is not None else "missing",
        "impacted": len(dependents),
        "open": sum(1 for entry in dependents if not entry["settled"]),
        "by_status": by_status,
        "dependents": dependents,
    }


# ---------------------------------------------------------------------------------------
# The open graph: critical path and dispatch waves


class _OpenGraph:
    """The scope's open tasks, their unsatisfied edges, solved in one topological pass.

    After construction: ``order`` (topological order of the acyclic part), ``level``
    (longest chain ending at a node, blocker nodes counting 1), ``dead`` (in-scope tasks
    that can never start here), ``external`` ({blocker id: (status, title, priority)}).
    """

    def __init__(self, conn, project=None, tag=None):
        where = f"t.status IN ({', '.join('?' * len(OPEN_STATUSES))})"
        params = list(OPEN_STATUSES)
        if project is not None:
            where += " AND t.project = ?"
            params.append(validate.identifier(project, "--project"))
        if tag is not None:
            where += " AND instr(t.tags, ?) > 0"
            params.append('"' + validate.tag(tag) + '"')  # tags hold a JSON array of plain tokens
        cursor = db.tuples(conn).execute(
            f"SELECT t.id, t.title, t.status, t.priority, t.due_at, t.created_at FROM tasks t WHERE {where}", params
        )
        self.nodes = {row[0]: row for row in cursor}
        cursor = db.tuples(conn).execute(
            "SELECT d.task_id, d.depends_on, p.status, p.title, p.priority FROM tasks t"
            " JOIN dependencies d ON d.task_id = t.id LEFT JOIN tasks p ON p.id = d.depends_on"
            f" WHERE {where} AND (p.status IS NULL OR p.status <> 'completed')",
            params,
        )
        nodes = self.nodes
        self.prereqs = {}  # task -> unsatisfied prerequisite ids (in scope or blocker nodes)
        self.dependents = {}  # in-scope node or blocker -> in-scope dependents
        self.external = {}
        indegree = dict.fromkeys(nodes, 0)
        has_external = set()
        for task_id, prereq, status, title, priority in cursor:
            self.prereqs.setdefault(task_id, []).append(prereq)
            self.dependents.setdefault(prereq, []).append(task_id)
            if prereq in nodes:
                indegree[task_id] += 1
            else:
                self.external[prereq] = (status or "missing", title, priority)
                has_external.add(task_id)
        # Kahn's algorithm; nodes left over sit on (or behind) a cycle a raw edit created.
        self.level = {node: (2 if node in has_external else 1) for node in nodes}
        self.dead = set(has_external)
        order = [node for node, count in indegree.items() if count == 0]
        level, dead = self.level, self.dead
        for node in order:  # the list grows while we walk it
            for dependent in self.dependents.get(node, ()):
                if level[node] + 1 > level[dependent]:
                    level[dependent] = level[node] + 1
                if node in dead:
                    dead.add(dependent)
                indegree[dependent] -= 1
                if indegree[dependent] == 0:
                    order.append(dependent)
        self.order = order
        self.acyclic = set(order)
        dead.update(node for node in nodes if node not in self.acyclic)
        self.length = max((level[node] for node in order), default=0)

    def by_status(self):
        counts = {}
        for row in self.nodes.values():
            counts[row[2]] = counts.get(row[2], 0) + 1
        return counts

    def status(self, node):
        """Live status of an in-scope task, or a blocker node's (``missing`` when absent)."""
        row = self.nodes.get(node)
        return row[2] if row is not None else self.external[node][0]

    def describe(self, node):
        """``{"id", "title", "status", "priority"}`` for an in-scope task or a blocker node."""
        if node in self.nodes:
            _id, title, status, priority, _due, _created = self.nodes[node]
        else:
            status, title, priority = self.external[node]
        return {"id": node, "title": title, "status": status, "priority": priority}

    def critical_path(self):
        """The longest chain, prerequisites first, smallest id at every tie."""
        if not self.length:
            return []
        acyclic = self.acyclic
        down = {}
        for node in reversed(self.order):
            down[node] = 1 + max((down[d] for d in self.dependents.get(node, ()) if d in acyclic), default=0)
        for blocker in self.external:
            reach = [down[d] for d in self.dependents[blocker] if d in acyclic]
            if reach:  # a blocker held only by cycle members is not on any chain
                down[blocker] = 1 + max(reach)
        current = min(node for node, reach in down.items() if reach == self.length)
        path = [current]
        while down[current] > 1:
            current = min(d for d in self.dependents[current] if d in acyclic and down[d] == down[current] - 1)
            path.append(current)
        return [self.describe(node) for node in path]

    def dispatch_key(self, node):
        _id, _title, _status, priority, due_at, created_at = self.nodes[node]
        return (_PRIORITY_RANK.get(priority, len(_PRIORITY_RANK)), due_at is None, due_at or "", created_at, node)


def critical_path(conn, *, project=None, tag=None):
    """``critical-path``: the longest chain of still-open prerequisite work in scope.

    Returns ``length`` (nodes on the chain = minimum serial waves to drain the scope),
    ``path`` (prerequisites first; each ``id``, ``title``, ``status``, ``priority``; blocker
    nodes outside the scope show status ``missing`` or their live/terminal status),
    ``open_tasks`` and ``by_status`` (in-scope open tasks only).
    """
    graph = _OpenGraph(conn, project, tag)
    return {"length": graph.length, "path": graph.critical_path(), "open_tasks": len(graph.nodes),
            "by_status": graph.by_status()}


def plan(conn, *, project=None, tag=None):
    """``plan``: the parallel dispatch-wave schedule of the open graph in scope.

    Wave 1 holds every in-scope open task whose prerequisites are all completed (in-flight
    work included with its live status); wave n+1 holds what waves 1..n unblock.  Tasks that
    can never start in scope are listed under ``unschedulable`` with ``blocked_by``: their
    unsatisfied direct prerequisites that are blockers (missing, out of scope, cancelled,
    failed) or unschedulable themselves, each ``{"id", "status"}``.  ``waves_total`` is the
    number of waves in ``waves`` and ``scheduled_tasks`` the tasks in them, so the three always
    agree; with nothing unschedulable ``waves_total`` equals the critical-path length of the
    same scope (a chain hanging off a blocker is on the critical path but in no wave: it is
    reported under ``unschedulable``).  Read-only.
    """
    graph = _OpenGraph(conn, project, tag)
    waves = {}
    for node in graph.order:
        if node not in graph.dead:
            waves.setdefault(graph.level[node], []).append(node)
    wave_list = [
        {"wave": number, "tasks": [graph.describe(n) for n in sorted(waves[number], key=graph.dispatch_key)]}
        for number in sorted(waves)
    ]
    unschedulable = []
    external, dead = graph.external, graph.dead
    for node in sorted(dead):
        entry = graph.describe(node)
        entry["blocked_by"] = [
            {"id": prereq, "status": graph.status(prereq)}
            for prereq in sorted(graph.prereqs.get(node, ()))
            if prereq in external or prereq in dead
        ]
        unschedulable.append(entry)
    scheduled = sum(len(tasks) for tasks in waves.values())
    return {"waves": wave_list, "unschedulable": unschedulable, "waves_total": len(wave_list),
            "scheduled_tasks": scheduled, "open_tasks": len(graph.nodes)}


def metrics(conn):
    """Graph counters for ``metrics``: queued work held by prerequisites, fleet critical path."""
    queued_blocked = conn.execute(
        "SELECT count(*) FROM tasks t WHERE t.status = 'queued' AND EXISTS ("
        " SELECT 1 FROM dependencies d LEFT JOIN tasks p ON p.id = d.depends_on"
        " WHERE d.task_id = t.id AND (p.status IS NULL OR p.status <> 'completed'))"
    ).fetchone()[0]
    return {"queued_blocked_by_deps": queued_blocked, "critical_path_length": _OpenGraph(conn).length}
