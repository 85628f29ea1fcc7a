"""Learned term associations: what the home's own text says goes together.

A shipped synonym table knows ``db`` means "database"; it cannot know that in this home
"consumers" are talked about with "lag" and "enrichment".  This module learns such
associations from the home's own notes, memories, handoffs and facts, standard library
only, and memory-search uses them to bridge vocabulary gaps (:func:`associates`).

Design decisions
  * **Co-occurrence counts in SQLite.**  Each row's text becomes its distinct terms (the
    retrieval engine's words, stopwords and numbers dropped, at most MAX_TERMS), ``term_df``
    numbers the terms and counts the rows each occurs in, and ``term_pairs`` counts (by term
    number, so a pair costs a few bytes), in both directions, the
    rows in which two terms occur within WINDOW terms of each other (a window, not the
    whole row: the pairs a row adds stay linear in its length, and nearby words are the
    ones that are about the same thing).  Integer counts: the learned state is exactly the
    same whatever order the rows were learned in.
  * **Learned on write, bounded.**  ``learned_upto`` keeps, per surface, the highest row id
    learned.  Every note, memory, handoff and fact write learns the rows past it in the
    same transaction (:func:`catch_up`), at most CATCH_UP rows per surface per call, so a
    write costs a few hundred small upserts and a home filled behind the engine's back
    (an import, a restore) is learned a little on every write.  ``fts-rebuild`` relearns
    everything at once (:func:`rebuild`).
  * **Association strength** of ``a`` and ``b``: ``n(a,b) / sqrt(df(a) * df(b))`` (the
    cosine of their row sets' overlap, through the window).  A term keeps its
    MAX_ASSOCIATES strongest associates seen in at least MIN_PAIR rows (a rare word, in at
    most RARE_DF rows, in at least one: its few pairs are all the evidence a small home has,
    and a word seen in a handful of rows has few) and at least MIN_STRENGTH strong.  Terms found in more than COMMON_SHARE of the learned rows (and
    more than COMMON_FLOOR rows) are not expanded: a word everything carries has no
    meaning to lend.
  * **Cheap to read.**  A query reads ``term_df`` for its words (one statement), the pair
    rows of its MAX_EXPANDED rarest expandable words (a primary-key range each, the first
    PAIR_ROWS rows seen in enough rows (:func:`pair_floor`), in term-number order), and the df of the
    candidates (one statement per 500).  Identical state gives identical associations:
    every ordering ends on the term.
  * **Whole rows at query time, where the query agrees.**  The stored window sees only
    neighbours; chatter that names a symptom and its cause in one sentence puts them further
    apart.  :func:`local_expansions` reads the search's own candidate rows whole: the rows
    holding a query word rare in the home (at most LOCAL_ROWS rows) lend the words they name
    when the rows of at least LOCAL_AGREE query words name them (agreement: one query word's
    chance neighbours are not lent), strength as for stored pairs.  Nothing is stored, and a
    query of common words reads nothing more.

Measured on bench/bench.py's recall home (10k tasks, 50k notes, 10k memories, 5k facts, 5k
handoffs; Python 3.11.7, callgrind instruction counts with warm caches against
``python3 -c "import sqlite3, json, argparse"``): ``fts-rebuild`` learns its 70k rows in
about 7 s into 11.4 MB (16 % of the database); ``memory-search`` costs 1.02-1.04x the floor
(1.01x before), 1.13x for a 12-word query of mid-frequency words; a ``note`` write costs
about 4M instructions more (2 %).  Lending a rare word's pairs seen once (RARE_DF) and
memory-search's feedback from three answers: 1.228x on ``python3 bench/recall_cost.py --calls
3`` (1.221x before); the stored state is the same.  Lending from the candidates (and one
tokenization per candidate per search): 1.249x on the same command, as before, whose queries'
words are all common there; a query of rare words that lends pays about 2M instructions more
(0.02x of the floor).
"""

import math

from mindos.memory import retrieval
from mindos.store import fts

MAX_TERMS = 32
WINDOW = 2
CATCH_UP = 64
MIN_PAIR = 2
RARE_DF = 20  # a query word in at most this many rows lends even its pairs seen once (see pair_floor)
MIN_STRENGTH = 0.2
ONCE_STRENGTH = 0.5  # the strength a pair seen once needs (both words in about two rows or fewer)
MAX_ASSOCIATES = 3
PAIR_ROWS = 200
MAX_EXPANDED = 4  # query words expanded per search, rarest first
COMMON_SHARE = 0.05
COMMON_FLOOR = 50
MIN_LENGTH = 3
EXTRA_CANDIDATES = 10  # rows per surface memory-search reads through associates alone
W_ASSOCIATE = 0.5  # what an associate of strength 1.0 is worth of its query word's group

# Per surface: the table, its row id, and the text learned from it (the indexed text).
SURFACES = {
    "note": ("notes", "id", "content"),
    "memory": ("memories", "seq", "content"),
    "handoff": ("handoffs", "id", "objective || ' ' || status || ' ' || decisions || ' ' || next_actions"),
    "fact": ("facts", "id", "subject || ' ' || predicate || ' ' || object"),
}


def terms(text):
    """The learnable terms of ``text`` in order of first occurrence: the retrieval engine's
    words minus stopwords, numbers and words shorter than MIN_LENGTH, at most MAX_TERMS."""
    found = []
    seen = set()
    for word in retrieval.words(text or ""):
        for part in word.replace("-", " ").replace("_", " ").split():
            if len(part) < MIN_LENGTH or part in retrieval.STOPWORDS or part.isdigit() or part in seen:
                continue
            seen.add(part)
            found.append(part)
            if len(found) == MAX_TERMS:
                return found
    return found


def terms_of(text, memo=None):
    """The set of :func:`terms` of ``text``; ``memo`` (a dict) keeps it per text for one search."""
    found = None if memo is None else memo.get(text)
    if found is None:
        found = frozenset(terms(text))
        if memo is not None:
            memo[text] = found
    return found


def _pairs(sequence):
    """The distinct ordered pairs of terms at most WINDOW apart in ``sequence``, both ways."""
    pairs = set()
    for position, term in enumerate(sequence):
        for other in sequence[position + 1: position + 1 + WINDOW]:
            if other != term:
                pairs.add((term, other))
                pairs.add((other, term))
    return pairs


def _learn_texts(conn, texts):
    """Add the counts of ``texts`` (each one row's text)."""
    df, pairs = {}, {}
    for text in texts:
        sequence = terms(text)
        for term in sequence:
            df[term] = df.get(term, 0) + 1
        for pair in _pairs(sequence):
            pairs[pair] = pairs.get(pair, 0) + 1
    if not df:
        return
    conn.executemany("INSERT INTO term_df(term, df) VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET df = df + excluded.df",
                     sorted(df.items()))
    ids = _ids(conn, sorted(df))
    if pairs:
        conn.executemany("INSERT INTO term_pairs(term, other, n) VALUES (?, ?, ?)"
                         " ON CONFLICT(term, other) DO UPDATE SET n = n + excluded.n",
                         sorted((ids[a], ids[b], n) for (a, b), n in pairs.items()))


def _ids(conn, words):
    """``{term: id}`` for ``words`` (those learned)."""
    found = {}
    for start in range(0, len(words), 500):
        chunk = words[start:start + 500]
        found.update(conn.execute(f"SELECT term, id FROM term_df WHERE term IN ({', '.join('?' * len(chunk))})",
                                  chunk).fetchall())
    return found


def has(conn):
    """True when the database holds the learned tables (migration applied)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'term_pairs'").fetchone() \
        is not None


def after_write(conn, rows=0):
    """A write's share of the learning: :func:`catch_up` when the tables exist.  ``rows``: a
    batch writer's row count (memory-import, memory-ingest-git), learned in the same one pass
    on top of the usual share, instead of one pass per row."""
    if has(conn):
        catch_up(conn, CATCH_UP + rows)


def catch_up(conn, limit=CATCH_UP):
    """Learn the rows written since the last call, at most ``limit`` per surface; run inside
    the caller's write transaction.  Returns how many rows were learned."""
    marks = dict(conn.execute("SELECT surface, upto FROM learned_upto").fetchall())
    learned = 0
    for surface, (table, key, text) in SURFACES.items():
        upto = marks.get(surface, 0)
        rows = conn.execute(f"SELECT {key}, {text} FROM {table} WHERE {key} > ? ORDER BY {key} LIMIT ?",
                            (upto, limit)).fetchall()
        if not rows:
            continue
        _learn_texts(conn, [row[1] for row in rows])
        conn.execute("INSERT INTO learned_upto(surface, upto) VALUES (?, ?)"
                     " ON CONFLICT(surface) DO UPDATE SET upto = excluded.upto", (surface, rows[-1][0]))
        learned += len(rows)
    return learned


def rebuild(conn, batch=2000):
    """Forget everything learned and learn every row again (``fts-rebuild``); inside the
    caller's write transaction.  Returns ``{"rows", "terms", "pairs"}``."""
    conn.execute("DELETE FROM term_df")
    conn.execute("DELETE FROM term_pairs")
    conn.execute("DELETE FROM learned_upto")
    total = 0
    while True:
        learned = catch_up(conn, batch)
        total += learned
        if learned == 0:
            break
    return {"rows": total, "terms": conn.execute("SELECT count(*) FROM term_df").fetchone()[0],
            "pairs": conn.execute("SELECT count(*) FROM term_pairs").fetchone()[0]}


def rows_learned(conn):
    """How many rows have been learned (the df scale): the sum of the surfaces' marks is an
    upper bound; the largest df is a lower one.  Their rows counted exactly is too dear per
    query, so the marks are used: ids are dense in practice."""
    return conn.execute("SELECT coalesce(sum(upto), 0) FROM learned_upto").fetchone()[0]


def associates(conn, words, rare=True):
    """``{word: [(term, strength), ...]}``: each of ``words``' strongest learned associates,
    strongest first (see the module docstring); words without any are left out.  ``rare``:
    a rare word's pairs seen once count (:func:`pair_floor`; query expansion).  The built-in
    encoder passes False: a row's vector built from every rare word's chance neighbours is
    mostly the row's own words again, and the pairs seen in MIN_PAIR rows are what make two
    rows alike."""
    floor_of = pair_floor if rare else (lambda df: MIN_PAIR)
    if not words or not has(conn):
        return {}
    total = rows_learned(conn)
    if not total:
        return {}
    common = max(COMMON_FLOOR, COMMON_SHARE * total)
    marks = ", ".join("?" * len(words))
    known = {term: (ident, count) for term, ident, count in conn.execute(
        f"SELECT term, id, df FROM term_df WHERE term IN ({marks})", list(words)).fetchall()}
    wanted = {}
    eligible = sorted((count, word) for word, (_, count) in known.items() if floor_of(count) <= count <= common)
    for count, word in eligible[:MAX_EXPANDED]:
        ident = known[word][0]
        rows = conn.execute("SELECT other, n FROM term_pairs WHERE term = ? AND n >= ? LIMIT ?",
                            (ident, floor_of(count), PAIR_ROWS)).fetchall()
        if rows:
            wanted[word] = rows
    others = sorted({other for rows in wanted.values() for other, _ in rows})
    named = {}
    for start in range(0, len(others), 500):
        chunk = others[start:start + 500]
        named.update((ident, (term, count)) for ident, term, count in conn.execute(
            f"SELECT id, term, df FROM term_df WHERE id IN ({', '.join('?' * len(chunk))})", chunk).fetchall())
    found = {}
    for word, rows in wanted.items():
        own = known[word][1]
        strongest = _strongest((term, n, own, count) for term, count, n in
                               ((*named.get(other, (None, 0)), n) for other, n in rows)
                               if term is not None and term not in words and count <= common)
        if strongest:
            found[word] = strongest
    return found


def pair_floor(df):
    """The fewest rows a pair must be seen in to count, for a word seen in ``df`` rows: once for
    a rare word (at most RARE_DF rows: in a young or small home its few neighbours are all
    the evidence there is, and its pairs number at most 2 x WINDOW per row, within
    PAIR_ROWS), MIN_PAIR for any other (its pairs seen once are many and mostly chance)."""
    return 1 if df <= RARE_DF else MIN_PAIR


def _strongest(candidates):
    """``[(term, strength)]``, the MAX_ASSOCIATES strongest of ``candidates`` (``(term, n,
    df of the word, df of term)``) at MIN_STRENGTH or more (ONCE_STRENGTH for a pair seen in
    fewer than MIN_PAIR rows: one meeting says something only between rare words), strongest
    first, ties by term."""
    scored = []
    for term, n, own, count in candidates:
        strength = n / math.sqrt(own * count)
        if strength >= (MIN_STRENGTH if n >= MIN_PAIR else ONCE_STRENGTH):
            scored.append((-round(strength, 6), term))
    scored.sort()
    return [(term, -negative) for negative, term in scored[:MAX_ASSOCIATES]]


def every_associate(conn):
    """``(df, rows, context)`` for the whole home, read in one pass over the learned tables
    (the built-in encoder of :mod:`mindos.memory.embed` over many rows): ``df`` maps each
    term to its row count, ``rows`` is the rows learned, ``context`` maps a term to its
    associates as :func:`associates` gives them with ``rare=False`` (the same thresholds and
    ordering)."""
    if not has(conn):
        return {}, 0, {}
    names, df = {}, {}
    for ident, term, count in conn.execute("SELECT id, term, df FROM term_df"):
        names[ident], df[term] = term, count
    total = rows_learned(conn)
    common = max(COMMON_FLOOR, COMMON_SHARE * total)
    pairs = {}
    for term_id, other_id, n in conn.execute("SELECT term, other, n FROM term_pairs WHERE n >= ?", (MIN_PAIR,)):
        term, other = names.get(term_id), names.get(other_id)
        if term is None or other is None or not MIN_PAIR <= df[term] <= common or df[other] > common:
            continue
        pairs.setdefault(term, []).append((other, n, df[term], df[other]))
    context = {}
    for term, candidates in pairs.items():
        strongest = _strongest(candidates)
        if strongest:
            context[term] = strongest
    return df, total, context


def expansions(conn, query_groups):
    """``{group position: [(associate, weight), ...]}`` for memory-search: each group's word's
    associates (:func:`associates`), worth ``W_ASSOCIATE x strength`` of the group; words a
    group already matches (its own terms) are left out.  Empty when nothing was learned."""
    found = associates(conn, [group.word for group in query_groups])
    extra = {}
    for position, group in enumerate(query_groups):
        others = [(word, round(W_ASSOCIATE * strength, 6)) for word, strength in found.get(group.word, ())
                  if group.weight_in({word}, f" {word} ") == 0]
        if others:
            extra[position] = others
    return extra


def expression(extra):
    """An FTS5 MATCH expression ORing every associate of ``extra`` (each quoted)."""
    words = sorted({word for others in extra.values() for word, _ in others})
    return " OR ".join(fts.quote(word) for word in words)


LOCAL_ROWS = 20  # a query word held by more candidate rows than this lends nothing (local_expansions)
LOCAL_ASSOCIATES = 5
LOCAL_MIN_STRENGTH = 0.3
LOCAL_AGREE = 2  # how many query words' candidate rows must name a term for it to be lent


def local_expansions(conn, query_groups, texts, extra=None, rare=None, memo=None, held=None):
    """``{group position: [(term, weight), ...]}``: ``extra`` (the stored associates of
    :func:`expansions`) with each query word's associates read at query time from the search's
    own candidate rows (``texts``), whole rows rather than the stored window, and kept only
    where the query's words agree.

    The candidates holding a query word (itself or a stem) name, anywhere in the row, what
    that word goes with in this home; only the words of ``rare`` (group positions; None: every
    group) are read, and a word more than LOCAL_ROWS candidates hold is skipped: a common
    word's rows say nothing in particular (memory-search passes the groups matching at most
    LOCAL_ROWS rows of the home, so a query of common words tokenizes nothing).  A term counts for the word when the
    rows of at least LOCAL_AGREE of the query's words name it (one row holding two query words
    counts for both: chatter in the question's words that also names the answer's), when it is
    in more rows than those (it can lead to another row) and is none of the query's words.
    Its strength is ``n / sqrt(df(word) * df(term))`` as for stored pairs (n: the candidates
    holding both), at least LOCAL_MIN_STRENGTH; the LOCAL_ASSOCIATES strongest per word are
    worth ``W_ASSOCIATE x strength``, a term both ways keeping its best weight.  Nothing is
    stored, so the learned state does not grow; identical rows give identical associates
    (every ordering ends on the term).  ``memo`` and ``held``: the search's per-text memos of
    :func:`mindos.memory.retrieval.read_text` and :func:`terms_of`."""
    merged = {position: list(others) for position, others in (extra or {}).items()}
    positions = range(len(query_groups)) if rare is None else sorted(rare)
    if not texts or not positions or not has(conn):
        return merged
    read = [retrieval.read_text(text, memo) for text in texts]
    rows = []  # (group position, group, the candidates holding its word or a stem of it)
    for position in positions:
        group = query_groups[position]
        mine = [index for index, (tokens, joined) in enumerate(read) if group.weight_in(tokens, joined) >= retrieval.W_STEM]
        if 0 < len(mine) <= LOCAL_ROWS:
            rows.append((position, group, mine))
    if not rows:
        return merged
    counts = {}
    for position, group, mine in rows:
        tally = {}
        for index in mine:
            for term in terms_of(texts[index], held):
                tally[term] = tally.get(term, 0) + 1
        counts[position] = tally
    wanted = sorted({term for tally in counts.values() for term in tally} | {group.word for _, group, _ in rows})
    df = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        df.update(conn.execute(f"SELECT term, df FROM term_df WHERE term IN ({', '.join('?' * len(chunk))})",
                               chunk).fetchall())
    support = {}
    for position, group, mine in rows:
        for term in counts[position]:
            support[term] = support.get(term, 0) + 1
    for position, group, mine in rows:
        own = max(df.get(group.word, 0), len(mine))
        scored = []
        for term, n in counts[position].items():
            count = df.get(term, 0)
            if count <= n or support[term] < LOCAL_AGREE:
                continue
            strength = n / math.sqrt(own * count)
            if strength >= LOCAL_MIN_STRENGTH and not any(other.weight_in({term}, f" {term} ") for other in query_groups):
                scored.append((-round(strength, 6), term))
        scored.sort()
        best = dict(merged.get(position, ()))
        for negative, term in scored[:LOCAL_ASSOCIATES]:
            weight = round(W_ASSOCIATE * -negative, 6)
            if weight > best.get(term, 0):
                best[term] = weight
        if best:
            merged[position] = sorted(best.items(), key=lambda item: (-item[1], item[0]))
    return merged
