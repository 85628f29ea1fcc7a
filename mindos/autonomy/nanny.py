"""``ops.py nanny``: one bounded, audited tick of the impulse layer.

A tick is sense -> eligible tier-0 repairs within the cap -> escalate decisions -> one
state report.  It is cron-driven, not a daemon: each tick starts, does a bounded amount of
work and exits, so every tick is independently observable (audited ``nanny_tick`` with its
state).  It runs only the commands of the repair registry (``repairs.COMMANDS``): it never
deploys, merges, sends messages or crosses an approval seam -- those surface as
``decision_needed``.

The four states, first match wins:
  decision_needed  a finding needs a human: an approval seam, an integrity problem, an
                   expired grant on open work, an invalid repair policy, or an open breaker
  hit_snag         bounded work is blocked or needs correction (snag findings remain, or a
                   repair failed this tick)
  working          nothing is wrong and work is active (live leases) or progressed (a repair
                   changed something this tick)
  all_clear        nothing needs attention

Design decisions
  * **Persistent findings are carried forward by digest** in ``nanny_findings``: a finding
    is reported in full once (``new``), then only counted (``carried``); one that
    disappears is dropped (``resolved``) and would be new again if it came back.
  * **Circuit breaker.**  A repair that did not make its finding go away (it raised, or the
    finding is still there when the tick re-senses) counts a failure on that finding; at
    BREAKER_FAILURES the repair is stopped for as long as the finding stands, and the
    finding becomes a decision.
  * **One repairing tick at a time.**  A real tick holds a non-blocking exclusive ``fcntl``
    lock on ``<home>/nanny.lock`` (released by the OS if the process dies); a tick that
    finds it taken senses read-only, reports ``lock: "busy"`` and repairs nothing.
  * **Dry run** takes no lock, runs each planned repair's own dry run and writes nothing
    (no memory update, no audit); its state is the one the tick would report if every
    planned repair worked (``state_basis: "planned"``).
  * **A burst defers the slice.**  A tick that finds DEFER_EVENTS or more events since the
    previous tick checks them (that part grows with them) and runs no rotating slice, nor
    the recall turns (the time share and the queue's front; the recalls whose own inputs
    the burst touched are re-checked all the same); the next tick takes the turns it left
    (never two deferrals in a row).
  * **Index upkeep is housekeeping, not a repair.**  A repairing tick also merges each
    full-text index grown past UPKEEP_SEGMENTS segments (every query term is looked up in
    every segment; an index written one row per transaction, as agents write, keeps
    several), level by level (``fts.merge``: the work follows what was written, and an
    index written nothing since needs none), at most UPKEEP_PAGES leaf pages per index
    per tick in steps of UPKEEP_STEP pages, each its own short write transaction so
    agents' writes interleave, stopping at the first step FTS5 finds nothing to merge.
    It finds nothing and changes no state: the indexes it merged are reported
    (``index_upkeep``) and audited with the tick.  A dry run lists the indexes it would
    try.
"""

import os

from mindos.core import canonical, clock, validate
from mindos.store import db, fts, ledger, sql
from mindos.autonomy import sense

STATES = ("all_clear", "working", "hit_snag", "decision_needed")
DEFAULT_MAX_REPAIRS = 3
BREAKER_FAILURES = 2
LOCK_FILE = "nanny.lock"
LISTED = 100  # digests listed behind a state / per report list; counts stay exact
UPKEEP_SEGMENTS = 4  # an index of more segments than this is merged (FTS5 itself merges 4 of a level)
UPKEEP_PAGES = 500  # leaf pages merged per index per tick, at most (~0.1 s at 1M notes; a 50k-notes index is 750)
UPKEEP_STEP = 250  # leaf pages per write transaction: the longest a writer waits on upkeep
UPKEEP_CEILING = 12  # segments an index may keep once its levels are merged; past it, merged whole
# the whole-home checks rotate one family per tick (integrity, audit chain, receipt files,
# full-text drift, references): each family takes its turn every PERIOD_TICKS ticks, and a
# turn is bounded -- the receipts are read in full, the others a slice at a time:
#   integrity  a quick_check of the next tables (and their indexes), about INTEGRITY_ROWS
#              rows' worth; a table larger than that (a full-text index's own tables
#              excepted: checked alone) is walked INTEGRITY_WINDOW rowids a turn, each row
#              read, its NOT NULL columns and its entry in every index of the table checked
#              (see doctor._integrity_rows); a finding about it is resolved only when the
#              window round over the table ends without it
#   chain      the next CHAIN_WINDOW events
#   fts_drift  the next full-text indexes, about FTS_ROWS content rows' worth
#   references the references of the next tables, about REFERENCE_ROWS rows' worth; a
#              larger child table is walked REFERENCE_WINDOW rowids (the dependency
#              edges, which have no rowids: primary keys) a turn
# so every check runs in full within PERIOD_TICKS * (turns of its family) ticks; the report
# says how many (``period_ticks``, ``chain_period_ticks``)
PERIOD_TICKS = 5
CHAIN_WINDOW = 20000
# standing findings that are a function of time and rows, not of the whole home (see
# _standing): the overdue listing is carried and grown by the tasks that fell due since the
# last tick while no event could have changed a task row; it is recounted in full on the
# OVERDUE_RECOUNT turns, a bounded part at a time (see _recount_window): each such turn counts
# the next OVERDUE_WINDOW entries of the open-overdue index that were overdue when the round
# began and checks the listing against the tasks by id up to its last one, and the round's
# last window compares the whole count with the carried total (a difference, or a listing
# that does not match, recounts in full on that tick).  The recall-stale result is carried:
# with nothing but recalls landed as it was, after task and note events with the recalls
# whose own inputs those events touched re-checked on that tick (see RECALL_EVENTS), and
# after a lifetime ended (a lease, a note's, a fact's window) as after a write to the task
# it belongs to (the ends read from their indexes, mindos.context.recall.lapsed); the recalls
# that can move with time alone are re-checked RECALL_SLICE cited tasks per tick, and those
# any write can move (a related or semantic section) queue after writes and are re-checked
# RECALL_SLICE a tick from the front of the queue (``pending`` in the watermark), so each
# within ceil(queued / RECALL_SLICE) ticks of the write (counting only the ticks that run
# a slice: a deferring tick leaves both turns to the next one).
OVERDUE_RECOUNT = "receipts"
OVERDUE_WINDOW = 5000  # open-overdue index entries counted per recount turn
RECALL_SLICE = 2
# receipt file times this close before a recall's check count as after it (coarse file clocks)
RECALL_FILE_SLACK_NS = 2_000_000_000
# the comms floor's entity types (Moods, their posts, wakes and agents, pages, dials,
# botmail): their events change only the comms tables, which no task row, pack or recall
# reads (a test holds this list to what mindos/comms audits, and the floors that build task
# rows and packs to never naming a comms table); a poller awake every minute is no write here
COMMS_ENTITIES = ("botmail", "botmail_peer", "mood", "mood_agent", "mood_dial", "mood_editor", "mood_page",
                  "mood_wake")
# events that change no task row the overdue findings read (entity types; a task's heartbeat
# moves its lease and may mark it running, which keeps it open, and never moves its due
# date), and the actions that change nothing a recall bundle holds
# (``agent``, ``brief`` and ``input`` are records of reads and refusals: a prime, a morning
# brief marked, a credential-shaped input refused)
NO_TASK_ROWS = ("note", "memory", "fact", "session_source", "nanny", "agent", "brief", "input") + COMMS_ENTITIES
# (a repair's own record changes nothing: each repair command audits what it changes in
# events of its own -- a recovered lease a task event, a rebuilt index ``fts_rebuilt``, a
# quarantined receipt ``receipt_quarantined`` -- and those are judged as any other event;
# a prime, a morning brief and a refused input write nothing a bundle holds)
RECALL_NEUTRAL = ("nanny_tick", "context_recalled", "session_resumed", "repair_applied", "repair_failed",
                  "context_primed", "morning_brief", "secret_blocked")
# the task events that change no task row the overdue findings read either: a heartbeat, and
# the records of a recall and a resume (a resume that claims audits its claim on its own)
NO_TASK_ROW_ACTIONS = ("heartbeat", "context_recalled", "session_resumed")
RECALL_KINDS = ("recall_stale", "unproven_recall_digest", "unknown_recall_params")
# after other events, the cited recalls whose inputs they touched are re-checked (see
# mindos.context.recall.affected), not all of them, when at most RECALL_EVENTS landed and
# each is an event of one task (RECALL_TASK_ENTITIES: its own, a note's or a handoff's, each
# naming the task as its entity id) or of a row only a related section packs
# (RECALL_WIDE_ENTITIES: it touches no task but queues the recalls any write can move), and
# not one of RECALL_UNBOUNDED
RECALL_EVENTS = 5000
RECALL_TASK_ENTITIES = ("task", "note", "handoff")
RECALL_WIDE_ENTITIES = ("fact", "memory", "session_source")
RECALL_UNBOUNDED = ("note_consolidated",)
# task actions that move only their own task's inputs: a heartbeat extends the lease and
# records progress, which no related section reads (those read other tasks' titles and
# projects, and their notes, handoffs, facts, memories and sessions): it re-checks the
# recalls of its task and of the tasks with an edge to it, and queues no other
RECALL_OWN_ONLY = ("heartbeat",)
# actions after which a full-text balance is counted whole again, not carried (they move
# index and content rows outside the write triggers' one-row steps)
REBALANCING = ("fts_rebuilt", "archive_restored", "tasks_archived")
# the slice whose turns count the ledger's events a chain window at a time (the count round:
# see _count_window); each checkpoint's count is read from the previous tick's counts by a
# short id range count, and counted whole only when the round's count disagrees with them
COUNT_TURN = "audit_chain"
INTEGRITY_ROWS = 100000
INTEGRITY_WINDOW = 20000
KEYED_PLAIN = 5  # a table without rowids and without other indexes: its windows are this many times longer
FTS_ROWS = 50000
FTS_WINDOW = 20000
REFERENCE_ROWS = 100000
REFERENCE_WINDOW = 20000
# a tick that finds DEFER_EVENTS or more new events since the previous tick checks them (the
# incremental part, which grows with them) and runs no slice: the next tick takes the turn
# this one would have had.  A tick never defers twice in a row, so a home written in bursts
# at every tick runs each slice within twice its period in ticks; ``period_ticks`` counts
# the ticks that run a slice (the report names a deferring tick's slice DEFERRED)
DEFER_EVENTS = 250
DEFERRED = "deferred"


# ---------------------------------------------------------------------------------------
# The tick lock


class TickLock:
    """A non-blocking exclusive lock on ``<home>/nanny.lock``; ``acquired`` says whether it
    was taken.  Use as a context manager; the OS drops it if the process dies."""

    def __init__(self, home):
        self.path = os.path.join(home, LOCK_FILE)
        self.handle = None
        self.acquired = False

    def __enter__(self):
        import fcntl  # lazy: only a real (non-dry) tick locks

        self.handle = open(self.path, "a+b")
        try:
            os.chmod(self.path, 0o600)
            fcntl.flock(self.handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.acquired = True
        except BlockingIOError:
            self.acquired = False
        return self

    def __exit__(self, *exc):
        if self.handle is not None:
            self.handle.close()  # closing the descriptor releases the lock
            self.handle = None
        return False


# ---------------------------------------------------------------------------------------
# Memory of findings


def memory(conn):
    """``{digest: row}`` of the findings the previous ticks saw."""
    return {row[0]: sql.row_dict(row) for row in conn.execute(
        "SELECT digest, kind, subjects, severity, first_seen_at, last_seen_at, ticks, repair_failures, last_repair,"
        " last_error FROM nanny_findings")}


def _remember(conn, findings, seen, failures, now):
    """Write the tick's findings into memory (inside the caller's write transaction)."""
    current = {item["digest"] for item in findings}
    gone = [digest for digest in seen if digest not in current]
    for start in range(0, len(gone), 500):
        chunk = gone[start:start + 500]
        conn.execute(f"DELETE FROM nanny_findings WHERE digest IN ({', '.join('?' for _ in chunk)})", chunk)
    standing = [item["digest"] for item in findings if item["digest"] in seen and item["digest"] not in failures]
    for start in range(0, len(standing), 500):  # the findings seen again, counted in one statement per chunk
        chunk = standing[start:start + 500]
        conn.execute(f"UPDATE nanny_findings SET ticks = ticks + 1, last_seen_at = ? WHERE digest IN"
                     f" ({', '.join('?' for _ in chunk)})", [now, *chunk])
    for item in findings:
        failed = failures.get(item["digest"])
        if item["digest"] in seen:
            if failed:
                conn.execute("UPDATE nanny_findings SET ticks = ticks + 1, last_seen_at = ?,"
                             " repair_failures = repair_failures + 1, last_repair = ?, last_error = ? WHERE digest = ?",
                             (now, failed[0], failed[1], item["digest"]))
        else:
            conn.execute(
                "INSERT INTO nanny_findings(digest, kind, subjects, severity, first_seen_at, last_seen_at, ticks,"
                " repair_failures, last_repair, last_error) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
                (item["digest"], item["kind"], canonical.canonical_json(item["subjects"]), item["severity"], now, now,
                 1 if failed else 0, failed[0] if failed else "", failed[1] if failed else ""))


# ---------------------------------------------------------------------------------------
# The tick


def _tripped(seen, item):
    """True when the breaker is open on ``item``: its repairs failed BREAKER_FAILURES times."""
    return seen.get(item["digest"], {}).get("repair_failures", 0) >= BREAKER_FAILURES


def _brief(item, reason=None):
    entry = {"digest": item["digest"], "kind": item["kind"], "subjects": item["subjects"],
             "severity": item["severity"]}
    if reason:
        entry["reason"] = reason
    return entry


def _policy_stamp(directories):
    """What the repair policies in force are read from: ``[[file, size, mtime_ns, ctime_ns]]``
    of every ``.yaml`` of ``directories`` (the shipped and the home's policy directories, in
    order; None: none), so an edit, a new or a removed file changes it."""
    stamp = []
    for directory in directories:
        try:
            names = sorted(name for name in os.listdir(directory) if name.endswith(".yaml")) if directory else []
        except OSError:
            names = []
        for name in names:
            path = os.path.join(directory, name)
            try:
                st = os.stat(path)
            except OSError:
                stamp.append([path, -1, 0, 0])
                continue
            stamp.append([path, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
    return stamp


def _plan_and_repair(conn, sensed, seen, *, dry_run, max_repairs, previous=None, mark=None):
    """Run (or plan) the eligible tier-0 repairs; return (runs, skipped, invalid).

    Policies are read only when there is a finding to answer: an idle tick never parses them.
    A tick whose findings are all of kinds no policy answers, with the policy files as the
    previous tick found them all valid (``previous["policies"]``: their stamp and the kinds
    they answer), has nothing to run, skip or report: it does not parse them again.  ``mark``
    receives what the next tick compares.
    """
    findings = sensed["findings"]
    runs, skipped, invalid = [], [], []
    if not findings:
        return runs, skipped, invalid
    known = (previous or {}).get("policies")
    if isinstance(known, dict) and isinstance(known.get("kinds"), list) \
            and not {item["kind"] for item in findings} & set(known["kinds"]):
        # the directories the previous tick read them from, when it kept them (then the
        # repairs module, about 1.3M instructions, is not even imported while nothing changed)
        dirs = known.get("dirs")
        if isinstance(dirs, list) and len(dirs) == 2 and all(d is None or isinstance(d, str) for d in dirs) \
                and isinstance(dirs[1], str) and dirs[1].startswith(os.path.join(conn.home, "")) \
                and _policy_stamp(dirs) == known.get("stamp"):
            if mark is not None:
                mark["policies"] = known
            return runs, skipped, invalid
    from mindos.autonomy import repairs  # lazy: an idle tick never loads the policies

    dirs = [repairs.shipped_dir(), repairs.home_dir(conn.home)]
    stamp = _policy_stamp(dirs)
    if isinstance(known, dict) and known.get("stamp") == stamp and isinstance(known.get("kinds"), list) \
            and not {item["kind"] for item in findings} & set(known["kinds"]):
        if mark is not None:
            mark["policies"] = {**known, "dirs": dirs}
        return runs, skipped, invalid
    entries = repairs.policies(conn.home)
    if mark is not None and all(entry["valid"] for entry in entries):
        mark["policies"] = {"stamp": stamp, "kinds": sorted({entry["finding"] for entry in entries}), "dirs": dirs}
    for entry in entries:
        if not entry["valid"]:
            invalid.append({"repair": entry["name"], "file": entry["file"], "error": entry["error"]})
            skipped.append({"repair": entry["name"], "reason": "invalid_policy"})
            continue
        matching = [item for item in findings if item["kind"] == entry["finding"]]
        if not matching:
            continue
        count = sensed["by_kind"].get(entry["finding"], len(matching))
        if entry["tier"] != repairs.UNATTENDED_TIER:
            skipped.append({"repair": entry["name"], "reason": "tier_requires_operator", "findings": count})
            continue
        broken = [item for item in matching if _tripped(seen, item)]
        if broken:
            skipped.append({"repair": entry["name"], "reason": "breaker_open", "findings": count,
                            "breaker": [item["digest"] for item in broken]})
            continue
        reason = repairs.gate(conn, entry, count)
        if reason is None and len(runs) >= max_repairs:
            reason = "max_repairs"
        if reason is not None:
            skipped.append({"repair": entry["name"], "reason": reason, "findings": count})
            continue
        runs.append((entry, repairs.execute(conn, entry, matching, dry_run=dry_run, trigger="nanny")))
    return runs, skipped, invalid


def _state(findings, decisions, failed_runs, progressed, active):
    """The state and the digests behind it."""
    if decisions:
        return "decision_needed", [item["digest"] for item in decisions]
    snags = [item for item in findings if item["severity"] == "snag"]
    if snags or failed_runs:
        return "hit_snag", [item["digest"] for item in snags] + [run["repair"] for run in failed_runs]
    if progressed or active:
        return "working", [run["repair"] for run in progressed]
    return "all_clear", []


def tick(conn, *, dry_run=False, max_repairs=DEFAULT_MAX_REPAIRS):
    """One nanny tick; return the state report (see the module docstring).

    ``{"state", "because", "dry_run", "lock", "tick_at", "findings": {"total", "by_kind",
    "new", "carried", "resolved"}, "decisions", "repairs", "skipped_repairs", "max_repairs",
    "active_leases", "index_upkeep"}``.  A real tick audits ``nanny_tick``.
    """
    max_repairs = validate.positive_int(max_repairs, "--max-repairs", minimum=0, maximum=100)
    if dry_run:
        return _tick(conn, dry_run=True, max_repairs=max_repairs, lock="not_taken")
    with TickLock(conn.home) as lock:
        if not lock.acquired:
            return _tick(conn, dry_run=False, max_repairs=max_repairs, lock="busy")
        return _tick(conn, dry_run=False, max_repairs=max_repairs, lock="held")


def _estimate(conn, table, budget):
    """A cheap size estimate of ``table``: its largest rowid (one seek); for a table without
    rowids, its rows counted up to a tenth of ``budget`` (None past that: a turn of its own)."""
    import sqlite3  # lazy: only integrity and index turns estimate

    try:
        row = conn.execute(f"SELECT max(rowid) FROM main.{sql.quoted(table)}").fetchone()
    except sqlite3.DatabaseError:
        return _counted(conn, table, budget)
    return row[0] if row and isinstance(row[0], int) else 0


def _counted(conn, table, budget):
    """:func:`_estimate` of a table without rowids: its rows counted up to a tenth of
    ``budget`` (None past that)."""
    quoted, cap = sql.quoted(table), budget // 10 + 1
    # is there a cap-th row (one step over the rows before it, none handed back)? only a
    # smaller table is counted
    if conn.execute(f"SELECT 1 FROM main.{quoted} LIMIT 1 OFFSET ?", (cap - 1,)).fetchone() is not None:
        return None
    count = conn.execute(f"SELECT count(*) FROM main.{quoted}").fetchone()[0]
    return None if count >= cap else count


def _estimates(conn, tables, budget, with_rowids):
    """``{table: _estimate(conn, table, budget)}`` for ``tables``, the largest rowids of those
    in ``with_rowids`` read in one statement (one statement a table cost about 250,000
    instructions each); the others, or all when that statement fails, one at a time."""
    import sqlite3  # lazy: only integrity and index turns estimate

    try:
        found = sql.largest_rowids(conn, sorted(table for table in set(tables) if table in with_rowids))
    except sqlite3.DatabaseError:
        found = {}
    return {table: found[table] if table in found else _estimate(conn, table, budget) for table in set(tables)}


def tables_rows(conn, table):
    """Rows in ``table`` (a whole count: only when a round of windows over it starts)."""
    return conn.execute(f"SELECT count(*) FROM main.{sql.quoted(table)}").fetchone()[0]


def _groups(names, sizes, budget):
    """Cut ``names`` (in order) into turns of at most ``budget`` estimated rows each (a name
    over budget alone); ``sizes``: ``{name: rows or None}`` (None: over budget)."""
    groups, current, used = [], [], 0
    for name in names:
        size = sizes[name] if sizes[name] is not None else budget + 1
        if current and used + size > budget:
            groups.append(current)
            current, used = [], 0
        current.append(name)
        used += size
    if current:
        groups.append(current)
    return groups


def _turn(names, sizes, budget, start):
    """``(this turn's names, the next turn's first name or "" after the last, turns in all)``:
    the turn starting at the first name not before ``start`` (the cursor kept in the
    watermark; "" or a name past the end starts over)."""
    rest = [name for name in names if name >= start] if start else list(names)
    if not rest:
        rest = list(names)
    group = _groups(rest, sizes, budget)[0] if rest else []
    after = rest[len(group):]
    return group, after[0] if after else "", len(_groups(names, sizes, budget))


def _next_window(mark, table, start, size, window, keys):
    """``(low, high, last)``: this turn's rowid window of ``table`` (``size`` rows, walked
    ``window`` at a time), going on from the watermark's cursor when the previous turn was in
    the same table.  ``keys`` names the watermark's (table cursor, row cursor, round
    findings); a new round over the table starts with no findings kept."""
    table_key, rows_key, round_key = keys
    going_on = table == start and mark[rows_key] > 0
    low = mark[rows_key] if going_on else 0
    high = low + window
    last = high >= size
    mark[rows_key] = 0 if last else high
    if not last:
        mark[table_key] = table
    if not going_on:
        mark[round_key] = []
    return low, high, last


def _key_window(conn, mark, family, group, start, steps, keys):
    """This turn's primary-key window when its group is one table without rowids walked in
    windows (``steps``: ``{table: keys a turn}`` for each such table of ``family``), as
    ``(table, low, high)`` (``high`` None: the round's last window), else None.  Each such
    table's rows are counted whole when a round over it starts (else the count is kept), and
    the turns its round takes are added to ``mark["turns"][family]``.  ``keys`` names the
    watermark's (table cursor, key cursor, row counts, rowid cursor, round findings)."""
    from mindos.recovery import doctor  # lazy: as in _sweep_plan

    table_key, cursor_key, counts_key, rows_key, round_key = keys
    table = group[0] if len(group) == 1 and group[0] in steps else None
    # (a cursor of another shape than the table's key starts the round over)
    going_on = table is not None and table == start and bool(mark[cursor_key]) \
        and len(mark[cursor_key]) == len(doctor.primary_key(conn, table))
    mark[counts_key] = {name: mark[counts_key][name] if name in mark[counts_key] and (name != table or going_on)
                        else tables_rows(conn, name) for name in steps}
    mark["turns"][family] += sum(-(-mark[counts_key][name] // steps[name]) - 1 for name in steps)
    if table is None:
        mark[cursor_key] = []
        return None
    mark[rows_key] = 0
    low = mark[cursor_key] if going_on else None
    high = doctor.key_after(conn, table, low, steps[table])
    mark[cursor_key] = [] if high is None else high
    if high is not None:
        mark[table_key] = table
    if not going_on:
        mark[round_key] = []
    return table, low, high


def _sweep_plan(conn, previous):
    """``(watermark now, families run in full this tick, slice name, chain window, part)``:
    every family in full on the first tick (no watermark yet), else one bounded turn of the
    family after the previous tick's slice: a window of the chain (``(after, upto)``), or
    ``part`` -- ``{"tables": [...]}`` or ``{"indexes": [...]}``.  The watermark's ``turns``:
    ``{family: turns to cover it}`` (carried between a family's turns)."""
    from mindos.recovery import checkpoint, doctor  # lazy: the doctor owns the sweep families

    # the full-text balances are carried from the previous tick (moved by the rows added
    # since) unless an index was rebuilt or rows restored or archived since; each index is
    # counted whole on its own fts_drift turn
    trusted = previous if previous is not None and not _written_after(
        conn, previous["event_id"], "action", REBALANCING, inverse=True) else None
    mark = checkpoint.watermark(conn, carry=trusted)
    row = conn.execute("SELECT hash FROM audit_events WHERE id = ?", (mark["event_id"],)).fetchone() \
        if mark["event_id"] else None
    mark["anchor"] = row[0] if row is not None and isinstance(row[0], str) else ledger.GENESIS_HASH
    mark.update(chain_from=0, table_from="", index_from="", ref_from="", rows_from=0, round=[], ref_rows_from=0,
                ref_round=[], fts_rows_from=0, fts_round=[], keys_from=[], key_sizes={}, ref_keys_from=[],
                ref_key_sizes={})
    families = doctor.FAMILIES
    if previous is None:
        mark["turns"] = {"integrity": 1, "fts_drift": 1, "references": 1}
        return mark, families, "all", None, None
    for key in ("table_from", "index_from", "ref_from"):
        mark[key] = previous.get(key) if isinstance(previous.get(key), str) else ""
    for key, round_key in (("rows_from", "round"), ("ref_rows_from", "ref_round"), ("fts_rows_from", "fts_round")):
        rows_from, round_ = previous.get(key), previous.get(round_key)
        mark[key] = rows_from if isinstance(rows_from, int) and not isinstance(rows_from, bool) else 0
        mark[round_key] = [digest for digest in round_ if isinstance(digest, str)][:sense.LIMIT] \
            if isinstance(round_, list) else []
    for cursor, counted in (("keys_from", "key_sizes"), ("ref_keys_from", "ref_key_sizes")):
        keys_from, key_sizes = previous.get(cursor), previous.get(counted)
        mark[cursor] = keys_from if isinstance(keys_from, list) and all(
            isinstance(value, (str, int, float)) and not isinstance(value, bool) for value in keys_from) else []
        mark[counted] = {table: size for table, size in key_sizes.items() if isinstance(size, int)
                         and not isinstance(size, bool) and size >= 0} if isinstance(key_sizes, dict) else {}
    turns = previous.get("turns") if isinstance(previous.get("turns"), dict) else {}
    mark["turns"] = {key: turns.get(key) if isinstance(turns.get(key), int) else 1
                     for key in ("integrity", "fts_drift", "references")}
    last = previous.get("slice") if previous.get("slice") != DEFERRED else previous.get("slice_kept")
    name = families[(families.index(last) + 1) % len(families)] if last in families else families[0]
    start = previous.get("chain_from")
    start = start if isinstance(start, int) and 0 <= start < previous["event_id"] else 0
    mark["chain_from"] = start
    if _deferring(mark, previous):
        # a burst of new events: this tick checks them and leaves its slice to the next tick,
        # which takes the turn this one would have (the cursors and rounds kept as they are)
        mark["slice_kept"] = last if last in families else ""
        return mark, (), DEFERRED, None, None
    if name == "integrity":
        names = doctor.integrity_tables(conn)
        # a full-text index's own tables are sized by its content table (their rowids are
        # block ids, not row counts)
        owners = {table: next((spec.table for index, spec in fts.INDEXES.items() if table.startswith(index + "_")),
                              table) for table in names}
        with_rowids = doctor.rowid_tables(conn)
        estimates = _estimates(conn, owners.values(), INTEGRITY_ROWS, with_rowids)
        sizes = {table: 0 if table.endswith(("_fts_config", "_fts_idx")) else estimates[owners[table]]
                 for table in names}
        start_table = mark["table_from"]
        group, mark["table_from"], mark["turns"]["integrity"] = _turn(names, sizes, INTEGRITY_ROWS, start_table)
        # a rowid table over budget is walked in windows of INTEGRITY_WINDOW rows, one a turn
        windowed = [table for table in names if owners[table] == table and table in with_rowids
                    and isinstance(sizes[table], int) and sizes[table] > INTEGRITY_ROWS]
        mark["turns"]["integrity"] += sum(-(-sizes[table] // INTEGRITY_WINDOW) - 1 for table in windowed)
        # a table without rowids over budget is walked INTEGRITY_WINDOW primary keys a turn;
        # its rows are counted whole when a round over it starts (else the count kept)
        keyed = [table for table in names if owners[table] == table and table not in with_rowids
                 and sizes[table] is None and doctor.primary_key(conn, table)]
        # (a table with no index to look its rows up in reads only its own key order: a
        # window of it is KEYED_PLAIN times as many rows)
        steps = {table: INTEGRITY_WINDOW * (1 if doctor.lookup_indexes(conn, table) else KEYED_PLAIN)
                 for table in keyed}
        window = _key_window(conn, mark, "integrity", group, start_table, steps,
                             ("table_from", "keys_from", "key_sizes", "rows_from", "round"))
        if window is not None:
            table, low, high = window
            return mark, (), name, None, {"tables": [table], "rows": [low, high], "keyed": True,
                                          "last": high is None}
        if len(group) != 1 or group[0] not in windowed:
            mark["rows_from"] = 0  # a table that shrank out of windowing mid-round starts over when it grows back
            return mark, (), name, None, {"tables": group}
        table = group[0]
        low, high, last = _next_window(mark, table, start_table, sizes[table], INTEGRITY_WINDOW,
                                       ("table_from", "rows_from", "round"))
        return mark, (), name, None, {"tables": [table], "rows": [low, high], "last": last}
    if name == "fts_drift":
        names = sorted(index for index in fts.INDEXES if fts.has(conn, index))
        contents = {fts.INDEXES[index].table for index in names}  # content tables: rowid tables
        estimates = _estimates(conn, contents, FTS_ROWS, contents)
        sizes = {index: estimates[fts.INDEXES[index].table] for index in names}
        start_index = mark["index_from"]
        group, mark["index_from"], mark["turns"]["fts_drift"] = _turn(names, sizes, FTS_ROWS, start_index)
        # an index over budget is compared FTS_WINDOW content rowids a turn (compared whole
        # only when a window disagrees, see fts.window_drifts)
        windowed = [index for index in names if isinstance(sizes[index], int) and sizes[index] > FTS_ROWS]
        mark["turns"]["fts_drift"] += sum(-(-sizes[index] // FTS_WINDOW) - 1 for index in windowed)
        if len(group) != 1 or group[0] not in windowed:
            mark["fts_rows_from"] = 0  # as for the integrity windows
            for index in group:  # this turn's indexes: their balance counted whole
                mark["fts"][index] = checkpoint.fts_gap(conn, fts.INDEXES[index])
            return mark, (), name, None, {"indexes": group}
        index = group[0]
        low, high, last = _next_window(mark, index, start_index, sizes[index], FTS_WINDOW,
                                       ("index_from", "fts_rows_from", "fts_round"))
        if last:  # the round's last window: the balance counted whole
            mark["fts"][index] = checkpoint.fts_gap(conn, fts.INDEXES[index])
        return mark, (), name, None, {"indexes": [index], "fts_rows": [low, high], "last": last}
    if name == "references":
        names = doctor.reference_tables(conn)
        sizes = {table: _estimate(conn, table, REFERENCE_ROWS) for table in names}
        start_table = mark["ref_from"]
        group, mark["ref_from"], mark["turns"]["references"] = _turn(names, sizes, REFERENCE_ROWS, start_table)
        # a child table whose references are read by rowid, over budget, is walked in
        # windows of REFERENCE_WINDOW rowids, one a turn
        windowed = [table for table in names if table in doctor.ROWID_CHILDREN and isinstance(sizes[table], int)
                    and sizes[table] > REFERENCE_ROWS]
        mark["turns"]["references"] += sum(-(-sizes[table] // REFERENCE_WINDOW) - 1 for table in windowed)
        # a child table without rowids over budget whose orphans the doctor reads by key
        # (doctor.KEYED_CHILDREN: the dependency edges) is walked REFERENCE_WINDOW primary
        # keys a turn, as the integrity turns walk it
        keyed = [table for table in names if table in doctor.KEYED_CHILDREN and sizes[table] is None]
        window = _key_window(conn, mark, "references", group, start_table, dict.fromkeys(keyed, REFERENCE_WINDOW),
                             ("ref_from", "ref_keys_from", "ref_key_sizes", "ref_rows_from", "ref_round"))
        if window is not None:
            table, low, high = window
            return mark, (), name, None, {"ref_tables": [table], "ref_keys": [low, high], "last": high is None}
        if len(group) != 1 or group[0] not in windowed:
            mark["ref_rows_from"] = 0  # as for the integrity windows
            return mark, (), name, None, {"ref_tables": group}
        table = group[0]
        low, high, last = _next_window(mark, table, start_table, sizes[table], REFERENCE_WINDOW,
                                       ("ref_from", "ref_rows_from", "ref_round"))
        return mark, (), name, None, {"ref_tables": [table], "ref_rows": [low, high], "last": last}
    if name != "audit_chain":
        return mark, (name,), name, None, None
    upto = min(start + CHAIN_WINDOW, previous["event_id"])
    mark["chain_from"] = upto if upto < previous["event_id"] else 0
    return mark, (), name, (start, upto), None


def _deferring(mark, previous):
    """True when this tick leaves its slice to the next one (see DEFER_EVENTS): at least
    DEFER_EVENTS events landed since the previous tick's watermark, and that tick ran its
    slice."""
    return previous.get("slice") != DEFERRED and mark["event_id"] - previous["event_id"] >= DEFER_EVENTS


def _count_pair(value):
    """True when ``value`` is a count round's ``[event id, events up to it]``."""
    return isinstance(value, list) and len(value) == 2 and all(
        isinstance(item, int) and not isinstance(item, bool) and item >= 0 for item in value)


def _count_window(conn, previous, window):
    """``(the count round to keep, whether the next tick counts every checkpoint whole)`` after
    a count turn's sweep verified the chain ``window`` (``(after, upto)``).  The round adds up
    the events each chain window held (as the window's verification counted them, never a
    count of the ledger), from its start at id 0: ``[upto, events up to it]``.  At its last
    window (``upto`` the previous tick's height) the sum is compared with the count this
    tick's checkpoint pass carried to ``upto`` from the previous ticks' counts: a difference
    (events deleted behind the carried counts) makes the next tick count every checkpoint's
    events whole, as a full sweep counts them.  A round whose sum is not known (a home
    ticked by an older version) waits for the chain turns to start over at id 0."""
    from mindos.recovery import checkpoint  # lazy: as in _tick

    after, upto = window
    stored = previous.get("chain_count")
    if after and not (_count_pair(stored) and stored[0] == after):
        return None, False
    held = getattr(conn, "_mindos_window_events", None)
    if held is not None and tuple(held[:2]) == (after, upto):
        found = held[2]
    elif after >= upto:
        found = 0  # an empty window
    else:
        return None, False  # the window was not verified as planned: the round starts over
    total = (stored[1] if after else 0) + found
    if upto < previous["event_id"]:
        return [upto, total], False
    carried = checkpoint.events_upto(conn, upto, getattr(conn, "_mindos_counts", None) or {})
    return None, carried is not None and carried != total


def _checked(families, window, previous, part=None):
    """Whether this tick checked a doctor finding of ``kind`` about ``subjects`` in full: its
    family ran whole, it is about a table or index of this tick's slice (``part``; an
    integrity finding naming no object counts as checked by every integrity turn), or it is
    a chain finding inside the chain window or after the previous watermark (the
    incremental part)."""
    kinds = set().union(*(sense.FAMILY_KINDS[name] for name in families))
    chain = sense.FAMILY_KINDS["audit_chain"]
    part = part or {}
    tables, indexes = set(part.get("tables") or ()), set(part.get("indexes") or ())
    windowed, last = bool(part.get("rows")), bool(part.get("last"))
    refs, references = set(part.get("ref_tables") or ()), sense.FAMILY_KINDS["references"]
    about = _reference_tables() if refs else {}
    ref_windowed = bool(part.get("ref_rows") or part.get("ref_keys"))

    def checked(kind, subjects):
        if kind in kinds:
            return True
        if kind == "database_integrity" and tables and windowed:  # a window: at the end of its round only
            return last and bool(tables & set(subjects))
        if kind == "task_readiness_drift" and "tasks" in tables:  # the tasks' turn (a window: at its round's end)
            return last or not windowed
        if kind == "database_integrity" and tables:
            return bool(tables & set(subjects)) or list(subjects) == [kind]
        if kind == "fts_index_drift" and indexes and part.get("fts_rows") and not part.get("whole"):
            return last and bool(indexes & set(subjects))  # a window: at the end of its round only
        if kind == "fts_index_drift" and indexes:
            return bool(indexes & set(subjects))
        if kind in references and refs:  # a window: at the end of its round only
            return (last or not ref_windowed) and (bool(refs & set(subjects)) or about.get(kind) in refs)
        if kind not in chain or previous is None:
            return False
        try:
            event_id = int(subjects[0])
        except (TypeError, ValueError, IndexError):
            return False
        return event_id > previous["event_id"] or (window is not None and window[0] < event_id <= window[1])
    return checked


def _reference_tables():
    """The table each references kind is about when its subjects do not name one: the
    doctor's orphan kinds read back, and its two kinds that are not orphans."""
    from mindos.recovery import doctor  # lazy: the doctor names its orphan kinds

    return {**{kind: table for table, kind in doctor.NAMED_ORPHANS.items()},
            "multiple_live_handoffs": "handoffs", "dangling_fact_reference": "facts"}


def _carry(findings, by_kind, seen, checked, keep=()):
    """Keep the remembered doctor findings this tick did not check in full (``checked(kind,
    subjects)`` is false: an incremental sweep cannot see them either way); return the
    findings and totals."""
    present = {item["digest"] for item in findings}
    kinds = set().union(*sense.FAMILY_KINDS.values())
    import json  # lazy: only carried findings decode their stored subjects

    carried = []
    for digest, row in seen.items():
        if row["kind"] in kinds and digest not in present:
            try:
                subjects = json.loads(row["subjects"])
            except (TypeError, ValueError, RecursionError):
                subjects = [str(row["subjects"])]
            if checked(row["kind"], subjects) and digest not in keep:
                continue
            carried.append({"kind": row["kind"], "subjects": subjects, "severity": row["severity"], "detail": {},
                            "source": "doctor", "digest": digest, "carried_from": row["last_seen_at"]})
    if not carried:
        return findings, by_kind
    by_kind = dict(by_kind)
    for item in carried:
        by_kind[item["kind"]] = by_kind.get(item["kind"], 0) + 1
    return findings + carried, by_kind


def _written_after(conn, event_id, column, harmless, inverse=False):
    """True when the ledger holds an event after ``event_id`` whose ``column`` (entity_type or
    action) is not one of ``harmless`` (``inverse``: is one of them) (one read of the events
    since, by id); by entity type, a task event of NO_TASK_ROW_ACTIONS counts as harmless to
    the task rows the overdue findings read (a heartbeat moves the lease and may mark the task
    running, still open, never the due date; a recall or a resume is a read)."""
    marks, params, task_events = ", ".join("?" for _ in harmless), [event_id, *harmless], ""
    if column == "entity_type":
        task_events = f" AND NOT (entity_type = 'task' AND action IN ({', '.join('?' for _ in NO_TASK_ROW_ACTIONS)}))"
        params += NO_TASK_ROW_ACTIONS
    row = conn.execute(f"SELECT 1 FROM audit_events WHERE id > ? AND {column} {'IN' if inverse else 'NOT IN'}"
                       f" ({marks}){task_events} LIMIT 1", params).fetchone()
    return row is not None


def _standing(conn, previous, now, slice_name):
    """``{source name: the previous tick's entry}`` for the sources whose findings this tick
    carries instead of sensing again (see OVERDUE_RECOUNT): the overdue listing while no
    event after the previous tick could have changed a task row (on the recount turn marked
    ``recount``: checked a window at a time, see :func:`_recount_window`), the recall-stale
    result while the events since are bounded by the tasks they touched (:func:`_touched`;
    the lifetimes ended since count as touching their tasks, see :func:`_carry_standing`).
    An entry is only trusted whole: its totals within the listed LIMIT (the remembered
    listing is then complete)."""
    if previous is None:
        return {}
    found = {}
    entry = previous.get("overdue")
    if isinstance(entry, dict) and _counts(entry, ("event_id", "total")) \
            and isinstance(entry.get("at"), str) and entry["at"] <= now \
            and not _written_after(conn, entry["event_id"], "entity_type", NO_TASK_ROWS):
        found["overdue"] = {**entry, "recount": slice_name == OVERDUE_RECOUNT}
    entry = previous.get("recall")
    if isinstance(entry, dict) and _counts(entry, ("event_id", "next")) and isinstance(entry.get("by_kind"), dict) \
            and all(_counts(entry["by_kind"], [kind], sense.LIMIT) for kind in entry["by_kind"]) \
            and isinstance(entry.get("volatile"), list) and all(isinstance(task, str) for task in entry["volatile"]) \
            and isinstance(entry.get("pending", []), list) \
            and all(isinstance(task, str) for task in entry.get("pending") or ()) \
            and (entry.get("next_end") is None or isinstance(entry.get("next_end"), str)):
        touched = _touched(conn, entry["event_id"])
        if touched is not None:
            found["recall-stale"] = {**entry, "touched": touched[0], "written": touched[1], "widening": touched[2]}
    return found


def _touched(conn, event_id):
    """``(the task ids the events after event_id touched, whether any landed besides recalls,
    ticks and the comms floor's, whether one of them can move a related section: any but
    RECALL_OWN_ONLY)``, or None when they cannot be bounded that way: more than
    RECALL_EVENTS of them, or one not of RECALL_TASK_ENTITIES or RECALL_WIDE_ENTITIES (a
    consolidation, a restore, an import: the recall-stale sweep then runs whole)."""
    actions, entities = ", ".join("?" for _ in RECALL_NEUTRAL), ", ".join("?" for _ in COMMS_ENTITIES)
    rows = conn.execute(f"SELECT entity_type, entity_id, action FROM audit_events WHERE id > ? AND action NOT IN"
                        f" ({actions}) AND entity_type NOT IN ({entities}) ORDER BY id LIMIT ?",
                        (event_id, *RECALL_NEUTRAL, *COMMS_ENTITIES, RECALL_EVENTS + 1)).fetchall()
    bounded = RECALL_TASK_ENTITIES + RECALL_WIDE_ENTITIES
    if len(rows) > RECALL_EVENTS or any(row[0] not in bounded or row[2] in RECALL_UNBOUNDED
                                        or not isinstance(row[1], str) for row in rows):
        return None
    return (sorted({row[1] for row in rows if row[0] in RECALL_TASK_ENTITIES}), bool(rows),
            any(row[2] not in RECALL_OWN_ONLY for row in rows))


def _counts(entry, keys, cap=None):
    """True when every ``keys`` of ``entry`` is a count (an int, not a bool, >= 0, <= ``cap``)."""
    return all(isinstance(entry.get(key), int) and not isinstance(entry.get(key), bool) and entry[key] >= 0
               and (cap is None or entry[key] <= cap) for key in keys)


def _carry_standing(conn, sensed, seen, standing, mark, keep, deferring=False):
    """The tick's findings with the standing ones carried (see :func:`_standing`), and their
    entries written into ``mark`` for the next tick.  ``deferring``: the tick leaves its slice
    to the next one (a burst), and with it the recall turns (the time share and the queue's
    front): only the recalls whose own inputs the burst touched are re-checked now.

    A recall whose own inputs a lifetime end since the previous tick touched (its task's or
    a dependency's lease or note, ended at or after the entry's ``next_end``, the first end
    the previous tick had ahead) is re-checked as after a write to that task, and the recalls
    any write can move queue; so an expired lease rebuilds the recalls it shows in, not all."""
    findings, by_kind = sensed["findings"], dict(sensed["by_kind"])
    at = sensed["sensed_at"]
    entry = standing.get("overdue")
    if entry is not None:
        # the listing is the first LIMIT by id of every overdue task: those remembered (the
        # first LIMIT before) and those that fell due since
        old = [_remembered(digest, row, "overdue") for digest, row in seen.items() if row["kind"] == "overdue_task"]
        if len(old) == min(entry["total"], sense.LIMIT):
            fresh, total = sense.overdue_between(conn, entry["at"], at)
            total += entry["total"]
        else:  # memory no longer matches the entry: recount
            fresh, total = sense.overdue_between(conn, None, at)
            old = None
        merged = {item["digest"]: item for item in (old or []) + fresh}
        listed = sorted(merged.values(), key=lambda item: item["subjects"])[:sense.LIMIT]
        round_ = None
        if entry["recount"] and old is not None:  # this turn's part of the recount round
            round_ = _recount_window(conn, entry, listed, total, at)
            if round_ is None:  # the carried listing or total is not what the tasks hold: recount in full
                fresh, total = sense.overdue_between(conn, None, at)
                listed, round_ = fresh, {}
        elif isinstance(entry.get("round"), dict):
            round_ = entry["round"]  # the round goes on at the next recount turn
        findings = [item for item in findings if item["kind"] != "overdue_task"] + listed
        by_kind.pop("overdue_task", None)
        if total:
            by_kind["overdue_task"] = total
    mark["overdue"] = {"event_id": mark["event_id"], "at": at, "total": by_kind.get("overdue_task", 0)}
    if entry is not None and round_:
        mark["overdue"]["round"] = round_
    # a round's windows in recount turns (the last one compares the whole count)
    mark["turns"]["overdue"] = 1 + mark["overdue"]["total"] // OVERDUE_WINDOW
    entry = standing.get("recall-stale")
    if entry is not None:
        volatile, next_end, pending = entry["volatile"], entry.get("next_end"), list(entry.get("pending") or ())
        start = entry["next"] if entry["next"] < len(volatile) else 0
        # a recall whose last check still holds for time alone: before the instant it can
        # move with time alone, its receipt files untouched since (checked below)
        quiet = _quiet(_unpacked(entry.get("quiet"), volatile), volatile, at)
        carried = [_remembered(digest, row, "recall-stale") for digest, row in seen.items() if row["kind"] in RECALL_KINDS]
        moved, cited, touched = (), None, set(entry["touched"])
        # a lifetime ended since (a lease, a note's; a fact's window only moves a related
        # section): its task counts as touched, and the recalls any write can move queue
        passed = next_end is not None and next_end <= at
        if entry["written"] or passed:  # and the cited recalls whose own inputs the events since touched
            from mindos.context import recall  # lazy: only a tick after writes bounds them

            cited = recall.cited_events(conn)  # read once: the re-check below filters the same list
            if passed:
                touched |= set(recall.lapsed(conn, next_end, at))
            moved, wide, next_end = recall.affected(conn, touched, at, cited=cited)
            # the recalls any write can move (a related or semantic section) queue for their
            # turn, in order: the front RECALL_SLICE are re-checked a tick (after heartbeats
            # alone none joins: see RECALL_OWN_ONLY)
            queued = set(pending)
            joining = [task for task in wide if task not in queued] if entry["widening"] or passed else []
            pending = [task for task in pending + joining if task not in moved]
            # the writes void the check of a recall whose own inputs they touched; one they may
            # have moved through a search keeps its check for time alone (its write re-check is
            # the queue's), and the rest did not move: kept
            quiet = {task: value for task, value in quiet.items() if task not in moved}
            # a handoff since may cite another recall, or none: the touched tasks' recalls are
            # placed in the time rotation again, which goes on from the task it had reached
            again = sorted((set(volatile) - touched) | set(recall.volatile_tasks(cited, touched)))
            if again != volatile:
                import bisect  # lazy: only a tick after a handoff that changed the rotation

                start = bisect.bisect_left(again, volatile[start]) if volatile else 0
                volatile, start = again, start if start < len(again) else 0
        share = [] if deferring else volatile[start:start + RECALL_SLICE]
        # a touched task whose finding is carried is re-checked with them (its handoff may cite
        # no recall any more: the finding then goes)
        forced = set(moved) | ({item["subjects"][0] for item in carried} & touched)
        front = [] if deferring else pending[:RECALL_SLICE]
        turn = sorted(set(share) | forced | set(front))
        # a recall on its time turn whose check still holds for time is the one its check found,
        # or (queued) is the queue's to re-check: kept, not rebuilt twice (one the writes touched,
        # or at the queue's front, is always rebuilt; one past its time is rebuilt, even queued)
        kept = _still_quiet(conn, quiet, [task for task in share if task not in forced and task not in front])
        turn = [task for task in turn if task not in kept]
        pending = [task for task in pending if task not in turn]  # re-checked now, after the writes
        counts = dict(entry["by_kind"])
        if turn:
            from mindos.context import recall  # lazy: only a tick with recalls to re-check builds bundles

            out = sense._Out("recall-stale", sense.LIMIT)
            fresh = {}
            sense.recall_findings(out, recall.stale_sweep(conn, tasks=turn, quiet=fresh, cited=cited)[0]["items"])
            quiet.update(_quiet(fresh, volatile, at))
            for item in carried:
                if item["subjects"][0] in turn:
                    counts[item["kind"]] = counts.get(item["kind"], 0) - 1
            carried = [item for item in carried if item["subjects"][0] not in turn] + out.items
            for kind, count in out.totals.items():
                counts[kind] = counts.get(kind, 0) + count
        counts = {kind: count for kind, count in counts.items() if count > 0}
        findings = findings + carried
        by_kind.update(counts)
        after = start + len(share)
        stored = {key: value for key, value in entry.items() if key not in ("touched", "written", "widening")}
        mark["recall"] = {**stored, "event_id": mark["event_id"], "by_kind": dict(sorted(counts.items())),
                          "volatile": volatile, "next": after if after < len(volatile) else 0, "next_end": next_end,
                          "pending": pending, "quiet": _packed(quiet, volatile)}
    elif "recall" in keep or not any(item["kind"] in RECALL_KINDS for item in findings):
        horizon = keep.get("recall") or {"next_end": None, "volatile": []}
        mark["recall"] = {"event_id": mark["event_id"], "next_end": horizon["next_end"],
                          "volatile": horizon["volatile"], "next": 0, "pending": [],
                          "by_kind": {kind: count for kind, count in sorted(by_kind.items()) if kind in RECALL_KINDS},
                          "quiet": _packed(_quiet(horizon.get("quiet"), horizon["volatile"], at), horizon["volatile"])}
    return {**sensed, "findings": findings, "by_kind": dict(sorted(by_kind.items()))}


def _recount_window(conn, entry, listed, total, at):
    """One recount turn's part of the overdue recount round; return the round to keep
    (``{}`` after its last window: the next recount turn starts another), or None when the
    carried findings are not what the tasks hold (the caller then recounts in full).

    A round counts the entries of the open-overdue index that were overdue at its start
    (``upto``: due before it), OVERDUE_WINDOW a turn in index order from its cursor
    (``from``, the last entry counted); while no event touches a task those entries do not
    change, so the round's sum is the whole count at its start, and with the tasks that
    fell due since it is compared with the carried ``total`` at its last window.  Each turn
    also reads the tasks by id up to the last one listed: the listing must be exactly the
    overdue ones among them, with the details they have now (what a recount would list)."""
    import sqlite3  # lazy: only recount turns need the error class

    where = f"due_at IS NOT NULL AND due_at < ? AND {sql.open_condition()}"
    source = "tasks INDEXED BY idx_tasks_overdue_open"
    state = entry.get("round") if isinstance(entry.get("round"), dict) else {}
    upto, start, counted = state.get("upto"), state.get("from"), state.get("sum")
    if not (isinstance(upto, str) and upto <= at and isinstance(counted, int) and not isinstance(counted, bool)
            and counted >= 0 and (start == [] or isinstance(start, list) and len(start) == 2
                                  and all(isinstance(value, str) for value in start))):
        upto, start, counted = entry["at"], [], 0  # a new round: what was overdue at the carried count
    after, params = (" AND (due_at, id) > (?, ?)", [upto, *start]) if start else ("", [upto])
    try:
        if listed:  # the listing against the tasks by id up to its last one
            rows = conn.execute(f"SELECT id, due_at, priority FROM tasks INDEXED BY {_listing_index(conn, listed, total)}"
                                f" WHERE id <= ? AND {where} ORDER BY id LIMIT ?",
                                (listed[-1]["subjects"][0], at, len(listed) + 1)).fetchall()
            if {sense.overdue_finding(row)["digest"] for row in rows} != {item["digest"] for item in listed}:
                return None
        # the window's last entry (a step over the entries before it, none handed back); a
        # whole window goes on after it, and only a shorter last one is counted.  When the
        # carried total says this is likely the round's last window, its entries are counted
        # first (up to a whole window): a shorter one then needs no second step over them
        found = None
        if total - counted < OVERDUE_WINDOW:
            found = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM {source} WHERE {where}{after} LIMIT ?)",
                                 (*params, OVERDUE_WINDOW)).fetchone()[0]
        if found is None or found >= OVERDUE_WINDOW:
            last = conn.execute(f"SELECT due_at, id FROM {source} WHERE {where}{after} ORDER BY due_at, id"
                                f" LIMIT 1 OFFSET ?", (*params, OVERDUE_WINDOW - 1)).fetchone()
            if last is not None:
                return {"upto": upto, "from": [last[0], last[1]], "sum": counted + OVERDUE_WINDOW}
            found = conn.execute(f"SELECT count(*) FROM {source} WHERE {where}{after}", params).fetchone()[0]
        since = conn.execute(f"SELECT count(*) FROM {source} WHERE due_at >= ? AND {where}", (upto, at)).fetchone()[0]
    except sqlite3.OperationalError:  # an index dropped by hand: the full recount's plain read
        return None
    return {} if counted + found + since == total else None


def _listing_index(conn, listed, total):
    """The index a recount turn reads the overdue listing's tasks from: the tasks walked in
    id order up to the last one listed (about ``len(listed)`` times the tasks per overdue
    one), or every overdue task read from the open-overdue index and the ones up to it kept,
    whichever the listing's cost model (:data:`mindos.autonomy.sense.ID_WALKED_ROW`,
    :data:`~mindos.autonomy.sense.OVERDUE_SORTED_ROW`) finds cheaper: at 100k tasks with
    4,000 overdue the index (about 2M instructions instead of 11M), at 1M with 40,000 the
    walk.  Both read the same rows."""
    tasks = sql.largest_rowids(conn, ["tasks"])["tasks"]
    walk = len(listed) * tasks // max(total, 1) + 1
    return "idx_tasks_overdue_open" if total * sense.OVERDUE_SORTED_ROW < walk * sense.ID_WALKED_ROW \
        else "idx_tasks_id_status"


def _quiet(entries, volatile, now):
    """The well-formed ``{task: [horizon, checked_ns]}`` entries of ``entries`` (see
    :func:`mindos.context.recall.check_cited`) for the tasks of ``volatile`` whose horizon
    is still ahead of ``now`` (None: no horizon)."""
    if not isinstance(entries, dict):
        return {}
    wanted = set(volatile)
    return {task: [value[0], value[1]] for task, value in entries.items()
            if task in wanted and isinstance(value, list) and len(value) == 2
            and (value[0] is None or isinstance(value[0], str) and now < value[0])
            and isinstance(value[1], int) and not isinstance(value[1], bool)}


def _packed(quiet, volatile):
    """``quiet`` as the watermark keeps it, small enough for every tick's audit event:
    ``{"checked_ns": the oldest check's file time, "until": [per task of volatile, its
    horizon (None: none), or "" when it has no entry]}`` (every entry is then compared with
    the oldest check's time: a file changed since makes them all be rebuilt, never kept)."""
    return {"checked_ns": min((value[1] for value in quiet.values()), default=0),
            "until": [quiet[task][0] if task in quiet else "" for task in volatile]}


def _unpacked(stored, volatile):
    """:func:`_packed`'s form back as ``{task: [horizon, checked_ns]}`` (``{}`` when it is not
    that form or not aligned with ``volatile``)."""
    if not isinstance(stored, dict) or not isinstance(stored.get("until"), list) \
            or len(stored["until"]) != len(volatile):
        return {}
    return {task: [until, stored.get("checked_ns")] for task, until in zip(volatile, stored["until"]) if until != ""}


def _still_quiet(conn, quiet, tasks):
    """The ``tasks`` with an entry in ``quiet`` whose receipt files (the task's own and its
    prerequisites': every file its bundle can read) are all regular files untouched since the
    entry's check (their modification and change times before it, less RECALL_FILE_SLACK_NS)."""
    found = set()
    for task in tasks:
        if task not in quiet:
            continue
        cutoff = quiet[task][1] - RECALL_FILE_SLACK_NS
        paths = [row[0] for row in conn.execute(
            "SELECT path FROM receipts WHERE task_id = ? UNION SELECT r.path FROM dependencies d"
            " JOIN receipts r ON r.task_id = d.depends_on WHERE d.task_id = ?", (task, task))]
        if all(_file_before(conn.home, path, cutoff) for path in paths):
            found.add(task)
    return found


def _file_before(home, path, cutoff):
    """True when receipt file ``path`` (as a receipt row stores it) is a regular file whose
    times are all before ``cutoff`` (ns); a missing file, or a link, counts as changed."""
    import stat  # lazy: only a tick that keeps recalls with receipts stats their files

    path = path if isinstance(path, str) else ""
    try:
        st = os.lstat(path if os.path.isabs(path) else os.path.join(home, path))
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and max(st.st_mtime_ns, st.st_ctime_ns) < cutoff


def _remembered(digest, row, source):
    """A remembered finding carried forward: its kind, subjects, severity and digest (the
    detail stays with the tick that reported it)."""
    import json  # lazy: only carried findings decode their stored subjects

    try:
        subjects = json.loads(row["subjects"])
    except (TypeError, ValueError, RecursionError):
        subjects = [str(row["subjects"])]
    subjects = subjects if isinstance(subjects, list) and subjects else [str(row["subjects"])]
    return {"kind": row["kind"], "subjects": subjects, "severity": row["severity"], "detail": {}, "source": source,
            "digest": digest, "carried_from": row["last_seen_at"]}


def _tick(conn, *, dry_run, max_repairs, lock):
    now = clock.now_iso()
    previous = sense.last_watermark(conn)
    mark, families, slice_name, window, part = _sweep_plan(conn, previous)
    pins, keep = [], {}
    standing = _standing(conn, previous, now, slice_name)
    from mindos.recovery import checkpoint  # lazy: the doctor's checkpoint pass reads the counts

    # the events up to each checkpoint: moved from the previous tick's counts, and counted
    # whole only when the count round of the chain turns disagrees with them at its end (a
    # count lowered by a deletion is found so; see _count_window)
    counts = previous.get("event_counts") if previous is not None and previous.get("recount") is not True else None
    checkpoint.trust_counts(conn, {pair[0]: pair[1] for pair in counts if isinstance(pair, list) and len(pair) == 2}
                            if isinstance(counts, list) else None)
    conn._mindos_window_events = None
    sensed = sense.sense(conn, since=None if previous is None else {**previous, "fts_now": mark["fts"]},
                         include=families, pins=pins, chain_window=window, part=part, skip=tuple(standing), keep=keep)
    if previous is not None and slice_name == COUNT_TURN:
        mark["chain_count"], mark["recount"] = _count_window(conn, previous, window)
    elif previous is not None and _count_pair(previous.get("chain_count")):
        mark["chain_count"] = previous["chain_count"]  # the round goes on at the next count turn
    mark["event_counts"] = sorted([event_id, count] for event_id, count in
                                  (getattr(conn, "_mindos_counts", None) or {}).items())[-20:]
    seen = memory(conn)
    if part and part.get("fts_rows"):  # a window that found drift compared the whole index
        found = {item["digest"] for item in sensed["findings"]
                 if item["kind"] == "fts_index_drift" and part["indexes"][0] in item["subjects"]}
        part = {**part, "whole": bool(found)}
        mark["fts_round"] = sorted(found)[:sense.LIMIT] if found else mark["fts_round"]
    checked = _checked(families, window, previous, part)
    round_ = set()
    if part and part.get("rows"):  # the integrity findings of a window round, kept until it ends
        mark["round"] = sorted(set(mark["round"]) | {
            item["digest"] for item in sensed["findings"]
            if item["kind"] == "database_integrity" and part["tables"][0] in item["subjects"]
            or item["kind"] == "task_readiness_drift" and part["tables"][0] == "tasks"})[:sense.LIMIT]
        round_ = set(mark["round"])
        if part["last"]:
            mark["round"] = []
    if part and part.get("fts_rows"):  # the drift found in a window round, kept until it ends
        round_ = set(mark["fts_round"])
        if part["last"]:
            mark["fts_round"] = []
    if part and (part.get("ref_rows") or part.get("ref_keys")):  # a window round's references findings, kept to its end
        table, about = part["ref_tables"][0], _reference_tables()
        mark["ref_round"] = sorted(set(mark["ref_round"]) | {
            item["digest"] for item in sensed["findings"] if item["kind"] in sense.FAMILY_KINDS["references"]
            and (table in item["subjects"] or about.get(item["kind"]) == table)})[:sense.LIMIT]
        round_ = set(mark["ref_round"])
        if part["last"]:
            mark["ref_round"] = []
    if previous is not None:
        carried_findings, carried_kinds = _carry(sensed["findings"], sensed["by_kind"], seen, checked, round_)
        sensed = {**sensed, "findings": carried_findings, "by_kind": carried_kinds}
    sensed = _carry_standing(conn, sensed, seen, standing, mark, keep, deferring=slice_name == DEFERRED)
    repairing = lock != "busy"
    runs, skipped, invalid = [], [], []
    if repairing:
        runs, skipped, invalid = _plan_and_repair(conn, sensed, seen, dry_run=dry_run, max_repairs=max_repairs,
                                                  previous=previous, mark=mark)
    tripped = [item for item in sensed["findings"] if _tripped(seen, item)]
    findings, by_kind = sensed["findings"], dict(sensed["by_kind"])
    failures = {}  # digest -> (repair, error) for this tick
    if runs and not dry_run:
        names = sense.sources_for({entry["finding"] for entry, _ in runs})
        again = sense.sense(conn, only=names, since=previous, include=families, chain_window=window, part=part)
        # every kind the re-run sources produce is replaced: a repair may turn one kind into
        # another (an escalated stall becomes a decision this tick, not the next)
        kinds = {entry["finding"] for entry, _ in runs} | sense.kinds_of(names)
        findings = [item for item in findings if item["kind"] not in kinds] + \
            [item for item in again["findings"] if item["kind"] in kinds]
        by_kind = {kind: count for kind, count in by_kind.items() if kind not in kinds}
        by_kind.update({kind: count for kind, count in again["by_kind"].items() if kind in kinds})
        if previous is not None:  # a narrow source re-checked its kinds in full; the rest stay carried
            narrow = {kind for name in names if name in sense.NARROW_NAMES for kind in sense.kinds_of([name])}
            findings, by_kind = _carry(findings, by_kind, seen,
                                       lambda kind, subjects: kind in narrow or checked(kind, subjects))
        present = {item["digest"] for item in findings}
        for entry, record in runs:
            persisting = [digest for digest in record["findings"] if digest in present]
            record["resolved"] = [digest for digest in record["findings"] if digest not in present]
            record["persisting"] = persisting
            if not record["ok"] or persisting:
                reason = record["error"] or "finding still present after the repair"
                for digest in (persisting if record["ok"] else [d for d in record["findings"] if d in present]):
                    failures[digest] = (entry["name"], reason[:500])
        # a failure that reaches the breaker threshold trips it this tick
        for item in findings:
            if item["digest"] in failures and seen.get(item["digest"], {}).get("repair_failures", 0) + 1 \
                    >= BREAKER_FAILURES:
                tripped.append(item)
    elif runs:  # dry run: the state if every planned repair worked
        answered = {digest for _, record in runs for digest in record["findings"]}
        findings = [item for item in findings if item["digest"] not in answered]
    findings = sorted(findings, key=lambda f: (f["kind"], f["subjects"], f["digest"]))
    present = {item["digest"] for item in findings}
    tripped = list({item["digest"]: item for item in tripped if item["digest"] in present}.values())
    records = [record for _, record in runs]
    tripped_digests = {item["digest"] for item in tripped}
    decisions = [_brief(item, "breaker_open") for item in tripped]
    decisions += [_brief(item, item["kind"]) for item in findings
                  if item["severity"] == "decision" and item["digest"] not in tripped_digests]
    decisions += [{"kind": "repair_policy_invalid", "subjects": [bad["repair"]], "severity": "decision",
                   "reason": bad["error"], "digest": canonical.digest({"kind": "repair_policy_invalid",
                                                                        "subjects": [bad["repair"]]})}
                  for bad in invalid]
    rest = [item for item in findings if item["digest"] not in tripped_digests]
    failed_runs = [record for record in records if not record["ok"] or record.get("persisting")]
    progressed = [record for record in records if record["ok"] and (record["changed"] or dry_run)
                  and not record.get("persisting")]
    active = sense.active_work(conn)
    state, because = _state(rest, decisions, failed_runs, progressed, active)
    upkeep = index_upkeep(conn, dry_run=dry_run) if repairing else []
    new = [item for item in findings if item["digest"] not in seen]
    carried = len(findings) - len(new)
    resolved = sorted(digest for digest in seen if digest not in present)
    report = {
        "state": state, "because": because[:LISTED], "dry_run": dry_run, "lock": lock, "tick_at": now,
        "findings": {"total": sum(by_kind.values()), "by_kind": dict(sorted(by_kind.items())), "new": new[:LISTED],
                     "new_total": len(new), "carried": carried, "resolved": resolved[:LISTED],
                     "resolved_total": len(resolved)},
        "decisions": decisions[:LISTED], "repairs": records, "skipped_repairs": skipped,
        "max_repairs": max_repairs, "active_leases": active, "index_upkeep": upkeep,
        "sweep": {"mode": "full" if previous is None else "changed_since_last_tick",
                  "since_event_id": None if previous is None else previous["event_id"],
                  "full_checks": list(families), "slice": slice_name,
                  "slice_part": next((value for value in (part or {}).values()), None),
                  "slice_rows": next((part[key] for key in ("rows", "ref_rows", "ref_keys", "fts_rows") if (part or {}).get(key)),
                                     None),
                  "rotation_ticks": PERIOD_TICKS, "period_ticks": PERIOD_TICKS * max(mark["turns"].values()),
                  "chain_window": list(window) if window else None,
                  "chain_period_ticks": PERIOD_TICKS * max(1, -(-mark["event_id"] // CHAIN_WINDOW))},
    }
    if dry_run:
        report["state_basis"] = "planned"
        return report
    with db.write(conn):
        if repairing:
            _remember(conn, findings, seen, failures, clock.now_iso())
        ledger.append_event(conn, "nanny", "nanny", "nanny_tick", {
            "state": state, "lock": lock, "because": because[:LISTED], "new": [item["digest"] for item in new][:LISTED],
            "carried": carried, "resolved": len(resolved), "max_repairs": max_repairs,
            "repairs": [{"repair": r["repair"], "ok": r["ok"], "changed": r["changed"]} for r in records],
            "decisions": [d["digest"] for d in decisions][:LISTED], "index_upkeep": upkeep,
            **({"watermark": {**mark, "slice": slice_name}} if repairing else {})})
    # after the tick's own event: the pin covers it; the checkpoints were swept by sense
    pin = checkpoint.auto_pin(conn, problems=pins, mark=mark)
    report["checkpoint_pin"] = {"pinned": pin["pinned"], "written": pin["written"], "problems": pin["problems"]}
    return report


def index_upkeep(conn, *, dry_run=False):
    """Merge the full-text indexes grown past UPKEEP_SEGMENTS segments level by level,
    within UPKEEP_PAGES leaf pages each; return ``[{"index", "segments_before",
    "segments_after"}]`` for those a step merged something in (a dry run, which writes
    nothing, lists every index past UPKEEP_SEGMENTS, without ``segments_after``).  An index
    whose segments all sit on different levels, as FTS5 leaves it when nothing was written
    since the last merge, costs one step that writes no page.  One whose levels are merged
    yet still hold more than UPKEEP_CEILING segments is merged whole, within the same page
    budget, until it holds no more than that."""
    done = []
    for name in fts.INDEXES:
        before = fts.segments(conn, name)
        if before is None or before <= UPKEEP_SEGMENTS:
            continue
        if dry_run:
            done.append({"index": name, "segments_before": before})
            continue
        merged, whole = False, False
        for _ in range(0, UPKEEP_PAGES, UPKEEP_STEP):
            with db.write(conn):
                worked = fts.merge(conn, name, UPKEEP_STEP, whole=whole)
            if worked:
                merged = True
                if whole and fts.segments(conn, name) <= UPKEEP_CEILING:
                    break
            elif whole or fts.segments(conn, name) <= UPKEEP_CEILING:
                break
            else:
                whole = True  # the levels are merged and the segments still too many: the next step merges whole
        if merged:
            done.append({"index": name, "segments_before": before, "segments_after": fts.segments(conn, name)})
    return done


def last_tick(conn):
    """The newest audited tick: ``{"at", "state", ...payload}`` or None."""
    row = conn.execute("SELECT created_at, payload_json FROM audit_events WHERE action = 'nanny_tick'"
                       " ORDER BY id DESC LIMIT 1").fetchone()
    if row is None:
        return None
    payload = ledger.parse_payload({}, row[1]).get("payload") or {}
    return {"at": row[0], **payload}


def metrics(conn):
    """Nanny counters: ticks run and the open breakers."""
    breakers = conn.execute("SELECT count(*) FROM nanny_findings WHERE repair_failures >= ?",
                            (BREAKER_FAILURES,)).fetchone()[0]
    return {"nanny_ticks_total": ledger.count_action(conn, "nanny_tick"), "nanny_breakers_open": breakers}
