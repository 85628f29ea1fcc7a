"""The temporal fact graph: subject-predicate-object triples with validity windows.

Design decisions:

  * **Restricted tokens.**  subject, predicate and object use the tag charset
    ``[a-z0-9:_./-]``, so a fact is safe as a CLI flag, a LIKE filter and an FTS token, and a
    credential shape cannot survive the charset.  The asserting agent (``--source``) is an
    agent name and passes the secret guard's identity check like every other writer.
  * **Windows, not deletes.**  A fact is *currently valid* while it is not retracted and its
    window is open (``valid_until`` NULL or in the future).  ``fact-retract`` closes the
    window at now and records the reason; an expiring ``--valid-hours`` window closes on its
    own.  Closed windows stay queryable (``facts --all``) as history.
  * **Dedup inside the window.**  Asserting a triple that is currently valid returns that
    row (``deduplicated: true``, audited ``fact_deduplicated``); after it closes a fresh row
    is recorded and the old window stays as history.
  * **Soft task link.**  ``--task`` must name an existing task when asserted, but the column
    is not a foreign key: archiving a task detaches provenance instead of destroying fleet
    knowledge.  A fact's project is its task's project while that task exists ('' otherwise).
"""

from mindos.core import clock, validate
from mindos.errors import Conflict, InvalidInput, NotFound
from mindos.memory import fact_valid
from mindos.store import db, fts, ledger
from mindos.work import rows

MAX_VALID_HOURS = 87600  # ten years
MAX_REASON = 1000
MAX_QUERY = 1000
MAX_LIMIT = 10000
_MAX_ROWID = 2**63 - 1
COLUMNS = ("id", "subject", "predicate", "object", "source", "task_id", "valid_from", "valid_until",
           "retracted_at", "retract_reason", "created_at")
COLUMNS_SQL = ", ".join(COLUMNS)


def row_to_fact(row, now=None, with_live=False):
    """A facts row as the dict every command prints; ``with_live`` adds the ``live`` flag."""
    fact = {name: row[name] for name in COLUMNS}
    if with_live:
        now = now or clock.now_iso()
        fact["live"] = fact["retracted_at"] is None and (fact["valid_until"] is None or fact["valid_until"] > now)
    return fact


def fact_id(value, flag="fact id"):
    """A fact id: a positive integer (or its text in ASCII digits: ``１`` and ``٣`` are not ids)."""
    text = str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    if not validate.ascii_integer(text) or not 1 <= int(text) <= _MAX_ROWID:
        raise InvalidInput(f"invalid {flag}: {validate.shown(value, 40)} (expected a positive integer)")
    return int(text)


def get(conn, fid, now=None):
    """The fact dict (with ``live``) for ``fid`` or NotFound."""
    fid = fact_id(fid)
    row = conn.execute(f"SELECT {COLUMNS_SQL} FROM facts WHERE id = ?", (fid,)).fetchone()
    if row is None:
        raise NotFound(f"unknown fact {fid}")
    return row_to_fact(row, now, with_live=True)


def _valid_hours(value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_VALID_HOURS:
        raise InvalidInput(f"invalid --valid-hours: {validate.shown(value, 40)}"
                           f" (expected a number of hours in (0, {MAX_VALID_HOURS}])")
    return max(1, round(value * 3600))


def assert_fact(conn, *, subject, predicate, obj, source, task=None, valid_hours=None):
    """``fact-assert``: record a triple, or return the identical currently-valid one.

    Returns the fact dict plus ``deduplicated``.  Audits ``fact_asserted`` (new row) or
    ``fact_deduplicated`` (the live row it matched), both on entity ``fact`` / the fact id.
    """
    subject = validate.tag(subject, "--subject")
    predicate = validate.tag(predicate, "--predicate")
    obj = validate.tag(obj, "--object")
    source = validate.agent(source, "--source")
    seconds = _valid_hours(valid_hours)
    task_id = validate.identifier(task, "--task") if task is not None else None
    from mindos.store import guard  # lazy: only writes pay for the guard

    with db.write(conn):
        now = clock.now_iso()
        guard.guard_record(conn, "fact", subject, {}, {"source": source})
        if task_id is not None:
            rows.require_task(conn, task_id)
        existing = conn.execute(
            f"SELECT {COLUMNS_SQL} FROM facts f WHERE subject = ? AND predicate = ? AND object = ?"
            f" AND {fact_valid('f')} ORDER BY id LIMIT 1", (subject, predicate, obj, now)).fetchone()
        if existing is not None:
            fact = row_to_fact(existing)
            ledger.append_event(conn, "fact", str(fact["id"]), "fact_deduplicated", {"source": source})
            fact["deduplicated"] = True
            return fact
        valid_until = clock.shift(now, seconds) if seconds else None
        cursor = conn.execute(
            "INSERT INTO facts(subject, predicate, object, source, task_id, valid_from, valid_until, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (subject, predicate, obj, source, task_id, now, valid_until, now))
        fid = cursor.lastrowid
        payload = {"subject": subject, "predicate": predicate, "object": obj, "source": source}
        if task_id is not None:
            payload["task_id"] = task_id
        if valid_until is not None:
            payload["valid_until"] = valid_until
        ledger.append_event(conn, "fact", str(fid), "fact_asserted", payload)
        from mindos.memory import learned  # lazy: writes learn the home's term associations
        learned.after_write(conn)
        fact = get(conn, fid, now)
    del fact["live"]
    fact["deduplicated"] = False
    return fact


def retract(conn, fid, *, reason):
    """``fact-retract``: close a currently-valid fact's window at now with ``reason``; audited
    ``fact_retracted``.  A retracted or expired fact is refused.  Returns the fact (``live``)."""
    fid = fact_id(fid)
    reason = validate.line(reason, "--reason", required=True, max_len=MAX_REASON).strip()
    from mindos.store import guard  # lazy: only writes pay for the guard

    with db.write(conn):
        now = clock.now_iso()
        fact = get(conn, fid, now)
        if fact["retracted_at"] is not None:
            raise Conflict(f"fact {fid} is already retracted (at {fact['retracted_at']})")
        if not fact["live"]:
            raise Conflict(f"fact {fid} is not currently valid (its window closed at {fact['valid_until']})")
        fields, _ = guard.guard(conn, "fact", str(fid), {"reason": reason})
        conn.execute("UPDATE facts SET retracted_at = ?, valid_until = ?, retract_reason = ? WHERE id = ?",
                     (now, now, fields["reason"], fid))
        ledger.append_event(conn, "fact", str(fid), "fact_retracted", {"reason": fields["reason"]})
        return get(conn, fid, now)


def list_facts(conn, *, subject=None, predicate=None, obj=None, include_all=False, limit=100):
    """``facts``: currently-valid triples (``include_all``: closed windows too, each with
    ``live``), newest window first (``valid_from DESC, id DESC``)."""
    clauses, params = [], []
    for column, value, flag in (("subject", subject, "--subject"), ("predicate", predicate, "--predicate"),
                                ("object", obj, "--object")):
        if value is not None:
            clauses.append(f"f.{column} = ?")
            params.append(validate.tag(value, flag))
    limit = validate.positive_int(limit, "--limit", maximum=MAX_LIMIT)
    now = clock.now_iso()
    if not include_all:
        clauses.append(fact_valid("f"))
        params.append(now)
    where = " WHERE " + " AND ".join(clauses) if clauses else ""
    rows = conn.execute(f"SELECT {COLUMNS_SQL} FROM facts f{where} ORDER BY f.valid_from DESC, f.id DESC LIMIT ?",
                        (*params, limit))
    return [row_to_fact(row, now, with_live=include_all) for row in rows]


def search(conn, query, *, rank=False, include_all=False, limit=50):
    """``search-facts``: keyword search over subject/predicate/object/source.

    Without ``rank``: the literal substring in any of the four, newest window first.  With
    ``rank``: the retrieval engine (stems, prefixes, synonyms) over facts_fts, best first,
    each hit with ``score`` (higher = better).  Currently valid facts only unless
    ``include_all`` (then each hit carries ``live``).  Tokenless queries return [].  On a
    SQLite without FTS5, ``rank`` degrades to substring matching of any query word (the
    engine's words, stopwords dropped), live windows first, then newest: the ranked shape
    minus ``score``.
    """
    query = validate.text(query, "query", max_len=MAX_QUERY).strip()
    limit = validate.positive_int(limit, "--limit", maximum=MAX_LIMIT)
    if not fts.tokens(query):
        return []
    now = clock.now_iso()
    if rank and fts.has(conn, "facts_fts"):
        return _ranked(conn, query, now=now, include_all=include_all, limit=limit)
    live = fact_valid("f")
    clauses, params, order = [], [], "f.valid_from DESC, f.id DESC"
    if not include_all:
        clauses.append(live)
        params.append(now)
    columns = [f"f.{column}" for column in ("subject", "predicate", "object", "source")]
    if rank:
        from mindos.memory import retrieval  # lazy: only the ranked path reads the engine's words

        matching, patterns = fts.like_any(columns, [group.word for group in retrieval.groups(query)])
        if include_all:
            order = f"({live}) DESC, {order}"  # closed windows after live ones, as the ranked path sorts them
            patterns = [*patterns, now]
    else:
        matching, patterns = fts.like_any(columns, [query])
    clauses.append(matching)
    params.extend(patterns)
    rows = conn.execute(f"SELECT {COLUMNS_SQL} FROM facts f WHERE {' AND '.join(clauses)}"
                        f" ORDER BY {order} LIMIT ?", (*params, limit))
    return [row_to_fact(row, now, with_live=include_all) for row in rows]


def _ranked(conn, query, *, now, include_all, limit):
    """``search-facts --rank``: the retrieval engine's groups over facts_fts, scored on its one
    scale (higher = better); closed windows (only with ``include_all``) sort after live ones."""
    from mindos.memory import retrieval  # lazy: only ranked search pays for the engine

    query_groups = retrieval.groups(query)
    expression = retrieval.match_expression(query_groups)
    if expression is None:
        return []
    live = fact_valid("f")
    where = "" if include_all else f" AND {live}"
    rows = conn.execute(
        f"SELECT {', '.join('f.' + c for c in COLUMNS)}, ({live}) AS is_live FROM facts_fts"
        f" JOIN facts f ON f.id = facts_fts.rowid WHERE {fts.match('facts_fts')}{where}"
        " ORDER BY bm25(facts_fts), f.id LIMIT ?",
        (now, expression, *([] if include_all else [now]), retrieval.CANDIDATES)).fetchall()
    idf = retrieval.idf_weights(conn, query_groups, [("facts_fts", "facts")])
    hits = []
    for row in rows:
        fact = row_to_fact(row, now, with_live=include_all)
        text = f"{row['subject']} {row['predicate']} {row['object']} {row['source']}"
        fact["score"] = round(retrieval.coverage(query_groups, idf, text) * retrieval.recency(row["valid_from"], now), 6)
        hits.append((not row["is_live"], -fact["score"], -row["id"], fact))
    hits.sort(key=lambda hit: hit[:3])
    return [hit[3] for hit in hits[:limit]]


def metrics(conn):
    """Fact counters for ``metrics``: facts_total / facts_live / facts_closed."""
    row = conn.execute(f"SELECT count(*), coalesce(sum({fact_valid('facts')}), 0) FROM facts",
                       (clock.now_iso(),)).fetchone()
    return {"facts_total": row[0], "facts_live": row[1], "facts_closed": row[0] - row[1]}
