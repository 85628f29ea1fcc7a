"""The one module that owns the SQLite database.

Everything that touches ``<home>/state.db`` goes through here: opening connections (WAL,
foreign keys, busy timeout, ``sqlite3.Row``), building a fresh database from
``schema.sql``, running numbered migrations, write transactions, FTS5 query helpers and
the hash-chained audit append.

Design decisions
  * Connections run in autocommit mode (``isolation_level=None``) and every write goes
    through :func:`write`, which issues ``BEGIN IMMEDIATE`` so the write lock is taken up
    front: two agents never both read, decide, and then collide on upgrade to a writer.
  * A current database does exactly one schema query per connection
    (``PRAGMA user_version``); building or migrating happens only when it is behind.
  * Every audit event is appended inside the caller's transaction
    (:func:`append_event`), so a change and its event commit together or not at all.
    Refusals that must survive a rollback go through :func:`append_refusal`.
"""

import os
import sqlite3

from mindos.store import ledger
from mindos.errors import IntegrityError, MindosError

BUSY_TIMEOUT_SECONDS = 30.0
# schema.sql has one source: the repository's top level.  A checkout reads it there; a built
# wheel carries a copy inside this package (setup.py's build step puts it there), because
# installed packages cannot reach outside themselves.  No symlink: a checkout cloned with
# core.symlinks=false must work too.
_HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_CANDIDATES = (os.path.join(_HERE, "schema.sql"), os.path.join(os.path.dirname(os.path.dirname(_HERE)), "schema.sql"))


def schema_file():
    """The schema.sql this code builds databases from (the packaged copy, else the checkout's)."""
    for candidate in SCHEMA_CANDIDATES:
        if os.path.isfile(candidate):
            return candidate
    raise IntegrityError("schema.sql not found: looked in " + " and ".join(SCHEMA_CANDIDATES))


class Connection(sqlite3.Connection):
    """A sqlite3 connection that knows which home it belongs to."""

    home = None
    path = None
    _pending_refusals = None
    _fts_tables = None
    immutable = False


def database_path(home):
    """Return the database file of a home."""
    return os.path.join(home, "state.db")


def receipts_dir(home):
    """Return the receipts directory of a home."""
    return os.path.join(home, "receipts")


def connect(home=None):
    """Open (creating or upgrading if needed) the database of ``home`` and return it.

    ``home`` defaults to the home resolved by :mod:`mindos.home`.
    """
    if home is None:
        from mindos.core.home import home_dir  # lazy: loaded only on the path that needs it

        home = home_dir()
    path = database_path(home)
    if not os.path.exists(path):
        if os.path.exists(home) and not os.path.isdir(home):
            raise MindosError(f"home {home} exists and is not a directory")
        try:
            os.makedirs(receipts_dir(home), mode=0o700, exist_ok=True)
        except OSError as exc:
            raise MindosError(f"cannot create home {home}: {exc.strerror}") from None
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, factory=Connection)
    except sqlite3.Error as exc:
        raise MindosError(f"cannot open database {path}: {exc}") from None
    conn.home = home
    conn.path = path
    conn.row_factory = sqlite3.Row
    try:
        conn.execute("PRAGMA foreign_keys=ON")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != latest_version():
            _bring_current(conn, version)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise IntegrityError(f"cannot use database {path}: {exc}") from None
    except BaseException:
        conn.close()
        raise
    return conn


# ---------------------------------------------------------------------------------------
# Schema and migrations


def latest_version():
    """The schema version this code writes."""
    from mindos.store.migrations import MIGRATIONS  # lazy: loaded only on the path that needs it

    return len(MIGRATIONS)


def fts5_supported():
    """True when this SQLite build has FTS5 (checked only when building or migrating)."""
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        probe.close()


def split_statements(script, *, with_fts=True):
    """Split an SQL script into complete statements, dropping ``-- @fts5`` blocks if asked."""
    statements, buffer, in_fts = [], [], False
    for line in script.splitlines():
        marker = line.strip()
        if marker == "-- @fts5":
            in_fts = True
            continue
        if marker == "-- @end":
            in_fts = False
            continue
        if in_fts and not with_fts:
            continue
        if not buffer and (not marker or marker.startswith("--")):
            continue
        buffer.append(line)
        text = "\n".join(buffer)
        if sqlite3.complete_statement(text):
            statements.append(text.strip())
            buffer = []
    if buffer and "\n".join(buffer).strip():
        raise IntegrityError("schema script ends with an incomplete statement")
    return statements


def schema_statements(with_fts=True):
    """The statements of ``schema.sql``."""
    with open(schema_file(), encoding="utf-8") as handle:
        return split_statements(handle.read(), with_fts=with_fts)


def _user_version(conn):
    return conn.execute("PRAGMA user_version").fetchone()[0]


def _bring_current(conn, version):
    latest = latest_version()
    if version > latest:
        raise IntegrityError(
            f"database schema version {version} is newer than this MindOS supports ({latest}); upgrade MindOS"
        )
    from mindos.store.migrations import MIGRATIONS  # lazy: loaded only on the path that needs it

    with_fts = fts5_supported()
    if version == 0:
        conn.execute("PRAGMA journal_mode=WAL")
        with write(conn):
            if _user_version(conn) == 0:  # re-checked under the write lock: another process may have won
                tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
                if tables:
                    raise IntegrityError(f"{conn.path} has tables but no MindOS schema version; refusing to guess")
                for statement in schema_statements(with_fts):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version={latest}")
        return
    conn.execute("PRAGMA journal_mode=WAL")  # older homes may predate WAL; it persists once set
    for number in range(version + 1, latest + 1):
        with write(conn):
            if _user_version(conn) != number - 1:
                continue
            for statement in split_statements(MIGRATIONS[number - 1](), with_fts=with_fts):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={number}")


# ---------------------------------------------------------------------------------------
# Transactions


class write:
    """``with write(conn):`` runs the block in one ``BEGIN IMMEDIATE`` transaction.

    Nested use joins the outer transaction.  On an exception the transaction rolls back and
    any refusal events recorded with :func:`append_refusal` are committed on their own.
    """

    def __init__(self, conn):
        self.conn = conn
        self.outer = False

    def __enter__(self):
        if not self.conn.in_transaction:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise MindosError(f"database busy: {exc}") from None
            self.outer = True
            self.conn._pending_refusals = []
        return self

    def __exit__(self, exc_type, exc, tb):
        if not self.outer:
            return False
        conn = self.conn
        pending, conn._pending_refusals = conn._pending_refusals or [], None
        if exc_type is None:
            for event in pending:
                ledger.append_event(conn, *event)
            conn.execute("COMMIT")
            return False
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if pending:
            # The refusal events get a transaction of their own, after the rollback, so the
            # rollback cannot erase them.  Should that write fail too (the lock stayed busy
            # past the timeout), the caller still gets the original refusal, not this error.
            try:
                with write(conn):
                    for event in pending:
                        ledger.append_event(conn, *event)
            except (MindosError, sqlite3.Error):
                pass
        return False


def connect_readonly(home, *, live=False):
    """Open ``home``'s database read-only, for inspection that must never mutate it.

    No schema build or migration, no WAL checkpoint on close: the database file stays
    byte-identical.  When no ``-wal`` file exists (no connection is open, every commit is
    in the main file) the file is opened ``immutable`` so not even the ``-wal``/``-shm``
    side files are created; otherwise (or with ``live``) ``mode=ro`` reads through the live
    WAL.  ``conn.immutable`` says which.  Raises NotFound when the home has no database.
    """
    from mindos.errors import NotFound  # lazy: only inspectors need it

    path = database_path(home)
    if not os.path.isfile(path):
        raise NotFound(f"no MindOS database at {path}")
    try:
        immutable = not live and not os.path.exists(path + "-wal")
        flags = "mode=ro&immutable=1" if immutable else "mode=ro"
        conn = sqlite3.connect(f"file:{_uri_path(path)}?{flags}", uri=True, timeout=BUSY_TIMEOUT_SECONDS,
                               isolation_level=None, factory=Connection)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise IntegrityError(f"cannot open database {path} read-only: {exc}") from None
    conn.home = home
    conn.path = path
    conn.immutable = immutable
    conn.row_factory = sqlite3.Row
    return conn


def _uri_path(path):
    from urllib.parse import quote  # lazy: only read-only opens build URIs

    return quote(os.path.abspath(path))
