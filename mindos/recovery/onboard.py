"""One-command onboarding (``ops.py onboard``): a sealed inventory to a verified working home.

Stages run in the spec's order and the first failure stops the run, naming what failed:

  preflight          python/sqlite versions, FTS5 (absent: a warning, ranked search degrades to
                     LIKE), home writability
  init_control_plane idempotent init (the connection the command opened built or migrated it)
  select_source      the manifest seal, fail_closed refused, the single healthy autopilot_sqlite
                     source auto-selected (several without --source-id: refused, listed)
  import_plan        the migrate-import dry run, always: the control plane, then every later
                     step of the inventory's plan in its order (memory-import, hermes-register,
                     archive-copy; :mod:`mindos.recovery.migrate_steps`)
  import_apply       only under --apply: the import, then those steps; each one's sealed
                     rollback journal lands in <home>/migrations/ so every onboard is
                     undoable by migrate-rollback
  doctor             always (a dry run too): the consistency sweep of this home must come
                     back clean; only import_apply and protocol_probe need --apply
  protocol_probe     --probe (needs --apply): hermes hands off, codex picks up -- handoff ->
                     recall (audited context_recalled) -> ack -> resume (audited
                     session_resumed) -> receipt -> complete on a dedicated onboard-probe
                     task, through the real CLI

Design decisions
  * **Idempotent.**  Init re-runs harmlessly, an identical import deduplicates to nothing (and
    never overwrites the journal of the apply that did the work), the probe skips when its
    task has settled.  An interrupted onboarding resumes by running the same command again.
  * **Dry run writes only bookkeeping**: ``onboarding_planned`` (and ``onboarding_completed``
    / ``onboarding_failed`` on apply), which never make a home "lived-in" for a later import.
  * **The doctor stage** is :mod:`mindos.recovery.doctor`'s full read-only sweep (integrity,
    foreign keys, receipts against their file_hash, the audit chain, leases, supersession,
    fact references and FTS drift of every registered index, the session cache's included).
"""

import os
import sqlite3
import subprocess
import sys

from mindos.core import clock
from mindos.errors import InvalidInput, MindosError, NotFound, Refused
from mindos.recovery import artifacts, migrate_import, migrate_inventory, migrate_steps
from mindos.store import db, ledger

FORMAT = "autopilot-onboarding-v1"
PROBE_TASK = "onboard-probe"
STAGES = ("preflight", "init_control_plane", "select_source", "import_plan", "import_apply", "doctor",
          "protocol_probe")


def _preflight(conn):
    warnings = []
    fts5 = db.fts5_supported()
    if not fts5:
        warnings.append("FTS5 unavailable: ranked retrieval degrades to LIKE")
    writable = os.access(conn.home, os.W_OK)
    ok = sys.version_info >= (3, 9) and writable
    return {"ok": ok, "python": ".".join(map(str, sys.version_info[:3])), "sqlite": sqlite3.sqlite_version,
            "fts5": fts5, "home": conn.home, "home_writable": writable, "warnings": warnings,
            **({} if ok else {"error": "home is not writable" if not writable else "python 3.9+ required"})}


def _select(doc, source_id):
    if doc["fail_closed"]:
        names = ", ".join(b["source_id"] for b in doc["blocked"])
        raise Refused(f"inventory is fail_closed ({names}); resolve the blocked sources and re-run migrate-inventory")
    candidates = [s for s in doc["sources"] if s["kind"] == "autopilot_sqlite" and not s.get("blocked")]
    if source_id:
        kind = migrate_inventory.source(doc, source_id)["kind"]
        if kind != "autopilot_sqlite":
            raise Refused(f"--source-id {source_id} is {kind}: it selects the autopilot_sqlite source; the "
                          "plan's later steps run after it")
        return source_id
    if not candidates:
        raise Refused("inventory holds no healthy autopilot_sqlite source to import")
    if len(candidates) > 1:
        listed = ", ".join(f"{s['source_id']} ({s['path']})" for s in candidates)
        raise Refused(f"several autopilot_sqlite sources, pass --source-id: {listed}")
    return candidates[0]["source_id"]


def _step_view(item, result):
    """The compact view of one later plan step's migrate-import result."""
    view = {"step": item["step"], "action": item["action"], "source_id": item["source_id"], "kind": item["kind"],
            "deduplicated": result["deduplicated"]}
    for key in ("destination", "destination_state", "files", "secret_kinds", "bank", "would_copy", "files_copied",
                "inserted", "secret_action"):
        if key in result:
            view[key] = result[key]
    return view


def doctor(conn):
    """The doctor stage (run with or without --apply): the recovery doctor's full read-only
    sweep of this home, which must come back clean (``{"ok", "problems_by_kind", "problems", "checks"}``)."""
    from mindos.recovery import doctor as recovery_doctor  # lazy: only onboarding's last stage sweeps

    report = recovery_doctor.run(conn.home)
    return {"ok": report["ok"], "problems_by_kind": report["problems_by_kind"], "problems": report["problems"][:20],
            "checks": report["checks"], "counts": report["counts"],
            **({} if report["ok"] else {"error": "doctor found problems: " + ", ".join(report["problems_by_kind"])})}


def _cli(home, *argv):
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                          "autopilot.py")
    command = [sys.executable, script, *argv] if os.path.isfile(script) else \
        [sys.executable, "-m", "mindos.cli.autopilot", *argv]
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=home)
    env.pop("MINDOS_HOME", None)
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    if proc.returncode != 0:
        raise Refused(f"probe step '{argv[0]}' failed: {proc.stderr.strip()[:200]}")
    return proc.stdout


def probe(conn):
    """The two-identity protocol proof through the real CLI; skipped once the task settled."""
    import json  # lazy: only the probe parses CLI output

    row = conn.execute("SELECT status FROM tasks WHERE id = ?", (PROBE_TASK,)).fetchone()
    if row is not None and row[0] == "completed":
        return {"ok": True, "skipped": True, "task_id": PROBE_TASK, "reason": "probe task already settled"}
    home = conn.home
    steps = []
    if row is None:
        _cli(home, "create", "--id", PROBE_TASK, "--project", "onboarding",
             "--title", "Onboarding probe: cross-agent handoff proof")
        steps.append("create")
    _cli(home, "claim", PROBE_TASK, "--owner", "hermes")
    steps.append("claim:hermes")
    _cli(home, "handoff", PROBE_TASK, "--from-agent", "hermes", "--to-agent", "codex", "--status", "running",
         "--objective", "prove the handoff protocol on this home", "--next-action", "ack, claim, receipt, complete")
    steps.append("handoff:hermes->codex")
    _cli(home, "release", PROBE_TASK, "--owner", "hermes")
    steps.append("release:hermes")
    recalled = json.loads(_cli(home, "recall", PROBE_TASK, "--agent", "codex"))
    handoff = recalled.get("handoff")
    if not handoff or handoff.get("to_agent") != "codex":
        raise Refused("probe step 'recall' failed: the recall bundle does not carry the live handoff")
    steps.append("recall:codex")
    _cli(home, "ack", PROBE_TASK, "--agent", "codex", "--recall-digest", recalled["digest"])
    steps.append("ack:codex")
    resumed = json.loads(_cli(home, "resume", PROBE_TASK, "--agent", "codex"))
    if resumed.get("action") not in ("claimed", "already_held"):
        raise Refused(f"probe step 'resume' failed: unexpected action {resumed.get('action')!r:.40}")
    steps.append("resume:codex")
    receipt = json.loads(_cli(home, "receipt", PROBE_TASK, "--kind", "verification",
                              "--payload", json.dumps({"probe": "ok"})))
    steps.append("receipt:codex")
    _cli(home, "complete", PROBE_TASK, "--owner", "codex", "--receipt", receipt["receipt_id"],
         "--note", "onboarding probe")
    steps.append("complete:codex")
    return {"ok": True, "skipped": False, "task_id": PROBE_TASK, "steps": steps}


def onboard(conn, inventory_path, *, apply=False, probe_flag=False, out=None, source_id=None, redact=False,
            allow_secret=False, relink_audit=False, force=False):
    """``onboard``: run the stages in order, stop at the first failure.  Returns ``(report,
    exit_code)``; with ``out`` the report is sealed as autopilot-onboarding-v1."""
    if probe_flag and not apply:
        raise InvalidInput("--probe requires --apply (a probe mutates by design)")
    if out:
        from mindos.core import files  # lazy: --out only

        files.check_out(out, force=force)  # before any stage runs
    stages, failed, selected, digest, steps = [], None, None, None, []

    def run(name, step):
        nonlocal failed
        try:
            outcome = step()
        except MindosError as exc:
            outcome = {"ok": False, "error": str(exc)}
        entry = {"stage": name, **outcome}
        stages.append(entry)
        if not entry.get("ok", False):
            failed = name
        return entry

    def select():
        nonlocal selected, digest, steps
        doc = migrate_inventory.load(inventory_path)
        digest = doc["seal"]["digest"]
        selected = _select(doc, source_id)
        steps = [item for item in doc["plan"] if item["kind"] in migrate_steps.STEPS]
        return {"ok": True, "source_id": selected, "inventory_digest": digest,
                "steps": [{"step": item["step"], "action": item["action"], "source_id": item["source_id"]}
                          for item in steps]}

    def journal_path(source):
        return os.path.join(conn.home, "migrations", f"migration-result-{digest[:16]}-{source}.json")

    def import_plan():
        result, _ = migrate_import.migrate_import(conn, inventory_path, selected, redact=redact,
                                                  allow_secret=allow_secret, relink_audit=relink_audit)
        refusals = ([result["refusal_on_apply"]] if "refusal_on_apply" in result else [])
        planned = []
        for item in steps:
            step, _ = migrate_import.migrate_import(conn, inventory_path, item["source_id"], redact=redact,
                                                    allow_secret=allow_secret)
            planned.append(_step_view(item, step))
            if "refusal_on_apply" in step:
                refusals.append(f"{item['action']} {item['source_id']}: {step['refusal_on_apply']}")
        return {"ok": not refusals, "tables": result["tables"],
                "sanitized_tasks": len(result["sanitized_tasks"]), "secret_kinds": result["secret_kinds"],
                "audit": result["audit"], "deduplicated": result["deduplicated"], "steps": planned,
                **({"error": "; ".join(refusals)} if refusals else {})}

    def apply_one(source, deduplicated, **flags):
        target = journal_path(source)
        # a re-run that deduplicates keeps the journal of the apply that did the work
        keep = deduplicated and os.path.exists(target)
        result, code = migrate_import.migrate_import(conn, inventory_path, source, apply=True,
                                                     out=None if keep else target, redact=redact,
                                                     allow_secret=allow_secret, **flags)
        return result, code, {"journal": target if os.path.exists(target) else None, "journal_written": not keep}

    def import_apply():
        planned = next(s for s in stages if s["stage"] == "import_plan")
        result, code, kept = apply_one(selected, planned["deduplicated"], relink_audit=relink_audit)
        entry = {"ok": code == 0, "inserted": result.get("inserted"), "events_merged": result.get("events_merged"),
                 "files_restored": result.get("files_restored"), "deduplicated": result["deduplicated"],
                 **kept, "health_ok": result["health"]["ok"], "steps": [],
                 **({} if code == 0 else {"error": "; ".join(result["health"]["problems"])})}
        for item, plan_view in zip(steps if code == 0 else (), planned["steps"]):
            try:
                step, code, kept = apply_one(item["source_id"], plan_view["deduplicated"])
            except MindosError as exc:  # stop at the first failing step, naming it
                entry.update(ok=False, error=f"{item['action']} {item['source_id']}: {exc}")
                break
            entry["steps"].append({**_step_view(item, step), **kept, "health_ok": step["health"]["ok"]})
            if code != 0:
                entry.update(ok=False, error=f"{item['action']} {item['source_id']}: "
                                             + "; ".join(step["health"]["problems"]))
                break
        return entry

    run("preflight", lambda: _preflight(conn))
    if not failed:
        run("init_control_plane", lambda: {"ok": True, "schema_version": conn.execute(
            "PRAGMA user_version").fetchone()[0], "database": conn.path})
    if not failed:
        run("select_source", select)
    if not failed:
        run("import_plan", import_plan)
    if apply and not failed:
        run("import_apply", import_apply)
    if not failed:  # unconditional: only import_apply and protocol_probe need --apply
        run("doctor", lambda: doctor(conn))
    if probe_flag and not failed:
        run("protocol_probe", lambda: probe(conn))
    report = {"inventory": os.path.abspath(inventory_path), "inventory_digest": digest, "source_id": selected,
              "applied": bool(apply), "probe": bool(probe_flag), "ok": failed is None, "failed_stage": failed,
              "stages": stages}
    action = "onboarding_planned" if not apply else ("onboarding_completed" if failed is None else "onboarding_failed")
    with db.write(conn):
        ledger.append_event(conn, "migration", (digest or "none")[:16], action, {
            "inventory_digest": digest, "source_id": selected, "failed_stage": failed,
            "stages": [s["stage"] for s in stages]})
    if out:
        body = dict(report)
        body["created_at"] = clock.now_iso()
        report["out"] = os.path.abspath(out)
        doc, _ = artifacts.seal_write(report["out"], FORMAT, body, force=bool(force))
        report["report_digest"] = doc["seal"]["digest"]
    return report, (0 if failed is None else 1)


def load_report(path):
    """Read and verify a sealed onboarding report byte-exact; return it (IntegrityError on any
    changed byte, ``created_at`` and the seal included)."""
    if not isinstance(path, str) or not os.path.lexists(path):
        raise NotFound(f"onboarding report {path} not found")  # a FIFO or link: named by the reader
    return artifacts.read(path, FORMAT)
