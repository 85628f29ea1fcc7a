"""Migration import (installer stage two).

``migrate-import --inventory F --source-id S`` merges one Autopilot database of a sealed
stage-one inventory into this home (a source of another planned kind runs its own plan step,
:mod:`mindos.migration.steps`).  Under ``--out`` its ``autopilot-migration-result-v1``
document is the journal ``migrate-rollback`` (:mod:`mindos.migration.rollback`) undoes.

Design decisions
  * **Nothing moves before every check passed.**  The inventory seal, ``fail_closed``, the
    source's checksums (the database's content, read through the very snapshot that is then
    imported, and its receipt files: drift since discovery is refused),
    ``PRAGMA foreign_key_check`` on the source (orphans named), receipt files against their
    ``file_hash``, the secret guard and the audit-chain rule are all decided before the one
    write transaction opens.
  * **One transaction of INSERT OR IGNORE on natural keys** (tasks by id, dependency edges by
    pair, receipts/notes/handoffs by id, any further common table by its primary key), so a
    re-run deduplicates to nothing and a kill leaves the home fully before or fully after.
    Tasks arriving mid-flight (claimed, running, waiting_for_agent) are reset to queued with
    their lease cleared; heartbeats (liveness cache) and derived tables (tag index, search
    indexes, the session cache) are not carried.
  * **The audit chain.**  A home whose ledger holds only bookkeeping (inventory and
    onboarding events) is *fresh*: the source chain lands verbatim at ids 1..n (same hashes)
    and the bookkeeping events are re-appended after it.  A home with history of its own
    refuses a foreign chain unless ``--relink-audit``, which appends the missing source
    events relinked onto this chain.  Source events already present (same entity, action,
    payload and time: a content twin) are never inserted twice.
  * **The result is the rollback journal**: every inserted row's key and content hash, the
    merged event ids and the restored receipt files with their sha256, sealed with every
    field (``created_at`` included) inside the seal and read back byte-exact, so a result
    document with any changed byte is refused.
  * **A result, not an exit code.**  :func:`migrate_import` returns the result; its verdict is
    ``health.ok`` after an apply (a dry run has none), which the command turns into exit 1.
"""

import contextlib
import os
import sqlite3

from mindos.core import canonical, clock, secrets
from mindos.core import files as file_safety
from mindos.core.atomic import atomic_write
from mindos.errors import InvalidInput, MindosError, Refused
from mindos.store import guard as secret_guard
from mindos.migration import documents, inventory, steps
from mindos.recovery import rowcheck
from mindos.store import db, ledger
from mindos.work.receipts import MAX_FILE_BYTES as MAX_RECEIPT_BYTES

RESULT_FORMAT = "autopilot-migration-result-v1"
BOOKKEEPING = inventory.BOOKKEEPING  # inventory and onboarding events: never a home's history
ORDER = ("tasks", "dependencies", "receipts", "notes", "handoffs")
# not carried: the ledger (merged separately), liveness and replay caches, derived indexes and
# the session cache (rebuildable from its transcripts), and the learned term associations and
# vectors (the target learns the carried rows itself, and memory-embed embeds them)
NOT_CARRIED = ("audit_events", "heartbeats", "task_tags", "session_files", "session_messages", "request_replays",
               "term_df", "term_pairs", "learned_upto", "embeddings")
MIDFLIGHT = ("claimed", "running", "waiting_for_agent")
GUARDED = ("notes", "handoffs", "memories", "facts")  # agent text: through the secret guard
NAMED_MAX = steps.NAMED_MAX  # the names a refusal or report lists, as every plan step



# ---------------------------------------------------------------------------------------
# Schema helpers


def column_names(conn, table):
    """The column names of ``table``, in declaration order."""
    return [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]


def primary_key(conn, table):
    """The primary-key columns of ``table``, in key order (empty without one)."""
    rows = sorted((row[5], row[1]) for row in conn.execute(f'PRAGMA table_info("{table}")') if row[5])
    return [name for _, name in rows]


def table_names(conn):
    """The data tables of ``conn`` (no internal or virtual tables)."""
    return {row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
        " AND sql NOT LIKE 'CREATE VIRTUAL%'")}


def _parents(conn, table):
    return {row[2] for row in conn.execute(f'PRAGMA foreign_key_list("{table}")') if row[2] != table}


def _plan_tables(source, target):
    """The tables to carry, parents before children: ORDER first, then the rest sorted with
    every table after the tables its foreign keys name (so inserts never dangle mid-way)."""
    common = {t for t in table_names(source) & table_names(target) if t not in NOT_CARRIED and "_fts" not in t}
    ordered = [t for t in ORDER if t in common]
    rest = sorted(common - set(ordered))
    placed = set(ordered)
    while rest:
        ready = [t for t in rest if not (_parents(target, t) & common) - placed - {t}]
        batch = ready or rest[:1]  # a foreign-key cycle: keep name order rather than stall
        for table in batch:
            ordered.append(table)
            placed.add(table)
            rest.remove(table)
    return ordered


def _spec(source, target, table):
    """``(columns carried, key columns)`` of ``table``: tasks are keyed by id (seq is local)."""
    columns = [c for c in column_names(source, table) if c in set(column_names(target, table))]
    if "seq" in primary_key(target, table) and "id" in columns:  # tasks, memories: seq is a local rowid, id the key
        return [c for c in columns if c != "seq"], ["id"]
    key = primary_key(target, table) or columns
    return columns, key


def row_hash(row):
    """The content hash of a row dict (canonical JSON)."""
    return canonical.digest(row)


def _event_twin(row):
    return (row["entity_type"], row["entity_id"], row["action"], row["payload_json"], row["created_at"])


# ---------------------------------------------------------------------------------------
# Stage two: import


def _source_paths(doc, src):
    root = doc["root"]
    return os.path.join(root, src["path"]), root


@contextlib.contextmanager
def _verified_source(doc, src, db_path):
    """The source database open read-only and verified against the inventory through that
    very connection (one consistent snapshot), so what is imported is what was verified."""
    try:
        reader = inventory.open_readonly(db_path)
        source = reader.__enter__()
    except (OSError, sqlite3.Error):
        inventory.verify_source(doc, src)  # names the missing or unreadable database
        raise Refused(f"source database {src['path']} cannot be opened read-only; re-run migrate-inventory") \
            from None
    try:
        inventory.verify_source(doc, src, source)
        yield source
    finally:
        reader.__exit__(None, None, None)


def _fk_orphans(source):
    orphans = []
    for row in source.execute("PRAGMA foreign_key_check"):
        orphans.append(f"{row[0]} rowid {row[1]} -> {row[2]}")
    if orphans:
        more = f" (+{len(orphans) - NAMED_MAX} more)" if len(orphans) > NAMED_MAX else ""
        raise Refused(f"source has foreign-key orphans: {'; '.join(orphans[:NAMED_MAX])}{more}; resolve the source "
                      "through an approved remediation path, then re-seal the inventory")


def _lived_in(conn):
    marks = ", ".join("?" * len(BOOKKEEPING))
    # a refused import attempt (the guard's secret_blocked on the migration) leaves no history either
    return conn.execute(f"SELECT count(*) FROM audit_events WHERE action NOT IN ({marks})"
                        " AND NOT (entity_type = 'migration' AND action = 'secret_blocked')", BOOKKEEPING).fetchone()[0]


def _load_source(inventory_path, source_id, redact, allow_secret):
    """The verified inventory and its source ``source_id``, refusing fail_closed inventories."""
    if redact and allow_secret:
        raise InvalidInput("pass at most one of --redact and --allow-secret")
    doc = inventory.load(inventory_path)
    if doc["fail_closed"]:
        names = ", ".join(f"{b['source_id']} ({b['path']}: {b['reason']})" for b in doc["blocked"][:NAMED_MAX])
        raise Refused(f"inventory is fail_closed: {names}; resolve the blocked sources and re-run migrate-inventory")
    if not isinstance(source_id, str) or not source_id:
        raise InvalidInput("invalid --source-id: required")
    return doc, inventory.source(doc, source_id)


def plan(conn, inventory_path, source_id, *, redact=False, allow_secret=False, relink_audit=False):
    """Everything ``migrate-import`` decides for an autopilot_sqlite source, without writing:
    returns the plan dict (and the rows it would insert, under private keys the apply consumes)."""
    doc, src = _load_source(inventory_path, source_id, redact, allow_secret)
    if src["kind"] != "autopilot_sqlite":
        raise Refused(f"source {source_id} is {src['kind']}, not an Autopilot database")
    return _plan(conn, inventory_path, doc, src, redact=redact, relink_audit=relink_audit)


def _plan(conn, inventory_path, doc, src, *, redact, relink_audit):
    """:func:`plan` for the autopilot_sqlite source ``src`` of the verified inventory ``doc``."""
    source_id = src["source_id"]
    db_path, _ = _source_paths(doc, src)
    source_home = os.path.dirname(db_path)
    with _verified_source(doc, src, db_path) as source:
        _fk_orphans(source)
        tables = _plan_tables(source, conn)
        specs = {table: _spec(source, conn, table) for table in tables}
        data = {table: [dict(row) for row in source.execute(
            f'SELECT {", ".join(chr(34) + c + chr(34) for c in specs[table][0])} FROM "{table}"')] for table in tables}
        events = [dict(row) for row in source.execute(
            "SELECT id, entity_type, entity_id, action, payload_json, created_at, prev_hash, hash"
            " FROM audit_events ORDER BY id")]
        heartbeats = source.execute("SELECT count(*) FROM heartbeats").fetchone()[0] \
            if "heartbeats" in table_names(source) else 0
    # lease sanitization
    sanitized = []
    for row in data.get("tasks", []):
        if row.get("status") in MIDFLIGHT:
            sanitized.append(row["id"])
            row["status"] = "queued"
            if "lease_owner" in row:
                row["lease_owner"] = ""
            if "lease_expires_at" in row:
                row["lease_expires_at"] = None
    # every row must be one this home's commands could have written (refused whole otherwise)
    rowcheck.check_blocks({table: {"columns": specs[table][0], "rows": [[row[c] for c in specs[table][0]]
                                                                        for row in data[table]]}
                           for table in tables}, action="migrate-import", limit=clock.now_iso(),
                          skip={("receipts", "path")})  # a legacy receipt path is judged with its file below
    # secret findings (kind only) over agent text and receipt files
    findings, flagged = {}, []
    for table in tables:
        if table not in GUARDED:
            continue
        key_cols = specs[table][1]
        for index, row in enumerate(data[table]):
            for column, value in row.items():
                if column in key_cols or not isinstance(value, str):
                    continue
                kinds = secrets.scan(value)
                if kinds:
                    flagged.append((table, index, column))
                    for kind in kinds:
                        findings[kind] = findings.get(kind, 0) + 1
    receipt_files, withheld, missing, flagged_receipts = [], [], [], []
    for row in data.get("receipts", []):
        stored = row.get("path") or ""
        source_file = stored if os.path.isabs(stored) else os.path.join(source_home, stored)
        inside = os.path.realpath(os.path.dirname(source_file)) == os.path.realpath(db.receipts_dir(source_home))
        try:  # only a regular file in the source's own receipts/: never a link, a FIFO or a file elsewhere
            if not inside:
                raise OSError("outside the source home's receipts directory")
            blob = file_safety.read_bytes(source_file, max_bytes=MAX_RECEIPT_BYTES)
        except (OSError, MindosError):
            missing.append(row["id"])
            continue
        if row.get("file_hash") and canonical.sha256_hex(blob) != row["file_hash"]:
            raise Refused(f"receipt file of {row['id']} does not match its sealed file_hash; the source is not "
                          "consistent, resolve it and re-run migrate-inventory")
        text = blob.decode("utf-8", errors="replace")
        kinds = secrets.scan(text)
        for kind in kinds:
            findings[kind] = findings.get(kind, 0) + 1
        if kinds:
            flagged_receipts.append(text)
        if kinds and redact:
            withheld.append(row["id"])
            continue
        if not stored or os.path.isabs(stored) or ".." in stored.split("/"):
            missing.append(row["id"])
            continue
        receipt_files.append({"receipt_id": row["id"], "path": stored, "sha256": canonical.sha256_hex(blob),
                              "kinds": kinds, "data": blob})
    # what is already present
    counts = {}
    for table in tables:
        columns, key = specs[table]
        present = conflicts = 0
        where = " AND ".join(f'"{k}" IS ?' for k in key)
        select = ", ".join(f'"{c}"' for c in columns)
        for row in data[table]:
            local = conn.execute(f'SELECT {select} FROM "{table}" WHERE {where}', [row[k] for k in key]).fetchone()
            if local is None:
                continue
            if row_hash(dict(local)) == row_hash(row):
                present += 1
            else:
                conflicts += 1
        counts[table] = {"source": len(data[table]), "already_present": present, "conflicts_kept_local": conflicts,
                         "would_insert": len(data[table]) - present - conflicts}
    twins = {_event_twin(row) for row in conn.execute(
        "SELECT entity_type, entity_id, action, payload_json, created_at FROM audit_events")}
    new_events = [e for e in events if _event_twin(e) not in twins]
    lived_in = _lived_in(conn) > 0
    needs_relink = bool(new_events) and lived_in
    result = {
        "inventory": os.path.abspath(inventory_path), "inventory_digest": doc["seal"]["digest"],
        "source_id": source_id, "source_path": src["path"], "source_root": doc["root"], "target_home": conn.home,
        "tables": counts, "sanitized_tasks": sorted(sanitized), "heartbeats_skipped": heartbeats,
        "secret_kinds": dict(sorted(findings.items())), "receipt_files": len(receipt_files),
        "receipt_files_withheld": sorted(withheld), "receipt_files_missing": sorted(missing),
        "audit": {"source_events": len(events), "already_absorbed": len(events) - len(new_events),
                  "would_merge": len(new_events), "target_lived_in": lived_in,
                  "needs_relink_audit": needs_relink, "relink_audit": bool(relink_audit)},
        "deduplicated": all(c["would_insert"] == 0 for c in counts.values()) and not new_events,
    }
    private = {"data": data, "specs": specs, "tables": tables, "events": new_events, "flagged": flagged, "flagged_receipts": flagged_receipts,
               "receipt_files": receipt_files, "lived_in": lived_in}
    return result, private


def _restore_files(conn, files):
    """Write receipt files not already there byte-identical.  Returns ``(written, in_place)``:
    the files this call wrote, and every file now in place with its sealed bytes (a file a
    killed earlier attempt already wrote counts as in place, not as written)."""
    written, in_place = [], []
    for item in files:
        target = os.path.join(conn.home, item["path"])
        if os.path.exists(target):
            with open(target, "rb") as handle:
                if canonical.sha256_hex(handle.read()) == item["sha256"]:
                    in_place.append(item)
                    continue
            raise Refused(f"a different receipt file already exists at {item['path']}; refusing to replace local data")
        atomic_write(target, item["data"])
        written.append(item)
        in_place.append(item)
    return written, in_place


def _append_relinked(conn, event):
    """Append a foreign event onto this chain (new id and hashes; same fields and time)."""
    last = conn.execute("SELECT id, hash FROM audit_events ORDER BY id DESC LIMIT 1").fetchone()
    prev_id, prev_hash = (last[0], last[1]) if last else (0, ledger.GENESIS_HASH)
    new_id = prev_id + 1
    digest = ledger.event_hash(new_id, prev_hash, event["entity_type"], event["entity_id"], event["action"],
                               event["payload_json"], event["created_at"])
    conn.execute("INSERT INTO audit_events(id, entity_type, entity_id, action, payload_json, created_at, prev_hash,"
                 " hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 (new_id, event["entity_type"], event["entity_id"], event["action"], event["payload_json"],
                  event["created_at"], prev_hash, digest))
    return new_id, digest


def health(conn, baseline_fk=()):
    """Post-apply health: integrity, FK violations introduced (beyond ``baseline_fk``), chain."""
    integrity = [row[0] for row in conn.execute("PRAGMA integrity_check")]
    fk = sorted({f"{row[0]}:{row[1]}:{row[2]}" for row in conn.execute("PRAGMA foreign_key_check")})
    introduced = [item for item in fk if item not in set(baseline_fk)]
    chain = ledger.verify_chain(conn)
    problems = []
    if integrity != ["ok"]:
        problems.append("integrity_check failed")
    if introduced:
        problems.append(f"{len(introduced)} foreign-key violations introduced")
    if not chain["ok"]:
        problems.append(f"audit chain broken ({len(chain['problems'])} problems)")
    return {"ok": not problems, "integrity": "ok" if integrity == ["ok"] else "failed",
            "fk_violations_introduced": introduced[:NAMED_MAX], "fk_violations_preexisting": len(baseline_fk),
            "chain_ok": chain["ok"], "chain_events": chain["events"], "problems": problems}


def migrate_import(conn, inventory_path, source_id, *, apply=False, out=None, redact=False, allow_secret=False,
                   relink_audit=False, force=None):
    """``migrate-import``: the dry-run plan, or under ``apply`` the import in one transaction.

    An autopilot_sqlite source is imported here; any other planned source runs its plan
    step (:mod:`mindos.migration.steps`: memory-import, hermes-register, archive-copy).
    Returns the result; after an apply its ``health`` says whether the home came out sound.
    With ``out`` the result is sealed as autopilot-migration-result-v1 (the rollback journal);
    ``force`` (True / False) marks ``out`` as the user's ``--out`` (an existing file refused
    unless True, checked before anything is imported), None as a path MindOS chose.
    """
    if out is not None and force is not None:
        from mindos.core import files  # lazy: --out only

        files.check_out(out, force=force)
    doc, src = _load_source(inventory_path, source_id, redact, allow_secret)
    if src["kind"] != "autopilot_sqlite":
        result, journal = steps.run(conn, doc, inventory_path, src, apply=apply, redact=redact,
                                    allow_secret=allow_secret)
        return _finish(result, out, journal, force)
    result, private = _plan(conn, inventory_path, doc, src, redact=redact, relink_audit=relink_audit)
    result["applied"] = False
    if not apply:
        if private["events"] and private["lived_in"] and not relink_audit:
            result["refusal_on_apply"] = "home has its own audit history: pass --relink-audit"
        return _finish(result, out, None, force)
    if private["events"] and private["lived_in"] and not relink_audit:
        raise Refused("this home has audit history of its own; importing a foreign chain would break tamper "
                      "evidence: pass --relink-audit to relink the combined ledger")
    baseline_fk = sorted({f"{row[0]}:{row[1]}:{row[2]}" for row in conn.execute("PRAGMA foreign_key_check")})
    data, specs = private["data"], private["specs"]
    journal = {"rows": {}, "columns": {t: specs[t][0] for t in private["tables"]}, "events": [], "files": []}
    written_files = []
    try:
        with db.write(conn):
            if private["flagged"] or private["flagged_receipts"]:
                # one guard decision over every flagged text; --redact withholds flagged receipt files
                values = [data[t][i][c] for t, i, c in private["flagged"]]
                fields, outcome = secret_guard.guard(conn, "migration", source_id,
                                                     {"content": values, "receipt_files": private["flagged_receipts"]},
                                                     redact=redact, allow_secret=allow_secret)
                for (t, i, c), value in zip(private["flagged"], fields["content"]):
                    data[t][i][c] = value
                result["secret_action"] = outcome["secret_action"]
            inserted = {}
            for table in private["tables"]:
                columns, key = specs[table]
                marks = ", ".join("?" * len(columns))
                names = ", ".join(f'"{c}"' for c in columns)
                rows = []
                for row in data[table]:
                    cursor = conn.execute(f'INSERT OR IGNORE INTO "{table}"({names}) VALUES ({marks})',
                                          [row[c] for c in columns])
                    if cursor.rowcount:
                        rows.append({"key": {k: row[k] for k in key}, "hash": row_hash(row)})
                journal["rows"][table] = rows
                inserted[table] = len(rows)
            events = private["events"]
            if events:
                if not private["lived_in"]:
                    keep = [dict(r) for r in conn.execute(
                        "SELECT entity_type, entity_id, action, payload_json, created_at FROM audit_events ORDER BY id")]
                    conn.execute("DELETE FROM audit_events")
                    for event in events:
                        conn.execute(
                            "INSERT INTO audit_events(id, entity_type, entity_id, action, payload_json, created_at,"
                            " prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            (event["id"], event["entity_type"], event["entity_id"], event["action"],
                             event["payload_json"], event["created_at"], event["prev_hash"], event["hash"]))
                        journal["events"].append({"id": event["id"], "hash": event["hash"]})
                    for event in keep:
                        _append_relinked(conn, event)
                else:
                    for event in events:
                        new_id, digest = _append_relinked(conn, event)
                        journal["events"].append({"id": new_id, "hash": digest})
            written_files, in_place = _restore_files(conn, private["receipt_files"])
            # the journal owns the files of the receipt rows this apply inserted
            mine = {item["key"]["id"] for item in journal["rows"].get("receipts", [])}
            journal["files"] = [{"path": f["path"], "sha256": f["sha256"], "receipt_id": f["receipt_id"]}
                                for f in in_place if f["receipt_id"] in mine]
            # an identical re-run deduplicates to nothing: no event either
            if any(inserted.values()) or journal["events"] or written_files:
                ledger.append_event(conn, "migration", source_id, "migration_imported", {
                    "inventory_digest": result["inventory_digest"], "inserted": inserted,
                    "events_merged": len(journal["events"]), "files_restored": len(journal["files"]),
                    "sanitized_tasks": len(result["sanitized_tasks"]),
                    "relinked": bool(events and private["lived_in"]),
                })
    except BaseException:
        for item in written_files:
            try:
                os.unlink(os.path.join(conn.home, item["path"]))
            except OSError:
                pass
        raise
    result["applied"] = True
    result["inserted"] = inserted
    result["events_merged"] = len(journal["events"])
    result["files_restored"] = len(journal["files"])
    result["deduplicated"] = not any(inserted.values()) and not journal["events"] and not journal["files"]
    result["health"] = health(conn, baseline_fk)
    coverage = {}
    for table in private["tables"]:
        columns, key = specs[table]
        where = " AND ".join(f'"{k}" IS ?' for k in key)
        present = sum(1 for row in data[table] if conn.execute(
            f'SELECT 1 FROM "{table}" WHERE {where}', [row[k] for k in key]).fetchone())
        coverage[table] = {"source": len(data[table]), "present": present}
    result["health"]["coverage"] = coverage
    return _finish(result, out, journal, force)


def _finish(result, out, journal, force=None):
    if out is None:
        return result
    body = dict(result)
    body["journal"] = journal if journal is not None else {"rows": {}, "events": [], "files": []}
    _, head = documents.seal(out, RESULT_FORMAT, body, force=force)
    result.update(out=head["out"], result_digest=head["digest"], result_sha256=head["file_sha256"])
    return result
