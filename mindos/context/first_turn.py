"""The first-turn sections of a session-start pack: receipts, facts, semantic memory and
session history.

The Hermes first turn (:mod:`mindos.harness.hermes`) carries, besides what ``prime`` always packs
(leases, inbox handoffs, constraints, the next task, the held task), the evidence and memory
an agent resumes from: the latest ``receipts``, currently-valid temporal ``facts``,
``semantic`` memories and ``sessions`` (ingested transcript snippets), each with its
provenance.  prime registers them (:func:`register`) behind their own option (a count),
after ``held`` in that order, so a prime built without them stays byte-identical.

Design decisions
  * **Relevant to the agent's focus.**  The focus is the task it holds, else the one ``next``
    would give it, else the first task handed to it.  Facts, memories and session snippets
    match the focus's text through the retrieval engine (the same matching as the recall
    sections, :mod:`mindos.context.sections`); receipts of the focus come first.  With no
    focus the newest in scope are packed.
  * **Scope never widens.**  Everything comes from the prime's projects (``--project``, else
    those of the agent's leases and inbox) and, for facts and memories, what is fleet-wide
    by construction (an unlinked fact, a project-less memory).  No projects: no receipts and
    no session snippets, so another profile's work never enters a pack.
  * **Provenance on every item**: a receipt's id, task, kind, time and seal (with its
    ``hash_ok`` re-check); a fact's source, task and validity window; a memory's id,
    project, kind, engine tag and time; a snippet's source, profile, project, session and
    sequence.  Receipt payloads are scrubbed (never write-guarded); the prime budget redacts
    every packed item again.
  * **Deterministic orderings**, with no relevance score (it would drift with the index):
    receipts by ``created_at DESC, id DESC``, facts by ``valid_from DESC, id DESC``, memories
    by ``created_at DESC, id ASC``, snippets by ``at DESC, session, seq``.
"""

import json

from mindos.context import pack, sections
from mindos.context.builder import MEMORY_DEFAULTS, TABLES, compact
from mindos.core import validate
from mindos.errors import InvalidInput
from mindos.memory import fact_in_scope, fact_valid, memory_in_scope

OPTIONS = ("receipts", "facts", "semantic", "sessions")
DEFAULTS = {"receipts": 3, "facts": 5, "semantic": 5, "sessions": 3}
MAX_COUNT = 50
_FACT_FIELDS = ("id", "subject", "predicate", "object", "source", "task_id", "valid_from", "valid_until")


def focus(state):
    """The task the first-turn sections are relevant to (a task row), or None; once per pack."""
    if "focus" not in state:
        from mindos.work import rows  # lazy: the focus task's full row

        found = state.get("held")
        if found is None and state.get("next_pick") is not None:
            found = state["next_pick"]
        if found is None and state.get("inbox"):
            found = rows.get(state["conn"], state["inbox"][0]["task_id"])
        state["focus"] = found
    return state["focus"]


def _inner(state):
    """The recall-section state of the focus task, so its matching is reused exactly."""
    if "first_turn_inner" not in state:
        state["first_turn_inner"] = {"conn": state["conn"], "task": focus(state), "now": state["now"],
                                     "options": {"related_scope": "project"}}
    return state["first_turn_inner"]


def _matches(state, index):
    """``(matches, focused)``: the focus text's matches in ``index`` (None: none can match),
    and whether there is a focus at all (without one the newest in scope are packed)."""
    if focus(state) is None:
        return None, False
    return sections._matches(_inner(state), index), True


def _focused_rows(state, index, joined, plain, statement, params):
    """A section's rows: through the focus text's matches in ``index`` (FROM ``joined``, over
    the ``matches`` CTE), or the newest in scope (FROM ``plain``) when there is no focus;
    none when a focus matches nothing.  ``statement(source)`` is the SELECT, ``params`` its
    parameters (after the CTE's)."""
    matches, focused = _matches(state, index)
    if matches is None and focused:
        return []
    cte, cte_params = matches if matches is not None else ("", [])
    return state["conn"].execute(f"{cte} {statement(joined if matches is not None else plain)}",
                                 (*cte_params, *params))


def _marks(values):
    return ", ".join("?" * len(values))


def _any_of(rule, alias, projects):
    """SQL: the package's scope ``rule`` seen from any of ``projects`` (one placeholder each),
    or from no project at all (what is fleet-wide by construction) when there are none."""
    if not projects:
        return rule(alias, "''")
    return "(" + " OR ".join(rule(alias) for _ in projects) + ")"


def _keys(name, state, found, packed):
    task = focus(state)
    return {name: packed, f"{name}_total": len(found), "focus_task_id": task["id"] if task else None}


def _section_receipts(state, budget):
    count, projects, conn = state["options"]["receipts"], state["projects"], state["conn"]
    found = []
    if projects:
        task = focus(state)
        first = ([task["id"]] if task is not None and task["project"] in projects else [])
        ids = [row[0] for row in conn.execute(
            "SELECT r.id FROM receipts r WHERE r.task_id = ? ORDER BY r.created_at DESC, r.id DESC LIMIT ?",
            (first[0], count))] if first else []
        if len(ids) < count:
            ids += [row[0] for row in conn.execute(
                f"SELECT r.id FROM receipts r JOIN tasks t ON t.id = r.task_id WHERE t.project IN ({_marks(projects)})"
                " AND r.task_id NOT IN (SELECT value FROM json_each(?))"
                " ORDER BY r.created_at DESC, r.id DESC LIMIT ?",
                (*projects, json.dumps(first), count - len(ids)))]
        if ids:
            from mindos.work import receipts  # lazy: sealed receipt files, read when there is one

            for receipt_id in ids:
                record = receipts.load(conn, receipt_id)
                found.append(sections.scrub(compact({"task_id": record.get("task_id"),
                                                     **pack.receipt_entry(record)})))
    return _keys("receipts", state, found, budget.take_all(found, table=TABLES["receipts"]))


def _section_facts(state, budget):
    count, projects = state["options"]["facts"], state["projects"]
    scope = _any_of(fact_in_scope, "f", projects)
    columns = ", ".join(f"f.{name}" for name in _FACT_FIELDS)
    found = [compact(dict(row)) for row in _focused_rows(
        state, "facts_fts", "matches m CROSS JOIN facts f ON f.id = m.rowid", "facts f",
        lambda source: f"SELECT {columns} FROM {source} WHERE {fact_valid('f')} AND ({scope})"
                       " ORDER BY f.valid_from DESC, f.id DESC LIMIT ?", (state["now"], *projects, count))]
    return _keys("facts", state, found, budget.take_all(found, table=TABLES["facts"]))


def _section_semantic(state, budget):
    count, projects = state["options"]["semantic"], state["projects"]
    scope = _any_of(memory_in_scope, "m", projects)
    found = [compact({**dict(row), "tags": json.loads(row["tags"])}, defaults=MEMORY_DEFAULTS)
             for row in _focused_rows(
        state, "memories_fts", "matches x CROSS JOIN memories m ON m.seq = x.rowid", "memories m",
        lambda source: "SELECT m.id, m.project, m.kind, m.content, m.tags, m.source, m.engine, m.created_at"
                       f" FROM {source} WHERE m.retracted_at IS NULL AND {scope}"
                       " ORDER BY m.created_at DESC, m.id ASC LIMIT ?", (*projects, count))]
    return _keys("semantic", state, found, budget.take_all(found, table=TABLES["semantic"]))


def _section_sessions(state, budget):
    from mindos.memory import sessions  # lazy: only a pack asking for history reads the session cache

    count, projects = state["options"]["sessions"], state["projects"]
    matches, focused = _matches(state, "session_messages_fts")
    found = []
    if matches is not None or not focused:
        found = [sections.scrub(compact(item))
                 for item in sessions.scoped_snippets(state["conn"], projects, count, matches)]
    return _keys("sessions", state, found, budget.take_all(found, table=TABLES["sessions"]))


def register(registry):
    """Add the four sections to ``registry`` (prime's), each behind its option, once."""
    if OPTIONS[0] in registry.names():
        return
    for name, build in zip(OPTIONS, (_section_receipts, _section_facts, _section_semantic, _section_sessions)):
        registry.register(name, build, option=name)


def checked(extras):
    """``extras`` ({option: count}) validated: known options, counts 0..MAX_COUNT."""
    if not isinstance(extras, dict) or set(extras) - set(OPTIONS):
        raise InvalidInput(f"invalid first-turn sections: expected counts for {', '.join(OPTIONS)}")
    return {name: validate.positive_int(count, f"--{name}", minimum=0, maximum=MAX_COUNT)
            for name, count in extras.items() if count is not None}
