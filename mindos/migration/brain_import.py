"""Brain import: bring a sealed brain inventory's non-execution surfaces into a new home.

``brain-import --inventory F --target /abs/new/home [--apply --redact --out R]`` consumes only
a verified ``mindos-brain-inventory-v1`` and an explicit absolute target.  Execution truth
(and semantic memory, which lives in the control-plane database) stays at the migrate-import
boundary: both are planned ``external_execution_import_required``, never copied as a second
authority.  No service binding is written.

What is imported and where (under the target):

  temporal       temporal.db                               -> temporal.db
  claude_sync    claude-memory-sync.json                   -> claude/claude-memory-sync.json
  claude_memory  projects/<p>/memory/**                    -> claude/projects/<p>/memory/**
  sessions       raw transcripts (*.jsonl, *.json)         -> sessions/**
  profiles       config declarations (config.yaml, ...)    -> hermes/profiles/**
  skills         SKILL.md declarations                     -> hermes/skills/**
  cron           jobs.json                                 -> hermes/cron/jobs.json

Everything else is quarantined with a reason rather than guessed at: derived session-cache
artifacts, profile runtime state, non-definition skill support/cache files, non-definition
cron artifacts, and credential-shaped text (unless ``--redact``, which copies a redacted
derivative; a non-text file is never redacted).  The quarantine records identities,
checksums, kinds and reasons, never values.

Design decisions
  * **No-write plan by default.**  ``--apply`` first re-hashes every selected source file
    against the inventory and checks every destination, refusing drift or a different
    pre-existing file before anything is written; then creates files atomically with 0600.
  * **Provenance and report.**  Each copied artifact's source and target checksums go to
    ``provenance/brain-import-<inventory sha16>.json``; an applied run seals a
    ``mindos-brain-import-v1`` report under ``migrations/`` (or ``--out``); both are sealed
    with every field inside the seal and read back byte-exact (:func:`load_report`).
  * **Re-running is a verified no-op**: already-created bytes are checked, never replaced.
"""

import os

from mindos.core import canonical, secrets
from mindos.core.atomic import atomic_write
from mindos.errors import InvalidInput, Refused
from mindos.migration import brain_inventory, documents
from mindos.migration import inventory as mig
from mindos.recovery import artifacts

FORMAT = "mindos-brain-import-v1"
PROVENANCE_FORMAT = "mindos-brain-provenance-v1"
MAX_COPY_BYTES = 4 * 1024 * 1024 * 1024  # one imported file, read whole
PROFILE_DECLARATIONS = ("config.yaml", "config.yml", "config.json", "profile.yaml", "profile.yml", "profile.json")
TARGETS = {"temporal": "", "claude_sync": "claude", "claude_memory": os.path.join("claude", "projects"),
           "sessions": "sessions", "profiles": os.path.join("hermes", "profiles"),
           "skills": os.path.join("hermes", "skills"), "cron": os.path.join("hermes", "cron")}


def decide(source, rel):
    """``(import?, reason)`` for one file (``rel``: relative to the source's base) of an
    importable source; migrate-import's hermes-register step applies the same rules."""
    name = os.path.basename(rel)
    if source == "sessions":
        return (rel.endswith((".jsonl", ".json")), "derived session cache artifact")
    if source == "profiles":
        return (name in PROFILE_DECLARATIONS, "profile runtime state")
    if source == "skills":
        return (name == "SKILL.md", "non-definition skill support or cache file")
    if source == "cron":
        return (rel == "jobs.json", "non-definition cron artifact")
    return True, ""


def plan(inventory_path, target, *, redact=False):
    """The import plan: ``{"imports", "quarantine", "external", ...}``; writes nothing."""
    doc = brain_inventory.load(inventory_path)
    if doc["fail_closed"]:
        names = ", ".join(f"{b['source']} ({b['reason']})" for b in doc["blocked"])
        raise Refused(f"brain inventory is fail_closed: {names}; resolve them and re-run brain-inventory")
    if not isinstance(target, str) or not os.path.isabs(target):
        raise InvalidInput("invalid --target: an explicit absolute path to the new home is required")
    from mindos.core import files  # lazy: plans only

    target = os.path.normpath(target)
    # the target is a new home: never a system directory, never someone's existing tree
    # (only this same inventory's earlier import, whose re-run is a verified no-op)
    provenance = os.path.join(target, "provenance", f"brain-import-{doc['seal']['digest'][:16]}.json")
    files.check_new_tree(target, allow=lambda names: os.path.isfile(provenance) and not os.path.islink(provenance))
    imports, quarantine, external = [], [], []
    for source in doc["sources"]:
        name = source["source"]
        if name in ("autopilot", "memories"):
            if source["status"] == "present":
                external.append({"source": name, "role": source["role"], "plan": "external_execution_import_required"})
            continue
        if source["status"] != "present":
            continue
        base = source["base"]
        for entry in source.get("files", []):
            rel = entry["path"]
            identity = {"source": name, "path": rel, "sha256": entry.get("sha256")}
            if entry.get("unreadable"):
                quarantine.append({**identity, "reason": "unreadable at inventory time"})
                continue
            keep, reason = decide(name, rel)
            if not keep:
                quarantine.append({**identity, "reason": reason})
                continue
            kinds = entry.get("secret_kinds") or []
            if kinds and not redact:
                quarantine.append({**identity, "kinds": kinds, "reason": "credential-shaped text (pass --redact to"
                                                                          " copy a redacted derivative)"})
                continue
            if name == "temporal" and kinds:
                quarantine.append({**identity, "kinds": kinds, "reason": "non-text source with credential-shaped"
                                                                          " content cannot be redacted"})
                continue
            destination = os.path.join(target, TARGETS[name], rel) if name != "claude_sync" else \
                os.path.join(target, TARGETS[name], os.path.basename(rel))
            imports.append({**identity, "source_path": os.path.join(base, rel), "target": destination,
                            "redacted": bool(kinds), "kinds": kinds})
    return {"inventory": os.path.abspath(inventory_path), "inventory_digest": doc["seal"]["digest"],
            "target": target, "imports": imports, "quarantine": quarantine, "external": external,
            "import_count": len(imports), "quarantine_count": len(quarantine)}


def _payload(item):
    """The bytes to write for ``item`` (re-read now; a redacted derivative under --redact)."""
    sha, _, _ = mig.file_digest(item["source_path"])
    if sha != item["sha256"]:
        raise Refused(f"source drift since the brain inventory: {item['source']}/{item['path']}; re-run "
                      "brain-inventory")
    from mindos.core import files  # lazy: applies only

    data = files.read_bytes(item["source_path"], max_bytes=MAX_COPY_BYTES, what=f"{item['source']}/{item['path']}")
    if item["redacted"]:
        data = secrets.redact(data.decode("utf-8", errors="replace"))[0].encode("utf-8")
    return data


def brain_import(inventory_path, target, *, apply=False, redact=False, out=None, force=False):
    """``brain-import``: the plan, or under ``apply`` the verified copy.  Returns the report.
    ``target`` must be a new (absent or empty) directory outside the system's own trees; an
    existing ``out`` is refused unless ``force``."""
    result = plan(inventory_path, target, redact=redact)
    if apply and out:
        from mindos.core import files  # lazy: --out only

        files.check_out(out, force=force)  # before anything is copied
    result["applied"] = False
    public = [{k: v for k, v in item.items() if k != "source_path"} for item in result["imports"]]
    if not apply:
        result["imports"] = public
        return result
    # every check before any write: drift, and a different pre-existing destination
    staged = []
    for item in result["imports"]:
        data = _payload(item)
        digest = canonical.sha256_hex(data)
        state = "create"
        if os.path.lexists(item["target"]):
            if os.path.islink(item["target"]) or not os.path.isfile(item["target"]) or \
                    mig.file_digest(item["target"])[0] != digest:
                raise Refused(f"a different file already exists at {item['target']}; brain-import never replaces "
                              "local destination data")
            state = "verified"
        staged.append((item, data, digest, state))
    provenance, created = [], 0
    for item, data, digest, state in staged:
        if state == "create":
            atomic_write(item["target"], data)
            created += 1
        provenance.append({"source": item["source"], "path": item["path"], "source_sha256": item["sha256"],
                           "target": os.path.relpath(item["target"], result["target"]), "target_sha256": digest,
                           "redacted": item["redacted"], "state": state})
    tag = result["inventory_digest"][:16]
    provenance_path = os.path.join(result["target"], "provenance", f"brain-import-{tag}.json")
    report_path = os.path.abspath(out) if out else os.path.join(result["target"], "migrations",
                                                                  f"brain-import-{tag}.json")
    noop = created == 0 and os.path.exists(provenance_path) and os.path.exists(report_path)
    result.update(applied=True, created=created, verified=len(staged) - created, noop=noop,
                  provenance=provenance_path, report=report_path, imports=public)
    if not noop:
        artifacts.seal_write(provenance_path, PROVENANCE_FORMAT, {"inventory_digest": result["inventory_digest"],
                                                                  "artifacts": provenance})
        body = {key: result[key] for key in ("inventory", "inventory_digest", "target", "imports", "quarantine",
                                             "external", "created", "verified")}
        body["provenance"] = os.path.relpath(provenance_path, result["target"])
        _, head = documents.seal(report_path, FORMAT, body, force=bool(force) if out else None)
        result["report_digest"] = head["digest"]
    return result


def load_report(path, format=FORMAT):
    """Read and verify a sealed brain-import report (or, with ``format=PROVENANCE_FORMAT``, a
    provenance file) byte-exact; IntegrityError on any changed byte."""
    return documents.read(path, format, "brain-import document")
