"""Full-text indexes: each declared once, searched, checked and rebuilt one way.

Every FTS5 index of the schema is an external-content table kept in step by triggers
declared with its content table (see ``schema.sql``).  :data:`INDEXES` names each one with
its content table, rowid column, indexed columns and the alias queries use; a new domain
adds its index there and gets search, drift detection and rebuild for free.

Design decisions
  * **User text never becomes FTS5 syntax.**  :func:`query` quotes every word token, so
    operators, quotes, ``*``, ``NEAR(`` and column filters typed by a user are plain words.
  * **One search path with a LIKE twin.**  :func:`text_search` runs the BM25 query when the
    index exists and falls back to an escaped substring match over the same columns when
    the SQLite build has no FTS5, with the same filters and shape minus ``score``.  Ranked
    paths that OR the query's words (pack sections, memory-search) fall back the same way
    through :func:`like_any`: any word as a substring of any indexed column.
  * **Drift is read from the index itself.**  ``count(*)`` on an external-content table
    reads through to the content table and cannot see drift; :func:`drift` lists the rowids
    the inverted index really holds (``fts5vocab``) and compares them with the content rows.
"""

import sqlite3

from mindos.core.text import words
from mindos.store import db


class Index:
    """One index.  name: the FTS5 table; table: its external content table; rowid: the
    content table's column FTS5 uses as rowid; columns: indexed columns, in index order;
    alias: the content table's alias in search queries.  (A plain class, not a namedtuple,
    which is costly to create on every call.)"""

    __slots__ = ("name", "table", "rowid", "columns", "alias")

    def __init__(self, name, table, rowid, columns, alias):
        self.name, self.table, self.rowid, self.columns, self.alias = name, table, rowid, columns, alias


INDEXES = {
    "tasks_fts": Index("tasks_fts", "tasks", "seq",
                       ("id", "project", "title", "description", "next_action", "blocked_reason"), "t"),
    "notes_fts": Index("notes_fts", "notes", "id", ("content",), "n"),
    "handoffs_fts": Index("handoffs_fts", "handoffs", "id", ("objective", "status", "from_agent", "to_agent"), "h"),
    "memories_fts": Index("memories_fts", "memories", "seq", ("content", "tags"), "m"),
    "facts_fts": Index("facts_fts", "facts", "id", ("subject", "predicate", "object", "source"), "f"),
    "session_messages_fts": Index("session_messages_fts", "session_messages", "id", ("content",), "m"),
    # substring search's trigram index (tokenize='trigram'): searched through TRIGRAMS only
    "tasks_trigram_fts": Index("tasks_trigram_fts", "tasks", "seq",
                               ("id", "project", "title", "description", "next_action", "blocked_reason"), "t"),
    "notes_trigram_fts": Index("notes_trigram_fts", "notes", "id", ("content",), "n"),
    # substring search's pair index (one token per space: the three characters either side,
    # over the view tasks_pairs; detail=none): searched through PAIRS only
    "tasks_pairs_fts": Index("tasks_pairs_fts", "tasks", "seq", ("pairs",), "t"),
}

# The trigram index beside a word index: the same content table and columns, every run of
# three characters indexed (case folded), so it names exactly the rows holding a text of
# three characters or more as a substring, whatever its words (see :func:`text_search`).
TRIGRAMS = {"tasks_fts": "tasks_trigram_fts", "notes_fts": "notes_trigram_fts"}

# The pair index beside a word index (schema 24): for every space of an indexed column, the
# three characters before it, the space and the three after it, as one token (ASCII case
# folded, as LIKE folds, and hex-encoded: see mindos.store.migrations.phrase_pairs).  Every
# row holding a text with a space that has three characters on each side inside the text
# holds that run of seven as a token, so a rare phrase of common words names few rows
# (:func:`pair_probe`), where each of its trigrams names many.
PAIRS = {"tasks_fts": "tasks_pairs_fts"}
# the indexes whose documents hold no word tokens: drift is read from their size records
_CHARACTER_INDEXES = frozenset(TRIGRAMS.values()) | frozenset(PAIRS.values())


def index(name):
    """The declaration of index ``name`` (never user text: a bad name is a bug)."""
    try:
        return INDEXES[name]
    except KeyError:
        raise ValueError(f"not an FTS index of this schema: {name!r}") from None


def tokens(text):
    """The word tokens of ``text`` (what FTS5's unicode61 tokenizer would index), as written:
    the words of a query, each quoted into a MATCH term.  (What the index holds, folded,
    exactly: :func:`indexed_tokens`.)

    Letters and digits only: unicode61 treats '_' as a separator, so a quoted "rate_limit"
    token would silently match nothing rather than "rate limit".
    """
    return words(text)


def quote(term):
    """``term`` as one FTS5 string (double quotes, inner quotes doubled): whatever it holds
    (operators, ``*``, ``NEAR(``, ``column:``, quotes) is matched as plain text.  Every MATCH
    term built from user text is quoted here."""
    return '"' + term.replace('"', '""') + '"'


def query(text, operator="AND"):
    """Quote every token of user text into a safe FTS5 MATCH expression (None when tokenless)."""
    found = tokens(text)
    if not found:
        return None
    return f" {operator} ".join(quote(token) for token in found)


def match(name, param="?"):
    """The one MATCH condition: ``<name> MATCH <param>`` for the declared index ``name``.
    The expression is always bound (``param``: ``?`` or a named ``:placeholder``), never
    spliced into the SQL; build it with :func:`query` / :func:`quote`."""
    return f"{index(name).name} MATCH {param}"


def has(conn, name):
    """True when the FTS5 index ``name`` exists in this database (cached per connection)."""
    if conn._fts_tables is None:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name LIKE '%\\_fts' ESCAPE '\\'")
        conn._fts_tables = {row[0] for row in rows}
    return name in conn._fts_tables


def like_pattern(text):
    """A ``LIKE ... ESCAPE '\\'`` pattern matching ``text`` as a plain substring."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def substring_probe(text):
    """An FTS5 MATCH expression every row holding ``text`` as a plain substring (LIKE's
    match: ASCII letters equal in either case) must satisfy, or None when ``text`` gives
    none.  Substring search reads only the rows it names instead of every row.

    Why it holds: a word of ``text`` with a separator before it, inside ``text``, starts a
    token wherever ``text`` occurs, and one with a separator after it too is that whole
    token; such words follow each other in the text with only separators between them, so
    they are consecutive tokens there.  The expression is those words as one phrase, the
    last a prefix unless ``text`` ends in a separator.  (The first word, when ``text``
    starts inside a word, may be the end of a longer token: it is left out.)  ASCII only,
    where the tokenizer is fixed (letters and digits are token characters, the rest
    separate); any other text, or one without such a word ("cache"), gives None."""
    if not text or not text.isascii():
        return None
    import re  # lazy: loaded already by mindos.core.text

    found = [m for m in re.finditer(r"[0-9A-Za-z]+", text) if m.start() > 0]
    if not found:
        return None
    phrase = quote(" ".join(m.group().lower() for m in found))
    return phrase if found[-1].end() < len(text) else phrase + "*"


def like_any(columns, words, *, prefix=None):
    """``(sql, params)``: a condition true when any of ``words`` occurs as a plain substring
    (case-insensitive for ASCII, as LIKE is) in any of ``columns``: the any-token twin of a
    ranked OR query on a SQLite without FTS5.  ``(None, [])`` when there is no word.

    Placeholders are positional, or named ``:<prefix>0``, ``:<prefix>1``... when ``prefix``
    is given (``params`` is then a dict), for statements that bind by name.
    """
    words = list(dict.fromkeys(words))
    if not words:
        return None, ([] if prefix is None else {})
    terms, patterns = [], []
    for word in words:
        for column in columns:
            terms.append(f"{column} LIKE {'?' if prefix is None else f':{prefix}{len(patterns)}'} ESCAPE '\\'")
            patterns.append(like_pattern(word))
    params = patterns if prefix is None else {f"{prefix}{i}": pattern for i, pattern in enumerate(patterns)}
    return "(" + " OR ".join(terms) + ")", params


def match_counts(conn, name, expressions, cap, cache=None):
    """How many rows of index ``name`` match each MATCH expression, each counted up to
    ``cap``: the cheap rarity probe behind token selection.

    The expressions come from :func:`query`.  Returns counts aligned with ``expressions``.
    One small statement is prepared once and run per expression: compiling a UNION of a
    dozen counting subqueries cost more than running them.  ``cache`` (a dict) keeps the
    counts already probed and probes only the others: exact while the caller holds one read
    snapshot (:func:`mindos.store.db.read`) across every call sharing it, as a fleet sweep
    rebuilding many packs does.
    """
    index(name)
    if cache is None:
        cache = {}
    missing = [expression for expression in dict.fromkeys(expressions) if (name, expression, cap) not in cache]
    if missing:
        probe = f"SELECT count(*) FROM (SELECT 1 FROM {name} WHERE {match(name)} LIMIT ?)"
        cursor = db.tuples(conn)
        try:
            for expression in missing:
                cache[(name, expression, cap)] = cursor.execute(probe, (expression, cap)).fetchone()[0]
        finally:
            cursor.close()
    return [cache[(name, expression, cap)] for expression in expressions]


def newest_counts(conn, name, expressions, cap, cache):
    """:func:`match_counts` read as each expression's newest ``cap`` rowids: the same counts
    (stored in ``cache`` under the same keys), and the rowids kept there too, for
    :func:`cached_newest`.

    For an expression whose prefix term covers many postings: FTS5 merges every posting of
    every word a prefix term covers before it yields a row, whichever rows are asked for, so
    counting the rows and then reading the newest of them (a related-notes window over one
    common prefix) merged them twice; read so, once."""
    index(name)
    missing = [expression for expression in dict.fromkeys(expressions)
               if (name, expression, cap, "newest") not in cache]
    if missing:
        probe = f"SELECT rowid FROM {name} WHERE {match(name)} ORDER BY rowid DESC LIMIT ?"
        cursor = db.tuples(conn)
        try:
            for expression in missing:
                rowids = [row[0] for row in cursor.execute(probe, (expression, cap))]
                cache[(name, expression, cap, "newest")] = rowids
                cache[(name, expression, cap)] = len(rowids)
        finally:
            cursor.close()
    return [cache[(name, expression, cap)] for expression in expressions]


def cached_newest(cache, name, expression, cap, limit):
    """The newest ``limit`` rowids (``limit`` at most ``cap``) of index ``name`` matching
    ``expression``, newest first, when ``cache`` holds them (:func:`newest_counts` with that
    ``cap``, in the caller's read snapshot): what ``SELECT rowid ... ORDER BY rowid DESC LIMIT
    limit`` returns.  None when it does not."""
    found = None if cache is None or limit > cap else cache.get((name, expression, cap, "newest"))
    return None if found is None else found[:limit]


# FTS5's bm25() constants (k1, b), for the bounded ranking below.
BM25_K1, BM25_B = 1.2, 0.75


def _varint(blob, at):
    """``(value, next offset)``: one SQLite varint of ``blob`` at ``at`` (the encoding FTS5's
    records use: big-endian groups of 7 bits, a 9th byte of 8)."""
    value = 0
    for step in range(9):
        byte = blob[at + step]
        if step == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + step + 1
    return value, at + 9  # unreachable


def totals(conn, name):
    """``(rows, average row length in tokens)`` of index ``name``: FTS5's own totals record
    (what bm25() reads), one row, whatever the size of the index.  ``(0, 0.0)`` when the
    index is absent or empty."""
    spec = index(name)
    if not has(conn, name):
        return 0, 0.0
    found = conn.execute(f"SELECT block FROM {spec.name}_data WHERE id = 1").fetchone()
    blob = found[0] if found else None
    if not blob:
        return 0, 0.0
    rows, at = _varint(blob, 0)
    tokens = 0
    for _ in spec.columns:
        if at >= len(blob):
            break
        size, at = _varint(blob, at)
        tokens += size
    return rows, (tokens / rows if rows else 0.0)


# How FTS5's tokenizer reads each character of a non-ASCII text, learned as texts bring new
# ones (see :func:`indexed_tokens`): code point -> the text it becomes in a token ("" when it
# is dropped, as a combining accent is) or " " for a separator.
_FOLDS = {}


def _learn(chars):
    """Learn how FTS5's tokenizer reads each of ``chars`` (unknown yet).  ASCII is fixed:
    letters fold to lowercase, digits stay, the rest separates.  Every other character is
    asked of SQLite itself, indexed between two letters in an in-memory FTS5 table declared
    as the schema declares its indexes (no tokenizer option: unicode61, diacritics removed):
    one token back means a token character, folded to what sits between the letters; two
    mean a separator.  (A connection of its own, opened for the call: it is rare, and safe
    from any thread.)"""
    probed = []
    for char in chars:
        if char.isascii():
            _FOLDS[ord(char)] = char.lower() if char.isalnum() else " "
        elif 0xD800 <= ord(char) <= 0xDFFF:  # a lone surrogate cannot be bound, nor indexed
            _FOLDS[ord(char)] = " "
        else:
            probed.append(char)
    if not probed:
        return
    scratch = sqlite3.connect(":memory:")
    try:
        scratch.execute("CREATE VIRTUAL TABLE probe USING fts5(text)")
        scratch.execute("CREATE VIRTUAL TABLE probe_terms USING fts5vocab(probe, instance)")
        scratch.executemany("INSERT INTO probe(rowid, text) VALUES (?, ?)", [(ord(c), f"q{c}q") for c in probed])
        found = {}
        for code, term in scratch.execute("SELECT doc, term FROM probe_terms"):
            found.setdefault(code, []).append(term)
    finally:
        scratch.close()
    for char in probed:
        terms = found.get(ord(char), ())
        _FOLDS[ord(char)] = terms[0][1:-1] if len(terms) == 1 else " "


def indexed_tokens(text):
    """The tokens FTS5 indexes for ``text``, in order, exactly as the schema's indexes
    tokenize it (unicode61 with its defaults): letters and digits folded to lowercase, Latin
    diacritics removed (``Café`` and ``Cafe`` plus a combining acute are both ``cafe``), and
    each non-ASCII character a token character or a separator as SQLite's own tables say
    (they follow an older Unicode than Python's, and fold otherwise: ``ς`` is ``σ``, ``İ``
    is ``i``, a Devanagari vowel sign separates).  ASCII text is read here; a non-ASCII
    character is asked of SQLite once per process (:func:`_learn`)."""
    if not text:
        return []
    if text.isascii():
        return words(text.lower())
    unknown = {char for char in set(text) if ord(char) not in _FOLDS}
    if unknown:
        _learn(unknown)
    return [token for token in text.translate(_FOLDS).split(" ") if token]


def _occurrences(tokens, phrase):
    """How many times the token sequence ``phrase`` occurs in ``tokens`` (overlaps counted,
    as FTS5 counts a phrase's positions)."""
    if len(phrase) == 1:
        return tokens.count(phrase[0])
    if not phrase:
        return 0
    first, size = phrase[0], len(phrase)
    return sum(1 for at, token in enumerate(tokens) if token == first and tuple(tokens[at:at + size]) == phrase)


def bm25(terms, hits, rows, average, documents):
    """FTS5's bm25() of each of ``documents`` for the phrases ``terms`` (one per quoted
    phrase of the MATCH expression, repeats kept as FTS5 keeps them), computed here for a
    bounded set of rows: ``hits`` is each term's document frequency, ``rows`` and ``average``
    the index's totals (:func:`totals`).  A document is its indexed text (tokenized here as
    FTS5 does, :func:`indexed_tokens`) or the list of its indexed tokens; a term is folded the
    same way (``Café`` counts ``cafe``).  The formula and constants are FTS5's
    (``idf = log((N - n + 0.5) / (n + 0.5))``, at least 1e-6; more negative = more relevant);
    every document is taken to match every term at least once, as a conjunctive MATCH
    guarantees.  Returns the scores, aligned with ``documents``."""
    import math  # lazy: only a bounded ranking computes scores itself

    phrases = [tuple(indexed_tokens(term)) for term in terms]
    idf = []
    for count in hits:
        value = math.log((rows - count + 0.5) / (count + 0.5)) if rows else 0.0
        idf.append(value if value > 0.0 else 1e-6)
    average = average or 1.0
    scores = []
    for tokens in documents:
        if isinstance(tokens, str):
            tokens = indexed_tokens(tokens)
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * len(tokens) / average)
        score = 0.0
        for phrase, weight in zip(phrases, idf):
            freq = _occurrences(tokens, phrase) or 1
            score += weight * (freq * (BM25_K1 + 1.0)) / (freq + norm)
        scores.append(-1.0 * score)
    return scores


def single_word(expression):
    """The lowercase word when MATCH ``expression`` is one quoted word (what :func:`quote`
    makes of it), else None."""
    if len(expression) < 3 or expression[0] != '"' or expression[-1] != '"':
        return None
    inner = expression[1:-1]
    found = tokens(inner)
    return found[0].lower() if len(found) == 1 and quote(found[0]) == expression else None


def rank_one_word(conn, name, word, rows, text, rowid, weight_hits):
    """``[(score, row)]``: ``rows`` (a window of one word's matches in index ``name``) in the
    order ``ORDER BY bm25(name), rowid`` gives them, best first, each with a BM25 score
    computed here (:func:`bm25`) over ``text(row)``, its indexed text; ``rowid(row)`` is its
    rowid in the index.

    bm25() would first walk every posting of the word to weigh it.  With one word that weight
    multiplies every score alike, so the order is FTS5's whatever weight is used;
    ``weight_hits`` (the word's match count as far as it was counted) sets it, and with it the
    scale of the scores."""
    total, average = totals(conn, name)
    scores = bm25([word], [weight_hits], max(total, len(rows)), average, [text(row) for row in rows])
    return sorted(zip(scores, rows), key=lambda pair: (pair[0], rowid(pair[1])))


RANKED_CHUNK_MAX = 4000  # scored rows joined in one statement at most (two bound values each)


def ranked_rows(conn, name, expression, *, select, joins="", where=(), params=(), ranked_order, limit):
    """The rows :func:`text_search` returns ranked (``expression`` already a MATCH
    expression, ``limit`` given), found with fewer reads: every match is scored first, alone
    (``bm25`` and the rowid), and only the best are joined with their rows and filtered, in
    chunks taken in score order until ``limit`` rows pass the filters.  A common word's
    hundreds of matches no longer each read a content row and its joins to be sorted away.

    The same rows in the same order: a chunk ends only between two different scores, and
    each chunk is sorted by the score, then ``ranked_order``, as the one statement sorts them
    all.  Scores and rows come from one read snapshot."""
    spec = index(name)
    alias = spec.alias
    clauses = "".join(f" AND {clause}" for clause in where)
    found = []
    with db.read(conn):
        cursor = db.tuples(conn)
        try:
            scored = cursor.execute(f"SELECT bm25({name}), rowid FROM {name} WHERE {match(name)}",
                                    (expression,)).fetchall()
        finally:
            cursor.close()
        scored.sort()
        at, size = 0, max(limit, 16)
        while at < len(scored) and len(found) < limit:
            end = min(at + size, len(scored))
            while end < len(scored) and scored[end][0] == scored[end - 1][0]:
                end += 1  # equal scores stay in one chunk: ranked_order settles them there
            part, at, size = scored[at:end], end, min(size * 2, RANKED_CHUNK_MAX)
            values = ", ".join(["(?, ?)"] * len(part))
            bound = [value for score, rowid in part for value in (rowid, score)]
            found += conn.execute(
                f"WITH hit(seq, score) AS (VALUES {values}) SELECT {select}, hit.score AS score FROM hit"
                f" JOIN {spec.table} {alias} ON {alias}.{spec.rowid} = hit.seq {joins} WHERE 1{clauses}"
                f" ORDER BY hit.score, {ranked_order} LIMIT ?", [*bound, *params, limit - len(found)]).fetchall()
    return found


def text_search(conn, name, text, *, select, joins="", where=(), params=(), order, ranked_order, rank=False,
                like_columns=None, limit=None, expression=None, narrow=None, walk_joins=None, walk_index=None):
    """Rows of ``name``'s content table matching user ``text``.

    With ``rank`` and the index present: every token must match, rows come in BM25 order
    (then ``ranked_order``) with a ``score`` column; tokenless text returns [].  Otherwise a
    substring match over ``like_columns`` (default: the indexed columns), in ``order``.
    ``select``, ``joins``, ``where`` and the orders are SQL fragments of the caller, written
    against the index's alias; ``params`` bind the ``where`` fragments.

    ``narrow`` (a row count): a substring search over the indexed columns reads only the
    rows an index names for the text (:func:`_narrowing`: the trigram index beside ``name``
    when there is one and the text has three characters or more, after a short walk in
    ``order`` when there is a ``limit`` and no ``joins``, or ``walk_joins`` (the ``joins``
    written so the content table drives them, ``CROSS JOIN``) and ``walk_index`` (the index
    of the content table giving ``order`` under ``where``, which the walk reads); else the word index's
    :func:`substring_probe` when it names fewer than ``narrow`` rows); the same rows come
    back (``order`` must be a total order: the rows are then read in another order and
    sorted).  No probe: every row is read, as without it.
    """
    spec = index(name)
    alias = spec.alias
    base = f"{spec.table} {alias}"
    if rank and has(conn, name):
        expression = expression or query(text, "AND")
        if expression is None:
            return []
        clauses = [match(name), *where]
        sql = (f"SELECT {select}, bm25({name}) AS score FROM {name} JOIN {base} ON {alias}.{spec.rowid} = {name}.rowid"
               f" {joins} WHERE {' AND '.join(clauses)} ORDER BY score, {ranked_order}")
        bound = [expression, *params]
    else:
        condition, patterns = like_any([f"{alias}.{column}" for column in like_columns or spec.columns], [text])
        clauses = [condition, *where]
        bound = [*patterns, *params]
        found = _narrowing(conn, name, text, narrow) if narrow and like_columns is None else None
        walk = 0 if limit is None else min(limit * WALK_PER_HIT, WALK_MAX)
        if found is not None and found[0] != name:
            # a few candidates are read from the trigram index once, as rowids
            listed = CANDIDATES_LISTED if limit is None else min(limit * LISTED_PER_HIT, CANDIDATES_LISTED)
            rowids = _rowids(conn, found[0], found[1], listed)
            if len(rowids) < listed:
                found = (found[0], rowids)
            elif walk and rowids and (max(rowids) - min(rowids) + 1) * limit > listed * walk:
                # spread so thinly over the rowids that a walk of ``walk`` rows at their density
                # would pass fewer than ``limit`` of them (an estimate: it only saves the walk)
                walk = 0
        if (found is not None and isinstance(found[1], str) and found[0] != name and walk
                and (walk_index or not joins)):
            # more: the trigram index reads every posting of the probe's trigrams, so first the
            # rows a short walk in ``order`` passes: enough hits there are the answer.  The
            # walk is a subquery with its own LIMIT, which SQLite runs as a co-routine yielding
            # its rows in its ORDER BY (no outer sort: that would read the whole walk first)
            # (of the indexed columns only; the hits' whole rows are read by their rowid)
            kept = ", ".join(f"{alias}.{column}" for column in (spec.rowid, *spec.columns))
            # (the joins, when there are, both in the walk, for the filters, and after it)
            walk_joins = walk_joins or ""
            walk_base = f"{base} INDEXED BY {walk_index}" if walk_index else base
            inner = f"SELECT {kept} FROM {walk_base} {walk_joins} WHERE {' AND '.join(where) or '1'} ORDER BY {order} LIMIT ?"
            walked, _ = like_any([f"w.{column}" for column in spec.columns], [text])
            rows = conn.execute(f"SELECT {select} FROM ({inner}) AS w CROSS JOIN {base} ON {alias}.{spec.rowid} ="
                                f" w.{spec.rowid} {walk_joins} WHERE {walked} LIMIT ?",
                                [*params, walk, *patterns, limit]).fetchall()
            if len(rows) >= limit:
                return rows
        if found is not None and isinstance(found[1], list):
            # an index named these candidates, read once; the LIKE still decides each one
            base = f"json_each(?) AS hit CROSS JOIN {base} ON {alias}.{spec.rowid} = hit.value"
            bound.insert(0, "[" + ",".join(str(rowid) for rowid in found[1]) + "]")
        elif found is not None:
            # the trigram index names the candidates; the LIKE still decides each one
            probed, probe = found
            base = f"{probed} CROSS JOIN {base} ON {alias}.{spec.rowid} = {probed}.rowid"
            clauses.insert(0, match(probed))
            bound.insert(0, probe)
        sql = f"SELECT {select} FROM {base} {joins} WHERE {' AND '.join(clauses)} ORDER BY {order}"
    if limit is not None:
        sql += " LIMIT ?"
        bound.append(limit)
    return conn.execute(sql, bound).fetchall()


# A substring search reads up to this many of the trigram index's candidates per wanted
# hit (at most CANDIDATES_LISTED) as rowids: fewer, and they are the candidates.  With more,
# and a limit, it first walks WALK_PER_HIT rows per wanted hit (at most WALK_MAX) in its
# order: a text most rows hold fills the limit there, for less than the index's postings cost.
# (Not when the listed candidates spread over so many rowids that fewer than the limit would
# fall in such a walk at their density.)
LISTED_PER_HIT = 20
WALK_PER_HIT, WALK_MAX = 20, 2000


def _rowids(conn, name, expression, cap):
    """The first ``cap`` rowids of index ``name`` matching ``expression``, read once."""
    cursor = db.tuples(conn)
    try:
        return [row[0] for row in cursor.execute(f"SELECT rowid FROM {name} WHERE {match(name)} LIMIT ?",
                                                 (expression, cap))]
    finally:
        cursor.close()


def trigram_for(conn, name, text):
    """The trigram index beside word index ``name`` (:data:`TRIGRAMS`) when it answers a
    substring search for ``text``: the home has it and ``text`` has three characters or
    more.  None otherwise."""
    trigram = TRIGRAMS.get(name)
    return trigram if trigram is not None and len(text) >= 3 and has(conn, trigram) else None


def _narrowing(conn, name, text, cap):
    """``(index, MATCH expression)`` naming every row of ``name``'s content table that holds
    ``text`` as a substring (and maybe a few more), or None (read every row, in order).

    The trigram index (:data:`TRIGRAMS`), when the home has it and ``text`` has three
    characters or more (:func:`trigram_probe`: two posting lists, whatever the text, the
    smallest of each half of it by :func:`trigram_spans`).  Else
    the word index (:func:`substring_probe`), when ``text`` gives a probe matching fewer
    than ``cap`` rows (the second item may then be their rowids, read as they were counted:
    :func:`_candidates`)."""
    pairs = PAIRS.get(name)
    if pairs is not None and has(conn, pairs):
        probe = pair_probe(conn, pairs, text)
        if probe is not None:
            return pairs, probe
    trigram = trigram_for(conn, name, text)
    if trigram is not None:
        return trigram, trigram_probe(text, trigram_spans(conn, trigram, text) if len(text) > 5 else None)
    probe = substring_probe(text) if has(conn, name) else None
    rowids = _candidates(conn, name, probe, cap) if probe is not None else None
    if rowids is not None:
        return name, rowids
    return None


def trigram_probe(text, spans=None):
    """A MATCH expression for a trigram index that every row holding ``text`` (three
    characters or more) as a substring satisfies, case folded as the index folds (Unicode
    folding: more than LIKE's ASCII, never less), and few others do.

    A text of up to five characters is one quoted phrase: its consecutive trigrams are
    exactly its occurrences.  A longer one is a NEAR group of two of its trigrams, one from
    each half of the text, with exactly as many tokens between them as the text puts there
    (the tokenizer emits one trigram per character, so a trigram's position is its offset,
    and wherever ``text`` occurs both do, that far apart).  FTS5 reads every posting of each
    trigram of a query, so the cost is their two posting lists: ``spans`` (offset -> the
    size of that trigram's postings, :func:`trigram_spans`) picks the smallest of each
    half; without it (or on ties) the outermost ones, the first and the last, whose
    distance also turns away most rows holding the text's words in another arrangement."""
    if len(text) <= 5:
        return quote(text)
    count = len(text) - 2  # trigrams, by offset
    half = (count + 1) // 2
    unknown = 0 if spans is None else float("inf")
    weigh = spans or {}
    first = min(range(half), key=lambda at: (weigh.get(at, unknown), at))
    last = min(range(half, count), key=lambda at: (weigh.get(at, unknown), -at))
    return f"NEAR({quote(text[first:first + 3])} {quote(text[last:last + 3])}, {last - first - 1})"


# The trigrams of each half of a text whose posting sizes :func:`trigram_spans` weighs, at most
# (evenly spread over a longer half).
SPANS_PER_HALF = 16


def trigram_spans(conn, name, text):
    """``{offset: size}``: how many leaf pages (in FTS5's page numbering) the postings of
    each of a sample of ``text``'s trigrams take in trigram index ``name``, summed over its
    segments: an estimate of what reading them costs, and of how many rows hold them.

    Read from the index's own b-tree of leaf pages (``<name>_idx``: one row per leaf page
    a term starts on, keyed by that term): a term's postings run from the page the last
    term at or before it starts on to the page the first term after it starts on.  Two
    seeks per trigram and segment, whatever the size of the index; a term past the last
    page start of a segment counts as ending there (its tail is unknown; only the choice
    of trigrams depends on it, never the answer).  Case is folded as Python folds, which is
    how the index folds ASCII."""
    count = len(text) - 2
    half = (count + 1) // 2
    offsets = []
    for start, end in ((0, half), (half, count)):
        step = max(1, -(-(end - start) // SPANS_PER_HALF))
        offsets += range(start, end, step)
    keys = {}
    for at in offsets:
        keys.setdefault(("0" + text[at:at + 3].lower()).encode("utf-8", "surrogatepass"), []).append(at)
    sizes = _pages(conn, name, list(keys))
    spans = {}
    for size, ats in zip(sizes, keys.values()):
        for at in ats:
            spans[at] = size
    return spans


def _pages(conn, name, keys):
    """How many leaf pages the postings of each of ``keys`` (terms as index ``name`` keys
    them: ``b"0"`` and the folded term's UTF-8) take, summed over the index's segments (see
    :func:`trigram_spans`); a list in the order of ``keys``."""
    table = f"{index(name).name}_idx"
    values = ", ".join(f"({n}, ?)" for n in range(len(keys)))
    # the segments, one seek each; per key and segment the page starts around it (and the last)
    sql = (f"WITH RECURSIVE seg(id) AS (SELECT (SELECT min(segid) FROM {table}) UNION ALL"
           f" SELECT (SELECT min(segid) FROM {table} WHERE segid > seg.id) FROM seg WHERE seg.id IS NOT NULL),"
           f" k(n, key) AS (VALUES {values}),"
           f" edge(n, before, after, tail) AS (SELECT k.n,"
           f" (SELECT pgno FROM {table} WHERE segid = seg.id AND term <= k.key ORDER BY term DESC LIMIT 1),"
           f" (SELECT pgno FROM {table} WHERE segid = seg.id AND term > k.key ORDER BY term LIMIT 1),"
           f" (SELECT pgno FROM {table} WHERE segid = seg.id ORDER BY term DESC LIMIT 1)"
           f" FROM k, seg WHERE seg.id IS NOT NULL)"
           f" SELECT n, sum(coalesce(after, tail) - coalesce(before, after, tail)) FROM edge GROUP BY n")
    cursor = db.tuples(conn)
    try:
        found = cursor.execute(sql, keys).fetchall()
    finally:
        cursor.close()
    sizes = dict(found)
    return [sizes.get(n, 0) for n in range(len(keys))]


def pair_runs(text):
    """The runs of seven characters of ``text`` around each of its spaces that have three
    characters on each side inside ``text``, in order, each once ([] when there is none):
    every row holding ``text`` as a substring holds each of them around one of its own
    spaces.  (The pair index's tokens are these runs folded and encoded: :func:`pair_tokens`.)"""
    runs = []
    for at in range(3, len(text) - 3):
        if text[at] == " " and text[at - 3:at + 4] not in runs:
            runs.append(text[at - 3:at + 4])
    return runs


def pair_tokens(conn, text):
    """The pair tokens (:data:`PAIRS`) every row holding ``text`` as a substring holds, as
    LIKE sees it: its :func:`pair_runs` folded and hex-encoded by SQLite itself, exactly as
    the index's view spells a row's (``lower()`` folds what LIKE folds, ASCII letters
    unless SQLite was built with ICU).  In order, each once; [] when there is none."""
    runs = pair_runs(text)
    if not runs:
        return []
    cursor = db.tuples(conn)
    try:
        found = cursor.execute("SELECT " + ", ".join("hex(lower(?))" for _ in runs), runs).fetchone()
    finally:
        cursor.close()
    return list(dict.fromkeys(found))


# The pair tokens of a text whose posting sizes :func:`pair_probe` weighs, at most (evenly
# spread over a longer list).
PAIRS_WEIGHED = 16


def pair_probe(conn, name, text):
    """A MATCH expression for pair index ``name`` that every row holding ``text`` satisfies:
    the one of its :func:`pair_tokens` whose postings take the fewest leaf pages (the first
    on ties), or None when ``text`` has no pair token.  One posting list is read, however
    long the text; the LIKE decides each row it names."""
    tokens = pair_tokens(conn, text)
    if not tokens:
        return None
    if len(tokens) > 1:
        weighed = tokens[::max(1, -(-len(tokens) // PAIRS_WEIGHED))]
        pages = _pages(conn, name, [("0" + token.lower()).encode("ascii") for token in weighed])
        tokens = [min(zip(pages, range(len(weighed)), weighed))[2]]
    return quote(tokens[0])


# A substring search whose cap on candidates is at most this takes the word index's
# candidates as a list of rowids, read once (:func:`_candidates`); with a higher cap, they
# are counted and then matched again by the search (a long list costs more than that).
CANDIDATES_LISTED = 2000


def _candidates(conn, name, probe, cap):
    """What names the rows of index ``name`` matching ``probe`` when they are fewer than
    ``cap``: their rowids, read here, when ``cap`` is at most CANDIDATES_LISTED, else
    ``probe`` itself (counted here); None when there are more.  A prefix is first counted
    as the whole word: its one posting list read up to ``cap`` is cheap, while a prefix
    merges the lists of every word it starts, and as many whole-word rows settle it."""
    if probe.endswith("*") and match_counts(conn, name, [probe[:-1]], cap)[0] >= cap:
        return None
    if cap > CANDIDATES_LISTED:
        return probe if match_counts(conn, name, [probe], cap)[0] < cap else None
    rowids = _rowids(conn, name, probe, cap)
    return rowids if len(rowids) < cap else None


def with_text(spec, prefix=""):
    """The condition true of a content row that index ``spec`` holds tokens of: an indexed
    column with text (of three characters or more for a trigram index)."""
    if spec.name in TRIGRAMS.values():
        return " OR ".join(f"length(coalesce({prefix}{column}, '')) >= 3" for column in spec.columns)
    if spec.name in PAIRS.values():  # a token per space of the word index's columns
        word = next(word for word, pairs in PAIRS.items() if pairs == spec.name)
        return " OR ".join(f"instr(coalesce({prefix}{column}, ''), ' ') > 0" for column in INDEXES[word].columns)
    return " OR ".join(f"coalesce({prefix}{column}, '') != ''" for column in spec.columns)


def window_drifts(conn, name, after, upto):
    """True when index ``name`` and its content table may disagree about a content rowid in
    ``(after, upto]``: a content row with text and no indexed size there, or an indexed
    size with tokens and no content row with text.  One statement: the ids of each side in
    the range, both read in rowid order, merged against each other both ways (the nanny's
    bounded full-text turn; :func:`drift` over the whole index says what and how much).  A
    consistent FTS5 index holds a document's tokens exactly when its size row counts some,
    so this flags every rowid :func:`drift` would name in the range (and a few it clears: a
    document whose tokens were only partly deleted).  Reads only."""
    spec = index(name)
    nonempty = with_text(spec, "c.")
    # a size row counts tokens when its varints are not all zero bytes
    texts = f"SELECT c.{spec.rowid} FROM main.{spec.table} c WHERE c.{spec.rowid} > ?1 AND c.{spec.rowid} <= ?2" \
            f" AND ({nonempty})"
    sized = f"SELECT d.id FROM main.{name}_docsize d WHERE d.id > ?1 AND d.id <= ?2 AND d.sz <> zeroblob(length(d.sz))"
    # each EXCEPT with ORDER BY is a merge of two rowid-ordered range reads (no sort, no probe);
    # a size row with tokens and no text comes first, then the texts without one (which a
    # text without a word explains)
    found = conn.execute(f"SELECT 0, id FROM ({sized} EXCEPT {texts} ORDER BY 1) UNION ALL"
                         f" SELECT 1, * FROM ({texts} EXCEPT {sized} ORDER BY 1)", (after, upto))
    while True:
        batch = found.fetchmany(WORDLESS_BATCH)
        if not batch:
            return False
        if not batch[0][0]:
            return True
        rowids = [row[1] for row in batch]
        if len(_wordless(conn, spec, rowids)) < len(rowids):
            return True


WORDLESS_BATCH = 64  # content rows read at a time when a text without tokens may explain them


def _wordless(conn, spec, rowids):
    """Those of ``rowids`` that index ``spec`` holds as documents without a token: a size row
    of zeros for a content row whose text has no word (``"!!! ---"``), which the tokenizer
    leaves out, exactly as :func:`indexed_tokens` reads it.  Such a row is indexed, though
    its text is not empty.  (A trigram index reads every character: none of its rows is.)"""
    if spec.name in _CHARACTER_INDEXES or not rowids:
        return []
    marks = ", ".join("?" * len(rowids))
    columns = ", ".join(f"c.{column}" for column in spec.columns)
    rows = conn.execute(f"SELECT c.{spec.rowid}, {columns} FROM main.{spec.table} c"
                        f" JOIN main.{spec.name}_docsize d ON d.id = c.{spec.rowid}"
                        f" WHERE c.{spec.rowid} IN ({marks}) AND d.sz = zeroblob(length(d.sz))", rowids).fetchall()
    return [row[0] for row in rows
            if not any(isinstance(text, str) and indexed_tokens(text) for text in row[1:])]


def drift(conn, name):
    """Compare index ``name`` with its content table; return the drift report.

    ``{"index", "method", "indexed", "source", "missing", "stale", "ok"}``: ``missing`` are
    content rowids with text that the index lacks, ``stale`` indexed rowids no content row
    has (both capped at 100, with totals).  ``method`` is ``fts5vocab`` or, on builds without
    that module, ``count`` (which can only compare totals).  Reads only.

    A trigram index (:data:`TRIGRAMS`) is read through its own per-document record instead
    (``method`` ``docsize``: the documents whose recorded size counts tokens; FTS5 writes
    and deletes it with their postings): it holds a posting per character of every row, and
    listing its documents through ``fts5vocab`` would read them all (minutes at a million
    rows).  Its text is a column of three characters or more (a shorter one has no trigram).
    """
    spec = index(name)
    if not has(conn, name):
        return {"index": name, "method": "absent", "ok": True, "indexed": 0, "source": 0,
                "missing": [], "missing_total": 0, "stale": [], "stale_total": 0}
    vocab = f"temp.{name}_vocab_instance"
    source_sql = f"SELECT {spec.rowid} FROM main.{spec.table} WHERE {with_text(spec)}"
    method, docs = "fts5vocab", f"SELECT DISTINCT doc FROM {vocab}"
    if name in _CHARACTER_INDEXES:
        method, docs = "docsize", f"SELECT id FROM main.{name}_docsize WHERE sz <> zeroblob(length(sz))"
    try:
        if method == "fts5vocab":
            conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocab} USING fts5vocab(main, {name}, instance)")
    except sqlite3.OperationalError:
        indexed = conn.execute(f"SELECT count(*) FROM {name}_docsize").fetchone()[0]
        source = conn.execute(f"SELECT count(*) FROM ({source_sql})").fetchone()[0]
        return {"index": name, "method": "count", "ok": indexed == source, "indexed": indexed, "source": source,
                "missing": [], "missing_total": max(source - indexed, 0), "stale": [],
                "stale_total": max(indexed - source, 0)}
    try:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS fts_drift_docs(doc INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM temp.fts_drift_docs")
        conn.execute(f"INSERT OR IGNORE INTO temp.fts_drift_docs {docs}")
        if method == "fts5vocab":  # a row indexed without a token is not in the vocabulary
            _count_wordless(conn, spec, source_sql)
        indexed = conn.execute("SELECT count(*) FROM temp.fts_drift_docs").fetchone()[0]
        source = conn.execute(f"SELECT count(*) FROM ({source_sql})").fetchone()[0]
        missing_sql = f"SELECT {spec.rowid} FROM ({source_sql}) WHERE {spec.rowid} NOT IN (SELECT doc FROM temp.fts_drift_docs)"
        stale_sql = f"SELECT doc FROM temp.fts_drift_docs WHERE doc NOT IN ({source_sql})"
        missing_total = conn.execute(f"SELECT count(*) FROM ({missing_sql})").fetchone()[0]
        stale_total = conn.execute(f"SELECT count(*) FROM ({stale_sql})").fetchone()[0]
        missing = [row[0] for row in conn.execute(f"{missing_sql} ORDER BY 1 LIMIT 100")]
        stale = [row[0] for row in conn.execute(f"{stale_sql} ORDER BY 1 LIMIT 100")]
    finally:
        # the two temp tables stay for the connection's life (a doctor sweep checks every
        # index in turn, and creating and dropping them is most of an empty index's cost)
        conn.execute("DELETE FROM temp.fts_drift_docs")
    return {"index": name, "method": method, "ok": not missing_total and not stale_total,
            "indexed": indexed, "source": source, "missing": missing, "missing_total": missing_total,
            "stale": stale, "stale_total": stale_total}


def _count_wordless(conn, spec, source_sql):
    """Add to the documents read from the vocabulary the content rows with text that index
    ``spec`` holds without a token (:func:`_wordless`): only rows with a size row of zeros
    are read, a few."""
    candidates = [row[0] for row in conn.execute(
        f"SELECT d.id FROM main.{spec.name}_docsize d WHERE d.sz = zeroblob(length(d.sz))"
        f" AND d.id IN ({source_sql}) AND d.id NOT IN (SELECT doc FROM temp.fts_drift_docs)")]
    for start in range(0, len(candidates), WORDLESS_BATCH):
        conn.executemany("INSERT OR IGNORE INTO temp.fts_drift_docs(doc) VALUES (?)",
                         [(rowid,) for rowid in _wordless(conn, spec, candidates[start:start + WORDLESS_BATCH])])


def segments(conn, name):
    """How many b-tree segments index ``name`` is made of (None when the index is absent).

    Each committed write adds a small segment and FTS5 merges them only level by level, so
    an index written one row per transaction settles at several segments; every term a
    query reads is looked up in each of them.  Reads only: the ``_idx`` table holds one
    row per leaf page."""
    index(name)
    if not has(conn, name):
        return None
    # the count FTS5 keeps in its structure record (one row read; counting the segment ids
    # of ``_idx`` walked one row per leaf page, which grows with the index: at 1M notes it
    # cost the nanny's idle tick about 6M instructions); the walk when it cannot be decoded
    row = conn.execute(f"SELECT block FROM {name}_data WHERE id = {STRUCTURE_ROWID}").fetchone()
    found = _structure_segments(row[0]) if row is not None else None
    if found is not None:
        return found
    return conn.execute(f"SELECT count(DISTINCT segid) FROM {name}_idx").fetchone()[0]


STRUCTURE_ROWID = 10  # FTS5_STRUCTURE_ROWID: the ``_data`` row describing the index's levels and segments
_STRUCTURE_V2 = b"\xff\x00\x00\x01"  # the marker after the cookie of a version-2 structure record


def _structure_segments(block):
    """The segment count of an FTS5 structure record (a 4-byte cookie, the version-2 marker
    when present, then the varints nLevel and nSegment), or None when ``block`` is not one."""
    if not isinstance(block, bytes) or len(block) < 6:
        return None
    at = 8 if block[4:8] == _STRUCTURE_V2 else 4
    try:
        _, at = _varint(block, at)  # nLevel
        return _varint(block, at)[0]
    except IndexError:  # cut short: not a structure record
        return None


USERMERGE = 2  # segments of one level that a merge step joins (FTS5's own default is 4)


def merge(conn, name, pages, *, whole=False):
    """Do one bounded step of merging index ``name`` level by level (inside the caller's
    write transaction); return whether there was work to do.  ``whole``: a step of merging
    every segment towards one instead (FTS5's negative ``'merge'``), for an index whose
    levels left more segments than its owner allows.

    FTS5's incremental merge (a positive ``'merge'``): about ``pages`` leaf pages are
    written per step, taken from a level holding USERMERGE or more segments (or from a
    merge left unfinished), and the merged segment goes one level up.  The work follows
    what was written since the last merge: new pages are rewritten about once per level,
    the big old segments ever less often, and a step on an index with nothing at any level
    to merge writes no page (FTS5 then counts fewer than two changes).
    Done to the end, each level holds one segment, so an index keeps a handful of
    segments, the small ones cheap to look a term up in.  What the index matches and how it
    ranks are unchanged.  The first step on an index sets its ``usermerge`` to USERMERGE
    (a setting kept in the index; every later step only reads it)."""
    index(name)
    if not conn.in_transaction:
        raise RuntimeError("fts.merge needs an open write transaction (use mindos.store.db.write)")
    row = conn.execute(f"SELECT v FROM {name}_config WHERE k = 'usermerge'").fetchone()
    if row is None or row[0] != USERMERGE:
        conn.execute(f"INSERT INTO {name}({name}, rank) VALUES ('usermerge', ?)", (USERMERGE,))
    before = conn.total_changes
    step = max(1, int(pages))
    conn.execute(f"INSERT INTO {name}({name}, rank) VALUES ('merge', ?)", (-step if whole else step,))
    return conn.total_changes - before >= 2  # FTS5 counts one change for the command itself


# a rebuild and its merge, as statements (``table``: the index, qualified as the caller needs)
REBUILD = "INSERT INTO {table}({name}) VALUES ('rebuild');INSERT INTO {table}({name}) VALUES ('optimize')"


def rebuild(conn, name):
    """Rebuild index ``name`` from its content table (inside the caller's write transaction),
    then merge what the rebuild wrote into one segment.  A rebuild leaves big segments on the
    low levels, where the next few writes' automatic merges would pick them up: at 10k tasks
    a trigram index rebuilt and left so cost the sixth ``create`` after it about ten times the
    floor's instructions, rewriting the index; merged, the segment sits on the top level and
    the writes that follow merge only their own small segments."""
    index(name)
    if not conn.in_transaction:
        raise RuntimeError("fts.rebuild needs an open write transaction (use mindos.store.db.write)")
    for statement in REBUILD.format(table=name, name=name).split(";"):
        conn.execute(statement)
