"""memory-search: one ranked list across every memory surface (live notes, memories, facts
and handoffs), scored on one scale.

Candidates and scores come from the retrieval engine (:mod:`mindos.memory.retrieval`), its
query groups widened by everyday readings (:mod:`mindos.memory.everyday`: "fall behind" also
matches lag and backlog, at a lower weight than the words themselves): each
surface's index is probed for the query's groups, the rarest within SEARCH_POSTINGS matches
are read newest first and filtered as they are read, and every candidate is scored in
Python by the IDF-weighted share of the query's groups it matches times a mild recency
factor, never by BM25.  Outdated rows (superseded notes and handoffs, retracted memories,
closed fact windows) are left out by default; with history included they sort after every
current row, so a replaced row never outranks its replacement.  Scope is enforced as for
packs: a project sees its own rows plus project-less ones.  With history hidden, a top
answer that replaced a row carries ``change`` (what it replaced, when, and a retraction's
reason) and the row recording that change ranks right after it (``history_of``; see
:mod:`mindos.memory.history`).
"""

import math

from mindos.core import clock, validate
from mindos.errors import InvalidInput
from mindos.memory import fact_in_scope, fact_project, fact_valid, memory_in_scope, note_live, retrieval
from mindos.store import db, fts


SURFACES = ("note", "memory", "fact", "handoff")
SCOPES = ("project", "global")
MAX_LIMIT = 1000


_NOTE_LIVE = note_live("n", ":now")
_FACT_VALID = fact_valid("f", ":now")
# Per surface: its index, the columns every candidate row yields (kind, id, project, task_id,
# created_at, text, outdated, replaced_by), the joins after its content table, the project
# scope and current-row filters, its newest-first order (the substring twin's order) and the
# column its created_at is read from.
_SURFACES = {
    "note": ("notes_fts",
             "'note' AS kind, n.id AS id, t.project AS project, n.task_id AS task_id, n.created_at AS created_at,"
             f" n.content AS text, NOT ({_NOTE_LIVE}) AS outdated, n.superseded_by AS replaced_by",
             " JOIN tasks t ON t.id = n.task_id", " AND t.project = :project", f" AND {_NOTE_LIVE}",
             "n.created_at DESC, n.id DESC", "n.created_at"),
    "memory": ("memories_fts",
               "'memory' AS kind, m.id AS id, m.project AS project, NULL AS task_id, m.created_at AS created_at,"
               " m.content AS text, m.retracted_at IS NOT NULL AS outdated, m.superseded_by AS replaced_by",
               "", f" AND {memory_in_scope('m', ':project')}", " AND m.retracted_at IS NULL",
               "m.created_at DESC, m.id DESC", "m.created_at"),
    "fact": ("facts_fts",
             f"'fact' AS kind, f.id AS id, {fact_project('f')} AS project, f.task_id AS task_id,"
             " f.valid_from AS created_at, f.subject || ' ' || f.predicate || ' ' || f.object AS text,"
             f" NOT ({_FACT_VALID}) AS outdated, NULL AS replaced_by",
             "", f" AND {fact_in_scope('f', ':project')}",
             f" AND {_FACT_VALID}", "f.valid_from DESC, f.id DESC", "f.valid_from"),
    "handoff": ("handoffs_fts",
                "'handoff' AS kind, h.id AS id, t.project AS project, h.task_id AS task_id, h.created_at AS created_at,"
                " h.objective || ' ' || h.status AS text, h.superseded_by IS NOT NULL AS outdated,"
                " h.superseded_by AS replaced_by",
                " JOIN tasks t ON t.id = h.task_id", " AND t.project = :project", " AND h.superseded_by IS NULL",
                "h.created_at DESC, h.id DESC", "h.created_at"),
}


def search_candidates(limit):
    """Candidates memory-search reads per surface for ``limit`` hits: twice the hits asked
    for, at least 20 (the engine's score orders them; the index only has to bring the right
    rows into the set, and a surface rarely supplies more than the limit).  At 12,000
    distractor notes ``bench/retrieval_eval.py --filler 2000 --limit 10`` scores the same
    with 10, 20 or 30."""
    return max(20, 2 * limit)


# positions in every candidate row (see _SURFACES, then _Surface.matching's two columns)
_ID, _TEXT, _OUTDATED, _EPOCH, _PASSES = 1, 5, 6, 8, 9


class _Surface:
    """How one surface's candidates are fetched (see :data:`_SURFACES`): through its index,
    or by substring on a SQLite without FTS5.  Every statement yields kind, id, project,
    task_id, created_at, text, outdated, replaced_by."""

    def __init__(self, kind, scoped, history):
        self.index, self.columns, self.joins, scope, current, self.newest, self.created = _SURFACES[kind]
        self.spec = spec = fts.index(self.index)
        self.table, self.key = f"{spec.table} {spec.alias}", f"{spec.alias}.{spec.rowid}"
        self.filters = (scope if scoped else "") + ("" if history else current)  # " AND ..." each

    def matching(self):
        """The newest ``:window`` rows matching ``:expr``, newest first, each with ``passes``
        (whether it passes the scope and current-row filters) and ``created_epoch`` (its
        created_at in Unix seconds, read by SQLite, so ranking parses no timestamp; NULL
        when malformed).  The filters are judged per row rather than in WHERE so that the
        reader, not the filters, decides how many matches are read (see :meth:`fetch`).
        Params: expr, now, project, window."""
        passes = self.filters[len(" AND "):] if self.filters else "1"
        return (f"SELECT {self.columns}, CAST(strftime('%s', {self.created}) AS INTEGER) AS created_epoch,"
                f" {passes} AS passes FROM {self.index} CROSS JOIN {self.table} ON {self.key} = {self.index}.rowid"
                f"{self.joins} WHERE {fts.match(self.index, ':expr')} ORDER BY {self.index}.rowid DESC LIMIT :window")

    def fetch(self, conn, expressions, params):
        """The candidates for the rarest groups' ``expressions`` (rarest first): the newest
        rows matching all of them, then each one's newest matches in that order, until
        ``params["cap"]`` rows that pass the filters (each once).  A rare group's few rows
        always make the set, however many newer rows a common group matches.

        Each expression's matches are read newest first and reading stops at the cap, so a
        call costs a few rows more than the cap, and never more than the newest
        ``params["window"]`` matches per expression however narrow the scope (a project
        whose rows are all older than that finds none through a common word)."""
        cap, rows, seen = params["cap"], [], set()
        tiers = [" AND ".join(expressions), *expressions] if len(expressions) > 1 else expressions
        sql = self.matching()
        for expression in tiers:
            cursor = db.tuples(conn)
            try:
                for row in cursor.execute(sql, {**params, "expr": expression}):
                    if row[_PASSES] and row[_ID] not in seen:
                        seen.add(row[_ID])
                        rows.append(row)
                        if len(rows) >= cap:
                            return rows
            finally:
                cursor.close()  # stops the statement where the reading stopped
        return rows

    def substring(self, like):
        """The substring twin of a SQLite without FTS5: the rows matching ``like`` (a condition
        over the content table, from :func:`mindos.store.fts.like_any`), newest first.
        Params: now, project, cap and ``like``'s own."""
        return (f"SELECT {self.columns} FROM {self.table}{self.joins} WHERE {like}{self.filters}"
                f" ORDER BY {self.newest} LIMIT :cap")

    def bm25(self):
        """Every match with its raw BM25 as ``bm25``, in BM25 order (the evaluation's
        baseline).  Params: now, expr, project."""
        return (f"SELECT bm25({self.index}) AS bm25, {self.columns} FROM {self.index} JOIN {self.table}"
                f" ON {self.key} = {self.index}.rowid{self.joins} WHERE {fts.match(self.index, ':expr')}{self.filters}"
                f" ORDER BY bm25({self.index}), {self.spec.alias}.id")


def _hit(row, include_history, score=None):
    """The memory-search hit of a candidate row (a tuple; ``score`` only when ranked)."""
    kind, ident, project, task_id, created_at, text, outdated, replaced_by = row[:8]
    hit = {"kind": kind, "id": ident, "project": project, "task_id": task_id, "created_at": created_at}
    if score is not None:
        hit["score"] = score
    hit["text"] = text
    if include_history:
        hit["outdated"] = bool(outdated)
        hit["replaced_by"] = replaced_by
    return hit


def _best(hits, limit):
    """The first ``limit`` of ``hits``: current rows first (an outdated row never outranks its
    replacement), best score (when scored), newest, kind, id."""
    hits.sort(key=lambda h: (h["kind"], str(h["id"])))
    hits.sort(key=lambda h: h["created_at"], reverse=True)  # stable: ties keep kind, id order
    hits.sort(key=lambda h: (h.get("outdated", False), -h.get("score", 0)))
    return hits[:limit]


def memory_search(conn, query, *, project=None, scope=None, limit=10, include_history=False, now=None):
    """``memory-search``: one ranked list across live notes, memories, facts and handoffs.

    Each hit: ``kind``, ``id``, ``project``, ``task_id``, ``created_at``, ``score`` (higher
    = better) and ``text``; with ``include_history`` also ``outdated`` and ``replaced_by``,
    and every outdated row sorts after every current one.  Without history, a top answer
    that replaced a hidden row also carries ``change`` ({from, at, reason}) and the row that
    records the change follows it, marked ``history_of`` (:mod:`mindos.memory.history`).  ``project`` with scope
    ``project`` (the default when a project is given) keeps that project's rows plus
    project-less ones; ``global`` (the default without a project) keeps everything.
    Read-only; tokenless queries return [].  On a SQLite without FTS5 the hits are the
    substring matches of any query word, newest first, without ``score``.
    """
    query = validate.text(query, "query", required=True, max_len=1000).strip()
    project = validate.identifier(project, "--project") if project else None
    if scope is None:
        scope = "project" if project else "global"
    if scope not in SCOPES:
        raise InvalidInput(f"invalid --scope: {validate.shown(scope, 40)} (choose from project, global)")
    if scope == "project" and not project:
        raise InvalidInput("--scope project needs --project")
    limit = validate.positive_int(limit, "--limit", maximum=MAX_LIMIT)
    now = now or clock.now_iso()
    query_groups = retrieval.groups(query, everyday=True)
    expression = retrieval.match_expression(query_groups)
    if expression is None:
        return []
    scoped = scope == "project"
    if not all(fts.has(conn, _SURFACES[kind][0]) for kind in SURFACES):
        return _substring_search(conn, query_groups, scoped, project, limit, include_history, now)
    found, indexes, counts = [], [], {}
    params = {"now": now, "project": project, "cap": search_candidates(limit), "window": retrieval.SEARCH_POSTINGS}
    from mindos.memory import learned  # lazy: the home's learned associations, read by searches only

    extra = learned.expansions(conn, query_groups)
    surfaces = [_Surface(kind, scoped, include_history) for kind in SURFACES]
    for kind, surface in zip(SURFACES, surfaces):
        index = surface.index
        indexes.append((index, surface.spec.table))
        # one probe per index feeds both the candidate expression and the IDF weights
        counts[index], words = retrieval.counts_words_first(conn, query_groups, index, retrieval.DF_CAP)
        rarest, _ = retrieval.rarest(counts[index], retrieval.SEARCH_POSTINGS)
        if rarest:
            found.extend(surface.fetch(conn, [retrieval.read_through(query_groups[position], words[position],
                                                                     retrieval.DF_CAP)
                                              for position in rarest], params))
        if extra:  # rows that name only what the query's words are learned to go with, a few more
            seen = {row[_ID] for row in found if row[0] == kind}
            found.extend(row for row in surface.fetch(conn, [learned.expression(extra)],
                                                      {**params, "cap": learned.EXTRA_CANDIDATES})
                         if row[_ID] not in seen)
    idf = retrieval.idf_weights(conn, query_groups, indexes, counts)
    now_epoch = int(clock.parse(now).timestamp())
    # the words rare in the home (their matches over every index) lend what their rows name
    rare = [position for position in range(len(query_groups))
            if 0 < sum(counts[index][position] for index, _ in indexes) <= learned.LOCAL_ROWS]
    memo, held, scores = {}, {}, {}  # per text: its tokens, its learned terms, its coverage (one search)
    extra = _lent(conn, found, query_groups, extra, rare, surfaces, params, memo, held)
    coverage_of = retrieval.coverage_of(query_groups, idf, extra, memo)

    def covered(text):
        value = scores.get(text)
        if value is None:
            value = scores[text] = coverage_of(text)
        return value

    boost = _feedback(conn, found, covered, query_groups, surfaces, params, held)

    def scored(row):
        age = row[_EPOCH]
        coverage = covered(row[_TEXT])
        return round((coverage + boost(row[_TEXT], coverage)) *
                     retrieval.decay(None if age is None else (now_epoch - age) // 3600), 6)

    hits = []
    for row in found:
        score = scored(row)
        if score > 0:
            hits.append(_hit(row, include_history, score))
    if include_history or not hits:  # with history the replaced rows show themselves
        return _best(hits, limit)
    from mindos.memory import history  # lazy: the change behind each top answer, for current-row searches

    ranked = history.with_history(conn, _best(hits, len(hits)), now=now, params=params,
                                  surfaces=[_Surface(kind, scoped, False) for kind in ("note", "memory", "handoff")],
                                  make_hit=lambda row: _hit(row, False, scored(row)))
    return ranked[:limit]


# Pseudo-relevance feedback.  The FEEDBACK_DOCS best first-pass answers (current rows whose
# coverage is at least FEEDBACK_FLOOR of the best's) each lend their FEEDBACK_TERMS rarest
# distinctive words (learned as occurring in 2..FEEDBACK_COMMON rows, none a query word), each
# weighed by its rarity (ln(1 + N/df)).  Those words fetch the rows that share them, rarest first
# (the rows holding them all, then each word's own newest rows, so a crowd of newer rows
# sharing one common word cannot keep the answer out), and a candidate gains up to
# FEEDBACK_WEIGHT of a feedback row's coverage for the weighted share of that row's words it
# holds, saturating at FEEDBACK_SATURATION of them: a note rarely repeats every word of the
# chatter that names it, so one holding half the weight of a row's distinctive words (two or
# three of five) is as much about that row's subject as one holding all five, and gains the
# whole FEEDBACK_WEIGHT (a linear share left such an answer below any row matching a single
# query word once a project had dozens more rows mentioning the query's words):
# every candidate the best answer's share, and a row the query's words match less than
# FEEDBACK_UNMATCHED of another feedback row's coverage the best of that row's share too.  The
# best answer holds its own words, so it stays first; what it names (the team that owns a
# service, the change behind a value) ranks with it; and when a near-miss outranks the row
# written in the question's words, what that row names in other words still surfaces.
FEEDBACK_DOCS = 3
FEEDBACK_TERMS = 5
FEEDBACK_COMMON = 20
FEEDBACK_WEIGHT = 0.5
FEEDBACK_SATURATION = 0.5  # the share of a feedback row's weighted words that earns all of FEEDBACK_WEIGHT
FEEDBACK_CANDIDATES = 10
FEEDBACK_FLOOR = 0.3
FEEDBACK_UNMATCHED = 0.5


def _lent(conn, found, query_groups, extra, rare, surfaces, params, memo=None, held=None):
    """``extra`` with what the current candidates of ``found`` name beside several of the
    query's ``rare`` words (:func:`mindos.memory.learned.local_expansions`), after adding to ``found``
    (in place) the newest few rows per surface naming the words newly lent
    (learned.EXTRA_CANDIDATES): the answer those rows talk about in other words."""
    from mindos.memory import learned  # lazy: loaded by memory_search already

    if len(rare) < learned.LOCAL_AGREE:  # nothing could be lent: no candidate is read
        return extra
    merged = learned.local_expansions(conn, query_groups, [row[_TEXT] for row in found if not row[_OUTDATED]], extra,
                                      rare, memo, held)
    fresh = {}
    for position, others in merged.items():
        known = {word for word, _ in extra.get(position, ())}
        words = [(word, weight) for word, weight in others if word not in known]
        if words:
            fresh[position] = words
    if fresh:
        seen = {(row[0], row[_ID]) for row in found}
        for surface in surfaces:
            for row in surface.fetch(conn, [learned.expression(fresh)], {**params, "cap": learned.EXTRA_CANDIDATES}):
                if (row[0], row[_ID]) not in seen:
                    seen.add((row[0], row[_ID]))
                    found.append(row)
    return merged


def _no_boost(text, coverage):
    return 0.0


def _feedback(conn, found, covered, query_groups, surfaces, params, held=None):
    """The feedback boost (a function of a row's text and its coverage; see the comment
    above), after adding
    the rows the feedback words match to ``found`` (in place; ``surfaces``: memory-search's
    :class:`_Surface` per kind; ``held``: the search's memo of each text's learned terms).  No
    boost when nothing was learned or no feedback row has a distinctive word."""
    from mindos.memory import learned  # lazy: loaded by memory_search already

    if not found or not learned.has(conn):
        return _no_boost
    current = [row for row in found if not row[_OUTDATED]]
    if not current:
        return _no_boost
    ranked = sorted((((-covered(row[_TEXT]), row[0], str(row[_ID])), row) for row in current),
                    key=lambda pair: pair[0])[:FEEDBACK_DOCS]
    top = -ranked[0][0][0]
    if top <= 0:
        return _no_boost
    docs = [(-key[0], learned.terms(row[_TEXT])) for key, row in ranked if -key[0] >= FEEDBACK_FLOOR * top]
    words = []
    for _, terms in docs:
        for term in terms:
            if term not in words and not any(group.weight_in({term}, f" {term} ") for group in query_groups):
                words.append(term)
    if not words:
        return _no_boost
    marks = ", ".join("?" * len(words))
    counts = dict(conn.execute(f"SELECT term, df FROM term_df WHERE term IN ({marks})", words).fetchall())
    eligible = {word for word in words if 2 <= counts.get(word, 0) <= FEEDBACK_COMMON}
    if not eligible:
        return _no_boost
    # per feedback row, its FEEDBACK_TERMS rarest eligible terms, each weighed by its rarity
    total = max(learned.rows_learned(conn), 2)
    feedback = []  # (the most it is worth, the weight that earns it, {term: weight}, the coverage bar) per row
    for coverage, terms in docs:  # the best answer's first, even when it has none
        chosen = sorted((counts[term], term) for term in set(terms) & eligible)[:FEEDBACK_TERMS]
        weights = {term: math.log(1 + total / count) for count, term in chosen}
        # the weight a candidate must hold for the whole worth (FEEDBACK_SATURATION of the row's)
        full = FEEDBACK_SATURATION * sum(weights.values())
        feedback.append((FEEDBACK_WEIGHT * coverage, full, weights, FEEDBACK_UNMATCHED * coverage))
    # rarest first: the rows holding every term, then each term's own newest rows
    ordered = [fts.quote(word) for word in sorted({term for _, _, weights, _ in feedback for term in weights},
                                                   key=lambda word: (counts[word], word))]
    if not ordered:
        return _no_boost
    seen = {(row[0], row[_ID]) for row in found}
    for surface in surfaces:
        for row in surface.fetch(conn, ordered, {**params, "cap": FEEDBACK_CANDIDATES}):
            if (row[0], row[_ID]) not in seen:
                seen.add((row[0], row[_ID]))
                found.append(row)

    def boost(text, coverage):
        # the best answer's share, or the best of another feedback row's for a row the query's
        # words match far less than that row (each worth at most its own coverage): what a
        # weaker match names is an answer in other words, never a rival to the best answer
        present = learned.terms_of(text, held)
        return max((worth * min(1.0, sum(weight for word, weight in weights.items() if word in present) / full)
                    for position, (worth, full, weights, below) in enumerate(feedback)
                    if full and (position == 0 or coverage < below)), default=0.0)

    return boost


def vector_rows(kind, scoped):
    """``(sql, params)``: the current rows of ``kind`` in scope with a stored vector from
    ``:encoder``, as ``(id, vector)`` (the hit's id: a memory's text id).  Params: now,
    project, encoder."""
    index, _, joins, scope, current, _, _ = _SURFACES[kind]
    spec = fts.index(index)
    alias = spec.alias
    sql = (f"SELECT {alias}.id, e.vector FROM embeddings e JOIN {spec.table} {alias} ON {alias}.{spec.rowid} = e.row_id"
           f"{joins} WHERE e.surface = :surface AND e.encoder = :encoder{scope if scoped else ''}{current}")
    return sql, {"surface": kind}


def _rows_by_id(conn, kind, ids, now):
    """The hit rows of ``kind`` with these ids (current or not), as candidate tuples."""
    if not ids:
        return []
    surface = _Surface(kind, False, True)
    marks = ", ".join("?" * len(ids))
    sql = (f"SELECT {surface.columns} FROM {surface.table}{surface.joins}"
           f" WHERE {surface.spec.alias}.id IN ({marks})").replace(":now", "?")
    return db.tuples(conn).execute(sql, [now] * surface.columns.count(":now") + list(ids)).fetchall()


def semantic_search(conn, query, *, project=None, scope=None, limit=10, now=None, env=None):
    """``memory-search --semantic``: the lexical ranking and the vector ranking of the
    configured encoder fused by reciprocal rank (:mod:`mindos.memory.embed`).  Each hit as
    memory-search's, ``score`` the fused score, plus ``ranks`` ({lexical, vector}: its rank
    in each, null where it is absent); a lexical hit keeps its ``change`` / ``history_of``.
    ``env``: where the encoder is named (:func:`mindos.memory.embed.configured`; None: the
    process environment)."""
    from mindos.memory import embed  # lazy: the semantic layer loads only when asked for

    now = now or clock.now_iso()
    limit = validate.positive_int(limit, "--limit", maximum=MAX_LIMIT)
    lexical = memory_search(conn, query, project=project, scope=scope, limit=max(limit, embed.POOL), now=now)
    scoped = (scope or ("project" if project else "global")) == "project"
    project = validate.identifier(project, "--project") if project else None
    vectors = embed.vector_ranking(conn, query.strip(), project=project, scoped=scoped, now=now, rows_sql=vector_rows,
                                 env=env)
    by_key = {(hit["kind"], hit["id"]): hit for hit in lexical}
    fused = embed.fuse(lexical, vectors, limit)
    missing = {}
    for key, _, _, _ in fused:
        if key not in by_key:
            missing.setdefault(key[0], []).append(key[1])
    for kind, ids in missing.items():
        for row in _rows_by_id(conn, kind, ids, now):
            by_key[(kind, row[_ID])] = _hit(row, False)
    hits = []
    for key, score, lexical_rank, vector_rank in fused:
        hit = dict(by_key[key])
        hit["score"] = score
        hit["ranks"] = {"lexical": lexical_rank, "vector": vector_rank}
        hits.append(hit)
    return hits


def _substring_search(conn, query_groups, scoped, project, limit, include_history, now):
    """memory-search on a SQLite without FTS5: every surface's rows in which any query word
    occurs as a substring of an indexed column, CANDIDATES newest per surface, merged current
    first, then newest first (kind, id on ties).  The hits of :func:`memory_search` minus
    ``score``."""
    words = [group.word for group in query_groups]
    found = []
    for kind in SURFACES:
        surface = _Surface(kind, scoped, include_history)
        spec = surface.spec
        like, params = fts.like_any([f"{spec.alias}.{column}" for column in spec.columns], words, prefix="word")
        found.extend(db.tuples(conn).execute(surface.substring(like), {"now": now, "project": project,
                                                                     "cap": retrieval.CANDIDATES, **params}).fetchall())
    return _best([_hit(row, include_history) for row in found], limit)


def plain_bm25_search(conn, query, *, project=None, include_outdated=True, limit=10, now=None):
    """The baseline the evaluation compares against: the raw query tokens OR-combined in each
    index, BM25 scores merged as they are, no stems, synonyms, recency or supersession
    awareness (outdated rows included unless ``include_outdated`` is false)."""
    now = now or clock.now_iso()
    expression = fts.query(query, "OR")  # the raw tokens: no stems, no synonyms
    if expression is None:
        return []
    hits = []
    for kind in SURFACES:
        sql = _Surface(kind, project is not None, include_outdated).bm25()
        rows = conn.execute(sql, {"now": now, "expr": expression, "project": project}).fetchall()
        hits.extend({"kind": row["kind"], "id": row["id"], "score": row["bm25"], "outdated": bool(row["outdated"])}
                    for row in rows)
    hits.sort(key=lambda h: (h["score"], h["kind"], str(h["id"])))
    return hits[:limit]
