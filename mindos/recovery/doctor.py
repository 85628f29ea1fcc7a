"""The doctor: one read-only consistency sweep over a home, naming every problem.

Design decisions
  * **Never mutates.**  The database is opened read-only (``mode=ro``: no migration, no
    WAL checkpoint on close; an idle home ``immutable``, so no side files appear either)
    and receipt files are only read, so the database file and every receipt stay
    byte-identical.  Should an agent start writing during an immutable sweep (the file's
    size, mtime or WAL changes), the sweep is run again through the live WAL.  A home on an older or newer schema is reported,
    not upgraded.
  * **Problems carry their kind and ids** (``{"kind": "orphan_note", "note_id": 7, ...}``)
    so an operator or the nanny can act on each; ``ok`` is true when there are none.
  * **Notes are not problems**: facts worth knowing that need no repair (an empty memory
    store, dependency edges naming tasks that do not exist yet, which the graph keeps on
    purpose, and the complete receipt files a killed writer leaves without a row, which
    ``receipts-sweep`` adopts or quarantines).
  * **Generic where other domains grow**: foreign keys are checked on every table through
    ``PRAGMA foreign_key_check``; the facts and memories checks run when those tables
    exist; every FTS index of the registry is compared through ``fts5vocab``.
"""

import os
import re
import sqlite3
import stat

from mindos.core import clock, files
from mindos.core.canonical import sha256_hex
from mindos.recovery import checkpoint, replication, tables
from mindos.errors import IntegrityError, MindosError
from mindos.store import db, fts, ledger, sql
from mindos.work.receipts import MAX_FILE_BYTES as MAX_RECEIPT_BYTES

LIMIT = 100  # problems listed per kind; the counts stay exact

# child table -> the kind of its rows whose task is gone (the nanny reads it back the other way)
NAMED_ORPHANS = {"dependencies": "orphan_dependency", "notes": "orphan_note", "handoffs": "orphan_handoff",
                  "receipts": "orphan_receipt", "heartbeats": "orphan_heartbeat"}
_TERMINAL = ("completed", "failed", "cancelled")
# child tables with rowids whose new rows the incremental references check reads
ROWID_CHILDREN = ("notes", "handoffs", "receipts", "heartbeats")
# child tables without rowids whose orphans can be read a primary-key window at a time (the
# nanny's references turns over a large one), with the alias their orphan query reads them by
KEYED_CHILDREN = {"dependencies": "d"}


class _Report:
    def __init__(self):
        self.problems, self.by_kind = [], {}

    def add(self, kind, **fields):
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
        if self.by_kind[kind] <= LIMIT:
            self.problems.append({"kind": kind, **fields})


def run(home=None, *, full=False, since_checkpoint=False):
    """Sweep ``home`` (default: the home in force); return the report.

    ``full``: a complete ``integrity_check`` (every index compared with its table) instead
    of the quick structural check; each damaged index or table is named with its repair.
    ``since_checkpoint``: start from the newest signed checkpoint the live ledger still
    contains (see :func:`sweep`'s ``since``); without one the sweep is the full one.

    ``{"ok", "home", "problems", "problems_by_kind", "notes", "checks", "counts"}``.
    Raises NotFound when the home has no database.
    """
    if home is None:
        from mindos.core.home import home_dir  # lazy: explicit homes never resolve

        home = home_dir()
    home = os.path.abspath(home)
    before = _fingerprint(home)
    try:
        conn = db.connect_readonly(home, mapped=False)  # a sweep reads every page once
    except IntegrityError as exc:  # not SQLite at all: named, never repaired
        report = _Report()
        report.add("database_unusable", detail=str(exc)[:300],
                   hint="restore it from a snapshot or move it aside; MindOS never repairs it in place")
        return {"ok": False, "home": home, "problems": report.problems, "problems_by_kind": dict(report.by_kind),
                "notes": {}, "checks": ["database_file"], "counts": {}}
    try:
        report = _swept(conn, full, since_checkpoint)
    except sqlite3.DatabaseError:
        if not conn.immutable:
            raise
        report = None  # a writer changed the file under an immutable read: sweep again, live
    finally:
        conn.close()
    if report is not None and (not conn.immutable or _fingerprint(home) == before):
        return report
    # an agent started writing during the sweep: read again through its WAL (mode=ro)
    conn = db.connect_readonly(home, live=True, mapped=False)
    try:
        return _swept(conn, full, since_checkpoint)
    finally:
        conn.close()


def _swept(conn, full, since_checkpoint):
    """:func:`sweep` for :func:`run`: from the anchor when ``since_checkpoint``, whose
    checkpoint pass the sweep then reuses instead of reading every checkpoint again."""
    if not since_checkpoint:
        return sweep(conn, full=full)
    problems, since = _anchor(conn)
    return sweep(conn, full=full, since=since, checkpoints=problems)


def _anchor(conn):
    """``(checkpoint problems, watermark)``: the problems of every checkpoint (as
    :func:`mindos.recovery.checkpoint.sweep` names them), and the watermark of the newest
    checkpoint that verifies, is signed by this home or a trusted key and is contained in
    the live ledger (``{"checkpoint": path, ...}``), or a watermark of ``{"full": reason}``
    when there is none (the sweep is then the full one)."""
    problems, found = checkpoint.sweep_with_docs(conn)
    usable = [(doc["last_event_id"], path, doc) for path, doc, trust, contained in found
              if contained and trust != "unsigned"]
    if not usable:
        return problems, {"full": "no signed checkpoint contained in the live ledger"}
    _, path, doc = max(usable, key=lambda item: (item[0], item[1]))
    mark = dict(doc.get("watermark") or {}) if isinstance(doc.get("watermark"), dict) else {}
    mark.update(event_id=doc["last_event_id"], anchor=doc["head_hash"], checkpoint=path)
    return problems, mark


# the sweeps that grow with the home: a sweep ``since`` a watermark runs these on what
# changed after it (or in full when named in ``include``); every other check is indexed or
# small and always runs in full
FAMILIES = ("integrity", "audit_chain", "receipts", "fts_drift", "references")
_ALL_ROWIDS = 2 ** 63 - 1  # the upper bound of a window over every rowid
_SLACK_NS = 2_000_000_000  # file times this close to a watermark count as after it


def _fingerprint(home):
    """What changes when anyone writes: the database file's size and mtime, and its WAL."""
    path = db.database_path(home)
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, os.path.exists(path + "-wal")


def sweep(conn, *, full=False, since=None, include=(), chain_window=None, part=None, counts=True,
          checkpoints=None):
    """The doctor's checks over an open (read-only or not) connection; reads only.
    ``full``: ``integrity_check`` (indexes included) instead of ``quick_check``.

    ``since``: a :func:`watermark` (with ``anchor``, the hash of its event, and optionally
    ``checkpoint``): the :data:`FAMILIES` not named in ``include`` look only at what changed
    after it -- the chain from that event on, receipt rows added after it and receipt files
    changed, added or gone since, new rows of each full-text index plus its indexed/content
    balance, the references (foreign keys, supersession links, live handoffs, fact
    references) of the rows added after it -- and the integrity check is left to the full
    sweep.  A ``since`` holding only
    ``{"full": reason}`` means no watermark could be trusted: everything runs in full.  The
    report then says what ran (``since``).  ``chain_window`` (``(after, upto)``, with ``since``
    and ``audit_chain`` not in ``include``): also verify the events in that id range (the
    nanny's rotating slice of the whole chain); only its part up to the watermark is
    scanned, the rest is the incremental part's.  ``part`` (with ``since``): the nanny's other
    bounded slices, ``{"tables": [...]}`` (a structural ``quick_check`` of just those tables
    and their indexes; with ``"rows": [after, upto]``, one table's rows in that rowid range
    only, see :func:`_integrity_rows`; with ``"keyed": True`` as well, a table without rowids
    and ``after``/``upto`` primary keys, see :func:`_integrity_keys`) or ``{"indexes": [...]}``
    (those full-text indexes checked in full: all their rows as one window of
    :func:`mindos.store.fts.window_drifts`, each compared whole only when that window or its
    balance or new rows say it drifted; with ``"fts_rows": [after, upto]``, one index whose
    rows in that rowid range are checked so).
    ``{"ref_tables": [...]}`` (the references of those tables checked in full; with
    ``"ref_rows": [after, upto]``, one child table's rows in that rowid range and those
    past the watermark, see :func:`_rows_past`; with ``"ref_keys": [after, upto]``, one
    table of KEYED_CHILDREN, its rows with primary keys in that range, see :func:`_key_range`).
    ``counts``: False leaves the row counts out of the report (``counts`` is then empty, and
    the memory store note says only whether it is empty: no table is counted).
    ``checkpoints``: the problems of a checkpoint pass the caller just ran on ``conn`` (None:
    the sweep runs it)."""
    report, notes, checks = _Report(), {}, []
    if since is not None and "event_id" not in since:
        reason, since = since.get("full"), None
    else:
        reason = None
    deep = set(FAMILIES) if since is None else set(include)
    existing = set(checkpoint.data_tables(conn))
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    checks.append("schema_version")
    if version == 0:  # MindOS never leaves a database without its schema: a truncated or foreign file
        size = os.path.getsize(conn.path) if os.path.exists(conn.path) else 0
        report.add("database_empty" if size == 0 else "database_without_schema", bytes=size,
                   hint="every command refuses it; restore it from a snapshot or move it aside and run init")
    elif version > db.latest_version():  # this code cannot open it at all
        report.add("schema_version_mismatch", version=version, expected=db.latest_version())
    elif version < db.latest_version():  # the next ordinary connection migrates it forward
        notes["schema_version"] = {"version": version, "expected": db.latest_version(),
                                   "status": "behind: migrated on next use"}
    part = part or {}
    readiness = None  # the tasks' derived prerequisite counts, checked with the integrity family
    if "integrity" in deep:
        checks.append("integrity_full" if full else "integrity")
        _integrity(conn, report, full)
        readiness = "whole"
    elif part.get("tables") and part.get("rows") and part.get("keyed"):
        checks.append("integrity_rows")
        _integrity_keys(conn, report, part["tables"][0], *part["rows"])
    elif part.get("tables") and part.get("rows"):
        checks.append("integrity_rows")
        _integrity_rows(conn, report, part["tables"][0], *part["rows"])
        readiness = part["rows"] if part["tables"][0] == "tasks" else None  # the window's tasks
    elif part.get("tables"):
        checks.append("integrity_tables")
        _integrity(conn, report, False, only=part["tables"])
        readiness = "whole" if "tasks" in part["tables"] else None
    if readiness is not None and "tasks" in existing and "unmet_deps" in tables.declared(conn, "tasks"):
        checks.append("task_readiness" if readiness == "whole" else "task_readiness_rows")
        _readiness(conn, report, None if readiness == "whole" else readiness)
    counted = bool(counts)
    counts = {name: tables.row_count(conn, name)
              for name in ("tasks", "audit_events", "notes", "handoffs", "receipts") if name in existing} \
        if counts else {}
    now = clock.now_iso()
    # references (foreign keys, supersession links, live handoffs, fact references): in
    # full, or after a watermark only the rows added since (``after``: {table: rowid})
    # (a table of ``part["ref_tables"]`` is checked whole: its watermark rowid counts as 0)
    after = None if "references" in deep else {**_rowids(since), **{t: 0 for t in part.get("ref_tables", ())}}
    if after is not None and part.get("ref_rows"):  # one table's rows in a window (and those past the watermark)
        windowed = part["ref_tables"][0]
        after[windowed] = (*part["ref_rows"], _rowids(since).get(windowed, 0))
    # after a watermark, each table's largest rowid now (one statement): a check of the rows
    # past the watermark is skipped where there are none (an idle tick runs none of them)
    tops = _tops(conn, existing) if since is not None else {}
    checks.append("foreign_keys")
    keyed = (part["ref_tables"][0], *part["ref_keys"]) if after is not None and part.get("ref_keys") else None
    _foreign_keys(conn, report, existing, after, part.get("ref_tables", ()), tops, keyed)
    if "dependencies" in existing and "tasks" in existing and after is None:
        missing = conn.execute("SELECT count(*) FROM dependencies d WHERE NOT EXISTS"
                               " (SELECT 1 FROM tasks t WHERE t.id = d.depends_on)").fetchone()[0]
        notes["dependencies_on_missing_tasks"] = missing
    if "receipts" in existing:
        checks.append("receipts")
        _receipts(conn, report, notes, None if "receipts" in deep else since)
    checks.append("audit_chain")
    if "audit_events" in existing:
        if "audit_chain" in deep:
            chain = ledger.verify_chain(conn)
        else:
            chain = ledger.verify_chain(conn, after=since["event_id"], anchor=since["anchor"])
            if chain_window is not None and chain_window[0] < min(chain_window[1], since["event_id"]):
                window = ledger.verify_chain(conn, after=chain_window[0],
                                             upto=min(chain_window[1], since["event_id"]))
                chain = {"problems": window["problems"] + chain["problems"]}
                # the events the window holds, for the caller's count round (the nanny's)
                conn._mindos_window_events = (chain_window[0], min(chain_window[1], since["event_id"]),
                                              window["events"])
        for problem in chain["problems"]:
            report.add(problem["kind"], **{k: v for k, v in problem.items() if k != "kind"})
    if "tasks" in existing:
        checks.append("leases")
        _leases(conn, report, now)
    for table in ("notes", "handoffs"):
        if table in existing:
            checks.append(f"{table}_integrity")
            if after is None or not _none_past(tops, table, after.get(table, 0)):
                _supersession(conn, report, table, None if after is None else after.get(table, 0))
    if "handoffs" in existing and (after is None or not _none_past(tops, "handoffs", after.get("handoffs", 0))):
        # the tasks of the handoffs past the watermark (or in a window); checked whole, every
        # live handoff by task (from idx_handoffs_one_live, while it is there), no list of tasks first
        whole = after is None or after.get("handoffs", 0) == 0
        rows, params = ("", ()) if whole else _rows_past(after.get("handoffs", 0), "")
        only = "" if whole else f" AND task_id IN (SELECT task_id FROM handoffs WHERE {rows})"
        for row in conn.execute("SELECT task_id, count(*) FROM handoffs WHERE superseded_by IS NULL" + only +
                                " GROUP BY task_id HAVING count(*) > 1 ORDER BY task_id", params):
            report.add("multiple_live_handoffs", task_id=row[0], live=row[1])
    checks.append("checkpoints")
    for problem in checkpoint.sweep(conn) if checkpoints is None else checkpoints:
        report.add(problem.pop("kind"), **problem)
    columns = tables.columns(conn, "facts") if "facts" in existing else ()
    if "task_id" in columns and "tasks" in existing:
        checks.append("fact_references")
        key = "id" if "id" in columns else "rowid"
        if after is None or not _none_past(tops, "facts", after.get("facts", 0)):
            for row in conn.execute(f"SELECT f.{key}, f.task_id FROM facts f WHERE f.task_id IS NOT NULL AND"
                                    " f.task_id <> '' AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = f.task_id)"
                                    f" AND f.rowid > ? ORDER BY f.{key}",
                                    (0 if after is None else after.get("facts", 0),)):
                report.add("dangling_fact_reference", fact_id=row[0], task_id=row[1])
    checks.append("memory_store")
    if "memories" in existing and not counted:  # without counts, whether the store is empty (one row read)
        empty = conn.execute("SELECT 1 FROM main.memories LIMIT 1").fetchone() is None
        notes["memory_store"] = {"status": "empty" if empty else "ok"}
    elif "memories" in existing:
        total = tables.row_count(conn, "memories")
        notes["memory_store"] = {"status": "empty" if total == 0 else "ok", "memories": total}
    else:
        notes["memory_store"] = {"status": "absent", "memories": 0}
    checks.append("fts_drift")
    for name in fts.INDEXES:
        if not fts.has(conn, name):
            continue
        if "fts_drift" not in deep and name not in part.get("indexes", ()) \
                and _fts_unchanged(conn, fts.INDEXES[name], since, tops):
            continue
        if "fts_drift" not in deep and part.get("fts_rows") and name in part["indexes"] \
                and not fts.window_drifts(conn, name, *part["fts_rows"]) \
                and _fts_unchanged(conn, fts.INDEXES[name], since, tops):
            continue  # a window of the index agrees with its rows: compared whole only when one does not
        if "fts_drift" not in deep and not part.get("fts_rows") and name in part.get("indexes", ()) \
                and not fts.window_drifts(conn, name, 0, _ALL_ROWIDS) \
                and _fts_unchanged(conn, fts.INDEXES[name], since, tops):
            continue  # a turn's index, all its rows as one window, agrees: compared whole only when it does not
        found = fts.drift(conn, name)
        if not found["ok"]:
            report.add("fts_index_drift", index=name, method=found["method"], indexed=found["indexed"],
                       source=found["source"], missing=found["missing"], missing_total=found["missing_total"],
                       stale=found["stale"], stale_total=found["stale_total"])
    lag = replication.status(conn.home)
    if lag is not None:
        checks.append("replication")
        notes["replication"] = lag
    result = {"ok": not report.by_kind, "home": conn.home, "problems": report.problems,
              "problems_by_kind": dict(sorted(report.by_kind.items())), "notes": notes, "checks": checks,
              "counts": counts}
    if since is not None:
        result["since"] = {"event_id": since["event_id"], "checkpoint": since.get("checkpoint"),
                           "full": sorted(deep), "changed_only": [f for f in FAMILIES if f not in deep]}
    elif reason:
        result["since"] = {"event_id": None, "checkpoint": None, "full": list(FAMILIES), "changed_only": [],
                           "reason": reason}
    return result


def _fts_unchanged(conn, spec, since, tops=None):
    """True when index ``spec`` needs no full drift check after ``since``: every content row
    added after the watermark is indexed and the indexed/content balance is the watermark's
    (a row dropped from or added to the index alone moves it)."""
    gap = (since.get("fts") or {}).get(spec.name)
    last = (since.get("rowids") or {}).get(spec.table)
    now = (since.get("fts_now") or {}).get(spec.name)  # the caller's balance of this moment (the nanny's)
    if not isinstance(gap, int) or not isinstance(last, int) \
            or (now if isinstance(now, int) else checkpoint.fts_gap(conn, spec)) != gap:
        return False
    if _none_past(tops, spec.table, last):  # no content row past the watermark
        return True
    nonempty = fts.with_text(spec, "c.")
    unindexed = conn.execute(
        f"SELECT 1 FROM main.{spec.table} c WHERE c.rowid > ? AND ({nonempty}) AND NOT EXISTS"
        f" (SELECT 1 FROM {spec.name}_docsize d WHERE d.id = c.{spec.rowid}) LIMIT 1", (last,)).fetchone()
    return unindexed is None


# what names the damaged object in an integrity message (compiled on the first message: the
# three cost about 1.8M instructions, more than a whole idle tick's doctor checks)
_INDEX_NAMED = r"\bindex (\w+)"
_TABLE_NAMED = r"\b(?:in|of) (?:table )?(\w+)(?:\.\w+)?(?:\s|$)"
_TREE = r"\b[Tt]ree (\d+)|\bon tree page (\d+)|\bpage (\d+)"


def integrity_tables(conn):
    """The b-tree tables of the database, by name: what the nanny's integrity slice walks."""
    return [row[0] for row in conn.execute(
        "SELECT name FROM main.sqlite_master WHERE type = 'table' AND rootpage > 0 ORDER BY name")]


def rowid_tables(conn):
    """The names of the tables with rowids (the ones a rowid window can walk)."""
    # (only a text naming ROWID at all is searched: a case-blind search of every table's
    # text cost about half of this function's instructions)
    return {name for name, text in conn.execute("SELECT name, sql FROM main.sqlite_master WHERE type = 'table'")
            if "ROWID" not in (text or "").upper() or not re.search(r"\bWITHOUT\s+ROWID\b", text or "", re.I)}


def _integrity(conn, report, full, only=None):
    """``database_integrity`` problems from ``quick_check`` or (``full``) ``integrity_check``,
    each naming the damaged index or table where SQLite's message allows, with its repair:
    an index is rebuilt from its table (``REINDEX``), a table comes back from a snapshot.

    ``only``: a ``quick_check`` of just these tables and their indexes, one at a time (a
    message naming no object is put on the table being checked); the page-level checks of
    the whole file (pages used twice or never) are left to the full check."""
    objects = {name: (kind, table) for kind, name, table in conn.execute(
        "SELECT type, name, tbl_name FROM main.sqlite_master WHERE type IN ('table', 'index')")}
    if only is None:
        lines = [(str(line), None) for (line,) in conn.execute(
            f"PRAGMA main.{'integrity_check' if full else 'quick_check'}(100)") if line != "ok"]
    else:
        lines = []
        for table in only:
            if objects.get(table, ("",))[0] != "table" or len(lines) >= 100:
                continue
            quoted = sql.quoted(table)
            lines += [(str(line), table) for (line,) in conn.execute(f"PRAGMA main.quick_check({quoted})")
                      if line != "ok"][:100 - len(lines)]
    if not lines:
        return
    roots = {root: name for name, root in conn.execute(
        "SELECT name, rootpage FROM main.sqlite_master WHERE rootpage > 0")}
    for line, checked in lines:
        _integrity_problem(report, line, _damaged_object(line, objects, roots) or checked, objects)


def _integrity_problem(report, line, name, objects):
    """One ``database_integrity`` problem for ``line``, naming ``name`` (an index or table of
    ``objects``, or None) with its repair."""
    fields = {"detail": line[:200]}
    if name is not None:
        kind, table = objects[name]
        fields[kind] = name
        if kind == "index":
            fields["table"] = table
            fields["repair"] = (f"rebuild the index from its table: sqlite3 <home>/state.db 'REINDEX {name}'"
                                " (or restore a snapshot: ops.py snapshot-restore FILE --force)")
        else:
            fields["repair"] = "restore a snapshot (ops.py snapshot-restore FILE --force); REINDEX cannot repair a table"
    else:
        fields["repair"] = ("run REINDEX (sqlite3 <home>/state.db 'REINDEX') if only indexes are damaged,"
                            " else restore a snapshot (ops.py snapshot-restore FILE --force)")
    report.add("database_integrity", **fields)


def primary_key(conn, table):
    """The primary key columns of ``table``, in key order ([] without one)."""
    columns = [(row[5], row[1]) for row in conn.execute(f"PRAGMA main.table_info({sql.quoted(table)})") if row[5]]
    return [name for _, name in sorted(columns)]


def _key_range(keys, after, upto, alias=""):
    """``(SQL condition, params)``: the rows of primary key ``keys`` after ``after`` and up to
    ``upto`` (each a list of key values, or None: no bound)."""
    terms = ", ".join(f"{alias}{sql.quoted(key)}" for key in keys)
    row = f"({terms})" if len(keys) > 1 else terms
    marks = ", ".join("?" for _ in keys)
    bound = f"({marks})" if len(keys) > 1 else marks
    parts, params = ["1"], []
    if after is not None:
        parts.append(f"{row} > {bound}")
        params += list(after)
    if upto is not None:
        parts.append(f"{row} <= {bound}")
        params += list(upto)
    return " AND ".join(parts), params


def key_after(conn, table, after, count):
    """The primary key (a list) of the ``count``-th row of ``table`` after key ``after`` (None:
    from the start), in key order, or None when fewer rows are left: where a window of
    ``count`` rows ends (read from the key alone)."""
    keys = primary_key(conn, table)
    where, params = _key_range(keys, after, None)
    order = ", ".join(sql.quoted(key) for key in keys)
    row = conn.execute(f"SELECT {order} FROM main.{sql.quoted(table)} WHERE {where} ORDER BY {order}"
                       f" LIMIT 1 OFFSET ?", (*params, count - 1)).fetchone()
    return None if row is None else list(row)


def lookup_indexes(conn, table):
    """How many indexes a key window of ``table`` (without rowids) looks each row up in."""
    return len(_row_indexes(conn, table, keyed=True))


def _integrity_keys(conn, report, table, after, upto):
    """:func:`_integrity_rows` for a table without rowids: the rows whose primary key is after
    ``after`` and up to ``upto`` (None: no bound), each read whole, its NOT NULL columns
    checked and looked up in every other index of the table by its columns and key."""
    _integrity_rows(conn, report, table, after, upto, keys=primary_key(conn, table))


def _integrity_rows(conn, report, table, after, upto, keys=None):
    """A bounded integrity check of the rows of ``table`` with rowids in ``(after, upto]``
    (the nanny's turn on a table too large for one ``quick_check``): every column of every
    row read (its pages, records and overflow chains), the NOT NULL columns checked
    (``NULL value in T.C``, as ``quick_check`` says it), and each row looked up in every
    index of the table (``row N missing from index I``, as ``integrity_check`` says it).
    A page SQLite cannot read is named on the table.  ``keys``: the primary key columns of a
    table without rowids, ``after`` and ``upto`` then keys (see :func:`_integrity_keys`)."""
    quoted = sql.quoted(table)
    columns = [(row[1], bool(row[3])) for row in conn.execute(f"PRAGMA main.table_info({quoted})")]
    if not columns:
        return
    if keys is None:
        inside, params, selected = "rowid > ? AND rowid <= ?", (after, upto), "t.rowid"
        ranged, same = "t.rowid > ? AND t.rowid <= ?", "i.rowid = t.rowid"
    else:
        inside, params = _key_range(keys, after, upto)
        ranged = _key_range(keys, after, upto, "t.")[0]
        selected = ", ".join(f"t.{sql.quoted(name)}" for name in keys)
        same = " AND ".join(f"i.{sql.quoted(name)} IS t.{sql.quoted(name)}" for name in keys)
    lines = []
    try:
        # every value loaded (as a blob: its bytes, not its characters, are counted), in one
        # aggregate per kind of column: the nullable ones' sizes, the NOT NULL ones' NULLs
        # (IS NULL over the loaded value: the planner trusts NOT NULL on a bare column)
        loaded = {name: f"length(CAST({sql.quoted(name)} AS BLOB))" for name, _ in columns}
        sizes = " + ".join(f"coalesce({loaded[name]}, 0)" for name, notnull in columns if not notnull) or "0"
        nulls = [name for name, notnull in columns if notnull]
        found = " + ".join(f"({loaded[name]} IS NULL)" for name in nulls) or "0"
        indexes = _row_indexes(conn, table, keyed=keys is not None)
        lookups = []
        for index, where, columns_of in indexes:
            match = " AND ".join(f"i.{sql.quoted(name)} IS t.{sql.quoted(name)}" for name in columns_of)
            # a partial index serves the lookup only when its condition is stated on the
            # looked-up side too (unqualified, its columns are the subquery's own)
            lookups.append(f"NOT EXISTS (SELECT 1 FROM main.{quoted} i INDEXED BY {sql.quoted(index)}"
                           f" WHERE {match} AND {same}{where})")
        # one pass over the window: the values loaded and the rows missing from each index
        # counted together; the rows are listed (a second pass) only when some are missing
        misses = _counted_in_one_pass(conn, quoted, ranged, params, (sizes, found), indexes, lookups)
        if misses is None:  # that statement failed: the values loaded on their own, as before
            row = conn.execute(f"SELECT sum({sizes}), sum({found}) FROM main.{quoted} WHERE {inside}",
                               params).fetchone()
        else:
            row, misses = misses[:2], misses[2:]
        if row[1]:  # some: counted per column, to name each
            counted = ", ".join(f"sum(typeof({sql.quoted(name)}) = 'null')" for name in nulls)
            row = conn.execute(f"SELECT {counted} FROM main.{quoted} WHERE {inside}", params).fetchone()
            for name, count in zip(nulls, row):
                lines += [f"NULL value in {table}.{name}"] * min(count or 0, 100)
        found = [] if misses is not None and not any(misses) else \
            _missing_in_one_pass(conn, quoted, (selected, 1 if keys is None else len(keys)), ranged, params,
                                 indexes, lookups)
        if found is not None:
            lines += found
        else:  # one statement an index, each on its own
            for (index, where, _), lookup in zip(indexes, lookups):
                try:
                    missing = conn.execute(f"SELECT {selected} FROM main.{quoted} t WHERE {ranged}{where} AND {lookup}"
                                           " ORDER BY 1 LIMIT 100", params).fetchall()
                    lines += [f"row {_shown_key(tuple(row))} missing from index {index}" for row in missing]
                except sqlite3.OperationalError:  # an index this reading cannot address: the full check's
                    continue
    except sqlite3.OperationalError:  # a table this reading cannot address: the full check's
        pass
    except sqlite3.DatabaseError as exc:
        shown = f"{after + 1}..{upto}" if keys is None else \
            f"after {_shown_key(after, '(start)')} up to {_shown_key(upto, '(end)')}"
        lines.append(f"rows {shown} of {table} unreadable: {exc}")
    if not lines:
        return
    objects = {name: (kind, tbl) for kind, name, tbl in conn.execute(
        "SELECT type, name, tbl_name FROM main.sqlite_master WHERE type IN ('table', 'index')")}
    for line in lines[:100]:
        name = _damaged_object(line, objects, {}) or table
        _integrity_problem(report, line, name, objects)


def _counted_in_one_pass(conn, quoted, ranged, params, loaded, indexes, lookups):
    """One aggregate over the window of :func:`_integrity_rows`: ``[sum of the nullable
    values' sizes, NULLs in NOT NULL columns, rows missing from each index in turn]`` (every
    value loaded, every row looked up in every index, in one read of the rows), or None when
    that statement fails (the caller then reads the values and lists the missing rows on
    their own, as before, so what cannot be read is reported as it was)."""
    sizes, nulls = loaded
    flags = "".join(f", sum(CASE WHEN 1{where} THEN {lookup} ELSE 0 END)"
                    for (_, where, _), lookup in zip(indexes, lookups))
    try:
        row = conn.execute(f"SELECT sum({sizes}), sum({nulls}){flags} FROM main.{quoted} t WHERE {ranged}",
                           params).fetchone()
    except sqlite3.DatabaseError:
        return None
    return [row[0], row[1], *(count or 0 for count in row[2:])]


def _missing_in_one_pass(conn, quoted, shown, ranged, params, indexes, lookups):
    """:func:`_integrity_rows`'s index lines, the rows of the window read once for every
    index (one statement an index read each row again; the lookups themselves cost the
    same): the same lines, the first 100 rows by key missing from each index in turn, or
    None when that statement fails (each index is then looked up on its own, as before,
    so an index or row this reading cannot address is reported as it was)."""
    if len(indexes) < 2:
        return None
    selected, width = shown  # the columns naming a row, and how many
    flags = ", ".join(f"CASE WHEN 1{where} THEN {lookup} ELSE 0 END AS m{n}"
                      for n, ((_, where, _), lookup) in enumerate(zip(indexes, lookups)))
    wanted = " OR ".join(f"m{n}" for n in range(len(indexes)))
    found = [[] for _ in indexes]
    try:
        for row in conn.execute(f"SELECT * FROM (SELECT {selected}, {flags} FROM main.{quoted} t WHERE {ranged})"
                                f" WHERE {wanted} ORDER BY 1", params):
            for n, flag in enumerate(row[width:]):
                if flag and len(found[n]) < 100:
                    found[n].append(tuple(row[:width]))
            if all(len(listed) >= 100 for listed in found):
                break
    except sqlite3.DatabaseError:
        return None
    return [f"row {_shown_key(missing)} missing from index {index}"
            for (index, _, _), listed in zip(indexes, found) for missing in listed]


def _shown_key(value, open_bound=""):
    """A row's rowid or primary key as an integrity line shows it: the rowid alone, a key
    as its values in parentheses (``open_bound`` for None: a window's open end)."""
    if isinstance(value, (tuple, list)) and len(value) == 1 and isinstance(value[0], int):
        return str(value[0])
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(str(part) for part in value) + ")"
    return open_bound if value is None else str(value)


def _row_indexes(conn, table, keyed=False):
    """``[(index, " AND (partial condition)" or "", key columns)]``: the indexes of ``table``
    a row can be looked up in by its column values (an index on an expression is left to the
    full check).  ``keyed``: a table without rowids, whose primary key index is the table
    itself (not looked up in)."""
    found = []
    for row in conn.execute(f"PRAGMA main.index_list({sql.quoted(table)})"):
        index = row[1]
        if keyed and row[3] == "pk":
            continue
        keys = [info[2] for info in conn.execute(f"PRAGMA main.index_info({sql.quoted(index)})")]
        if not keys or any(key is None for key in keys):
            continue
        where = ""
        if row[4]:  # partial
            text = conn.execute("SELECT sql FROM main.sqlite_master WHERE name = ?", (index,)).fetchone()[0] or ""
            found_where = re.search(r"\bWHERE\b(.*)$", text, re.S | re.I)
            if found_where is None:
                continue
            where = f" AND ({found_where.group(1).strip()})"
        found.append((index, where, keys))
    return found


def _damaged_object(line, objects, roots):
    """The index or table an integrity message names (by name or by its b-tree root page)."""
    for pattern in (_INDEX_NAMED, _TABLE_NAMED):
        for match in re.finditer(pattern, line):
            if match.group(1) in objects:
                return match.group(1)
    for match in re.finditer(_TREE, line):
        page = int(next(group for group in match.groups() if group))
        if page in roots and roots[page] in objects:
            return roots[page]
    return None


def _rowids(since):
    """``{table: max rowid}`` of a watermark (an empty dict when it has none: every row is
    then new), or None without a watermark."""
    if since is None:
        return None
    rowids = since.get("rowids")
    return {name: value for name, value in rowids.items() if isinstance(value, int)} \
        if isinstance(rowids, dict) else {}


def reference_tables(conn):
    """The tables the references check reads (every child of a foreign key, and the tables
    with supersession links or task references), by name: what the nanny's references
    turns walk."""
    names = set(checkpoint.data_tables(conn))
    found = {name for name in names if conn.execute(
        "SELECT 1 FROM pragma_foreign_key_list(?) LIMIT 1", (name,)).fetchone()}
    return sorted(found | ({"notes", "handoffs", "facts"} & names))


def _foreign_keys(conn, report, existing, after=None, whole=(), tops=None, keyed=None):
    """Orphans by name for the known child tables, ``foreign_key_violation`` for the rest.
    ``after`` (``{table: rowid}``): only the rows of the named child tables added after
    those rowids are checked (the rest is left to the full check), and the tables named in
    ``whole`` in full; ``tops`` (see :func:`_tops`): a table with no row past its rowid is
    not read.  ``keyed`` (with ``after``): ``(table, low, high)``, a table of KEYED_CHILDREN
    in ``whole`` whose orphans are read only in that primary-key window (see _key_range)."""
    seen = set()
    if after is not None:
        seen = {table for table in NAMED_ORPHANS if table in existing and table in ROWID_CHILDREN}
    windowed = keyed[0] if keyed is not None and keyed[0] in KEYED_CHILDREN and keyed[0] in existing else None
    checks = [conn.execute("PRAGMA main.foreign_key_check")] if after is None else \
        [conn.execute(f"PRAGMA main.foreign_key_check({sql.quoted(table)})") for table in sorted(whole)
         if table in existing and table not in ROWID_CHILDREN and table != windowed]
    for row in (row for cursor in checks for row in cursor):
        table, rowid, parent = row[0], row[1], row[2]
        if table in seen and table in NAMED_ORPHANS:
            continue
        if table not in NAMED_ORPHANS:
            report.add("foreign_key_violation", table=table, rowid=rowid, parent=parent)
            continue
        seen.add(table)
    if "tasks" not in existing:
        return
    queries = {
        "dependencies": ("SELECT task_id, depends_on FROM dependencies d WHERE NOT EXISTS"
                         " (SELECT 1 FROM tasks t WHERE t.id = d.task_id) ORDER BY task_id, depends_on",
                         ("task_id", "depends_on")),
        "notes": ("SELECT id, task_id FROM notes n WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = n.task_id)"
                  " ORDER BY id", ("note_id", "task_id")),
        "handoffs": ("SELECT id, task_id FROM handoffs h WHERE NOT EXISTS"
                     " (SELECT 1 FROM tasks t WHERE t.id = h.task_id) ORDER BY id", ("handoff_id", "task_id")),
        "receipts": ("SELECT id, task_id FROM receipts r WHERE NOT EXISTS"
                     " (SELECT 1 FROM tasks t WHERE t.id = r.task_id) ORDER BY id", ("receipt_id", "task_id")),
        "heartbeats": ("SELECT task_id, owner FROM heartbeats b WHERE NOT EXISTS"
                       " (SELECT 1 FROM tasks t WHERE t.id = b.task_id) ORDER BY task_id", ("task_id", "owner")),
    }

    def orphans(table, condition=None, params=(), ordered=lambda order: order):
        """Report the orphans of ``table`` its query names, only those meeting ``condition``
        when given (its order passed through ``ordered``)."""
        query, names = queries[table]
        if condition is not None:
            head, order = query.rsplit(" ORDER BY ", 1)
            query = f"{head} AND {condition} ORDER BY {ordered(order)}"
        for row in conn.execute(query, params):
            report.add(NAMED_ORPHANS[table], **dict(zip(names, row)))

    if windowed is not None:  # its orphans in the key window: the rows the whole check names there
        orphans(windowed, *_key_range(primary_key(conn, windowed), *keyed[1:], KEYED_CHILDREN[windowed] + "."))
    for table in sorted(seen):
        if table not in existing:
            continue
        if after is not None and table in ROWID_CHILDREN:
            if _none_past(tops, table, after.get(table, 0)):
                continue
            past, params = _rows_past(after.get(table, 0), "")
            orphans(table, past, params, lambda order: _ordered(order, params))
        else:
            orphans(table)


def _readiness(conn, report, window=None):
    """``task_readiness_drift`` for each task whose stored count of unfinished prerequisites
    (``unmet_deps``, kept by triggers; ``next`` trusts it) differs from its edges', and for each
    open one whose stored inherited urgency (``dependent_rank``, with ``column``) does: every
    task (the full sweep, and the nanny's integrity turn on the tasks table), or those with
    rowids in ``window`` (``(after, upto]``: a window of that turn)."""
    present = tables.declared(conn, "tasks")
    for column, (recount, drift, drift_in) in db.DERIVED_STATEMENTS.items():
        if column not in present:
            continue
        # the readiness count is the finding's own subject; any other column is named
        named = {} if column == "unmet_deps" else {"column": column}
        for task_id, stored, counted in conn.execute(drift) if window is None else conn.execute(drift_in, tuple(window)):
            report.add("task_readiness_drift", task_id=task_id, **named, stored=stored, counted=counted,
                       repair=f'recount it from the edges: sqlite3 <home>/state.db "{recount}"')


def _receipts(conn, report, notes, since=None):
    """Every receipt row's file read and hashed; ``since`` (a watermark): only rows added
    after it and files whose status changed after it (or that are gone) are read."""
    home = conn.home
    receipts_dir = db.receipts_dir(home)
    indexed = set()
    last, changed = None, None
    if since is not None and isinstance((since.get("rowids") or {}).get("receipts"), int) \
            and isinstance(since.get("files_ns"), int):
        last, cutoff = since["rowids"]["receipts"], since["files_ns"] - _SLACK_NS
        changed = _changed_files(receipts_dir, cutoff)
    for row in conn.execute("SELECT id, task_id, path, file_hash, rowid FROM receipts ORDER BY id"):
        indexed.add(row[0])
        stored = row[2] or ""
        if last is not None and row[4] <= last and _unchanged(stored, receipts_dir, changed):
            continue
        path = stored if os.path.isabs(stored) else os.path.join(home, stored)
        real = os.path.realpath(path)
        if not (real == os.path.realpath(receipts_dir) or real.startswith(os.path.realpath(receipts_dir) + os.sep)):
            report.add("receipt_path_outside_home", receipt_id=row[0], task_id=row[1])
            continue
        try:  # never through a symlink, never blocking on a FIFO planted as a receipt
            data = files.read_bytes(path, max_bytes=MAX_RECEIPT_BYTES)  # larger: reported missing
        except (MindosError, OSError):
            report.add("receipt_file_missing", receipt_id=row[0], task_id=row[1], path=stored)
            continue
        if row[3] and sha256_hex(data) != row[3]:
            report.add("receipt_file_hash_mismatch", receipt_id=row[0], task_id=row[1], path=stored)
    unindexed, temp = orphan_files(home, indexed)
    notes["receipt_files_unindexed"] = len(unindexed) + len(temp)
    if unindexed or temp:
        notes["receipt_files_unindexed_ids"] = unindexed[:LIMIT]
        notes["receipt_temp_files"] = temp[:LIMIT]
        notes["receipt_files_hint"] = "run receipts-sweep to adopt or quarantine them"


def _changed_files(directory, cutoff):
    """``{name: changed after cutoff}`` for the entries of the receipts directory (no link is
    followed: a symlink planted as a receipt, or anything not a regular file, counts as changed)."""
    return {name: st is None or not stat.S_ISREG(st.st_mode) or max(st.st_mtime_ns, st.st_ctime_ns) >= cutoff
            for name, st in files.entries(directory)}


def _unchanged(stored, directory, changed):
    """True when the receipt file ``stored`` is a plain entry of ``directory`` untouched since
    the watermark (missing, moved or elsewhere: it is checked)."""
    if os.path.isabs(stored) or os.path.dirname(stored) != os.path.basename(directory):
        return False
    return changed.get(os.path.basename(stored)) is False


def orphan_files(home, indexed):
    """``(receipt ids of files no row indexes, leftover temp file names)`` under receipts/."""
    try:
        names = sorted(os.listdir(db.receipts_dir(home)))
    except OSError:
        return [], []
    temp = [name for name in names if name.startswith(".") and name.endswith(".tmp")]
    ids = [name[:-5] for name in names if name.endswith(".json") and not name.startswith(".")]
    return [i for i in ids if i not in indexed], temp


def _leases(conn, report, now):
    terminal = ", ".join(f"'{s}'" for s in _TERMINAL)
    for row in conn.execute(
            "SELECT id, status, lease_owner, lease_expires_at FROM tasks WHERE lease_owner <> ''"
            f" AND (lease_expires_at IS NULL OR lease_expires_at <= ?) AND status NOT IN ({terminal}) ORDER BY +id",
            (now,)):
        report.add("stale_lease", task_id=row[0], status=row[1], lease_owner=row[2], lease_expires_at=row[3])
    # +status: read the leased tasks from their partial index, not every terminal task
    for row in conn.execute(f"SELECT id, status, lease_owner FROM tasks WHERE lease_owner <> '' AND +status IN"
                            f" ({terminal}) ORDER BY +id"):
        report.add("terminal_task_leased", task_id=row[0], status=row[1], lease_owner=row[2])


# the tables whose rows past a watermark the incremental checks read
PAST_TABLES = frozenset(ROWID_CHILDREN + ("facts",) + tuple(spec.table for spec in fts.INDEXES.values()))


def _tops(conn, existing):
    """``{table: its largest rowid (0 when empty)}`` of the :data:`PAST_TABLES` that exist,
    read in one statement ({} when that fails: every check then reads its rows)."""
    try:
        return sql.largest_rowids(conn, sorted(PAST_TABLES & set(existing)))
    except sqlite3.DatabaseError:
        return {}


def _none_past(tops, table, after):
    """True when ``tops`` shows ``table`` holds no row past rowid ``after`` (an int; a window
    or an unknown table: False, the rows are read)."""
    return isinstance(after, int) and not isinstance(after, bool) and isinstance((tops or {}).get(table), int) \
        and tops[table] <= after


def _rows_past(after, alias):
    """``(SQL condition, params)``: the rows past rowid ``after``, or for a window ``(low,
    high, mark)`` the rows in (low, high] and those past ``mark`` (the watermark's)."""
    if isinstance(after, tuple):
        return f"(({alias}rowid > ? AND {alias}rowid <= ?) OR {alias}rowid > ?)", after
    return f"{alias}rowid > ?", (after or 0,)


def _ordered(order, params):
    """``order`` (an ORDER BY list) for a query over :func:`_rows_past`'s ``params``: for a
    window, its terms made expressions, so SQLite reads the two rowid ranges (and sorts the
    few rows) instead of walking the whole table in rowid order."""
    if len(params) < 3:
        return order
    return ", ".join(f"+{term.strip()}" for term in order.split(","))


def _supersession(conn, report, table, after=None):
    """Links in ``table`` (notes or handoffs) pointing at rows that do not exist or do not
    point back; ``after``: only rows past that rowid (or a window, see :func:`_rows_past`)."""
    kind = "note_id" if table == "notes" else "handoff_id"
    past, params = _rows_past(after, "a.")
    for row in conn.execute(
            f"SELECT a.id, a.superseded_by, a.supersedes FROM {table} a"
            f" WHERE ((a.superseded_by IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {table} b WHERE b.id = a.superseded_by))"
            f" OR (a.supersedes IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {table} b WHERE b.id = a.supersedes)))"
            f" AND {past} ORDER BY {_ordered('a.id', params)}", params):
        report.add("dangling_supersession", table=table, **{kind: row[0]}, superseded_by=row[1], supersedes=row[2])

