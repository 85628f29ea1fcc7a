"""Operator search over tasks: substring by default, BM25 with ``rank=True``.

Substring search is a LIKE over id, project, title, description, next_action and
blocked_reason with every wildcard in the query escaped, ordered exactly like ``list``
(priority, then most recently updated).  Ranked search goes through the external-content
``tasks_fts`` index with every query token quoted (conjunctive: all tokens must match), so
FTS5 operators, quotes, ``*``, ``NEAR(`` and column filters typed by a user are plain
words and can never raise.  Homes built without FTS5 fall back to the substring path with
the same shape minus ``score``.
"""

from mindos.core import validate
from mindos.store import fts
from mindos.work.rows import LIST_ORDER, row_to_task, task_filters

MAX_QUERY = 1000
# A ranked search without filters, row for row what fts.text_search returns (BM25, then the
# list order, first ``?2``): every match is scored once into a small table of (seq, score),
# and only the matches scoring as well as the ``?2``-th best (ties included, so the list
# order still settles them) are joined with their task rows and sorted whole.  The join
# and the sort no longer read a task row per match, which a common word in a big home has
# thousands of.
_RANKED_TOP = (
    "WITH hit(seq, score) AS MATERIALIZED"
    f" (SELECT rowid, bm25(tasks_fts) FROM tasks_fts WHERE {fts.match('tasks_fts', '?1')})"
    " SELECT t.*, hit.score AS score FROM hit JOIN tasks t ON t.seq = hit.seq"
    " WHERE hit.score <= coalesce((SELECT score FROM hit ORDER BY score LIMIT 1 OFFSET ?2 - 1), 9e999)"
    f" ORDER BY score, {LIST_ORDER} LIMIT ?2")


def search(conn, query, *, status=None, project=None, priority=None, tag=None, limit=None, rank=False):
    """Return the tasks matching ``query`` (task dicts; ranked hits add ``score``).

    A blank query matches nothing.  With ``rank``, a query without word tokens returns [].
    """
    query = validate.text(query, "query", max_len=MAX_QUERY)
    clauses, params = task_filters(status=status, project=project, priority=priority, tag=tag)
    if limit is not None:
        limit = validate.positive_int(limit, "--limit")
    if not query.strip():
        return []
    if rank and fts.query(query) is None:
        return []  # tokenless: nothing to rank, on either path
    if rank and not clauses and limit is not None and fts.has(conn, "tasks_fts"):
        found = conn.execute(_RANKED_TOP, (fts.query(query, "AND"), limit)).fetchall()
    else:
        found = fts.text_search(conn, "tasks_fts", query, select="t.*", where=clauses, params=params,
                                order=LIST_ORDER, ranked_order=LIST_ORDER, rank=rank, limit=limit)
    return [row_to_task(row) for row in found]
