"""Task deduplication: which open tasks of a project restate the same work.

Similarity is the token Jaccard of title + description, the same measure (and the same
implementation, :func:`mindos.core.text.tokens` / :func:`mindos.core.text.jaccard`) the note
near-duplicate guard and ``consolidate`` use.  Only open (non-terminal) tasks of the same
project count: settled work is history, and the same title in another project is another
checkout.  Nothing here mutates: ``similar`` and ``dup-tasks`` report, ``create`` records.

Candidate search is exact but cheap.  ``J(A, B) >= t`` needs ``|A & B| >= ceil(t * |A|)``,
so B must hold at least one of ANY ``|A| - ceil(t * |A|) + 1`` tokens of A (prefix
filtering).  We ask ``tasks_fts`` (title and description columns, narrowed to the project)
for open same-project tasks holding one of the rarest such tokens, then compute the exact
Jaccard in Python on that small set.  Without FTS5 the same tokens are matched with LIKE.
When the examined set is capped (``create``'s hook), candidates are taken most relevant
first -- the tasks holding every probe token, BM25-ranked, then the rest; without FTS5 the
number of probe tokens a task holds -- so a true duplicate is not crowded out by older,
weaker ones (see :func:`_candidates`).
"""

import itertools
import math

from mindos.core import text, validate
from mindos.store import fts, sql
from mindos.errors import InvalidInput
from mindos.work import rows

# create's hook is on the hot path: it scans at most this many candidates (most relevant
# first) and reports at most this many matches.
CREATE_SCAN_LIMIT = 200
CREATE_REPORT_LIMIT = 10
# ... and BM25-ranks at most this many of the newest tasks holding every probe token
CREATE_RANK_WINDOW = 800
# Token rarity for the candidate probe is counted (up to PROBE_COUNT_CAP tasks per token) only
# for texts of at most PROBE_MAX_TOKENS tokens; longer ones probe their longest tokens.  The
# LIKE fallback ORs at most LIKE_MAX_TOKENS tokens (SQLite's expression depth), else scans.
PROBE_COUNT_CAP = 64
PROBE_MAX_TOKENS = 64
LIKE_MAX_TOKENS = 200
_OPEN = sql.open_condition()


def threshold(value=None, flag="--threshold"):
    """The near-duplicate threshold (``value``, else $AUTOPILOT_NEAR_DUP_THRESHOLD, else 0.8).

    The note guard's rule, so tasks and notes agree on what "near-duplicate" means.
    """
    return text.near_dup_threshold(value, flag)


def _probe_size(size, limit):
    """How many of a ``size``-token set's tokens a match at ``limit`` must hit at least one of."""
    needed = max(math.ceil(limit * size - 1e-9), 1)  # float noise rounds down: a larger probe is safe
    return max(size - needed + 1, 1)


def _scoped(expression, project):
    """A tasks_fts MATCH over title/description, narrowed to the project inside the index.

    The project-column condition is a superset (it matches the project's tokens); the SQL
    ``t.project = ?`` that follows stays the exact filter.
    """
    return "{title description} : (" + expression + ") AND project : (" + fts.query(project, "AND") + ")"


def _probe_tokens(conn, project, tokens, limit):
    """The tokens a similar task must share at least one of: the ``_probe_size`` rarest.

    Rarity is counted in the project's part of tasks_fts (up to PROBE_COUNT_CAP per token,
    one statement); without FTS5, or when every token must be probed anyway, longer tokens
    are taken first.  Any choice is exact; rarer ones just mean fewer candidates.
    """
    ordered = sorted(tokens, key=lambda token: (-len(token), token))
    size = _probe_size(len(ordered), limit)
    if size >= len(ordered) or len(ordered) > PROBE_MAX_TOKENS or not fts.has(conn, "tasks_fts"):
        return ordered[:size]
    counts = fts.match_counts(conn, "tasks_fts", [_scoped(fts.query(token), project) for token in ordered],
                                 PROBE_COUNT_CAP)
    return [ordered[i] for i in sorted(range(len(ordered)), key=lambda i: (counts[i], i))[:size]]


def _candidates(conn, project, tokens, limit, exclude_id, scan_limit):
    """Open same-project task rows sharing a probe token with ``tokens``; with a
    ``scan_limit``, at most that many, most relevant first.

    Uncapped (``similar``), every candidate is examined, oldest first.  Capped (``create``),
    first come the tasks holding every probe token, BM25-ranked over title and description
    (ties by age) within the newest CREATE_RANK_WINDOW of them, then the newest of the
    rest; without FTS5, tasks holding more probe tokens come first, shorter text first on
    ties (as BM25's length normalisation would).  Either way a true duplicate is not
    crowded out by older, weaker candidates, and the ranking work stays bounded.
    """
    probe = _probe_tokens(conn, project, tokens, limit)
    columns = "t.id, t.title, t.description, t.status, t.priority, t.created_at"
    where = f"t.project = ? AND t.id <> ? AND t.{_OPEN}"
    scope = (project, exclude_id or "")
    if fts.has(conn, "tasks_fts"):
        any_probe = _scoped(fts.query(" ".join(probe), "OR"), project)
        plain = (f"SELECT {columns} FROM tasks_fts f JOIN tasks t ON t.seq = f.rowid"
                 f" WHERE {fts.match('tasks_fts')} AND {where}")
        if scan_limit is None:
            return conn.execute(plain + " ORDER BY f.rowid", (any_probe, *scope)).fetchall()
        # bm25 weights follow the tasks_fts columns (id, project, title, description,
        # next_action, blocked_reason): the project filter is the same for every row
        rows = conn.execute(
            f"SELECT {columns} FROM (SELECT rowid, bm25(tasks_fts, 0, 0, 1, 1, 0, 0) AS score FROM tasks_fts"
            f" WHERE {fts.match('tasks_fts')} ORDER BY rowid DESC LIMIT ?) f JOIN tasks t ON t.seq = f.rowid"
            f" WHERE {where} ORDER BY f.score, f.rowid LIMIT ?",
            (_scoped(fts.query(" ".join(probe), "AND"), project), CREATE_RANK_WINDOW, *scope, scan_limit),
        ).fetchall()
        if len(rows) < scan_limit and len(probe) > 1:  # fill up with tasks holding only some probe tokens
            seen = {row["id"] for row in rows}
            fill = conn.execute(plain + " ORDER BY f.rowid DESC LIMIT ?", (any_probe, *scope, scan_limit + len(rows)))
            for row in fill:
                if row["id"] not in seen and len(rows) < scan_limit:
                    rows.append(row)
        return rows
    if len(probe) <= LIKE_MAX_TOKENS:
        hits = " + ".join(["(t.title LIKE ? ESCAPE '\\' OR t.description LIKE ? ESCAPE '\\')"] * len(probe))
        sql = (f"SELECT {columns} FROM (SELECT t.*, ({hits}) AS hits FROM tasks t WHERE {where}) t"
               " WHERE t.hits > 0 ORDER BY t.hits DESC, length(t.title) + length(t.description), t.seq")
        params = [pattern for token in probe for pattern in [fts.like_pattern(token)] * 2] + list(scope)
    else:  # too many tokens for one expression: every open task (a superset), oldest first
        sql = f"SELECT {columns} FROM tasks t WHERE {where} ORDER BY t.seq"
        params = list(scope)
    if scan_limit is not None:
        sql += " LIMIT ?"
        params.append(scan_limit)
    return conn.execute(sql, params).fetchall()


def find_similar(conn, project, title, description, *, limit, exclude_id=None, scan_limit=None):
    """Open same-project tasks whose title+description Jaccard with the given text is >= ``limit``.

    Returns ``[{"id", "title", "status", "priority", "created_at", "similarity"}]``,
    similarity descending then id.  ``scan_limit`` caps the candidates examined (most relevant
    first, see :func:`_candidates`).
    """
    tokens, jaccard = text.tokens, text.jaccard
    mine = tokens(f"{title or ''} {description or ''}")
    if not mine:
        return []
    found = []
    for row in _candidates(conn, project, mine, limit, exclude_id, scan_limit):
        score = jaccard(mine, tokens(f"{row['title']} {row['description']}"))
        if score >= limit:
            found.append({"id": row["id"], "title": row["title"], "status": row["status"],
                          "priority": row["priority"], "created_at": row["created_at"],
                          "similarity": round(score, 4)})
    found.sort(key=lambda item: (-item["similarity"], item["id"]))
    return found


def similar(conn, task_id, *, threshold_value=None):
    """``similar``: the open same-project tasks that restate ``task_id``.

    Returns ``{"task_id", "project", "title", "threshold", "count", "similar": [...]}``.
    """
    limit = threshold(threshold_value)
    task_id = validate.identifier(task_id, "task id")
    row = rows.require_task(conn, task_id, "id, project, title, description")
    matches = find_similar(conn, row["project"], row["title"], row["description"], limit=limit,
                           exclude_id=task_id)
    return {"task_id": task_id, "project": row["project"], "title": row["title"], "threshold": limit,
            "count": len(matches), "similar": matches}


def similar_open_tasks(conn, task_id, project, title, description):
    """The ``similar_open_tasks`` list ``create`` records: ``[{"id", "title", "similarity"}]``.

    Informational and cheap: it scans at most CREATE_SCAN_LIMIT candidates and keeps the
    CREATE_REPORT_LIMIT most similar.  A malformed threshold variable never blocks creation
    (the default applies; ``similar`` reports the bad value).
    """
    try:
        limit = threshold()
    except InvalidInput:
        limit = text.DEFAULT_NEAR_DUP_THRESHOLD
    matches = find_similar(conn, project, title, description, limit=limit, exclude_id=task_id,
                           scan_limit=CREATE_SCAN_LIMIT)
    return [{"id": m["id"], "title": m["title"], "similarity": m["similarity"]}
            for m in matches[:CREATE_REPORT_LIMIT]]


def dup_tasks(conn, *, threshold_value=None, dry_run=False):
    """``ops.py dup-tasks``: cluster open tasks per project; read-only either way.

    Greedy like ``consolidate``: per project, tasks are taken oldest first; each joins the
    first cluster whose canonical (its founder, i.e. the oldest member) it matches at or above
    the threshold, else founds its own.  Returns the clusters with two or more members.
    """
    limit = threshold(threshold_value)
    tokens, jaccard = text.tokens, text.jaccard
    rows = conn.execute(
        "SELECT id, project, title, description, status, priority, created_at FROM tasks"
        f" WHERE {_OPEN} ORDER BY project, created_at, seq"
    ).fetchall()
    clusters = []
    for _, group in itertools.groupby(rows, key=lambda row: row["project"]):
        clusters.extend(_cluster_project(list(group), limit, tokens, jaccard))
    duplicates = sum(len(c["duplicates"]) for c in clusters)
    return {"threshold": limit, "dry_run": bool(dry_run), "read_only": True, "open_tasks": len(rows),
            "clusters_total": len(clusters), "duplicate_tasks": duplicates, "clusters": clusters}


def _task_ref(row):
    return {"id": row["id"], "title": row["title"], "status": row["status"], "priority": row["priority"],
            "created_at": row["created_at"]}


def _cluster_project(rows, limit, tokens, jaccard):
    """Greedy clusters of one project's open task rows (already oldest first).

    Each task is compared only with cluster canonicals, and only with those that survive
    three exact filters before the Jaccard itself: under one token order (rarest in the
    project first) two sets with Jaccard >= t share a token between their ``_probe_size``
    prefixes (the All-Pairs prefix-filter lemma), so canonicals are indexed by their prefix
    tokens; their sizes are within a factor t of each other; and a bitmask popcount gives
    the overlap, hence the Jaccard, without building sets.  The reported similarity is
    always :func:`mindos.core.text.jaccard`'s.
    """
    sets = [tokens(f"{row['title']} {row['description']}") for row in rows]
    frequency = {}
    for token_set in sets:
        for token in token_set:
            frequency[token] = frequency.get(token, 0) + 1
    order = {token: rank for rank, token in enumerate(sorted(frequency, key=lambda t: (frequency[t], t)))}
    masks = [sum(1 << order[token] for token in token_set) for token_set in sets]
    founders = []  # row index of each cluster's canonical
    members = []  # per cluster: [(row index, similarity)]
    index = {}  # prefix token -> cluster numbers whose canonical's prefix holds it (ascending)
    for position, mine in enumerate(sets):
        size, mask = len(mine), masks[position]
        prefix = sorted(mine, key=order.__getitem__)[:_probe_size(size, limit)] if mine else []
        low, high = limit * size - 1e-9, size / limit + 1e-9
        joined = None
        for number in sorted(set().union(*(index.get(token, ()) for token in prefix))):
            founder = founders[number]
            other = len(sets[founder])
            if not low <= other <= high:
                continue
            overlap = (mask & masks[founder]).bit_count()
            if overlap < limit * (size + other - overlap) - 1e-9:  # Jaccard < limit
                continue
            score = jaccard(mine, sets[founder])
            if score >= limit:
                joined = number
                members[number].append((position, round(score, 4)))
                break
        if joined is None:  # found a cluster (a tokenless task founds one nobody can join)
            number = len(founders)
            founders.append(position)
            members.append([])
            for token in prefix:
                index.setdefault(token, []).append(number)
    result = []
    for number, founder in enumerate(founders):
        if not members[number]:
            continue
        canonical = rows[founder]
        duplicates = [dict(_task_ref(rows[position]), similarity=score) for position, score in members[number]]
        duplicates.sort(key=lambda item: (-item["similarity"], item["id"]))
        ids = ", ".join(item["id"] for item in duplicates)
        result.append({
            "project": canonical["project"],
            "canonical": _task_ref(canonical),
            "duplicates": duplicates,
            "size": 1 + len(duplicates),
            "suggested_action": (f"keep {canonical['id']} (oldest); cancel {ids} as duplicate work, "
                                 f"or fold into {canonical['id']} via dep"),
        })
    return result
