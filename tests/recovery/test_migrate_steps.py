"""The plan's later steps through migrate-import --source-id: hermes-register, archive-copy and
memory-import -- dry run, apply, idempotence, refusals, secrets, symlinks, rollback, onboard."""

import json
import os

import pytest

import migratekit
from conftest import db_state, last_event
from mindos.errors import IntegrityError, InvalidInput, Refused
from mindos.recovery import artifacts
from mindos.migration import importer as mi
from mindos.migration import inventory as inv
from mindos.migration import onboard, rollback, steps


def _machine(tmp_path, **kw):
    """The old machine plus Hermes clutter that is not a definition, and a bank with memories."""
    root = migratekit.machine(str(tmp_path / "old"), **kw)
    hermes = os.path.join(root, "hermes")
    migratekit._write(os.path.join(hermes, "profiles", "default", "state.json"), '{"last_run": "yesterday"}')
    migratekit._write(os.path.join(hermes, "skills", "deploy", "cache", "index.txt"), "cached\n")
    migratekit._write(os.path.join(hermes, "cron", "output.log"), "ran j1\n")
    migratekit._write(os.path.join(hermes, "README.md"), "my hermes\n")
    migratekit._write(os.path.join(hermes, "hindsight", "bank.jsonl"), "\n".join([
        json.dumps({"content": "auth sessions expire after 30 days", "created_at": "2026-01-02T03:04:05Z"}),
        json.dumps({"text": "deploys go out on tuesdays", "created_at": "2026-01-03T03:04:05Z", "project": "Ops"}),
        "not json"]) + "\n")
    return root


def _inventory(conn, tmp_path, root):
    out = str(tmp_path / "inv.json")
    summary = inv.inventory(conn, root, out)
    assert not summary["fail_closed"]
    ids = {s["kind"]: s["source_id"] for s in summary["sources"]}
    return out, ids


def _tree(path):
    return migratekit.tree_state(str(path)) if os.path.exists(str(path)) else {}


def _home_files(home):
    """Everything in the home but the database files and the migrations folder."""
    return {k: v for k, v in _tree(home).items() if not k.startswith(("state.db", "migrations", "receipts"))}


def test_hermes_register_plans_copies_definitions_and_rolls_back(conn, tmp_path, home):
    root = _machine(tmp_path)
    out, ids = _inventory(conn, tmp_path, root)
    source_before, home_before, db_before = migratekit.tree_state(root), _home_files(home), db_state(conn)
    plan = mi.migrate_import(conn, out, ids["hermes_home"])
    assert "health" not in plan and plan["applied"] is False and plan["step"] == "hermes-register"
    assert plan["destination"] == f"hermes/registered/{ids['hermes_home']}" and plan["destination_state"] == "absent"
    assert plan["files"] == {"source": 7, "selected": 3, "quarantined": 4} and plan["would_copy"] == 3
    reasons = {q["path"]: q["reason"] for q in plan["quarantine"]}
    assert reasons == {"README.md": "not a Hermes definition (outside profiles/, skills/ and cron/)",
                       "cron/output.log": "non-definition cron artifact",
                       "profiles/default/state.json": "profile runtime state",
                       "skills/deploy/cache/index.txt": "non-definition skill support or cache file"}
    assert all(len(q["sha256"]) == 64 for q in plan["quarantine"])
    assert (plan["profiles"], plan["skills"], plan["cron_jobs"]) == (2, 1, 2)
    assert db_state(conn) == db_before and _home_files(home) == home_before  # the dry run writes nothing
    result_path = str(tmp_path / "hermes-result.json")
    result = mi.migrate_import(conn, out, ids["hermes_home"], apply=True, out=result_path)
    assert result["health"]["ok"] and result["applied"] and result["files_copied"] == 3
    dest = home / "hermes" / "registered" / ids["hermes_home"]
    for rel in ("profiles/default/config.yaml", "skills/deploy/SKILL.md", "cron/jobs.json"):
        copy = dest / "files" / rel
        assert copy.read_bytes() == open(os.path.join(root, "hermes", rel), "rb").read()
        assert copy.stat().st_mode & 0o777 == 0o600
    assert not (dest / "files" / "README.md").exists() and not (dest / "files" / "cron" / "output.log").exists()
    manifest = artifacts.read(str(dest / "manifest.json"), "autopilot-hermes-registration-v1")
    assert [f["path"] for f in manifest["files"]] == ["cron/jobs.json", "profiles/default/config.yaml",
                                                      "skills/deploy/SKILL.md"]
    assert len(manifest["quarantine"]) == 4 and manifest["cron_jobs"] == 2
    event = last_event(conn, "migration_imported")
    assert event["step"] == "hermes-register" and event["files"] == 3 and event["quarantined"] == 4
    assert migratekit.tree_state(root) == source_before  # never writes into the source
    # idempotent: an identical re-run deduplicates to nothing, no event
    events = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    again = mi.migrate_import(conn, out, ids["hermes_home"], apply=True)
    assert again["health"]["ok"] and again["deduplicated"] and again["destination_state"] == "in_place"
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == events
    # rollback: dry run, then exactly back, then a no-op
    rplan = rollback.rollback(conn, result_path)
    assert rplan["step"] == "hermes-register" and [f["state"] for f in rplan["files"]] == ["remove"] * 4
    assert dest.exists()
    done = rollback.rollback(conn, result_path, apply=True)
    assert done["applied"] and len(done["files_removed"]) == 4 and done["chain"]["ok"]
    assert last_event(conn, "migration_rollback_applied")["step"] == "hermes-register"
    assert _home_files(home) == home_before and not (home / "hermes").exists()
    assert rollback.rollback(conn, result_path, apply=True)["deduplicated"] is True


def test_archive_copy_is_a_read_only_checksummed_copy_behind_the_secret_guard(conn, tmp_path, home):
    root = _machine(tmp_path, with_secret=True)
    out, ids = _inventory(conn, tmp_path, root)
    vault = ids["obsidian_vault"]
    plan = mi.migrate_import(conn, out, vault)
    assert plan["step"] == "archive-copy" and plan["secret_kinds"] == {"aws_access_key": 1}
    assert plan["flagged_files"] == 1 and plan["would_copy"] == 2 and plan["quarantine"] == []
    before = _home_files(home)
    with pytest.raises(Refused, match="secret guard"):
        mi.migrate_import(conn, out, vault, apply=True)
    assert last_event(conn, "secret_blocked")["kinds"] == ["aws_access_key"]
    assert _home_files(home) == before  # refused: nothing copied
    with pytest.raises(InvalidInput):
        mi.migrate_import(conn, out, vault, apply=True, redact=True, allow_secret=True)
    result = mi.migrate_import(conn, out, vault, apply=True, redact=True)
    assert result["health"]["ok"] and result["secret_action"] == "redacted" and result["files_copied"] == 2
    dest = home / "archive" / "obsidian" / vault
    note = (dest / "files" / "daily" / "2026-08-20.md").read_text()
    assert migratekit.AWS not in note and "[REDACTED:aws_access_key]" in note
    assert (dest / "files" / ".obsidian" / "app.json").read_bytes() == b"{}"
    assert (dest / "files" / "daily" / "2026-08-20.md").stat().st_mode & 0o777 == 0o400  # a read-only archive
    manifest = artifacts.read(str(dest / "manifest.json"), "autopilot-vault-archive-v1")
    by_path = {f["path"]: f for f in manifest["files"]}
    assert by_path["daily/2026-08-20.md"]["redacted"] is True
    assert by_path["daily/2026-08-20.md"]["source_sha256"] != by_path["daily/2026-08-20.md"]["sha256"]
    assert migratekit.AWS not in (dest / "manifest.json").read_text()
    # the settled copy never blocks a later run without flags
    again = mi.migrate_import(conn, out, vault, apply=True)
    assert again["health"]["ok"] and again["deduplicated"]


def test_drift_and_a_different_destination_are_refused_before_any_write(conn, tmp_path, home):
    root = _machine(tmp_path)
    out, ids = _inventory(conn, tmp_path, root)
    migratekit._write(os.path.join(root, "vault", "daily", "2026-08-20.md"), "edited after the inventory\n")
    before = _home_files(home), db_state(conn)
    with pytest.raises(Refused, match="source changed since the inventory: vault/daily/2026-08-20.md"):
        mi.migrate_import(conn, out, ids["obsidian_vault"], apply=True)
    assert (_home_files(home), db_state(conn)) == before
    dest = home / "hermes" / "registered" / ids["hermes_home"]
    migratekit._write(str(dest / "files" / "cron" / "jobs.json"), "mine")
    plan = mi.migrate_import(conn, out, ids["hermes_home"])
    assert plan["destination_state"] == "different" and "refusing to replace" in plan["refusal_on_apply"]
    with pytest.raises(Refused, match="a different copy already exists"):
        mi.migrate_import(conn, out, ids["hermes_home"], apply=True)
    assert (dest / "files" / "cron" / "jobs.json").read_text() == "mine"


def test_symlinks_are_never_followed(conn, tmp_path, home):
    root = _machine(tmp_path)
    private = tmp_path / "private.md"
    private.write_text("private notes outside the vault\n")
    os.symlink(str(private), os.path.join(root, "vault", "linked.md"))
    os.symlink(str(tmp_path), os.path.join(root, "vault", "linked-dir"))
    out, ids = _inventory(conn, tmp_path, root)
    result = mi.migrate_import(conn, out, ids["obsidian_vault"], apply=True)
    copied = sorted(os.listdir(home / "archive" / "obsidian" / ids["obsidian_vault"] / "files"))
    assert result["health"]["ok"] and copied == [".obsidian", "daily"]
    # a symlinked area inside the home is never written through
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(str(elsewhere), str(home / "hermes"))
    with pytest.raises(Refused, match="symlink"):
        mi.migrate_import(conn, out, ids["hermes_home"], apply=True)
    assert os.listdir(elsewhere) == []


def test_a_home_inside_the_source_is_refused(tmp_path, monkeypatch):
    from mindos.store import db

    root = _machine(tmp_path)
    inner = os.path.join(root, "vault", "home")
    conn = db.connect(inner)
    try:
        summary = inv.inventory(conn, root, str(tmp_path / "inv.json"))
        vault = [s["source_id"] for s in summary["sources"] if s["kind"] == "obsidian_vault"][0]
        with pytest.raises(Refused, match="lies inside the source"):
            mi.migrate_import(conn, str(tmp_path / "inv.json"), vault)
    finally:
        conn.close()


def test_memory_import_step_is_journaled_and_undoable(conn, tmp_path):
    root = _machine(tmp_path)
    out, ids = _inventory(conn, tmp_path, root)
    bank = ids["hindsight_bank"]
    plan = mi.migrate_import(conn, out, bank)
    assert plan["step"] == "memory-import" and plan["bank"]["would_import"] == 2 and plan["bank"]["malformed"] == 1
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
    result_path = str(tmp_path / "bank-result.json")
    result = mi.migrate_import(conn, out, bank, apply=True, out=result_path)
    assert result["health"]["ok"] and result["inserted"] == {"memories": 2}
    assert last_event(conn, "migration_imported")["step"] == "memory-import"
    again = mi.migrate_import(conn, out, bank, apply=True)
    assert again["deduplicated"] and again["inserted"] == {"memories": 0}
    done = rollback.rollback(conn, result_path, apply=True)
    assert done["rows_to_remove"] == 2 and done["chain"]["ok"]
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0


def test_rollback_refuses_a_journal_naming_paths_outside_its_area(conn, tmp_path, home):
    root = _machine(tmp_path)
    out, ids = _inventory(conn, tmp_path, root)
    result_path = str(tmp_path / "r.json")
    mi.migrate_import(conn, out, ids["obsidian_vault"], apply=True, out=result_path)
    doc = artifacts.read(result_path, mi.RESULT_FORMAT)
    victim = tmp_path / "victim.txt"
    victim.write_text("x")
    for bad in ({"files": [{"path": "../victim.txt", "sha256": "0" * 64}]},
                {"files": [{"path": "state.db", "sha256": "0" * 64}]},
                {"directory": "hermes"}, {"directories": ["."]}):
        body = {k: v for k, v in doc.items() if k not in ("format", "seal")}
        body["journal"] = {**doc["journal"], **bad}
        forged = str(tmp_path / "forged.json")
        artifacts.seal_write(forged, mi.RESULT_FORMAT, body)  # validly sealed, but names foreign paths
        with pytest.raises(IntegrityError, match="result journal names"):
            rollback.rollback(conn, forged, apply=True)
    assert victim.exists() and (home / "state.db").exists()


def test_onboard_runs_every_plan_step_after_the_control_plane(conn, tmp_path, home):
    root = _machine(tmp_path)
    out, ids = _inventory(conn, tmp_path, root)
    before = _home_files(home)
    dry = onboard.onboard(conn, out)
    assert dry["ok"] and _home_files(home) == before
    planned = {s["stage"]: s for s in dry["stages"]}["import_plan"]["steps"]
    assert [s["action"] for s in planned] == ["memory-import", "hermes-register", "archive-copy"]
    report = onboard.onboard(conn, out, apply=True)
    assert report["ok"], report
    applied = {s["stage"]: s for s in report["stages"]}["import_apply"]["steps"]
    assert [(s["action"], s["deduplicated"]) for s in applied] == [("memory-import", False),
                                                                  ("hermes-register", False),
                                                                  ("archive-copy", False)]
    assert (home / "hermes" / "registered" / ids["hermes_home"] / "manifest.json").exists()
    assert (home / "archive" / "obsidian" / ids["obsidian_vault"] / "manifest.json").exists()
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 2
    again = onboard.onboard(conn, out, apply=True)
    assert again["ok"] and all(s["deduplicated"] and not s["journal_written"]
                             for s in {s["stage"]: s for s in again["stages"]}["import_apply"]["steps"])
    # every step is undoable from its journal under <home>/migrations/
    for step in reversed(applied):
        assert rollback.rollback(conn, step["journal"], apply=True)["applied"]
    assert not (home / "hermes").exists() and not (home / "archive").exists()
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
    with pytest.raises(Refused):
        onboard._select(inv.load(out), ids["obsidian_vault"])


def test_onboard_stops_at_a_failing_step_naming_it(conn, tmp_path):
    root = _machine(tmp_path, with_secret=True)
    out, ids = _inventory(conn, tmp_path, root)
    report = onboard.onboard(conn, out, apply=True)
    stage = {s["stage"]: s for s in report["stages"]}["import_apply"]
    assert not report["ok"] and report["failed_stage"] == "import_apply"
    assert stage["error"].startswith(f"archive-copy {ids['obsidian_vault']}: secret guard")
    redacted = onboard.onboard(conn, out, apply=True, redact=True)
    assert redacted["ok"]


def test_cli(cli, cli_json, tmp_path):
    root = _machine(tmp_path)
    out = str(tmp_path / "inv.json")
    summary = cli_json("ops", "migrate-inventory", "--root", root, "--out", out)
    vault = [s["source_id"] for s in summary["sources"] if s["kind"] == "obsidian_vault"][0]
    plan = cli_json("ops", "migrate-import", "--inventory", out, "--source-id", vault)
    assert plan["step"] == "archive-copy" and plan["applied"] is False
    result_path = str(tmp_path / "r.json")
    done = cli_json("ops", "migrate-import", "--inventory", out, "--source-id", vault, "--apply", "--out", result_path)
    assert done["files_copied"] == 2 and done["out"] == result_path
    undone = cli_json("ops", "migrate-rollback", result_path, "--apply")
    assert undone["applied"] and undone["step"] == "archive-copy"


def test_every_plan_step_is_executable(conn, tmp_path):
    root = _machine(tmp_path)
    out, _ = _inventory(conn, tmp_path, root)
    for item in inv.load(out)["plan"]:
        assert item["kind"] == "autopilot_sqlite" or steps.STEPS[item["kind"]] == item["action"]
        result = mi.migrate_import(conn, out, item["source_id"], apply=True)
        assert result["health"]["ok"] and result["applied"], item


def test_a_destination_whose_files_folder_became_a_symlink_is_different(conn, tmp_path, home):
    root = _machine(tmp_path)
    out, ids = _inventory(conn, tmp_path, root)
    vault = ids["obsidian_vault"]
    result = mi.migrate_import(conn, out, vault, apply=True)
    assert result["health"]["ok"] and result["files_copied"] == 2
    dest = home / "archive" / "obsidian" / vault
    moved = tmp_path / "moved-files"
    os.rename(str(dest / "files"), str(moved))
    os.symlink(str(moved), str(dest / "files"))  # the very same copies, reached through a symlink
    plan = mi.migrate_import(conn, out, vault)
    assert plan["destination_state"] == "different" and "refusing to replace" in plan["refusal_on_apply"]
