"""Context packs: one bounded, deterministic, prompt-ready view of a task.

Design decisions
  * **An ordered list of sections.**  A pack is assembled section by section, in this
    order: ``task`` (the summary header), ``handoff`` (the live resume point, right after
    the header so it survives tight budgets), ``dependencies`` (unsatisfied prerequisites),
    ``notes`` (the task's live notes, pinned first, oldest -> newest within each group) and,
    with ``--related N``, ``related_notes`` (live notes of other tasks matching this task's
    text).  :func:`assemble` returns exactly that list of ``(name, keys)`` pairs, which is
    what a later ``recall`` seals with a digest; ``context`` flattens it and names the
    sections present, in order, under ``sections``.  A section that comes with a flag
    adds its keys only when the flag is given, so packs built without it stay
    byte-identical.
  * **What the budget counts.**  Every packed item costs the characters it prints as: the
    header dict and the handoff dict their ``len(canonical_json(item))``, each dependency,
    note and related note the characters of its row (entry lists print as tables:
    :func:`builder.encode`).  ``used_chars`` is exactly the sum of those costs and never
    exceeds ``budget``.  Envelope keys (``budget``, ``sections``, counters, flags) and a
    table's header row are not content and cost nothing.
  * **First fit, in pack order.**  Items are offered in pack order; one that does not fit in
    what is left is dropped (``truncated`` flips) and later, smaller items may still fit.
    Pinned notes are offered before unpinned ones, so they survive budgets that drop them.
  * **The header degrades before it goes.**  When the full header does not fit, its
    description is clipped to the longest prefix that does (``description_truncated``);
    only when even an empty description does not fit is the header dropped (``task: null``).
    The header is first fitted into what the pinned notes leave (their compact cost is
    reserved), so a long description yields to them; when not even the bare header fits
    beside them, it is fitted into the whole budget as before.
  * **Compact entries.**  Every packed entry goes through :func:`builder.compact`: a task's
    own notes drop ``task_id`` and the defaults (kind ``fact``, source ``operator``), the
    live handoff drops ``task_id``, ``live`` and ``payload_hash``, the header drops its
    ``id`` (the pack's ``task_id``), priority ``P2``, status ``queued`` and every empty field.
  * **TTL.**  An expired unpinned note is retired: not packed, not a related candidate,
    counted as ``notes_expired_excluded``.  An expired pin still packs, with
    ``expired: true``.
  * **Related notes match through the retrieval engine, at bounded cost.**  The task's
    text becomes retrieval groups (each word with its stems and synonyms, so "db" finds
    "database" and "invoices" finds "invoice"), OR-combined through notes_fts in BM25
    order, but only the rarest groups whose matches add up to at most
    RELATED_POSTINGS_BUDGET (:func:`mindos.memory.retrieval.bounded`): at 50k notes a
    call ranks a few hundred hits, not the whole index.  When every group is common, the one
    counted rarest is kept anyway (a match is never lost to the budget; counts stop at the
    budget, so common groups tie and the earlier word wins) and the walk stays bounded: BM25
    ranks only its RELATED_POSTINGS_BUDGET newest postings (a single common word or prefix
    term is scored over them here, in FTS5's order: its weight, which bm25() would first
    walk every posting to find, is taken from the capped count).  Without FTS5
    any group's word matching as a substring qualifies, newest first, with no ``score``.
    ``related_tokens_used`` / ``related_tokens_skipped`` count the groups ORed and the
    matching groups left out.
  * **Determinism.**  Every ordering ends on an id; BM25 scores are rounded to 6 places;
    nothing in a pack depends on the clock except whether a note has expired.  (BM25 scores
    do depend on the whole notes index, so a related-notes pack moves when notes are added
    anywhere; a pack without ``--related`` moves only with this task's own state.)
"""

from mindos.core import clock, validate
from mindos.store import db
from mindos.context import builder
from mindos.context.builder import cost
from mindos.work import rows
from mindos.memory import handoffs, note_live, notes
from mindos.context import params
from mindos.context.params import DEFAULT_BUDGET

# The related-notes query ORs only the rarest of the task's retrieval groups whose matches
# add up to at most RELATED_POSTINGS_BUDGET notes (see related_candidates).
RELATED_POSTINGS_BUDGET = 150
_NOTES, _DEPENDENCIES = builder.TABLES["notes"], builder.TABLES["dependencies"]
_HEADER_FIELDS = ("project", "title", "status", "priority", "due_at", "tags", "next_action",
                  "blocked_reason", "requires_receipts", "description")


# ---------------------------------------------------------------------------------------
# Sections.  Each takes the shared state and the budget and returns the keys it adds.


def _live_notes(state):
    """The task's live notes for the pack (:func:`mindos.memory.notes.live_for_pack`), read
    once per pack: the header reserves room for the pinned ones."""
    if "live_notes" not in state:
        state["live_notes"] = notes.live_for_pack(state["conn"], state["task"]["id"])
    return state["live_notes"]


def _packed_note(note):
    """A task's own note as a pack carries it: compact, without the task id the pack names."""
    return builder.compact(note, implied=("task_id",), defaults=builder.NOTE_DEFAULTS)


def _section_task(state, budget):
    task = state["task"]
    header = builder.compact({name: task[name] for name in _HEADER_FIELDS}, defaults=builder.TASK_DEFAULTS)
    # the pinned notes' room first: the description yields to them, so a tight budget keeps
    # the critical constraints a long description would otherwise crowd out; when not even
    # the bare header leaves them their room, the header comes first as it always did
    reserve = sum(_NOTES.cost(_packed_note(note)) for note in _live_notes(state)["notes"] if note["pinned"])
    for room in (budget.left() - reserve, budget.left()):
        fitted = _fit_header(header, room)
        if fitted is not None:
            budget.take(fitted)
            budget.truncated = budget.truncated or fitted is not header
            return {"task": fitted}
    budget.truncated = True
    return {"task": None}


def _fit_header(header, room):
    """``header`` within ``room`` characters: whole, else with its description clipped to the
    longest prefix that fits (``description_truncated``), else None."""
    if cost(header) <= room:
        return header
    description = header.get("description", "")
    bare = {key: value for key, value in header.items() if key != "description"}
    bare["description_truncated"] = True
    if cost(bare) > room:
        return None
    low, high = 0, len(description)
    while low < high:  # the longest description prefix that still fits
        middle = (low + high + 1) // 2
        if cost({**bare, "description": description[:middle]}) <= room:
            low = middle
        else:
            high = middle - 1
    return {**bare, "description": description[:low]} if low else bare


def section_handoff(state, budget):
    """The live handoff section (``state``: ``conn`` and ``task``); public because a recall's
    full pack can be had from its core form by taking this section alone (see
    :func:`mindos.context.recall.check_cited`)."""
    handoff = handoffs.live(state["conn"], state["task"]["id"])
    if handoff is not None:  # compact: its task is the pack's, and a pack carries only live handoffs
        handoff = builder.compact(handoff, implied=builder.HANDOFF_IMPLIED)
    packed = handoff is not None and budget.take(handoff)
    return {"handoff": handoff if packed else None, "handoff_packed": packed}


def _section_dependencies(state, budget):
    rows = state["conn"].execute(
        "SELECT d.depends_on, coalesce(t.status, 'missing'), t.title FROM dependencies d"
        " LEFT JOIN tasks t ON t.id = d.depends_on"
        " WHERE d.task_id = ? AND (t.status IS NULL OR t.status <> 'completed')"
        " ORDER BY d.created_at, d.depends_on",
        (state["task"]["id"],),
    )
    packed, total = [], 0
    for depends_on, status, title in rows:
        total += 1
        item = builder.compact({"id": depends_on, "status": status, "title": title})
        if budget.take(item, table=_DEPENDENCIES):
            packed.append(item)
    return {"dependencies": packed, "dependencies_total": total, "dependencies_packed": len(packed)}


def _section_notes(state, budget):
    live = _live_notes(state)
    ordered = sorted(live["notes"], key=lambda note: not note["pinned"])  # stable: oldest first within each group
    packed = budget.take_all([_packed_note(note) for note in ordered], table=_NOTES)
    return {
        "notes": packed,
        "notes_total_live": len(live["notes"]) + live["notes_expired_excluded"],
        "notes_packed": len(packed),
        "notes_pinned_packed": sum(note.get("pinned", False) for note in packed),
        "notes_expired_excluded": live["notes_expired_excluded"],
        "notes_expired_pinned_packed": sum(note.get("expired", False) for note in packed),
        "notes_dropped": len(ordered) - len(packed),
    }


def task_text(task):
    """The text a task's related sections match: title, next_action, description."""
    return f"{task['title']} {task['next_action']} {task['description']}"


def related_candidates(conn, task, limit, scope, now, shared=None, query_groups=None):
    """Up to ``limit`` live notes of OTHER tasks matching ``task``'s text, best first.

    Returns ``(notes, groups_used, groups_skipped)``.  Each note is a note dict
    (:func:`mindos.memory.notes.row_to_note`) plus ``via_task_title``.  The task's text becomes
    retrieval groups (:func:`mindos.memory.retrieval.groups`: each word with its stems and
    synonyms); with FTS5 the rarest of them (:func:`mindos.memory.retrieval.bounded`) are
    OR-combined through notes_fts in BM25 order and each note carries ``score`` (more
    negative = more relevant; ties by note id); without FTS5 any group's word matching as a
    substring qualifies, newest first, no score.  Retired notes never qualify; tokenless
    text yields no notes.

    ``shared`` (a dict) keeps the groups and index posting counts for the next call in the
    same read snapshot (a fleet sweep rebuilding many packs passes one; see
    :func:`mindos.context.recall.stale`).  ``query_groups``: the task text's groups, when the
    caller already has them.
    """
    from mindos.store import fts  # lazy: only related notes read the full-text index
    from mindos.memory import retrieval  # lazy: only --related loads the retrieval engine

    shared = {} if shared is None else shared
    if query_groups is None:
        query_groups = retrieval.groups(task_text(task), shared.setdefault("groups", {}))
    if not query_groups or limit == 0:
        return [], 0, 0
    clauses = [note_live("n"), "n.task_id <> ?"]
    params = [now, task["id"]]
    if scope == "project":
        clauses.append("t.project = ?")
        params.append(task["project"])
    if not fts.has(conn, "notes_fts"):
        matching, patterns = fts.like_any(["n.content"], [group.word for group in query_groups])
        clauses.append(matching)
        params.extend(patterns)
        rows = conn.execute(
            "SELECT n.*, t.title AS via_task_title FROM notes n JOIN tasks t ON t.id = n.task_id"
            f" WHERE {' AND '.join(clauses)} ORDER BY n.created_at DESC, n.id DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return ([builder.compact(notes.row_to_note(row, now), defaults=builder.NOTE_DEFAULTS) for row in rows],
                len(query_groups), 0)
    with db.read(conn):  # the probe, the window and the ranking come from one snapshot
        counted = shared.setdefault("posting_counts", {})
        expression, used, matched, total = retrieval.bounded(
            conn, "notes_fts", query_groups, RELATED_POSTINGS_BUDGET, counted, window=True)
        if expression is None:
            return [], 0, 0
        # the window's rowids when the probe read them (a group of one prefix term is counted
        # by reading its newest rowids: its prefix is merged once, not again for the window)
        newest = fts.cached_newest(counted, "notes_fts", expression, RELATED_POSTINGS_BUDGET + 1,
                                   RELATED_POSTINGS_BUDGET) if total > RELATED_POSTINGS_BUDGET else None
        # BM25 ranks at most the newest RELATED_POSTINGS_BUDGET postings: all of them for
        # in-budget groups, a bounded window for the one common group kept when nothing
        # else matched (the postings at or above the floor rowid probed first).  The
        # ranking statement joins each posting to its note and task and scores only those
        # the filters keep (SQLite evaluates bm25() only for rows passing WHERE), so a hit
        # the filters drop costs two row lookups, never a BM25 evaluation.
        word = fts.single_word(expression) if total > RELATED_POSTINGS_BUDGET else None
        prefix = _single_prefix(expression) if total > RELATED_POSTINGS_BUDGET and word is None else None
        if word is not None or prefix is not None:
            # one common word (or one common prefix term) read through its window: bm25() would
            # first walk every posting of the term to weigh it (a prefix term: of every word it
            # covers, merged; over a hundred million instructions at a million notes), so the
            # window is scored here, in FTS5's own order (one phrase: its weight multiplies every
            # score alike).  The window (its newest postings, read once) yields each qualifying
            # note's id and text only; the ``limit`` best are then read whole (most of the window
            # is scored and dropped)
            if newest is None:
                found = conn.execute(
                    f"SELECT n.id, n.content FROM (SELECT rowid AS id FROM notes_fts WHERE {fts.match('notes_fts')}"
                    " ORDER BY rowid DESC LIMIT ?) w CROSS JOIN notes n ON n.id = w.id CROSS JOIN tasks t"
                    f" ON t.id = n.task_id WHERE {' AND '.join(clauses)}",
                    (expression, RELATED_POSTINGS_BUDGET, *params)).fetchall()
            else:  # the same rows, newest first, from the rowids the probe read
                found = sorted(conn.execute(
                    "SELECT n.id, n.content FROM notes n CROSS JOIN tasks t ON t.id = n.task_id"
                    f" WHERE n.id IN ({', '.join('?' * len(newest))}) AND {' AND '.join(clauses)}",
                    (*newest, *params)).fetchall(), key=lambda row: -row[0]) if newest else []
            if word is not None:
                text = lambda row: row[1] or ""  # noqa: E731
            else:  # a prefix phrase occurs once at each token it starts: those tokens count as the prefix
                text = lambda row: [prefix if token.startswith(prefix) else token  # noqa: E731
                                    for token in fts.indexed_tokens(row[1] or "")]
            best = fts.rank_one_word(conn, "notes_fts", word or prefix, found, text,
                                     lambda row: row[0], RELATED_POSTINGS_BUDGET + 1)[:limit]
            whole = {row["id"]: row for row in conn.execute(
                "SELECT n.*, t.title AS via_task_title FROM notes n CROSS JOIN tasks t ON t.id = n.task_id"
                f" WHERE n.id IN ({', '.join('?' * len(best))})", [row[0] for _, row in best])} if best else {}
            ranked = [(score, whole[row[0]]) for score, row in best]
        else:
            if newest is not None:
                floor = newest[-1] if newest else None
            else:
                floor = None if total <= RELATED_POSTINGS_BUDGET else conn.execute(
                    f"SELECT min(rowid) FROM (SELECT rowid FROM notes_fts WHERE {fts.match('notes_fts')}"
                    " ORDER BY rowid DESC LIMIT ?)", (expression, RELATED_POSTINGS_BUDGET)).fetchone()[0]
            window, bounds = ("", []) if floor is None else (" AND notes_fts.rowid >= ?", [floor])
            ranked = [(row["score"], row) for row in conn.execute(
                "SELECT n.*, t.title AS via_task_title, bm25(notes_fts) AS score FROM notes_fts"
                " CROSS JOIN notes n ON n.id = notes_fts.rowid CROSS JOIN tasks t ON t.id = n.task_id"
                f" WHERE {fts.match('notes_fts')}{window} AND {' AND '.join(clauses)} ORDER BY score, notes_fts.rowid LIMIT ?",
                (expression, *bounds, *params, limit))]
    items = []
    for score, row in ranked:
        item = notes.row_to_note(row, now)
        item.pop("score", None)
        item["score"] = round(score, 6)
        items.append(builder.compact(item, defaults=builder.NOTE_DEFAULTS))
    return items, used, matched - used


def _single_prefix(expression):
    """The lowercase prefix when MATCH ``expression`` is one prefix term (``("migrat"*)``, a
    retrieval group of one prefix, or ``"migrat"*``), else None."""
    from mindos.store import fts  # lazy: only related notes read the full-text index
    inner = expression[1:-1] if expression[:1] == "(" and expression[-1:] == ")" else expression
    return fts.single_word(inner[:-1]) if inner[-1:] == "*" else None


def related_keys(options, candidates, packed, used, skipped):
    """The keys of the ``related_notes`` section: the ``packed`` share of ``candidates`` and
    the counters (``used`` / ``skipped``: :func:`related_candidates`'s group counts)."""
    return {
        "related_notes": packed,
        "related_requested": options["related"],
        "related_matched": len(candidates),
        "related_packed": len(packed),
        "related_scope": options["related_scope"],
        "related_tokens_used": used,
        "related_tokens_skipped": skipped,
    }


def _section_related_notes(state, budget):
    options = state["options"]
    candidates, used, skipped = related_candidates(state["conn"], state["task"], options["related"],
                                                   options["related_scope"], state["now"])
    return related_keys(options, candidates, budget.take_all(candidates, table=builder.TABLES["related_notes"]),
                        used, skipped)


# ---------------------------------------------------------------------------------------
# What a recall bundle packs beside this pack's own sections, kept here so a bundle that
# asks for no opt-in section (prime's held task, ``recall --related N``) loads neither the
# opt-in sections (mindos.context.sections) nor the rerank.


def memo(state, key, compute):
    """``compute()`` once per bundle: a recall builds its pack twice when the core form needs
    a rebuild, and candidates never depend on the budget."""
    found = state.setdefault("memo", {})
    if key not in found:
        found[key] = compute()
    return found[key]


def snapshot_cache(state, name):
    """The snapshot-wide cache ``name`` (a dict): what a fleet sweep rebuilding many bundles
    in one read snapshot shares between them (see :func:`mindos.context.recall.stale`)."""
    return state.setdefault("shared", {}).setdefault(name, {})


def text_groups(state):
    """The retrieval groups of the task's text, once per bundle (groups shared between the
    snapshot's tasks)."""
    from mindos.memory import retrieval  # lazy: a bundle without a matching section never loads the engine

    return memo(state, "groups", lambda: retrieval.groups(task_text(state["task"]), snapshot_cache(state, "groups")))


def item_sizes(state, items, table):
    """Each item's budget cost (its row's in ``table``, :meth:`mindos.context.builder.Table.cost`),
    computed once per item: candidates are never changed once fetched, and the same ones are
    offered again when a recall rebuilds its core form or a sweep packs rows another task's
    pack shared."""
    costs = snapshot_cache(state, "costs")
    sizes = []
    for item in items:
        known = costs.get(id(item))
        if known is None:  # the item is kept with its size, so its id is never reused while cached
            known = costs[id(item)] = (item, table.cost(item))
        sizes.append(known[1])
    return sizes


def related_pool(state, limit):
    """:func:`related_candidates` of the task, ``limit`` of them, once per bundle (through the
    groups the opt-in sections match with)."""
    options = state["options"]
    return memo(state, ("related_pool", limit), lambda: related_candidates(
        state["conn"], state["task"], limit, options["related_scope"], state["now"], state.get("shared"),
        text_groups(state)))


_RELATED_NOTES = builder.TABLES["related_notes"]


def bundle_related_notes(state, budget):
    """The ``related_notes`` section exactly (same candidates, same keys), with its candidates
    fetched once per bundle; a recall uses it in place of :func:`_section_related_notes`."""
    candidates, used, skipped = related_pool(state, state["options"]["related"])
    return related_keys(state["options"], candidates,
                        budget.take_all(candidates, item_sizes(state, candidates, _RELATED_NOTES)), used, skipped)


def bundle_related_notes_reranked(state, budget):
    """``related_notes`` re-scored by :func:`mindos.memory.rerank.rerank` (the one hybrid
    score); keys as the plain section's plus ``rerank`` (the half-life and boost used)."""
    from mindos.memory import rerank  # lazy: only --rerank scores by age

    options = state["options"]
    limit = options["related"]

    def ranked():
        pool, used, skipped = related_pool(state, min(limit * rerank.POOL, 400))
        ordered = rerank.rerank(pool, state["now"], options["recency_half_life_hours"], options["pinned_boost"])
        return ordered[:limit], used, skipped

    candidates, used, skipped = memo(state, "related_reranked", ranked)
    packed = budget.take_all(candidates, item_sizes(state, candidates, _RELATED_NOTES))
    keys = related_keys(options, candidates, packed, used, skipped)
    keys["rerank"] = {"recency_half_life_hours": options["recency_half_life_hours"],
                      "pinned_boost": options["pinned_boost"]}
    return keys


def latest_receipts(conn, task_id, limit):
    """A task's newest ``limit`` receipts as bundles carry them (:func:`receipt_entry`), newest first."""
    rows = conn.execute("SELECT id FROM receipts WHERE task_id = ? ORDER BY created_at DESC, id DESC LIMIT ?",
                        (task_id, limit)).fetchall()
    if not rows:
        return []
    from mindos.work import receipts  # lazy: sealed receipt files, loaded when there is one to read

    return [receipt_entry(receipts.load(conn, row[0])) for row in rows]


def receipt_entry(record):
    """A receipt as a bundle carries it: id, kind, time, seal and the parsed payload."""
    document = record["document"] if isinstance(record["document"], dict) else {}
    return builder.compact({"receipt_id": record["receipt_id"], "kind": record["kind"],
                            "created_at": record["created_at"], "file_hash": record["file_hash"],
                            "hash_ok": record["hash_ok"], "payload": document.get("payload")})


# The context pack's sections, in pack order (see mindos.context.builder).
SECTIONS = builder.Registry()
SECTIONS.register("task", _section_task)
SECTIONS.register("handoff", section_handoff)
SECTIONS.register("dependencies", _section_dependencies)
SECTIONS.register("notes", _section_notes)
SECTIONS.register("related_notes", _section_related_notes, option="related")


def _options(budget, related, related_scope):
    return {"budget": params.checked_budget(budget), "related": params.checked_count("related", related),
            "related_scope": params.checked_scope(related_scope)}


def assemble(conn, task_id, *, budget=DEFAULT_BUDGET, related=None, related_scope="project"):
    """Build the pack of ``task_id`` as an ordered list of sections; read-only.

    Returns ``{"task_id", "budget", "used_chars", "truncated", "sections": [(name, keys)]}``
    where each ``keys`` dict holds what that section contributes (its items and counters),
    in pack order.  This is the form to seal: a digest over ``sections`` (or over all but
    ``handoff``) is deterministic for identical state.
    """
    options = _options(budget, related, related_scope)
    task_id = validate.identifier(task_id, "task id")
    task = rows.get(conn, task_id)
    state = {"conn": conn, "task": task, "now": clock.now_iso(), "options": options}
    built = SECTIONS.assemble(state, options, options["budget"])
    return {"task_id": task_id, "budget": options["budget"], **built}


def pack_context(conn, task_id, *, budget=DEFAULT_BUDGET, related=None, related_scope="project"):
    """``context``: the pack of ``task_id`` within ``budget`` characters, flattened; read-only.

    Returns ``{"task_id", "budget", "used_chars", "truncated", "sections": [names],
    <every section's keys>}`` (see the module docstring for what the budget counts).
    """
    built = assemble(conn, task_id, budget=budget, related=related, related_scope=related_scope)
    pack = {key: built[key] for key in ("task_id", "budget", "used_chars", "truncated")}
    pack["pack_format"] = builder.PACK_FORMAT
    pack.update(builder.flatten(built["sections"]))
    return builder.encode(pack)
