"""Snapshots: a sealed, point-in-time copy of the whole database, and the exact way back.

``snapshot`` writes an ``autopilot-snapshot-v2`` file: one POSIX tar (pax), written and
read streaming, so no step ever holds the whole home in memory.  Its members, in order:

  * ``manifest.json``: the sealed, signed manifest (:mod:`mindos.core.seal`, canonical
    JSON): the schema version, the database copy's size and SHA-256, every data table's
    row count and digest (:func:`mindos.recovery.tables.digest_table`), the audit head and
    each receipt file's size and SHA-256;
  * ``state.db``: a consistent copy of the database made by SQLite itself (``VACUUM
    INTO``, :mod:`mindos.store.backup`) inside one read transaction, so writers keep going
    and the copy is the committed state at one instant; the manifest is computed from the
    copy, so it describes exactly what the file carries;
  * ``receipts/<id>.json``: the receipt files the copy's receipts rows index.

``snapshot-check`` and ``snapshot-restore`` read the tar front to back: the manifest's
seal and signature first (an untrusted signer is refused before anything else is read),
then each member is hashed as it streams past (1 MiB at a time) and compared with the
manifest; a changed byte, a missing, extra or truncated member is refused.  A restore
streams the members into a scratch directory inside the home, re-digests every table of
the copy while checking its rows with the write path's rules (:mod:`mindos.recovery.rowcheck`),
brings an older copy forward with the numbered migrations, and then replaces every table
in one write transaction with ``INSERT ... SELECT`` from the attached copy (FTS rebuilt
in step), re-checking foreign keys and the audit chain inside that same transaction: if
anything fails it rolls back and the home is exactly as before.  A copy of this code's
schema is re-digested and checked in a thread while that transaction loads it (the checks
run in Python, the load inside SQLite); the transaction commits, and receipt files are
written, only once every check has passed.  No audit event is
appended, so the restored ledger is the snapshotted one, row for row.

The older ``autopilot-snapshot-v1`` files (one sealed JSON document, byte-exact) stay
readable: check and restore tell the two apart by their first bytes."""

import os
import shutil
import sqlite3

from mindos.core import clock
from mindos.errors import IntegrityError, MindosError, Refused
from mindos.recovery import artifacts, checkpoint, rowcheck, stream, tables
from mindos.store import db, ledger

FORMAT = "autopilot-snapshot-v1"  # the sealed JSON document (still read; written by create_v1)
FORMAT_V2 = "autopilot-snapshot-v2"  # the streamed tar
BULK_CACHE_KIB = -262144  # 256 MiB page cache while reloading
STREAM_CACHE_KIB = -65536  # 64 MiB page cache while a streamed restore reloads (memory flat with size)
DATABASE = "state.db"


def create(conn, *, out=None, force=False):
    """Write a streamed snapshot of the whole database; return ``{"path", "file_sha256",
    "counts", "audit", "receipt_files", "schema_version", "created_at", "checkpoint_pin"}``.
    Reads only.  An existing ``out`` is refused unless ``force`` (a database, a symlink or a
    special file always)."""
    from mindos.store import backup  # lazy: snapshots only

    if out is not None:
        from mindos.core import files as file_safety  # lazy: --out only

        out = file_safety.check_out(out, force=force)  # before copying anything
    path = os.path.abspath(out or artifacts.default_path(conn.home, "snapshot", ext=".tar"))
    staging = stream.staging_beside(path, STAGING)
    try:
        copy = backup.copy_to(conn, os.path.join(staging, DATABASE))
        manifest, refused = _describe(conn.home, copy, staging)
        now = clock.now_iso()
        manifest["created_at"] = now
        _, sealed = artifacts.seal_signed(FORMAT_V2, manifest, conn.home)
        digest = artifacts.stream_write(path, lambda handle: stream.write_tar(handle, sealed, staging, manifest),
                                        force=bool(force) if out is not None else None)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    with backup.unmapped(conn):  # the pin re-reads the ledger: memory stays flat with its size
        pin = checkpoint.auto_pin(conn)  # every snapshot also pins the head (inside and outside the home)
    report = {"path": path, "file_sha256": digest, "counts": manifest["counts"], "audit": manifest["audit"],
              "receipt_files": len(manifest["receipt_files"]), "schema_version": manifest["schema_version"],
              "created_at": now,
              "checkpoint_pin": {"pinned": pin["pinned"], "written": pin["written"], "problems": pin["problems"]}}
    if refused:  # planted links or special files: left out, and said so
        report["receipt_files_refused"] = refused
    return report


STAGING = ".snapshot-staging"  # <dir>/.snapshot-staging.<pid>.<hex>: a snapshot being written
RESTORING = ".snapshot-restore"  # <home>/.snapshot-restore.<pid>.<hex>: a restore being verified


def _describe(home, copy, staging):
    """The manifest body of the database copy ``copy`` (digests, counts, audit head), with
    the receipt files its rows index staged beside it; return ``(body, refused)``."""
    from mindos.store import backup  # lazy: snapshots only

    source = backup.open_copy(copy)
    try:
        version = backup.schema_version(source)
        digests = stream.describe_tables(source)
        head = checkpoint.head(source)
        paths = [row[0] for row in source.execute("SELECT path FROM receipts")] if "receipts" in digests else []
    finally:
        source.close()
    carried, refused = stream.stage_receipts(home, paths, staging)
    return {"schema_version": version, "database": stream.database_entry(DATABASE, copy),
            "tables": digests, "counts": {name: entry["rows"] for name, entry in digests.items()},
            "digest_chunk_rows": tables.DIGEST_CHUNK_ROWS, "audit": head, "receipt_files": carried}, refused


def is_streamed(path):
    """True when ``path`` is a streamed (tar) snapshot, False for anything else (read as a
    sealed JSON document, which refuses what it is not)."""
    return artifacts.is_tar(path)


def _stream(path, home, *, staging=None, action="snapshot-check", trust_unsigned=True):
    """Read a streamed snapshot front to back, verifying as it goes (:func:`stream.read`);
    return ``(manifest, provenance)``."""
    return stream.read(path, home, format=FORMAT_V2, what="snapshot", database=DATABASE, staging=staging,
                       action=action, trust_unsigned=trust_unsigned)


def create_v1(conn, *, out=None, force=False):
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
    """Read, verify and structurally check a v1 (sealed JSON) snapshot; return ``(document, provenance)``
    (provenance: who signed it, see :func:`mindos.recovery.artifacts.read_signed`)."""
    doc, provenance = artifacts.read_signed(path, FORMAT, home)
    blocks = doc.get("tables")
    if not isinstance(blocks, dict) or not isinstance(doc.get("counts"), dict):
        raise IntegrityError(f"{path}: snapshot has no tables")
    tables.check_blocks(path, blocks, "snapshot")
    for name, block in blocks.items():
        if doc["counts"].get(name) != len(block["rows"]):
            raise IntegrityError(f"{path}: snapshot table {name} does not match its count")
    if not isinstance(doc.get("schema_version"), int):
        raise IntegrityError(f"{path}: snapshot has no schema_version")
    return doc, provenance


def check(path, home=None):
    """Verify a snapshot file; return ``{"ok", "path", "format", "schema_version", "counts",
    "audit", "receipt_files", "created_at", "trust", "key_id"}`` (IntegrityError when it was
    changed; ``trust`` says who signed it, as ``home`` sees it).  Either format."""
    if is_streamed(path):
        manifest, provenance = _stream(path, home)
        return {"ok": True, "path": os.path.abspath(path), "format": manifest["format"],
                "schema_version": manifest["schema_version"], "counts": manifest["counts"],
                "audit": manifest.get("audit"), "receipt_files": len(manifest["receipt_files"]),
                "created_at": manifest.get("created_at"), **provenance}
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
    audit chain.  Either format (see the module docstring).
    """
    if is_streamed(path):
        return _restore_streamed(conn, path, force=force, trust_unsigned=trust_unsigned)
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
            chain = _check_loaded(conn)
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
    return _restored(path, loaded, chain, written, occupied, provenance, upgraded_from)


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


def _restore_streamed(conn, path, *, force, trust_unsigned):
    """:func:`restore` of a streamed (v2) snapshot: streamed into a scratch directory inside
    the home, verified, then loaded in one write transaction (see the module docstring)."""
    from mindos.store import backup  # lazy: restores only

    staging = stream.staging_dir(conn.home, RESTORING)
    try:
        os.mkdir(os.path.join(staging, "receipts"), 0o700)
        manifest, provenance = _stream(path, conn.home, staging=staging, action="snapshot-restore",
                                       trust_unsigned=trust_unsigned)
        copy = os.path.join(staging, DATABASE)
        current = db.latest_version()
        version = manifest["schema_version"]
        if version > current:
            raise Refused(f"snapshot-restore refused: {path} is schema version {version}, this database is version"
                          f" {current} (upgrade MindOS to restore a newer snapshot)")
        if version < 1:
            raise Refused(f"snapshot-restore refused: {path} has no usable schema version ({version})")
        limit = rowcheck.artifact_time(manifest)
        guard = provenance["trust"] == "unsigned"  # text this home never guarded: the secret guard runs now
        upgraded_from = None
        verifier = None
        if version == current:  # verified while the load runs (see _Verifier): nothing commits before it passes
            verifier = _Verifier(copy, manifest, path, guard=guard, limit=limit)
        else:
            stream.verify_copy(copy, manifest, path)  # digests; its rows are checked once brought forward
            # brought forward like a home, then its rows checked by today's rules
            upgraded_from = version
            moved = backup.open_copy(copy, upgrade=True)
            try:
                _check_rows(moved, guard=guard, limit=limit)
            finally:
                moved.close()
        try:
            files = stream.staged_receipts(conn.home, staging, manifest)
            with backup.unmapped(conn):  # whole-table passes over the live database: memory flat with its size
                return _load_copy(conn, path, copy, files, force=force, provenance=provenance,
                                  upgraded_from=upgraded_from, verified=verifier.wait if verifier else None)
        except BaseException as exc:
            if verifier is not None:  # a refusal of the copy is the one a restore reports first, as when
                verifier.wait(stop=not isinstance(exc, Exception))  # it ran first (Ctrl-C: stop at once)
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


class _Verifier:
    """:func:`stream.verify_copy` of a streamed copy (digests and row checks) in a thread of its
    own, started at once, so the load's statements (which run inside SQLite, without the
    interpreter's lock) overlap the checks (which run in Python): on two cores the restore
    takes about the longer of the two instead of their sum.  The load calls :meth:`wait`
    before its transaction commits or any receipt file is written, and a failed load waits
    too, so a copy that fails its digests or the row checks is refused with the same message
    as when the checks ran first, and nothing is changed either way."""

    def __init__(self, copy, manifest, path, *, guard, limit):
        import threading  # lazy: streamed restores only

        self.error = None
        self.stopped = threading.Event()

        def visit_for(name):
            check = _row_checker(name, guard, limit)

            def visit(columns, rows):
                if self.stopped.is_set():
                    raise _Stopped()
                check(columns, rows)
            return visit

        def run():
            try:
                stream.verify_copy(copy, manifest, path, visit_for=visit_for)
            except _Stopped:
                pass
            except BaseException as exc:  # handed to the waiting thread
                self.error = exc

        self.thread = threading.Thread(target=run, name="snapshot-verify", daemon=True)
        self.thread.start()

    def wait(self, stop=False):
        """Wait for the checks; raise what refused the copy (``stop``: interrupted, the
        checks stop at their next chunk)."""
        if stop:
            self.stopped.set()
        self.thread.join()
        if self.error is not None:
            error, self.error = self.error, None
            raise error


class _Stopped(Exception):
    """The restore was interrupted: the verifying thread stops at its next chunk."""


def _row_checker(table, guard, limit):
    return stream.row_checker(table, "snapshot-restore", guard=guard, limit=limit)


def _check_rows(conn, *, guard, limit):
    for name in tables.data_tables(conn):
        tables.digest_table(conn, name, visit=_row_checker(name, guard, limit))


def _load_copy(conn, path, copy, files, *, force, provenance, upgraded_from, verified=None):
    """Replace every table from the verified copy in one write transaction (see restore);
    ``verified()`` (optional) waits for checks still running on the copy and raises when they
    refuse it: called before the commit and before any receipt file is written."""
    from mindos.core import files as file_safety  # lazy: restores only
    from mindos.store import backup  # lazy: as above

    source = backup.open_copy(copy)
    try:
        _check_schema(conn, {"schema_version": backup.schema_version(source),
                             "tables": {name: {"columns": tables.columns(source, name)}
                                        for name in tables.data_tables(source)}}, path)
    finally:
        source.close()
    present = tables.data_tables(conn)
    with backup.attached(conn, copy) as alias:
        occupied = {name: tables.row_count(conn, name) for name in present}
        occupied = {name: n for name, n in occupied.items() if n}
        if occupied and not force:
            summary = ", ".join(f"{n} {name}" for name, n in sorted(occupied.items()))
            raise Refused(f"snapshot-restore refused: the database is not empty ({summary}); pass --force to"
                          " replace it")
        written = []
        cache = conn.execute("PRAGMA cache_size").fetchone()[0]
        conn.execute(f"PRAGMA cache_size={STREAM_CACHE_KIB}")
        try:
            with db.write(conn):
                loaded = tables.replace_all_from(conn, alias)
                chain = _check_loaded(conn)
                if verified is not None:
                    verified()
                for stored, (target, staged) in sorted(files.items()):
                    data = file_safety.read_bytes(staged, max_bytes=artifacts.MAX_RECEIPT_BYTES)
                    if _same_bytes(target, data):
                        continue
                    artifacts.atomic_write_bytes(target, data, home=conn.home)
                    written.append(stored)
        except (sqlite3.Error, OverflowError) as exc:
            raise IntegrityError(f"snapshot-restore failed: {exc} (rolled back)") from None
        finally:
            conn.execute(f"PRAGMA cache_size={cache}")
    return _restored(path, loaded, chain, written, occupied, provenance, upgraded_from)


def _check_loaded(conn):
    """Inside the restore's transaction: refuse (rolling it back) a load whose rows break a
    foreign key or whose audit chain does not verify."""
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
    return chain


def _restored(path, loaded, chain, written, occupied, provenance, upgraded_from):
    """What a restore reports (either format)."""
    report = {"restored": True, "path": os.path.abspath(path), "tables": loaded,
              "audit": {"ok": chain["ok"], "events": chain["events"]}, "foreign_keys": "ok",
              "receipt_files_written": len(written), "replaced": sorted(occupied), **provenance}
    if upgraded_from is not None:
        report["upgraded_from_schema_version"] = upgraded_from
    return report
