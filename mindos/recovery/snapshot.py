"""Snapshots: a sealed, point-in-time copy of every table, and the exact way back.

``snapshot`` reads every data table (whatever domains exist: the list comes from the
schema, see :mod:`mindos.recovery.tables`) inside one read transaction, plus the receipt
files the receipts rows index, into an ``autopilot-snapshot-v1`` document written
atomically with mode 0600 and signed with the home's key.  ``snapshot-restore`` verifies
the seal before touching anything, refuses a snapshot neither this home nor a trusted key
signed (unless ``trust_unsigned``), validates every row with the write path's rules
(:mod:`mindos.recovery.rowcheck`), refuses a non-empty database without ``force``, and reloads every table in one
write transaction (FTS rebuilt in step), then re-checks foreign keys and the audit chain
inside that same transaction: if either fails, it rolls back and the database is exactly
as before.  No audit event is appended, so the restored ledger is the snapshotted one,
row for row (order, hashes, lease state).  A snapshot taken on an older schema is first
brought forward in a scratch database by the same numbered migrations a home goes through;
a newer one is refused.
"""

import os
import sqlite3

from mindos.core import clock
from mindos.errors import IntegrityError, MindosError, Refused
from mindos.recovery import artifacts, checkpoint, rowcheck, tables
from mindos.store import db, ledger

FORMAT = "autopilot-snapshot-v1"
BULK_CACHE_KIB = -262144  # 256 MiB page cache while reloading


def create(conn, *, out=None, force=False):
    """Write a snapshot of the whole database; return ``{"path", "file_sha256", "counts",
    "audit", "receipt_files", "created_at"}``.  Reads only.  An existing ``out`` is refused
    unless ``force`` (a database, a symlink or a special file always)."""
    if out is not None:
        from mindos.core import files as file_safety  # lazy: --out only

        file_safety.check_out(out, force=force)  # before reading every table
    conn.execute("BEGIN")
    try:
        dumped, sequence = tables.dump_all(conn)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        head = checkpoint.head(conn)
        paths = [row[0] for row in conn.execute("SELECT path FROM receipts")] if "receipts" in dumped else []
        refused = []
        files = artifacts.receipt_files(conn.home, paths, refused)
    finally:
        conn.execute("COMMIT")
    now = clock.now_iso()
    counts = {name: len(block["rows"]) for name, block in dumped.items()}
    path = out or artifacts.default_path(conn.home, "snapshot")
    _, digest = artifacts.seal_write(path, FORMAT, force=bool(force), body={
        "schema_version": version, "tables": dumped, "sqlite_sequence": sequence, "counts": counts, "audit": head,
        "receipt_files": files, "created_at": now}, home=conn.home)
    pin = checkpoint.auto_pin(conn)  # every snapshot also pins the head (inside and outside the home)
    report = {"path": os.path.abspath(path), "file_sha256": digest, "counts": counts, "audit": head,
              "receipt_files": len(files), "schema_version": version, "created_at": now,
              "checkpoint_pin": {"pinned": pin["pinned"], "written": pin["written"], "problems": pin["problems"]}}
    if refused:  # planted links or special files: left out, and said so
        report["receipt_files_refused"] = refused
    return report


def load(path, home=None):
    """Read, verify and structurally check a snapshot; return ``(document, provenance)``
    (provenance: who signed it, see :func:`mindos.recovery.artifacts.read_signed`)."""
    doc, provenance = artifacts.read_signed(path, FORMAT, home)
    blocks = doc.get("tables")
    if not isinstance(blocks, dict) or not isinstance(doc.get("counts"), dict):
        raise IntegrityError(f"{path}: snapshot has no tables")
    for name, block in blocks.items():
        if (not isinstance(block, dict) or not isinstance(block.get("columns"), list)
                or not isinstance(block.get("rows"), list)
                or not tables.rows_fit(block)):
            raise IntegrityError(f"{path}: snapshot table {name} is malformed")
        if doc["counts"].get(name) != len(block["rows"]):
            raise IntegrityError(f"{path}: snapshot table {name} does not match its count")
    if not isinstance(doc.get("schema_version"), int):
        raise IntegrityError(f"{path}: snapshot has no schema_version")
    return doc, provenance


def check(path, home=None):
    """Verify a snapshot file; return ``{"ok", "path", "format", "schema_version", "counts",
    "audit", "receipt_files", "created_at", "trust", "key_id"}`` (IntegrityError when it was
    changed; ``trust`` says who signed it, as ``home`` sees it)."""
    doc, provenance = load(path, home)
    return {"ok": True, "path": os.path.abspath(path), "format": doc["format"], "schema_version": doc["schema_version"],
            "counts": doc["counts"], "audit": doc.get("audit"), "receipt_files": len(doc.get("receipt_files") or {}),
            "created_at": doc.get("created_at"), **provenance}


def _check_schema(conn, doc, path):
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if doc["schema_version"] != version:
        raise Refused(f"snapshot-restore refused: {path} is schema version {doc['schema_version']},"
                      f" this database is version {version} (upgrade MindOS to restore a newer snapshot)")
    present = tables.data_tables(conn)
    if sorted(doc["tables"]) != present:
        differ = sorted(set(doc["tables"]) ^ set(present))
        raise Refused(f"snapshot-restore refused: tables differ from this database ({', '.join(differ)})")
    for name in present:
        if doc["tables"][name]["columns"] != tables.columns(conn, name):
            raise Refused(f"snapshot-restore refused: columns of table {name} differ from this database")


def restore(conn, path, *, force=False, trust_unsigned=False):
    """Rebuild the database from a verified snapshot; return the restore report.

    Refuses (nothing changed) when the file fails its seal or signature, neither this home
    nor a trusted key signed it (unless ``trust_unsigned``), a row breaks the write path's
    rules, its schema differs, or the database is not empty and ``force`` is false.  Raises
    IntegrityError (rolled back) when the restored rows fail the foreign-key check or the
    audit chain.
    """
    doc, provenance = load(path, conn.home)
    artifacts.require_trusted(provenance, path, "snapshot-restore", trust_unsigned)
    upgraded_from = None
    if doc["schema_version"] < conn.execute("PRAGMA user_version").fetchone()[0]:
        upgraded_from = doc["schema_version"]
        doc = _upgrade(doc, path)
    _check_schema(conn, doc, path)
    rowcheck.check_blocks(doc["tables"], action="snapshot-restore", limit=rowcheck.artifact_time(doc))
    if provenance["trust"] == "unsigned":  # text this home never guarded: the secret guard runs now
        rowcheck.guard_blocks(doc["tables"], action="snapshot-restore")
    files = artifacts.check_receipt_files(conn.home, doc.get("receipt_files") or {})
    occupied = {name: tables.row_count(conn, name) for name in tables.data_tables(conn)}
    occupied = {name: n for name, n in occupied.items() if n}
    if occupied and not force:
        summary = ", ".join(f"{n} {name}" for name, n in sorted(occupied.items()))
        raise Refused(f"snapshot-restore refused: the database is not empty ({summary}); pass --force to replace it")
    written = []
    cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute(f"PRAGMA cache_size={BULK_CACHE_KIB}")  # a bulk reload: keep the working set in memory
    try:
        with db.write(conn):
            loaded = tables.replace_all(conn, doc["tables"], doc.get("sqlite_sequence"))
            problems = tables.foreign_key_problems(conn)
            if problems:
                first = problems[0]
                raise IntegrityError(f"snapshot-restore failed: {len(problems)} foreign-key violation(s), first in"
                                     f" {first['table']} row {first['rowid']} (rolled back)")
            chain = ledger.verify_chain(conn)
            if not chain["ok"]:
                first = chain["problems"][0]
                raise IntegrityError(f"snapshot-restore failed: audit chain {first['kind']} at event"
                                     f" {first['event_id']} (rolled back)")
            # receipt files land before the commit: a crash here leaves complete, unindexed
            # files (doctor notes them, receipts-sweep settles them), never a row without its file
            for stored, (target, data) in sorted(files.items()):
                if _same_bytes(target, data):
                    continue
                artifacts.atomic_write_bytes(target, data, home=conn.home)
                written.append(stored)
    except (sqlite3.Error, OverflowError) as exc:  # OverflowError: an integer SQLite cannot hold
        raise IntegrityError(f"snapshot-restore failed: {exc} (rolled back)") from None
    finally:
        conn.execute(f"PRAGMA cache_size={cache}")
    report = {"restored": True, "path": os.path.abspath(path), "tables": loaded,
            "audit": {"ok": chain["ok"], "events": chain["events"]}, "foreign_keys": "ok",
            "receipt_files_written": len(written), "replaced": sorted(occupied), **provenance}
    if upgraded_from is not None:
        report["upgraded_from_schema_version"] = upgraded_from
    return report


def _upgrade(doc, path):
    """A snapshot taken on an older schema, brought to this code's schema the way a home
    is: loaded into a scratch database built by migrations 1..N, then migrated forward.
    Returns a document-shaped dict of the upgraded tables (the file itself is untouched)."""
    import shutil  # lazy: only restores of older snapshots upgrade
    import tempfile  # lazy: as above

    from mindos.store.migrations import MIGRATIONS  # lazy: as above

    version = doc["schema_version"]
    if version < 1:
        raise Refused(f"snapshot-restore refused: {path} has no usable schema version ({version})")
    scratch = tempfile.mkdtemp(prefix="mindos-snapshot-upgrade-")
    try:
        old = sqlite3.connect(db.database_path(scratch), isolation_level=None, factory=db.Connection)
        old.home, old.path = scratch, db.database_path(scratch)
        try:
            with_fts = db.fts5_supported()
            with db.write(old):
                for number in range(1, version + 1):
                    for statement in db.split_statements(MIGRATIONS[number - 1](), with_fts=with_fts):
                        old.execute(statement)
                old.execute(f"PRAGMA user_version={version}")
                _check_schema(old, doc, path)
                tables.replace_all(old, doc["tables"], doc.get("sqlite_sequence"))
        finally:
            old.close()
        new = db.connect(scratch)  # migrates forward like any home
        try:
            new.execute("BEGIN")
            dumped, sequence = tables.dump_all(new)
            new.execute("COMMIT")
        finally:
            new.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {**doc, "tables": dumped, "sqlite_sequence": sequence, "schema_version": db.latest_version()}


def _same_bytes(target, data):
    from mindos.core import files  # lazy: restores only

    try:
        return files.read_bytes(target, max_bytes=len(data)) == data
    except MindosError:  # absent, too large, a symlink or not a regular file: rewritten
        return False
