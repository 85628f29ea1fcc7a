"""Dispatch: ``next`` picks the best ready queued task and, with ``claim``, leases it.

Order, best first:
  1. effective priority tier -- the better of
       (a) the stored priority improved by dependency priority inheritance: a queued
           prerequisite inherits the best stored priority among its transitive non-terminal
           dependents (terminal tasks neither confer nor relay urgency), and
       (b) aging: one level per ``aging_minutes`` waited since created_at, at most
           ``aging_boost`` levels (``aging_minutes=0`` or ``aging_boost=0`` disables it);
  2. earliest due_at, undated last;
  3. only with ``prefer_unblocking``: most queued direct dependents first;
  4. oldest created_at;
  5. insertion order (the row's seq): tasks created in the same second drain in the order made.
Candidates are queued tasks in scope (``project``, every ``tag``: a hard filter) whose
prerequisites are all completed, that are neither cooling down (recover_after in the
future) nor deferred (not_before in the future) nor under a live lease, and that pass their
project's dispatch policy; with ``claim`` also free of seam conflicts.

Why it is built this way: agents call ``next`` many times a minute against pools of 100k
queued tasks, so the pool is never loaded into Python.  Aging makes a task's aged tier a pure
function of (priority, created_at): for each (stored priority, tier) pair the members are one
contiguous created_at range of ``idx_tasks_ready`` (the queued tasks whose prerequisites are
all completed: the row's trigger-kept ``unmet_deps`` is 0), and dated members stream from
``idx_tasks_ready_due`` (the ready ones with a deadline) in deadline order (or, when a bounded sample shows the tier's ranges are
small or carry no deadlines up front, are sorted from those ranges).  A tier is therefore a lazy merge of index-ordered
cursors (dated ones first, undated ones after), filtered in SQL, and the walk stops at the
first eligible row.

Inheritance can only lift a task into a better tier than aging gives it, so a tier's
inherited candidates are found among the rows that age into worse tiers -- and only those
ordered before the tier's current best aged row can change the answer.  Whether one of those
inherits is stored on its row: ``dependent_rank`` (migration 23, kept by triggers) is the best
priority among its open dependents, directly or through open ones.  Where the stream reads an
index in order, the probe is a column of the stream's own statement, so the rows piling up
ahead of the head (the front a fleet leaves behind when claims are abandoned) cost no query
and no walk each, and a deadline stream reads them (rank included) from the index entry alone
until one turns out to inherit.  When a tier has no aged row left, or the probes exceed a
budget, the tier's inherited candidates come instead from one recursive walk down the edges
from its open dependents of that priority.  Either way every task is considered once, in the best tier it
reaches, and the fleet-wide fixpoint is never materialised.  A small ``project`` scope uses
``idx_tasks_project_status`` (a small ``tag`` scope the ``task_tags`` index) with sorted
per-tier queries instead, since the global indexes would make it scan everyone else's work.

With ``claim`` the whole pick runs in one ``db.write`` (BEGIN IMMEDIATE) transaction and the
lease is taken there through :func:`mindos.work.leases.acquire`.  Seam conflicts and policy gates
are checked before acquiring, so a gated candidate is skipped (not refused and audited) and
the next candidate is tried; a refused acquisition also moves on to the next candidate.
"""

import itertools
import os

from mindos.core import clock, validate
from mindos.store import db
from mindos.store.sql import OPEN_SQL, TERMINAL_SQL
from mindos.work import rows
from mindos.errors import InvalidInput, Refused

DEFAULT_AGING_MINUTES = 360
DEFAULT_AGING_BOOST = 2
MAX_AGING_MINUTES = 10**6
# A subset of at most 4 * sqrt(pool) queued tasks (clamped to these bounds) is sorted from its
# own index instead of streamed from a global one: a small --project scope, or a tier's dated rows.
SMALL_SCOPE_FLOOR = 64
SMALL_SCOPE = 4000
# Candidates --explain examines past the pick (it walks on to say why lower-ranked ones were
# skipped); beyond this it stops and reports truncated: true.
EXPLAIN_LIMIT = 1000
# Dependency nodes one tier may visit probing upward for inherited urgency before it walks down.
PROBE_BUDGET = 2000

_TIERS = range(len(validate.PRIORITIES))  # 0 (P0) .. 3 (P3)
_UNKNOWN = object()
_OPEN_SQL, _TERMINAL_SQL = OPEN_SQL, TERMINAL_SQL
_RANK = "CAST(substr({row}.priority, 2) AS INTEGER)"  # {row}: the alias of the task row or index entry
_UNSATISFIED = ("SELECT {what} FROM dependencies d LEFT JOIN tasks p INDEXED BY idx_tasks_id_status"
                " ON p.id = d.depends_on"
                " WHERE d.task_id = {row}.id AND (p.status IS NULL OR p.status <> 'completed')")
_QUEUED_DEPENDENTS = ("SELECT {what} FROM dependencies u JOIN tasks q INDEXED BY idx_tasks_id_status ON q.id = u.task_id"
                      " WHERE u.depends_on = t.id AND q.status = 'queued'")
_TIMELY = (
    " AND (t.not_before IS NULL OR t.not_before <= :now)"
    " AND (t.recover_after IS NULL OR t.recover_after <= :now)"
    " AND (t.lease_owner = '' OR t.lease_expires_at IS NULL OR t.lease_expires_at <= :now)"
)
# Readiness (every prerequisite completed) is the row's own ``unmet_deps`` count, kept by the
# schema's triggers: the same answer as asking ``_UNSATISFIED``, and the ready queue has its
# own partial indexes (``_READY_INDEX``, ``_READY_DUE_INDEX``), so the tasks still waiting on
# prerequisites, however many sit at the front of the queue, are never read.  ``--explain``
# (which reports every waiting task it passes, and what it waits for) reads the whole queue's
# indexes and asks ``_UNSATISFIED`` instead.
_ELIGIBLE = _TIMELY + " AND t.unmet_deps = 0"
# The same asked of the deadline index entry ``c`` (the ready index's own condition).
_READY_ENTRY = " AND c.unmet_deps = 0"
_READY_INDEX, _READY_DUE_INDEX = "idx_tasks_ready", "idx_tasks_ready_due"
_QUEUE_INDEX, _QUEUE_DUE_INDEX = "idx_tasks_status_priority", "idx_tasks_queued_due"
# Every task reachable down the edges from an open task of stored priority :p, through open tasks.
_WALK = (
    "WITH RECURSIVE walk(id) AS ("
    " SELECT d.depends_on FROM tasks s INDEXED BY idx_tasks_status_priority"
    f" JOIN dependencies d ON d.task_id = s.id WHERE s.status IN {_OPEN_SQL} AND s.priority = :p"
    " UNION"
    " SELECT d.depends_on FROM walk JOIN tasks m INDEXED BY idx_tasks_id_status ON m.id = walk.id"
    " JOIN dependencies d ON d.task_id = m.id"
    f" WHERE m.status NOT IN {_TERMINAL_SQL})"
)
# Is there an open task of stored priority :p (where _WALK starts)?  One index seek per open
# status: cheaper than the recursive query's setup when there is none.
_ANY_OPEN = "SELECT " + " OR ".join(
    f"EXISTS (SELECT 1 FROM tasks INDEXED BY idx_tasks_status_priority WHERE status = '{status}' AND priority = :p)"
    for status in validate.STATUSES if status not in validate.TERMINAL_STATUSES)
# Calls a long-lived connection (keep_choices) reuses next's source choices for before it
# samples the queue again.
KEEP_CALLS = 32
# The directory of a home that holds its project policies (mindos.work.policies.policy_dir):
# a pick in a home without one never loads the policies module.
_POLICY_DIR = "policies"
# connection -> [key, calls left, choices]: a WeakKeyDictionary made by the first keep_choices
# (a long-lived server's), so a one-shot call never loads weakref (about 2.5M instructions)
_KEPT = None
# The probe, asked inside a ``>`` stream's own statement of each row ``t`` ({row}) it yields (so a
# dispatch runs the same few statements however many rows precede the tier's head): -1 when
# an open dependent of priority <= :want is reachable from t upward through open dependents,
# else 1.  The row's ``dependent_rank`` (migration 23, kept by triggers) is that best
# reachable priority, so the answer is read from the row or index entry, never walked.
# Streams that sort their rows carry NULL instead and are probed one row at a time by
# ``_Plan._probe``.
_PROBE_COLUMN = ", CASE WHEN {row}.dependent_rank <= CAST(substr(:want, 2) AS INTEGER) THEN -1 ELSE 1 END AS _probe"
# The same asked of a deadline index entry ``c`` (which holds the id and the rank), and the
# columns a worse-tier row needs until it turns out to inherit: its place in the order and
# its id.  ``_slim`` says which rows carry only these (see ``_Plan._whole``).
_PROBE_COLUMN, _ENTRY_PROBE_COLUMN = _PROBE_COLUMN.format(row="t"), _PROBE_COLUMN.format(row="c")
_SLIM_COLUMNS = "c.id, c.due_at, c.created_at, c.seq, c.priority"
_NO_PROBE_COLUMN = ", NULL AS _probe"
# What a row probed by its stream's own probe column costs of PROBE_BUDGET (a row probed by a
# query of its own costs 1): the column costs a fraction of a query per row, so the walk
# down (a few hundred million instructions on a 100k-task home) is chosen only once the
# rows ahead of the head would cost more than it.
STREAM_PROBE_SHARE = 0.125
# Open direct dependents of a batch of tasks, with their stored priorities.
_OPEN_DEPENDENTS = ("SELECT d.task_id, m.priority, d.depends_on FROM dependencies d"
                    " JOIN tasks m INDEXED BY idx_tasks_id_status ON m.id = d.task_id"
                    f" WHERE d.depends_on IN ({{marks}}) AND +m.status IN {_OPEN_SQL}")


def _merge(*iterables, key):
    """``heapq.merge``, heapq loaded by the first merge: most picks are made before any
    stream is merged, so a one-shot call never loads it."""
    from heapq import merge  # lazy

    return merge(*iterables, key=key)


def next_task(conn, *, project=None, tags=(), claim=False, owner=None, minutes=None, max_active=None,
              explain=False, prefer_unblocking=False, aging_minutes=DEFAULT_AGING_MINUTES,
              aging_boost=DEFAULT_AGING_BOOST):
    """Pick the best dispatchable task; with ``claim`` lease it to ``owner`` atomically.

    Returns ``{"task": <task dict> | None}``; with ``claim`` the task is the claimed one
    (status ``claimed``, its new ``lease_epoch``).  Optional keys appear only under their flag:
    ``prefer_unblocking`` adds ``unblocks`` to the pick; ``explain`` adds ``considered`` (the
    queued candidates in scope examined: all of them, or up to ``EXPLAIN_LIMIT`` past the pick
    with ``truncated: true`` when more remain), ``skipped`` (``[{"task_id", "reason", ...}]``
    for every one that could not be dispatched, above or below the pick)
    and, on the pick, ``effective_priority``, ``priority_boost`` and ``inherited_via``
    (plus ``unblock_scheduling: true`` with ``prefer_unblocking``).  Claiming audits
    ``claimed`` (via ``next``); nothing else is written.
    """
    if project is not None:
        project = validate.identifier(project, "--project")
    scope_tags = validate.tags(tags)
    if owner is not None:
        owner = validate.agent(owner)
    if claim and owner is None:
        raise InvalidInput("--claim requires --owner (who takes the lease)")
    cap = None
    if claim or minutes is not None or max_active is not None:
        # a read-only pick (prime's) takes no lease, so unless given a window or a cap to check
        # it reads neither, nor the owner's cap from the environment (about 0.8M instructions)
        from mindos.work import leases  # lazy: only a claim, or a window or cap to check

        minutes = leases.check_minutes(leases.DEFAULT_MINUTES if minutes is None else minutes)
        cap = leases.max_active_cap(max_active)
    aging_minutes = validate.positive_int(aging_minutes, "--aging-minutes", minimum=0, maximum=MAX_AGING_MINUTES)
    aging_boost = validate.positive_int(aging_boost, "--aging-boost", minimum=0, maximum=len(_TIERS) - 1)
    options = (project, scope_tags, explain, prefer_unblocking, aging_minutes, aging_boost)
    kept = _kept_choices(conn, (aging_minutes, aging_boost))
    if not claim:
        # one read transaction: one snapshot, and the connection's page cache is checked
        # against other writers once instead of before each statement
        with db.read(conn):
            return _dispatch(conn, _Plan(conn, *options, choices=kept), owner, None)
    # lazy: the claim path needs it; loaded before the write lock so it guards SQL, not imports
    from mindos.work import policies  # noqa: F401
    # While another writer holds the lock, a dry pass first: it prepares every statement the
    # claim will run (sqlite3 caches them per connection) and reads their pages, so the
    # locked pass below only re-walks warm data.  Under many writers that shortens each
    # holder's turn; with the lock free it would only repeat the walk.  The locked pass
    # reuses the dry pass's choices of source (``choices``): they only decide how fast the
    # same rows come out, so it skips the sampling queries that made them.
    choices = {} if kept is None else kept
    # in a group commit the lock is held already: no dry pass
    if not conn.in_transaction and not db.lock_is_free(conn):
        _dispatch(conn, _Plan(conn, *options, choices=choices), owner, None)
    with db.write(conn):
        plan = _Plan(conn, *options, choices=choices)  # inside the lock: "now" is the moment the pick is made
        if cap is not None:
            held = leases.live_lease_count(conn, owner, plan.now)
            if held >= cap:
                raise Refused(f"owner '{owner}' at lease capacity ({held}/{cap})")
        return _dispatch(conn, plan, owner, {"minutes": minutes, "max_active": max_active, "cap": cap,
                                             "now": plan.now})


def keep_choices(conn):
    """Let ``conn`` (a long-lived server's connection) keep the source choices of ``next``
    between calls, re-sampling the queue every :data:`KEEP_CALLS` calls.

    A choice (the pool's sample size, and for each dated stream whether it reads the
    deadline index or sorts its created_at ranges) only decides how fast the same rows come
    out, never which rows or in what order, so a choice made a few calls ago, before other
    processes changed the queue, still gives the answer a fresh one would.
    """
    global _KEPT
    if _KEPT is None:
        import weakref  # lazy: only a long-lived connection keeps choices

        _KEPT = weakref.WeakKeyDictionary()
    _KEPT[conn] = None


def _kept_choices(conn, key):
    """The choices ``conn`` keeps for plans of ``key`` (aging settings), or None when it keeps none."""
    if _KEPT is None or conn not in _KEPT:
        return None
    kept = _KEPT[conn]
    if kept is None or kept[0] != key or kept[1] <= 0:
        kept = _KEPT[conn] = [key, KEEP_CALLS, {}]
    kept[1] -= 1
    return kept[2]


def _dispatch(conn, plan, owner, claim):
    """Walk the candidates in order; return the result dict (see :func:`next_task`)."""
    skipped, considered, picked, truncated = [], 0, None, False
    if claim is None and not os.path.isdir(os.path.join(conn.home, _POLICY_DIR)):
        # a read-only pick in a home without a policy directory: no project has a policy, so
        # no candidate is gated and the policies module is never loaded (about 1.2M instructions)
        policies = lookup = None
    else:
        from mindos.work import policies  # lazy: loaded only on the path that needs it

        lookup = policies.Lookup(conn.home)  # the policy files, read once for every candidate
    try:
        for tier, row in plan.candidates():
            if picked is not None and considered - picked[4] >= EXPLAIN_LIMIT:
                truncated = True  # more candidates remain past the cap: say so, never pretend
                break
            considered += 1
            task = rows.row_to_task(row)
            unblocks = task.pop("_unblocks", None)
            blocked_by = task.pop("_blocked_by", None)
            task.pop("_probe", None)  # the ``>`` streams' working columns: never part of the task shown
            task.pop("_slim", None)
            skip = plan.static_skip(task, blocked_by)
            if skip is None and claim is not None:
                skip = _seam_skip(conn, task, owner, plan.now)
            if skip is None and lookup is not None:
                skip = _policy_skip(conn, policies, task, owner, lookup)
            if skip is None and claim is not None and picked is None:
                task, skip = _acquire(conn, task, owner, tier, claim, lookup)
            if skip is not None:
                if plan.explain:
                    skipped.append({"task_id": row["id"], **skip})
                continue
            if picked is None:
                picked = (tier, row, task, unblocks, considered)
                if not plan.explain:
                    break
            # --explain walks on past the pick: a ready candidate ranked below it was
            # outranked, not skipped; one that could not be dispatched is reported with why
    finally:
        plan.close()
    result = {"task": None}
    if picked is not None:
        tier, row, task, unblocks, _ = picked
        if plan.prefer_unblocking:
            task["unblocks"] = unblocks
        if plan.explain:
            task["effective_priority"] = validate.PRIORITIES[tier]
            task["priority_boost"] = plan.rank(row["priority"]) - plan.aged(row)
            task["inherited_via"] = plan.inherited_via(row["id"], tier)
        result["task"] = task
    if plan.explain:
        result["considered"] = considered
        result["skipped"] = skipped
        if truncated:
            result["truncated"] = True
        if plan.prefer_unblocking:
            result["unblock_scheduling"] = True
    return result


def _seam_skip(conn, task, owner, now):
    from mindos.work import leases  # lazy: loaded only on the path that needs it

    conflicts = leases.seam_conflicts(conn, task, owner, now)
    return {"reason": "seam_conflict", "holders": conflicts} if conflicts else None


def _policy_skip(conn, policies, task, owner, lookup):
    try:
        gate = policies.dispatch_gate(conn, task, owner, lookup)
    except Refused as exc:  # a malformed policy fails closed for its project only
        return {"reason": "policy_invalid", "error": str(exc)}
    return dict(gate) if gate else None


def _acquire(conn, task, owner, tier, claim, lookup):
    """Lease ``task`` inside the open transaction; return ``(task, skip)``."""
    from mindos.work import leases  # lazy: loaded only on the path that needs it

    try:
        claimed = leases.acquire(conn, task, owner, minutes=claim["minutes"], max_active=claim["max_active"],
                                 now=claim["now"], policy_lookup=lookup,
                                 payload={"via": "next", "effective_priority": validate.PRIORITIES[tier]})
    except Refused as exc:
        cap = claim["cap"]
        if cap is not None:
            held = leases.live_lease_count(conn, owner, claim["now"])
            if held >= cap:  # capacity is the owner's, not the candidate's: stop here
                raise Refused(f"owner '{owner}' at lease capacity ({held}/{cap})") from None
        return task, {"reason": "claim_refused", "error": str(exc)}
    return claimed, None


class _Plan:
    """The SQL of one dispatch: scope, aging thresholds and the ordered candidate streams."""

    def __init__(self, conn, project, scope_tags, explain, prefer_unblocking, aging_minutes, aging_boost,
                 choices=None):
        from datetime import timedelta

        self.conn = conn
        # which source each dated stream reads, keyed by (tier, op), with the pool's sample
        # size: filled by the first plan of a call, reused by a second one (see next_task)
        self.choices = {} if choices is None else choices
        self.explain = explain
        self.prefer_unblocking = prefer_unblocking
        moment = clock.now()
        self.now = clock.format_ts(moment)
        self.boost = aging_boost if aging_minutes else 0
        self.params = {"now": self.now, "boost": self.boost, "project": project}
        # t<k>: created at or before it means at least k aging levels waited
        self.thresholds = {k: clock.format_ts(moment - timedelta(minutes=k * aging_minutes)) for k in _TIERS if k}
        for k, value in self.thresholds.items():
            self.params[f"t{k}"] = value
        if self.boost:
            levels = " + ".join(f"({{row}}.created_at <= :t{k})" for k in self.thresholds)
            aged = f"max(0, {_RANK} - min(:boost, {levels}))"
        else:
            aged = _RANK
        self.aged_sql, self.aged_entry_sql = aged.format(row="t"), aged.format(row="c")  # the row's, the entry's
        self.tag_sql = ""
        for number, tag in enumerate(scope_tags):
            self.params[f"tag{number}"] = f'"{tag}"'  # tags are stored as a JSON array of validated tokens
            self.tag_sql += f" AND instr(t.tags, :tag{number}) > 0"
        self.scope = (" AND t.project = :project" if project is not None else "") + self.tag_sql
        self.filters = "" if explain else _ELIGIBLE
        # the queue's indexes the streams read: only the ready tasks when the filters ask for them
        self.queue_index, self.due_index = (_QUEUE_INDEX, _QUEUE_DUE_INDEX) if explain else (
            _READY_INDEX, _READY_DUE_INDEX)
        extra = []
        if prefer_unblocking:
            extra.append(f", ({_QUEUED_DEPENDENTS.format(what='count(*)')}) AS _unblocks")
        if explain:
            extra.append(f", ({_UNSATISFIED.format(what='group_concat(d.depends_on, char(31))', row='t')}) AS _blocked_by")
        self.extra = "".join(extra)
        # sorting a subset costs its size; streaming a global index for it costs about
        # pool/size rows per stream head: the break-even is near 4 * sqrt(pool)
        if "sample" not in self.choices:
            pool = conn.execute("SELECT max(seq) FROM tasks").fetchone()[0] or 0
            self.choices["sample"] = min(SMALL_SCOPE, max(SMALL_SCOPE_FLOOR, 4 * int(pool ** 0.5)))
        self.sample = self.choices["sample"]
        # A small scope is read whole from its own index and sorted: a --project through
        # idx_tasks_project_status, else a --tag through the task_tags index.
        self.small_scope = None  # (FROM ... WHERE <scope key>, the rest of the scope filter)
        limit = self.sample
        if project is not None and conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM tasks INDEXED BY idx_tasks_project_status"
                " WHERE project = ? AND status = 'queued' LIMIT ?)", (project, limit + 1)).fetchone()[0] <= limit:
            self.small_scope = ("FROM tasks t INDEXED BY idx_tasks_project_status WHERE t.project = :project",
                                self.tag_sql)
        for number, tag in enumerate(scope_tags):
            if self.small_scope is not None:
                break
            if conn.execute(
                    "SELECT count(*) FROM (SELECT 1 FROM task_tags g CROSS JOIN tasks t ON t.id = g.task_id"
                    " WHERE g.tag = ? AND t.status = 'queued' LIMIT ?)", (tag, limit + 1)).fetchone()[0] <= limit:
                self.params["small_tag"] = tag
                self.small_scope = ("FROM task_tags g CROSS JOIN tasks t ON t.id = g.task_id WHERE g.tag = :small_tag",
                                    self.scope)
        self.inherited = {}  # id -> the tier an inherited candidate was considered in
        self.considered = set()
        self._cursors = []
        self._worst_in_scope = _UNKNOWN
        self._any_dated = None  # does any task carry a deadline (asked once, when a dated stream first opens)

    # -- row helpers ---------------------------------------------------------------------

    @staticmethod
    def rank(priority):
        return validate.PRIORITIES.index(priority) if priority in validate.PRIORITIES else len(_TIERS) - 1

    def aged(self, row):
        """The tier aging alone gives ``row``."""
        levels = sum(1 for value in self.thresholds.values() if row["created_at"] <= value)
        return max(0, self.rank(row["priority"]) - min(self.boost, levels))

    def key(self, row):
        due = row["due_at"]
        return (due is None, due or "", -row["_unblocks"] if self.prefer_unblocking else 0,
                row["created_at"], row["seq"])

    def static_skip(self, task, blocked_by):
        """Explain mode only (SQL filters these otherwise): why ``task`` is not dispatchable."""
        if not self.explain:
            return None
        if blocked_by:
            skip = {"reason": "unsatisfied_dependencies", "blocked_by": sorted(blocked_by.split("\x1f"))}
            # a task requeued by ``fail --cause defect`` waits for its correction task: name it
            corrections = [row[0] for row in self.conn.execute(
                "SELECT id FROM tasks WHERE correction_of = ? AND correction_of <> '' ORDER BY id", (task["id"],))
                if row[0] in skip["blocked_by"]]
            if corrections:
                skip["awaiting_correction"] = corrections
            return skip
        if task["recover_after"] and task["recover_after"] > self.now:
            return {"reason": "recovery_backoff", "recover_after": task["recover_after"]}
        if task["not_before"] and task["not_before"] > self.now:
            return {"reason": "deferred_until", "not_before": task["not_before"]}
        if task["lease_owner"] and task["lease_expires_at"] and task["lease_expires_at"] > self.now:
            return {"reason": "live_lease", "lease_owner": task["lease_owner"],
                    "lease_expires_at": task["lease_expires_at"]}
        return None

    def inherited_via(self, task_id, tier):
        """The direct dependent that conferred ``tier`` (P0 c -> P2 b -> P3 a reports b for a:
        b passed c's urgency on), or None when aging/stored priority did.

        Breadth first through open dependents, one query per level (in chunks), each task once,
        remembering through which direct dependent each was reached; at the nearest depth
        holding a source of ``tier``, the smallest such direct dependent wins.
        """
        if self.inherited.get(task_id) != tier:
            return None
        wanted = validate.PRIORITIES[tier]
        seen, level, via = {task_id}, [task_id], {}
        while level:
            reached, sources = {}, set()
            for start in range(0, len(level), 500):
                chunk = level[start:start + 500]
                sql = _OPEN_DEPENDENTS.format(marks=", ".join("?" * len(chunk)))
                for dependent, priority, parent in self.conn.execute(sql, chunk):
                    if dependent in seen:
                        continue
                    route = dependent if parent == task_id else via[parent]
                    reached[dependent] = min(route, reached.get(dependent, route))  # the smallest route wins
                    if priority <= wanted:
                        sources.add(dependent)
            if sources:
                return min(reached[dependent] for dependent in sources)
            seen.update(reached)
            via.update(reached)
            level = sorted(reached)
        return None

    # -- streams -------------------------------------------------------------------------

    def _rows(self, sql, **params):
        cursor = self.conn.execute(sql, {**self.params, **params})
        self._cursors.append(cursor)
        return cursor

    def close(self):
        for cursor in self._cursors:
            cursor.close()
        self._cursors = []

    def candidates(self):
        """Yield ``(tier, row)`` for every in-scope queued candidate, best first, each once."""
        for tier in _TIERS:
            for row in self._tier(tier):
                if row["id"] in self.considered:
                    continue  # already considered in the better tier it inherited
                self.considered.add(row["id"])
                yield tier, row

    def _tier(self, tier):
        """Tier ``tier`` in order: its aged candidates merged with the ones that inherit it.

        An inherited candidate ages into a worse tier, so it sits in the ``>`` streams.  While
        the tier has an aged head ``a``, only the ``>`` rows ordered before ``a`` can matter;
        each is probed upward for an open dependent of this tier.  When the tier runs out of
        aged rows, or the probes outgrow their budget, the rest comes from one walk down from
        the tier's open sources instead.
        """
        aged = self._ordered(tier, "=")
        head = next(aged, None)
        if head is None:
            if self.scope and not self._scope_has_worse(tier):
                return  # nothing in scope could inherit this tier: skip the fleet-wide walk
            yield from self._walked(tier, None)
            return
        others = self._ordered(tier, ">", head)
        other = next(others, None)
        budget = PROBE_BUDGET
        while True:
            head_key = None if head is None else self.key(head)  # once per head, not per row ahead of it
            while other is not None and (head is None or self.key(other) < head_key):
                if other["id"] not in self.considered:
                    verdict = None if head is None else self._verdict(other, tier, budget)
                    if verdict is None:  # out of aged rows or probe budget: walk the rest
                        rest = [head] if head is not None else []
                        yield from _merge(itertools.chain(rest, aged), self._walked(tier, other),
                                               key=self.key)
                        return
                    hit, used = verdict
                    budget -= used
                    whole = self._whole(other) if hit and other["_slim"] else other
                    if hit and whole is not None:
                        self.inherited[other["id"]] = tier
                        yield whole
                other = next(others, None)
            if head is None:
                return
            yield head
            head = next(aged, None)

    def _scope_has_worse(self, tier):
        """True when the scope holds a queued task aged into a tier worse than ``tier``.

        Only such a task can inherit ``tier``; for a narrow or empty --project/--tag scope this
        check (one indexed query per dispatch, cached) saves the walk down from every open
        task of that priority fleet-wide.
        """
        if self._worst_in_scope is _UNKNOWN:
            source, rest = self.small_scope or ("FROM tasks t WHERE 1", self.scope)
            self._worst_in_scope = self.conn.execute(
                f"SELECT max({self.aged_sql}) {source} AND t.status = 'queued'{rest}", self.params,
            ).fetchone()[0]
        return self._worst_in_scope is not None and self._worst_in_scope > tier

    def _whole(self, row):
        """The full row of a slim ``>`` row that inherits, or None when it fails the scope or
        eligibility tests its slim stream left out (they read the row; a row that does not
        inherit never needs them)."""
        return self.conn.execute(
            f"SELECT t.*{self.extra}{_NO_PROBE_COLUMN}, 0 AS _slim FROM tasks t WHERE t.seq = :seq"
            f" AND t.status = 'queued'{self.scope}{self.filters}", {**self.params, "seq": row["seq"]}).fetchone()

    def _verdict(self, row, tier, budget):
        """:meth:`_probe`'s answer for the ``>`` stream row ``row``, read from the row's own
        ``_probe`` column when its stream computed one (see ``_PROBE_COLUMN``)."""
        found = row["_probe"]
        if found is None or budget <= 1:
            return self._probe(row["id"], tier, budget)
        if STREAM_PROBE_SHARE >= budget:
            return None
        return found < 0, STREAM_PROBE_SHARE

    def _probe(self, task_id, tier, budget):
        """``(True|False, 1)``: has ``task_id`` an open dependent of priority <= tier, directly or
        through open ones?  Read from its stored ``dependent_rank`` (one lookup by id); None
        when the budget is spent."""
        if budget <= 1:
            return None
        found = self.conn.execute("SELECT dependent_rank FROM tasks WHERE id = ?", (task_id,)).fetchone()
        return found is not None and found[0] <= tier, 1

    def _walked(self, tier, after):
        """Candidates inheriting ``tier`` (from one walk down), ordered, from key(after) on."""
        priority = validate.PRIORITIES[tier]
        if not self.conn.execute(_ANY_OPEN, {"p": priority}).fetchone()[0]:
            return []  # no open task of that priority: the walk has nowhere to start
        sql = (f"{_WALK} SELECT t.*{self.extra} FROM walk JOIN tasks t ON t.id = walk.id"
               f" WHERE t.status = 'queued' AND {self.aged_sql} > :tier{self.scope}{self.filters}")
        bound = self.key(after) if after is not None else None
        rows = [row for row in self._rows(sql, p=priority, tier=tier)
                if row["id"] not in self.considered and (bound is None or self.key(row) >= bound)]
        rows.sort(key=self.key)
        for row in rows:
            self.inherited[row["id"]] = tier
        return rows

    def _ordered(self, tier, op, head=None):
        """Queued candidates whose aged tier is ``op`` (``=`` or ``>``) ``tier``, in key order.

        ``head`` (for ``>``): the tier's first aged row.  A worse-tier row ordered before it
        matters only if it inherits the tier, so the streams read in index order leave out,
        in SQL, the rows before it whose stored rank does not reach the tier (see
        :meth:`_ahead`): the front a fleet leaves behind when claims are abandoned is passed
        over inside the index scan, never handed to Python one row at a time."""
        order_u = "_unblocks DESC, " if self.prefer_unblocking else ""
        if self.small_scope is not None:
            source, rest = self.small_scope
            sql = (f"SELECT t.*{self.extra}{self._probe_sql(op, False)} {source} AND t.status = 'queued'"
                   f" AND {self.aged_sql} {op} :tier"
                   f"{rest}{self.filters}"
                   f" ORDER BY t.due_at IS NULL, t.due_at, {order_u}t.created_at, t.seq")
            yield from self._rows(sql, tier=tier)
            return
        yield from self._dated(tier, op, order_u, head)
        # undated rows only once every dated one is out: their cursors start lazily here
        yield from _merge(*self._undated(tier, op, head), key=self.key)

    def _ahead(self, head, dated):
        """``(SQL, params)`` leaving out of a ``>`` stream the rows ordered before ``head`` that
        do not inherit the tier (``:want``); ``dated``: the deadline stream (index entry ``c``),
        else an undated range (``t``, ordered by created_at and seq)."""
        if head is None or self.prefer_unblocking:
            return "", {}
        inherits = "{row}.dependent_rank <= CAST(substr(:want, 2) AS INTEGER)"
        if dated:
            if head["due_at"] is None:  # every dated row comes before an undated head
                return " AND " + inherits.format(row="c"), {}
            return (f" AND ({inherits.format(row='c')} OR c.due_at > :head_due OR c.due_at = :head_due"
                    " AND (c.created_at > :head_created OR c.created_at = :head_created AND c.seq >= :head_seq))",
                    {"head_due": head["due_at"], "head_created": head["created_at"], "head_seq": head["seq"]})
        if head["due_at"] is not None:
            return "", {}  # no undated row comes before a dated head
        return (f" AND ({inherits.format(row='t')} OR t.created_at > :head_created"
                " OR t.created_at = :head_created AND t.seq >= :head_seq)",
                {"head_created": head["created_at"], "head_seq": head["seq"]})

    def _ranges(self, tier, op):
        """``[(stored priority, created_at range SQL)]`` covering the rows aged ``op`` ``tier``."""
        ranges = []
        for stored in _TIERS:
            bounds = self._created_bounds(stored, tier, op)
            if bounds is None:
                continue
            low, high = bounds
            where = ""
            if low is not None:
                where += f" AND t.created_at > :t{low}"
            if high is not None:
                where += f" AND t.created_at <= :t{high}"
            ranges.append((validate.PRIORITIES[stored], where))
        return ranges

    def _dated(self, tier, op, order_u, head=None):
        """The dated rows aged ``op`` ``tier`` in deadline order, from the cheaper source.

        The deadline index finds them fast when they are common among many rows; a small
        set, or one whose leading rows carry no deadline, is cheaper sorted from its own
        created_at ranges (sampled here through at most ``sample`` rows per range).
        """
        ranges = self._ranges(tier, op)
        if not ranges:
            return
        if self._any_dated is None:
            # one seek in the queued deadline index: with no queued deadline (a common fleet)
            # every dated stream is empty, and a range's own index would scan all of it to show that
            ready = "" if self.explain else " AND unmet_deps = 0"  # the condition of the index read
            self._any_dated = self.conn.execute(
                f"SELECT EXISTS (SELECT 1 FROM tasks INDEXED BY {self.due_index}"
                f" WHERE status = 'queued' AND due_at IS NOT NULL{ready})").fetchone()[0]
        if not self._any_dated:
            return
        if (tier, op) not in self.choices:
            self.choices[tier, op] = self._use_deadline_index(ranges)
        if self.choices[tier, op]:
            # the index entry (c) is filtered by tier and readiness first; the row (t) is read
            # for the ones that pass
            aged, filters = self.aged_entry_sql, (_READY_ENTRY + _TIMELY if self.filters else "")
            want = validate.PRIORITIES[tier]
            if op == ">" and self.filters and not self.scope and not self.extra:
                # worse-tier rows are read from the index entry alone, probe included: most
                # do not inherit, and those never need their table row (see _whole)
                ahead, bound = self._ahead(head, True)
                yield from self._rows(
                    f"SELECT {_SLIM_COLUMNS}{_ENTRY_PROBE_COLUMN}, 1 AS _slim FROM tasks c INDEXED BY {self.due_index}"
                    f" WHERE c.status = 'queued' AND c.due_at IS NOT NULL AND {aged} > :tier{_READY_ENTRY}{ahead}"
                    " ORDER BY c.due_at, c.created_at, c.seq", tier=tier, want=want, **bound)
                return
            yield from self._rows(
                f"SELECT t.*{self.extra}{self._probe_sql(op, True)}"
                f" FROM tasks c INDEXED BY {self.due_index} CROSS JOIN tasks t ON t.seq = c.seq"
                f" WHERE c.status = 'queued' AND c.due_at IS NOT NULL AND {aged} {op} :tier"
                f"{self.scope}{filters} ORDER BY c.due_at, {order_u}c.created_at, c.seq", tier=tier, want=want)
            return
        yield from _merge(*(self._rows(
            f"SELECT t.*{self.extra}{self._probe_sql(op, False)} FROM tasks t INDEXED BY {self.queue_index}"
            f" WHERE t.status = 'queued' AND t.priority = :stored AND t.due_at IS NOT NULL{where}"
            f"{self.scope}{self.filters} ORDER BY t.due_at, {order_u}t.created_at, t.seq", stored=stored)
            for stored, where in ranges), key=self.key)

    def _use_deadline_index(self, ranges):
        """True when the ranges hold many rows and deadlines show up among their first ones.

        Proving a range large reads ``sample`` + 1 index entries, so the ranges most likely
        to be large (no lower created_at bound: all of a priority, or its older part) are
        tried first, and none is sized once one was found large."""
        small, dense = True, False
        for stored, where in sorted(ranges, key=lambda item: "created_at >" in item[1]):
            params = {**self.params, "stored": stored, "m": self.sample}
            head = (f"FROM tasks t INDEXED BY idx_tasks_status_priority WHERE t.status = 'queued'"
                    f" AND t.priority = :stored{where}")
            if small and self.conn.execute(f"SELECT EXISTS (SELECT 1 {head} LIMIT 1 OFFSET :m)", params).fetchone()[0]:
                small = False
            if not dense:
                dense = self.conn.execute(
                    f"SELECT EXISTS (SELECT 1 FROM (SELECT t.due_at {head} LIMIT :m) WHERE due_at IS NOT NULL)",
                    params).fetchone()[0] == 1
            if dense and not small:
                return True
        return False

    @staticmethod
    def _probe_sql(op, streamed):
        """The ``_probe`` column of a ``>`` stream: computed in the statement when its rows come
        in index order (``streamed``), NULL when it sorts them (see ``_PROBE_COLUMN``)."""
        if op != ">":
            return ""
        return (_PROBE_COLUMN if streamed else _NO_PROBE_COLUMN) + ", 0 AS _slim"

    def _undated(self, tier, op, head=None):
        no_hub = ""
        if self.prefer_unblocking:
            # tasks with queued dependents come from the hub stream, ordered by that count
            no_hub = f" AND NOT EXISTS ({_QUEUED_DEPENDENTS.format(what='1')})"
            yield self._rows(
                "WITH hub(id, n) AS (SELECT u.depends_on, count(*) FROM dependencies u"
                " JOIN tasks q ON q.id = u.task_id WHERE q.status = 'queued' GROUP BY u.depends_on)"
                f" SELECT t.*{self.extra}{self._probe_sql(op, False)} FROM hub JOIN tasks t ON t.id = hub.id"
                f" WHERE t.status = 'queued' AND t.due_at IS NULL AND {self.aged_sql} {op} :tier{self.scope}"
                f"{self.filters} ORDER BY hub.n DESC, t.created_at, t.seq",
                tier=tier,
            )
        ahead, bound = self._ahead(head, False) if op == ">" else ("", {})
        for stored, where in self._ranges(tier, op):
            yield self._rows(
                f"SELECT t.*{self.extra}{self._probe_sql(op, True)} FROM tasks t INDEXED BY {self.queue_index}"
                f" WHERE t.status = 'queued' AND t.priority = :stored AND t.due_at IS NULL{where}"
                f"{self.scope}{self.filters}{no_hub}{ahead} ORDER BY t.created_at, t.seq",
                stored=stored, want=validate.PRIORITIES[tier], **bound,
            )

    def _created_bounds(self, stored, tier, op):
        """Which created_at range of priority ``stored`` ages to a tier ``op`` ``tier``.

        Returns ``(low, high)`` threshold numbers (``created_at > t<low>``, ``created_at <=
        t<high>``; None = unbounded), or None when no task of that priority qualifies.
        Aging lifts ``min(boost, levels waited)`` levels, floored at P0.
        """
        levels = stored - tier
        if op == ">":
            if levels <= 0:
                return None
            # lifted fewer than `levels` levels: waited fewer, unless the cap already stops it
            return (None, None) if self.boost < levels else (levels, None)
        if levels < 0 or levels > self.boost:
            return None
        high = levels or None
        low = levels + 1 if tier > 0 and levels < self.boost else None
        return low, high
