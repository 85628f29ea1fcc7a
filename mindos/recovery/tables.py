"""Every table, generically: enumerate, dump and reload rows without a hard-coded list.

Snapshots, restores, archives and work orders must carry tables other domains add later
(memories, facts, mood-poller state ...) without being edited, so the data tables are read
from ``sqlite_master`` and their foreign keys from ``PRAGMA foreign_key_list``.

Design decisions
  * **Data tables** are ordinary tables; FTS5 virtual tables and their shadow tables are
    derived (rebuilt from their content tables), and ``sqlite_sequence`` is carried
    separately so AUTOINCREMENT counters survive a round trip.
  * **Rows travel as lists** under a ``columns`` header, in the table's natural scan
    order (rowid or primary key), so a dump is deterministic.  BLOBs become
    ``{"$b64": ...}``; text, integers, reals and NULL are JSON as they are.
  * **Reloading drops the triggers for the duration** (in the same transaction) and
    rebuilds every external-content FTS index afterwards: trigger-maintained tables (the
    tag index) are restored from the dump itself, exactly, instead of being regenerated
    and then duplicated.
"""

import re
import sqlite3

from mindos.store import db, fts
from mindos.store.sql import quoted as _quote

_SHADOW_SUFFIXES = ("_data", "_idx", "_content", "_docsize", "_config")


def virtual_tables(conn):
    """``{name: create sql}`` of the virtual tables (FTS indexes) of the main schema."""
    return {row[0]: row[1] for row in conn.execute(
        "SELECT name, sql FROM main.sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'")}


def _regular_fts(conn):
    """FTS5 tables that store their own text (no ``content=`` option): data, not derived."""
    return {name for name, sql in virtual_tables(conn).items()
            if re.search(r"using\s+fts5", sql or "", re.I) and not re.search(r"content\s*=", sql or "", re.I)}


def data_tables(conn):
    """Names of the tables holding data, sorted: ordinary tables plus FTS5 tables that store
    their own text (no external-content FTS, shadow or sqlite_ tables)."""
    virtual = virtual_tables(conn)
    regular = _regular_fts(conn)
    names = []
    for (name,) in conn.execute("SELECT name FROM main.sqlite_master WHERE type = 'table' ORDER BY name"):
        if name in regular:
            names.append(name)
            continue
        if name.startswith("sqlite_") or name in virtual:
            continue
        if any(name.startswith(v + "_") and name[len(v):] in _SHADOW_SUFFIXES for v in virtual):
            continue
        names.append(name)
    return names


def fts_indexes(conn):
    """Names of the external-content FTS5 indexes (rebuildable from their content tables)."""
    return sorted(name for name, sql in virtual_tables(conn).items()
                  if re.search(r"using\s+fts5", sql or "", re.I) and re.search(r"content\s*=", sql or "", re.I))


def declared(conn, table):
    """Every column of ``table`` as declared, in order, derived ones included."""
    return [row[1] for row in conn.execute(f"PRAGMA main.table_info({_quote(table)})")]


def columns(conn, table):
    """The table's column names in declaration order (``rowid`` first for a self-contained
    FTS5 table, whose rowids other rows may point at), without the columns the schema
    derives by triggers (:data:`mindos.store.db.DERIVED_COLUMNS`): dumps, digests and
    documents never carry them, and a reload recounts them (see :func:`_replace`)."""
    derived = db.DERIVED_COLUMNS.get(table, ())
    names = [name for name in declared(conn, table) if name not in derived]
    if table in _regular_fts(conn):
        names.insert(0, "rowid")
    return names


def foreign_keys(conn, table):
    """``[(parent table, child column, parent column)]`` of ``table``'s foreign keys."""
    return [(row[2], row[3], row[4]) for row in conn.execute(f"PRAGMA main.foreign_key_list({_quote(table)})")]


def parents_first(conn, names):
    """``names`` ordered so every table comes after the tables its foreign keys point at."""
    pending = {name: {parent for parent, _, _ in foreign_keys(conn, name) if parent in names and parent != name}
               for name in names}
    ordered = []
    while pending:
        ready = sorted(name for name, parents in pending.items() if not parents & set(pending))
        if not ready:  # a cycle: keep the rest in name order (foreign keys are deferred anyway)
            ready = sorted(pending)
        for name in ready:
            ordered.append(name)
            del pending[name]
    return ordered


def children_of(conn, parent, column="id"):
    """``{table: child column}`` of every table with a foreign key to ``parent(column)``."""
    found = {}
    for name in data_tables(conn):
        for table, child, target in foreign_keys(conn, name):
            if table == parent and (target or column) == column and name != parent:
                found[name] = child
    return found


def encode(value):
    """A column value as JSON (BLOBs as ``{"$b64": ...}``)."""
    if isinstance(value, bytes):
        import base64  # lazy: only BLOB values need it, and the doctor's sweep loads this module each tick

        return {"$b64": base64.b64encode(value).decode("ascii")}
    return value


def decode(value):
    """The inverse of :func:`encode`."""
    if isinstance(value, dict):
        import base64  # lazy: see encode

        return base64.b64decode(value["$b64"].encode("ascii"), validate=True)
    return value


def _encode_row(row):
    return [encode(v) if isinstance(v, bytes) else v for v in row]


def decode_row(row):
    return [decode(v) if isinstance(v, dict) else v for v in row]


def dump(conn, table, where="", params=()):
    """``{"columns", "rows"}`` of ``table`` (optionally filtered by a ``where`` SQL fragment).

    Rows are plain tuples (JSON arrays) unless the table holds BLOBs, which one scan in
    SQL finds, so the common case pays no per-value Python work.
    """
    names = columns(conn, table)
    select = ", ".join(_quote(c) for c in names)
    sql = f"SELECT {select} FROM main.{_quote(table)}" + (f" WHERE {where}" if where else "")
    blob = " OR ".join(f"typeof({_quote(c)}) = 'blob'" for c in names)
    has_blob = conn.execute(f"SELECT 1 FROM main.{_quote(table)} WHERE ({blob})"
                            + (f" AND ({where})" if where else "") + " LIMIT 1", params).fetchone()
    rows = db.tuples(conn).execute(sql, params).fetchall()
    return {"columns": names, "rows": [_encode_row(row) for row in rows] if has_blob else rows}


def dump_all(conn):
    """Every data table (and ``sqlite_sequence`` when present); read inside one snapshot."""
    tables = {name: dump(conn, name) for name in data_tables(conn)}
    sequence = None
    if conn.execute("SELECT 1 FROM main.sqlite_master WHERE name = 'sqlite_sequence'").fetchone():
        sequence = [[row[0], row[1]] for row in conn.execute("SELECT name, seq FROM main.sqlite_sequence ORDER BY name")]
    return tables, sequence


def insert(conn, table, block, *, verb="INSERT"):
    """Insert a dumped ``block`` into ``table``; return the number of rows inserted."""
    names = block["columns"]
    marks = ", ".join("?" for _ in names)
    sql = f"{verb} INTO main.{_quote(table)}({', '.join(_quote(c) for c in names)}) VALUES ({marks})"
    before = conn.total_changes
    # fast path: no BLOB placeholders, so rows bind as they are; a savepoint undoes a
    # partial pass when one does turn up and the rows are bound decoded instead
    conn.execute("SAVEPOINT mindos_insert")
    try:
        conn.executemany(sql, block["rows"])
    except (sqlite3.InterfaceError, sqlite3.ProgrammingError):
        conn.execute("ROLLBACK TO mindos_insert")
        conn.executemany(sql, (decode_row(row) for row in block["rows"]))
    except BaseException:
        conn.execute("ROLLBACK TO mindos_insert")
        conn.execute("RELEASE mindos_insert")
        raise
    conn.execute("RELEASE mindos_insert")
    return conn.total_changes - before


def check_blocks(path, blocks, what):
    """Refuse (IntegrityError naming ``path``) a dumped table of ``blocks`` that is not
    ``{"columns": [...], "rows": [...]}`` with every row as long as its columns; ``what``
    names the artifact kind ("snapshot", "archive")."""
    for name, block in blocks.items():
        if (not isinstance(block, dict) or not isinstance(block.get("columns"), list)
                or not isinstance(block.get("rows"), list) or not rows_fit(block)):
            raise IntegrityError(f"{path}: {what} table {name} is malformed")


def rows_fit(block):
    """True when every row of a dumped block is a list as long as its columns (C-speed checks)."""
    rows, width = block["rows"], len(block["columns"])
    return not rows or (set(map(type, rows)) == {list} and set(map(len, rows)) == {width})


def row_count(conn, table):
    """Rows in ``table``."""
    return conn.execute(f"SELECT count(*) FROM main.{_quote(table)}").fetchone()[0]


def replace_all(conn, tables, sequence=None):
    """Replace every data table's rows with ``tables`` inside the caller's write transaction.

    Triggers are dropped and recreated around the reload (DDL is transactional), every
    FTS index is rebuilt from its content table, and foreign keys are checked before the
    caller commits.  Returns ``{table: rows loaded}``.
    """
    def load(name):
        return insert(conn, name, tables[name]) if name in tables else 0

    def reload_sequence():
        if sequence is not None:
            conn.execute("DELETE FROM main.sqlite_sequence")
            conn.executemany("INSERT INTO main.sqlite_sequence(name, seq) VALUES (?, ?)", sequence)

    return _replace(conn, load, reload_sequence)


def replace_all_from(conn, schema):
    """:func:`replace_all` from the attached database ``schema`` (a snapshot's database
    copy, see :func:`mindos.store.backup.attached`): every row moves with one
    ``INSERT ... SELECT`` per table inside SQLite, never through Python memory.  The copy's
    tables and columns must already match this database's (the caller checks)."""
    with_rowid = _rowid_tables(conn)

    def load(name):
        names = ", ".join(_quote(c) for c in columns(conn, name))
        order = " ORDER BY rowid" if name in with_rowid else ""  # the copy's scan order, kept
        return conn.execute(f"INSERT INTO main.{_quote(name)}({names}) SELECT {names}"
                            f" FROM {schema}.{_quote(name)}{order}").rowcount

    def reload_sequence():
        if conn.execute(f"SELECT 1 FROM {schema}.sqlite_master WHERE name = 'sqlite_sequence'").fetchone():
            conn.execute("DELETE FROM main.sqlite_sequence")
            conn.execute(f"INSERT INTO main.sqlite_sequence(name, seq) SELECT name, seq FROM {schema}.sqlite_sequence")

    return _replace(conn, load, reload_sequence)


def _rowid_tables(conn):
    """Names of the main schema's ordinary tables that have a rowid (not WITHOUT ROWID)."""
    return {name for name, sql in conn.execute(
        "SELECT name, sql FROM main.sqlite_master WHERE type = 'table'")
        if not re.search(r"\)\s*without\s+rowid\s*;?\s*$", sql or "", re.I)}


def _replace(conn, load, reload_sequence):
    if not conn.in_transaction:
        raise RuntimeError("replace_all needs an open write transaction (use mindos.store.db.write)")
    conn.execute("PRAGMA defer_foreign_keys=ON")
    triggers = [(name, sql) for name, sql in conn.execute(
        "SELECT name, sql FROM main.sqlite_master WHERE type = 'trigger' ORDER BY rowid")]
    for name, _ in triggers:
        conn.execute(f"DROP TRIGGER main.{_quote(name)}")
    # explicit indexes are rebuilt once after the load (a sorted build) instead of being
    # maintained row by row; unique ones re-validate their rows when recreated
    indexes = [(name, sql) for name, sql in conn.execute(
        "SELECT name, sql FROM main.sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY rowid")]
    for name, _ in indexes:
        conn.execute(f"DROP INDEX main.{_quote(name)}")
    order = parents_first(conn, data_tables(conn))
    for name in reversed(order):
        conn.execute(f"DELETE FROM main.{_quote(name)}")
    loaded = {name: load(name) for name in order}
    if conn.execute("SELECT 1 FROM main.sqlite_master WHERE name = 'sqlite_sequence'").fetchone():
        reload_sequence()
    for _, sql in indexes:
        conn.execute(sql)
    for _, sql in triggers:
        conn.execute(sql)
    present = declared(conn, "tasks")
    for column, (recount, _, _) in db.DERIVED_STATEMENTS.items():
        if column in present:  # loaded as its default: counted again from the edges
            conn.execute(recount)
    for index in fts_indexes(conn):
        for statement in fts.REBUILD.format(table=f"main.{_quote(index)}", name=_quote(index)).split(";"):
            conn.execute(statement)
    return loaded


DIGEST_CHUNK_ROWS = 4096


def digest_table(conn, table, *, chunk=DIGEST_CHUNK_ROWS, visit=None):
    """``(rows, sha256 hex)`` of ``table`` read a chunk at a time (memory bounded by ``chunk``).

    The digest is SHA-256 over the table's rows in natural order, ``chunk`` rows at a time,
    each chunk as the canonical JSON of its rows (lists of column values, BLOBs as
    ``{"$b64": ...}``) followed by a newline.  ``visit(columns, rows)`` (optional) sees each
    chunk too, so a caller can check the rows in the same pass."""
    from mindos.core.canonical import canonical_json, sha256  # lazy: digests only

    names = columns(conn, table)
    digest, count = sha256()(), 0
    cursor = db.tuples(conn).execute(f"SELECT {', '.join(_quote(c) for c in names)} FROM main.{_quote(table)}")
    while True:
        rows = cursor.fetchmany(chunk)
        if not rows:
            break
        try:
            text = canonical_json(rows)
        except TypeError:  # BLOB values: the same encoding as a dump
            rows = [_encode_row(row) for row in rows]
            text = canonical_json(rows)
        except ValueError:  # an infinite REAL: spelled as Python's JSON does (still deterministic)
            import json  # lazy: as above

            text = json.dumps(rows, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        digest.update(text.encode("utf-8", "surrogatepass") + b"\n")
        count += len(rows)
        if visit is not None:
            visit(names, rows)
    return count, digest.hexdigest()


def foreign_key_problems(conn, limit=100):
    """``[{"table", "rowid", "parent"}]`` from ``PRAGMA foreign_key_check`` (at most ``limit``)."""
    problems = []
    for row in conn.execute("PRAGMA main.foreign_key_check"):
        problems.append({"table": row[0], "rowid": row[1], "parent": row[2]})
        if len(problems) >= limit:
            break
    return problems
