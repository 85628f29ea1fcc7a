"""Whole-database copies for snapshots and restores: the store's side of a streaming backup.

Only the store opens database files, so the three things a streaming snapshot needs from
SQLite live here:

  * :func:`copy_to` makes a consistent copy of a live database with ``VACUUM INTO``: it
    runs inside one read transaction, so writers keep going (WAL) and the copy is exactly
    the committed state at one instant, compacted, in rollback-journal mode;
  * :func:`open_copy` opens such a copy (read-only, or migrated forward to this code's
    schema in its own scratch home the way any home is);
  * :func:`attached` attaches a copy to a live connection for the duration of a
    ``with`` block, so a restore moves rows with ``INSERT ... SELECT`` inside SQLite and
    never through Python memory;
  * :func:`extract` writes a new database file holding chosen rows of a live one (an
    archive's carrier), again moved inside SQLite, a page cache at a time.
"""

import os
import sqlite3
from contextlib import contextmanager

from mindos.errors import IntegrityError, Refused
from mindos.store import db

ALIAS = "snapshot_copy"


def copy_to(conn, path):
    """Write a consistent, compacted copy of ``conn``'s main database to the new file ``path``.

    ``path`` must not exist.  Raises Refused when SQLite cannot write it (disk full,
    permissions), with nothing left behind."""
    if conn.in_transaction:
        raise RuntimeError("copy_to runs its own read transaction (call it outside one)")
    with unmapped(conn):
        try:
            conn.execute("VACUUM main INTO ?", (os.fspath(path),))
        except sqlite3.Error as exc:
            try:
                os.unlink(path)
            except OSError:
                pass
            raise Refused(f"cannot copy the database to {path}: {exc}", code="io_error") from None
    return path


@contextmanager
def unmapped(conn):
    """Read ``conn``'s database without memory-mapping it for the block: a whole-database
    pass (a copy, a reload) would otherwise map up to ``db.MMAP_BYTES`` of it into the
    process, and the memory a backup needs must not grow with the home."""
    conn.execute("PRAGMA mmap_size=0")
    try:
        yield conn
    finally:
        conn.execute(f"PRAGMA mmap_size={db.MMAP_BYTES}")


def open_copy(path, *, upgrade=False):
    """Open the database copy ``path`` (a file named ``state.db`` in a scratch directory).

    Read-only (``immutable``: a copy nobody else writes) unless ``upgrade``, which opens
    it as a home of its own, migrated forward to this code's schema like any home.
    Raises IntegrityError when the file is not a usable SQLite database."""
    if upgrade:
        if os.path.basename(path) != "state.db":
            raise ValueError("an upgraded copy must be named state.db in its own directory")
        return db.connect(os.path.dirname(path), create=False)
    try:
        conn = sqlite3.connect(f"file:{db._uri_path(path)}?mode=ro&immutable=1", uri=True, isolation_level=None,
                               factory=db.Connection)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise IntegrityError(f"the database copy is not a usable SQLite database: {exc}") from None
    conn.home = None
    conn.path = path
    conn.immutable = True
    conn.readonly = "a snapshot's database copy"
    conn.row_factory = sqlite3.Row
    return conn


EXTRACT_ALIAS = "live_home"


def extract(conn, path, parts, *, version):
    """Write the new database file ``path`` holding chosen rows of ``conn``'s database; return
    ``{table: rows written}``.

    ``parts``: ``[(table, [(expression, column)], source table, where, params)]``: each
    table of the new file is created with the given column names (no declared types, so
    every value keeps its stored type) and filled with ``INSERT ... SELECT`` from
    ``source`` (its expressions, filtered by the ``where`` fragment) of the live database.
    The file's ``user_version`` is ``version``.

    The rows move inside SQLite through a second connection that attaches the live
    database read-only, so it may run while ``conn`` holds the write lock (nothing else can
    commit meanwhile, so it reads exactly the state ``conn`` sees, as long as ``conn`` has
    written nothing yet).  Raises Refused when the file cannot be written (disk full),
    with nothing left behind."""
    from mindos.store.sql import quoted  # lazy: archives only

    if os.path.lexists(path):
        raise RuntimeError("extract writes a new file")
    out = None
    try:
        out = sqlite3.connect(f"file:{db._uri_path(path)}", uri=True, isolation_level=None)
        out.execute("PRAGMA journal_mode=OFF")  # a scratch file: the caller fsyncs what it keeps
        out.execute("PRAGMA synchronous=OFF")
        out.execute(f"ATTACH DATABASE ? AS {EXTRACT_ALIAS}", (f"file:{db._uri_path(conn.path)}?mode=ro",))
        out.execute("BEGIN")
        written = {}
        for table, selected, source, where, params in parts:
            names = ", ".join(quoted(column) for _, column in selected)
            out.execute(f"CREATE TABLE main.{quoted(table)} ({names})")
            select = ", ".join(expression for expression, _ in selected)
            written[table] = out.execute(
                f"INSERT INTO main.{quoted(table)} ({names}) SELECT {select} FROM {EXTRACT_ALIAS}.{quoted(source)}"
                + (f" WHERE {where}" if where else ""), params).rowcount
        out.execute(f"PRAGMA main.user_version={int(version)}")
        out.execute("COMMIT")
        out.execute(f"DETACH DATABASE {EXTRACT_ALIAS}")
    except sqlite3.Error as exc:
        if out is not None:
            out.close()
            out = None
        try:
            os.unlink(path)
        except OSError:
            pass
        raise Refused(f"cannot write {path}: {exc}", code="io_error") from None
    finally:
        if out is not None:
            out.close()
    return written


def schema_version(conn):
    """``PRAGMA user_version`` of a connection (a copy's own schema version)."""
    return db._user_version(conn)


@contextmanager
def attached(conn, path, alias=ALIAS):
    """Attach the copy ``path`` read-only to ``conn`` as ``alias`` for the block."""
    if conn.in_transaction:
        raise RuntimeError("attach copies outside a transaction")
    try:
        conn.execute(f"ATTACH DATABASE ? AS {alias}", (f"file:{db._uri_path(path)}?mode=ro",))
    except sqlite3.Error as exc:
        raise IntegrityError(f"cannot attach the database copy: {exc}") from None
    try:
        yield alias
    finally:
        if conn.in_transaction:  # never expected: the caller's write has ended either way
            conn.execute("ROLLBACK")
        conn.execute(f"DETACH DATABASE {alias}")
