"""Semantic memory, the temporal fact graph and retrieval quality.

Which rows are current and which a project scope sees is decided here once, as SQL over a
table alias: a note is live (:func:`note_live`), a fact currently valid (:func:`fact_valid`)
and in a project's scope (:func:`fact_in_scope`, through :func:`fact_project`), a memory in
a project's scope (:func:`memory_in_scope`).  The note and fact stores, the context packs
and memory-search (:mod:`mindos.memory.memory_search`) all read through them, so a pack loads
neither the fact graph nor the memory store for them.  The caller binds the value of the
placeholder it names.
"""


def note_live(alias, now="?"):
    """SQL: note ``alias`` is live at ``now`` (a placeholder): not superseded, and not a
    retiree (an expired unpinned note; an expired pin stays live)."""
    return (f"{alias}.superseded_by IS NULL AND ({alias}.expires_at IS NULL OR {alias}.expires_at > {now}"
            f" OR {alias}.pinned = 1)")


def fact_valid(alias, now="?"):
    """SQL: fact ``alias`` is currently valid at ``now`` (a placeholder): not retracted, and
    its window open (``valid_until`` NULL or later than ``now``)."""
    return f"{alias}.retracted_at IS NULL AND ({alias}.valid_until IS NULL OR {alias}.valid_until > {now})"


def memory_in_scope(alias, project="?"):
    """SQL: memory ``alias`` is one the scope of ``project`` (a placeholder) sees: the
    project's own plus project-less ones, never another project's."""
    return f"({alias}.project = {project} OR {alias}.project = '')"


def fact_project(alias):
    """SQL: the project of fact ``alias``: its linked task's, '' when it links none (or the
    task is gone: the link is soft)."""
    return f"coalesce((SELECT project FROM tasks WHERE id = {alias}.task_id), '')"


def fact_in_scope(alias, project="?"):
    """SQL: fact ``alias`` is one the scope of ``project`` (a placeholder) sees: unlinked, or
    linked to a task of that project or of none."""
    return f"({alias}.task_id IS NULL OR {fact_project(alias)} IN ('', {project}))"
