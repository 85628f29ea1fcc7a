"""One-command onboarding (``ops.py onboard``): a sealed inventory to a verified working home.

Stages run in the spec's order and the first failure stops the run, naming what failed:

  preflight          python/sqlite versions, FTS5 (absent: a warning, ranked search degrades to
                     LIKE), home writability
  init_control_plane idempotent init (the connection the command opened built or migrated it)
  select_source      the manifest seal, fail_closed refused, the single healthy autopilot_sqlite
                     source auto-selected (several without --source-id: refused, listed)
  import_plan        the migrate-import dry run, always: the control plane, then every later
                     step of the inventory's plan in its order (memory-import, hermes-register,
                     archive-copy; :mod:`mindos.migration.steps`)
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
  * **A class of stages.**  :class:`Onboarding` holds one run: each stage is a method named
    after it, run in :data:`STAGES` order, returning its section of the report; what a stage
    learns for later ones lives on the instance.  :func:`onboard` runs it, audits the outcome
    and seals the report; the verdict is the report's ``ok``, which the command turns into
    its exit code.
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

from mindos.errors import InvalidInput, MindosError, Refused
from mindos.migration import documents, importer, inventory
from mindos.migration import steps as plan_steps
from mindos.store import db, ledger

FORMAT = "autopilot-onboarding-v1"
PROBE_TASK = "onboard-probe"
MIN_PYTHON = (3, 11)  # what pyproject.toml's requires-python says
STAGES = ("preflight", "init_control_plane", "select_source", "import_plan", "import_apply", "doctor",
          "protocol_probe")


def _preflight(conn):
    warnings = []
    fts5 = db.fts5_supported()
    if not fts5:
        warnings.append("FTS5 unavailable: ranked retrieval degrades to LIKE")
    writable = os.access(conn.home, os.W_OK)
    python_ok = sys.version_info[:2] >= MIN_PYTHON
    ok = python_ok and writable
    return {"ok": ok, "python": ".".join(map(str, sys.version_info[:3])), "sqlite": sqlite3.sqlite_version,
            "fts5": fts5, "home": conn.home, "home_writable": writable, "warnings": warnings,
            **({} if ok else {"error": "home is not writable" if not writable else "python %d.%d+ required" % MIN_PYTHON})}


def _select(doc, source_id):
    if doc["fail_closed"]:
        names = ", ".join(b["source_id"] for b in doc["blocked"])
        raise Refused(f"inventory is fail_closed ({names}); resolve the blocked sources and re-run migrate-inventory")
    candidates = [s for s in doc["sources"] if s["kind"] == "autopilot_sqlite" and not s.get("blocked")]
    if source_id:
        kind = inventory.source(doc, source_id)["kind"]
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


def _cli(front_door, home, *argv):
    command = [*front_door, *argv]
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=home)
    env.pop("MINDOS_HOME", None)
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    if proc.returncode != 0:
        raise Refused(f"probe step '{argv[0]}' failed: {proc.stderr.strip()[:200]}")
    return proc.stdout


def probe(conn, front_door):
    """The two-identity protocol proof through the real CLI (``front_door``: the argv that
    runs the autopilot door, passed in by the command); skipped once the task settled."""
    import json  # lazy: only the probe parses CLI output

    row = conn.execute("SELECT status FROM tasks WHERE id = ?", (PROBE_TASK,)).fetchone()
    if row is not None and row[0] == "completed":
        return {"ok": True, "skipped": True, "task_id": PROBE_TASK, "reason": "probe task already settled"}
    home = conn.home
    steps = []
    if row is None:
        _cli(front_door, home, "create", "--id", PROBE_TASK, "--project", "onboarding",
             "--title", "Onboarding probe: cross-agent handoff proof")
        steps.append("create")
    _cli(front_door, home, "claim", PROBE_TASK, "--owner", "hermes")
    steps.append("claim:hermes")
    _cli(front_door, home, "handoff", PROBE_TASK, "--from-agent", "hermes", "--to-agent", "codex", "--status", "running",
         "--objective", "prove the handoff protocol on this home", "--next-action", "ack, claim, receipt, complete")
    steps.append("handoff:hermes->codex")
    _cli(front_door, home, "release", PROBE_TASK, "--owner", "hermes")
    steps.append("release:hermes")
    recalled = json.loads(_cli(front_door, home, "recall", PROBE_TASK, "--agent", "codex"))
    handoff = recalled.get("handoff")
    if not handoff or handoff.get("to_agent") != "codex":
        raise Refused("probe step 'recall' failed: the recall bundle does not carry the live handoff")
    steps.append("recall:codex")
    _cli(front_door, home, "ack", PROBE_TASK, "--agent", "codex", "--recall-digest", recalled["digest"])
    steps.append("ack:codex")
    resumed = json.loads(_cli(front_door, home, "resume", PROBE_TASK, "--agent", "codex"))
    if resumed.get("action") not in ("claimed", "already_held"):
        raise Refused(f"probe step 'resume' failed: unexpected action {resumed.get('action')!r:.40}")
    steps.append("resume:codex")
    receipt = json.loads(_cli(front_door, home, "receipt", PROBE_TASK, "--kind", "verification",
                              "--payload", json.dumps({"probe": "ok"})))
    steps.append("receipt:codex")
    _cli(front_door, home, "complete", PROBE_TASK, "--owner", "codex", "--receipt", receipt["receipt_id"],
         "--note", "onboarding probe")
    steps.append("complete:codex")
    return {"ok": True, "skipped": False, "task_id": PROBE_TASK, "steps": steps}


class Onboarding:
    """One onboarding run over a sealed inventory: the stages of :data:`STAGES`, in that order,
    each a method of the same name returning its section of the report (``{"ok": ...}``).

    :meth:`run` stops at the first section that is not ok (a refusal raised by a stage is
    that stage's failed section, naming what failed); ``import_apply`` runs only under
    ``apply`` and ``protocol_probe`` only under ``probe``.  What a stage learns for the
    later ones (the selected source, the inventory digest, the plan's later steps) is kept
    on the instance."""

    def __init__(self, conn, inventory_path, *, apply=False, probe=False, source_id=None, redact=False,
                 allow_secret=False, relink_audit=False, front_door=None):
        self.conn, self.inventory_path, self.front_door = conn, inventory_path, front_door
        self.apply, self.probe = bool(apply), bool(probe)
        self.source_id, self.redact, self.allow_secret, self.relink_audit = source_id, redact, allow_secret, \
            relink_audit
        self.stages, self.failed = [], None
        self.selected = self.digest = None
        self.steps = []  # the plan's later steps (memory-import, hermes-register, archive-copy)

    def wanted(self, name):
        """Whether stage ``name`` runs in this call (the doctor always does, a dry run too)."""
        return {"import_apply": self.apply, "protocol_probe": self.probe}.get(name, True)

    def run(self):
        """Run the wanted stages in order until one fails; return the report (unsealed)."""
        for name in STAGES:
            if self.failed:
                break
            if not self.wanted(name):
                continue
            try:
                outcome = getattr(self, name)()
            except MindosError as exc:
                outcome = {"ok": False, "error": str(exc)}
            entry = {"stage": name, **outcome}
            self.stages.append(entry)
            if not entry.get("ok", False):
                self.failed = name
        return {"inventory": os.path.abspath(self.inventory_path), "inventory_digest": self.digest,
                "source_id": self.selected, "applied": self.apply, "probe": self.probe, "ok": self.failed is None,
                "failed_stage": self.failed, "stages": self.stages}

    # -- the stages, in STAGES order --------------------------------------------------

    def preflight(self):
        return _preflight(self.conn)

    def init_control_plane(self):
        # the connection the command opened already built or migrated the database
        return {"ok": True, "schema_version": self.conn.execute("PRAGMA user_version").fetchone()[0],
                "database": self.conn.path}

    def select_source(self):
        doc = inventory.load(self.inventory_path)
        self.digest = doc["seal"]["digest"]
        self.selected = _select(doc, self.source_id)
        self.steps = [item for item in doc["plan"] if item["kind"] in plan_steps.STEPS]
        return {"ok": True, "source_id": self.selected, "inventory_digest": self.digest,
                "steps": [{"step": item["step"], "action": item["action"], "source_id": item["source_id"]}
                          for item in self.steps]}

    def import_plan(self):
        result = importer.migrate_import(self.conn, self.inventory_path, self.selected, redact=self.redact,
                                         allow_secret=self.allow_secret, relink_audit=self.relink_audit)
        refusals = ([result["refusal_on_apply"]] if "refusal_on_apply" in result else [])
        planned = []
        for item in self.steps:
            step = importer.migrate_import(self.conn, self.inventory_path, item["source_id"], redact=self.redact,
                                           allow_secret=self.allow_secret)
            planned.append(_step_view(item, step))
            if "refusal_on_apply" in step:
                refusals.append(f"{item['action']} {item['source_id']}: {step['refusal_on_apply']}")
        return {"ok": not refusals, "tables": result["tables"],
                "sanitized_tasks": len(result["sanitized_tasks"]), "secret_kinds": result["secret_kinds"],
                "audit": result["audit"], "deduplicated": result["deduplicated"], "steps": planned,
                **({"error": "; ".join(refusals)} if refusals else {})}

    def import_apply(self):
        planned = next(s for s in self.stages if s["stage"] == "import_plan")
        result, kept = self._apply_one(self.selected, planned["deduplicated"], relink_audit=self.relink_audit)
        healthy = result["health"]["ok"]
        entry = {"ok": healthy, "inserted": result.get("inserted"), "events_merged": result.get("events_merged"),
                 "files_restored": result.get("files_restored"), "deduplicated": result["deduplicated"],
                 **kept, "health_ok": healthy, "steps": [],
                 **({} if healthy else {"error": "; ".join(result["health"]["problems"])})}
        for item, plan_view in zip(self.steps if healthy else (), planned["steps"]):
            try:
                step, kept = self._apply_one(item["source_id"], plan_view["deduplicated"])
            except MindosError as exc:  # stop at the first failing step, naming it
                entry.update(ok=False, error=f"{item['action']} {item['source_id']}: {exc}")
                break
            entry["steps"].append({**_step_view(item, step), **kept, "health_ok": step["health"]["ok"]})
            if not step["health"]["ok"]:
                entry.update(ok=False, error=f"{item['action']} {item['source_id']}: "
                                             + "; ".join(step["health"]["problems"]))
                break
        return entry

    def doctor(self):
        return doctor(self.conn)

    def protocol_probe(self):
        if not self.front_door:
            raise Refused("the protocol probe needs the autopilot front door to drive (run onboard from the CLI)")
        return probe(self.conn, self.front_door)

    # -- helpers ----------------------------------------------------------------------

    def _journal_path(self, source):
        return os.path.join(self.conn.home, "migrations", f"migration-result-{self.digest[:16]}-{source}.json")

    def _apply_one(self, source, deduplicated, **flags):
        """Apply one source's import with its journal under <home>/migrations/: ``(result, journal facts)``."""
        target = self._journal_path(source)
        # a re-run that deduplicates keeps the journal of the apply that did the work
        keep = deduplicated and os.path.exists(target)
        result = importer.migrate_import(self.conn, self.inventory_path, source, apply=True,
                                         out=None if keep else target, redact=self.redact,
                                         allow_secret=self.allow_secret, **flags)
        return result, {"journal": target if os.path.exists(target) else None, "journal_written": not keep}


def onboard(conn, inventory_path, *, apply=False, probe_flag=False, out=None, source_id=None, redact=False,
            allow_secret=False, relink_audit=False, force=False, front_door=None):
    """``onboard``: run the stages (:class:`Onboarding`), audit the outcome, and with ``out`` seal
    the report as autopilot-onboarding-v1.  Returns the report; its verdict is ``ok`` (with
    ``failed_stage`` naming the stage that stopped the run)."""
    if probe_flag and not apply:
        raise InvalidInput("--probe requires --apply (a probe mutates by design)")
    if out:
        documents.check_out(out, force=force)  # before any stage runs
    run = Onboarding(conn, inventory_path, apply=apply, probe=probe_flag, source_id=source_id, redact=redact,
                     allow_secret=allow_secret, relink_audit=relink_audit, front_door=front_door)
    report = run.run()
    digest, failed = report["inventory_digest"], report["failed_stage"]
    action = "onboarding_planned" if not apply else ("onboarding_completed" if failed is None else "onboarding_failed")
    with db.write(conn):
        ledger.append_event(conn, "migration", (digest or "none")[:16], action, {
            "inventory_digest": digest, "source_id": report["source_id"], "failed_stage": failed,
            "stages": [s["stage"] for s in report["stages"]]})
    if out:
        _, head = documents.seal(out, FORMAT, dict(report), force=bool(force))
        report.update(out=head["out"], report_digest=head["digest"])
    return report


def load_report(path):
    """Read and verify a sealed onboarding report byte-exact; return it (IntegrityError on any
    changed byte, ``created_at`` and the seal included)."""
    return documents.read(path, FORMAT, "onboarding report")
