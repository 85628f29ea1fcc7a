"""SQL pieces several domains share, derived from the one definition of each rule.

The terminal statuses are declared once (``mindos.core.validate.TERMINAL_STATUSES``); every
query that asks "is this task finished?" uses the fragments below, so adding a terminal
status is one edit.
"""

from sqlite3 import Row as _Row

from mindos.core.validate import STATUSES, TERMINAL_STATUSES

# ('completed', 'failed', 'cancelled') as an SQL list (values are fixed tokens, never user text)
TERMINAL_SQL = "(" + ", ".join(f"'{status}'" for status in TERMINAL_STATUSES) + ")"
# every other status, as an SQL list (for IN tests that want an index on status)
OPEN_SQL = "(" + ", ".join(f"'{status}'" for status in STATUSES if status not in TERMINAL_STATUSES) + ")"


def open_condition(alias=""):
    """``<alias>.status NOT IN (terminal statuses)``: the task is still open."""
    prefix = f"{alias}." if alias else ""
    return f"{prefix}status NOT IN {TERMINAL_SQL}"


def new_id(conn, table, prefix, size):
    """A fresh random id ``<prefix><2*size hex digits>`` no row of ``table`` holds yet."""
    import os  # lazy: only creates draw ids

    while True:
        candidate = prefix + os.urandom(size).hex()
        if conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (candidate,)).fetchone() is None:
            return candidate


def row_dict(row):
    """``dict(row)`` for a result row, built faster: ``dict()`` reads a ``sqlite3.Row`` by
    column name, one search of its names per column (about a fifth of a 50-task search's
    time), while its values zipped with its names cost one pass.  The same dict: the
    columns in order, and when a name repeats, the first column of it (as ``dict(row)``)."""
    if type(row) is not _Row:
        return dict(row)
    keys = row.keys()
    found = dict(zip(keys, row))
    return found if len(found) == len(keys) else dict(row)


def given(pairs, clauses=None, params=None):
    """``(clauses, params)`` with each ``(fragment, value)`` of ``pairs`` whose value is not
    None appended (a fragment binds one ``?``): the optional filters and column sets a
    command's flags ask for.  ``clauses`` / ``params`` are extended in place when given."""
    clauses = [] if clauses is None else clauses
    params = [] if params is None else params
    for fragment, value in pairs:
        if value is not None:
            clauses.append(fragment)
            params.append(value)
    return clauses, params


def compare_and_set(conn, table, sets, params, match, *, extra="", extra_params=()):
    """The guarded write: ``UPDATE table SET sets`` only on the row whose columns still hold
    exactly the values of ``match`` as they were read.

    ``sets`` are SQL fragments bound by ``params``; ``match`` is ``{column: value read}`` with
    the row's key first (``None`` matches NULL); ``extra`` is one more SQL condition (bound by
    ``extra_params``) that must hold too.  Returns True when exactly one row changed: False
    means another writer moved the row on between the read and this write.
    """
    columns = list(match)
    where = [f"{columns[0]} = ?", *(f"{column} IS ?" for column in columns[1:])]
    if extra:
        where.append(f"({extra})")
    cursor = conn.execute(f"UPDATE {table} SET {', '.join(sets)} WHERE {' AND '.join(where)}",
                          (*params, *match.values(), *extra_params))
    return cursor.rowcount == 1


def quoted(name):
    """``name`` as one SQL identifier (double quotes, inner quotes doubled): a table or index
    name read from ``sqlite_master`` never becomes SQL of its own."""
    return '"' + name.replace('"', '""') + '"'


# A table's largest rowid (0 when it is empty), as one term of a SELECT list (``table`` quoted).
LARGEST_ROWID = "(SELECT coalesce(max(rowid), 0) FROM main.{table})"


def largest_rowids(conn, names):
    """``{name: its largest rowid, 0 when empty}`` of the rowid tables ``names``, read in one
    statement (one statement a table costs about as much again to prepare as to run).  The
    statement's error (sqlite3.DatabaseError: a table without rowids, a damaged page) is the
    caller's."""
    names = list(names)
    if not names:
        return {}
    row = conn.execute("SELECT " + ", ".join(LARGEST_ROWID.format(table=quoted(name)) for name in names)).fetchone()
    return dict(zip(names, row))
