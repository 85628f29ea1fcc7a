"""Reading lean packs in tests.

A pack of format 4 prints its entry lists as tables (a header row naming the columns, then a
row per entry; see :func:`mindos.context.builder.encode`): :func:`full` reads them back into
entry dicts through the package's own decoder (:func:`mindos.context.builder.decode`).
Tests of the printed shape itself look at the pack as it is.

A pack of format 3 leaves out every envelope key that says nothing (a zero counter, an empty
list, a null or false value; see :func:`mindos.context.builder.lean`).  :func:`full` gives a
view of a pack where such a key reads as the value its absence stands for, so a test can
check ``pack["notes_dropped"] == 0`` without caring whether the key was printed.  Tests of
the lean shape itself look at the pack as it is.
"""

_LISTS = frozenset({"dependencies", "notes", "related_notes", "related_handoffs", "dep_context", "related_sessions",
                    "related_facts", "related_semantic", "receipts", "leases", "inbox", "constraints", "projects",
                    "sections_skipped", "facts", "semantic", "sessions"})
_FALSE = frozenset({"handoff_packed", "degraded", "audit_deferred", "live", "held_by_caller",
                    "description_truncated"})
_COUNTER_ENDINGS = ("_packed", "_total", "_total_live", "_dropped", "_excluded", "_matched", "_requested",
                    "_tokens_used", "_tokens_skipped")


class Full(dict):
    """A pack (or a nested part of one) whose missing keys read as what their absence means."""

    def __missing__(self, key):
        if key in _LISTS:
            return []
        if key in _FALSE:
            return False
        if key.endswith(_COUNTER_ENDINGS):
            return 0
        return None


def full(pack):
    """``pack`` (a dict, or a list of them) viewed with its tables read back into entries and
    its absent keys at their meaning."""
    if isinstance(pack, list):
        return [full(item) for item in pack]
    if not isinstance(pack, dict):
        return pack
    from mindos.context import builder

    pack = builder.decode(pack)
    return Full({key: full(value) if key in ("held", "recall", "lease") else value for key, value in pack.items()})


def columns(header):
    """The column names of a printed table's header (a hoisted column ``{name: value}`` by its name)."""
    return [next(iter(column)) if isinstance(column, dict) else column for column in header]


def unhoist(table):
    """A printed table as it would print with no column hoisted (pack format 5 hoists a column
    whose value is the same in every row into the header): ``[names, row, ...]``, each row
    with the hoisted values back in place and no trailing nulls.  These rows are what the
    budget charges."""
    header = table[0]
    rows = []
    for printed in table[1:]:
        values = iter(printed)
        row = [next(iter(column.values())) if isinstance(column, dict) else next(values, None) for column in header]
        while row and row[-1] is None:
            row.pop()
        rows.append(row)
    return [columns(header), *rows]
