"""The optional semantic layer: stored vectors, a pluggable encoder, fused ranking.

``memory-embed`` computes a vector for every note, memory, fact and handoff that has none
from the configured encoder (dry run unless ``apply``); ``memory-status`` reports coverage
and the encoder's identity; ``memory-search --semantic`` fuses the lexical ranking with a
vector ranking (:func:`mindos.memory.memory_search.semantic_search`).  Nothing here is on the pack path: packs never
read vectors.

Design decisions
  * **A plug-in point, standard library by default.**  ``MINDOS_EMBEDDER=module:callable``
    names any callable mapping a list of texts to a list of float vectors (one per text,
    all of one length); its identity is that string.  Without it the built-in encoder
    (BUILTIN, :class:`LearnedEncoder`) is used: random indexing over the home's learned
    term associations (:mod:`mindos.memory.learned`).  Each term has a fixed sparse
    ternary index vector (DIMS positions, INDEX_NONZERO of them +-1, chosen by a SHA-256 of
    the term); a text's vector is the sum, over its terms, of the term's index vector and
    its learned associates' index vectors (weighted by their strength), each term weighted
    by its inverse row frequency, normalized.  Texts that share no word but whose words are
    learned to go together get close vectors.
  * **Vectors are rows.**  ``embeddings`` keeps one float32 vector per (surface, row id)
    with the encoder's identity; a row "lacks" a vector when it has none from the
    configured encoder (changing encoders re-embeds everything).  ``memory-embed --apply``
    writes in batches of BATCH rows, one transaction each, and audits ``memory_embedded``.
  * **Checked at the boundary.**  An encoder that cannot be loaded, raises, or returns the
    wrong number of vectors, vectors of unequal or zero length, over MAX_DIMS, or
    non-finite numbers, is refused with one line; nothing is written.
  * **Weighted reciprocal rank fusion, the lexical ranking first.**  ``--semantic``: the
    lexical ranking (memory-search's own, history steps included) and the vector ranking
    (cosine against every stored vector of the configured encoder in scope) are each cut to
    their first POOL rows and fused by ``LEXICAL_WEIGHT / (RRF_K + lexical rank) +
    1 / (RRF_K + vector rank)``; ties by lexical rank, then vector rank, then kind and id.
    Each hit carries ``score`` (the fused score) and ``ranks`` (its lexical and vector rank,
    null where absent).  RRF_K is 1, not the textbook 60: with 60 the first ranks weigh
    hardly more than the tenth, so a row both rankings place tenth outranked the lexical
    engine's confident first answer, and --semantic scored below plain memory-search with
    the built-in encoder and with all-MiniLM-L6-v2 alike (bench/retrieval_eval.py
    --semantic, dev2 paraphrase recall@5 0.36 and 0.68 against 0.84).  With RRF_K 1 and the
    lexical rank counting double, a vector ranking's first row still enters the top few, and
    a row both place near the top rises; a vector ranking alone never displaces the lexical
    first answer.

Measured on bench/bench.py's recall home (70k rows): ``memory-embed --apply`` with the
built-in encoder in about 4.5 s (64 dimensions, 23 MB of vectors); ``--semantic`` about 0.7 s
a query (every stored vector in scope is compared, in Python).  With all-MiniLM-L6-v2 as the
plug-in (bench/encoders/minilm.py, 384 dimensions; bench/encoders/cost.py on two busy cores):
``memory-embed --apply`` over 70k rows 1,355 s, one ``--semantic`` call 14.2 s, of which about
9 s load torch and the model and about 6 s compare the 70k stored vectors.
"""

import hashlib
import math
import os
from array import array

from mindos.core import validate
from mindos.errors import InvalidInput, Refused
from mindos.memory import learned
from mindos.store import db, ledger

BUILTIN = "mindos-learned-ri-v1"
DIMS = 64
INDEX_NONZERO = 4
BATCH = 1000
MAX_DIMS = 4096
RRF_K = 1
LEXICAL_WEIGHT = 2.0
POOL = 50
ENV = "MINDOS_EMBEDDER"
SURFACES = ("note", "memory", "fact", "handoff")


# ---------------------------------------------------------------------------------------
# Encoders


def _index_vector(term):
    """The term's fixed sparse index vector: ``[(position, sign)]``, INDEX_NONZERO of them."""
    digest = hashlib.sha256(term.encode("utf-8")).digest()
    found, used = [], set()
    for offset in range(0, len(digest) - 1, 2):
        position = digest[offset] % DIMS
        if position in used:
            continue
        used.add(position)
        found.append((position, 1.0 if digest[offset + 1] & 1 else -1.0))
        if len(found) == INDEX_NONZERO:
            break
    return found


class LearnedEncoder:
    """The built-in encoder: random indexing over the learned associations (module docstring).

    ``context`` maps a term to its associates ``[(term, strength)]``; the bulk form
    (:meth:`for_home`) reads every learned pair once, so a run over many rows costs one
    read of the learned tables."""

    identity = BUILTIN

    def __init__(self, df, total, context):
        self.df, self.total, self.context = df, max(total, 1), context
        self._index = {}

    @classmethod
    def for_home(cls, conn):
        """The encoder with every term's context read in bulk (for memory-embed)."""
        return cls(*learned.every_associate(conn))

    @classmethod
    def for_texts(cls, conn, texts):
        """The encoder with only ``texts``' terms' contexts read (for a query)."""
        words = sorted({term for text in texts for term in learned.terms(text)})
        if not words or not learned.has(conn):
            return cls({}, 1, {})
        df = {}
        for start in range(0, len(words), 500):
            chunk = words[start:start + 500]
            df.update((term, count) for term, count in conn.execute(
                f"SELECT term, df FROM term_df WHERE term IN ({', '.join('?' * len(chunk))})", chunk))
        total = learned.rows_learned(conn)
        context = {}
        for word in words:
            found = learned.associates(conn, [word], rare=False)
            if found.get(word):
                context[word] = found[word]
        return cls(df, total, context)

    def _vector_of(self, term):
        if term not in self._index:
            self._index[term] = _index_vector(term)
        return self._index[term]

    def __call__(self, texts):
        vectors = []
        for text in texts:
            vector = [0.0] * DIMS
            for term in learned.terms(text):
                weight = math.log(1 + self.total / (1 + self.df.get(term, 0)))
                for position, sign in self._vector_of(term):
                    vector[position] += weight * sign
                for other, strength in self.context.get(term, ()):
                    for position, sign in self._vector_of(other):
                        vector[position] += weight * strength * sign
            vectors.append(_normalized(vector))
        return vectors


def _normalized(vector):
    norm = math.sqrt(sum(value * value for value in vector))
    return [value / norm for value in vector] if norm else vector


def configured(env=None):
    """``(identity, loader)``: the configured encoder's identity and a function
    ``loader(conn, texts=None)`` returning the callable (``texts``: the query texts, so the
    built-in encoder reads only their terms).  Raises InvalidInput for a malformed setting."""
    env = os.environ if env is None else env
    spec = (env.get(ENV) or "").strip()
    if not spec:
        def builtin(conn, texts=None):
            return LearnedEncoder.for_home(conn) if texts is None else LearnedEncoder.for_texts(conn, texts)

        return BUILTIN, builtin
    module, _, name = spec.partition(":")
    if not module or not name or not all(part.isidentifier() for part in module.split(".")) \
            or not name.isidentifier():
        raise InvalidInput(f"invalid {ENV}: {validate.shown(spec, 80)} (expected module:callable)")

    def plugin(conn, texts=None):
        from mindos.core import load_module  # lazy: only a configured plug-in is imported

        try:
            loaded = getattr(load_module(module), name)
        except Exception as exc:  # noqa: BLE001 - any import failure of a plug-in is one refusal
            raise Refused(f"cannot load {ENV} {spec}: {type(exc).__name__}: {str(exc)[:120]}") from None
        if not callable(loaded):
            raise Refused(f"{ENV} {spec} is not callable")
        return loaded

    return spec, plugin


def encode(encoder, identity, texts, dims=None):
    """``encoder(texts)`` checked: a list of ``len(texts)`` float vectors of one length
    (``dims`` when given), finite, at most MAX_DIMS long.  Raises Refused otherwise."""
    try:
        vectors = encoder(list(texts))
    except Exception as exc:  # noqa: BLE001 - a plug-in's failure is one refusal, never a traceback
        raise Refused(f"encoder {identity} failed: {type(exc).__name__}: {str(exc)[:120]}") from None
    try:
        vectors = [[float(value) for value in vector] for vector in vectors]
    except (TypeError, ValueError):
        raise Refused(f"encoder {identity} returned something other than lists of numbers") from None
    if len(vectors) != len(texts):
        raise Refused(f"encoder {identity} returned {len(vectors)} vectors for {len(texts)} texts")
    for vector in vectors:
        length = len(vector)
        if not 0 < length <= MAX_DIMS or (dims is not None and length != dims):
            raise Refused(f"encoder {identity} returned a vector of {length} numbers"
                          f" (expected {dims if dims else f'1..{MAX_DIMS}'}, the same for every text)")
        if not all(math.isfinite(value) for value in vector):
            raise Refused(f"encoder {identity} returned a non-finite number")
        dims = length
    return vectors


# ---------------------------------------------------------------------------------------
# Rows and vectors

# Per surface: the content table, its row id and the text embedded: the text the learned
# associations are learned from, so a vector and its terms' associations read the same words.
_ROWS = learned.SURFACES


def _has_table(conn):
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'embeddings'").fetchone() \
        is not None


def _lacking_count(conn, surface, identity):
    """How many rows of ``surface`` lack a vector from ``identity`` (counted in SQL)."""
    table, key, _ = _ROWS[surface]
    return conn.execute(
        f"SELECT count(*) FROM {table} r WHERE NOT EXISTS (SELECT 1 FROM embeddings e"
        f" WHERE e.surface = ? AND e.row_id = r.{key} AND e.encoder = ?)", (surface, identity)).fetchone()[0]


def _lacking(conn, surface, identity, limit=None):
    table, key, text = _ROWS[surface]
    bound = "" if limit is None else f" LIMIT {int(limit)}"
    return conn.execute(
        f"SELECT r.{key}, {text} FROM {table} r WHERE NOT EXISTS (SELECT 1 FROM embeddings e"
        f" WHERE e.surface = ? AND e.row_id = r.{key} AND e.encoder = ?) ORDER BY r.{key}{bound}",
        (surface, identity)).fetchall()


def _pack(vector):
    return array("f", vector).tobytes()


def _unpack(blob):
    values = array("f")
    values.frombytes(blob)
    return values


def status(conn, env=None):
    """``memory-status``: the encoder's identity, and per surface the rows and how many have a
    vector from it; ``coverage`` over all of them; ``dims`` of the stored vectors; the
    learned associations' size.  Read-only."""
    identity, _ = configured(env)
    surfaces, rows_total, embedded_total = {}, 0, 0
    present = _has_table(conn)
    for surface in SURFACES:
        table, key, _ = _ROWS[surface]
        total = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        embedded = conn.execute("SELECT count(*) FROM embeddings WHERE surface = ? AND encoder = ?",
                                (surface, identity)).fetchone()[0] if present else 0
        surfaces[surface] = {"rows": total, "embedded": embedded}
        rows_total += total
        embedded_total += embedded
    dims = None
    other = {}
    if present:
        row = conn.execute("SELECT length(vector) / 4 FROM embeddings WHERE encoder = ? LIMIT 1", (identity,)).fetchone()
        dims = row[0] if row else None
        other = {encoder: count for encoder, count in conn.execute(
            "SELECT encoder, count(*) FROM embeddings WHERE encoder <> ? GROUP BY encoder ORDER BY encoder",
            (identity,))}
    result = {"encoder": identity, "builtin": identity == BUILTIN, "dims": dims, "surfaces": surfaces,
              "rows": rows_total, "embedded": embedded_total,
              "coverage": round(embedded_total / rows_total, 6) if rows_total else 1.0,
              "other_encoders": other}
    if learned.has(conn):
        result["learned"] = {
            "rows": learned.rows_learned(conn),
            "terms": conn.execute("SELECT count(*) FROM term_df").fetchone()[0],
            "pairs": conn.execute("SELECT count(*) FROM term_pairs").fetchone()[0]}
    return result


def embed(conn, *, apply=False, env=None):
    """``memory-embed``: the rows lacking a vector from the configured encoder, per surface;
    with ``apply`` their vectors are computed and stored (batches of BATCH rows, one write
    transaction each; audited ``memory_embedded``).  Returns ``{"encoder", "applied",
    "lacking": {surface: n}, "embedded": {surface: n}, "dims", "seconds"}``."""
    identity, loader = configured(env)
    if not _has_table(conn):
        raise Refused("this database has no embeddings table; run any write command to migrate it")
    import time  # lazy: only an embedding run times itself

    started = time.perf_counter()
    lacking = {surface: _lacking_count(conn, surface, identity) for surface in SURFACES}
    result = {"encoder": identity, "applied": bool(apply), "lacking": lacking,
              "embedded": dict.fromkeys(SURFACES, 0), "dims": None}
    if not apply or not any(lacking.values()):
        result["seconds"] = round(time.perf_counter() - started, 3)
        return result
    encoder = loader(conn)
    dims = None
    for surface in SURFACES:
        while True:
            rows = _lacking(conn, surface, identity, BATCH)
            if not rows:
                break
            vectors = encode(encoder, identity, [text or "" for _, text in rows], dims)
            dims = len(vectors[0])
            with db.write(conn):
                conn.executemany("INSERT INTO embeddings(surface, row_id, encoder, vector) VALUES (?, ?, ?, ?)"
                                 " ON CONFLICT(surface, row_id) DO UPDATE SET encoder = excluded.encoder,"
                                 " vector = excluded.vector",
                                 [(surface, row_id, identity, _pack(vector)) for (row_id, _), vector in zip(rows, vectors)])
            result["embedded"][surface] += len(rows)
    result["dims"] = dims
    with db.write(conn):
        ledger.append_event(conn, "memory", "embeddings", "memory_embedded",
                            {"encoder": identity, "embedded": result["embedded"], "dims": dims})
    result["seconds"] = round(time.perf_counter() - started, 3)
    return result


# ---------------------------------------------------------------------------------------
# Fused search


def _cosine(query, vector):
    dot = sum(a * b for a, b in zip(query, vector))
    norm = math.sqrt(sum(b * b for b in vector))
    return dot / norm if norm else 0.0


def vector_ranking(conn, query, *, project, scoped, now, rows_sql, env=None):
    """``[(kind, id), ...]``: the current rows in scope with a vector from the configured
    encoder, most similar to ``query`` first (ties by kind, id), at most POOL.
    ``rows_sql(kind, scoped) -> (sql, params)`` reads them (memory-search's surfaces)."""
    identity, loader = configured(env)
    if not _has_table(conn):
        return []
    encoder = loader(conn, [query])
    [vector] = encode(encoder, identity, [query])
    qnorm = math.sqrt(sum(value * value for value in vector)) or 1.0
    vector = [value / qnorm for value in vector]
    scored = []
    for kind in SURFACES:
        sql, params = rows_sql(kind, scoped)
        for ident, blob in conn.execute(sql, {"now": now, "project": project, "encoder": identity, **params}):
            stored = _unpack(blob)
            if len(stored) != len(vector):
                continue
            similarity = _cosine(vector, stored)
            if similarity > 0:
                scored.append((-round(similarity, 9), kind, str(ident), ident))
    scored.sort()
    return [(kind, ident) for _, kind, _, ident in scored[:POOL]]


def fuse(lexical, vectors, limit):
    """Weighted reciprocal rank fusion of the lexical hits (dicts) and the vector ranking
    (``[(kind, id)]``): ``[(key, score, lexical_rank, vector_rank)]``, best first (module
    docstring)."""
    ranks = {}
    for rank, hit in enumerate(lexical[:POOL], 1):
        ranks.setdefault((hit["kind"], hit["id"]), [None, None])[0] = rank
    for rank, key in enumerate(vectors[:POOL], 1):
        ranks.setdefault(key, [None, None])[1] = rank
    fused = []
    absent = POOL + 1
    for key, (lexical_rank, vector_rank) in ranks.items():
        score = (LEXICAL_WEIGHT / (RRF_K + lexical_rank) if lexical_rank is not None else 0.0) \
            + (1.0 / (RRF_K + vector_rank) if vector_rank is not None else 0.0)
        fused.append((-round(score, 9), lexical_rank or absent, vector_rank or absent, key[0], str(key[1]),
                      key, score, lexical_rank, vector_rank))
    fused.sort()
    return [(key, round(score, 6), lexical_rank, vector_rank)
            for *_, key, score, lexical_rank, vector_rank in fused[:limit]]

