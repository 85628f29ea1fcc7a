"""``prime``: the session-start pack of an agent, no task id needed.

What a hook injects when a session starts (Claude Code's SessionStart/PreCompact, the Hermes
gateway's first turn) and what an MCP client asks for first: the agent's situation in one
bounded, redacted, digest-sealed pack.

Design decisions
  * **Sections, in this order** (a :class:`mindos.context.builder.Registry`): ``leases``
    (the agent's live leases, soonest expiry first), ``inbox`` (live handoffs addressed to
    it and not yet acked), ``constraints`` (live pinned ``constraint`` notes of its
    projects), ``next`` (the task ``next`` would give it now, read-only) and ``held`` (the
    context pack of the task it holds: the first of its live leases).  One character
    budget covers them all, first fit in that order, exactly as the context pack counts
    (:func:`mindos.context.builder.cost`): an item that does not fit is dropped and
    ``truncated`` flips.
  * **Bounded reads.**  The inbox is read only as far as the pack could use it (at most
    MAX_INBOX handoffs, more when the budget could hold more); an agent handed more has
    them counted (``inbox_total``) and their projects scoped in SQL, never built as rows.
  * **Scope is the agent and its projects.**  Leases and inbox are the agent's own; "its
    projects" are ``--project`` when given (then every section is restricted to it), else
    the projects of its leases and inbox.  Nothing of another agent's leases or inbox, and
    no constraint of an unrelated project, can enter the pack.
  * **No secret.**  Every packed item is redacted (``[REDACTED:<kind>]``) before it is
    charged, so even a note stored with ``--allow-secret`` leaves only its kind; the text
    rendering is redacted again as a whole.
  * **Deterministic, sealed, audited.**  ``digest`` is :func:`builder.digest` over the
    ordered sections: identical state gives an identical digest (and text); each prime
    appends ``context_primed`` on the agent with it.  When a task is held, prime also
    recalls it the standard way (:func:`mindos.context.recall.bundle` with the default
    parameters, what ``recall <task> --agent A`` returns) and audits that
    ``context_recalled`` (``via: prime``) with its digests, parameters and manifest:
    ``held_recall_digest`` is then a citation ``handoff --recall-digest``, ``complete
    --recall-digest``, ``handoff-check``, ``recall-verify`` and ``recall-diff`` all
    understand.
  * **Bounded in time, whatever the database is doing.**  Within ``seconds`` the pack is
    built in full; past the deadline the running query is interrupted (SQLite progress
    handler) and the remaining sections are left out (``degraded: true``,
    ``sections_skipped``): a shorter pack, never a late one.  The pack is read from a
    snapshot, which a writer never blocks; the audit write waits for the lock at most
    AUDIT_WAIT_SECONDS (never past the same deadline), then is spooled in the home and
    landed by the next write of any command (``audit_deferred: true``;
    :mod:`mindos.store.deferred`).
  * **Text within the byte budget.**  The text form (what hooks inject) is rendered from the
    packed items and, should its headers push it over ``budget`` bytes, cut at a line
    boundary with a final ``[truncated]`` line; the first line carries the digest.
"""

import json
import sqlite3
import time

from mindos.core import canonical, clock, secret_gate, validate
from mindos.core.text import inert, one_line
from mindos.context import builder, params
from mindos.errors import InvalidInput
from mindos.memory import handoffs, note_live
from mindos.store import db, deferred, ledger
from mindos.store.sql import open_condition

DEFAULT_BUDGET = 4000
MIN_BUDGET = 400
DEFAULT_SECONDS = 10.0
MAX_SECONDS = 600.0
FORMATS = ("text", "json")
MAX_CONSTRAINTS = 200
# The inbox section reads at most this many handoffs (more when the budget could hold more:
# see _inbox), and never more than an inbox listing may (handoffs.inbox's --limit bound).
MAX_INBOX = 200
# The longest a pack waits for the write lock to audit itself.  A write holds the lock for
# milliseconds; a lock held longer belongs to a long job, and the session should not wait on
# it: the event is deferred to the next write instead.
AUDIT_WAIT_SECONDS = 1.0
_LEASE_FIELDS = ("task_id", "project", "title", "status", "priority", "lease_expires_at", "lease_epoch")
_INBOX_FIELDS = ("task_id", "project", "title", "from_agent", "handoff_status", "objective", "created_at")
_NEXT_FIELDS = ("id", "project", "title", "priority", "status", "next_action", "due_at")
_LEASES, _INBOX, _CONSTRAINTS = (builder.TABLES[name] for name in ("leases", "inbox", "constraints"))
# The agent's live leases, soonest expiry first: what ``leases.list_leases(owner=agent)`` lists
# (held, not terminal, not expired; along idx_tasks_lease_owner), with only the columns the
# pack shows, so neither the progress records the listing joins in nor their module are read.
_LIVE_LEASES_SQL = ("SELECT id AS task_id, project, title, status, priority, lease_expires_at, lease_epoch"
                    f" FROM tasks WHERE lease_owner = ? AND lease_owner <> '' AND {open_condition()}"
                    " AND lease_expires_at > ? ORDER BY lease_expires_at, id")


def scrub(value):
    """``value`` with every string redacted (dicts and lists walked, in place where mutable)."""
    if isinstance(value, str):
        if secret_gate.clean(value):  # plain text (or one cleared before): the detector is not even loaded
            return value
        from mindos.core import secrets  # lazy: ~7.6M instructions to load and build

        return secrets.redact(value)[0] if secrets.scan(value) else value
    if isinstance(value, dict):
        for key in value:
            value[key] = scrub(value[key])
    elif isinstance(value, list):
        value[:] = [scrub(item) for item in value]
    return value


class RedactingBudget(builder.Budget):
    """A budget that redacts each item (in place) before charging it."""

    def take(self, item, size=None, table=None):
        """Redact ``item`` (in place), then charge it (its row's cost when it is an entry of
        ``table``); a ``size`` known before redaction is not trusted."""
        return super().take(scrub(item), table=table)

    def take_all(self, items, sizes=None, table=None):
        """Offer ``items`` in order, as :meth:`Budget.take_all`; an item that cannot fit
        whatever its redaction (:func:`least_cost`) is dropped without being scanned (a
        full budget no longer pays a secret scan per leftover item)."""
        if sizes is not None:
            return super().take_all(items, sizes)
        packed = []
        for item in items:
            if table is not None and type(item) is dict:
                # a row is laid out once: its lower bound, then (unless redaction changed a
                # value) its cost, the same row Budget.take would lay out again
                row = table.row(item)
                if _least_row(row) > self.left():
                    self.truncated = True
                    continue
                if _scrub_values(item):
                    row = table.row(item)
                if builder.Budget.take(self, item, len(canonical.canonical_json(row))):
                    packed.append(item)
                continue
            if least_cost(item, table) > self.left():
                self.truncated = True
            elif self.take(item, table=table):
                packed.append(item)
        return packed


def _scrub_values(entry):
    """:func:`scrub` ``entry`` (a dict) in place; True when a value may have changed (a
    string redacted, or a nested list or dict walked)."""
    changed = False
    for key, value in entry.items():
        if type(value) is str:
            clean = scrub(value)
            if clean is not value:
                entry[key], changed = clean, True
        elif isinstance(value, (dict, list)):
            entry[key], changed = scrub(value), True
    return changed


def least_cost(item, table=None):
    """A lower bound of ``item``'s cost after :func:`scrub` (its row's, when it is an entry of
    ``table``): redaction leaves a string at least as long as the shortest label or itself,
    and a JSON string costs its length plus quotes.  (``builder.cost(_shortest(item))``; a
    flat entry of identifier keys and string or integer values, and a row of strings,
    integers and nulls, what every section packs, are counted without building their JSON.)"""
    if table is not None:
        return _least_row(table.row(item))
    if type(item) is dict and item:
        size = len(item) + 1  # the braces and the commas between entries
        for key, value in item.items():
            if type(key) is not str or not key.isidentifier():
                break
            if type(value) is str:  # '"key":' and the shortened string with its quotes
                size += len(key) + 5 + min(len(value), secret_gate.SHORTEST_LABEL)
            elif type(value) is int:
                size += len(key) + 3 + len(str(value))
            else:
                break
        else:
            return size
    return builder.cost(_shortest(item))


def _least_row(row):
    size = len(row) + 1 if row else 2  # the brackets and the commas between values
    for value in row:
        if type(value) is str:
            size += 2 + min(len(value), secret_gate.SHORTEST_LABEL)
        elif type(value) is int:
            size += len(str(value))
        elif value is None or value is True:
            size += 4
        else:
            return builder.cost(_shortest(row))
    return size


def _shortest(value):
    if isinstance(value, str):
        return "x" * min(len(value), secret_gate.SHORTEST_LABEL)
    if isinstance(value, dict):
        return {key: _shortest(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shortest(item) for item in value]
    return value


class _Deadline:
    """The time bound: interrupts SQLite work once ``seconds`` have passed."""

    def __init__(self, conn, seconds):
        self.conn, self.end = conn, time.monotonic() + seconds

    def passed(self):
        return time.monotonic() >= self.end

    def __enter__(self):
        self.conn.set_progress_handler(lambda: 1 if self.passed() else 0, 2000)
        return self

    def __exit__(self, *exc):
        self.conn.set_progress_handler(None, 0)
        return False


# ---------------------------------------------------------------------------------------
# Sections.  Each takes the shared state and the budget and returns the keys it adds.


def _section_leases(state, budget):
    mine = state["leases"]
    # take_all: an entry that cannot fit whatever its redaction is refused unscanned
    packed = budget.take_all([builder.compact({k: e[k] for k in _LEASE_FIELDS}, defaults=builder.TASK_DEFAULTS)
                              for e in mine], table=_LEASES)
    return {"leases": packed, "leases_total": len(mine)}


def _section_inbox(state, budget):
    items = state["inbox"]
    # an agent may have been handed hundreds: those that cannot fit whatever their redaction
    # are refused unscanned (take_all), and none is built once no inbox entry could fit
    packed = []
    for handed in items:
        left = budget.left()
        if left < _LEAST_INBOX:
            budget.truncated = True
            break
        if _least_strings(handed, _INBOX_FIELDS) > left:  # refused before its entry is built
            budget.truncated = True
            continue
        packed += budget.take_all([builder.compact({k: handed[k] for k in _INBOX_FIELDS})], table=_INBOX)
    return {"inbox": packed, "inbox_total": state.get("inbox_total", len(items))}


# What any inbox entry costs at least: its task and project are never empty (whatever
# redaction leaves of them).
_LEAST_INBOX = least_cost({"task_id": "x", "project": "x"}, builder.TABLES["inbox"])


def _inbox(conn, agent, project, budget):
    """``(items, total, projects)`` of the agent's unacked inbox for a pack of ``budget``
    characters: at most ``MAX_INBOX`` items, or as many as the budget could hold if more
    (each costs at least ``_LEAST_INBOX``), in inbox order; when there may be more, their
    count and the projects of them all come from one counting query
    (:func:`mindos.memory.handoffs.inbox_scope`), so an agent handed thousands of tasks
    builds a few hundred rows, not thousands, and still sees every project it was handed."""
    cap = min(max(MAX_INBOX, budget // _LEAST_INBOX + 1), handoffs.INBOX_LIMIT_MAX)
    items = handoffs.inbox(conn, agent, project=project, limit=cap, unacked_only=True)["items"]
    if len(items) < cap:
        return items, len(items), {item["project"] for item in items}
    total, projects = handoffs.inbox_scope(conn, agent, project=project, unacked_only=True)
    return items, total, set(projects)


def _least_strings(entry, fields):
    """A lower bound of the cost of the row of ``entry`` (a dict holding ``fields``) after
    :func:`scrub`, read from the raw entry, whatever the row's column order: each non-empty
    string costs at least its shortest redaction and its quotes, and the row its brackets and
    a comma between its values (its other values, nulls included, cost more, never less)."""
    size, count = 1, 0
    for key in fields:
        value = entry[key]
        if type(value) is str and value:
            size += min(len(value), secret_gate.SHORTEST_LABEL) + 3
            count += 1
    return size if count else 2


def _section_constraints(state, budget):
    conn, projects, found, packed = state["conn"], state["projects"], [], []
    # never more than the budget left could hold (each costs at least _LEAST_CONSTRAINT), and
    # one more, so a pack that could not hold them all says truncated: the walk reads what the
    # pack can use, whatever the number of constraints in the home
    cap = min(MAX_CONSTRAINTS, budget.left() // _LEAST_CONSTRAINT + 1)
    for project in projects:  # sorted: the order one query over them all would give
        if len(found) >= cap:
            break
        found += _project_constraints(conn, project, state["now"], cap - len(found)).fetchall()
    # read in full before anything is charged: a read interrupted at the deadline charges nothing
    cleared, contents = {}, None  # row index -> the gate's verdict on its content, asked a run at a time
    for index, row in enumerate(found):
        left = budget.left()
        if left < _LEAST_CONSTRAINT:  # no constraint fits any more: the rest are only counted
            budget.truncated = True
            break
        content = row["content"]
        if type(content) is str and len(content) + _LEAST_BESIDE_CONTENT > left and content:
            if index not in cleared:
                if contents is None:
                    contents = [later["content"] for later in found]
                _clear_run(contents, index, cleared)
            if cleared[index]:
                # its content alone cannot fit, and the gate clears it, so redaction leaves it
                # whole: refused before an entry is built, laid out or scrubbed (what take_all
                # would decide)
                budget.truncated = True
                continue
        packed += budget.take_all([builder.compact(dict(row), defaults=builder.NOTE_DEFAULTS)], table=_CONSTRAINTS)
    return {"constraints": packed, "constraints_total": len(found), "projects": projects}


def _clear_run(contents, start, cleared):
    """The gate's verdicts on ``contents`` from ``start``, into ``cleared``: the contents
    filling one run of :func:`secret_gate.clean_each` (what is left of the budget only
    shrinks, so the rows after a refused one are asked about next; a run ends where the walk
    may stop, so at most one run is asked in vain).  Once a run holds a content the gate does
    not clear, the rest are asked one at a time."""
    end, size = start + 1, len(contents[start]) + 1  # (counted as clean_each counts a run)
    if all(cleared.values()):  # (no run held back so far)
        while end < len(contents) and type(contents[end]) is str:
            size += len(contents[end]) + 1
            if size > secret_gate.SHORT:
                break
            end += 1
    cleared.update(zip(range(start, end), secret_gate.clean_each(contents[start:end])))


# A project with fewer tasks than this has its constraints found from its tasks; a bigger one
# walks the home's live pinned constraints oldest first until it has enough of them.
_SMALL_PROJECT = 512
# What any listed constraint costs at least: its id, task, project, content and time are never
# empty (whatever redaction leaves of them).
_LEAST_CONSTRAINT = least_cost({"note_id": 0, "task_id": "x", "project": "x", "content": "x", "created_at": "x"},
                               builder.TABLES["constraints"])
# What a constraint row costs at least besides its content's characters (when its content is
# not empty, so the row runs to its last column): the brackets and commas, a note id of one
# digit, each middle column one character quoted (an empty one prints null, longer) and the
# content's quotes.  A row whose content the gate clears costs at least this plus its length.
_LEAST_BESIDE_CONTENT = _least_row([0, "x", "x", "x", "x", ""])
_CONSTRAINTS_SQL = ("SELECT n.id AS note_id, n.task_id, t.project, n.content, n.source, n.created_at FROM {join}"
                    f" WHERE {note_live('n')} AND n.pinned = 1 AND n.kind = 'constraint' AND t.project = ?"
                    " ORDER BY n.created_at, n.id LIMIT ?")


def _project_constraints(conn, project, now, limit):
    """The first ``limit`` live pinned constraints of ``project``, oldest first.  Either way
    reads about what it returns, whatever the size of the rest of the home: a small project
    through its own tasks' live notes (idx_notes_task_live), a big one along the small index
    of every live pinned constraint (idx_notes_pinned_constraints), stopping at ``limit``."""
    size = conn.execute("SELECT count(*) FROM (SELECT 1 FROM tasks INDEXED BY idx_tasks_project_status"
                        " WHERE project = ? LIMIT ?)", (project, _SMALL_PROJECT)).fetchone()[0]
    join = ("tasks t INDEXED BY idx_tasks_project_status CROSS JOIN notes n INDEXED BY idx_notes_task_live"
            " ON n.task_id = t.id" if size < _SMALL_PROJECT else
            "notes n INDEXED BY idx_notes_pinned_constraints CROSS JOIN tasks t ON t.id = n.task_id")
    return conn.execute(_CONSTRAINTS_SQL.format(join=join), (now, project, limit))


def _section_next(state, budget):
    from mindos.work import dispatch  # lazy: the dispatcher's own ranking, read-only

    picked = dispatch.next_task(state["conn"], project=state["project"], owner=state["agent"])["task"]
    state["next_pick"] = picked  # the first-turn sections' focus when nothing is held
    item = builder.compact({k: picked[k] for k in _NEXT_FIELDS}, defaults=builder.TASK_DEFAULTS) if picked else None
    packed = item is not None and budget.take(item)
    return {"next": item if packed else None}


def _section_held(state, budget):
    held = state["held"]
    if held is None:
        return {"held_task_id": None, "held": None}
    from mindos.context import pack  # lazy: only an agent holding a lease gets its task's pack

    options = {"budget": budget.limit, "related": None, "related_scope": "project"}
    inner = {"conn": state["conn"], "task": held, "now": state["now"], "options": options}
    sections = [(s.name, s.build(inner, budget)) for s in pack.SECTIONS.active(options)]
    return {"held_task_id": held["id"], "held": builder.flatten(sections)}


SECTIONS = builder.Registry()
SECTIONS.register("leases", _section_leases)
SECTIONS.register("inbox", _section_inbox)
SECTIONS.register("constraints", _section_constraints)
SECTIONS.register("next", _section_next)
SECTIONS.register("held", _section_held)


# ---------------------------------------------------------------------------------------


def _options(agent, project, budget, seconds, fmt):
    agent = validate.agent(agent, "--agent")
    if project is not None:
        project = validate.identifier(project, "--project")
    budget = validate.positive_int(budget, "--budget", minimum=MIN_BUDGET, maximum=params.MAX_BUDGET)
    seconds = validate.seconds(seconds, maximum=MAX_SECONDS)
    if fmt not in FORMATS:
        raise InvalidInput(f"invalid --format: {validate.shown(fmt, 20)} (choose from text, json)")
    return agent, project, budget, seconds, fmt


def _extras(extras):
    if extras is None:
        return {}
    from mindos.context import first_turn  # lazy: the first-turn sections load only when asked for

    first_turn.register(SECTIONS)
    return first_turn.checked(extras)


def build(conn, agent, *, project=None, budget=DEFAULT_BUDGET, seconds=DEFAULT_SECONDS, extras=None):
    """Build the prime pack of ``agent``; read-only.

    ``extras`` ({"receipts"|"facts"|"semantic"|"sessions": count}) adds those first-turn
    sections (:mod:`mindos.context.first_turn`) after ``held``; without it the pack is
    exactly the legacy one.  Returns ``{"agent", "project", "budget", "used_chars",
    "truncated", "degraded", "sections_skipped", "sections": [(name, keys)], "digest",
    "held_task_id", "held_recall", "first_turn", "known"}`` (``held_recall``: the held task's
    standard recall bundle, or None; ``known``: the tables the digest laid out, for printing
    the pack without laying them out again, :func:`mindos.context.builder.encode`).
    """
    agent, project, budget, seconds, _ = _options(agent, project, budget, seconds, "json")
    options = _extras(extras)
    from mindos.work import rows  # lazy: the held task's full row

    state = {"conn": conn, "agent": agent, "project": project, "now": clock.now_iso(), "options": options}
    meter = RedactingBudget(budget)
    known = {}  # the tables the digest lays out, printed again as they are (see builder.encode)
    sections, skipped = [], []
    with db.read(conn), _Deadline(conn, seconds) as deadline:  # one snapshot: a writer never blocks it
        try:
            state["leases"] = [e for e in conn.execute(_LIVE_LEASES_SQL, (agent, state["now"]))
                               if project is None or e["project"] == project]
            state["inbox"], state["inbox_total"], handed = _inbox(conn, agent, project, budget)
            state["projects"] = [project] if project else sorted({e["project"] for e in state["leases"]} | handed)
            state["held"] = rows.get(conn, state["leases"][0]["task_id"]) if state["leases"] else None
        except sqlite3.OperationalError:
            state.update(leases=[], inbox=[], inbox_total=0, projects=[project] if project else [], held=None)
            skipped.append("scope")
        for section in SECTIONS.active(options):
            if deadline.passed():
                skipped.append(section.name)
                continue
            try:
                sections.append((section.name, section.build(state, meter)))
            except sqlite3.OperationalError:  # interrupted at the deadline
                skipped.append(section.name)
        held = state["held"] if state.get("held") and "held" not in skipped else None
        recalled = None
        if held is not None:
            try:
                if deadline.passed():
                    raise sqlite3.OperationalError("interrupted")
                from mindos.context import recall  # lazy: only a held task is recalled

                recalled = recall.bundle(conn, held["id"], agent, recall.make_params(), now=state["now"])
            except sqlite3.OperationalError:  # past the deadline: no recall citation this time
                skipped.append("held_recall")
    return {
        "agent": agent, "project": project, "budget": budget, "used_chars": meter.used,
        "truncated": meter.truncated, "degraded": bool(skipped), "sections_skipped": skipped,
        "sections": sections, "digest": builder.digest(sections, known=known),
        "held_task_id": held["id"] if held else None,
        "held_recall": recalled,
        "first_turn": options,  # the checked first-turn section counts ({} without extras)
        "known": known,
    }


def _events(built, extras=None):
    held = built["held_recall"]
    payload = {"agent": built["agent"], "project": built["project"], "digest": built["digest"],
               "budget": built["budget"], "used_chars": built["used_chars"], "degraded": built["degraded"],
               "held_task_id": built["held_task_id"], "held_recall_digest": held["digest"] if held else None}
    if extras:
        payload["first_turn"] = extras
    events = [("agent", built["agent"], "context_primed", payload)]
    if held:  # the same event recall writes, so every recall check can find this citation
        from mindos.context import recall  # lazy: only a held task was recalled

        events.append(("task", held["task_id"], "context_recalled", {
            "agent": held["agent"], "digest": held["digest"], "core_digest": held["core_digest"],
            "params": recall.make_params(), "manifest": recall.manifest(held), "via": "prime",
            "prime_digest": built["digest"], "pack_format": builder.PACK_FORMAT}))
    return events


def _split(seconds):
    """``(build seconds, reserve)``: the pack and the audit share ``seconds`` less a reserve
    for starting the process, printing and spooling, so the whole call ends within it."""
    reserve = min(1.0, seconds * 0.25)
    return seconds - reserve, reserve


def prime(conn, agent, *, project=None, budget=DEFAULT_BUDGET, seconds=DEFAULT_SECONDS, fmt="text", extras=None):
    """``prime``: the session-start pack of ``agent``; audits ``context_primed`` (and
    ``context_recalled`` on the held task, with its standard recall digests).  ``extras``:
    the first-turn sections to add (see :func:`build`), recorded in the audit as ``first_turn``.

    The whole call is bounded by ``seconds``: the pack is read from a snapshot, and when
    another writer holds the lock past the deadline the audit events are deferred to the
    next write (``audit_deferred: true``) instead of waiting.

    Returns the text rendering (``fmt="text"``, at most ``budget`` UTF-8 bytes) or the
    flattened pack dict (``fmt="json"``): ``{"agent", "project", "budget", "used_chars",
    "truncated", "degraded", "sections_skipped", "sections": [names], "digest",
    "held_recall_digest", "audit_deferred", <every section's keys>}``.
    """
    _options(agent, project, budget, seconds, fmt)
    # a prime hashes its pack's digest and its audit event at least (a held task's recall
    # more): past the pure-Python budget of canonical.sha256_hex, so hashlib is loaded before
    # the first digest instead of after it has been paid for in Python (bench/NOTES.md)
    canonical.sha256()
    build_seconds = _split(float(seconds))[0]
    end = time.monotonic() + build_seconds
    built = build(conn, agent, project=project, budget=budget, seconds=build_seconds, extras=extras)
    wait = min(AUDIT_WAIT_SECONDS, max(0.0, end - time.monotonic()))
    built["audit_deferred"] = deferred.audit_bounded(conn, _events(built, built["first_turn"]), wait, write=db.write)
    if fmt == "text":
        return render(built)
    flat = {key: built[key] for key in ("agent", "budget", "used_chars", "truncated", "digest")}
    # lean, like every section's keys: no project, degraded, skipped sections or deferred audit
    # unless there is one
    flat.update(builder.lean({key: built[key] for key in ("project", "degraded", "sections_skipped",
                                                          "audit_deferred")}))
    flat["pack_format"] = builder.PACK_FORMAT
    flat.update(builder.flatten(built["sections"]))
    if built["held_recall"]:
        flat["held_recall_digest"] = built["held_recall"]["digest"]
    return builder.encode(flat, built["known"])


def metrics(conn):
    """``primes_total``: session-start packs served (audited ``context_primed``)."""
    return {"primes_total": ledger.count_action(conn, "context_primed")}


# ---------------------------------------------------------------------------------------
# Text rendering


def _one_line(text, width=240):
    return one_line(text, width)


def render(built):
    """The text pack: one headline with the digest, then a block per non-empty section."""
    keys = dict(builder.flatten(built["sections"]))
    flags = [flag for flag in ("truncated", "degraded") if built[flag]]
    if built.get("audit_deferred"):
        flags.append("audit deferred")
    head = (f"# MindOS prime for {built['agent']}" + (f" (project {built['project']})" if built["project"] else "")
            + f" digest={built['digest']} used={built['used_chars']}/{built['budget']}"
            + (f" [{', '.join(flags)}]" if flags else ""))
    lines = [head]
    if keys.get("leases"):
        lines.append(f"## Your live leases ({len(keys['leases'])} of {keys['leases_total']})")
        lines += [f"- {e['task_id']} [{e.get('priority', 'P2')} {e['status']}] {_one_line(e['title'])}"
                  f" (project {e['project']}, epoch {e['lease_epoch']}, expires {e['lease_expires_at']})"
                  for e in keys["leases"]]
    if keys.get("inbox"):
        lines.append(f"## Handed to you, not yet acked ({len(keys['inbox'])} of {keys['inbox_total']})")
        lines += [f"- {i['task_id']} from {i['from_agent']}: {_one_line(i.get('objective') or i.get('title', ''))}"
                  f" (project {i['project']}; accept with: ack {i['task_id']} --agent {built['agent']})"
                  for i in keys["inbox"]]
    if keys.get("constraints"):
        lines.append(f"## Pinned constraints ({len(keys['constraints'])} of {keys['constraints_total']})")
        lines += [f"- [{c['project']} {c['task_id']}] {_one_line(c['content'])}" for c in keys["constraints"]]
    if keys.get("next"):
        n = keys["next"]
        lines.append("## Next task you would get (next --claim)")
        lines.append(f"- {n['id']} [{n.get('priority', 'P2')}] {_one_line(n['title'])} (project {n['project']})"
                     + (f" next: {_one_line(n['next_action'])}" if n.get("next_action") else ""))
    held = keys.get("held")
    if held and held.get("task"):
        task = held["task"]
        lines.append(f"## The task you hold: {keys['held_task_id']} {_one_line(task['title'])}")
        if task.get("next_action"):
            lines.append(f"next action: {_one_line(task['next_action'])}")
        if task.get("description"):
            lines.append(f"description: {_one_line(task['description'], 600)}")
        if held.get("handoff"):
            h = held["handoff"]
            lines.append(f"live handoff from {h['from_agent']}: {_one_line(h.get('objective', ''))}")
            lines += [f"  next: {_one_line(a)}" for a in h.get("next_actions", [])]
            lines += [f"  constraint: {_one_line(c)}" for c in h.get("constraints", [])]
        lines += [f"- unsatisfied dependency {d['id']} ({d['status']}): {_one_line(d.get('title') or '')}"
                  for d in held.get("dependencies", [])]
        lines += [f"- {'pinned ' if n.get('pinned') else ''}{n.get('kind', 'fact')} by {n.get('source', 'operator')}: {_one_line(n['content'])}"
                  for n in held.get("notes", [])]
    lines += _render_first_turn(keys)
    if len(lines) == 1:
        lines.append("Nothing held, handed to you or dispatchable right now.")
    held_recall = built["held_recall"]
    cite = (f" (cite --recall-digest {held_recall['digest']}, the recall of {held_recall['task_id']})"
            if held_recall else " (recall <task> --agent before acting: cite its digest)")
    lines.append("Loop: prime/recall -> claim -> act -> note -> receipt -> complete|fail -> handoff" + cite + ".")
    # inert: a stored ESC sequence or bidi override reaches the reader as a visible escape
    return clamp(inert(scrub("\n".join(lines)), multiline=True) + "\n", built["budget"])


def _render_first_turn(keys):
    """The first-turn sections' blocks (:mod:`mindos.context.first_turn`), each with provenance."""
    lines = []
    about = f" relevant to {keys['focus_task_id']}" if keys.get("focus_task_id") else ""
    if keys.get("receipts"):
        lines.append(f"## Latest receipts ({len(keys['receipts'])} of {keys['receipts_total']})")
        for r in keys["receipts"]:
            seal = ("seal ok" if r["hash_ok"] else "SEAL BROKEN" if r["hash_ok"] is False else "unsealed")
            lines.append(f"- {r['receipt_id']} on {r['task_id']}: {r['kind']} at {r['created_at']} ({seal})"
                         + (f" {_one_line(json.dumps(r['payload'], sort_keys=True), 200)}"
                            if r.get("payload") is not None else ""))
    if keys.get("facts"):
        lines.append(f"## Facts true now{about} ({len(keys['facts'])} of {keys['facts_total']})")
        lines += [f"- {f['subject']} {f['predicate']} {f['object']} (source {f['source']}"
                  + (f", task {f['task_id']}" if f.get("task_id") else "") + f", since {f['valid_from']}"
                  + (f", until {f['valid_until']}" if f.get("valid_until") else "") + ")" for f in keys["facts"]]
    if keys.get("semantic"):
        lines.append(f"## Semantic memory{about} ({len(keys['semantic'])} of {keys['semantic_total']})")
        lines += [f"- {_one_line(m['content'])} ({m['id']}, {m.get('kind', 'fact')}"
                  + (f", project {m['project']}" if m.get("project") else "") + f", {m['engine']}, {m['created_at']})"
                  for m in keys["semantic"]]
    if keys.get("sessions"):
        lines.append(f"## Session history{about} ({len(keys['sessions'])} of {keys['sessions_total']})")
        lines += [f"- {s.get('role', '')} in {s.get('source', '')}/{s.get('session_id', '')}#{s.get('seq', '')}"
                  + (f" at {s['at']}" if s.get("at") else "") + f": {_one_line(s['snippet'], 200)}"
                  for s in keys["sessions"]]
    return lines


def clamp(text, limit):
    """``text`` cut at a line boundary to at most ``limit`` UTF-8 bytes (a ``[truncated]`` line marks a cut)."""
    if len(text.encode("utf-8")) <= limit:
        return text
    marker = "[truncated]\n"
    kept, size = [], len(marker.encode("utf-8"))
    for line in text.splitlines(keepends=True):
        cost = len(line.encode("utf-8"))
        if size + cost > limit:
            break
        kept.append(line)
        size += cost
    return "".join(kept) + marker
