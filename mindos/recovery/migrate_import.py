"""Migration import and rollback (installer stages two and three).

``migrate-import --inventory F --source-id S`` merges one Autopilot database of a sealed
stage-one inventory into this home (a source of another planned kind runs its own plan step,
:mod:`mindos.recovery.migrate_steps`); ``migrate-rollback RESULT`` undoes exactly what one
``--apply`` added, from the journal sealed inside its ``autopilot-migration-result-v1``
document.

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
    document with any changed byte is refused.  Rollback deletes
    only rows whose hash still matches, refuses drifted rows and local dependents unless
    ``--force``, relinks the ledger into one continuous verified chain, and deletes a
    restored receipt file only while it still matches its sealed hash.
"""

import contextlib
import os
import sqlite3

from mindos.core import canonical, clock, secrets
from mindos.core import files as file_safety
from mindos.core.atomic import atomic_write
from mindos.errors import IntegrityError, InvalidInput, MindosError, NotFound, Refused
from mindos.store import guard as secret_guard
from mindos.recovery import artifacts, migrate_inventory, migrate_steps, rowcheck
from mindos.store import db, ledger
from mindos.work.receipts import MAX_FILE_BYTES as MAX_RECEIPT_BYTES

RESULT_FORMAT = "autopilot-migration-result-v1"
BOOKKEEPING = migrate_inventory.BOOKKEEPING  # inventory and onboarding events: never a home's history
ORDER = ("tasks", "dependencies", "receipts", "notes", "handoffs")
# not carried: the ledger (merged separately), liveness and replay caches, derived indexes and
# the session cache (rebuildable from its transcripts), and the learned term associations and
# vectors (the target learns the carried rows itself, and memory-embed embeds them)
NOT_CARRIED = ("audit_events", "heartbeats", "task_tags", "session_files", "session_messages", "request_replays",
               "term_df", "term_pairs", "learned_upto", "embeddings")
MIDFLIGHT = ("claimed", "running", "waiting_for_agent")
GUARDED = ("notes", "handoffs", "memories", "facts")  # agent text: through the secret guard
NAMED_MAX = migrate_steps.NAMED_MAX  # the names a refusal or report lists, as every plan step



# ---------------------------------------------------------------------------------------
# Schema helpers


def _columns(conn, table):
    return [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]


def _pk(conn, table):
    rows = sorted((row[5], row[1]) for row in conn.execute(f'PRAGMA table_info("{table}")') if row[5])
    return [name for _, name in rows]


def _tables(conn):
    return {row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
        " AND sql NOT LIKE 'CREATE VIRTUAL%'")}


def _parents(conn, table):
    return {row[2] for row in conn.execute(f'PRAGMA foreign_key_list("{table}")') if row[2] != table}


def _plan_tables(source, target):
    """The tables to carry, parents before children: ORDER first, then the rest sorted with
    every table after the tables its foreign keys name (so inserts never dangle mid-way)."""
    common = {t for t in _tables(source) & _tables(target) if t not in NOT_CARRIED and "_fts" not in t}
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
    columns = [c for c in _columns(source, table) if c in set(_columns(target, table))]
    if "seq" in _pk(target, table) and "id" in columns:  # tasks, memories: seq is a local rowid, id the key
        return [c for c in columns if c != "seq"], ["id"]
    key = _pk(target, table) or columns
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
        reader = migrate_inventory.open_readonly(db_path)
        source = reader.__enter__()
    except (OSError, sqlite3.Error):
        migrate_inventory.verify_source(doc, src)  # names the missing or unreadable database
        raise Refused(f"source database {src['path']} cannot be opened read-only; re-run migrate-inventory") \
            from None
    try:
        migrate_inventory.verify_source(doc, src, source)
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
    doc = migrate_inventory.load(inventory_path)
    if doc["fail_closed"]:
        names = ", ".join(f"{b['source_id']} ({b['path']}: {b['reason']})" for b in doc["blocked"][:NAMED_MAX])
        raise Refused(f"inventory is fail_closed: {names}; resolve the blocked sources and re-run migrate-inventory")
    if not isinstance(source_id, str) or not source_id:
        raise InvalidInput("invalid --source-id: required")
    return doc, migrate_inventory.source(doc, source_id)


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
            if "heartbeats" in _tables(source) else 0
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
    step (:mod:`mindos.recovery.migrate_steps`: memory-import, hermes-register, archive-copy).
    Returns ``(result, exit_code)``; exit 1 when the post-apply health report has problems.
    With ``out`` the result is sealed as autopilot-migration-result-v1 (the rollback journal);
    ``force`` (True / False) marks ``out`` as the user's ``--out`` (an existing file refused
    unless True, checked before anything is imported), None as a path MindOS chose.
    """
    if out is not None and force is not None:
        from mindos.core import files  # lazy: --out only

        files.check_out(out, force=force)
    doc, src = _load_source(inventory_path, source_id, redact, allow_secret)
    if src["kind"] != "autopilot_sqlite":
        result, journal, code = migrate_steps.run(conn, doc, inventory_path, src, apply=apply, redact=redact,
                                                  allow_secret=allow_secret)
        return _finish(result, out, journal, force), code
    result, private = _plan(conn, inventory_path, doc, src, redact=redact, relink_audit=relink_audit)
    result["applied"] = False
    if not apply:
        if private["events"] and private["lived_in"] and not relink_audit:
            result["refusal_on_apply"] = "home has its own audit history: pass --relink-audit"
        return _finish(result, out, None, force), 0
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
    result = _finish(result, out, journal, force)
    return result, (0 if result["health"]["ok"] else 1)


def _finish(result, out, journal, force=None):
    if out is None:
        return result
    body = dict(result)
    body["journal"] = journal if journal is not None else {"rows": {}, "events": [], "files": []}
    body["created_at"] = clock.now_iso()
    path = os.path.abspath(out)
    doc, file_hash = artifacts.seal_write(path, RESULT_FORMAT, body, force=force)
    result["out"] = path
    result["result_digest"] = doc["seal"]["digest"]
    result["result_sha256"] = file_hash
    return result


# ---------------------------------------------------------------------------------------
# Stage three: rollback


def _relink_from(conn, start_id):
    """Renumber events from ``start_id`` on into a gapless run and re-derive their hashes."""
    prev = conn.execute("SELECT id, hash FROM audit_events WHERE id < ? ORDER BY id DESC LIMIT 1",
                        (start_id,)).fetchone()
    prev_id, prev_hash = (prev[0], prev[1]) if prev else (0, ledger.GENESIS_HASH)
    rows = conn.execute("SELECT id, entity_type, entity_id, action, payload_json, created_at FROM audit_events"
                        " WHERE id >= ? ORDER BY id", (start_id,)).fetchall()
    for row in rows:
        new_id = prev_id + 1
        digest = ledger.event_hash(new_id, prev_hash, row[1], row[2], row[3], row[4], row[5])
        conn.execute("UPDATE audit_events SET id = ?, prev_hash = ?, hash = ? WHERE id = ?",
                     (new_id, prev_hash, digest, row[0]))
        prev_id, prev_hash = new_id, digest


def _dependents(conn, task_ids, journal_keys):
    """Local rows (not in the journal) that hang on an imported task."""
    if not task_ids:
        return []
    found = []
    marks = ", ".join("?" * len(task_ids))
    for table in sorted(_tables(conn)):
        if table in ("tasks", "task_tags", "heartbeats", "audit_events") or "_fts" in table:
            continue
        columns = _columns(conn, table)
        refs = [c for c in ("task_id", "depends_on", "task") if c in columns]
        if not refs:
            continue
        key = _pk(conn, table) or columns
        own = journal_keys.get(table, set())
        for ref in refs:
            for row in conn.execute(f'SELECT * FROM "{table}" WHERE "{ref}" IN ({marks})', sorted(task_ids)):
                row = dict(row)
                ident = canonical.canonical_json({k: row[k] for k in key})
                if ident not in own:
                    found.append((table, ident, key, row))
    unique = {}
    for table, ident, key, row in found:
        unique[(table, ident)] = (key, row)
    return [(table, ident, key, row) for (table, ident), (key, row) in sorted(unique.items())]


FILE_AREAS = ("receipts", "hermes/registered", "archive/obsidian")  # where a journal may name files


def _journal_path(home, rel, area, *, ancestors=False):
    """The file or directory a journal names, refused unless it is a plain relative path inside
    ``area`` of this home (or, with ``ancestors``, a directory on the way to it) reached
    through real directories (never a symlink)."""
    parts = rel.split("/") if isinstance(rel, str) else [""]
    inside = rel == area or rel.startswith(area + "/") or (ancestors and area.startswith(rel + "/"))
    if os.path.isabs(rel) or any(p in ("", ".", "..") for p in parts) or not inside:
        raise IntegrityError(f"the result journal names {str(rel)[:120]!r}, outside {area}/ of this home")
    path = home
    for part in parts[:-1]:
        path = os.path.join(path, part)
        if os.path.islink(path):
            raise Refused(f"refusing to follow {path}: a symlink inside the home")
    return os.path.join(home, *parts)


def _prune_dirs(paths):
    """Remove the empty directories under and of ``paths`` (deepest first, never through a
    symlink); a directory holding anything is kept.  Returns the removed paths."""
    from mindos.core import files  # lazy: only a rollback prunes

    removed = []
    for top in sorted(paths, key=lambda p: p.count(os.sep), reverse=True):
        if os.path.islink(top) or not os.path.isdir(top):
            continue
        inner, _ = files.walk(top, dirs=True)
        for _, directory in sorted(inner, key=lambda found: found[0].count("/"), reverse=True):
            try:
                os.rmdir(directory)
                removed.append(directory)
            except OSError:
                pass
        try:
            os.rmdir(top)
            removed.append(top)
        except OSError:
            pass
    return removed


def rollback(conn, result_path, *, apply=False, force=False):
    """``migrate-rollback``: undo exactly what one import applied (dry run unless ``apply``).

    The journal of an autopilot_sqlite import names rows, merged events and receipt files;
    that of a copy step (hermes-register, archive-copy) the files it wrote and the
    directories it created, which go once empty; that of memory-import the memory rows."""
    if not isinstance(result_path, str) or not os.path.lexists(result_path):
        raise NotFound(f"result document {result_path} not found")  # a FIFO or link: named by the reader
    doc = artifacts.read(result_path, RESULT_FORMAT)
    journal = doc.get("journal")
    if not isinstance(journal, dict) or "rows" not in journal:
        raise Refused("this result document predates rollback journals; re-run migrate-import --apply --out to "
                      "regenerate one")
    if not doc.get("applied"):
        raise Refused("this result document records a dry run; there is nothing to roll back")
    if os.path.abspath(doc.get("target_home") or "") != os.path.abspath(conn.home):
        raise Refused(f"this import was applied to {doc.get('target_home')}, not to this home ({conn.home})")
    tables = list(journal["rows"])
    remove, gone, drifted, journal_keys = [], 0, [], {}
    task_ids = set()
    for table in tables:
        journal_keys[table] = {canonical.canonical_json(item["key"]) for item in journal["rows"][table]}
        columns = journal.get("columns", {}).get(table) or _columns(conn, table)
        for item in journal["rows"][table]:
            key = item["key"]
            where = " AND ".join(f'"{k}" IS ?' for k in key)
            row = conn.execute(f'SELECT * FROM "{table}" WHERE {where}', list(key.values())).fetchone()
            if row is None:
                gone += 1
                continue
            current = {c: row[c] for c in columns if c in row.keys()}
            if table == "tasks":
                task_ids.add(key["id"])
            if row_hash(current) != item["hash"]:
                drifted.append(f"{table} {canonical.canonical_json(key)}")
            remove.append((table, key))
    dependents = _dependents(conn, task_ids, journal_keys)
    event_ids = [e["id"] for e in journal["events"]]
    present_events = [e for e in journal["events"] if conn.execute(
        "SELECT 1 FROM audit_events WHERE id = ? AND hash = ?", (e["id"], e["hash"])).fetchone()]
    area = journal.get("directory") or "receipts"
    if area not in FILE_AREAS[:1] and not any(area.startswith(a + "/") for a in FILE_AREAS[1:]):
        raise IntegrityError(f"the result journal names {str(area)[:120]!r}, not a migration area of this home")
    directories = [_journal_path(conn.home, rel, area, ancestors=True) for rel in journal.get("directories", [])] \
        if journal.get("directory") else []
    files = []
    for item in journal["files"]:
        path = _journal_path(conn.home, item["path"], area)
        if not os.path.lexists(path):
            files.append({**item, "state": "gone"})
            continue
        try:
            same = not os.path.islink(path) and migrate_inventory.file_digest(path)[0] == item["sha256"]
        except OSError:
            same = False
        files.append({**item, "state": "remove" if same else "withheld_changed"})
    report = {
        "result": os.path.abspath(result_path), "result_digest": doc["seal"]["digest"], "source_id": doc["source_id"],
        "applied": False, "forced": bool(force),
        "rows_to_remove": len(remove), "rows_already_gone": gone,
        "by_table": {t: sum(1 for table, _ in remove if table == t) for t in tables},
        "drifted": drifted[:NAMED_MAX], "drifted_total": len(drifted),
        "local_dependents": [f"{t} {ident}" for t, ident, _, _ in dependents][:NAMED_MAX],
        "local_dependents_total": len(dependents),
        "events_in_scope": len(present_events), "events_journaled": len(event_ids),
        "files": [{k: f[k] for k in ("path", "state")} for f in files],
        "directories": [os.path.relpath(d, conn.home) for d in directories if os.path.isdir(d)],
        "needs_force": bool(drifted or dependents),
    }
    if doc.get("step"):
        report["step"] = doc["step"]
    report["deduplicated"] = not remove and not present_events and not any(f["state"] == "remove" for f in files)
    if not apply:
        return report
    if report["needs_force"] and not force:
        names = "; ".join((drifted + report["local_dependents"])[:NAMED_MAX])
        raise Refused(f"rollback would destroy newer local truth ({len(drifted)} drifted rows, {len(dependents)} "
                      f"local dependents: {names}); pass --force to cascade them away")
    if report["deduplicated"] and not dependents:
        # a rollback killed between its files and its directories finishes the directories
        report.update(applied=True, directories_removed=[os.path.relpath(d, conn.home) for d in _prune_dirs(directories)])
        return report
    with db.write(conn):
        for table, ident, key, row in dependents:
            where = " AND ".join(f'"{k}" IS ?' for k in key)
            conn.execute(f'DELETE FROM "{table}" WHERE {where}', [row[k] for k in key])
        for table, key in reversed(remove):
            where = " AND ".join(f'"{k}" IS ?' for k in key)
            conn.execute(f'DELETE FROM "{table}" WHERE {where}', list(key.values()))
        if present_events:
            ids = [e["id"] for e in present_events]
            conn.executemany("DELETE FROM audit_events WHERE id = ?", [(i,) for i in ids])
            _relink_from(conn, min(ids))
        ledger.append_event(conn, "migration", doc["source_id"], "migration_rollback_applied", {
            "result_digest": doc["seal"]["digest"], "rows_removed": len(remove), "events_removed": len(present_events),
            "dependents_removed": len(dependents), "drifted_removed": len(drifted), "forced": bool(force),
            "files_removed": sum(1 for f in files if f["state"] == "remove"),
            **({"step": doc["step"]} if doc.get("step") else {})})
        chain = ledger.verify_chain(conn)
        if not chain["ok"]:
            raise IntegrityError("rollback would leave the audit chain broken; nothing was changed")
    removed_files, withheld = [], []
    for item in files:
        if item["state"] == "remove":
            try:
                os.unlink(os.path.join(conn.home, item["path"]))
                removed_files.append(item["path"])
            except OSError:
                withheld.append(item["path"])
        elif item["state"] == "withheld_changed":
            withheld.append(item["path"])
    report.update(applied=True, files_removed=removed_files, files_withheld=withheld,
                  directories_removed=[os.path.relpath(d, conn.home) for d in _prune_dirs(directories)],
                  chain=ledger.verify_chain(conn))
    return report

