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
_FIELDS = ("id", "project", "title", "description", "next_action", "blocked_reason")


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
    if rank and fts.has(conn, "tasks_fts"):
        match = fts.query(query, "AND")
        if match is None:
            return []
        where = " AND ".join(["tasks_fts MATCH ?", *clauses])
        sql = (
            "SELECT t.*, bm25(tasks_fts) AS score FROM tasks_fts JOIN tasks t ON t.seq = tasks_fts.rowid"
            f" WHERE {where} ORDER BY score, {LIST_ORDER}"
        )
        params = [match, *params]
    else:
        if rank and fts.query(query) is None:
            return []  # same contract as the ranked path: tokenless queries return []
        pattern = fts.like_pattern(query)
        text_match = "(" + " OR ".join(f"t.{field} LIKE ? ESCAPE '\\'" for field in _FIELDS) + ")"
        where = " AND ".join([text_match, *clauses])
        sql = f"SELECT t.* FROM tasks t WHERE {where} ORDER BY {LIST_ORDER}"
        params = [pattern] * len(_FIELDS) + params
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return [row_to_task(row) for row in conn.execute(sql, params)]
