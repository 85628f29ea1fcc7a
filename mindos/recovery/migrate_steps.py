"""The inventory plan's steps after the control plane: memory-import, hermes-register, archive-copy.

``migrate-import --inventory F --source-id S`` runs the plan step of the source it names.  An
``autopilot_sqlite`` source is the execution-truth import (:mod:`mindos.recovery.migrate_import`);
the other planned kinds run here, under the same contract -- the inventory's seal and
``fail_closed`` honoured, the source re-hashed against the inventory before anything is
written, a dry run unless ``--apply``, one audited ``migration_imported``, an identical re-run
deduplicating to nothing, and the sealed ``autopilot-migration-result-v1`` (``--out``) as the
rollback journal ``migrate-rollback`` consumes:

  kind            step             what lands in this home
  hindsight_bank  memory-import    the bank's memories, by memory-import's rules (malformed and
                                   credential-shaped lines counted and skipped, content-addressed
                                   ids); the journal holds every inserted row with its hash
  hermes_home     hermes-register  the Hermes home's definitions -- profile declarations, skill
                                   SKILL.md files, cron/jobs.json (brain-import's rules) -- under
                                   <home>/hermes/registered/<source id>/files/, with a sealed
                                   autopilot-hermes-registration-v1 manifest.json; every other
                                   file is quarantined by path, checksum and reason, never copied
  obsidian_vault  archive-copy     every file of the vault, read-only (0400), under
                                   <home>/archive/obsidian/<source id>/files/, with a sealed
                                   autopilot-vault-archive-v1 manifest.json

Design decisions
  * **The source is only read.**  Files open ``O_RDONLY | O_NOFOLLOW`` and only files the
    inventory names are read (its walk never followed a symlink); a source whose bytes
    changed since discovery is refused naming the files before anything is written, and a
    home inside the source directory is refused (the copy would land in the source).
  * **All or nothing.**  A copy is written into a private staging directory beside its
    destination and renamed into place in one step (:class:`mindos.core.atomic.StagedTree`)
    as the last act of the write transaction that audits it, just before its COMMIT: a kill
    leaves no destination and no event, or both; killed at the COMMIT itself, a complete
    destination whose ``migration_imported`` never committed, which the re-run records.
  * **Idempotent, never replacing.**  A destination whose sealed manifest verifies, names the
    inventory's source checksums and whose files match it is *in place*: the re-run
    deduplicates to nothing.  Any other content there is refused, never overwritten.
  * **Secret boundary**: the same guard as migrate-import over every copied text file --
    credential-shaped content refused (``secret_blocked``), ``--redact`` copies a
    ``[REDACTED:<kind>]`` derivative, ``--allow-secret`` copies it verbatim (audited).
  * **Undoable.**  The journal lists every file written with its sha256 and the directories
    the step created; rollback deletes files still matching, withholds changed ones and
    removes the directories left empty.
  * **After the control plane.**  A step's ``migration_imported`` is history of this home's
    own, so an execution-truth import run after it would need ``--relink-audit``: the plan's
    order (and ``onboard``) runs the autopilot_sqlite import first.
"""

import os

from mindos.core import canonical, clock, seal
from mindos.core.atomic import StagedTree
from mindos.errors import IntegrityError, InvalidInput, Refused
from mindos.store import guard as secret_guard
from mindos.memory import memories
from mindos.recovery import artifacts, brain_import, migrate_inventory
from mindos.store import db, ledger

STEPS = {  # kind -> the plan's step name (migrate_inventory.PLAN)
    kind: migrate_inventory.PLAN[kind][1] for kind in ("hindsight_bank", "hermes_home", "obsidian_vault")}
FILE_STEPS = {  # kind -> (destination folder under the home, manifest format, file mode)
    "hermes_home": (("hermes", "registered"), "autopilot-hermes-registration-v1", 0o600),
    "obsidian_vault": (("archive", "obsidian"), "autopilot-vault-archive-v1", 0o400),
}
MANIFEST = "manifest.json"
FILES = "files"
HERMES_DEFINITIONS = ("profiles", "skills", "cron")
NAMED_MAX = 20  # at most this many names in a refusal or a report (migrate_import uses it too)


def _event(conn, source_id, payload):
    ledger.append_event(conn, "migration", source_id, "migration_imported", payload)


def _common(conn, doc, inventory_path, src):
    return {"inventory": os.path.abspath(inventory_path), "inventory_digest": doc["seal"]["digest"],
            "source_id": src["source_id"], "source_path": src["path"], "source_root": doc["root"],
            "target_home": conn.home, "kind": src["kind"], "step": STEPS[src["kind"]], "applied": False}


def run(conn, doc, inventory_path, src, *, apply=False, redact=False, allow_secret=False):
    """The plan step of ``src`` (a hindsight_bank, hermes_home or obsidian_vault source of the
    verified inventory ``doc``): the dry-run plan, or under ``apply`` the step itself.

    Returns ``(result, journal, exit_code)``; ``journal`` is None for a dry run, exit 1 when
    the post-apply check found a problem."""
    if src["kind"] not in STEPS:
        raise Refused(f"source {src['source_id']} is {src['kind']}: no plan step imports it")
    if redact and allow_secret:
        raise InvalidInput("pass at most one of --redact and --allow-secret")
    migrate_inventory.verify_source(doc, src)
    if src["kind"] == "hindsight_bank":
        return _hindsight(conn, doc, inventory_path, src, apply=apply)
    return _copy(conn, doc, inventory_path, src, apply=apply, redact=redact, allow_secret=allow_secret)


# ---------------------------------------------------------------------------------------
# memory-import (hindsight_bank)


def _hindsight(conn, doc, inventory_path, src, *, apply):
    path = os.path.join(doc["root"], src["path"])
    if os.path.islink(path):
        raise Refused(f"{src['path']} is a symlink; symlinks are never followed")
    result = _common(conn, doc, inventory_path, src)
    if not apply:
        bank = memories.import_bank(conn, path)
        result.update(bank={k: bank[k] for k in ("lines", "malformed", "secret_blocked", "already_present",
                                                 "would_import")},
                      deduplicated=bank["would_import"] == 0)
        return result, None, 0
    columns = [row[1] for row in conn.execute("PRAGMA table_info(memories)") if row[1] != "seq"]
    select = ", ".join(f'"{c}"' for c in columns)
    with db.write(conn):  # memory-import's own transaction joins this one: rows, journal and event commit together
        bank = memories.import_bank(conn, path, apply=True)
        ids = canonical.canonical_json(bank["ids"])
        inserted = {row["id"]: canonical.digest(dict(row)) for row in conn.execute(
            f"SELECT {select} FROM memories WHERE id IN (SELECT value FROM json_each(?))", (ids,))}
        rows = [{"key": {"id": memory_id}, "hash": inserted[memory_id]} for memory_id in bank["ids"]]
        if rows:
            _event(conn, src["source_id"], {"step": "memory-import", "kind": src["kind"],
                                            "inventory_digest": result["inventory_digest"],
                                            "inserted": {"memories": len(rows)}})
    present = conn.execute("SELECT count(*) FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                           (ids,)).fetchone()[0]
    result.update(applied=True, bank={k: bank[k] for k in ("lines", "malformed", "secret_blocked",
                                                          "already_present", "imported")},
                  inserted={"memories": len(rows)}, deduplicated=not rows,
                  health={"ok": present == len(rows), "memories_present": present,
                          "problems": [] if present == len(rows) else ["imported memories are missing"]})
    journal = {"rows": {"memories": rows}, "columns": {"memories": columns}, "events": [], "files": []}
    return result, journal, 0 if result["health"]["ok"] else 1


# ---------------------------------------------------------------------------------------
# hermes-register (hermes_home) and archive-copy (obsidian_vault)


def _select(kind, rel):
    """``(copy?, reason)`` for a file of a Hermes home or vault (``rel``: within the source)."""
    if kind == "obsidian_vault":
        return True, ""
    parts = rel.split("/")
    if parts[0] not in HERMES_DEFINITIONS or len(parts) < 2:
        return False, "not a Hermes definition (outside profiles/, skills/ and cron/)"
    return brain_import.decide(parts[0], "/".join(parts[1:]))


def _read(path):
    """The bytes of a regular file (no symlink, FIFO or device; OSError otherwise)."""
    return migrate_inventory._read_bytes(path)


def _walk_files(folder):
    """``{relative posix path: absolute path}`` of every entry under ``folder`` that is a
    regular file; a symlink or special entry anywhere makes it ``None`` (never followed)."""
    from mindos.core import files  # lazy: the walk only

    found, counts = files.walk(folder)
    if counts["symlinks"] or counts["special"] or counts["too_deep"] or counts["unreadable_dirs"]:
        return None
    return dict(found)


def _destination_state(conn, dest, fmt, source_id, selected):
    """``("absent" | "in_place" | "in_place_unrecorded" | "different", manifest, manifest sha)``."""
    if not os.path.lexists(dest):
        return "absent", None, None
    if os.path.islink(dest) or not os.path.isdir(dest):
        return "different", None, None
    names = set(os.listdir(dest))
    if MANIFEST not in names or names - {FILES, MANIFEST}:
        return "different", None, None
    try:
        manifest = artifacts.read(os.path.join(dest, MANIFEST), fmt)
        manifest_sha = migrate_inventory.file_digest(os.path.join(dest, MANIFEST))[0]
    except (IntegrityError, OSError):
        return "different", None, None
    sources = [(f.get("path"), f.get("source_sha256")) for f in manifest.get("files", [])]
    folder = os.path.join(dest, FILES)
    # a symlinked files/ is never walked (os.walk would follow its top)
    copies = None if os.path.islink(folder) else _walk_files(folder) if os.path.lexists(folder) else {}
    if manifest.get("source_id") != source_id or sources != [(s["path"], s["sha256"]) for s in selected] \
            or copies is None or sorted(copies) != sorted(f["path"] for f in manifest["files"]):
        return "different", None, None
    for entry in manifest["files"]:
        try:
            if migrate_inventory.file_digest(copies[entry["path"]])[0] != entry.get("sha256"):
                return "different", None, None
        except OSError:
            return "different", None, None
    recorded = conn.execute(
        "SELECT 1 FROM audit_events WHERE entity_type = 'migration' AND entity_id = ? AND action = 'migration_imported'"
        " AND json_extract(payload_json, '$.manifest_sha256') = ?", (source_id, manifest_sha)).fetchone()
    return ("in_place" if recorded else "in_place_unrecorded"), manifest, manifest_sha


def _plan_copy(conn, doc, src):
    """What a copy step would do: the selected files, the quarantine, the secret findings and
    the destination's state.  Reads the source only."""
    kind = src["kind"]
    folder, fmt, mode = FILE_STEPS[kind]
    base = os.path.normpath(os.path.join(doc["root"], src["path"]))
    real_base, real_dest = os.path.realpath(base), os.path.join(os.path.realpath(conn.home), *folder, src["source_id"])
    if os.path.commonpath([real_base, real_dest]) in (real_base, real_dest):
        raise Refused(f"this home's {'/'.join(folder)}/ lies inside the source {src['path']} (or holds it); a copy "
                      "would write into the source")
    selected, quarantine = [], []
    for entry in src["files"]:
        rel = os.path.relpath(os.path.join(doc["root"], entry["path"]), base).replace(os.sep, "/")
        keep, reason = _select(kind, rel)
        if keep:
            selected.append({"path": rel, "sha256": entry["sha256"], "bytes": entry["bytes"],
                             "source": os.path.join(doc["root"], entry["path"])})
        else:
            quarantine.append({"path": rel, "sha256": entry["sha256"], "reason": reason})
    texts = [item["source"] for item in selected if item["source"].endswith(migrate_inventory.TEXT_SUFFIXES)
             and item["bytes"] <= migrate_inventory.MAX_SCAN_BYTES]
    scanned = migrate_inventory.scan_texts(sorted(texts))
    findings, flagged = {}, []
    for index, item in enumerate(selected):
        kinds = scanned.get(item["source"]) or []
        for found in kinds:
            findings[found] = findings.get(found, 0) + 1
        if kinds:
            flagged.append(index)
    dest_rel = "/".join(folder + (src["source_id"],))
    dest = os.path.join(conn.home, *folder, src["source_id"])
    state, manifest, manifest_sha = _destination_state(conn, dest, fmt, src["source_id"], selected)
    return {"selected": selected, "quarantine": quarantine, "findings": dict(sorted(findings.items())),
            "flagged": flagged, "dest": dest, "dest_rel": dest_rel, "format": fmt, "mode": mode, "state": state,
            "manifest": manifest, "manifest_sha": manifest_sha}


def _counts(src):
    if src["kind"] == "hermes_home":
        return {key: src.get(key, 0) for key in ("profiles", "skills", "cron_jobs")}
    return {"notes": src.get("notes", 0)}


def _check_copy(dest, manifest):
    """The post-apply check: every file of the destination matches its sealed manifest."""
    problems = []
    for entry in manifest["files"]:
        try:
            if migrate_inventory.file_digest(os.path.join(dest, FILES, *entry["path"].split("/")))[0] != entry["sha256"]:
                problems.append(f"{entry['path']} does not match its manifest sha256")
        except OSError:
            problems.append(f"{entry['path']} is missing")
    return {"ok": not problems, "files_verified": len(manifest["files"]) - len(problems),
            "problems": problems[:NAMED_MAX]}


def _journal(conn, dest_rel, manifest, manifest_sha, directories):
    files = [{"path": f"{dest_rel}/{FILES}/{entry['path']}", "sha256": entry["sha256"]} for entry in manifest["files"]]
    files.append({"path": f"{dest_rel}/{MANIFEST}", "sha256": manifest_sha})
    return {"rows": {}, "events": [], "files": files, "directory": dest_rel,
            "directories": [os.path.relpath(d, conn.home).replace(os.sep, "/") for d in directories]}


def _copy(conn, doc, inventory_path, src, *, apply, redact, allow_secret):
    plan = _plan_copy(conn, doc, src)
    result = _common(conn, doc, inventory_path, src)
    result.update(destination=plan["dest_rel"], destination_state=plan["state"], **_counts(src),
                  files={"source": len(src["files"]), "selected": len(plan["selected"]),
                         "quarantined": len(plan["quarantine"])},
                  quarantine=plan["quarantine"], secret_kinds=plan["findings"], flagged_files=len(plan["flagged"]),
                  deduplicated=plan["state"] == "in_place")
    different = (f"a different copy already exists at {plan['dest_rel']}; refusing to replace local data "
                 "(move it away, then re-run)")
    if not apply:
        result["would_copy"] = len(plan["selected"]) if plan["state"] == "absent" else 0
        if plan["state"] == "different":
            result["refusal_on_apply"] = different
        return result, None, 0
    if plan["state"] == "different":
        raise Refused(different)
    if plan["state"] == "in_place":
        result.update(applied=True, files_copied=0, health=_check_copy(plan["dest"], plan["manifest"]))
        return result, {"rows": {}, "events": [], "files": [], "directory": plan["dest_rel"], "directories": []}, 0
    payload = {"step": result["step"], "kind": src["kind"], "inventory_digest": result["inventory_digest"],
               "destination": plan["dest_rel"], "quarantined": len(plan["quarantine"])}
    published = []
    try:
        with db.write(conn):
            if plan["state"] == "in_place_unrecorded":  # a killed apply renamed it into place: record it
                manifest, manifest_sha, directories = plan["manifest"], plan["manifest_sha"], [plan["dest"]]
                result["recorded_in_place"] = True
                copied = 0
                _event(conn, src["source_id"], {**payload, **_tally(manifest, manifest_sha)})
            else:
                cleaned = {}
                if plan["flagged"]:
                    texts = [_read(plan["selected"][i]["source"]).decode("utf-8", errors="replace")
                             for i in plan["flagged"]]
                    fields, outcome = secret_guard.guard(conn, "migration", src["source_id"], {"files": texts},
                                                         redact=redact, allow_secret=allow_secret)
                    if outcome:
                        result["secret_action"] = outcome["secret_action"]
                        if outcome["secret_action"] == "redacted":
                            cleaned = dict(zip(plan["flagged"], fields["files"]))
                stage = StagedTree(plan["dest"], confined=conn.home)
                try:
                    manifest, manifest_sha = _stage_files(stage, doc, src, plan, cleaned)
                    _event(conn, src["source_id"], {**payload, **_tally(manifest, manifest_sha)})
                    # the rename is the transaction's last step before COMMIT: a kill leaves no copy
                    # and no event, or (killed at the COMMIT itself) a complete copy the re-run records
                    directories = published = stage.publish()
                except BaseException:
                    stage.discard()
                    raise
                copied = len(manifest["files"])
    except BaseException:
        if published:  # the COMMIT failed: take the copy back out
            StagedTree.remove(published)
        raise
    result.update(applied=True, files_copied=copied, deduplicated=False,
                  health=_check_copy(plan["dest"], manifest))
    journal = _journal(conn, plan["dest_rel"], manifest, manifest_sha, directories)
    return result, journal, 0 if result["health"]["ok"] else 1


def _tally(manifest, manifest_sha):
    return {"files": len(manifest["files"]), "manifest_sha256": manifest_sha,
            "redacted": sum(1 for f in manifest["files"] if f.get("redacted"))}


def _stage_files(stage, doc, src, plan, cleaned):
    """Write the destination's files into ``stage``, each re-read and re-checked now, then the
    sealed manifest over them; return ``(manifest, manifest sha256)``."""
    entries = []
    for index, item in enumerate(plan["selected"]):
        data = _read(item["source"])
        if canonical.sha256_hex(data) != item["sha256"]:
            raise Refused(f"source changed since the inventory: {os.path.join(src['path'], item['path'])}; "
                          "re-run migrate-inventory and import against the new manifest")
        entry = {"path": item["path"], "source_sha256": item["sha256"], "bytes": len(data)}
        if index in cleaned:
            data = cleaned[index].encode("utf-8")
            entry.update(bytes=len(data), redacted=True)
        entry["sha256"] = stage.write(f"{FILES}/{item['path']}", data, plan["mode"])
        entries.append(entry)
    body = {"step": STEPS[src["kind"]], "kind": src["kind"], "source_id": src["source_id"], "source_path": src["path"],
            "source_root": doc["root"], "inventory_digest": doc["seal"]["digest"], "files": entries,
            "quarantine": plan["quarantine"], **_counts(src), "created_at": clock.now_iso()}
    manifest = artifacts.seal_doc(plan["format"], body)
    # paths, checksums, counts and reasons: never content
    return manifest, stage.write(MANIFEST, seal.dumps(manifest), 0o600)
