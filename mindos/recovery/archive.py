"""Archival: seal retired tasks into a file, then remove them; and bring them back.

``archive --before T`` takes every completed / failed / cancelled task last updated at or
before T, with the rows of every table holding a foreign key to it (dependencies,
heartbeats, receipts, notes, handoffs and whatever later domains add) and its receipt
files, into a streamed ``autopilot-archive-v2`` file: one POSIX tar, written and read
streaming (:mod:`mindos.recovery.stream`, the same pieces snapshots use), so no step holds
the archived rows in memory.  Its members, in order:

  * ``manifest.json``: the sealed, signed manifest: ``before``, the archived task ids, the
    schema version, the database copy's size and SHA-256, every table of the copy with
    its row count and digest, which of them ``archive-restore`` re-imports, the counts,
    and each receipt file's size and SHA-256;
  * ``archive.db``: an SQLite file holding exactly the archived rows (one table per
    archived table, under its own name; the candidates' audit events as
    ``audit_events``; detached provenance links as ``detached/<table>``), written by
    SQLite itself (:func:`mindos.store.backup.extract`) as it reads the live database;
  * ``receipts/<id>.json``: the archived receipt files.

``archive-check`` reads the tar front to back, hashing each member as it streams past;
``archive-restore`` streams the members into a scratch directory inside the home,
re-digests every table of the copy while checking its rows with the write path's rules,
and moves the rows in with ``INSERT ... SELECT`` from the attached copy in one write
transaction.  The older ``autopilot-archive-v1`` files (one sealed JSON document) stay
readable: check and restore tell the two apart by their first bytes.

Design decisions
  * **Seal-then-destroy.**  Everything happens under one write lock: the candidates are
    read, the dependency guard runs, the archive file is written and fsynced, and only
    then are the rows deleted (child tables first, then the tasks) in the same
    transaction.  The archive's rows are copied by a second, read-only connection while
    the write lock is held, so they are exactly the rows deleted.  A crash before the
    commit leaves the database untouched (and a valid archive file); receipt files are
    removed only after the commit.
  * **Dependency guard.**  Archiving refuses while any live task still depends on a
    candidate, so dispatch prerequisites never vanish from under queued work.
  * **Append-only audit.**  Audit events stay in the live ledger (the chain must keep
    verifying); the candidates' events are counted and copied into the archive.
  * **Soft links are detached, not destroyed.**  Facts whose provenance names an archived
    task keep living with ``task_id`` cleared; the archive records the links and
    ``archive-restore`` re-attaches them.
"""

import json
import os
import shutil
import sqlite3

from mindos.core import clock
from mindos.errors import IntegrityError, Refused
from mindos.recovery import artifacts, rowcheck, stream, tables
from mindos.store import db, ledger
from mindos.store.sql import quoted as _quote

FORMAT = "autopilot-archive-v1"  # the sealed JSON document (still read)
FORMAT_V2 = "autopilot-archive-v2"  # the streamed tar
DATABASE = "archive.db"  # the tar member holding the archived rows
EVENTS = "audit_events"  # the copy's table of the candidates' audit events (kept for reference, never restored)
DETACHED = "detached/"  # prefix of the copy's tables of detached provenance links
STAGING = ".archive-staging"  # <dir>/.archive-staging.<pid>.<hex>: an archive being written
RESTORING = ".archive-restore"  # <home>/.archive-restore.<pid>.<hex>: an archive being verified and loaded
COPY_ALIAS = "archive_copy"
STREAM_CACHE_KIB = -65536  # 64 MiB page cache while a restore moves rows (memory flat with size)
TERMINAL = ("completed", "failed", "cancelled")
SOFT_LINKS = {"facts": "task_id"}  # provenance references that detach instead of cascading
_IDS = "(SELECT value FROM json_each(?))"


def _child_tables(conn):
    children = tables.children_of(conn, "tasks", "id")
    for name in SOFT_LINKS:
        children.pop(name, None)
    return {name: children[name] for name in tables.parents_first(conn, list(children))}


def _soft_links(conn):
    present = set(tables.data_tables(conn))
    return {name: column for name, column in SOFT_LINKS.items()
            if name in present and column in tables.columns(conn, name)}


def _candidates(conn, before):
    terminal = ", ".join(f"'{s}'" for s in TERMINAL)
    return [row[0] for row in conn.execute(
        f"SELECT id FROM tasks WHERE status IN ({terminal}) AND updated_at <= ? ORDER BY seq", (before,))]


def _guard(conn, ids_json):
    terminal = ", ".join(f"'{s}'" for s in TERMINAL)
    rows = conn.execute(
        f"SELECT d.task_id, d.depends_on FROM dependencies d JOIN tasks t ON t.id = d.task_id"
        f" WHERE d.depends_on IN {_IDS} AND t.status NOT IN ({terminal}) ORDER BY d.task_id, d.depends_on",
        (ids_json,)).fetchall()
    if rows:
        named = ", ".join(f"{r[0]} -> {r[1]}" for r in rows[:10]) + (f" and {len(rows) - 10} more" if len(rows) > 10
                                                                       else "")
        raise Refused(f"archive refused: live tasks still depend on archive candidates ({named})")


def _key(conn, table):
    return "id" if "id" in tables.columns(conn, table) else "rowid"


def _parts(conn, ids_json):
    """What :func:`mindos.store.backup.extract` copies: the candidates, their child rows,
    their audit events and their detached links (see the module docstring)."""
    def every(table):
        return [(_quote(column), column) for column in tables.columns(conn, table)]

    parts = [("tasks", every("tasks"), "tasks", f"id IN {_IDS}", (ids_json,))]
    for name, column in _child_tables(conn).items():
        parts.append((name, every(name), name, f"{_quote(column)} IN {_IDS}", (ids_json,)))
    parts.append((EVENTS, every("audit_events"), "audit_events", f"entity_id IN {_IDS}", (ids_json,)))
    for name, column in _soft_links(conn).items():
        parts.append((DETACHED + name, [(_key(conn, name), "row_key"), (_quote(column), "task_id")], name,
                      f"{_quote(column)} IN {_IDS}", (ids_json,)))
    return parts


def _count_parts(conn, parts):
    """``{table: rows}`` a dry run would archive, counted in SQL."""
    return {table: conn.execute(f"SELECT count(*) FROM main.{_quote(source)} WHERE {where}", params).fetchone()[0]
            for table, _, source, where, params in parts}


def _counts(rows, receipt_files):
    """The report's ``counts``: rows per archived table, ``audit_events``, ``receipt_files``
    and ``<table>_detached`` per soft-linked table."""
    counts = {}
    for table, n in rows.items():
        if table.startswith(DETACHED):
            counts[f"{table[len(DETACHED):]}_detached"] = n
        else:
            counts[table] = n
    counts["receipt_files"] = receipt_files
    return counts


def archive(conn, before, *, dry_run=False, out=None, force=False):
    """Archive terminal tasks updated at or before ``before`` (see the module docstring).

    Returns ``{"dry_run", "before", "task_ids", "counts", "path", "file_sha256"}``
    (``path`` only when written).  Audits ``tasks_archived`` with the counts.  An existing
    ``out`` is refused unless ``force`` (a database, a symlink or a special file always).
    """
    before = clock.normalize(before, "--before")
    if dry_run:
        conn.execute("BEGIN")
        try:
            ids = _candidates(conn, before)
            ids_json = json.dumps(ids)
            _guard(conn, ids_json)
            rows = _count_parts(conn, _parts(conn, ids_json))
            paths = [row[0] for row in conn.execute(f"SELECT path FROM receipts WHERE task_id IN {_IDS}",
                                                    (ids_json,))] if "receipts" in rows else []
        finally:
            conn.execute("COMMIT")
        present = sum(1 for _ in artifacts.receipt_sizes(conn.home, paths))  # opened and sized, never read
        return {"dry_run": True, "before": before, "task_ids": ids, "counts": _counts(rows, present)}
    from mindos.store import backup  # lazy: archives only

    if out is not None:
        from mindos.core import files as file_safety  # lazy: --out only

        out = file_safety.check_out(out, force=force)  # before copying anything
    path = None if out is None else os.path.abspath(out)
    removed_files, refused = [], []
    with backup.unmapped(conn), db.write(conn):  # whole-table deletes: memory flat with the home's size
        ids = _candidates(conn, before)
        ids_json = json.dumps(ids)
        _guard(conn, ids_json)
        if not ids:
            return {"dry_run": False, "before": before, "task_ids": [], "counts": {}, "path": None}
        if path is None:  # chosen under the write lock: an archive written meanwhile is seen and kept
            path = artifacts.default_path(conn.home, "archive", ext=".tar")
        staging = stream.staging_beside(path, STAGING)
        try:
            copy = os.path.join(staging, DATABASE)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            rows = backup.extract(conn, copy, _parts(conn, ids_json), version=version)  # nothing written yet
            manifest, refused = _describe(conn.home, copy, staging, rows)
            manifest.update({"before": before, "task_ids": ids, "schema_version": version,
                             "created_at": clock.now_iso()})
            doc, sealed = artifacts.seal_signed(FORMAT_V2, manifest, conn.home)
            digest = artifacts.stream_write(path, lambda handle: stream.write_tar(handle, sealed, staging, manifest),
                                            force=bool(force) if out is not None else False)  # fsynced before
        finally:  # any row goes
            shutil.rmtree(staging, ignore_errors=True)
        counts = manifest["counts"]
        for name, column in _soft_links(conn).items():
            conn.execute(f'UPDATE {name} SET "{column}" = NULL WHERE "{column}" IN {_IDS}', (ids_json,))
        children = _child_tables(conn)
        for name in reversed(list(children)):
            conn.execute(f'DELETE FROM {name} WHERE "{children[name]}" IN {_IDS}', (ids_json,))
        conn.execute(f"DELETE FROM tasks WHERE id IN {_IDS}", (ids_json,))
        ledger.append_event(conn, "archive", _entity(doc), "tasks_archived",
                            {"before": before, "tasks": len(ids), "counts": counts, "file_sha256": digest,
                             "path": path})
        removed_files = [artifacts.receipt_target(conn.home, stored) for stored in manifest["receipt_files"]]
    for target in removed_files:  # after the commit: a crash here leaves files doctor notes
        try:
            os.unlink(target)
        except OSError:
            pass
    report = {"dry_run": False, "before": before, "task_ids": ids, "counts": counts, "path": path,
              "file_sha256": digest}
    if refused:  # planted links or special files: left out (and left in place), and said so
        report["receipt_files_refused"] = refused
    return report


def _describe(home, copy, staging, rows):
    """The manifest body of the archive's database copy (digests, counts, what restores),
    with the receipt files its rows index staged beside it; return ``(body, refused)``."""
    from mindos.store import backup  # lazy: archives only

    source = backup.open_copy(copy)
    try:
        digests = stream.describe_tables(source)
        paths = [row[0] for row in source.execute("SELECT path FROM receipts")] if "receipts" in rows else []
    finally:
        source.close()
    carried, refused = stream.stage_receipts(home, paths, staging)
    restore = [name for name in rows if name != EVENTS and not name.startswith(DETACHED)]
    detached = {name[len(DETACHED):]: name for name in rows if name.startswith(DETACHED)}
    return {"database": stream.database_entry(DATABASE, copy), "tables": digests,
            "digest_chunk_rows": tables.DIGEST_CHUNK_ROWS, "restore_tables": restore, "detached": detached,
            "counts": _counts({name: digests[name]["rows"] for name in rows}, len(carried)),
            "receipt_files": carried}, refused


def _entity(doc):
    return "archive-" + doc["seal"]["digest"][:16]


def _check_manifest(manifest, path):
    """An archive manifest's own fields (beyond :func:`stream.check_manifest`)."""
    names = manifest["tables"]
    restore, detached, ids = manifest.get("restore_tables"), manifest.get("detached"), manifest.get("task_ids")
    if (not isinstance(ids, list) or not all(isinstance(i, str) for i in ids)
            or not isinstance(manifest.get("before"), str)
            or not isinstance(restore, list) or "tasks" not in restore or len(set(restore)) != len(restore)
            or not all(isinstance(n, str) and n in names and n != EVENTS and not n.startswith(DETACHED)
                       for n in restore)
            or not isinstance(detached, dict)
            or not all(isinstance(t, str) and t == DETACHED + n and t in names for n, t in detached.items())):
        raise IntegrityError(f"{path}: the archive's manifest is malformed")


def _stream(path, home, *, staging=None, action="archive-check", trust_unsigned=True):
    return stream.read(path, home, format=FORMAT_V2, what="archive", database=DATABASE, check=_check_manifest,
                       staging=staging, action=action, trust_unsigned=trust_unsigned)


def is_streamed(path):
    """True when ``path`` is a streamed (tar) archive (or another tar, which the streamed
    reader refuses), False for anything else (read as a sealed JSON document)."""
    return artifacts.is_tar(path)


def load(path, home=None):
    """Read, verify and structurally check a v1 (sealed JSON) archive; return ``(document,
    provenance)`` (who signed it, see :func:`mindos.recovery.artifacts.read_signed`)."""
    doc, provenance = artifacts.read_signed(path, FORMAT, home)
    blocks = doc.get("tables")
    if not isinstance(blocks, dict) or "tasks" not in blocks or not isinstance(doc.get("task_ids"), list):
        raise IntegrityError(f"{path}: archive has no tasks")
    tables.check_blocks(path, blocks, "archive")
    return doc, provenance


def check(path, home=None):
    """Verify an archive file (either format); return ``{"ok", "path", "format", "before",
    "task_ids", "counts", "created_at", "trust", "key_id"}`` (``trust``: who signed it, as
    ``home`` sees it).  A streamed archive is hashed member by member as it is read."""
    doc, provenance = _stream(path, home) if is_streamed(path) else load(path, home)
    return {"ok": True, "path": os.path.abspath(path), "format": doc["format"], "before": doc.get("before"),
            "task_ids": doc["task_ids"], "counts": doc.get("counts"), "created_at": doc.get("created_at"),
            **provenance}


def restore(conn, path, *, force=False, trust_unsigned=False):
    """Re-import an archive: verified first (seal, then signature: one neither this home nor
    a trusted key signed is refused unless ``trust_unsigned``), every row checked against the
    write path's rules, task-id collisions refused unless ``force`` (which replaces them),
    rows reinserted parents first, receipt files recreated 0600, foreign keys re-checked
    (rolled back on failure).  Audits ``archive_restored``.  Either format."""
    if is_streamed(path):
        return _restore_streamed(conn, path, force=force, trust_unsigned=trust_unsigned)
    return _restore_v1(conn, path, force=force, trust_unsigned=trust_unsigned)


def _restore_streamed(conn, path, *, force, trust_unsigned):
    """:func:`restore` of a streamed archive: streamed into a scratch directory inside the
    home (every member hashed on the way), every table of the copy re-digested and its rows
    checked, then moved in with ``INSERT ... SELECT`` in one write transaction."""
    from mindos.store import backup  # lazy: restores only

    staging = stream.staging_dir(conn.home, RESTORING)
    try:
        os.mkdir(os.path.join(staging, "receipts"), 0o700)
        manifest, provenance = _stream(path, conn.home, staging=staging, action="archive-restore",
                                       trust_unsigned=trust_unsigned)
        copy = os.path.join(staging, DATABASE)
        limit = rowcheck.artifact_time(manifest)
        guard = provenance["trust"] == "unsigned"  # text this home never guarded: the secret guard runs now
        restorable = set(manifest["restore_tables"])
        stream.verify_copy(copy, manifest, path, visit_for=lambda name: stream.row_checker(
            name, "archive-restore", guard=guard, limit=limit) if name in restorable else None)
        files = stream.staged_receipts(conn.home, staging, manifest)
        source = backup.open_copy(copy)
        try:
            shapes = {name: tables.columns(source, name) for name in manifest["restore_tables"]}
            _check_task_ids(source, manifest["task_ids"], path)
        finally:
            source.close()
        present = set(tables.data_tables(conn))
        for name, names in shapes.items():
            if name not in present or names != tables.columns(conn, name):
                raise Refused(f"archive-restore refused: table {name} of the archive does not match this database")
        with backup.unmapped(conn):  # whole-table passes over the live database: memory flat with its size
            return _load_copy(conn, path, copy, manifest, shapes, files, force=force, provenance=provenance)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _check_task_ids(source, ids, path):
    """Refuse a copy whose tasks are not exactly the ones its manifest lists (each once): the
    manifest names what a restore reports and audits, the copy what it writes.  An unsigned
    archive's writer is unknown, and a seal binds the two only to each other's bytes."""
    listed = len(ids)
    held, matched = source.execute(f"SELECT count(*), count(DISTINCT id) FILTER (WHERE id IN {_IDS}) FROM tasks",
                                   (json.dumps(ids),)).fetchone()
    if len(set(ids)) != listed or held != listed or matched != listed:
        raise IntegrityError(f"archive-restore refused: {path}: the task ids its manifest lists are not the tasks"
                             f" in {DATABASE} ({listed} listed, {held} there, {matched} of them listed)")


def _load_copy(conn, path, copy, manifest, shapes, files, *, force, provenance):
    """Move the verified copy's rows in, parents first, in one write transaction."""
    from mindos.core import files as file_safety  # lazy: restores only
    from mindos.store import backup  # lazy: as above

    ids = manifest["task_ids"]
    written = []
    cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute(f"PRAGMA cache_size={STREAM_CACHE_KIB}")
    try:
        with backup.attached(conn, copy, alias=COPY_ALIAS) as alias:
            with db.write(conn):
                copied = f"(SELECT id FROM {alias}.tasks)"
                taken = [row[0] for row in conn.execute(f"SELECT id FROM main.tasks WHERE id IN {copied} ORDER BY id")]
                if taken and not force:
                    named = ", ".join(taken[:10]) + (f" and {len(taken) - 10} more" if len(taken) > 10 else "")
                    raise Refused(f"archive-restore refused: task ids already exist ({named}); pass --force to"
                                  " replace them")
                if taken:
                    conn.execute(f"DELETE FROM main.tasks WHERE id IN {copied}")
                conn.execute("PRAGMA defer_foreign_keys=ON")
                loaded = {}
                for name in tables.parents_first(conn, list(shapes)):
                    names = ", ".join(_quote(c) for c in shapes[name])
                    select, order, params = names, "rowid", ()
                    if name == "tasks" and "seq" in shapes[name]:
                        select, order, params = _free_seq(conn, alias, shapes[name])
                    try:
                        # a plain INSERT lands every row or raises; its rowcount leaves out
                        # what triggers wrote beside it (search indexes, the tag index)
                        loaded[name] = conn.execute(f"INSERT INTO main.{_quote(name)} ({names}) SELECT {select}"
                                                    f" FROM {alias}.{_quote(name)} ORDER BY {order}", params).rowcount
                    except sqlite3.IntegrityError as exc:
                        raise Refused(f"archive-restore refused: rows of {name} collide with this database ({exc})") \
                            from None
                reattached = 0
                links = _soft_links(conn)
                for name, table in manifest["detached"].items():
                    column = links.get(name)
                    if column is None:
                        continue
                    key = _key(conn, name)
                    reattached += conn.execute(
                        f"UPDATE main.{_quote(name)} SET {_quote(column)} = d.task_id FROM {alias}.{_quote(table)} AS d"
                        f" WHERE main.{_quote(name)}.{key} = d.row_key AND main.{_quote(name)}.{_quote(column)} IS NULL"
                    ).rowcount
                _settle(conn, _entity(manifest), ids, taken, loaded)
                for stored, (target, staged) in sorted(files.items()):
                    data = file_safety.read_bytes(staged, max_bytes=artifacts.MAX_RECEIPT_BYTES)
                    artifacts.atomic_write_bytes(target, data, home=conn.home)
                    written.append(stored)
    except (sqlite3.Error, OverflowError) as exc:
        raise IntegrityError(f"archive-restore failed: {exc} (rolled back)") from None
    finally:
        conn.execute(f"PRAGMA cache_size={cache}")
    return {"restored": ids, "replaced": taken, "counts": loaded, "receipt_files_written": len(written),
            "reattached": reattached, "path": os.path.abspath(path), **provenance}


def _settle(conn, entity, ids, taken, loaded):
    """A restore's last steps inside its transaction, either format: nothing left pointing
    at a missing row, then the ``archive_restored`` event."""
    problems = tables.foreign_key_problems(conn)
    if problems:
        raise IntegrityError(f"archive-restore failed: {len(problems)} foreign-key violation(s), first in"
                             f" {problems[0]['table']} (rolled back)")
    ledger.append_event(conn, "archive", entity, "archive_restored",
                        {"tasks": len(ids), "replaced": taken, "counts": loaded})


def _free_seq(conn, alias, names):
    """``(select list, order, params)`` for the copy's tasks: each keeps its seq unless another
    task took it meanwhile; those get a new one from SQLite, and come last, so the seq SQLite
    assigns them is never one a later row of the copy still carries.  The collisions are few
    and read first, so the insert never reads the table it writes."""
    taken = json.dumps([row[0] for row in conn.execute(
        f"SELECT a.seq FROM {alias}.tasks AS a JOIN main.tasks AS m ON m.seq = a.seq WHERE a.seq IS NOT NULL")])
    moved = f"seq IN {_IDS}"
    select = ", ".join(f"CASE WHEN {moved} THEN NULL ELSE seq END" if c == "seq" else _quote(c) for c in names)
    return select, f"{moved}, rowid", (taken, taken)


def _restore_v1(conn, path, *, force, trust_unsigned):
    """:func:`restore` of a v1 (sealed JSON) archive, read whole."""
    doc, provenance = load(path, conn.home)
    artifacts.require_trusted(provenance, path, "archive-restore", trust_unsigned)
    rowcheck.check_blocks(doc["tables"], action="archive-restore", limit=rowcheck.artifact_time(doc))
    if provenance["trust"] == "unsigned":  # text this home never guarded: the secret guard runs now
        rowcheck.guard_blocks(doc["tables"], action="archive-restore")
    files = artifacts.check_receipt_files(conn.home, doc.get("receipt_files") or {})
    blocks = doc["tables"]
    present = set(tables.data_tables(conn))
    for name, block in blocks.items():
        if name not in present or block["columns"] != tables.columns(conn, name):
            raise Refused(f"archive-restore refused: table {name} of the archive does not match this database")
    task_block = blocks["tasks"]
    id_col = task_block["columns"].index("id")
    ids = [row[id_col] for row in task_block["rows"]]
    listed = sorted(json.dumps(i) for i in doc["task_ids"])  # (as JSON: a forged id may be any value)
    if len(set(listed)) != len(listed) or listed != sorted(json.dumps(i) for i in ids):
        raise IntegrityError(f"archive-restore refused: {path}: the task ids its manifest lists are not the rows"
                             f" of its tasks table ({len(listed)} listed, {len(ids)} there)")
    ids_json = json.dumps(ids)
    written = []
    try:
        with db.write(conn):
            taken = [row[0] for row in conn.execute(f"SELECT id FROM tasks WHERE id IN {_IDS} ORDER BY id",
                                                    (ids_json,))]
            if taken and not force:
                named = ", ".join(taken[:10]) + (f" and {len(taken) - 10} more" if len(taken) > 10 else "")
                raise Refused(f"archive-restore refused: task ids already exist ({named}); pass --force to replace them")
            if taken:
                conn.execute(f"DELETE FROM tasks WHERE id IN {_IDS}", (json.dumps(taken),))
            conn.execute("PRAGMA defer_foreign_keys=ON")
            order = tables.parents_first(conn, list(blocks))
            loaded = {}
            for name in order:
                block = blocks[name]
                if name == "tasks" and "seq" in block["columns"]:
                    block = _free_seq_v1(conn, block)
                try:
                    tables.insert(conn, name, block)
                    # a plain INSERT lands every row or raises; the connection's change count
                    # would also count what triggers wrote (search indexes, the tag index)
                    loaded[name] = len(block["rows"])
                except sqlite3.IntegrityError as exc:
                    raise Refused(f"archive-restore refused: rows of {name} collide with this database ({exc})") \
                        from None
            reattached = 0
            for name, links in (doc.get("detached") or {}).items():
                column = _soft_links(conn).get(name)
                if column is None:
                    continue
                key = _key(conn, name)
                for row_id, task_id in links:
                    reattached += conn.execute(f"UPDATE {_quote(name)} SET {_quote(column)} = ? WHERE {key} = ?"
                                               f" AND {_quote(column)} IS NULL", (task_id, row_id)).rowcount
            _settle(conn, _entity(doc), ids, taken, loaded)
            for stored, (target, data) in sorted(files.items()):
                artifacts.atomic_write_bytes(target, data, home=conn.home)
                written.append(stored)
    except (sqlite3.Error, OverflowError) as exc:  # OverflowError: an integer SQLite cannot hold
        raise IntegrityError(f"archive-restore failed: {exc} (rolled back)") from None
    return {"restored": ids, "replaced": taken, "counts": loaded, "receipt_files_written": len(written),
            "reattached": reattached, "path": os.path.abspath(path), **provenance}


def _free_seq_v1(conn, block):
    """Keep each task's seq unless another task took it meanwhile (then let SQLite assign one,
    after the rows that keep theirs, as :func:`_free_seq` does)."""
    index = block["columns"].index("seq")
    kept, moved = [], []
    for row in block["rows"]:
        if row[index] is not None and conn.execute("SELECT 1 FROM tasks WHERE seq = ?", (row[index],)).fetchone():
            row = list(row)
            row[index] = None
            moved.append(row)
        else:
            kept.append(row)
    return {"columns": block["columns"], "rows": kept + moved}
