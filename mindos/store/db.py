"""Connections and transactions: the one way into the SQLite database.

Everything that touches ``<home>/state.db`` opens it here: connections (WAL, foreign keys,
busy timeout, ``sqlite3.Row``), building a fresh database from ``schema.sql``, bringing an
older one current (the numbered steps are :mod:`mindos.store.migrations`), write and read
transactions.  The rest of the store builds on it: the hash-chained audit append
(:mod:`mindos.store.ledger`), the full-text indexes (:mod:`mindos.store.fts`), the write
guard (:mod:`mindos.store.guard`), request-id replay (:mod:`mindos.store.replay`) and
deferred audit events (:mod:`mindos.store.deferred`).

Design decisions
  * Connections run in autocommit mode (``isolation_level=None``) and every write goes
    through :func:`write`, which issues ``BEGIN IMMEDIATE`` so the write lock is taken up
    front: two agents never both read, decide, and then collide on upgrade to a writer.
  * A current database does exactly one schema query per connection
    (``PRAGMA user_version``); building or migrating happens only when it is behind.
  * Every audit event is appended inside the caller's transaction
    (:func:`mindos.store.ledger.append_event`), so a change and its event commit together or
    not at all.  Refusals that must survive a rollback go through
    :func:`mindos.store.ledger.append_refusal`.
  * **The database file is never created or repaired implicitly.**  Only a connection with
    ``create=True`` (``init``, ``onboard``) makes one, and it builds the whole schema in a
    private temporary file that is linked into place complete: ``state.db`` never exists
    empty because of MindOS.  So a 0-byte or schema-less ``state.db`` is someone else's
    (a truncation, a stray ``touch``) and every connection refuses it, ``init`` included,
    before writing a byte; a file that is not SQLite at all is refused too.
  * **A read-only home can still be read.**  When the first read fails because the home or
    its database is not writable, the connection is reopened read-only (``immutable`` when
    no ``-wal`` exists, else ``mode=ro``) and marked ``readonly``; :class:`write` then
    refuses with a clear message instead of SQLite's.  A writable home pays nothing for
    this: the check runs only after a failure.
"""

import os
import sqlite3
import sys

from mindos.errors import IntegrityError, MindosError, NotFound
from mindos.store.sql import TERMINAL_SQL

BUSY_TIMEOUT_SECONDS = 30.0
# Pages are read through a memory map rather than a read() and a copy each.  A fleet sweep
# revisits pages all over the file and gains most; single calls that walk FTS indexes gain
# too, a single write loses a little (figures in bench/NOTES.md).  The map is
# address space only (SQLite maps no more than the file holds); pages past it are read as
# before.
MMAP_BYTES = 1 << 30
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
    home_rule = None
    immutable = False
    readonly = None  # why writes are refused (a read-only home), or None
    _lock_fd = None
    _lock_turn = None  # (Turns, ticket) while this connection holds its process's turn at the writer lock
    _turns = None  # the Turns of its writer lock, found on first use
    _pending_refusals = None
    _fts_tables = None
    # A callable run before each outer write begins and again just before it commits; what
    # it raises aborts the write (rolled back, nothing committed).  The MCP server sets it
    # so a request its client cancelled never commits.
    commit_gate = None

    def close(self):
        """Close the connection and its writer-lock descriptor."""
        if self._lock_fd is not None:
            fd, self._lock_fd = self._lock_fd, None
            os.close(fd)
        if self._lock_turn is not None:  # closed while writing: the next thread's turn
            _leave(self)
        super().close()


def database_path(home):
    """Return the database file of a home."""
    return os.path.join(home, "state.db")


def receipts_dir(home):
    """Return the receipts directory of a home."""
    return os.path.join(home, "receipts")


def connect(home=None, *, create=True):
    """Open (creating or upgrading if needed) the database of ``home`` and return it.

    ``home`` defaults to the home resolved by :mod:`mindos.core.home`.  With
    ``create=False`` a home without a database is refused (NotFound, code ``no_database``)
    naming the home and the rule that chose it, so a typo'd path or a cron job with another
    ``HOME`` never silently starts a new, empty home; only ``init`` creates one.
    """
    rule = "given"
    if home is None:
        from mindos.core.home import resolve  # lazy: loaded only on the path that needs it

        home, rule = resolve()
    path = database_path(home)
    if not os.path.exists(path):
        if not create:
            raise NotFound(
                f"no MindOS database in home {home} (chosen by {describe_rule(rule)}); run 'init' to create it"
                " there, or set HERMES_AUTOPILOT_HOME or MINDOS_HOME to the right home", code="no_database")
        if os.path.exists(home) and not os.path.isdir(home):
            raise MindosError(f"home {home} exists and is not a directory")
        _create_home(home, path)
    conn = _open(path, home, rule)
    try:
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.OperationalError:
            why = _not_writable(home, path)
            if why is None:
                raise
            conn.close()
            conn = _open(path, home, rule, readonly=why)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != latest_version():
            _bring_current(conn, version)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise IntegrityError(_unusable(path, exc)) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _open(path, home, rule, readonly=None):
    """A :class:`Connection` to ``path`` (read-only and marked so when ``readonly`` says why)."""
    try:
        if readonly is None:
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, factory=Connection)
        else:
            conn = _connect_ro(path)
            conn.readonly = readonly
    except sqlite3.Error as exc:
        raise MindosError(_special(path) or f"cannot open database {path}: {exc}") from None
    conn.home = home
    conn.path = path
    conn.home_rule = rule
    conn.row_factory = sqlite3.Row
    try:
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise IntegrityError(_unusable(path, exc)) from None
    return conn


def _not_writable(home, path):
    """Why the home cannot be written (its directory or database file is read-only), or None."""
    if not os.access(home, os.W_OK):
        return f"home {home} is read-only"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"database {path} is read-only"
    return None


def _special(path):
    """The refusal for a ``state.db`` that is not a regular file (a FIFO, a device), or None."""
    import stat  # lazy: failure paths only

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    from mindos.core import files  # lazy: failure paths only

    return f"cannot use database {path}: it is a {files.kind_of(mode)}, not a regular file"


def _unusable(path, exc):
    """The one-line refusal for a ``state.db`` that is not a usable SQLite database."""
    if _special(path):
        return _special(path)
    if "not a database" in str(exc) or "malformed" in str(exc):
        return (f"cannot use database {path}: it is not a valid SQLite database ({exc}); MindOS never repairs or"
                " replaces it: restore it from a snapshot (ops.py snapshot-restore into a new home) or move it aside")
    return f"cannot use database {path}: {exc}"


def describe_rule(rule):
    """The words an error uses for the rule that chose a home."""
    return {
        "HERMES_AUTOPILOT_HOME": "HERMES_AUTOPILOT_HOME",
        "MINDOS_HOME": "MINDOS_HOME",
        "selector": "the home selector file (AUTOPILOT_HOME_SELECTOR or ~/.hermes/autopilot-home-selector.json)",
        "default": "the default, as no HERMES_AUTOPILOT_HOME, MINDOS_HOME or selector file is set",
    }.get(rule, "the caller")


def _create_home(home, path):
    """Create the home (0700), its receipts directory (0700) and a complete 0600 database.

    The schema is built in a private ``.state.db.<pid>.<hex>.tmp`` and linked into place
    only when complete, so ``state.db`` never exists empty (an empty one is refused by
    every connection, see :func:`connect`); if another process linked its own first, ours is
    dropped.  SQLite gives the -wal and -shm files the database file's mode, so creating the
    file ourselves (O_EXCL, 0600) keeps all three private whatever the umask.  A system
    directory (``/etc``, ``/usr``, the user's ``HOME`` itself, ...) is never made a home.
    """
    from mindos.core import files  # lazy: only init creates a home

    files.check_new_tree(home, what="home", allow=lambda names: True)  # a system directory never
    if os.path.isdir(home):  # a killed init's private database (and its side files), once stale
        for name in files.sweep_stale_temps(home):
            for side in (".lock", "-wal", "-shm", "-journal"):
                if os.path.lexists(os.path.join(home, name + side)):
                    os.unlink(os.path.join(home, name + side))
    temp = os.path.join(home, f".state.db.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        created = not os.path.isdir(home)
        os.makedirs(receipts_dir(home), mode=0o700, exist_ok=True)
        if created:
            os.chmod(home, 0o700)
        os.chmod(receipts_dir(home), 0o700)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        os.close(fd)
    except OSError as exc:
        raise MindosError(f"cannot create home {home}: {exc.strerror}") from None
    try:
        conn = sqlite3.connect(temp, isolation_level=None, factory=Connection)
        conn.home, conn.path = home, temp
        try:
            _bring_current(conn, 0, fresh=True)
        finally:
            conn.close()
            for side in (temp + ".lock", temp + "-wal", temp + "-shm"):
                if os.path.exists(side):
                    os.unlink(side)
        from mindos.core import atomic  # lazy: as files above

        try:
            atomic.link_new(temp, path)
        except FileExistsError:  # another process created it first: theirs is complete too
            pass
    except OSError as exc:
        raise MindosError(f"cannot create home {home}: {exc.strerror}") from None
    except sqlite3.Error as exc:
        raise MindosError(f"cannot create home {home}: {exc}") from None
    finally:
        if os.path.exists(temp):
            os.unlink(temp)


# ---------------------------------------------------------------------------------------
# Schema and migrations


# The schema version this code writes: the number of numbered migrations (a test holds it to
# len(migrations.MIGRATIONS)), kept here so a call on a current home never loads them.
SCHEMA_VERSION = 25


# Columns the schema derives from other rows and keeps by triggers (never part of what a
# command prints, a document carries or a digest covers): tasks.unmet_deps counts a task's
# prerequisites that are not completed (a missing one included), so ``next`` reads the ready
# queue from its own partial indexes.  RECOUNT_UNMET sets it again from the edges (after a
# reload that ran without triggers, or as the doctor's repair); UNMET_DRIFT counts the rows
# whose stored count differs.
DERIVED_COLUMNS = {"tasks": ("unmet_deps", "dependent_rank")}
_UNMET_COUNT = ("(SELECT count(*) FROM dependencies d LEFT JOIN tasks p INDEXED BY idx_tasks_id_status ON p.id = d.depends_on"
                " WHERE d.task_id = tasks.id AND p.status IS NOT 'completed')")


def _derived(column, count, rows=""):
    """``(recount, drift, drift in a window)`` of derived task column ``column`` counted by
    ``count`` over the task rows meeting ``rows`` (SQL, or "" for all): the statement that sets
    it again where it differs, the rows ``(id, stored, counted)`` where it differs, and the
    same over the tasks with rowids in (?, ?] (a window of the nanny's integrity turns)."""
    kept = f"{rows} AND " if rows else ""

    def drifted(window):
        return f"SELECT id, {column}, {count} FROM tasks WHERE {window}{kept}{column} <> {count} ORDER BY id"

    return (f"UPDATE tasks SET {column} = {count} WHERE {kept}{column} <> {count}",
            drifted(""), drifted("rowid > ? AND rowid <= ? AND "))


RECOUNT_UNMET, UNMET_DRIFT, UNMET_DRIFT_IN = _derived("unmet_deps", _UNMET_COUNT)
# tasks.dependent_rank (migration 23): the best priority (0 for P0 .. 3 for P3, 4 for none) among
# an open task's open dependents, reached directly or through open ones; ``next`` reads it to
# tell whether a queued task inherits a better tier.  Kept for open tasks only (a finished
# task's value is recounted when it reopens).
_OPEN = f"NOT IN {TERMINAL_SQL}"  # the terminal statuses as mindos.store.sql spells them
_RANK_COUNT = ("(WITH RECURSIVE up(id, r) AS (SELECT tasks.id, 4 UNION SELECT d.task_id, substr(m.priority, 2) + 0"
               " FROM up JOIN dependencies d ON d.depends_on = up.id JOIN tasks m INDEXED BY idx_tasks_id_status"
               f" ON m.id = d.task_id WHERE +m.status {_OPEN}) SELECT min(r) FROM up)")
_, _, RANK_DRIFT_IN = _derived("dependent_rank", _RANK_COUNT, f"status {_OPEN}")
# The same column over the whole table: walking up from each open task, as _RANK_COUNT does,
# costs a walk of its open dependents per task (about 44 s of CPU for the doctor at 1M tasks);
# instead every (prerequisite, priority) pair is found once, going down the edges from each open
# task through open ones, and each task's best is read from those (18 s there).  The values
# are the same: a task reaches priority r exactly when some open task of priority r depends on
# it directly or through open tasks.  (A window of rows keeps the walk: it reads only its tasks.)
_RANK_BEST = ("WITH RECURSIVE reach(id, r) AS (SELECT d.depends_on, substr(m.priority, 2) + 0 FROM dependencies d"
              f" JOIN tasks m INDEXED BY idx_tasks_id_status ON m.id = d.task_id WHERE +m.status {_OPEN}"
              " UNION SELECT d.depends_on, reach.r FROM reach JOIN tasks m INDEXED BY idx_tasks_id_status"
              f" ON m.id = reach.id JOIN dependencies d ON d.task_id = reach.id WHERE +m.status {_OPEN}),"
              " best(id, r) AS MATERIALIZED (SELECT id, min(r) FROM reach GROUP BY id) ")
# each open task with its stored value and its counted one (``best`` joined once per task)
_RANKED = (f"(SELECT t.id, t.dependent_rank AS stored, min(coalesce(best.r, 4), 4) AS r FROM tasks t"
           f" LEFT JOIN best ON best.id = t.id WHERE t.status {_OPEN})")
RECOUNT_RANK = (f"{_RANK_BEST}UPDATE tasks SET dependent_rank = counted.r FROM {_RANKED}"
                " AS counted WHERE counted.id = tasks.id AND tasks.dependent_rank <> counted.r")
RANK_DRIFT = f"{_RANK_BEST}SELECT id, stored, r FROM {_RANKED} WHERE stored <> r ORDER BY id"
# each derived task column's (recount, drift, drift in a window), in DERIVED_COLUMNS order
DERIVED_STATEMENTS = {"unmet_deps": (RECOUNT_UNMET, UNMET_DRIFT, UNMET_DRIFT_IN),
                      "dependent_rank": (RECOUNT_RANK, RANK_DRIFT, RANK_DRIFT_IN)}


def latest_version():
    """The schema version this code writes."""
    return SCHEMA_VERSION


def _sqlite_accepts(statement):
    """Whether a scratch in-memory database of this SQLite build runs ``statement``."""
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute(statement)
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        probe.close()


def fts5_supported():
    """True when this SQLite build has FTS5 (checked only when building or migrating)."""
    return _sqlite_accepts("CREATE VIRTUAL TABLE probe USING fts5(x)")


def trigram_supported():
    """True when this SQLite build's FTS5 has the trigram tokenizer (SQLite 3.34 and later)."""
    return fts5_supported() and _sqlite_accepts("CREATE VIRTUAL TABLE probe USING fts5(x, tokenize='trigram')")


def split_statements(script, *, with_fts=True, with_trigram=None):
    """Split an SQL script into complete statements, dropping ``-- @fts5`` blocks if asked.
    A ``-- @fts5 trigram`` block needs the trigram tokenizer too: dropped without FTS5, and
    on a build without that tokenizer (``with_trigram``; None: probed when met)."""
    statements, buffer, in_fts = [], [], False
    for line in script.splitlines():
        marker = line.strip()
        if marker in ("-- @fts5", "-- @fts5 trigram"):
            in_fts = marker
            if marker != "-- @fts5" and with_fts and with_trigram is None:
                with_trigram = trigram_supported()
            continue
        if marker == "-- @end":
            in_fts = False
            continue
        if in_fts and not with_fts:
            continue
        if in_fts == "-- @fts5 trigram" and not with_trigram:
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


def _empty_database(conn):
    """The refusal for a ``state.db`` with no MindOS schema (MindOS never makes one)."""
    size = os.path.getsize(conn.path) if os.path.exists(conn.path) else 0
    tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
    what = "is empty (0 bytes)" if size == 0 else (
        "has tables but no MindOS schema version" if tables else "is an SQLite file without a MindOS schema")
    return IntegrityError(
        f"database {conn.path} {what}: MindOS never creates or repairs a database in place, so it is refused"
        " (nothing was written); restore it from a snapshot or checkpointed backup, or move it aside and run"
        " 'init' to start a new, empty home", code="empty_database")


def _user_version(conn):
    return conn.execute("PRAGMA user_version").fetchone()[0]


def _bring_current(conn, version, *, fresh=False):
    latest = latest_version()
    if version > latest:
        raise IntegrityError(
            f"database schema version {version} is newer than this MindOS supports ({latest}); upgrade MindOS"
        )
    from mindos.store.migrations import MIGRATIONS  # lazy: loaded only on the path that needs it

    if version == 0 and not fresh:  # only _create_home builds a schema, in its own new file
        raise _empty_database(conn)
    if conn.readonly:
        raise MindosError(f"{conn.readonly} and its database is schema version {version}, not {latest}: it cannot"
                          " be migrated read-only; make the home writable once (any command migrates it)",
                          code="read_only")
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


LOCK_TIMEOUT_SECONDS = BUSY_TIMEOUT_SECONDS
DEFERRED_DIR = "deferred"  # audit events a time-bounded caller could not write (mindos.store.deferred)


class _LockTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _LockTimeout


def lock_path(conn):
    """The home's writer lock file, beside the database."""
    return conn.path + ".lock"


class Turns:
    """The threads of this process that want one home's writer lock, in arrival order.

    The file lock orders processes; inside one process the writers (the MCP server's
    workers, each on its own connection) would otherwise meet only at the file lock, where
    a waiting thread polls: the thread that has just committed takes the lock again at once
    while the ones that queued earlier sleep between polls, so a few batches wait behind
    many.  Here each thread takes a ticket; only the first in line goes for the file lock,
    and letting it go hands the turn to the next ticket at once (a condition variable, so
    no wakeup is lost: the waiters test the queue under its lock)."""

    __slots__ = ("lock", "cond", "queue", "owner")

    def __init__(self):
        import collections
        import threading  # loaded already: only a process with threads queues (see _acquire)

        self.lock = threading.Lock()  # guards queue and owner; taken directly on the fast path
        self.cond = threading.Condition(self.lock)
        self.queue = collections.deque()  # tickets; queue[0] holds, or is taking, the file lock
        self.owner = None  # the thread ident of queue[0]


_TURNS = {}  # lock file path -> Turns


def turns(conn):
    """The :class:`Turns` of ``conn``'s writer lock in this process."""
    found = conn._turns
    if found is None:
        path = lock_path(conn)
        found = _TURNS.get(path)
        if found is None:
            found = _TURNS.setdefault(path, Turns())
        conn._turns = found
    return found


def _acquire(conn, timeout=None):
    """Take the home's writer lock: first this thread's turn among the process's writers
    (:class:`Turns`: first come, first served, handed over the moment the holder lets go),
    then a blocking OS file lock, so waiting processes sleep in the kernel and one wakes the
    moment the holder lets go.

    SQLite's own busy handler polls with growing sleeps (up to 100 ms), so under 32
    concurrent writers a newcomer often won while an old waiter slept: waits of many
    seconds and, at the 30 s timeout, "database is locked" failures, for transactions of
    milliseconds.  The file lock makes the wait prompt; SQLite's busy timeout stays as the
    backstop for writers that do not take the lock.  The whole wait (turn and file lock) is
    bounded by ``timeout`` (default LOCK_TIMEOUT_SECONDS; the file lock by a SIGALRM timer
    in the main thread, polling elsewhere).  A thread that already holds the turn through
    another connection does not queue behind itself: only the file lock decides.
    A process that never loaded ``threading`` has no other thread to queue behind (an agent's
    CLI call): it goes straight for the file lock, without paying that import.
    """
    if "threading" not in sys.modules:
        _flock(conn, timeout)
        return
    import threading  # loaded already (see above)

    line = turns(conn)
    me = threading.get_ident()
    if line.owner == me:
        _flock(conn, timeout)
        return
    ticket, asked = object(), None
    try:
        with line.lock:
            line.queue.append(ticket)
            if line.queue[0] is not ticket:
                import time

                asked = LOCK_TIMEOUT_SECONDS if timeout is None else max(0.0, float(timeout))
                deadline = time.monotonic() + asked
                while line.queue[0] is not ticket:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise _busy(asked)
                    line.cond.wait(left)
                timeout = max(0.0, deadline - time.monotonic())  # what is left of it for the file lock
            line.owner = me
            conn._lock_turn = (line, ticket)
        _flock(conn, timeout, asked=asked)
    except BaseException:  # past the deadline, interrupted anywhere from the queue on, or no file lock
        _give_up(conn, line, ticket)
        raise


def _give_up(conn, line, ticket):
    """Take ``ticket`` out of ``line`` wherever it stands (an interrupt may land at any point of
    :func:`_acquire`); when it held the turn, the next ticket's thread is woken."""
    if conn._lock_turn is not None and conn._lock_turn[1] is ticket:
        conn._lock_turn = None
    with line.lock:
        queue = line.queue
        if ticket not in queue:
            return
        first = queue[0] is ticket
        queue.remove(ticket)
        if first:
            line.owner = None
            if queue:
                line.cond.notify_all()


def _leave(conn):
    """Give up ``conn``'s turn at the writer lock: the next ticket's thread is woken."""
    line, ticket = conn._lock_turn
    _give_up(conn, line, ticket)


def _busy(wait):
    """The refusal of a writer that waited ``wait`` seconds (the whole wait it was given) for the lock."""
    return MindosError(f"database busy: another writer held the write lock for {wait:.3g} s; nothing was changed,"
                       " retry", code="busy")


def _in_main_thread():
    """True in the main thread; a process that never loaded ``threading`` has no other."""
    if "threading" not in sys.modules:
        return True
    import threading  # loaded already

    return threading.current_thread() is threading.main_thread()


def _flock(conn, timeout, *, asked=None):
    """Take the writer lock file itself, waiting at most ``timeout`` seconds (None: the default);
    ``asked``: the whole wait the caller was given, when part of it went before (the refusal
    names it, not what was left)."""
    import fcntl  # lazy: the write path only

    fd = _lock_fd(conn)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    import signal  # lazy: only a contended lock needs it

    timeout = LOCK_TIMEOUT_SECONDS if timeout is None else max(0.0, float(timeout))
    if timeout <= 0:
        pass
    elif _in_main_thread() and hasattr(signal, "setitimer"):
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return
        except _LockTimeout:
            pass
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    else:
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                time.sleep(0.002)
    raise _busy(timeout if asked is None else asked)


def _lock_fd(conn):
    """The connection's descriptor of the writer lock file, opened on first use."""
    if conn._lock_fd is None:
        try:
            fd = os.open(lock_path(conn), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC, 0o600)
        except PermissionError:  # another user's home, or one made read-only
            raise MindosError(f"the write lock {lock_path(conn)} is not writable by this user: reads work, writes are"
                              " refused; nothing was changed", code="read_only") from None
        conn._lock_fd = fd
    return conn._lock_fd


def lock_is_free(conn):
    """True when no writer holds the home's writer lock at this moment (taken and let go at
    once).  Only a hint, for work worth doing before a wait (the lock may be taken the next
    moment): False whenever it cannot tell."""
    import fcntl  # lazy: the write path only

    try:
        fd = _lock_fd(conn)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (OSError, MindosError):
        return False
    fcntl.flock(fd, fcntl.LOCK_UN)
    return True


def _release(conn):
    if conn._lock_fd is not None:
        import fcntl  # lazy: already loaded by _acquire

        fcntl.flock(conn._lock_fd, fcntl.LOCK_UN)
    if conn._lock_turn is not None:  # the file first, then the turn: the next thread finds the file free
        _leave(conn)


class write:
    """``with write(conn):`` runs the block in one ``BEGIN IMMEDIATE`` transaction, holding the
    home's writer lock (:func:`_acquire`) around it.

    Nested use joins the outer transaction.  On an exception the transaction rolls back and
    any refusal events recorded with :func:`mindos.store.ledger.append_refusal` are committed on their own.
    ``timeout`` (seconds) bounds the wait for the lock below the default (a session-start
    hook that must answer in time); past it MindosError ``busy`` is raised.  The first
    write of any command also lands the audit events a bounded caller had to defer
    (:mod:`mindos.store.deferred`): one ``stat`` when there are none.
    """

    def __init__(self, conn, timeout=None):
        self.conn = conn
        self.outer = False
        self.timeout = timeout
        self.replayed = None

    def __enter__(self):
        if not self.conn.in_transaction:
            if self.conn.readonly:
                raise MindosError(f"{self.conn.readonly}: reads work, writes are refused; nothing was changed",
                                  code="read_only")
            if self.conn.commit_gate is not None:
                self.conn.commit_gate()
            # Parse the schema now, outside the lock: a fresh connection's first statement
            # reads every CREATE in it, which would otherwise be paid
            # while every other writer waits.
            self.conn.execute("SELECT 1 FROM sqlite_master LIMIT 0")
            _acquire(self.conn, self.timeout)
            try:
                if self.timeout is not None:  # SQLite's own wait (a writer without the file lock) is bounded too
                    self.conn.execute(f"PRAGMA busy_timeout = {int(max(self.timeout, 0.05) * 1000)}")
                try:
                    self.conn.execute("BEGIN IMMEDIATE")
                finally:
                    if self.timeout is not None:
                        self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
            except sqlite3.OperationalError as exc:
                _release(self.conn)
                why = _not_writable(self.conn.home, self.conn.path) if "readonly" in str(exc) else None
                if why:
                    raise MindosError(f"{why}: reads work, writes are refused; nothing was changed",
                                      code="read_only") from None
                raise MindosError(f"database busy: {exc}", code="busy") from None
            except BaseException:
                _release(self.conn)
                raise
            self.outer = True
            self.conn._pending_refusals = []
            if self.conn.home is not None and os.path.isdir(os.path.join(self.conn.home, DEFERRED_DIR)):
                from mindos.store import deferred  # lazy: only a home with deferred events

                # in a savepoint: a replay that fails leaves the files for the next write and
                # never costs this command its own write
                self.conn.execute("SAVEPOINT deferred_replay")
                try:
                    self.replayed = deferred.replay(self.conn)
                    self.conn.execute("RELEASE deferred_replay")
                except (sqlite3.Error, OSError, ValueError):
                    self.replayed = None
                    self.conn.execute("ROLLBACK TO deferred_replay")
                    self.conn.execute("RELEASE deferred_replay")
        return self

    def __exit__(self, exc_type, exc, tb):
        if not self.outer:
            return False
        conn = self.conn
        pending, conn._pending_refusals = conn._pending_refusals or [], None
        if pending:
            from mindos.store import ledger  # lazy: only a write holding refusals appends here; reads never load it
        try:
            if exc_type is None:
                if conn.commit_gate is not None:
                    conn.commit_gate()  # raising here rolls the whole write back (below)
                for event in pending:
                    ledger.append_event(conn, *event)
                conn.execute("COMMIT")
                if self.replayed:
                    from mindos.store import deferred  # lazy: loaded already by the replay

                    deferred.done(conn, self.replayed)
                return False
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        finally:
            if conn.in_transaction:  # a failed COMMIT (disk full): roll back before letting go
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            _release(conn)
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


class BatchBroken(MindosError):
    """A group-commit batch whose transaction SQLite ended under it (a call's error rolled
    the whole transaction back): nothing in it committed; run its calls again, each alone."""

    code = "busy"


class batch:
    """Group commit: ``with batch(conn) as group:`` opens one :class:`write` transaction and
    ``group.run(fn)`` runs each independent call in it under a SAVEPOINT of its own.

    A call that raises has only its own savepoint rolled back (the exception propagates to
    the caller, the batch goes on); the others commit together, with their audit events in
    the chain in the order they ran, at the one COMMIT (one fsync for the batch).  Refusal
    events recorded by a failed call (:func:`~mindos.store.ledger.append_refusal`) land with
    that commit.  Should SQLite end the transaction itself (an I/O error, a full disk),
    :class:`BatchBroken` is raised: nothing of the batch committed.  No answer may be given
    for any call before the block ends without an exception.
    """

    def __init__(self, conn, timeout=None):
        self.conn = conn
        self._write = write(conn, timeout)
        self.calls = 0

    def __enter__(self):
        if self.conn.in_transaction:
            raise RuntimeError("a batch must be the outermost write")
        self._write.__enter__()
        return self

    def run(self, fn):
        """``fn()`` under a savepoint: released when it returns, rolled back when it raises."""
        conn = self.conn
        if not conn.in_transaction:
            raise BatchBroken("the batch transaction ended under a call; nothing in it was committed")
        self.calls += 1
        conn.execute("SAVEPOINT batch_call")
        try:
            result = fn()
        except BaseException:
            if not conn.in_transaction:
                raise BatchBroken("the batch transaction ended under a call; nothing in it was committed") from None
            conn.execute("ROLLBACK TO batch_call")
            conn.execute("RELEASE batch_call")
            raise
        conn.execute("RELEASE batch_call")
        return result

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None and not self.conn.in_transaction:
            self._write.__exit__(BatchBroken, None, None)
            raise BatchBroken("the batch transaction ended under a call; nothing in it was committed")
        return self._write.__exit__(exc_type, exc, tb)


class read:
    """``with read(conn):`` runs the block in one read transaction: every query in it sees
    the same snapshot of the database, so results derived from one query (index statistics,
    a section's candidates) stay exact for the others.  Nested in an open transaction it
    joins that one.  Writes nothing; the transaction ends (COMMIT) when the block does.
    (Every connection already reads through the memory map of MMAP_BYTES.)
    """

    def __init__(self, conn):
        self.conn = conn
        self.outer = False

    def __enter__(self):
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")
            self.outer = True
        return self

    def __exit__(self, exc_type, exc, tb):
        if self.outer and self.conn.in_transaction:
            self.conn.execute("COMMIT")
        return False


def tuples(conn):
    """A cursor of ``conn`` yielding plain tuples instead of the connection's ``sqlite3.Row``s:
    for hot reads that take their values by position."""
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor


def connect_readonly(home, *, live=False, mapped=True):
    """Open ``home``'s database read-only, for inspection that must never mutate it.

    No schema build or migration, no WAL checkpoint on close: the database file stays
    byte-identical.  When no ``-wal`` file exists (no connection is open, every commit is
    in the main file) the file is opened ``immutable`` so not even the ``-wal``/``-shm``
    side files are created; otherwise (or with ``live``) ``mode=ro`` reads through the live
    WAL.  ``conn.immutable`` says which.  ``mapped=False`` reads through SQLite's page cache
    instead of a memory map: a sweep that reads every page once would otherwise count the
    whole file (up to ``MMAP_BYTES``) in its resident memory.  Raises NotFound when the home
    has no database.
    """
    from mindos.errors import NotFound  # lazy: only inspectors need it

    path = database_path(home)
    if not os.path.isfile(path):
        if os.path.lexists(path):
            raise IntegrityError(_special(path) or f"cannot use database {path}: not a regular file")
        raise NotFound(f"no MindOS database at {path}")
    try:
        conn = _connect_ro(path, live=live)
        conn.execute(f"PRAGMA mmap_size={MMAP_BYTES if mapped else 0}")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise IntegrityError(f"cannot open database {path} read-only: {exc}") from None
    conn.home = home
    conn.path = path
    conn.row_factory = sqlite3.Row
    return conn


def _connect_ro(path, *, live=False):
    """The one read-only open of a database file: ``immutable`` (no side files at all) when
    no ``-wal`` exists and not ``live``, else ``mode=ro`` through the live WAL; the
    connection's ``immutable`` says which."""
    immutable = not live and not os.path.exists(path + "-wal")
    flags = "mode=ro&immutable=1" if immutable else "mode=ro"
    conn = sqlite3.connect(f"file:{_uri_path(path)}?{flags}", uri=True, timeout=BUSY_TIMEOUT_SECONDS,
                           isolation_level=None, factory=Connection)
    conn.immutable = immutable
    return conn


def _uri_path(path):
    from urllib.parse import quote  # lazy: only read-only opens build URIs

    return quote(os.path.abspath(path))
