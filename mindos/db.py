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
import re
import sqlite3

from mindos import clock
from mindos.errors import IntegrityError, InvalidInput, MindosError
from mindos.files import canonical_json, sha256_hex

BUSY_TIMEOUT_SECONDS = 30.0
GENESIS_HASH = "0" * 64
_SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema.sql")


class Connection(sqlite3.Connection):
    """A sqlite3 connection that knows which home it belongs to."""

    home = None
    path = None
    _pending_refusals = None
    _fts_tables = None


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
        from mindos.home import home_dir

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
    from mindos.migrations import MIGRATIONS

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
    with open(_SCHEMA_FILE, encoding="utf-8") as handle:
        return split_statements(handle.read(), with_fts=with_fts)


def _user_version(conn):
    return conn.execute("PRAGMA user_version").fetchone()[0]


def _bring_current(conn, version):
    latest = latest_version()
    if version > latest:
        raise IntegrityError(
            f"database schema version {version} is newer than this MindOS supports ({latest}); upgrade MindOS"
        )
    from mindos.migrations import MIGRATIONS

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


def has_fts(conn, table):
    """True when the FTS5 index ``table`` exists in this database."""
    if conn._fts_tables is None:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name LIKE '%\\_fts' ESCAPE '\\'")
        conn._fts_tables = {row[0] for row in rows}
    return table in conn._fts_tables


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
                append_event(conn, *event)
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
                        append_event(conn, *event)
            except (MindosError, sqlite3.Error):
                pass
        return False


# ---------------------------------------------------------------------------------------
# The audit chain


def event_hash(event_id, prev_hash, entity_type, entity_id, action, payload_json, created_at):
    """SHA-256 over the event's canonical form, chained to the previous event's hash.

    The fields are joined with the unit separator (0x1f).  None of them can contain it:
    ids and actions are validated tokens, payload_json is JSON (which escapes control
    characters) and created_at is a normalized timestamp.
    """
    text = "\x1f".join((str(event_id), prev_hash, entity_type, entity_id, action, payload_json, created_at))
    return sha256_hex(text)


def append_event(conn, entity_type, entity_id, action, payload=None):
    """Append one event to the audit chain inside the open write transaction; return its id."""
    if not conn.in_transaction:
        raise RuntimeError("append_event needs an open write transaction (use db.write)")
    last = conn.execute("SELECT id, hash FROM audit_events ORDER BY id DESC LIMIT 1").fetchone()
    prev_id, prev_hash = (last[0], last[1]) if last else (0, GENESIS_HASH)
    event_id = prev_id + 1
    payload_json = canonical_json(payload if payload is not None else {})
    created_at = clock.now_iso()
    digest = event_hash(event_id, prev_hash, entity_type, entity_id, action, payload_json, created_at)
    conn.execute(
        "INSERT INTO audit_events(id, entity_type, entity_id, action, payload_json, created_at, prev_hash, hash)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (event_id, entity_type, entity_id, action, payload_json, created_at, prev_hash, digest),
    )
    return event_id


def append_refusal(conn, entity_type, entity_id, action, payload=None):
    """Record a refusal event that lands whether the surrounding transaction commits or not."""
    if conn._pending_refusals is None:
        raise RuntimeError("append_refusal needs an open write transaction (use db.write)")
    conn._pending_refusals.append((entity_type, entity_id, action, payload))


# ---------------------------------------------------------------------------------------
# Query helpers


# Letters and digits only: FTS5's unicode61 tokenizer treats '_' as a separator, so a
# quoted "rate_limit" token would silently match nothing rather than "rate limit".
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def fts_tokens(text):
    """The word tokens of ``text`` (what FTS5's unicode61 tokenizer would index)."""
    return _TOKEN.findall(text or "")


def fts_query(text, operator="AND"):
    """Quote every token of user text into a safe FTS5 MATCH expression.

    Returns None for tokenless text.  Operators, quotes, ``*``, ``NEAR(`` and column filters
    in the input become plain tokens, so a query can never change its own meaning.
    """
    tokens = fts_tokens(text)
    if not tokens:
        return None
    return f" {operator} ".join('"' + token.replace('"', '""') + '"' for token in tokens)


def fts_match_counts(conn, table, expressions, cap):
    """How many rows of FTS index ``table`` match each MATCH expression, each counted up to
    ``cap``, in one statement: the cheap rarity probe behind token selection.

    ``table`` is one of this schema's FTS tables (never user text); the expressions come
    from :func:`fts_query`.  Returns a list of counts aligned with ``expressions``.
    """
    if table not in ("tasks_fts", "notes_fts", "handoffs_fts"):
        raise ValueError(f"not an FTS index of this schema: {table!r}")
    if not expressions:
        return []
    probe = f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)"
    sql = " UNION ALL ".join(f"SELECT {i}, ({probe})" for i in range(len(expressions)))
    params = []
    for expression in expressions:
        params.extend((expression, cap))
    counts = dict(conn.execute(sql, params).fetchall())
    return [counts[i] for i in range(len(expressions))]


def like_pattern(text):
    """A ``LIKE ... ESCAPE '\\'`` pattern matching ``text`` as a plain substring."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def check_json_text(text, flag):
    """Parse JSON text or raise InvalidInput naming ``flag``."""
    import json

    def refuse_constant(name):  # NaN / Infinity are not JSON and cannot be sealed canonically
        raise ValueError(f"{name} is not valid JSON")

    try:
        return json.loads(text, parse_constant=refuse_constant)
    except (ValueError, TypeError) as exc:
        raise InvalidInput(f"invalid {flag}: malformed JSON ({exc.__class__.__name__}: {str(exc)[:80]})") from None
    except RecursionError:
        raise InvalidInput(f"invalid {flag}: malformed JSON (nested too deeply)") from None
