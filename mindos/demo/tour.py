"""The guided tour behind ``autopilot.py demo``: the main cycle, end to end, in a throwaway home.

Design decisions
  * **Core functions, not subprocesses.**  The tour calls the same functions the commands
    call (``tasks.create``, ``leases.claim``, ``graph.plan``, ...), so it runs in well under a
    second and shows exactly the data an agent would get back.
  * **Never the user's home.**  The home is a fresh ``tempfile.mkdtemp`` directory, opened
    explicitly, and ``HERMES_AUTOPILOT_HOME`` points at it while the tour runs (so nothing
    that resolves the home on its own can wander off); it is removed afterwards unless
    ``keep``.
  * **The clock moves only inside the tour.**  A stall needs time to pass: the stall step
    advances the package clock, and :func:`run` puts the caller's clock back as it was.
  * **Refusals are part of the story.**  The stale-epoch completion and the credential-shaped
    note are expected to fail; those steps record the refusal in the words the command
    would print.  Anything unexpected is not caught (a refusal that does not happen raises
    too): the tour doubles as a smoke test of the whole cycle.
  * **One result, two views.**  :func:`run` returns the structured steps plus a readable
    ``narrative``; ``--json`` prints the first, the default prints the second.
"""

import os
import shutil
import tempfile

from mindos.core import clock
from mindos.store import db, ledger
from mindos.errors import Refused
from mindos.context import builder, pack, recall
from mindos.memory import handoffs, notes
from mindos.work import dispatch, graph, leases, lifecycle, receipts, tags, task_search, tasks

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


def _refusal(call):
    """Run ``call``, which must be refused; return the refusal message."""
    try:
        call()
    except Refused as exc:
        return str(exc)
    raise AssertionError("the demo expected a refusal that did not happen")


def _init(ctx):
    info = tasks.init(ctx["conn"])
    return _step("init", "Create a throwaway home", [
        f"home {info['home']}",
        f"schema version {info['schema_version']}, full-text search {'on' if info['fts5'] else 'off (substring fallback)'}",
    ], **info)


def _create(ctx):
    created = []
    for task_id, title, priority, task_tags, deps in TASKS:
        created.append(tasks.create(ctx["conn"], project=PROJECT, title=title, priority=priority, tags=task_tags,
                                    depends_on=deps, task_id=task_id))
    tagged = tags.add(ctx["conn"], "demo-docs", ["autopilot-safe"])
    lines = [f"{t['id']} {t['priority']} \"{t['title']}\" tags={','.join(t['tags'])}"
             + (f" waits for {', '.join(t['depends_on'])}" if t["depends_on"] else "") for t in created]
    lines.append(f"tagged demo-docs afterwards: now {', '.join(tagged['tags'])}")
    return _step("create", f"Create project '{PROJECT}': {len(created)} tasks with dependencies and tags", lines,
                 tasks=[{"id": t["id"], "priority": t["priority"], "tags": t["tags"], "depends_on": t["depends_on"]}
                        for t in created], tagged=tagged)


def _search(ctx):
    hits = task_search.search(ctx["conn"], "retry schema", rank=True)
    ranked = "score" in hits[0] if hits else False
    lines = [f"\"retry schema\" -> {len(hits)} hit(s), {'BM25-ranked' if ranked else 'substring match'}: "
             + ", ".join(h["id"] for h in hits)]
    return _step("search", "Search the task text", lines, query="retry schema", hits=[h["id"] for h in hits],
                 ranked=ranked)


def _plan(ctx):
    schedule = graph.plan(ctx["conn"], project=PROJECT)
    lines = [f"wave {w['wave']}: {', '.join(t['id'] for t in w['tasks'])}" for w in schedule["waves"]]
    path = graph.critical_path(ctx["conn"], project=PROJECT)
    lines.append(f"critical path ({path['length']}): {' -> '.join(n['id'] for n in path['path'])}")
    return _step("plan", "Plan the dispatch waves", lines, waves_total=schedule["waves_total"],
                 waves=[[t["id"] for t in w["tasks"]] for w in schedule["waves"]],
                 critical_path=[n["id"] for n in path["path"]])


def _claim(ctx):
    conn = ctx["conn"]
    task = leases.claim(conn, "demo-schema", "hermes", minutes=30)
    beat = leases.heartbeat(conn, "demo-schema", "hermes", note="schema drafted", epoch=task["lease_epoch"])
    ctx["epoch"] = task["lease_epoch"]
    return _step("claim", "Claim a task, then heartbeat with its fencing epoch", [
        f"hermes claimed demo-schema: epoch {task['lease_epoch']}, lease until {task['lease_expires_at']}",
        f"heartbeat at epoch {task['lease_epoch']}: status {beat['status']}, lease until {beat['lease_expires_at']}",
    ], task_id="demo-schema", owner="hermes", lease_epoch=task["lease_epoch"], status=beat["status"])


def _fencing(ctx):
    conn = ctx["conn"]
    stale = ctx["epoch"]
    leases.release(conn, "demo-schema", "hermes", epoch=stale)
    fresh = leases.claim(conn, "demo-schema", "hermes", minutes=30)
    refused = _refusal(lambda: lifecycle.complete(conn, "demo-schema", "hermes", epoch=stale,
                                                  note="from a stale process"))
    ctx["epoch"] = fresh["lease_epoch"]
    return _step("fencing", "A stale process is fenced off by the epoch", [
        f"hermes released and re-claimed demo-schema: epoch {stale} -> {fresh['lease_epoch']}",
        f"a complete still carrying epoch {stale} was refused: {refused}",
    ], stale_epoch=stale, current_epoch=fresh["lease_epoch"], refused=refused)


def _receipt(ctx):
    receipt = receipts.add(ctx["conn"], "demo-schema", "verification", {"tests": "pass", "migrations": "applied"})
    ctx["receipt"] = receipt["receipt_id"]
    return _step("receipt", "Attach sealed evidence", [
        f"receipt {receipt['receipt_id']} ({receipt['kind']}) on demo-schema, sha256 {receipt['file_hash'][:16]}...",
    ], receipt_id=receipt["receipt_id"], kind=receipt["kind"], file_hash=receipt["file_hash"])


def _complete(ctx):
    done = lifecycle.complete(ctx["conn"], "demo-schema", "hermes", epoch=ctx["epoch"], note="schema landed",
                              receipts=[ctx["receipt"]])
    return _step("complete", "Complete it with the current epoch, citing the receipt", [
        f"demo-schema is {done['status']} (epoch {ctx['epoch']}, evidence {ctx['receipt']})",
        f"newly unblocked: {', '.join(done['newly_unblocked']) or 'nothing'}",
    ], status=done["status"], newly_unblocked=done["newly_unblocked"])


def _next_claim(ctx):
    picked = dispatch.next_task(ctx["conn"], claim=True, owner="codex", tags=["autopilot-safe"])["task"]
    ctx["next"] = picked
    return _step("next-claim", "Dispatch: the best ready task, claimed atomically", [
        f"next --claim --owner codex --tag autopilot-safe -> {picked['id']} ({picked['priority']}),"
        f" epoch {picked['lease_epoch']}",
    ], task_id=picked["id"], owner=picked["lease_owner"], lease_epoch=picked["lease_epoch"])


def _notes(ctx):
    conn = ctx["conn"]
    task_id = ctx["next"]["id"]
    fact = notes.add(conn, task_id, kind="fact", content="The upstream API allows 60 requests per minute",
                     source="codex")
    pin = notes.add(conn, task_id, kind="constraint", content="Never retry a non-idempotent POST", source="codex",
                    pinned=True)
    # AWS's documented example key: shaped like a credential, so the guard must stop it
    blocked = _refusal(lambda: notes.add(conn, task_id, kind="fact", source="codex",
                                         content="deploy key is AKIAIOSFODNN7EXAMPLE"))
    stored = conn.execute("SELECT count(*) FROM notes WHERE task_id = ?", (task_id,)).fetchone()[0]
    return _step("notes", "Share memory on the task; a credential is turned away", [
        f"note {fact['id']} ({fact['kind']}) and pinned note {pin['id']} ({pin['kind']}) on {task_id}",
        f"a note holding an AWS-shaped key was refused: {blocked.split(';')[0]}",
        f"{stored} notes stored; the refusal is in the ledger as secret_blocked",
    ], task_id=task_id, note_ids=[fact["id"], pin["id"]], stored=stored, refused=blocked)


def _handoff(ctx):
    conn = ctx["conn"]
    task_id = ctx["next"]["id"]
    record = handoffs.record(
        conn, task_id, from_agent="codex", to_agent="claude-code", status="running",
        objective="finish the retry path and open the PR", evidence=["unit tests pass"],
        constraints=["no new dependencies"], decisions=["exponential backoff, capped at 30 s"],
        files=["src/retry.py"], commit="abc1234", next_actions=["open the PR"],
    )
    acked = handoffs.ack(conn, task_id, "claude-code")
    return _step("handoff", "Hand the work to another agent, who acknowledges it", [
        f"handoff {record['id']} on {task_id}: codex -> claude-code, \"{record['objective']}\"",
        f"claude-code acknowledged it at {acked['acked_at']}",
    ], task_id=task_id, handoff_id=record["id"], from_agent="codex", to_agent="claude-code",
                 acked_by=acked["acked_by"])


def _context(ctx):
    task_id = ctx["next"]["id"]
    bundle = builder.decode(pack.pack_context(ctx["conn"], task_id, budget=4000, related=5))  # printed lean, as tables
    packed = [n["id"] for n in bundle.get("notes") or []]
    return _step("context", "Pack the session-start context a new session would get", [
        f"{task_id}: {bundle['used_chars']} of {bundle['budget']} characters; sections {', '.join(bundle['sections'])}",
        f"live handoff from {bundle['handoff']['from_agent']}, notes {packed} (pinned first),"
        f" truncated: {str(bundle['truncated']).lower()}",
    ], task_id=task_id, used_chars=bundle["used_chars"], sections=bundle["sections"], notes=packed,
                 truncated=bundle["truncated"])


def _recall(ctx):
    conn = ctx["conn"]
    task_id = ctx["next"]["id"]
    params = recall.make_params(budget=6000, related=5)
    sealed = builder.decode(recall.recall(conn, task_id, agent="claude-code", params=params))
    change = notes.add(conn, task_id, kind="decision", content="Retry at most 5 times, then fail the job",
                       source="claude-code")
    verdict = recall.verify(conn, task_id, sealed["digest"], agent="claude-code", params=params)
    moved = recall.diff(conn, task_id, sealed["digest"])
    return _step("recall", "Recall a sealed bundle, change something, and see exactly what moved", [
        f"recall {task_id} --agent claude-code -> digest {sealed['digest'][:12]}..., lease held by"
        f" {sealed['lease'].get('owner')}, {len(sealed.get('receipts', ()))} receipts",
        f"a new note {change['id']} lands; recall-verify says fresh: {str(verdict['fresh']).lower()}",
        f"recall-diff names the moved sections: {', '.join(moved['sections_changed'])}"
        f" (notes added {moved['changes']['notes']['added']})",
    ], task_id=task_id, digest=sealed["digest"], fresh=verdict["fresh"], current_digest=verdict["current_digest"],
                 sections_changed=moved["sections_changed"], notes_added=moved["changes"]["notes"]["added"])


def _stall(ctx):
    from mindos.autonomy import nanny, sense  # lazy: only this step ticks the nanny

    conn = ctx["conn"]
    task = leases.claim(conn, "demo-tests", "claude-code", minutes=120)
    leases.heartbeat(conn, "demo-tests", "claude-code", epoch=task["lease_epoch"],
                     action="running the retry integration tests", intent="prove retries survive a restart",
                     progress_state="tests-running", stall_deadline=10)
    clock.advance(minutes=11)  # the demo's own clock; run() restores the caller's
    beat = leases.heartbeat(conn, "demo-tests", "claude-code", epoch=task["lease_epoch"],
                            progress_state="tests-running")
    found = [item for item in sense.sense(conn)["findings"] if item["kind"] == "stalled_lease"]
    report = nanny.tick(conn)
    runs = [run["repair"] for run in report["repairs"] if run["changed"]]
    decisions = [item["kind"] for item in report["decisions"]]
    return _step("stall", "A live lease stops making progress: sensed, then escalated by the nanny", [
        f"claude-code heartbeats demo-tests at state {beat['progress']['state']} with a 10-minute stall deadline;"
        f" 11 minutes later it is alive but stalled: {str(beat['progress']['stalled']).lower()}",
        f"sense finds {len(found)} stalled_lease finding(s) on {', '.join(f['subjects'][0] for f in found)}",
        f"the nanny ran {', '.join(runs) or 'nothing'} and reports {report['state']}: {', '.join(decisions)}",
    ], task_id="demo-tests", stalled=beat["progress"]["stalled"], findings=[f["subjects"][0] for f in found],
                 repairs=runs, state=report["state"], decisions=decisions)


def _verify_chain(ctx):
    report = ledger.verify_chain(ctx["conn"])
    if not report["ok"]:
        raise AssertionError(f"the demo's own audit chain is broken: {report['problems'][:3]}")
    actions = [row[0] for row in ctx["conn"].execute("SELECT action FROM audit_events ORDER BY id")]
    return _step("verify-chain", "Verify the audit hash chain", [
        f"{report['events']} events re-hashed, chain ok",
        "actions: " + ", ".join(dict.fromkeys(actions)),
    ], ok=report["ok"], events=report["events"], actions=list(dict.fromkeys(actions)))


STEPS = (_init, _create, _search, _plan, _claim, _fencing, _receipt, _complete, _next_claim, _notes, _handoff,
         _context, _recall, _stall, _verify_chain)


def narrative(result):
    """The readable text form of a :func:`run` result."""
    where = "kept" if result["kept"] else "removed afterwards"
    out = [f"MindOS demo: the main cycle in a throwaway home ({where})", ""]
    for number, step in enumerate(result["steps"], 1):
        out.append(f"{number:2d}. {step['title']}")
        out.extend(f"    {line}" for line in step["lines"])
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
    pinned = clock.pinned()
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
        clock.set_now(pinned)  # the stall step moves the demo's clock
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
