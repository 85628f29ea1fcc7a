"""``ops.py sense``: typed, content-hashed findings across the home; reads only.

A finding is ``{"kind", "subjects", "severity", "detail", "source", "digest"}``.  The digest
is the SHA-256 of the canonical JSON of kind, subjects and detail -- state-derived fields
only, never "how long ago" or "now" -- so identical state gives identical findings and a
problem that persists keeps its digest from tick to tick (the nanny carries it forward by
that digest instead of narrating it again).

Severities say what a finding asks of the fleet:
  snag      bounded work is blocked or needs correction (a repair may answer it)
  decision  a human approval, an integrity question or a breaker decision is required
  info      worth knowing, nothing to act on (a legacy recall whose freshness cannot be proven)

Sources are small adapters over the domains that own each rule, declared in
:data:`SOURCES` with the kinds they produce: the doctor (integrity, foreign keys, receipt
files, the audit chain and checkpoints, supersession, FTS drift), the lease, deadline,
heartbeat and status sweeps, stalled leases (progress unchanged past the stall deadline),
expired grants, recall-stale and orphan receipt files.
:data:`NARROW` re-checks one kind cheaply, so the nanny can re-sense just the kinds a repair
touched and compare digests.  None of them writes: sense leaves the database and every file
byte-identical (tested by comparing bytes before and after).
"""

from mindos.core import canonical, clock, validate
from mindos.store import fts, sql

LIMIT = 100              # findings listed per kind; the totals stay exact
STALL_MINUTES = 60       # a held, running task with no heartbeat for this long is stalled
SEVERITIES = ("snag", "decision")
DECISION_STATUSES = ("waiting_for_user", "ready_to_merge", "ready_to_deploy")


def finding(kind, subjects, severity, detail, source):
    """One finding with its digest over kind, subjects and detail."""
    subjects = [str(subject) for subject in subjects]
    return {"kind": kind, "subjects": subjects, "severity": severity, "detail": detail, "source": source,
            "digest": canonical.digest({"kind": kind, "subjects": subjects, "detail": detail})}


class _Out:
    """Collects one source's findings, capped per kind, with exact totals."""

    def __init__(self, source, limit, since=None, include=(), pins=None, chain_window=None, part=None, keep=None):
        self.source, self.limit, self.items, self.totals = source, limit, [], {}
        self.since, self.include, self.pins, self.chain_window = since, include, pins, chain_window
        self.part, self.keep = part, keep

    def add(self, kind, subjects, severity, detail):
        self.totals[kind] = self.totals.get(kind, 0) + 1
        if self.totals[kind] <= self.limit:
            self.items.append(finding(kind, subjects, severity, detail, self.source))

    def total(self, kind, count):
        """Set an exact total counted in SQL (the listed rows were fetched with a LIMIT)."""
        if count:
            self.totals[kind] = count


# ---------------------------------------------------------------------------------------
# Sources (adapters over the owning domains)


# the doctor's problem kinds that are a person's call (evidence or the record itself is in
# question); every other doctor problem is a snag
DOCTOR_DECISIONS = frozenset({
    "hash_mismatch", "broken_link", "chain_truncated", "checkpoint_head_mismatch", "events_removed_since_checkpoint",
    "checkpoint_invalid", "database_integrity", "schema_version_mismatch", "receipt_file_hash_mismatch",
    "receipt_file_missing", "receipt_path_outside_home"})
# the doctor's checkpoint problems (the nanny's automatic pin reuses them instead of sweeping
# the checkpoints a second time)
CHECKPOINT_KINDS = frozenset({"chain_truncated", "checkpoint_head_mismatch", "events_removed_since_checkpoint",
                              "checkpoint_invalid"})
# the doctor's kinds per sweep family (:data:`mindos.recovery.doctor.FAMILIES`): a tick that
# did not run a family in full carries that family's earlier findings forward
FAMILY_KINDS = {"integrity": frozenset({"database_integrity", "task_readiness_drift"}),
                "audit_chain": frozenset({"hash_mismatch", "broken_link", "undecodable_event"}),
                "receipts": frozenset({"receipt_file_missing", "receipt_file_hash_mismatch",
                                       "receipt_path_outside_home"}),
                "fts_drift": frozenset({"fts_index_drift"}),
                "references": frozenset({"orphan_dependency", "orphan_note", "orphan_handoff", "orphan_receipt",
                                         "orphan_heartbeat", "foreign_key_violation", "dangling_supersession",
                                         "multiple_live_handoffs", "dangling_fact_reference"})}
# doctor kinds another source reports with the detail its repair needs
DOCTOR_SKIPS = frozenset({"stale_lease"})
# the fields naming what a doctor problem is about, in subject order
SUBJECT_KEYS = ("index", "table", "task_id", "event_id", "note_id", "handoff_id", "receipt_id", "fact_id", "path")
# per kind, the detail fields kept: counts that move with unrelated rows (an index's size)
# would make a standing problem look new on every tick
DETAIL_KEYS = {"fts_index_drift": ("method", "missing_total", "stale_total")}


def _doctor(conn, out, now):
    """The doctor's read-only sweep (integrity, foreign keys, receipts, the audit chain and
    checkpoints, supersession, facts, FTS drift), one finding per problem."""
    from mindos.recovery import doctor  # lazy: the doctor loads its checkpoint and replication readers

    report = doctor.sweep(conn, since=out.since, include=out.include, chain_window=out.chain_window, part=out.part,
                          counts=False)
    for problem in report["problems"]:
        kind = problem["kind"]
        if out.pins is not None and kind in CHECKPOINT_KINDS:
            out.pins.append(dict(problem))
        if kind in DOCTOR_SKIPS:
            continue
        subjects = [problem[key] for key in SUBJECT_KEYS if key in problem] or [kind]
        keep = DETAIL_KEYS.get(kind)
        detail = {key: value for key, value in problem.items()
                  if key != "kind" and key not in SUBJECT_KEYS and (keep is None or key in keep)}
        out.add(kind, subjects, "decision" if kind in DOCTOR_DECISIONS else "snag", detail)
    for kind, count in report["problems_by_kind"].items():  # the doctor lists 100 per kind; totals are exact
        if kind not in DOCTOR_SKIPS:
            out.totals[kind] = count


def _leases(conn, out, now):
    """Stale leases: held leases past expiry on open tasks (what ``recover`` requeues)."""
    where = (f"lease_owner <> '' AND (lease_expires_at IS NULL OR lease_expires_at <= ?) AND {sql.open_condition()}")
    out.total("stale_lease", conn.execute(f"SELECT count(*) FROM tasks WHERE {where}", (now,)).fetchone()[0])
    for row in conn.execute(f"SELECT id, lease_owner, lease_expires_at, lease_epoch, retry_count FROM tasks"
                            f" WHERE {where} ORDER BY +id LIMIT ?", (now, out.limit)):
        out.items.append(finding("stale_lease", [row[0]], "snag", {
            "owner": row[1], "lease_expires_at": row[2], "lease_epoch": row[3], "retry_count": row[4]}, out.source))


def _overdue_rows(conn, where, params):
    """Open overdue tasks matching ``where`` (id order, the first ``params[-1]``), each
    ``(id, due_at, priority, total matching)``, read from the open-overdue index (a home
    whose index was dropped by hand falls back to the plain read).  The total is counted
    first, from the index alone (a window count over every match would carry each match's
    row through the sort); when many match, the first ones by id are found by walking the
    tasks in id order instead of sorting every match (see :func:`_first_by_id`)."""
    import sqlite3  # lazy: only the fallback needs the error class

    limit = params[-1]
    try:
        source = "tasks INDEXED BY idx_tasks_overdue_open"
        total = conn.execute(f"SELECT count(*) FROM {source} WHERE {where}", params[:-1]).fetchone()[0]
    except sqlite3.OperationalError:
        source = "tasks"
        total = conn.execute(f"SELECT count(*) FROM {source} WHERE {where}", params[:-1]).fetchone()[0]
    if not total:
        return []
    rows = _first_by_id(conn, where, params, total) if total > limit else None
    if rows is None:
        rows = conn.execute(f"SELECT id, due_at, priority FROM {source} WHERE {where} ORDER BY +id LIMIT ?",
                            params).fetchall()
    return [(*row, total) for row in rows]


# what a listing costs a row, in instructions (measured at 1M tasks): an overdue task read
# from the open-overdue index and sorted by id, and a task walked in id order and tested
OVERDUE_SORTED_ROW = 1300
ID_WALKED_ROW = 4200


def _first_by_id(conn, where, params, total):
    """The first ``params[-1]`` open overdue tasks by id, by walking the tasks in id order
    (``idx_tasks_id_status``) up to a bound: about three times the rows that many matches
    take when they are spread evenly.  None when sorting every match costs less, or when
    the bound holds fewer matches (or the index is missing): the caller then sorts them."""
    import sqlite3  # lazy: only a missing index needs the error class

    limit = params[-1]
    tasks = conn.execute("SELECT max(rowid) FROM tasks").fetchone()[0] or 0
    walk = 3 * limit * tasks // total + 1
    if walk * ID_WALKED_ROW >= total * OVERDUE_SORTED_ROW:
        return None
    try:
        bound = conn.execute("SELECT id FROM tasks INDEXED BY idx_tasks_id_status ORDER BY id LIMIT 1 OFFSET ?",
                             (walk - 1,)).fetchone()
        rows = conn.execute(f"SELECT id, due_at, priority FROM tasks INDEXED BY idx_tasks_id_status WHERE"
                            f" {'id <= ? AND ' if bound else ''}{where} ORDER BY id LIMIT ?",
                            (*([bound[0]] if bound else []), *params)).fetchall()
    except sqlite3.OperationalError:
        return None
    return rows if len(rows) >= limit or bound is None else None


def overdue_finding(row, source="overdue"):
    return finding("overdue_task", [row[0]], "snag", {
        "due_at": row[1], "priority": row[2], "escalation_candidate": row[2] != "P0"}, source)


def _overdue(conn, out, now):
    """Overdue open tasks: the escalation candidates of the SLA sweep (``escalate``)."""
    # one pass: the exact total rides on every listed row (a window over all matches)
    rows = _overdue_rows(conn, f"due_at IS NOT NULL AND due_at < ? AND {sql.open_condition()}", (now, out.limit))
    out.total("overdue_task", rows[0][3] if rows else 0)
    for row in rows:
        out.items.append(overdue_finding(row, out.source))


def overdue_between(conn, start, end, limit=LIMIT):
    """``(findings, total)``: the open tasks that fell due in ``[start, end)`` (overdue at
    ``end``, not yet at ``start``; None: every task overdue at ``end``), the first ``limit``
    by id with the findings :func:`sense` gives them; reads only that range of the index."""
    where = f"due_at IS NOT NULL AND due_at < ? AND {sql.open_condition()}"
    rows = _overdue_rows(conn, where, (end, limit)) if start is None else \
        _overdue_rows(conn, f"due_at >= ? AND {where}", (start, end, limit))
    return [overdue_finding(row) for row in rows], rows[0][3] if rows else 0


def _stalled(conn, out, now):
    """Running work under a live lease whose last sign of life is older than STALL_MINUTES."""
    cutoff = clock.shift(now, -STALL_MINUTES * 60)
    rows = conn.execute(
        "SELECT t.id, t.lease_owner, coalesce(h.at, t.updated_at) AS last FROM tasks t"
        " LEFT JOIN heartbeats h ON h.task_id = t.id"
        " WHERE t.status IN ('claimed', 'running') AND t.lease_owner <> '' AND t.lease_expires_at > ?"
        " AND coalesce(h.at, t.updated_at) <= ? ORDER BY +t.id", (now, cutoff))
    for row in rows:
        out.add("stalled_running", [row[0]], "snag", {"owner": row[1], "last_activity_at": row[2]})


def _stalled_leases(conn, out, now):
    """Stalled leases: live, yet their progress state has not changed by their stall deadline
    (:mod:`mindos.work.progress`).  One escalated already is a person's decision.  A home with
    no live lease has none (one probe; the progress module is not loaded for it)."""
    if not _any_live_lease(conn, now):
        return
    from mindos.work import progress  # lazy: the stall rule lives with the progress records

    for row in progress.stalled(conn, now=now):
        detail = {"owner": row["owner"], "lease_epoch": row["lease_epoch"], "progress_state": row["progress_state"],
                  "progress_changed_at": row["progress_changed_at"], "stall_at": row["stall_at"]}
        if row["escalated_at"]:
            out.add("stalled_lease_escalated", [row["task_id"]], "decision",
                    {**detail, "escalated_at": row["escalated_at"]})
        else:
            out.add("stalled_lease", [row["task_id"]], "snag", detail)


def _parked(conn, out, now):
    """Work parked on a human (the approval seams: awaiting_decision) or blocked (a snag)."""
    statuses = (*DECISION_STATUSES, "blocked")
    marks = ", ".join("?" for _ in statuses)
    for row in conn.execute(f"SELECT id, status, blocked_reason, next_action FROM tasks WHERE status IN ({marks})"
                            " ORDER BY +id", statuses):
        if row[1] == "blocked":
            out.add("blocked_task", [row[0]], "snag", {"status": row[1], "blocked_reason": row[2]})
        else:
            out.add("awaiting_decision", [row[0]], "decision", {"status": row[1], "next_action": row[3]})


def _any_live_lease(conn, now):
    """True when an open task holds a live lease (every stalled lease is one)."""
    return conn.execute(f"SELECT 1 FROM tasks WHERE lease_owner <> '' AND lease_expires_at > ?"
                        f" AND {sql.open_condition()} LIMIT 1", (now,)).fetchone() is not None


def _grants(conn, out, now):
    """Live grants past expiry on open tasks: renew or let the work stop is a human call.  A
    home with no live grant past expiry at all has none (one probe; the grants module is not
    loaded for it)."""
    if conn.execute("SELECT 1 FROM grants WHERE superseded_by IS NULL AND expires_at <= ? LIMIT 1",
                    (clock.now_iso(),)).fetchone() is None:
        return
    from mindos.autonomy import grants  # lazy: only a home with expired grants lists them

    for grant in grants.expired_open(conn):
        out.add("grant_expired", [grant["task_id"]], "decision", {
            "grant_id": grant["id"], "model": grant["model"], "autonomy_level": grant["autonomy_level"],
            "expires_at": grant["expires_at"]})


def _receipt_files(conn, out, now):
    """Receipt files no row indexes, and temp files of interrupted writes (what a killed
    writer leaves; ``receipts-sweep`` adopts or quarantines them)."""
    from mindos.recovery import doctor  # lazy: the doctor owns the orphan-file rule

    indexed = {row[0] for row in conn.execute("SELECT id FROM receipts")}
    unindexed, temp = doctor.orphan_files(conn.home, indexed)
    for receipt_id in unindexed:
        out.add("receipt_file_unindexed", [receipt_id], "snag", {"file": f"receipts/{receipt_id}.json", "temp": False})
    for name in temp:
        out.add("receipt_file_unindexed", [name], "snag", {"file": f"receipts/{name}", "temp": True})


def _recall(conn, out, now):
    """recall-stale: live handoffs citing a recall whose context has since moved."""
    if not conn.execute("SELECT 1 FROM handoffs WHERE superseded_by IS NULL AND recall_digest <> '' LIMIT 1"
                        ).fetchone():
        return
    from mindos.context import recall  # lazy: only a home with cited recalls pays for the bundle builder

    if out.keep is None:
        items = recall.stale(conn)["items"]
    else:  # the nanny keeps what the result depends on beyond the ledger, to skip the next ticks' sweep
        quiet = {}
        report, horizon = recall.stale_sweep(conn, quiet=quiet)
        out.keep["recall"] = {**horizon, "quiet": quiet}
        items = report["items"]
    recall_findings(out, items)


def recall_findings(out, items):
    """Add the findings of recall-stale ``items`` (``recall.stale``'s) to ``out``."""
    for item in items:
        if item["status"] == "fresh":
            continue
        detail = {"handoff_id": item["handoff_id"], "recall_digest": item["recall_digest"]}
        if item["status"] == "stale":
            out.add("recall_stale", [item["task_id"]], "snag", {**detail, "current_digest": item["current_digest"]})
        elif item["status"] == "unproven_recall_digest":
            out.add("unproven_recall_digest", [item["task_id"]], "snag", detail)
        else:  # unknown_recall_params: a legacy recall; freshness cannot be recomputed, nothing to act on
            out.add("unknown_recall_params", [item["task_id"]], "info", detail)


def _fts(conn, out, now):
    """Full-text indexes whose inverted index no longer matches their content table: the
    doctor's ``fts_index_drift`` finding (same digest), re-checked alone after a rebuild."""
    for name in fts.INDEXES:
        if not fts.has(conn, name):
            continue
        found = fts.drift(conn, name)
        if not found["ok"]:
            out.add("fts_index_drift", [name], "snag", {
                "method": found["method"], "missing_total": found["missing_total"],
                "stale_total": found["stale_total"]})


# (name, function, kinds produced): the sweep, in report order
SOURCES = (
    ("doctor", _doctor, ("hash_mismatch", "broken_link", "fts_index_drift", "receipt_file_missing",
                         "receipt_file_hash_mismatch")),
    ("leases", _leases, ("stale_lease",)),
    ("overdue", _overdue, ("overdue_task",)),
    ("stalled", _stalled, ("stalled_running",)),
    ("stalled-leases", _stalled_leases, ("stalled_lease", "stalled_lease_escalated")),
    ("parked", _parked, ("awaiting_decision", "blocked_task")),
    ("grants", _grants, ("grant_expired",)),
    ("recall-stale", _recall, ("recall_stale", "unproven_recall_digest", "unknown_recall_params")),
    ("receipt-files", _receipt_files, ("receipt_file_unindexed",)),
)
# narrow sources: re-check one kind without the whole doctor (after a repair), producing the
# very findings the sweep produced for it
NARROW = (
    ("fts-drift", _fts, ("fts_index_drift",)),
)

NARROW_NAMES = frozenset(name for name, _, _ in NARROW)


# the severity each kind carries (exact by_severity totals even when listings are capped)
SEVERITY = {"hash_mismatch": "decision", "broken_link": "decision", "awaiting_decision": "decision",
            "grant_expired": "decision", "stalled_lease_escalated": "decision", "unknown_recall_params": "info"}


def source_names():
    """The names of the sources a full sweep runs."""
    return [name for name, _, _ in SOURCES]


def sources_for(kinds):
    """The narrowest sources that together produce every kind of ``kinds`` (names)."""
    wanted, chosen = set(kinds), []
    for name, _, produced in NARROW + SOURCES:
        if wanted & set(produced):
            chosen.append(name)
            wanted -= set(produced)
    return chosen


def kinds_of(names):
    """Every kind the sources called ``names`` produce (as declared)."""
    return {kind for name, _, produced in NARROW + SOURCES if name in names for kind in produced}


def sense(conn, *, limit=LIMIT, only=None, since=None, include=(), pins=None, chain_window=None, part=None, skip=(),
          keep=None):
    """Collect findings from every source (or just the ``only`` source names); reads only.

    ``since`` and ``include``: the doctor's sweep looks only at what changed after that
    watermark except for the families named in ``include`` (see
    :func:`mindos.recovery.doctor.sweep`).  ``pins``: a list that receives the doctor's
    checkpoint problems.  ``chain_window``: the doctor also verifies that range of the chain;
    ``part``: the doctor's other bounded slice (tables or indexes checked in full).
    ``skip``: source names left out (the nanny carries their standing findings instead);
    ``keep``: a dict that receives what a source's result depends on beyond the ledger
    (``"recall"``: see :func:`mindos.context.recall.stale_sweep`).

    Returns ``{"findings", "total", "by_kind", "by_severity", "truncated", "sources",
    "digest", "sensed_at"}``: findings sorted by kind then subjects, at most ``limit`` per
    kind (``by_kind`` and ``by_severity`` keep exact totals); ``digest`` covers the findings' digests in order.
    """
    limit = validate.positive_int(limit, "--limit", maximum=100000)
    now = clock.now_iso()
    findings, totals, used = [], {}, []
    for name, function, _ in (SOURCES if only is None else NARROW + SOURCES):
        if (only is not None and name not in only) or name in skip:
            continue
        out = _Out(name, limit, since, include, pins, chain_window, part, keep)
        function(conn, out, now)
        findings.extend(out.items)
        for kind, count in out.totals.items():
            totals[kind] = totals.get(kind, 0) + count
        used.append(name)
    unique = {}
    for item in findings:
        unique.setdefault(item["digest"], item)
    findings = sorted(unique.values(), key=lambda f: (f["kind"], f["subjects"], f["digest"]))
    by_severity = {}
    for kind, count in totals.items():
        severity = SEVERITY.get(kind, "snag")
        by_severity[severity] = by_severity.get(severity, 0) + count
    return {
        "findings": findings, "total": sum(totals.values()), "by_kind": dict(sorted(totals.items())),
        "by_severity": dict(sorted(by_severity.items())), "truncated": sum(totals.values()) > len(findings),
        "sources": used, "digest": canonical.digest([item["digest"] for item in findings]), "sensed_at": now,
    }


def last_watermark(conn):
    """The watermark the newest repairing nanny tick recorded (``{"event_id", "anchor",
    "rowids", "fts", "files_ns", "slice"}``), or None when no tick recorded one.  Ticks are
    audited, so the watermark sits in the hash-chained ledger itself."""
    import json  # lazy: only incremental sweeps read a tick's payload

    for (payload,) in conn.execute("SELECT payload_json FROM audit_events WHERE action = 'nanny_tick'"
                                   " ORDER BY id DESC LIMIT 20"):
        try:
            mark = json.loads(payload).get("watermark")
        except (TypeError, ValueError, AttributeError, RecursionError):
            continue
        if isinstance(mark, dict) and isinstance(mark.get("event_id"), int) and isinstance(mark.get("anchor"), str):
            return mark
    return None


def sense_since_last_tick(conn, *, limit=LIMIT):
    """:func:`sense` with the doctor's sweep limited to what changed after the newest nanny
    tick's watermark (the full sweep when no tick recorded one); the report says which
    (``sweep``).  Reads only."""
    mark = last_watermark(conn)
    report = sense(conn, limit=limit, since=mark)
    report["sweep"] = ({"mode": "full", "since_event_id": None} if mark is None else
                       {"mode": "changed_since_tick", "since_event_id": mark["event_id"]})
    return report


def active_work(conn):
    """How many open tasks hold a live lease right now (the nanny's "work is active")."""
    return conn.execute(f"SELECT count(*) FROM tasks WHERE lease_owner <> '' AND lease_expires_at > ?"
                        f" AND {sql.open_condition()}", (clock.now_iso(),)).fetchone()[0]
