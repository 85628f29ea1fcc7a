"""Semantic memory, the temporal fact graph and retrieval quality.

Whether a fact is currently valid, and which memories a project scope sees, is decided here
once, as SQL conditions over a table alias: :func:`fact_valid` and :func:`memory_in_scope`.
The fact graph (:mod:`mindos.memory.facts`), the context packs and memory-search
(:mod:`mindos.memory.search`) all read through them, and a pack loads neither the fact
graph nor the memory store for it.  The caller binds the value of the placeholder it names.
"""


def fact_valid(alias, now="?"):
    """SQL: fact ``alias`` is currently valid at ``now`` (a placeholder): not retracted, and
    its window open (``valid_until`` NULL or later than ``now``)."""
    return f"{alias}.retracted_at IS NULL AND ({alias}.valid_until IS NULL OR {alias}.valid_until > {now})"


def memory_in_scope(alias, project="?"):
    """SQL: memory ``alias`` is one the scope of ``project`` (a placeholder) sees: the
    project's own plus project-less ones, never another project's."""
    return f"({alias}.project = {project} OR {alias}.project = '')"
