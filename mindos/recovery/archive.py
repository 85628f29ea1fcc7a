"""Archival: seal retired tasks into a file, then remove them; and bring them back.

``archive --before T`` takes every completed / failed / cancelled task last updated at or
before T, with the rows of every table holding a foreign key to it (dependencies,
heartbeats, receipts, notes, handoffs and whatever later domains add) and its receipt
files, into an ``autopilot-archive-v1`` document.

Design decisions
  * **Seal-then-destroy.**  Everything happens under one write lock: the candidates are
    read, the dependency guard runs, the archive file is written and fsynced, and only
    then are the rows deleted (child tables first, then the tasks) in the same
    transaction.  A crash before the commit leaves the database untouched (and a valid
    archive file); receipt files are removed only after the commit.
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
import sqlite3

from mindos.core import clock
from mindos.errors import IntegrityError, Refused
from mindos.recovery import artifacts, rowcheck, tables
from mindos.store import db, ledger

FORMAT = "autopilot-archive-v1"
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


def _gather(conn, ids, ids_json):
    blocks = {"tasks": tables.dump(conn, "tasks", f"id IN {_IDS}", (ids_json,))}
    for name, column in _child_tables(conn).items():
        blocks[name] = tables.dump(conn, name, f'"{column}" IN {_IDS}', (ids_json,))
    detached = {}
    for name, column in _soft_links(conn).items():
        key = "id" if "id" in tables.columns(conn, name) else "rowid"
        detached[name] = [[row[0], row[1]] for row in conn.execute(
            f'SELECT {key}, "{column}" FROM {name} WHERE "{column}" IN {_IDS} ORDER BY {key}', (ids_json,))]
    events = tables.dump(conn, "audit_events", f"entity_id IN {_IDS}", (ids_json,))
    paths = [row[0] for row in conn.execute(f"SELECT path FROM receipts WHERE task_id IN {_IDS}", (ids_json,))] \
        if "receipts" in blocks else []
    return blocks, detached, events, paths


def archive(conn, before, *, dry_run=False, out=None, force=False):
    """Archive terminal tasks updated at or before ``before`` (see the module docstring).

    Returns ``{"dry_run", "before", "task_ids", "counts", "path", "file_sha256"}``
    (``path`` only when written).  Audits ``tasks_archived`` with the counts.  An existing
    ``out`` is refused unless ``force``.
    """
    before = clock.normalize(before, "--before")
    if dry_run:
        conn.execute("BEGIN")
        try:
            ids = _candidates(conn, before)
            ids_json = json.dumps(ids)
            _guard(conn, ids_json)
            blocks, detached, events, paths = _gather(conn, ids, ids_json)
        finally:
            conn.execute("COMMIT")
        return {"dry_run": True, "before": before, "task_ids": ids,
                "counts": _counts(blocks, detached, events, artifacts.receipt_files(conn.home, paths))}
    removed_files = []
    with db.write(conn):
        ids = _candidates(conn, before)
        ids_json = json.dumps(ids)
        _guard(conn, ids_json)
        if not ids:
            return {"dry_run": False, "before": before, "task_ids": [], "counts": {}, "path": None}
        blocks, detached, events, paths = _gather(conn, ids, ids_json)
        refused = []
        files = artifacts.receipt_files(conn.home, paths, refused)
        counts = _counts(blocks, detached, events, files)
        body = {"before": before, "task_ids": ids, "tables": blocks, "audit_events": events,
                "receipt_files": files, "counts": counts, "schema_version": conn.execute(
                    "PRAGMA user_version").fetchone()[0], "created_at": clock.now_iso()}
        if detached:
            body["detached"] = detached
        path = os.path.abspath(out or artifacts.default_path(conn.home, "archive"))
        doc, digest = artifacts.seal_write(path, FORMAT, body, force=bool(force),  # sealed and fsynced
                                           home=conn.home)  # before any row goes
        for name, column in _soft_links(conn).items():
            conn.execute(f'UPDATE {name} SET "{column}" = NULL WHERE "{column}" IN {_IDS}', (ids_json,))
        for name in reversed(list(_child_tables(conn))):
            conn.execute(f'DELETE FROM {name} WHERE "{_child_tables(conn)[name]}" IN {_IDS}', (ids_json,))
        conn.execute(f"DELETE FROM tasks WHERE id IN {_IDS}", (ids_json,))
        ledger.append_event(conn, "archive", _entity(doc), "tasks_archived",
                            {"before": before, "tasks": len(ids), "counts": counts, "file_sha256": digest,
                             "path": path})
        removed_files = [artifacts.receipt_target(conn.home, stored) for stored in files]
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


def _entity(doc):
    return "archive-" + doc["seal"]["digest"][:16]


def _counts(blocks, detached, events, files):
    counts = {name: len(block["rows"]) for name, block in blocks.items()}
    counts["audit_events"] = len(events["rows"])
    counts["receipt_files"] = len(files)
    for name, links in detached.items():
        counts[f"{name}_detached"] = len(links)
    return counts


def load(path, home=None):
    """Read, verify and structurally check an archive; return ``(document, provenance)``
    (who signed it, see :func:`mindos.recovery.artifacts.read_signed`)."""
    doc, provenance = artifacts.read_signed(path, FORMAT, home)
    blocks = doc.get("tables")
    if not isinstance(blocks, dict) or "tasks" not in blocks or not isinstance(doc.get("task_ids"), list):
        raise IntegrityError(f"{path}: archive has no tasks")
    tables.check_blocks(path, blocks, "archive")
    return doc, provenance


def check(path, home=None):
    """Verify an archive file; return ``{"ok", "path", "before", "task_ids", "counts", "created_at",
    "trust", "key_id"}`` (``trust``: who signed it, as ``home`` sees it)."""
    doc, provenance = load(path, home)
    return {"ok": True, "path": os.path.abspath(path), "format": doc["format"], "before": doc.get("before"),
            "task_ids": doc["task_ids"], "counts": doc.get("counts"), "created_at": doc.get("created_at"),
            **provenance}


def restore(conn, path, *, force=False, trust_unsigned=False):
    """Re-import an archive: verified first (seal, then signature: one neither this home nor
    a trusted key signed is refused unless ``trust_unsigned``), every row checked against the
    write path's rules, task-id collisions refused unless ``force`` (which replaces them),
    rows reinserted parents first, receipt files recreated 0600, foreign keys re-checked
    (rolled back on failure).  Audits ``archive_restored``."""
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
                    block = _free_seq(conn, block)
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
                key = "id" if "id" in tables.columns(conn, name) else "rowid"
                for row_id, task_id in links:
                    reattached += conn.execute(f'UPDATE {name} SET "{column}" = ? WHERE {key} = ? AND "{column}" IS NULL',
                                               (task_id, row_id)).rowcount
            problems = tables.foreign_key_problems(conn)
            if problems:
                raise IntegrityError(f"archive-restore failed: {len(problems)} foreign-key violation(s), first in"
                                     f" {problems[0]['table']} (rolled back)")
            ledger.append_event(conn, "archive", _entity(doc), "archive_restored",
                                {"tasks": len(ids), "replaced": taken, "counts": loaded})
            for stored, (target, data) in sorted(files.items()):
                artifacts.atomic_write_bytes(target, data, home=conn.home)
                written.append(stored)
    except (sqlite3.Error, OverflowError) as exc:  # OverflowError: an integer SQLite cannot hold
        raise IntegrityError(f"archive-restore failed: {exc} (rolled back)") from None
    return {"restored": ids, "replaced": taken, "counts": loaded, "receipt_files_written": len(written),
            "reattached": reattached, "path": os.path.abspath(path), **provenance}


def _free_seq(conn, block):
    """Keep each task's seq unless another task took it meanwhile (then let SQLite assign one)."""
    index = block["columns"].index("seq")
    rows = []
    for row in block["rows"]:
        if row[index] is not None and conn.execute("SELECT 1 FROM tasks WHERE seq = ?", (row[index],)).fetchone():
            row = list(row)
            row[index] = None
        rows.append(row)
    return {"columns": block["columns"], "rows": rows}
