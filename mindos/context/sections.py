"""The opt-in pack sections of recall: related handoffs, dependency evidence, related facts,
related memories (related notes, plain or reranked, are packed by :mod:`mindos.context.pack`).

Each section is a builder ``(state, budget) -> keys`` like the pack's own sections, switched
on by one option and appended after the legacy sections in this order: ``related_handoffs``,
``dep_context``, ``related_sessions``, ``related_facts``, ``related_semantic`` (the spec's
order: neighbouring resume points after related notes, prerequisite evidence next, then
session snippets, facts and memories).
A pack built without an option carries none of its keys, so it stays byte-identical.

Design decisions
  * **Budget-honest.**  Every entry costs its serialized size against the one budget and
    each section reports ``<name>_requested`` / ``_matched`` / ``_packed``; a dropped entry
    flips ``truncated``.
  * **Digest-stable orderings.**  Handoffs order by ``created_at DESC, id DESC``, facts by
    ``valid_from DESC, id DESC``, memories by ``created_at DESC, id ASC``, prerequisites by
    dependency-edge creation order; none emits a relevance score, because BM25 moves
    whenever any row joins an index and would falsely stale every sealed digest.
  * **Matching uses the retrieval engine, bounded.**  A candidate matches when its indexed
    text matches a group of the task's text (:mod:`mindos.memory.retrieval`: the words,
    their stems and the shipped synonyms), so "db" in a task finds a memory about the
    database.  Only the rarest groups whose matches add up to POSTINGS_BUDGET are ORed (a
    word every row carries says nothing; :func:`mindos.memory.retrieval.bounded`, the probe
    related notes use too), and at most the MATCH_CAP newest matches are read, so a pack
    costs the same at 5k handoffs or 500k.
  * **No secret reaches a pack.**  Memories and handoffs are secret-guarded on write and
    facts cannot hold a credential shape (their charset), so while the ledger has never
    recorded a ``secret_allowed`` override they pack as stored; once one exists, every entry
    passes the shared detector and is redacted (``[REDACTED:<kind>]``) before it is charged.
    Receipt payloads (never guarded) are always scrubbed.  Loading the detector means
    compiling its regexes, which is why the clean case skips it.
  * **Graceful fallback.**  On a SQLite build without FTS5 the same sections match by
    substring: a row qualifies when any word of the task's text (its retrieval groups'
    words, stopwords dropped) occurs in any of the index's columns, read newest first up to
    MATCH_CAP (:func:`_matches`).  Same shape, same orderings; text without a word matches
    nothing.
  * **Scope is enforced.**  With ``--related-scope project`` (the default) candidates come
    from the task's project (memories: plus project-less ones; facts: unlinked or linked to
    a task of this project); ``global`` searches everything.  There is no fallback.
  * **Rerank** (``--rerank``): related notes are re-scored as normalized BM25 (best = 1.0;
    LIKE-fallback rows 1.0) x ``0.5 ** (age_hours / half_life)`` with ages floored to whole
    hours, plus ``pinned_boost`` for pinned notes; each carries ``rank_score``; ties newest
    first.  Without the flag the legacy related-notes section runs unchanged.
"""

import json

from mindos.context import builder, pack
from mindos.context.params import SECTION_OPTIONS
from mindos.memory import fact_in_scope, fact_valid, memory_in_scope
from mindos.store import fts

# Candidate matching reads at most this many index matches: the task's rarest word groups
# whose matches add up to POSTINGS_BUDGET, and never more than the MATCH_CAP newest rows
# (which bind only when even the rarest group is common: a narrow scope whose rows are all
# older than that finds none through it, as in memory-search).
POSTINGS_BUDGET = 150
MATCH_CAP = 150


# The index's matches, materialized once and driving the join: cost grows with the matches,
# never with (rows in scope x matches), which an IN-list probe per scoped row would cost.
_MATCHES = ("WITH matches(rowid) AS MATERIALIZED (SELECT rowid FROM {index} WHERE {match}"
            " ORDER BY rowid DESC LIMIT {cap})")


def _shared(state, key, compute):
    """``compute()`` once per read snapshot, for results that depend on ``key`` alone (never
    on which task asked): a fleet sweep rebuilding many bundles in one snapshot
    (:func:`mindos.context.recall.stale`) shares them; a single bundle computes each once."""
    shared = state.setdefault("shared", {})
    if key not in shared:
        shared[key] = compute()
    return shared[key]


def _posting_cache(state):
    """The index posting counts probed in this read snapshot (see :func:`_shared`)."""
    return pack.snapshot_cache(state, "posting_counts")


def _expression(state, index):
    """The task text's MATCH expression for ``index``: its rarest retrieval groups within
    POSTINGS_BUDGET matches (:func:`mindos.memory.retrieval.bounded`)."""
    from mindos.memory import retrieval  # lazy: see _groups

    query_groups = pack.text_groups(state)
    return pack.memo(state, ("expression", index), lambda: retrieval.bounded(
        state["conn"], index, query_groups, POSTINGS_BUDGET, _posting_cache(state))[0] if query_groups else None)


def _matches(state, index):
    """``(cte, params)``: a ``WITH matches(rowid)`` naming the rows of ``index``'s content
    table that match the task's text, at most the MATCH_CAP newest; None when none can.

    With FTS5 they are the index's matches of :func:`_expression`; without it (the LIKE
    twin) the rows where any of the task's words occurs in an indexed column."""
    if fts.has(state["conn"], index):
        expression = _expression(state, index)
        return None if expression is None else (_MATCHES.format(index=index, match=fts.match(index), cap=MATCH_CAP),
                                                         [expression])
    spec = fts.index(index)
    condition, params = fts.like_any(spec.columns, [group.word for group in pack.text_groups(state)])
    if condition is None:
        return None
    return (f"WITH matches(rowid) AS MATERIALIZED (SELECT {spec.rowid} FROM {spec.table} WHERE {condition}"
            f" ORDER BY {spec.rowid} DESC LIMIT {MATCH_CAP})", params)


def _counts(name, requested, matched, packed):
    return {f"{name}_requested": requested, f"{name}_matched": matched, f"{name}_packed": packed}


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _redacted(value, secrets):
    if isinstance(value, str):
        return secrets.redact(value)[0] if secrets.scan(value) else value
    if isinstance(value, dict):
        return {key: _redacted(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item, secrets) for item in value]
    return value


def scrub(value):
    """``value`` with every credential-shaped string redacted (the pack boundary: a secret
    stored with --allow-secret still never reaches a pack).  One scan over all its strings
    (line-separated) clears the common case; only a hit walks the strings one by one.  When
    the gate clears every string on its own, the detector is not even loaded (each string's
    redaction is its own scan, so the value would come back unchanged anyway)."""
    from mindos.core import secret_gate  # lazy: only a section that packs scrubs

    strings = list(_strings(value))
    if all(secret_gate.clean(text) for text in strings):
        return value
    from mindos.core import secrets  # lazy: the detector loads only when a section packs unclear text

    if not secrets.scan("\n".join(strings)):
        return value
    return _redacted(value, secrets)


def secrets_allowed(state):
    """True when the ledger records any ``secret_allowed`` override (one indexed probe, once
    per bundle).  Until then every memory and handoff passed the write guard clean, so
    scanning them again is skipped; receipts are never guarded and are always scanned."""
    return pack.memo(state, "secrets_allowed", lambda: state["conn"].execute(
        "SELECT 1 FROM audit_events WHERE action = 'secret_allowed' LIMIT 1").fetchone() is not None)


def _section(name, fetch, guarded):
    """The section builder of ``name``: its candidates (fetched and scrubbed once per bundle),
    packed first-fit against the budget, with requested / matched / packed.  ``guarded``
    sections hold only write-guarded text, scrubbed when an override was ever allowed."""

    def build(state, budget):
        def fetched():
            items = fetch(state)
            if guarded and not secrets_allowed(state):
                return items
            return [scrub(item) for item in items]

        items = pack.memo(state, name, fetched)
        return _pack_items(state, name, items, budget)

    build.__name__ = f"section_{name}"
    return build


def _pack_items(state, name, items, budget):
    packed = budget.take_all(items, pack.item_sizes(state, items, builder.TABLES[name]))
    return {name: packed, **_counts(name, state["options"][name], len(items), len(packed))}


def _related_rows(state, option, index, statement, convert, *key):
    """``(requested, items)`` of a related-* section: what ``option`` asks for and the rows of
    the task text's matches in ``index``, in the task's project or fleet-wide (``related_scope``);
    ``items`` [] when the section is off or nothing can match.  ``statement(project, requested)``
    gives the SELECT over the ``matches`` CTE and its parameters, ``convert(row)`` each item;
    packs sharing the match, the scope and ``key`` share the rows (:func:`_shared`)."""
    requested = state["options"][option]
    matches = _matches(state, index) if requested else None
    if matches is None:
        return 0, []
    cte, match_params = matches
    project = state["task"]["project"] if state["options"]["related_scope"] == "project" else None

    def fetch():
        sql, params = statement(project, requested)
        return [convert(row) for row in state["conn"].execute(f"{cte} {sql}", (*match_params, *params)).fetchall()]

    return requested, _shared(state, (option, cte, *match_params, project, requested, *key), fetch)


# ---------------------------------------------------------------------------------------
# Related handoffs


def _fetch_related_handoffs(state):
    """Live handoffs of other tasks matching the task's text, newest first."""

    def statement(project, requested):
        # one row more than asked and no own-task filter, so tasks sharing the match and
        # scope share the rows: a task has at most one live handoff (idx_handoffs_one_live),
        # dropped below, and the first ``requested`` of the rest are exactly what is packed.
        # The live matches are ordered by their ids alone (``o``), then read whole, with their
        # task, in that order only until enough are in scope: sorting every match with its
        # columns and its task's title carried along cost about 0.4M instructions for the
        # handful kept.  The inner LIMIT (never binding: there are at most MATCH_CAP matches)
        # keeps SQLite from dropping the inner ORDER BY, and the CROSS JOINs keep ``o`` the
        # outer loop, so rows come out in its order.
        scope, params = ("", []) if project is None else (" WHERE t.project = ?", [project])
        return ("SELECT h.id, h.task_id, t.title AS via_task_title, h.from_agent, h.to_agent, h.status, h.objective,"
                " h.commit_ref FROM (SELECT h.id FROM matches m CROSS JOIN handoffs h ON h.id = m.rowid"
                f" WHERE h.superseded_by IS NULL ORDER BY h.created_at DESC, h.id DESC LIMIT {MATCH_CAP}) o"
                f" CROSS JOIN handoffs h ON h.id = o.id CROSS JOIN tasks t ON t.id = h.task_id{scope} LIMIT ?",
                (*params, requested + 1))

    requested, items = _related_rows(state, "related_handoffs", "handoffs_fts", statement,
                                     lambda row: builder.compact(dict(row)))
    return [item for item in items if item["task_id"] != state["task"]["id"]][:requested]


# ---------------------------------------------------------------------------------------
# Dependency evidence inheritance


def _fetch_dep_context(state):
    """Completed direct prerequisites with their live handoff, latest receipt and recap (what
    was done, from ``complete --recap``: the next agent reads it instead of the history)."""
    from mindos.memory import handoffs  # lazy: only --dep-context reads prerequisite handoffs

    conn, task, requested = state["conn"], state["task"], state["options"]["dep_context"]
    rows = conn.execute(
        # CROSS JOIN: the task's own edges first; the planner, knowing no row counts, would
        # otherwise walk every completed task and look each up among the edges
        "SELECT t.id, t.title, t.recap FROM dependencies d CROSS JOIN tasks t ON t.id = d.depends_on"
        " WHERE d.task_id = ? AND t.status = 'completed' ORDER BY d.created_at, d.depends_on LIMIT ?",
        (task["id"], requested)).fetchall()
    items = []
    for row in rows:
        handoff = handoffs.live(conn, row["id"])
        if handoff is not None:
            handoff = builder.compact(handoff, implied=builder.HANDOFF_IMPLIED)
        if handoff is not None and secrets_allowed(state):
            handoff = scrub(handoff)
        receipt = next(iter(pack.latest_receipts(conn, row["id"], 1)), None)
        if receipt is not None:
            receipt = scrub(receipt)  # receipt payloads never pass the write guard
        item = {"id": row["id"], "title": row["title"], "handoff": handoff, "receipt": receipt}
        if row["recap"]:
            item["recap"] = scrub(row["recap"]) if secrets_allowed(state) else row["recap"]
        items.append(builder.compact(item))
    return items


# ---------------------------------------------------------------------------------------
# Related facts and memories


def _fetch_related_facts(state):
    """Currently-valid facts matching the task's text, newest window first."""

    def statement(project, requested):
        scope, params = ("", []) if project is None else (f" AND {fact_in_scope('f')}", [project])
        columns = ", ".join(f"f.{name}" for name in ("id", "subject", "predicate", "object", "source", "task_id",
                                                     "valid_from", "valid_until"))
        return (f"SELECT {columns} FROM matches m CROSS JOIN facts f ON f.id = m.rowid"
                f" WHERE {fact_valid('f')}{scope} ORDER BY f.valid_from DESC, f.id DESC LIMIT ?",
                (state["now"], *params, requested))

    return _related_rows(state, "related_facts", "facts_fts", statement, lambda row: builder.compact(dict(row)),
                         state["now"])[1]


def _fetch_related_semantic(state):
    """Live memories in scope matching the task's text, newest first, each with its engine tag."""

    def statement(project, requested):
        scope, params = ("1", []) if project is None else (memory_in_scope("m"), [project])
        return ("SELECT m.id, m.project, m.kind, m.content, m.tags, m.engine, m.created_at"
                " FROM matches x CROSS JOIN memories m ON m.seq = x.rowid"
                f" WHERE m.retracted_at IS NULL AND {scope} ORDER BY m.created_at DESC, m.id ASC LIMIT ?",
                (*params, requested))

    return _related_rows(state, "related_semantic", "memories_fts", statement, lambda row: builder.compact(
        {**dict(row), "tags": json.loads(row["tags"])}, defaults=builder.MEMORY_DEFAULTS))[1]


def _fetch_related_sessions(state):
    """Ingested session messages matching the task's text as provenance-tagged snippets,
    newest first (at DESC, session, seq): the session cache's pack section."""
    from mindos.memory import sessions  # lazy: only --related-sessions reads the session cache

    requested = state["options"]["related_sessions"]
    matches = _matches(state, "session_messages_fts") if requested else None
    if matches is None:
        return []
    cte, match_params = matches
    return _shared(state, ("related_sessions", cte, *match_params, requested),
                   lambda: [builder.compact(item) for item in sessions.snippets(state["conn"], cte, match_params,
                                                                                 requested)])


# Registered with the context pack's builder after its own sections, each behind its own
# option: a pack built without the option never runs the section and carries none of its keys.
section_related_handoffs = _section("related_handoffs", _fetch_related_handoffs, guarded=True)
section_dep_context = _section("dep_context", _fetch_dep_context, guarded=True)  # scrubs inside
section_related_sessions = _section("related_sessions", _fetch_related_sessions, guarded=True)  # guarded on ingest
section_related_facts = _section("related_facts", _fetch_related_facts, guarded=True)  # the charset is the guard
section_related_semantic = _section("related_semantic", _fetch_related_semantic, guarded=True)
for _name, _build in zip(SECTION_OPTIONS, (section_related_handoffs, section_dep_context, section_related_sessions,
                                           section_related_facts, section_related_semantic)):
    pack.SECTIONS.register(_name, _build, option=_name)
