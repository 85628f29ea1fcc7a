"""Operator search over tasks: substring by default, BM25 with ``rank=True``.

Substring search is a LIKE over id, project, title, description, next_action and
blocked_reason with every wildcard in the query escaped, ordered exactly like ``list``
(priority, then most recently updated).  Ranked search goes through the external-content
``tasks_fts`` index with every query token quoted (conjunctive: all tokens must match), so
FTS5 operators, quotes, ``*``, ``NEAR(`` and column filters typed by a user are plain
words and can never raise.  Homes built without FTS5 fall back to the substring path with
the same shape minus ``score``.

Ranked search is bounded: FTS5's bm25() first walks the whole posting list of every query
word to weigh it, and then scores every match, so a common word ("service", "fix") in a
home of a million tasks costs hundreds of milliseconds.  When any word of the query matches
COMMON_WORD tasks or more, the ranking is computed here instead, over the RANK_WINDOW most
recently created matches (the conjunctive match and the filters are FTS5's and SQL's as
always): FTS5's own formula and constants (:func:`mindos.store.fts.bm25`), its totals
record for the row count and average length, and each word's document frequency counted up
to COMMON_WORD (a word matching more weighs as one matching COMMON_WORD: common words weigh
alike).  A query whose words are all rarer is ranked by FTS5 over every match, exactly as
before.  Either way ties fall to the ``list`` order.
"""

from mindos.core import validate
from mindos.store import db, fts
from mindos.work.rows import LIST_ORDER, row_to_task, task_filters

MAX_QUERY = 1000
# A query word matching this many tasks or more makes the ranking bounded (see above); the
# bounded ranking scores at most RANK_WINDOW matches, the most recently created.
COMMON_WORD = 1000
RANK_WINDOW = 150
# A substring search reads only the tasks the index names for the query (fts.substring_probe)
# when they are fewer than this; with more, walking the tasks in the list order finds the
# first hits sooner (and stops at --limit).
SUBSTRING_NARROW = 2000
_INDEXED = ("id", "project", "title", "description", "next_action", "blocked_reason")  # tasks_fts's columns
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
    if rank and fts.has(conn, "tasks_fts"):
        terms = [token.lower() for token in fts.tokens(query)]
        hits = fts.match_counts(conn, "tasks_fts", [fts.quote(term) for term in terms], COMMON_WORD)
        if max(hits) >= COMMON_WORD:
            return _bounded(conn, query, terms, hits, clauses, params, limit)
        if min(hits) == 0:
            return []  # conjunctive: a word no task has matches nothing
    if rank and not clauses and limit is not None and fts.has(conn, "tasks_fts"):
        found = conn.execute(_RANKED_TOP, (fts.query(query, "AND"), limit)).fetchall()
    else:
        found = fts.text_search(conn, "tasks_fts", query, select="t.*", where=clauses, params=params,
                                order=LIST_ORDER, ranked_order=LIST_ORDER, rank=rank, limit=limit,
                                narrow=SUBSTRING_NARROW)
    return [row_to_task(row) for row in found]


def _bounded(conn, query, terms, hits, clauses, params, limit):
    """The ranked search of a query with a common word: the RANK_WINDOW newest matches
    passing the filters, scored by :func:`mindos.store.fts.bm25`, best first, then in the
    list order (see the module docstring).  The window is read as the indexed text and the
    order keys only; whole rows are read for the results alone."""
    where = "".join(f" AND {clause}" for clause in clauses)
    text = " || ' ' || ".join(f"coalesce(t.{column}, '')" for column in _INDEXED)
    with db.read(conn):  # the window, the totals and the rows from one snapshot
        cursor = db.tuples(conn)
        try:
            window = cursor.execute(
                f"SELECT t.seq, t.priority, t.updated_at, t.id, lower({text}) FROM tasks_fts CROSS JOIN tasks t"
                f" ON t.seq = tasks_fts.rowid WHERE {fts.match('tasks_fts')}{where}"
                " ORDER BY tasks_fts.rowid DESC LIMIT ?", (fts.query(query, "AND"), *params, RANK_WINDOW)).fetchall()
        finally:
            cursor.close()
        if not window:
            return []
        total, average = fts.totals(conn, "tasks_fts")
        scores = fts.bm25(terms, hits, max(total, len(window)), average, [row[4] for row in window])
        ranked = [(score, *row[:4]) for score, row in zip(scores, window)]
        # the list order (priority, then most recently updated, then id) settles equal scores
        ranked.sort(key=lambda entry: entry[4])
        ranked.sort(key=lambda entry: entry[3], reverse=True)
        ranked.sort(key=lambda entry: (entry[0], entry[2]))
        if limit is not None:
            ranked = ranked[:limit]
        found = {row["seq"]: row for row in conn.execute(
            f"SELECT * FROM tasks WHERE seq IN ({', '.join('?' * len(ranked))})", [entry[1] for entry in ranked])}
        tasks = []
        for entry in ranked:
            task = row_to_task(found[entry[1]])
            task["score"] = entry[0]
            tasks.append(task)
        return tasks
