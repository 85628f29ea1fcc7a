"""Portable work orders: one task's full execution state, sealed, moved between homes.

``export-task`` writes an ``autopilot-workorder-v1`` document: the task row, its dependency
edges in both directions, the rows of every table holding a foreign key to it (notes,
handoffs, receipts, heartbeat, and later domains' tables), its receipt files and, when the
home has a fact graph, every fact provenance-linked to it (validity windows untouched).
``import-task`` verifies the seal before anything else (``--force`` never bypasses it) and
merges.

Design decisions
  * **Row identity across homes.**  Integer ids (notes, handoffs) are local to a home, so
    imported rows get fresh ids and their supersession links are remapped; such a row
    counts as already present when a local row of the task matches it on every other
    column.  Rows with natural keys (receipt ids, fact ids, dependency edges, heartbeats)
    are matched by key.
  * **Idempotent merge.**  Nothing new to insert and an unchanged task row: the import
    deduplicates (audited ``workorder_deduplicated``).  Otherwise an existing task is
    refused without ``force``; with it, only rows not present are inserted and local rows
    are kept.
  * **Lease sanitization.**  The previous lease holder does not exist here: claimed /
    running / waiting_for_agent arrive as queued, and no task arrives leased.
  * **Privacy on both ends.**  The secret guard scans every text of the document at export
    and again at import (refuse by default, ``redact`` or ``allow_secret``, audited by kind).
"""

import os
import sqlite3

from mindos.core import canonical, clock, secrets, validate
from mindos.errors import IntegrityError, InvalidInput, Refused
from mindos.recovery import artifacts, rowcheck, tables
from mindos.store import db, ledger
from mindos.work import rows

FORMAT = "autopilot-workorder-v1"
LEASED_STATUSES = ("claimed", "running", "waiting_for_agent")
LINK_COLUMNS = ("supersedes", "superseded_by", "superseded_at")
FACTS = ("facts", "task_id")


class _DryRun(Exception):
    """Carries a dry run's report out of the rolled-back transaction."""

    def __init__(self, report):
        super().__init__("dry run")
        self.report = report


def _children(conn):
    children = tables.children_of(conn, "tasks", "id")
    children.pop(FACTS[0], None)
    children.pop("dependencies", None)
    return {name: children[name] for name in tables.parents_first(conn, list(children))}


def _has_facts(conn):
    return FACTS[0] in tables.data_tables(conn) and FACTS[1] in tables.columns(conn, FACTS[0])


def _strings(doc):
    """Every text a work order carries (row values and receipt file texts)."""
    found = []
    blocks = list(doc["tables"].values()) + ([doc["facts"]] if isinstance(doc.get("facts"), dict) else [])
    for block in blocks:
        for row in block["rows"]:
            found.extend(v for v in row if isinstance(v, str))
    found.extend(entry["text"] for entry in (doc.get("receipt_files") or {}).values())
    return found


def _redact_doc(doc):
    """Redact every text of a work order body in place; receipt hashes follow their files."""
    blocks = list(doc["tables"].values()) + ([doc["facts"]] if isinstance(doc.get("facts"), dict) else [])
    for block in blocks:
        block["rows"] = [[secrets.redact(v)[0] if isinstance(v, str) else v for v in row] for row in block["rows"]]
    new_hashes = {}
    for stored, entry in (doc.get("receipt_files") or {}).items():
        text = secrets.redact(entry["text"])[0]
        digest = canonical.sha256_hex(text.encode("utf-8"))
        if digest != entry["sha256"]:
            new_hashes[stored] = digest
        entry.update(text=text, sha256=digest)
    receipts = doc["tables"].get("receipts")
    if receipts and new_hashes:
        path_i, hash_i = receipts["columns"].index("path"), receipts["columns"].index("file_hash")
        for row in receipts["rows"]:
            if row[path_i] in new_hashes:
                row[hash_i] = new_hashes[row[path_i]]


def _guard(conn, task_id, doc, redact, allow_secret):
    """Apply the secret guard to a whole document (inside ``db.write``); return the outcome."""
    from mindos.store import guard  # lazy: only transfers with text pay for the detector

    kinds = sorted({kind for text in _strings(doc) for kind in secrets.scan(text)})
    if not kinds:
        return None
    # the guard sees one field per document: decisions are audited by kind, never by value
    _, outcome = guard.guard(conn, "task", task_id, {"workorder": "\n".join(_strings(doc))},
                             redact=redact, allow_secret=allow_secret)
    if outcome and outcome["secret_action"] == "redacted":
        _redact_doc(doc)
    return outcome


def _one_override(redact, allow_secret):
    if redact and allow_secret:
        raise InvalidInput("pass at most one of --redact and --allow-secret")


def export_task(conn, task_id, *, out, redact=False, allow_secret=False, force=False):
    """Seal task ``task_id`` into a work order at ``out``; return the export report.  An
    existing ``out`` is refused unless ``force``."""
    task_id = validate.identifier(task_id, "task id")
    _one_override(redact, allow_secret)
    if not out:
        raise Refused("export-task needs --out")
    with db.write(conn):
        rows.require_task(conn, task_id)
        body = {"task_id": task_id, "schema_version": conn.execute("PRAGMA user_version").fetchone()[0],
                "tables": {"tasks": tables.dump(conn, "tasks", "id = ?", (task_id,))}}
        body["tables"]["dependencies"] = tables.dump(conn, "dependencies", "task_id = ? OR depends_on = ?",
                                                     (task_id, task_id))
        for name, column in _children(conn).items():
            body["tables"][name] = tables.dump(conn, name, f'"{column}" = ?', (task_id,))
        if _has_facts(conn):
            body["facts"] = tables.dump(conn, FACTS[0], f'"{FACTS[1]}" = ?', (task_id,))
        paths = [row[0] for row in conn.execute("SELECT path FROM receipts WHERE task_id = ?", (task_id,))]
        refused = []
        body["receipt_files"] = artifacts.receipt_files(conn.home, paths, refused)
        outcome = _guard(conn, task_id, body, redact, allow_secret)
        body["created_at"] = clock.now_iso()
        doc, digest = artifacts.seal_write(out, FORMAT, body, force=bool(force), home=conn.home)
        ledger.append_event(conn, "task", task_id, "workorder_exported",
                            {"content_digest": artifacts.content_digest(doc), "file_sha256": digest})
    report = {"task_id": task_id, "path": os.path.abspath(out), "file_sha256": digest,
              "content_digest": artifacts.content_digest(doc),
              "counts": {name: len(block["rows"]) for name, block in body["tables"].items()}}
    report["counts"]["receipt_files"] = len(body["receipt_files"])
    if refused:  # planted links or special files: left out, and said so
        report["receipt_files_refused"] = refused
    if "facts" in body:
        report["counts"]["facts"] = len(body["facts"]["rows"])
    if outcome:
        report.update(outcome)
    return report


def load(path, home=None):
    """Read, verify and structurally check a work order; return ``(document, provenance)``
    (who signed it, see :func:`mindos.recovery.artifacts.read_signed`)."""
    doc, provenance = artifacts.read_signed(path, FORMAT, home)
    blocks = doc.get("tables")
    if (not isinstance(blocks, dict) or not isinstance(blocks.get("tasks"), dict) or len(blocks["tasks"].get("rows") or []) != 1
            or not isinstance(doc.get("task_id"), str)):
        raise IntegrityError(f"{path}: work order has no task")
    checked = list(blocks.items()) + ([("facts", doc["facts"])] if "facts" in doc else [])
    for name, block in checked:
        if (not isinstance(block, dict) or not isinstance(block.get("columns"), list)
                or not isinstance(block.get("rows"), list)
                or not tables.rows_fit(block)):
            raise IntegrityError(f"{path}: work order table {name} is malformed")
    if dict(zip(blocks["tasks"]["columns"], blocks["tasks"]["rows"][0])).get("id") != doc["task_id"]:
        raise IntegrityError(f"{path}: work order task row does not match its task_id")
    return doc, provenance


def _integer_pk(conn, table):
    info = list(conn.execute(f'PRAGMA table_info("{table}")'))
    pks = [row for row in info if row[5]]
    if len(pks) == 1 and (pks[0][2] or "").upper() == "INTEGER":
        return pks[0][1]
    return None


def _pk_columns(conn, table):
    return [row[1] for row in sorted((r for r in conn.execute(f'PRAGMA table_info("{table}")') if r[5]),
                                     key=lambda r: r[5])]


def _exists(conn, table, columns, values, select="1"):
    clauses = " AND ".join(f'"{c}" IS ?' for c in columns)
    return conn.execute(f'SELECT {select} FROM "{table}" WHERE {clauses} LIMIT 1', values).fetchone()


def _sanitize(task):
    sanitized = task["status"] in LEASED_STATUSES or bool(task.get("lease_owner"))
    if task["status"] in LEASED_STATUSES:
        task["status"] = "queued"
    task["lease_owner"] = ""
    task["lease_expires_at"] = None
    return sanitized


def import_task(conn, path, *, dry_run=False, force=False, redact=False, allow_secret=False, trust_unsigned=False):
    """Merge a work order into this home (see the module docstring); return the report.

    ``{"task_id", "dry_run", "deduplicated", "created", "inserted": {table: n},
    "skipped_deps", "lease_sanitized", "receipt_files_written", "trust", "key_id", ...}``.
    A work order neither this home nor a trusted key signed is refused unless
    ``trust_unsigned``; every row must pass the write path's rules either way.
    """
    _one_override(redact, allow_secret)
    doc, provenance = load(path, conn.home)
    artifacts.require_trusted(provenance, path, "import-task", trust_unsigned)
    blocks = dict(doc["tables"])
    if isinstance(doc.get("facts"), dict):
        blocks["facts"] = doc["facts"]
    rowcheck.check_blocks(blocks, action="import-task", limit=rowcheck.artifact_time(doc))
    try:
        return {**_merge(conn, doc, path, dry_run=dry_run, force=force, redact=redact, allow_secret=allow_secret),
                **provenance}
    except _DryRun as done:
        return {**done.report, **provenance}
    except sqlite3.IntegrityError as exc:
        raise Refused(f"import-task refused: rows collide with this home ({exc}); nothing was imported") from None
    except (sqlite3.Error, OverflowError) as exc:  # OverflowError: an integer SQLite cannot hold
        raise IntegrityError(f"import-task failed: {exc} (rolled back)") from None


def _merge(conn, doc, path, *, dry_run, force, redact, allow_secret):
    task_id = doc["task_id"]
    present = set(tables.data_tables(conn))
    for name, block in doc["tables"].items():
        if name not in present or block["columns"] != tables.columns(conn, name):
            raise Refused(f"import-task refused: table {name} of the work order does not match this home")
    files = artifacts.check_receipt_files(conn.home, doc.get("receipt_files") or {})
    digest = artifacts.content_digest(doc)
    report = {"task_id": task_id, "dry_run": bool(dry_run), "content_digest": digest, "deduplicated": False,
              "created": False, "inserted": {}, "skipped_deps": [], "lease_sanitized": False,
              "receipt_files_written": 0}
    written = []
    try:
        with db.write(conn):
            if dry_run:
                kinds = sorted({k for text in _strings(doc) for k in secrets.scan(text)})
                if kinds:
                    report["secret_kinds"] = kinds
                    report["secret_action"] = "redacted" if redact else "allowed" if allow_secret else "refused"
                    if redact:
                        _redact_doc(doc)
            else:
                outcome = _guard(conn, task_id, doc, redact, allow_secret)
                if outcome:
                    report.update(outcome)
                files = artifacts.check_receipt_files(conn.home, doc.get("receipt_files") or {})
            task_block = doc["tables"]["tasks"]
            task = dict(zip(task_block["columns"], task_block["rows"][0]))
            report["lease_sanitized"] = _sanitize(task)
            local = conn.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
            changed = False
            if local is None:
                task.pop("seq", None)
                cols = list(task)
                conn.execute(f"INSERT INTO tasks({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                             [task[c] for c in cols])
                report["created"] = True
            else:
                mine = dict(local)
                _sanitize(mine)
                changed = any(mine.get(c) != task.get(c) for c in task if c != "seq")
            inserted = _insert_children(conn, doc, task_id, report)
            if local is not None and (changed or any(inserted.values())):
                if not force:
                    raise Refused(f"import-task refused: task '{task_id}' already exists here with different"
                                  " content; pass --force to merge (local rows are kept, only new rows are added)")
            report["inserted"] = inserted
            if local is not None and not changed and not any(inserted.values()):
                report["deduplicated"] = True
                if dry_run:
                    raise _DryRun(report)
                ledger.append_event(conn, "task", task_id, "workorder_deduplicated",
                                    {"content_digest": digest})
                return report
            if dry_run:
                report["would_write_receipt_files"] = sum(1 for target, _ in files.values()
                                                          if not os.path.exists(target))
                raise _DryRun(report)
            problems = tables.foreign_key_problems(conn)
            if problems:
                raise IntegrityError(f"import-task failed: {len(problems)} foreign-key violation(s), first in"
                                     f" {problems[0]['table']} (rolled back)")
            ledger.append_event(conn, "task", task_id, "workorder_imported", {
                "content_digest": digest, "created": report["created"], "merged": local is not None,
                "inserted": inserted, "skipped_deps": len(report["skipped_deps"]),
                "lease_sanitized": report["lease_sanitized"]})
            # receipt files only where absent; written before the commit and removed again
            # if the commit fails, like a receipt of this home
            for stored, (target, data) in sorted(files.items()):
                if os.path.exists(target):
                    continue
                artifacts.atomic_write_bytes(target, data, home=conn.home)
                written.append(target)
    except BaseException:
        for target in written:
            try:
                os.unlink(target)
            except OSError:
                pass
        raise
    report["receipt_files_written"] = len(written)
    return report


def _insert_children(conn, doc, task_id, report):
    inserted = {}
    deps = doc["tables"].get("dependencies")
    if deps:
        count = 0
        for row in deps["rows"]:
            edge = dict(zip(deps["columns"], row))
            missing = [end for end in (edge["task_id"], edge["depends_on"])
                       if conn.execute("SELECT 1 FROM tasks WHERE id = ?", (end,)).fetchone() is None]
            if missing:
                report["skipped_deps"].append({"task_id": edge["task_id"], "depends_on": edge["depends_on"],
                                               "missing": missing})
                continue
            if _exists(conn, "dependencies", ["task_id", "depends_on"], [edge["task_id"], edge["depends_on"]]):
                continue
            tables.insert(conn, "dependencies", {"columns": deps["columns"], "rows": [row]})
            count += 1
        inserted["dependencies"] = count
    blocks = [(name, doc["tables"][name]) for name in tables.parents_first(conn, list(doc["tables"]))
              if name not in ("tasks", "dependencies")]
    if isinstance(doc.get("facts"), dict):
        if _has_facts(conn) and doc["facts"]["columns"] == tables.columns(conn, FACTS[0]):
            blocks.append((FACTS[0], doc["facts"]))
        else:
            report["facts_skipped"] = len(doc["facts"]["rows"])
    for name, block in blocks:
        inserted[name] = _insert_block(conn, name, block)
    return inserted


def _insert_block(conn, name, block):
    """Insert the rows of ``block`` not already present; integer ids are reassigned."""
    columns = block["columns"]
    int_pk = _integer_pk(conn, name)
    if int_pk is None:
        keys = _pk_columns(conn, name) or columns
        count = 0
        for row in block["rows"]:
            values = dict(zip(columns, row))
            if _exists(conn, name, keys, [values[k] for k in keys]):
                continue
            tables.insert(conn, name, {"columns": columns, "rows": [row]})
            count += 1
        return count
    links = [c for c in LINK_COLUMNS if c in columns]
    match_cols = [c for c in columns if c != int_pk and c not in links]
    id_map, new_rows = {}, []
    for row in block["rows"]:
        values = dict(zip(columns, tables.decode_row(row)))
        found = _exists(conn, name, match_cols, [values[c] for c in match_cols], select=f'"{int_pk}"')
        if found:
            id_map[values[int_pk]] = found[0]
            continue
        insert_cols = [c for c in columns if c != int_pk]
        # links hold a placeholder (the negated old id) until every row has its new id, so
        # a superseded row never looks live in between (one live handoff per task)
        placeholder = {c: (-values[c] if isinstance(values[c], int) else values[c]) for c in links
                       if c in ("supersedes", "superseded_by")}
        cursor = conn.execute(f'INSERT INTO "{name}"({", ".join(insert_cols)}) VALUES'
                              f' ({", ".join("?" for _ in insert_cols)})',
                              [placeholder.get(c, values[c]) for c in insert_cols])
        id_map[values[int_pk]] = cursor.lastrowid
        new_rows.append(values)
    for values in new_rows:
        updates = {c: id_map.get(values[c]) for c in ("supersedes", "superseded_by") if c in links and values[c]}
        if updates:
            sets = ", ".join(f"{c} = ?" for c in updates)
            conn.execute(f'UPDATE "{name}" SET {sets} WHERE {int_pk} = ?',
                         [*updates.values(), id_map[values[int_pk]]])
    return len(new_rows)

