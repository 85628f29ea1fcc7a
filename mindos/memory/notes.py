"""Shared memory: provenance-tagged task notes.

A note is a small typed statement (fact, decision, observation, evidence, constraint) on a
task, with the agent that wrote it.  Notes are never edited in place: ``supersede`` retires
one and links it to its replacement (``superseded_by`` / ``supersedes``), so a fact's
history stays readable with :func:`history`.  A note is *live* while ``superseded_by IS
NULL``.

Design decisions
  * Dedup at the source.  Re-adding a task's live content returns the existing note
    (``deduplicated: true``); rephrasings at or above the token-Jaccard threshold are stored
    but flagged (``similar_to``, and ``similar_notes`` in the audited ``note_added``).  The
    candidates are the task's live notes only, read through ``idx_notes_task_live``.
  * TTL retires, it never deletes.  Past ``expires_at`` an unpinned note is a *retiree*:
    live, listed by ``notes`` (with ``expired: true``), but excluded from search, packs and
    near-duplicate candidates.  A pinned note is immortal: once expired it still packs, with
    ``expired: true``, so an agent knows a fresh supersede is due.  Re-adding a retiree's
    exact content revives it and restates its lifetime (no ``--ttl-hours``: immortal).
  * Every write passes through the secret guard before anything is stored: the content
    (refused, redacted or allowed per flag) and the source agent name (refused outright when
    credential-shaped; see :func:`mindos.store.guard.guard_record`).

Reusable pieces (other domains call these):
  * :func:`tokens` / :func:`jaccard` -- the one similarity measure (near-dup guard,
    consolidation, task dedup).
  * :func:`near_dup_threshold` -- ``AUTOPILOT_NEAR_DUP_THRESHOLD`` (default 0.8), validated.
  * :func:`live_for_pack` -- a task's packable notes plus ``notes_expired_excluded``.
  * "live and not retired" as SQL is :func:`mindos.memory.note_live`, for every query.
"""


from mindos.core import clock, validate
from mindos.store import db, ledger, sql
from mindos.core.text import DEFAULT_NEAR_DUP_THRESHOLD, jaccard, near_dup_threshold, tokens  # noqa: F401 (re-exported)
from mindos.errors import Conflict, InvalidInput, NotFound, Refused
from mindos.memory import note_live
from mindos.work import rows

KINDS = ("fact", "decision", "observation", "evidence", "constraint")
DEFAULT_KIND = "fact"
DEFAULT_SOURCE = "operator"
MAX_TTL_HOURS = 87600  # ten years
MAX_QUERY = 1000
# A substring search of three characters or more reads only the notes the trigram index
# names (fts.trigram_probe); without that index, only those the word index names
# (fts.substring_probe) when they are fewer than this, or than a quarter of the indexed notes
# in a bigger home (otherwise every live note, as it must for a one-word query).
SUBSTRING_NARROW = 25000
# A substring search whose text many notes hold first walks the newest live notes (through
# idx_notes_live_newest, which gives its order) with their tasks, this way round, and stops
# at its limit: reading every note the trigram index names and sorting them would cost more.
_WALK_JOINS = "CROSS JOIN tasks t ON t.id = n.task_id"

_COLUMN_NAMES = ("id", "task_id", "kind", "content", "source", "pinned", "expires_at", "supersedes", "superseded_by",
                 "superseded_at", "created_at")
_COLUMNS = ", ".join(_COLUMN_NAMES)
_N_COLUMNS = ", ".join("n." + name for name in _COLUMN_NAMES)


# ---------------------------------------------------------------------------------------
# Shapes and validation


def row_to_note(row, now=None):
    """Turn a notes row into the note dict every command prints (adds ``expired``)."""
    note = sql.row_dict(row)
    note["pinned"] = bool(note["pinned"])
    now = now or clock.now_iso()
    note["expired"] = note["expires_at"] is not None and note["expires_at"] <= now
    return note


def note_id(value, flag="note id"):
    """A note id: a positive integer (or its decimal text)."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 18:
        value = int(value)  # ASCII digits only: int() would also take "+3", " 3", "1_0" and "٣"
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"invalid {flag}: {validate.shown(value, 40)} (expected a positive integer)")
    return value


def check_kind(value, flag="--kind"):
    """One of the note kinds."""
    return validate.one_of(value, flag, KINDS)


def _content(value, flag="--content"):
    return validate.text(value, flag, required=True).strip()


def _expires_at(ttl_hours, now):
    """Storage text for now + ttl_hours, or None when no lifetime is given."""
    if ttl_hours is None:
        return None
    if isinstance(ttl_hours, bool) or not isinstance(ttl_hours, (int, float)) or not 0 < ttl_hours <= MAX_TTL_HOURS:
        raise InvalidInput(
            f"invalid --ttl-hours: {validate.shown(ttl_hours, 40)}"
            f" (expected a number of hours in (0, {MAX_TTL_HOURS}])")
    seconds = max(1, round(ttl_hours * 3600))
    return clock.shift(now, seconds)


def _require_task(conn, task_id):
    task_id = validate.identifier(task_id, "task id")
    rows.require_task(conn, task_id)
    return task_id


def get(conn, nid):
    """Return the note dict for ``nid`` or raise NotFound."""
    nid = note_id(nid)
    row = conn.execute(f"SELECT {_COLUMNS} FROM notes WHERE id = ?", (nid,)).fetchone()
    if row is None:
        raise NotFound(f"unknown note {nid}")
    return row_to_note(row)


# ---------------------------------------------------------------------------------------
# Writes


def add(conn, task_id, *, content, kind=DEFAULT_KIND, source=None, pinned=False, ttl_hours=None,
        redact=False, allow_secret=False):
    """Add a note to a task, or return the existing one; return the note dict with flags.

    The result adds ``deduplicated`` and ``similar_to`` ([{note_id, score}]), ``revived`` /
    ``promoted_to_pinned`` when they happened, and ``secret_kinds`` / ``secret_action`` when
    the secret guard redacted or allowed content.  Audits ``note_added``, ``note_pinned``
    (pinned duplicate) or ``note_ttl_refreshed`` (revived retiree).
    """
    kind_value = check_kind(kind)
    content = _content(content)
    source = validate.agent(source, "--source", secret_check=False) if source else DEFAULT_SOURCE  # guard_record audits it
    now = clock.now_iso()
    expires_at = _expires_at(ttl_hours, now)
    pinned = bool(pinned)
    threshold = near_dup_threshold()
    with db.write(conn):
        task_id = _require_task(conn, task_id)
        cleaned, outcome = _guard(conn, task_id, content, source, redact, allow_secret)
        content = cleaned
        existing = conn.execute(
            f"SELECT {_COLUMNS} FROM notes WHERE task_id = ? AND superseded_by IS NULL AND content = ?"
            " ORDER BY id LIMIT 1",
            (task_id, content),
        ).fetchone()
        if existing is not None:
            result = _readd(conn, row_to_note(existing, now), pinned, expires_at, now)
        else:
            result = _insert(conn, task_id, kind_value, content, source, pinned, expires_at, now,
                             similar=_similar(conn, task_id, content, threshold, now))
        if outcome:
            result.update(outcome)
        return result


def _guard(conn, task_id, content, source, redact, allow_secret):
    """The secret guard over a note's content and its source (an agent name, refused outright
    when credential-shaped): returns ``(content to store, outcome)``."""
    from mindos.store import guard  # lazy: only writes pay for the detector

    fields, outcome = guard.guard_record(conn, "note", task_id, {"content": content}, {"source": source},
                                           redact=redact, allow_secret=allow_secret)
    return fields["content"], outcome


def _readd(conn, note, pinned, expires_at, now):
    """Exact live duplicate: promote a pin, revive a lapsed lifetime, else return as is."""
    result_flags = {"deduplicated": True, "similar_to": []}
    if note["expired"]:
        promote = pinned and not note["pinned"]
        conn.execute("UPDATE notes SET expires_at = ?, pinned = ? WHERE id = ?",
                     (expires_at, int(note["pinned"] or pinned), note["id"]))
        payload = {"note_id": note["id"], "previous_expires_at": note["expires_at"], "expires_at": expires_at}
        if promote:
            payload["pinned"] = True
        ledger.append_event(conn, "note", note["task_id"], "note_ttl_refreshed", payload)
        result_flags["revived"] = True
        if promote:
            result_flags["promoted_to_pinned"] = True
    elif pinned and not note["pinned"]:
        conn.execute("UPDATE notes SET pinned = 1 WHERE id = ?", (note["id"],))
        ledger.append_event(conn, "note", note["task_id"], "note_pinned", {"note_id": note["id"], "via": "duplicate_add"})
        result_flags["promoted_to_pinned"] = True
    else:
        note.update(result_flags)
        return note
    fresh = get(conn, note["id"])
    fresh.update(result_flags)
    return fresh


def _similar(conn, task_id, content, threshold, now):
    """Live, non-retired notes of the task at or above ``threshold``: [{note_id, score}], best first."""
    mine = tokens(content)
    if not mine:
        return []
    rows = conn.execute(f"SELECT n.id, n.content FROM notes n WHERE n.task_id = ? AND {note_live('n')}", (task_id, now))
    found = []
    for nid, text in rows:
        score = jaccard(mine, tokens(text))
        if score >= threshold:
            found.append({"note_id": nid, "score": round(score, 4)})
    found.sort(key=lambda item: (-item["score"], item["note_id"]))
    return found


def _insert(conn, task_id, kind_value, content, source, pinned, expires_at, now, supersedes=None, similar=()):
    similar = list(similar)
    cursor = conn.execute(
        "INSERT INTO notes(task_id, kind, content, source, pinned, expires_at, supersedes, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (task_id, kind_value, content, source, int(pinned), expires_at, supersedes, now),
    )
    nid = cursor.lastrowid
    if supersedes is None:
        payload = {"note_id": nid, "kind": kind_value, "source": source, "pinned": pinned}
        if expires_at:
            payload["expires_at"] = expires_at
        if similar:
            payload["similar_notes"] = similar
        ledger.append_event(conn, "note", task_id, "note_added", payload)
    from mindos.memory import learned  # lazy: writes learn the home's term associations
    learned.after_write(conn)
    note = get(conn, nid)
    note["deduplicated"] = False
    note["similar_to"] = similar
    return note


def supersede(conn, nid, *, content, kind=None, source=None, ttl_hours=None, redact=False, allow_secret=False):
    """Atomically retire note ``nid`` in favour of a new note; return ``{"note", "superseded"}``.

    The new note keeps the old kind and source unless given, inherits the pin, and has no
    expiry unless ``ttl_hours`` is passed.  Refuses a note already superseded and identical
    content.  Audits ``note_superseded``.
    """
    nid = note_id(nid)
    kind_value = check_kind(kind) if kind is not None else None
    content = _content(content)
    source = validate.agent(source, "--source", secret_check=False) if source else None  # guard_record audits it
    now = clock.now_iso()
    expires_at = _expires_at(ttl_hours, now)
    with db.write(conn):
        old = get(conn, nid)
        if old["superseded_by"] is not None:
            raise Refused(f"note {nid} is already superseded by note {old['superseded_by']}; supersede that one")
        source = source or old["source"]  # an inherited source is stored again, so it is scanned too
        cleaned, outcome = _guard(conn, old["task_id"], content, source, redact, allow_secret)
        if cleaned == old["content"]:
            raise Refused(f"note {nid} already says exactly that; nothing to supersede")
        new = _insert(conn, old["task_id"], kind_value or old["kind"], cleaned, source,
                      old["pinned"], expires_at, now, supersedes=nid)
        # guarded: lands only if nobody superseded the note since we read it
        changed = conn.execute(
            "UPDATE notes SET superseded_by = ?, superseded_at = ? WHERE id = ? AND superseded_by IS NULL",
            (new["id"], now, nid),
        ).rowcount
        if changed != 1:
            raise Conflict(f"note {nid} was superseded concurrently; re-read it and retry")
        payload = {"note_id": nid, "superseded_by": new["id"], "kind": new["kind"], "source": new["source"],
                   "pinned": new["pinned"]}
        if expires_at:
            payload["expires_at"] = expires_at
        ledger.append_event(conn, "note", old["task_id"], "note_superseded", payload)
        new.pop("deduplicated", None)
        new.pop("similar_to", None)
        result = {"note": new, "superseded": get(conn, nid)}
        if outcome:
            result.update(outcome)
        return result


# ---------------------------------------------------------------------------------------
# Reads


def list_notes(conn, task_id, *, include_all=False):
    """A task's live notes oldest first (``include_all``: superseded history too)."""
    task_id = _require_task(conn, task_id)
    now = clock.now_iso()
    live = "" if include_all else " AND superseded_by IS NULL"
    rows = conn.execute(f"SELECT {_COLUMNS} FROM notes WHERE task_id = ?{live} ORDER BY id", (task_id,))
    return [row_to_note(row, now) for row in rows]


def live_for_pack(conn, task_id):
    """What a context pack may carry: ``{"notes": [...], "notes_expired_excluded": n}``.

    ``notes`` are the task's live notes oldest first (ordered by id), each with ``expired``
    (true only on expired pins, which still pack); expired unpinned notes are left out and
    counted in ``notes_expired_excluded``.  Raises NotFound for an unknown task.
    """
    notes, excluded = [], 0
    for note in list_notes(conn, task_id):
        if note["expired"] and not note["pinned"]:
            excluded += 1
        else:
            notes.append(note)
    return {"notes": notes, "notes_expired_excluded": excluded}


def history(conn, nid):
    """The supersession chain through note ``nid``, oldest predecessor -> newest successor.

    Returns ``{"note_id", "head_id", "length", "chain": [notes]}``; consolidated notes that
    merged into the chain appear in creation order.
    """
    nid = note_id(nid)
    get(conn, nid)
    # the newest successor: follow superseded_by to the live head (UNION stops on a cycle;
    # a dangling link leaves the newest existing note as the head)
    head = conn.execute(
        """
        WITH RECURSIVE fwd(id) AS (
            SELECT ?
            UNION
            SELECT n.superseded_by FROM notes n JOIN fwd ON n.id = fwd.id WHERE n.superseded_by IS NOT NULL
        )
        SELECT id FROM notes WHERE id IN (SELECT id FROM fwd) ORDER BY superseded_by IS NULL DESC, id DESC LIMIT 1
        """,
        (nid,),
    ).fetchone()[0]
    rows = conn.execute(
        f"""
        WITH RECURSIVE back(id) AS (
            SELECT ?
            UNION
            SELECT n.id FROM notes n JOIN back ON n.superseded_by = back.id
        )
        SELECT {_COLUMNS} FROM notes WHERE id IN (SELECT id FROM back) ORDER BY id
        """,
        (head,),
    ).fetchall()
    now = clock.now_iso()
    chain = [row_to_note(row, now) for row in rows]
    return {"note_id": nid, "head_id": head, "length": len(chain), "chain": chain}


def search(conn, query, *, kind=None, project=None, status=None, rank=False, include_expired=False, limit=50,
           rerank=False, recency_half_life_hours=None, pinned_boost=None):
    """Keyword search over live notes; newest first, or BM25 order with ``score`` under ``rank``.

    The substring path matches ``query`` literally; the ranked path requires every query
    word (conjunctive; stopwords dropped), each matching through its stems, as a prefix and
    through the shipped synonyms (:mod:`mindos.memory.retrieval`).  Tokenless queries return [].  Retirees are excluded unless
    ``include_expired``.  Each hit carries its task's project, title and status.

    ``rerank`` re-scores the best ``rerank.POOL`` x ``limit`` hits with the temporal hybrid
    score (:func:`mindos.memory.rerank.rerank`: normalized BM25 x recency decay with
    ``recency_half_life_hours``, plus ``pinned_boost`` for pins), keeps the best ``limit``
    and gives each its ``rank_score``.  Substring hits (no ``--rank``, or no FTS5) count as
    full lexical matches, so they rerank by recency and pins alone.
    """
    from mindos.store import fts  # lazy: only a search reads the full-text indexes
    query = validate.text(query, "query", max_len=MAX_QUERY).strip()
    kind_value = check_kind(kind) if kind else None
    project = validate.identifier(project, "--project") if project else None
    status = validate.status(status) if status else None
    limit = validate.positive_int(limit, "--limit", maximum=10000)
    from mindos.memory import rerank as hybrid  # lazy: a pack reads notes without the rerank

    half_life, boost = hybrid.options(recency_half_life_hours, pinned_boost, rerank=rerank)
    if not fts.tokens(query):
        return []
    now = clock.now_iso()
    clauses, params = sql.given([
        ("(n.expires_at IS NULL OR n.expires_at > ? OR n.pinned = 1)", None if include_expired else now),
        ("n.kind = ?", kind_value or None),
        ("t.project = ?", project or None),
        ("+t.status = ?", status or None),  # "+": the notes drive the join, never every task of a status
    ], ["n.superseded_by IS NULL"])
    columns = f"{_N_COLUMNS}, t.project AS project, t.title AS task_title, t.status AS task_status"
    expression = None
    if rank and fts.has(conn, "notes_fts"):
        from mindos.memory import retrieval  # lazy: only ranked search pays for the engine

        # conjunctive over query words, each word matching through its stems and synonyms
        expression = " AND ".join(group.expression() for group in retrieval.groups(query))
    narrow = None
    if not rank and SUBSTRING_NARROW and fts.trigram_for(conn, "notes_fts", query):
        narrow = SUBSTRING_NARROW  # the trigram index names the notes holding the text (fts.trigram_probe)
    elif not rank and SUBSTRING_NARROW and fts.substring_probe(query) is not None:
        narrow = max(SUBSTRING_NARROW, fts.totals(conn, "notes_fts")[0] // 4)
    wanted = limit * hybrid.POOL if rerank else limit
    if expression is not None:  # scored first, then only the best joined (fts.ranked_rows)
        found = fts.ranked_rows(conn, "notes_fts", expression, select=columns, joins="JOIN tasks t ON t.id = n.task_id",
                                where=clauses, params=params, ranked_order="n.id", limit=wanted)
    else:
        found = fts.text_search(conn, "notes_fts", query, select=columns, joins="JOIN tasks t ON t.id = n.task_id",
                                where=clauses, params=params, order="n.created_at DESC, n.id DESC",
                                ranked_order="n.id", rank=rank, limit=wanted, expression=expression, narrow=narrow,
                                walk_joins=_WALK_JOINS, walk_index="idx_notes_live_newest")
    hits = [row_to_note(row, now) for row in found]
    if rerank:
        return hybrid.rerank(hits, now, half_life, boost)[:limit]
    return hits


def expired(conn):
    """Every expired live note fleet-wide with the action it needs.

    Returns ``{"notes": [...], "total", "revive", "supersede"}``; each item carries
    ``action``: ``revive`` for retirees (re-add the content), ``supersede`` for expired pins.
    """
    now = clock.now_iso()
    rows = conn.execute(
        f"SELECT {_N_COLUMNS}, t.project AS project,"
        " t.title AS task_title FROM notes n JOIN tasks t ON t.id = n.task_id"
        " WHERE n.superseded_by IS NULL AND n.expires_at IS NOT NULL AND n.expires_at <= ?"
        " ORDER BY n.expires_at, n.id",
        (now,),
    )
    items = []
    for row in rows:
        note = row_to_note(row, now)
        note["action"] = "supersede" if note["pinned"] else "revive"
        items.append(note)
    revive = sum(1 for item in items if item["action"] == "revive")
    return {"notes": items, "total": len(items), "revive": revive, "supersede": len(items) - revive}


def metrics(conn):
    """Note counters for ``metrics``."""
    now = clock.now_iso()
    row = conn.execute(
        "SELECT count(*),"
        " coalesce(sum(superseded_by IS NOT NULL), 0),"
        " coalesce(sum(superseded_by IS NULL AND pinned = 1), 0),"
        " coalesce(sum(superseded_by IS NULL AND expires_at IS NOT NULL AND expires_at <= ?), 0)"
        " FROM notes",
        (now,),
    ).fetchone()
    return {
        "notes_total": row[0],
        "notes_superseded": row[1],
        "notes_pinned_live": row[2],
        "notes_expired_live": row[3],
        "notes_consolidated_total": ledger.count_action(conn, "note_consolidated"),
    }
