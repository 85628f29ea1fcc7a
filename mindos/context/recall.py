"""Recall: the sealed session bootstrap, its freshness checks, and resume.

A *bundle* is everything durable an agent needs before acting on a task: the context pack
(with whatever opt-in sections were asked for), the lease state seen from the caller
(``held_by_caller``) and the latest RECEIPTS_IN_BUNDLE receipts with parsed payloads.

Design decisions
  * **Two digests over a canonical form.**  ``digest`` is the SHA-256 of the canonical JSON
    of the bundle as printed (its tables) minus ``digest``, ``core_digest`` and
    ``recalled_at`` (the recall time is the one thing that changes without durable state
    changing).  ``core_digest`` is the same over the bundle *as if the task's live handoff
    did not exist* (no ``handoff`` keys, no budget spent on it; the section is still named),
    so an agent's own handoff recorded after its recall is not drift against its own
    citation.  With no handoff packed the core form is the bundle itself (the two digests
    are equal).  When the handoff was packed and
    nothing was dropped, removing it changes nothing else (every other item fit already), so
    the core form is derived without a second build; only a truncated pack is rebuilt.
  * **Provenance in the ledger.**  ``recall``, ``next --claim --recall`` and ``resume``
    audit ``context_recalled`` / ``session_resumed`` on the task with the agent, both
    digests, every bundle parameter (``params``) and a compact per-section ``manifest``.
    The manifest is never hashed into a digest.  The event also names the ``pack_format``
    it was packed in: a recall of an older format is never proven fresh by the ledger alone,
    and ``recall-diff`` says ``pack_format_changed`` (its digest moved with the shape).
    ``recall-diff`` and ``ops.py
    recall-stale`` find the event that produced a cited digest and recompute the bundle with
    exactly the recorded parameters; ``recall-verify`` recomputes with the caller's own and
    writes nothing.
  * **A sweep is one snapshot.**  ``recall-stale`` finds every cited event in one indexed
    query and rebuilds the bundles inside one read transaction, so what does not depend on
    the asking task (index posting counts, retrieval groups, section rows shared by tasks
    with the same match and scope, item costs) is computed once and stays exact for every
    rebuild.  Each rebuild is still the whole pack under its event's own parameters.  A
    large sweep may be cut into shares checked by several processes at once
    (:mod:`mindos.context.stale_shares`): each share is then one snapshot, every share
    is checked at the same planned instant, and the report is the serial one.
  * **Deterministic, never raw BM25.**  Every ordering in a pack ends on an id; the opt-in
    sections carry no relevance score at all (see :mod:`mindos.context.sections`), and the
    related notes, which show their BM25 ``score`` (and ``rank_score`` under rerank), enter
    the digest without those scores and ordered by id (:func:`sealed_form`): BM25 moves
    whenever any note joins the index anywhere.  Rerank ages are floored to whole hours.
    Identical durable state gives an identical digest across processes and restarts.
"""

import json

from mindos.context import builder, pack as context_pack
from mindos.context.params import PARAM_KEYS, SECTION_OPTIONS, make_params
from mindos.core import clock, validate
from mindos.core.canonical import canonical_json, sha256_hex
from mindos.errors import InvalidInput, MindosError, NotFound, Refused
from mindos.store import db, ledger

RECALL_ACTIONS = ("context_recalled", "session_resumed")
RECEIPTS_IN_BUNDLE = 3
# the sections recall-diff reports, in bundle order
DIFF_SECTIONS = ("task", "dependencies", "handoff", "notes", "related_notes", "related_handoffs", "dep_context",
                 "related_sessions", "related_facts", "related_semantic", "lease", "receipts")
_STATUS_FIELDS = ("status", "priority", "due_at", "next_action", "blocked_reason")
_OUTSIDE_DIGEST = ("digest", "core_digest", "recalled_at")
# what a compact header's absent status field stands for (due_at: null)
_HEADER_ABSENT = {**builder.TASK_DEFAULTS, "next_action": "", "blocked_reason": ""}


# ---------------------------------------------------------------------------------------
# Parameters


def params_from_event(payload):
    """The parameters an audited recall recorded, or None when it recorded none (legacy)."""
    recorded = payload.get("params")
    if not isinstance(recorded, dict):
        return None
    try:
        return make_params(**{key: recorded.get(key) for key in PARAM_KEYS if key != "rerank"},
                           rerank=bool(recorded.get("rerank")))
    except (InvalidInput, TypeError):
        return None


def same_format(payload):
    """True when an audited recall was packed in the current pack format (``pack_format`` in
    its payload; events recorded before pack format 4 carry none).  A recall of an older
    format cannot be proven fresh by the ledger alone: its digest was taken over the older
    shape, so only a rebuild says whether it still matches (it does not: the format moved it)."""
    return payload.get("pack_format") == builder.PACK_FORMAT


# ---------------------------------------------------------------------------------------
# Building


def build_pack(conn, task, params, now, *, with_handoff=True, memo=None, shared=None):
    """The pack of ``task`` (a task dict) under ``params``: the ``context`` command's sections
    (:mod:`mindos.context.pack`), then the opt-in ones.  Returns the flattened pack (the
    ``context`` shape, its entry lists still lists of entry dicts: :func:`pack` prints them as
    tables); read-only.  ``memo`` shares fetched candidates between the builds of
    one bundle; ``shared`` shares index posting counts and task-independent section results
    between the bundles built in one read snapshot (see :func:`stale`)."""
    options = dict(params)
    if any(options[name] is not None for name in SECTION_OPTIONS):
        from mindos.context import sections  # noqa: F401  # lazy: registers the opt-in sections asked for
    state = {"conn": conn, "task": task, "now": now, "options": options, "memo": {} if memo is None else memo,
             "shared": {} if shared is None else shared}
    meter = builder.Budget(params["budget"])
    names, keys = [], {}
    for section in context_pack.SECTIONS.active(options):
        name, build = section.name, section.build
        names.append(name)  # the core form names the handoff section too: it differs only in what is packed
        if name == "handoff" and not with_handoff:
            continue
        if name == "related_notes":
            build = (context_pack.bundle_related_notes_reranked if params["rerank"]
                     else context_pack.bundle_related_notes)
        keys.update(builder.lean(build(state, meter)))
    pack = {"task_id": task["id"], "pack_format": builder.PACK_FORMAT, "budget": params["budget"],
            "used_chars": meter.used, "truncated": meter.truncated, "sections": names}
    pack.update(keys)
    return pack


def pack(conn, task_id, params):
    """``context`` with opt-in sections: the flattened pack; read-only.  Without any opt-in
    option it is the pack :func:`mindos.context.pack.pack_context` builds (``context`` calls
    that one then, so the sections and the engine stay unloaded)."""
    from mindos.work import rows  # lazy: the task row

    return builder.encode(build_pack(conn, rows.get(conn, validate.identifier(task_id, "task id")), params,
                                     clock.now_iso()))


def lease_state(task, agent, now):
    """The lease as the caller sees it, lean: ``epoch`` always, ``owner``, ``expires_at``,
    ``live`` and ``held_by_caller`` only when set (absent: null or false)."""
    from mindos.work import rows  # lazy: lease liveness

    live = rows.lease_is_live(task, now)
    return builder.compact({"owner": task["lease_owner"] or None, "expires_at": task["lease_expires_at"],
                            "epoch": task["lease_epoch"], "live": live,
                            "held_by_caller": bool(live and agent and task["lease_owner"] == agent)})


def _tail(conn, task, agent, now):
    """The part of a bundle beside its pack, sealed with it: ``agent``, ``lease``, ``receipts``
    (left out when the task has none, like every empty list of a lean pack)."""
    tail = {"agent": agent, "lease": lease_state(task, agent, now)}
    receipts = context_pack.latest_receipts(conn, task["id"], RECEIPTS_IN_BUNDLE)
    if receipts:
        tail["receipts"] = receipts
    return tail


def _core_pack(conn, task, params, now, full, memo):
    """The pack as if the live handoff did not exist (see the module docstring)."""
    if not full.get("handoff_packed"):  # no live handoff packed: the core form is the pack itself
        return full
    if full["truncated"]:
        return build_pack(conn, task, params, now, with_handoff=False, memo=memo)
    core = {key: value for key, value in full.items() if key not in ("handoff", "handoff_packed")}
    core["used_chars"] = full["used_chars"] - builder.cost(full["handoff"])
    return core


def _full_pack(conn, task, params, now, core, memo, shared):
    """The pack :func:`build_pack` builds with the live handoff, from its ``core`` form (built
    with the same ``params`` at ``now``): when the handoff fits in what the core left, the
    handoff section is taken alone; else the pack is built whole.  The budget is first-fit
    and the handoff comes right after the header, the one section that sizes itself by the
    room left: so each entry the core packed still fits after the handoff, and each it
    dropped still does not (the converse of :func:`_core_pack`, which needs an untruncated
    pack because it gives room back)."""
    meter = builder.Budget(params["budget"])
    meter.used = core["used_chars"]
    keys = builder.lean(context_pack.section_handoff({"conn": conn, "task": task}, meter))
    if meter.truncated:
        return build_pack(conn, task, params, now, memo=memo, shared=shared)
    return {**core, **keys, "used_chars": meter.used}


_SCORES = ("score", "rank_score")
# index statistics and what they feed, never task state: left out of the sealed form
_INDEX_STATISTICS = ("used_chars", "related_tokens_used", "related_tokens_skipped")

# Upper floors add unsealed keys to a bundle through callables ``(conn, task_id) -> dict``
# their caller passes in (``unsealed=``: the recall commands pass the continuation grant's),
# so context never names an upper floor.
UNSEALED_KEYS = frozenset({"grant"})  # the keys those callables add; sealed_form leaves them out


def sealed_form(durable):
    """The form a digest is taken over: the bundle's durable part with related notes
    stripped of their relevance scores (``score``, ``rank_score``) and ordered by id, and
    without the index statistics (``used_chars``, which counts the scores' characters, and
    ``related_tokens_used`` / ``_skipped``, chosen by fleet-wide posting counts).

    BM25 scores, the order they give and the token rarity counts move whenever any note
    anywhere joins the index; sealing them would stale every digest without real drift.
    Which notes were packed, and everything in them, still counts.  The unsealed keys of
    later dimensions (``UNSEALED_KEYS``: the continuation grant) are left out too."""
    if "related_notes" not in durable and not UNSEALED_KEYS & durable.keys():
        return durable
    form = {key: value for key, value in durable.items() if key not in _INDEX_STATISTICS and key not in UNSEALED_KEYS}
    if "related_notes" not in durable:
        return form
    form["related_notes"] = sorted(({key: value for key, value in note.items() if key not in _SCORES}
                                    for note in durable["related_notes"]), key=lambda note: note["id"])
    return form


def digest_of(durable):
    """SHA-256 hex of the canonical JSON of a bundle's durable part (see :func:`sealed_form`),
    as it is printed (:func:`mindos.context.builder.encode`: the seal covers the tables)."""
    return sha256_hex(canonical_json(builder.encode(sealed_form(durable))))


def _digests(full, core, tail, known=None):
    """``(digest, core_digest)`` of a bundle whose pack is ``full`` and whose core form is
    ``core`` (:func:`_core_pack`).  A core derived from the full pack differs from it only by
    the handoff's keys and ``used_chars``, which no other printed key depends on, so its
    printed form is the full one's without them (``used_chars`` the core's, where the sealed
    form keeps it): the tables are laid out once (``known``: kept for the bundle's own
    printing, see :func:`mindos.context.builder.encode`)."""
    printed = builder.encode(sealed_form({**full, **tail}), known)
    text = canonical_json(printed)
    digest = sha256_hex(text)
    if core is full:  # no handoff packed: the core form is the pack itself
        return digest, digest
    if full["truncated"]:  # rebuilt (:func:`_core_pack`): its own layout
        return digest, digest_of({**core, **tail})
    cut = _without_handoff(text, printed)
    if cut is not None:
        return digest, sha256_hex(cut)
    printed = {key: value for key, value in printed.items() if key not in _HANDOFF_KEYS}
    if "used_chars" in printed:
        printed["used_chars"] = core["used_chars"]
    return digest, sha256_hex(canonical_json(printed))


_HANDOFF_KEYS = ("handoff", "handoff_packed")


def _without_handoff(text, printed):
    """``text``, the canonical JSON of ``printed`` (a printed bundle), with its ``handoff`` and
    ``handoff_packed`` entries cut out: the canonical JSON of the bundle without them (what
    encoding it again would give, at about a tenth of the cost), or None when the cut cannot
    be proven exact.

    Canonical JSON sorts the keys and separates entries by single commas, and a value's text
    is the same alone as inside its object, so the two entries print as one run, ``"handoff":
    <its value>,"handoff_packed":<its value>``, exactly once at the top level unless a key
    sorts between the two.  A quoted key cannot occur inside a string (its quotes would be
    escaped), so a run found once in the whole text is that top-level one; any doubt (a key
    between, the run repeated in some nested value, ``used_chars`` printed, which the core
    form changes) gives None."""
    if "used_chars" in printed or any(_HANDOFF_KEYS[0] < key < _HANDOFF_KEYS[1] for key in printed):
        return None
    run = (f'"{_HANDOFF_KEYS[0]}":{canonical_json(printed[_HANDOFF_KEYS[0]])},'
           f'"{_HANDOFF_KEYS[1]}":{canonical_json(printed[_HANDOFF_KEYS[1]])}')
    at = text.find(run)
    if at < 0 or text.find(run, at + 1) >= 0:
        return None
    end = at + len(run)
    if text[at - 1] == ",":  # an entry before it: drop the comma that led in
        return text[:at - 1] + text[end:]
    return text[:at] + text[end + 1:] if text[end] == "," else text[:at] + text[end:]


def bundle(conn, task_id, agent, params, now=None, *, unsealed=(), known=None):
    """The sealed recall bundle of ``task_id`` for ``agent``; read-only.

    Returns the flattened pack plus ``agent``, ``lease``, ``receipts``, ``digest``,
    ``core_digest``, ``recalled_at`` and the keys of ``unsealed`` (callables ``(conn,
    task_id) -> dict`` of upper floors, never sealed: the recall commands pass the live
    continuation grant's, ``grant``).  Its entry lists are lists of entry dicts (what the
    manifest, the sweeps and prime read); the commands print it through
    :func:`mindos.context.builder.encode`, the form the digests are taken over (``known``:
    a dict that keeps the tables the digests laid out, for that printing to reuse).  Raises
    NotFound for an unknown task.
    """
    from mindos.work import rows  # lazy: the task row

    now = now or clock.now_iso()
    task = rows.get(conn, validate.identifier(task_id, "task id"))
    memo = {}
    full = build_pack(conn, task, params, now, memo=memo)
    tail = _tail(conn, task, agent, now)
    result = {**full, **tail}
    core = _core_pack(conn, task, params, now, full, memo)
    # no handoff packed: the core form is the pack itself, and so is its digest
    result["digest"], result["core_digest"] = _digests(full, core, tail, known)
    result["recalled_at"] = now
    # unsealed additions of later dimensions (the continuation grant expires by the clock,
    # and a digest must never move with time alone)
    for section in unsealed:
        result.update(builder.lean(section(conn, task["id"])))
    return result


def manifest(sealed):
    """The compact per-section manifest of a bundle (what recall-diff compares)."""
    found = {}
    header = sealed.get("task")
    # a compact header leaves defaults and empty text out: the manifest names them as before
    found["task"] = {name: header.get(name, _HEADER_ABSENT.get(name)) for name in _STATUS_FIELDS} if header else None
    found["dependencies"] = [[dep["id"], dep["status"]] for dep in sealed.get("dependencies", ())]
    if "handoff" in sealed["sections"]:
        handoff = sealed.get("handoff")
        found["handoff"] = ({"id": handoff["id"], "from_agent": handoff["from_agent"], "to_agent": handoff.get("to_agent", "")}
                            if handoff else None)
    found["notes"] = [[note["id"], note.get("pinned", False), note.get("expired", False)] for note in sealed.get("notes", ())]
    if "related_notes" in sealed["sections"]:
        found["related_notes"] = sorted(item["id"] for item in sealed.get("related_notes", ()))  # BM25 order is not sealed
    for name in ("related_handoffs", "related_facts", "related_semantic"):
        if name in sealed["sections"]:
            found[name] = [item["id"] for item in sealed.get(name, ())]
    if "dep_context" in sealed["sections"]:
        found["dep_context"] = [[item["id"], item["handoff"]["id"] if item.get("handoff") else None,
                                 item["receipt"]["receipt_id"] if item.get("receipt") else None]
                                for item in sealed.get("dep_context", ())]
    lease = sealed["lease"]  # lean: an absent owner / expires_at is null, an absent live false
    found["lease"] = {name: lease.get(name, False if name == "live" else None)
                      for name in ("owner", "epoch", "expires_at", "live")}
    found["receipts"] = [receipt["receipt_id"] for receipt in sealed.get("receipts", ())]
    return found


def _event(conn, action, sealed, params, extra_payload=None):
    payload = {"agent": sealed["agent"], "digest": sealed["digest"], "core_digest": sealed["core_digest"],
               "params": params, "manifest": manifest(sealed), "pack_format": builder.PACK_FORMAT}
    payload.update(extra_payload or {})
    ledger.append_event(conn, "task", sealed["task_id"], action, payload)


def _agent(agent, flag="--agent"):
    return validate.agent(agent, flag)


# ---------------------------------------------------------------------------------------
# Commands


def recall(conn, task_id, *, agent, params, unsealed=()):
    """``recall``: build the bundle (with ``unsealed``, see :func:`bundle`) and audit
    ``context_recalled``; return the bundle as printed (:func:`mindos.context.builder.encode`)."""
    agent = _agent(agent)
    known = {}  # the tables the digests laid out, printed again as they are
    with db.write(conn):
        sealed = bundle(conn, task_id, agent, params, unsealed=unsealed, known=known)
        _event(conn, "context_recalled", sealed, params, {"via": "recall"})
    return builder.encode(sealed, known)


def verify(conn, task_id, digest, *, agent, params):
    """``recall-verify``: recompute with the caller's parameters (no audit write).

    ``fresh`` is true when ``digest`` equals the current digest or core digest."""
    digest = _cited(digest)
    sealed = bundle(conn, task_id, _agent(agent), params)
    return {"task_id": sealed["task_id"], "digest": digest, "fresh": digest in (sealed["digest"], sealed["core_digest"]),
            "current_digest": sealed["digest"], "current_core_digest": sealed["core_digest"], "params": params}


def _cited(digest):
    value = validate.digest(digest, "--digest")
    if not value:
        raise InvalidInput("invalid --digest: expected a 64-character hex SHA-256 digest")
    return value


def _producing(row, digest):
    """``(event dict with parsed payload, "digest" | "core_digest")`` when the audited recall
    ``row`` produced ``digest`` (as its digest or core digest), else None."""
    try:
        payload = json.loads(row["payload_json"])
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    for kind in ("digest", "core_digest"):
        if payload.get(kind) == digest:
            return {"id": row["id"], "action": row["action"], "created_at": row["created_at"], "payload": payload}, kind
    return None


def find_event(conn, task_id, digest):
    """The newest audited recall/resume of ``task_id`` that produced ``digest`` (as its
    digest or core digest): ``(event dict with parsed payload, "digest" | "core_digest")``
    or ``(None, None)``."""
    rows = conn.execute(
        "SELECT id, action, payload_json, created_at FROM audit_events WHERE entity_id = ? AND action IN (?, ?)"
        " AND instr(payload_json, ?) > 0 ORDER BY id DESC",
        (task_id, *RECALL_ACTIONS, digest)).fetchall()
    for row in rows:
        found = _producing(row, digest)
        if found is not None:
            return found
    return None, None


# at most this many task ids narrow the cited read (bound values); more read the whole list
CITED_TASKS_NARROWED = 500


def cited_events(conn, tasks=None):
    """Every live handoff citing a recall digest, oldest task first: ``[(handoff, event or
    None)]`` (``handoff``: its id, task_id and recall_digest) with the event as
    :func:`find_event` finds it, all in one indexed query (each cited task's recall events,
    through ``idx_audit_entity``), so the handoffs and their events come from one snapshot.

    ``tasks``: only the handoffs of these task ids, read through the live-handoff index: the
    same entries, in the same order, as the whole list filtered to them (a tick re-checking
    two recalls reads their recall events, not those of every cited task)."""
    wanted, narrowed = (), ""
    if tasks is not None:
        wanted = sorted(set(tasks))
        if len(wanted) > CITED_TASKS_NARROWED:
            kept = set(wanted)
            return [(handoff, event) for handoff, event in cited_events(conn) if handoff["task_id"] in kept]
        if not wanted:
            return []
        narrowed = f" AND h.task_id IN ({', '.join('?' * len(wanted))})"
    found, events = {}, {}
    for row in conn.execute(
            "SELECT h.id AS handoff_id, h.task_id, h.recall_digest, a.id, a.action, a.payload_json, a.created_at"
            " FROM handoffs h LEFT JOIN audit_events a ON a.entity_id = h.task_id AND a.action IN (?, ?)"
            " AND instr(a.payload_json, h.recall_digest) > 0"
            f" WHERE h.superseded_by IS NULL AND h.recall_digest <> ''{narrowed} ORDER BY h.task_id, h.id, a.id DESC",
            (*RECALL_ACTIONS, *wanted)):
        handoff_id = row["handoff_id"]
        if handoff_id not in found:
            found[handoff_id] = {"id": handoff_id, "task_id": row["task_id"], "recall_digest": row["recall_digest"]}
        if row["id"] is not None and handoff_id not in events:
            producing = _producing(row, row["recall_digest"])
            if producing is not None:
                events[handoff_id] = producing[0]
    return [(handoff, events.get(handoff_id)) for handoff_id, handoff in found.items()]


def _legacy_params(payload):
    """Parameters of a pre-capture event: its flat budget/related/scope keys, else defaults."""
    try:
        return make_params(budget=payload.get("budget"), related=payload.get("related"),
                           related_scope=payload.get("related_scope") or payload.get("scope"))
    except (InvalidInput, TypeError):
        return make_params()


def _recompute(conn, task_id, event):
    payload = event["payload"]
    params = params_from_event(payload)
    agent = payload.get("agent") if isinstance(payload.get("agent"), str) else None
    return params, bundle(conn, task_id, agent, params or _legacy_params(payload))


def diff(conn, task_id, digest):
    """``recall-diff``: what moved, section by section, since the recall that produced ``digest``.

    Returns ``{"task_id", "digest", "fresh", "unchanged", "changes", "sections_changed"}``
    plus ``current_digest``, ``event_id``, ``recalled_at``, ``agent``.  A digest no audited
    recall of the task produced raises NotFound (``unproven_recall_digest``); an event without
    a manifest degrades to the plain verdict with ``legacy_event: true``.  Read-only.
    """
    digest = _cited(digest)
    from mindos.work import rows  # lazy: the task row

    task_id = rows.get(conn, validate.identifier(task_id, "task id"))["id"]
    result = {"task_id": task_id, "digest": digest, "fresh": False, "unchanged": [], "changes": {},
              "sections_changed": []}
    event, kind = find_event(conn, task_id, digest)
    if event is None:
        raise NotFound(f"no audited recall of {task_id} produced digest {digest}: recall-diff compares against"
                       " a digest printed by recall, resume or next --claim --recall for this task",
                       code="unproven_recall_digest")
    params, current = _recompute(conn, task_id, event)
    result.update(event_id=event["id"], recalled_at=event["created_at"], agent=current["agent"],
                  current_digest=current["digest"], current_core_digest=current["core_digest"],
                  fresh=current[kind] == digest)
    if not same_format(event["payload"]):  # the digest moved with the pack's shape, whatever else did
        result["pack_format_changed"] = True
    old = event["payload"].get("manifest")
    if params is None or not isinstance(old, dict):
        result["legacy_event"] = True
        return result
    changes = diff_manifests(old, manifest(current))
    result["changes"] = changes
    result["sections_changed"] = [name for name in DIFF_SECTIONS if name in changes]
    result["unchanged"] = [name for name in DIFF_SECTIONS if name not in changes and (name in old)]
    return result


def _ids_moved(old, new):
    old_keys, new_keys = [json.dumps(item) for item in old or []], [json.dumps(item) for item in new or []]
    moved = {"added": [json.loads(item) for item in new_keys if item not in old_keys],
             "removed": [json.loads(item) for item in old_keys if item not in new_keys]}
    if not moved["added"] and not moved["removed"]:
        moved["reordered"] = True
    return moved


def diff_manifests(old, new):
    """``{section: what moved}`` for every section whose manifest entry differs."""
    changes = {}
    for name in DIFF_SECTIONS:
        before, after = old.get(name), new.get(name)
        if before == after:
            continue
        if name == "task" and isinstance(before, dict) and isinstance(after, dict):
            changes[name] = {field: {"from": before.get(field), "to": after.get(field)}
                             for field in _STATUS_FIELDS if before.get(field) != after.get(field)}
        elif name in ("handoff", "lease"):
            changes[name] = {"from": before, "to": after}
        elif name == "dependencies":
            before_ids = {item[0]: item[1] for item in before or []}
            after_ids = {item[0]: item[1] for item in after or []}
            changes[name] = {
                "added": [dep for dep in after_ids if dep not in before_ids],
                "satisfied": [dep for dep in before_ids if dep not in after_ids],
                "status_changed": [{"id": dep, "from": before_ids[dep], "to": after_ids[dep]}
                                   for dep in before_ids if dep in after_ids and before_ids[dep] != after_ids[dep]],
            }
        elif name == "notes":
            before_map = {item[0]: item[1:] for item in before or []}
            after_map = {item[0]: item[1:] for item in after or []}
            changes[name] = {
                "added": [nid for nid in after_map if nid not in before_map],
                "removed": [nid for nid in before_map if nid not in after_map],
                "flags_changed": [{"id": nid, "from": {"pinned": before_map[nid][0], "expired": before_map[nid][1]},
                                   "to": {"pinned": after_map[nid][0], "expired": after_map[nid][1]}}
                                  for nid in before_map if nid in after_map and before_map[nid] != after_map[nid]],
            }
        else:
            changes[name] = _ids_moved(before, after)
    return changes


# Events that cannot change a task's *core* bundle: its own handoff being recorded, deduplicated
# or acknowledged (the core leaves the live handoff out, and related handoffs skip the task's own).
_OWN_HANDOFF_ACTIONS = ("handoff_recorded", "handoff_deduplicated", "handoff_acknowledged")


def _written_since(conn, event_id, task_id):
    """True when the ledger holds, after ``event_id``, an event that could change the core
    bundle of ``task_id``: anything but recalls, resumes and the task's own handoff events."""
    row = conn.execute(
        "SELECT 1 FROM audit_events WHERE id > ? AND action NOT IN (?, ?)"
        " AND NOT (entity_type = 'handoff' AND entity_id = ? AND action IN (?, ?, ?)) LIMIT 1",
        (event_id, *RECALL_ACTIONS, task_id, *_OWN_HANDOFF_ACTIONS)).fetchone()
    return row is not None


# The lifetimes whose end a bundle sees, as (table, end column, the rows that have one, the
# task a row's end belongs to): a note's, a lease's (one without an owner is never live,
# rows.lease_is_live: its end moves nothing) and a fact's window (no task's: only a related
# section packs facts).  Each is read through the partial index of those rows
# (idx_notes_expiring, idx_tasks_lease_owner, idx_facts_ending), so finding the ends costs
# what there are of them, not a pass over every note and task.
_LIFETIMES = (("notes", "expires_at", "expires_at IS NOT NULL", "task_id"),
              ("tasks", "lease_expires_at", "lease_owner <> ''", "id"),
              ("facts", "valid_until", "valid_until IS NOT NULL", None))


def _lifetime_ends(conn, since, now, upcoming=None):
    """Sorted instants in (since, now] at which a note lifetime, a lease or a fact window ended.
    ``upcoming``: a list that receives the first such instant after ``now`` (or None), read
    in the same pass over each index."""
    if upcoming is None:
        rows = conn.execute(" UNION ".join(
            f"SELECT {column} FROM {table} WHERE {having} AND {column} > :since AND {column} <= :now"
            for table, column, having, _ in _LIFETIMES), {"since": since, "now": now}).fetchall()
        return sorted(row[0] for row in rows)
    # one pass per index: the ends up to now, grouped apart from the later ones (their minimum)
    rows = conn.execute(" UNION ALL ".join(
        f"SELECT {column} <= :now, min({column}) FROM {table} WHERE {having} AND {column} > :since"
        f" GROUP BY CASE WHEN {column} <= :now THEN {column} END"
        for table, column, having, _ in _LIFETIMES), {"since": since, "now": now}).fetchall()
    later = [row[1] for row in rows if not row[0]]
    upcoming.append(min(later) if later else None)
    return sorted({row[1] for row in rows if row[0]})


def lapsed(conn, since, now):
    """The ids of the tasks whose lease or a note's lifetime ended in [since, now], sorted:
    what a lifetime end in that span can move beyond the recalls any write can move.  Reads
    only those ends (see _LIFETIMES)."""
    rows = conn.execute(" UNION ".join(
        f"SELECT {task} FROM {table} WHERE {having} AND {column} >= :since AND {column} <= :now"
        for table, column, having, task in _LIFETIMES if task), {"since": since, "now": now}).fetchall()
    return sorted(row[0] for row in rows)


def _unchanged_since(conn, task_id, event, params, ends):
    """True when the ledger proves the cited recall's bundle cannot have changed.

    Every durable change appends a ledger event in its own transaction, and recalls change
    nothing a bundle holds; so with no other event after the cited one, no lifetime
    boundary passed since (``ends``: expiries, leases, fact windows), no rerank (whose ages
    move by the hour) and every receipt it packed still matching its seal, recomputing would
    give the same bundle.  A recall packed in an older pack format (:func:`same_format`) is
    always rebuilt."""
    import bisect  # lazy: only the fleet sweep reads lifetime boundaries

    from mindos.work import receipts  # lazy: sealed receipt files

    manifest = event["payload"].get("manifest")
    if params["rerank"] or not isinstance(manifest, dict) or not same_format(event["payload"]) \
            or _written_since(conn, event["id"], task_id):
        return False
    if bisect.bisect_right(ends, event["created_at"]) < len(ends):
        return False
    cited = list(manifest.get("receipts") or [])
    cited += [entry[2] for entry in manifest.get("dep_context") or [] if isinstance(entry, list) and entry[2:3]
              and entry[2]]
    for receipt_id in cited:
        try:
            if receipts.load(conn, receipt_id)["hash_ok"] is not True:
                return False
        except MindosError:
            return False
    return True


def stale(conn, *, recompute=False):
    """``ops.py recall-stale``: every live handoff citing a recall digest, checked against
    current state with the recorded parameters; read-only.

    Each item is ``fresh`` (the cited recall's core context still matches), ``stale``
    (with ``current_digest``), ``unproven_recall_digest`` or ``unknown_recall_params``, and
    says how freshness was established: ``checked_by`` ``ledger`` (nothing but the task's own
    handoff was written and no lifetime ended since the cited recall: see
    :func:`_unchanged_since`) or ``recompute``
    (the bundle rebuilt with the recorded parameters and its core digest compared).
    ``recompute`` forces the rebuild for every item.  Returns ``{"ok", "checked",
    "counts", "items"}``.

    The sweep runs in one read snapshot (:func:`mindos.store.db.read`): every rebuild sees
    the same state, so the index posting counts and task-independent section rows one
    rebuild reads are exact for the next and are read once per sweep, not once per handoff.
    Each rebuild is still the whole bundle with its event's own parameters, exactly as
    :func:`bundle` builds it; a fresh item needs only the core form, so the full pack is
    built only for a stale item's ``current_digest``.

    The sweep splits in two for callers that share it between processes: :func:`stale_plan`
    (what to check, and the instant to check it at) and :func:`check_cited` (one share of
    it, in its own snapshot); :func:`stale_report` joins the shares' items.
    """
    with db.read(conn):
        plan = stale_plan(conn, recompute=recompute)
        return stale_report(check_cited(conn, plan))


def stale_plan(conn, *, recompute=False, upcoming=None):
    """What a recall-stale sweep checks: ``{"now", "recompute", "ends", "cited"}``, where
    ``cited`` is every live citing handoff as ``[handoff, event or None]`` (plain dicts, so a
    plan can travel to another process as JSON) and ``ends`` the lifetime ends the ledger
    proof needs (:func:`_lifetime_ends`)."""
    now = clock.now_iso()
    found = cited_events(conn)
    times = [event["created_at"] for _, event in found if event is not None]
    ends = _lifetime_ends(conn, min(times), now, upcoming) if times and not recompute else []
    if upcoming is not None and not upcoming:  # ``upcoming``: receives the first lifetime end after now
        upcoming.append(_next_end(conn, now))
    cited = [[handoff, event] for handoff, event in found]
    return {"now": now, "recompute": bool(recompute), "ends": ends, "cited": cited}


def check_cited(conn, plan, quiet=None):
    """The items of ``plan["cited"]`` (the whole sweep, or one share of it) checked at the
    plan's instant, in order, inside one read snapshot of ``conn`` (see :func:`stale`).

    ``quiet``: a dict that receives, for every item rebuilt or proven fresh by the ledger, ``{task_id: [horizon,
    checked_ns]}``: the first instant at which its bundle can move with time alone while
    nothing is written (:func:`_age_horizon`; None: never) and the file-system time taken
    before the rebuild read any receipt file (what a later check compares receipt files'
    times with)."""
    from mindos.work import rows  # lazy: the task rows

    now, recompute, ends = plan["now"], plan["recompute"], plan["ends"]
    if quiet is not None:
        import time  # lazy: file times are the file system's, not the package clock's

        checked_ns = time.time_ns()
    items = []
    shared = {}  # index statistics and task-independent results, shared by every rebuild (one snapshot)
    with db.read(conn):
        for row, event in plan["cited"]:
            item = {"task_id": row["task_id"], "handoff_id": row["id"], "recall_digest": row["recall_digest"]}
            items.append(item)
            if event is None:
                item["status"] = "unproven_recall_digest"
                continue
            params = params_from_event(event["payload"])
            item["event_id"] = event["id"]
            if params is None:
                item["status"] = "unknown_recall_params"
            elif not recompute and _unchanged_since(conn, row["task_id"], event, params, ends):
                item.update(status="fresh", checked_by="ledger")
                if quiet is not None:  # no rerank (else not proven so): nothing but receipt files moves it
                    quiet[row["task_id"]] = [None, checked_ns]
            else:
                agent = event["payload"].get("agent")
                agent = agent if isinstance(agent, str) else None
                task, memo = rows.get(conn, row["task_id"]), {}
                # the core form directly (the pack as if the live handoff did not exist: what
                # _core_pack derives from the full one), and the full pack only for the stale
                # items that report its digest, from the core form when it can be
                core = build_pack(conn, task, params, now, with_handoff=False, memo=memo, shared=shared)
                tail = _tail(conn, task, agent, now)
                item["checked_by"] = "recompute"
                if digest_of({**core, **tail}) == event["payload"].get("core_digest"):
                    item["status"] = "fresh"
                else:
                    item["status"] = "stale"
                    full = _full_pack(conn, task, params, now, core, memo, shared)
                    item["current_digest"] = digest_of({**full, **tail})
                if quiet is not None:
                    quiet[row["task_id"]] = [_age_horizon(memo, params, now), checked_ns]
    return items


def _age_horizon(memo, params, now):
    """The first instant after ``now`` at which a bundle just built with ``memo`` can change
    with no write at all, apart from lifetime ends (note expiries, leases, fact windows,
    which :func:`_lifetime_ends` tracks) and receipt files: for a rerank, the first instant
    a reranked candidate's age in whole hours moves (:func:`mindos.memory.rerank.score`
    floors ages to the hour); None without a rerank.  ``now`` itself when the candidates
    cannot be read from ``memo`` (the bundle is then never taken as unchanged)."""
    if not params.get("rerank"):
        return None
    pools = [value for key, value in memo.items() if isinstance(key, tuple) and key[:1] == ("related_pool",)]
    if not pools:
        return now if params.get("related") else None
    from mindos.memory import rerank  # lazy: the one age rule

    horizon = None
    for pool in pools:
        notes = pool[0] if isinstance(pool, tuple) and pool and isinstance(pool[0], list) else None
        if notes is None:
            return now
        for note in notes:
            created = note.get("created_at") if isinstance(note, dict) else None
            if not isinstance(created, str):
                return now
            try:
                moves = clock.shift(created, (rerank.age_hours(created, now) + 1) * 3600)
            except (InvalidInput, ValueError, OverflowError):
                return now
            horizon = moves if horizon is None or moves < horizon else horizon
    return horizon


STALE_STATUSES = ("fresh", "stale", "unproven_recall_digest", "unknown_recall_params")


def stale_sweep(conn, *, tasks=None, quiet=None, cited=None):
    """The recall-stale sweep for a caller that keeps its result between runs (the nanny's
    tick): ``(report, horizon)``, the report :func:`stale` gives and what it depends on
    beyond the ledger, ``{"next_end", "volatile"}``: the first lifetime end after the
    sweep's instant (a note expiry, a lease or a fact window; None when none is ahead) and
    the ids of the cited tasks whose recall can move with no ledger event at all (a rerank,
    whose note ages move by the hour, or a bundle holding receipts, whose files live outside
    the database).  While no event but recalls lands and no lifetime ends, only those can
    change, so the caller re-checks just them.

    ``tasks``: re-check only the cited recalls of these task ids, each rebuilt (``horizon``
    is then None); read-only either way.  ``quiet``: a dict that receives, for each recall
    rebuilt, when it can next move with time alone (see :func:`check_cited`).  ``cited``: with
    ``tasks``, what :func:`cited_events` returned earlier in the caller's run (one read shared
    with :func:`affected`), else read here for those tasks alone."""
    with db.read(conn):
        if tasks is not None:
            wanted = set(tasks)
            cited = [[handoff, event] for handoff, event in (cited_events(conn, wanted) if cited is None else cited)
                     if handoff["task_id"] in wanted]
            plan = {"now": clock.now_iso(), "recompute": True, "ends": [], "cited": cited}
            return stale_report(check_cited(conn, plan, quiet)), None
        upcoming = []
        plan = stale_plan(conn, upcoming=upcoming)
        report = stale_report(check_cited(conn, plan, quiet))
        return report, {"next_end": upcoming[0], "volatile": volatile_tasks(plan["cited"])}


# manifest sections filled by a search over other tasks' rows: any write can move them
_WIDE_SECTIONS = ("related_notes", "related_handoffs", "related_facts", "related_semantic", "related_sessions")
_WIDE_PARAMS = ("related", "related_handoffs", "related_facts", "related_semantic", "related_sessions")


def affected(conn, touched, now, *, cited=None):
    """After events that touched only the tasks ``touched`` (their rows, notes, handoffs or
    leases) and rows only a related section packs (facts, memories): ``(cited task ids whose
    own inputs were touched, the other cited ids whose recall any write can move, the first
    lifetime end after now)``.  A cited recall's own inputs are its task, one of its
    dependencies or a dependency it packed context for; a recall that cannot be bounded that
    way (a related or semantic section, a rerank, an older pack format, no manifest) is in
    the first list when its own inputs were touched, else in the second (the caller re-checks
    those in turn); an unproven or legacy recall never moves with such events.  ``cited``:
    what :func:`cited_events` returned, when the caller read it already (else read here).
    Reads only."""
    touched = set(touched)
    found, wide = [], []
    with db.read(conn):
        for handoff, event in cited_events(conn) if cited is None else cited:
            params = None if event is None else params_from_event(event["payload"])
            if params is None:
                continue
            manifest = event["payload"].get("manifest")
            task = handoff["task_id"]
            if params["rerank"] or not isinstance(manifest, dict) or not same_format(event["payload"]) \
                    or any(name in manifest for name in _WIDE_SECTIONS) \
                    or any(params.get(name) is not None for name in _WIDE_PARAMS):
                wide.append(task)
            inputs = {task}
            for name in ("dependencies", "dep_context"):
                inputs.update(entry[0] for entry in (manifest if isinstance(manifest, dict) else {}).get(name) or ()
                              if isinstance(entry, list) and entry)
            # every edge of the task either way, packed or not (a budget can leave one out)
            inputs.update(row[0] for row in conn.execute(
                "SELECT depends_on FROM dependencies WHERE task_id = ? UNION SELECT task_id FROM dependencies"
                " WHERE depends_on = ?", (task, task)))
            if inputs & touched:
                found.append(task)
        found = sorted(set(found))
        return found, sorted(set(wide) - set(found)), _next_end(conn, now)


def volatile_tasks(cited, tasks=None):
    """The ids of the tasks in ``cited`` (:func:`cited_events`; of ``tasks`` only, when
    given) whose recall can go stale without a ledger event (see :func:`stale_sweep`)."""
    return sorted({handoff["task_id"] for handoff, event in cited
                   if (tasks is None or handoff["task_id"] in tasks) and _volatile(event)})


def _volatile(event):
    """True when the recall of ``event`` (None: unproven, never re-checkable) can go stale
    without a ledger event (see :func:`stale_sweep`)."""
    if event is None:
        return False
    params = params_from_event(event["payload"])
    if params is None:  # a legacy recall: its status never changes
        return False
    manifest = event["payload"].get("manifest")
    if params["rerank"] or not isinstance(manifest, dict) or manifest.get("receipts"):
        return True
    return any(isinstance(entry, list) and entry[2:3] and entry[2] for entry in manifest.get("dep_context") or [])


def _next_end(conn, now):
    """The first instant after ``now`` at which a note lifetime, a lease or a fact window
    ends (what :func:`_lifetime_ends` lists), or None."""
    row = conn.execute("SELECT min(at) FROM (" + " UNION ALL ".join(
        f"SELECT min({column}) AS at FROM {table} WHERE {having} AND {column} > :now"
        for table, column, having, _ in _LIFETIMES) + ")", {"now": now}).fetchone()
    return row[0] if row and isinstance(row[0], str) else None


def stale_report(items):
    """The recall-stale report over checked ``items``: ``{"ok", "checked", "counts", "items"}``."""
    counts = dict.fromkeys(STALE_STATUSES, 0)
    for item in items:
        counts[item["status"]] += 1
    return {"ok": counts["fresh"] == len(items), "checked": len(items), "counts": counts, "items": items}


def next_and_recall(conn, *, params, unsealed=(), **next_args):
    """``next --claim --recall``: dispatch and claim, then seal the claimed task's bundle for
    the owner (with ``unsealed``, see :func:`bundle`) and audit it as ``context_recalled``, in
    one transaction.  Returns the ``next`` result plus ``recall`` (the bundle, or None) and
    ``recall_digest``."""
    from mindos.work import dispatch  # lazy: only next --recall dispatches here

    if not next_args.get("claim"):
        raise InvalidInput("--recall requires --claim")
    with db.write(conn):
        result = dispatch.next_task(conn, **next_args)
        task = result["task"]
        if task is None:
            result.update(recall=None, recall_digest=None)
            return result
        known = {}  # the tables the digests laid out, printed again as they are
        sealed = bundle(conn, task["id"], task["lease_owner"], params, unsealed=unsealed, known=known)
        _event(conn, "context_recalled", sealed, params, {"via": "next"})
    result.update(recall=builder.encode(sealed, known), recall_digest=sealed["digest"])
    return result


def resume(conn, task_id, *, agent, params, minutes=None, max_active=None, unsealed=()):
    """``resume``: recover a session in one call.

    The claim guards apply (terminal, blocked, unsatisfied deps: refused with the reason).
    A live lease held by ``agent`` -> no mutation, ``action: already_held``; an expired or
    absent lease -> claimed for ``agent`` (per-owner caps honoured), ``action: claimed``; a
    live lease held by someone else -> refused.  Audits ``session_resumed`` with the agent,
    action and digests.  Returns ``{"task_id", "agent", "action", "lease_epoch",
    "lease_expires_at", "recall", "recall_digest"}`` (``recall`` with ``unsealed``, see
    :func:`bundle`); the lease and the digest stay beside the bundle, where a caller fencing its
    next write or citing the resume reads them.
    """
    from mindos.work import leases, rows  # lazy: only resume claims

    agent = _agent(agent)
    minutes = leases.check_minutes(leases.DEFAULT_MINUTES if minutes is None else minutes)
    leases.max_active_cap(max_active)
    task_id = validate.identifier(task_id, "task id")
    with db.write(conn):
        task = rows.get(conn, task_id)
        now = clock.now_iso()
        live = rows.lease_is_live(task, now)
        if live and task["lease_owner"] != agent:
            raise Refused(f"task '{task_id}' is leased by '{task['lease_owner']}' until {task['lease_expires_at']};"
                          " ask them to transfer it")
        # the claim guards without the lease rule (the caller's own live lease is fine here)
        leases.claim_guard(conn, {**task, "lease_owner": ""}, agent, now)
        if live:
            action = "already_held"
        else:
            task = leases.acquire(conn, task, agent, minutes=minutes, max_active=max_active, now=now,
                                  payload={"via": "resume"})
            action = "claimed"
        known = {}  # the tables the digests laid out, printed again as they are
        sealed = bundle(conn, task_id, agent, params, now, unsealed=unsealed, known=known)
        _event(conn, "session_resumed", sealed, params, {"action": action})
    return {"task_id": task_id, "agent": agent, "action": action, "lease_epoch": task["lease_epoch"],
            "lease_expires_at": task["lease_expires_at"], "recall": builder.encode(sealed, known),
            "recall_digest": sealed["digest"]}


def metrics(conn):
    """Recall counters for ``metrics``."""
    return {"recalls_total": ledger.count_action(conn, "context_recalled"),
            "sessions_resumed_total": ledger.count_action(conn, "session_resumed")}
