"""Harness hooks: who is speaking, for which project, and the Stop gate.

Claude Code runs a command hook with the event as JSON on stdin: ``session_id``, ``cwd``,
``hook_event_name``, and per event ``source`` (SessionStart: ``startup``, ``resume``,
``clear``, ``compact``) or ``stop_hook_active`` (Stop).  ``session-start --hook claude``
and ``stop-gate --hook claude`` read it here.

Design decisions
  * **Identity carries the session.**  Without ``--agent`` the agent is the harness's base
    name plus the first eight letters and digits of the session id (``claude-code-1a2b3c4d``),
    so two parallel sessions never share a lease or complete each other's task; a resumed or
    compacted session keeps its id, hence its leases.  A configured ``--agent`` always wins.
  * **Project from the working directory.**  Without ``--project``: walking up from ``cwd``,
    the first ``.mindos-project`` file (its first line is the project name) wins; else the
    repository's directory name (the nearest directory holding ``.git``), used only when the
    ledger has tasks in that project, so an unrelated repository still gets the agent's
    whole pack rather than an empty one.  No file and no repository: all its projects.
  * **The Stop gate blocks once.**  A stop is blocked only when the session holds a live
    lease with no handoff and no receipt since its claim, only when the harness says this
    stop is not already the continuation of a blocked one (``stop_hook_active``), and at
    most once per claim (an audited ``stop_gate_blocked`` on the task): never twice in a row.
"""

import json
import os

from mindos.core import validate
from mindos.errors import InvalidInput

HARNESS_AGENTS = {"claude": "claude-code"}
PROJECT_FILE = ".mindos-project"
MAX_INPUT_BYTES = 1 << 20
MAX_WALK = 64
SESSION_CHARS = 8
STOP_SECONDS = 5.0


def parse_input(raw):
    """The hook's stdin JSON as a dict (empty input: ``{}``); InvalidInput when it is not an object."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    if len(raw) > MAX_INPUT_BYTES:
        raise InvalidInput(f"invalid hook input: over {MAX_INPUT_BYTES} bytes")
    if not raw.strip():
        return {}
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError):
        raise InvalidInput("invalid hook input: not JSON (the harness sends one JSON object on stdin)") from None
    if not isinstance(payload, dict):
        raise InvalidInput("invalid hook input: expected a JSON object")
    return payload


def session_agent(payload, harness, agent=None):
    """``(agent, source)``: ``agent`` when configured, else the harness's base name plus a
    short session id (the bare base name when the input carries no session)."""
    if agent:
        return validate.agent(agent, "--agent"), "flag"
    base = HARNESS_AGENTS[harness]
    session = payload.get("session_id")
    short = "".join(c for c in session if c.isascii() and c.isalnum())[:SESSION_CHARS].lower() \
        if isinstance(session, str) else ""
    if not short:
        return base, "harness"
    return validate.agent(f"{base}-{short}", "--agent"), "session"


def project_for(cwd):
    """``(project, source)`` for a working directory: the nearest ``.mindos-project`` file's
    first line (``project-file``), else the repository's directory name (``repository``),
    else ``(None, None)``.  A name that is not a valid project id is ignored."""
    if not isinstance(cwd, str) or not cwd or "\x00" in cwd or not os.path.isabs(cwd):
        return None, None
    here = os.path.normpath(cwd)
    for _ in range(MAX_WALK):
        marker = os.path.join(here, PROJECT_FILE)
        if os.path.isfile(marker):
            try:
                with open(marker, encoding="utf-8") as handle:
                    name = (handle.read(200).splitlines() or [""])[0].strip()
                return validate.identifier(name, PROJECT_FILE), "project-file"
            except (OSError, UnicodeDecodeError, InvalidInput):
                return None, None
        if os.path.exists(os.path.join(here, ".git")):
            try:
                return validate.identifier(os.path.basename(here), "project"), "repository"
            except InvalidInput:
                return None, None
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return None, None


def scope(conn, payload, harness, *, agent=None, project=None):
    """``{"agent", "agent_source", "project", "project_source"}`` for one hook call."""
    agent, agent_source = session_agent(payload, harness, agent)
    if project is not None:
        return {"agent": agent, "agent_source": agent_source,
                "project": validate.identifier(project, "--project"), "project_source": "flag"}
    project, source = project_for(payload.get("cwd"))
    if source == "repository" and conn.execute("SELECT 1 FROM tasks WHERE project = ? LIMIT 1",
                                               (project,)).fetchone() is None:
        project, source = None, None
    return {"agent": agent, "agent_source": agent_source, "project": project, "project_source": source}


def session_start(conn, payload, harness, *, agent=None, project=None, budget=None, seconds=None, fmt="text"):
    """The session-start pack (:func:`mindos.context.prime.prime`) for the agent and project
    the hook input names; the JSON form adds ``scope``."""
    from mindos.context import prime  # lazy: only the session-start hook builds a pack

    where = scope(conn, payload, harness, agent=agent, project=project)
    result = prime.prime(conn, where["agent"], project=where["project"],
                         budget=prime.DEFAULT_BUDGET if budget is None else budget,
                         seconds=prime.DEFAULT_SECONDS if seconds is None else seconds, fmt=fmt)
    if fmt == "json":
        result["scope"] = {**where, "source": payload.get("source")}
    return result


def _since_claim(conn, task_id):
    """True when, since the task's latest claim (or lease transfer), an action satisfied (or
    already spent) the gate: one statement, the claim found inside it."""
    return conn.execute(
        "SELECT 1 FROM audit_events WHERE entity_id = ? AND action IN"
        " ('handoff_recorded', 'handoff_deduplicated', 'receipt_added', 'stop_gate_blocked')"
        " AND id > coalesce((SELECT max(id) FROM audit_events WHERE entity_id = ?"
        " AND action IN ('claimed', 'lease_transferred')), 0) LIMIT 1", (task_id, task_id)).fetchone() is not None


def stop_gate(conn, payload, harness, *, agent=None, seconds=STOP_SECONDS):
    """Claude Code's Stop decision: ``{"decision": "block", "reason"}`` once, or ``{}``.

    Blocks when the session's agent holds a live lease whose task has no handoff and no
    receipt since the claim, unless this stop already continues a blocked one
    (``stop_hook_active``) or the gate already blocked on this claim; a block is audited
    ``stop_gate_blocked`` (deferred to the next write when the lock is held past
    ``seconds``).
    """
    seconds = validate.seconds(seconds)
    if payload.get("stop_hook_active") is True:
        return {}
    from mindos.context import prime  # lazy: the title's one-line form
    from mindos.store import db, deferred  # lazy: the bounded audit write
    from mindos.work import leases  # lazy: as above

    who, _ = session_agent(payload, harness, agent)
    for lease in leases.list_leases(conn, owner=who):
        task_id = lease["task_id"]
        if _since_claim(conn, task_id):
            continue
        reason = (f"MindOS: you still hold the lease on {task_id} ({prime._one_line(lease['title'], 80)}) with no"
                  f" handoff or receipt since you claimed it; record a handoff (MCP tool handoff, or: handoff"
                  f" {task_id} --from-agent {who} --objective ...) or release the lease before you stop.")
        deferred.audit_bounded(conn, [("task", task_id, "stop_gate_blocked", {
            "agent": who, "lease_epoch": lease["lease_epoch"], "session_id": str(payload.get("session_id") or "")[:128]})],
            seconds, write=db.write)
        return {"decision": "block", "reason": reason}
    return {}
