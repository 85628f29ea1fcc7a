"""Migration rollback (installer stage three): ``migrate-rollback RESULT`` undoes exactly what
one ``migrate-import --apply`` added, from the journal sealed inside its
``autopilot-migration-result-v1`` document (:mod:`mindos.migration.importer` writes it; a
plan step's journal comes from :mod:`mindos.migration.steps`).

Design decisions
  * **Only what the journal names.**  The result document is read back byte-exact (any
    changed byte refused); rows are deleted only while their content hash still matches the
    journal, merged events only while their id and hash do, and a file only while it still
    matches its sealed sha256 (a changed one is withheld and named).
  * **Newer local truth is never destroyed silently.**  Drifted rows and local rows hanging
    on an imported task are listed; removing them needs ``--force`` (audited as forced).
  * **One continuous chain afterwards.**  The events after the first removed one are
    renumbered and re-hashed into a gapless run, ``migration_rollback_applied`` is appended,
    and the chain is verified before the transaction commits.
  * **Dry run first**: without ``--apply`` the report says what would go and writes nothing.
"""

import os

from mindos.core import canonical
from mindos.errors import IntegrityError, Refused
from mindos.migration import documents, inventory
from mindos.migration.importer import (NAMED_MAX, RESULT_FORMAT, column_names, primary_key, row_hash,
                                      table_names)
from mindos.store import db, ledger


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
    for table in sorted(table_names(conn)):
        if table in ("tasks", "task_tags", "heartbeats", "audit_events") or "_fts" in table:
            continue
        columns = column_names(conn, table)
        refs = [c for c in ("task_id", "depends_on", "task") if c in columns]
        if not refs:
            continue
        key = primary_key(conn, table) or columns
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
    doc = documents.read(result_path, RESULT_FORMAT, "result document")
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
        columns = journal.get("columns", {}).get(table) or column_names(conn, table)
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
            same = not os.path.islink(path) and inventory.file_digest(path)[0] == item["sha256"]
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

