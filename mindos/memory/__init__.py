"""Semantic memory, the temporal fact graph and retrieval quality.

Which facts and memories a reader may see is decided here, once, as SQL conditions over a
table alias: :func:`fact_valid_clause` (a fact is currently valid) and
:func:`memory_scope_clause` (the memories a project scope sees).  The fact graph
(:mod:`mindos.memory.facts`), the memory store (:mod:`mindos.memory.memories`) and the
context packs all read through them, and a pack loads neither of those modules for it.
"""


def fact_valid_clause(alias, now):
    """``(sql, params)``: fact ``alias`` is currently valid at ``now``: not retracted, and its
    window open (``valid_until`` NULL or later than ``now``)."""
    return (f"{alias}.retracted_at IS NULL AND ({alias}.valid_until IS NULL OR {alias}.valid_until > ?)", [now])


def memory_scope_clause(alias, project):
    """``(sql, params)``: the memories a ``project`` scope may see -- its own plus project-less
    ones, never another project's.  ``project=None`` means global (every row)."""
    if project is None:
        return "1", []
    return f"({alias}.project = ? OR {alias}.project = '')", [project]
