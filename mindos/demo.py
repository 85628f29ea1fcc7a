"""The guided tour behind ``autopilot.py demo``: the main cycle, end to end, in a throwaway home.

Design decisions
  * **Core functions, not subprocesses.**  The tour calls the same functions the commands
    call (``tasks.create``, ``leases.claim``, ``graph.plan``, ...), so it runs in well under a
    second and shows exactly the data an agent would get back.
  * **Never the user's home.**  The home is a fresh ``tempfile.mkdtemp`` directory, opened
    explicitly, and ``HERMES_AUTOPILOT_HOME`` points at it while the tour runs (so nothing
    that resolves the home on its own can wander off); it is removed afterwards unless
    ``keep``.
  * **Refusals are part of the story.**  The stale-epoch write is expected to fail; each
    step records what was refused and why, in the words the command would print.  An
    unexpected error is not caught: the tour is also a smoke test.
  * **One result, two views.**  :func:`run` returns the structured steps plus a readable
    ``narrative``; ``--json`` prints the first, the default prints the second.
"""

import os
import shutil
import tempfile

from mindos import db
from mindos.errors import Refused

PROJECT = "demo"
# (id, title, priority, tags, prerequisites): a small release with a diamond in it
TASKS = (
    ("demo-schema", "Design the retry schema", "P1", ["backend"], []),
    ("demo-retry", "Implement the retry path with exponential backoff", "P1", ["autopilot-safe", "backend"],
     ["demo-schema"]),
    ("demo-tests", "Add retry integration tests", "P2", ["autopilot-safe", "backend"], ["demo-schema"]),
    ("demo-docs", "Document the retry behaviour", "P3", ["docs"], ["demo-retry"]),
    ("demo-release", "Release 1.4 with retries", "P0", ["release"], ["demo-retry", "demo-tests"]),
)


def _step(name, title, lines, **data):
    return {"step": name, "title": title, "lines": list(lines), "data": data}


def _init(ctx):
    from mindos import tasks

    info = tasks.init(ctx["conn"])
    return _step("init", "Create a throwaway home", [
        f"home {info['home']}",
        f"schema version {info['schema_version']}, full-text search {'on' if info['fts5'] else 'off (substring fallback)'}",
    ], **info)


def _create(ctx):
    from mindos import tasks

    created = []
    for task_id, title, priority, tags, deps in TASKS:
        created.append(tasks.create(ctx["conn"], project=PROJECT, title=title, priority=priority, tags=tags,
                                    depends_on=deps, task_id=task_id))
    lines = [f"{t['id']} {t['priority']} \"{t['title']}\" tags={','.join(t['tags'])}"
             + (f" waits for {', '.join(t['depends_on'])}" if t["depends_on"] else "") for t in created]
    return _step("create", f"Create project '{PROJECT}': {len(created)} tasks with dependencies and tags", lines,
                 tasks=[{"id": t["id"], "priority": t["priority"], "tags": t["tags"], "depends_on": t["depends_on"]}
                        for t in created])


def _plan(ctx):
    from mindos import graph

    schedule = graph.plan(ctx["conn"], project=PROJECT)
    lines = [f"wave {w['wave']}: {', '.join(t['id'] for t in w['tasks'])}" for w in schedule["waves"]]
    path = graph.critical_path(ctx["conn"], project=PROJECT)
    lines.append(f"critical path ({path['length']}): {' -> '.join(n['id'] for n in path['path'])}")
    return _step("plan", "Plan the dispatch waves", lines, waves_total=schedule["waves_total"],
                 waves=[[t["id"] for t in w["tasks"]] for w in schedule["waves"]],
                 critical_path=[n["id"] for n in path["path"]])


def _claim(ctx):
    from mindos import leases

    conn = ctx["conn"]
    task = leases.claim(conn, "demo-schema", "hermes", minutes=30)
    beat = leases.heartbeat(conn, "demo-schema", "hermes", note="schema drafted", epoch=task["lease_epoch"])
    ctx["schema_epoch"] = task["lease_epoch"]
    return _step("claim", "Claim, then heartbeat with the fencing epoch", [
        f"hermes claimed demo-schema: epoch {task['lease_epoch']}, lease until {task['lease_expires_at']}",
        f"heartbeat at epoch {task['lease_epoch']}: status {beat['status']}, lease until {beat['lease_expires_at']}",
    ], task_id="demo-schema", owner="hermes", lease_epoch=task["lease_epoch"], status=beat["status"])


def _fencing(ctx):
    from mindos import leases

    conn = ctx["conn"]
    stale = ctx["schema_epoch"]
    leases.release(conn, "demo-schema", "hermes", epoch=stale)
    fresh = leases.claim(conn, "demo-schema", "hermes", minutes=30)
    try:
        leases.heartbeat(conn, "demo-schema", "hermes", note="from a stale process", epoch=stale)
        refusal = None
    except Refused as exc:
        refusal = str(exc)
    if refusal is None:
        raise AssertionError("a stale epoch was accepted")
    ctx["schema_epoch"] = fresh["lease_epoch"]
    return _step("fencing", "A stale process is fenced off by the epoch", [
        f"hermes released and re-claimed demo-schema: epoch {stale} -> {fresh['lease_epoch']}",
        f"a write still carrying epoch {stale} was refused: {refusal}",
    ], stale_epoch=stale, current_epoch=fresh["lease_epoch"], refused=refusal)


def _handoff(ctx):
    from mindos import handoffs

    conn = ctx["conn"]
    record = handoffs.record(
        conn, "demo-schema", from_agent="hermes", to_agent="codex", status="running",
        objective="finish the retry schema and land it", evidence=["schema draft reviewed"],
        constraints=["no new dependencies"], decisions=["store attempts as an integer column"],
        files=["schema.sql"], next_actions=["open the PR"],
    )
    acked = handoffs.ack(conn, "demo-schema", "codex")
    return _step("handoff", "Hand the work to another agent, who acknowledges it", [
        f"handoff {record['id']}: hermes -> codex, objective \"{record['objective']}\"",
        f"codex acknowledged it at {acked['acked_at']}",
    ], handoff_id=record["id"], from_agent="hermes", to_agent="codex", acked_by=acked["acked_by"])


def _context(ctx):
    from mindos import context

    pack = context.pack_context(ctx["conn"], "demo-retry", budget=4000, related=5)
    deps = ", ".join(d["id"] for d in pack.get("dependencies") or []) or "none"
    return _step("context", "Pack a session-start context for the next task", [
        f"demo-retry: {pack['used_chars']} of {pack['budget']} characters, sections {', '.join(pack['sections'])}",
        f"unsatisfied prerequisites: {deps}; truncated: {str(pack['truncated']).lower()}",
    ], task_id="demo-retry", used_chars=pack["used_chars"], sections=pack["sections"], truncated=pack["truncated"])


def _verify_chain(ctx):
    from mindos import audit

    report = audit.verify_chain(ctx["conn"])
    if not report["ok"]:
        raise AssertionError(f"the demo's own audit chain is broken: {report['problems'][:3]}")
    actions = [row[0] for row in ctx["conn"].execute("SELECT action FROM audit_events ORDER BY id")]
    return _step("verify-chain", "Verify the audit hash chain", [
        f"{report['events']} events, chain ok: {', '.join(dict.fromkeys(actions))}",
    ], ok=report["ok"], events=report["events"])


STEPS = (_init, _create, _plan, _claim, _fencing, _handoff, _context, _verify_chain)


def narrative(result):
    """The readable text form of a :func:`run` result."""
    where = "kept" if result["kept"] else "removed afterwards"
    out = [f"MindOS demo: the main cycle in a throwaway home ({where})", ""]
    for number, step in enumerate(result["steps"], 1):
        out.append(f"{number}. {step['title']}")
        out.extend(f"   {line}" for line in step["lines"])
    out.append("")
    out.append(f"home kept at {result['home']}" if result["kept"] else "the throwaway home has been removed")
    return "\n".join(out) + "\n"


def run(*, keep=False):
    """Run the tour in a new temporary home; return ``{"home", "kept", "steps", "narrative"}``.

    The home is deleted afterwards unless ``keep``.  Changes nothing else.
    """
    home = tempfile.mkdtemp(prefix="mindos-demo-")
    saved = {name: os.environ.get(name) for name in ("HERMES_AUTOPILOT_HOME", "MINDOS_HOME")}
    os.environ["HERMES_AUTOPILOT_HOME"] = home
    os.environ.pop("MINDOS_HOME", None)
    steps = []
    try:
        conn = db.connect(home)
        try:
            ctx = {"conn": conn, "home": home}
            for step in STEPS:
                steps.append(step(ctx))
        finally:
            conn.close()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if not keep:
            shutil.rmtree(home, ignore_errors=True)
    result = {"home": home, "kept": keep, "steps": steps}
    result["narrative"] = narrative(result)
    return result
