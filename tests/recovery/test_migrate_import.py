"""Migration import and rollback: dry run, the round trip, refusals, drift, dependents, secrets."""

import os
import sqlite3

import pytest

import migratekit
from conftest import db_state, last_event
from mindos.errors import IntegrityError, Refused
from mindos.memory import notes
from mindos.migration import importer as mi
from mindos.migration import inventory as inv
from mindos.migration import rollback
from mindos.store import db, ledger
from mindos.work import tasks

TABLES = ("tasks", "dependencies", "receipts", "notes", "handoffs")


def _setup(conn, tmp_path, **kw):
    root = migratekit.machine(str(tmp_path / "old"), **kw)
    out = str(tmp_path / "inv.json")
    summary = inv.inventory(conn, root, out)
    assert not summary["fail_closed"]
    source_id = [s["source_id"] for s in summary["sources"] if s["kind"] == "autopilot_sqlite"][0]
    return root, out, source_id


def _rows(conn, table):
    columns = [c for c in mi.column_names(conn, table) if c != "seq"]
    return sorted(tuple(r) for r in conn.execute(f"SELECT {', '.join(columns)} FROM {table}"))


def _receipt_files(home):
    folder = os.path.join(str(home), "receipts")
    return {name: open(os.path.join(folder, name), "rb").read() for name in sorted(os.listdir(folder))}


def test_round_trip_import_then_rollback(conn, tmp_path, home):
    root, out, source_id = _setup(conn, tmp_path)
    source_home = os.path.join(root, "autopilot")
    before = db_state(conn)
    plan = mi.migrate_import(conn, out, source_id)
    assert "health" not in plan and plan["applied"] is False and db_state(conn) == before  # dry run writes nothing
    assert plan["tables"]["tasks"]["would_insert"] == 5 and plan["sanitized_tasks"] == ["t2"]
    assert plan["audit"]["needs_relink_audit"] is False
    pre_tables = {t: _rows(conn, t) for t in TABLES}
    result_path = str(tmp_path / "result.json")
    result = mi.migrate_import(conn, out, source_id, apply=True, out=result_path)
    assert result["health"]["ok"] and result["inserted"]["tasks"] == 5
    src = sqlite3.connect(os.path.join(source_home, "state.db"))
    src.row_factory = sqlite3.Row
    for table in TABLES:
        if table == "tasks":
            continue
        assert _rows(conn, table) == _rows(src, table), table
    assert conn.execute("SELECT status, lease_owner FROM tasks WHERE id='t2'").fetchone()[:] == ("queued", "")
    # the source chain landed verbatim at ids 1..n, bookkeeping after it
    source_events = [tuple(r) for r in src.execute("SELECT id, hash FROM audit_events ORDER BY id")]
    assert [tuple(r) for r in conn.execute(f"SELECT id, hash FROM audit_events WHERE id <= {len(source_events)}"
                                           " ORDER BY id")] == source_events
    assert ledger.verify_chain(conn)["ok"]
    assert _receipt_files(home) == _receipt_files(source_home)  # byte equal
    src.close()
    # idempotent
    again = mi.migrate_import(conn, out, source_id, apply=True)
    assert again["deduplicated"] is True and again["health"]["ok"]
    # rollback: dry run first, then exactly back
    plan = rollback.rollback(conn, result_path)
    assert plan["applied"] is False and plan["rows_to_remove"] > 0 and plan["needs_force"] is False
    done = rollback.rollback(conn, result_path, apply=True)
    assert done["applied"] and done["chain"]["ok"] and last_event(conn, "migration_rollback_applied")["forced"] is False
    assert {t: _rows(conn, t) for t in TABLES} == pre_tables
    assert _receipt_files(home) == {}
    assert rollback.rollback(conn, result_path, apply=True)["deduplicated"] is True


def test_source_changed_after_inventory_is_refused_before_any_row_moves(conn, tmp_path):
    root, out, source_id = _setup(conn, tmp_path)
    other = db.connect(os.path.join(root, "autopilot"))
    tasks.create(other, project="Trove", title="late", task_id="late")
    other.close()
    before = db_state(conn)
    with pytest.raises(Refused, match="source changed since the inventory"):
        mi.migrate_import(conn, out, source_id, apply=True)
    assert db_state(conn) == before


def test_tampered_or_fail_closed_inventory_is_refused(conn, tmp_path):
    root, out, source_id = _setup(conn, tmp_path)
    text = open(out).read().replace('"integrity":"ok"', '"integrity":"ko"')
    open(out, "w").write(text)
    with pytest.raises(IntegrityError):
        mi.migrate_import(conn, out, source_id)
    migratekit.plain_sqlite(os.path.join(root, "clutter", "x.sqlite"))
    inv.inventory(conn, root, out, force=True)
    with pytest.raises(Refused, match="fail_closed"):
        mi.migrate_import(conn, out, source_id)


def test_fk_orphans_are_named_and_refused(conn, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    raw = sqlite3.connect(os.path.join(root, "autopilot", "state.db"))
    raw.execute("PRAGMA foreign_keys=OFF")
    raw.execute("INSERT INTO notes(task_id, kind, content, created_at) VALUES ('ghost', 'fact', 'x', '2026-01-01')")
    raw.commit()
    raw.close()
    summary = inv.inventory(conn, root, str(tmp_path / "inv.json"))
    source_id = summary["sources"][0]["source_id"]
    with pytest.raises(Refused, match="foreign-key orphans: notes rowid"):
        mi.migrate_import(conn, str(tmp_path / "inv.json"), source_id)


def test_lived_in_home_needs_relink_audit(conn, tmp_path):
    tasks.create(conn, project="Local", title="mine", task_id="mine")
    root, out, source_id = _setup(conn, tmp_path)
    plan = mi.migrate_import(conn, out, source_id)
    assert plan["audit"]["needs_relink_audit"] is True
    with pytest.raises(Refused, match="--relink-audit"):
        mi.migrate_import(conn, out, source_id, apply=True)
    result = mi.migrate_import(conn, out, source_id, apply=True, relink_audit=True, out=str(tmp_path / "r.json"))
    assert result["health"]["ok"] and result["health"]["chain_ok"] and result["events_merged"] > 0
    done = rollback.rollback(conn, str(tmp_path / "r.json"), apply=True)
    assert done["chain"]["ok"] and [r[0] for r in conn.execute("SELECT id FROM tasks")] == ["mine"]


def test_drift_and_local_dependents_refuse_unless_forced(conn, tmp_path):
    root, out, source_id = _setup(conn, tmp_path)
    result_path = str(tmp_path / "r.json")
    mi.migrate_import(conn, out, source_id, apply=True, out=result_path)
    with db.write(conn):
        conn.execute("UPDATE notes SET content = 'changed locally' WHERE task_id = 't0'")
    notes.add(conn, "t3", content="written after the import", source="codex")
    plan = rollback.rollback(conn, result_path)
    assert plan["needs_force"] and plan["drifted_total"] == 1 and plan["local_dependents_total"] == 1
    before = db_state(conn)
    with pytest.raises(Refused, match="--force"):
        rollback.rollback(conn, result_path, apply=True)
    assert db_state(conn)[0] == before[0]
    done = rollback.rollback(conn, result_path, apply=True, force=True)
    assert done["applied"] and last_event(conn, "migration_rollback_applied")["forced"] is True
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 0


def test_changed_receipt_file_is_withheld(conn, tmp_path, home):
    root, out, source_id = _setup(conn, tmp_path)
    result_path = str(tmp_path / "r.json")
    mi.migrate_import(conn, out, source_id, apply=True, out=result_path)
    name = os.listdir(os.path.join(str(home), "receipts"))[0]
    open(os.path.join(str(home), "receipts", name), "ab").write(b" ")
    done = rollback.rollback(conn, result_path, apply=True)
    assert done["files_withheld"] == [os.path.join("receipts", name)]
    assert os.path.exists(os.path.join(str(home), "receipts", name))


def test_secret_guard_on_import(conn, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    other = db.connect(os.path.join(root, "autopilot"))
    notes.add(other, "t1", content=f"key {migratekit.AWS}", source="hermes", allow_secret=True)
    other.close()
    summary = inv.inventory(conn, root, str(tmp_path / "inv.json"))
    source_id = summary["sources"][0]["source_id"]
    out = str(tmp_path / "inv.json")
    plan = mi.migrate_import(conn, out, source_id)
    assert plan["secret_kinds"] == {"aws_access_key": 1}
    before = [line for line in db_state(conn)[0] if "audit_events" not in line]
    with pytest.raises(Refused, match="secret guard"):
        mi.migrate_import(conn, out, source_id, apply=True)
    assert [line for line in db_state(conn)[0] if "audit_events" not in line] == before
    result = mi.migrate_import(conn, out, source_id, apply=True, redact=True)
    assert result["health"]["ok"] and result["secret_action"] == "redacted"
    texts = [r[0] for r in conn.execute("SELECT content FROM notes")]
    assert any("[REDACTED:aws_access_key]" in t for t in texts) and not any(migratekit.AWS in t for t in texts)


def test_result_tamper_and_dry_run_result_refused(conn, tmp_path):
    root, out, source_id = _setup(conn, tmp_path)
    mi.migrate_import(conn, out, source_id, out=str(tmp_path / "dry.json"))
    with pytest.raises(Refused, match="dry run"):
        rollback.rollback(conn, str(tmp_path / "dry.json"), apply=True)
    mi.migrate_import(conn, out, source_id, apply=True, out=str(tmp_path / "r.json"))
    data = bytearray(open(tmp_path / "r.json", "rb").read())
    data[len(data) // 2] ^= 1
    open(tmp_path / "bad.json", "wb").write(bytes(data))
    with pytest.raises(IntegrityError):
        rollback.rollback(conn, str(tmp_path / "bad.json"))


def test_cli(cli, cli_json, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    out = str(tmp_path / "inv.json")
    summary = cli_json("ops", "migrate-inventory", "--root", root, "--out", out)
    sid = summary["plan"][0]["source_id"]
    plan = cli_json("ops", "migrate-import", "--inventory", out, "--source-id", sid)
    assert plan["applied"] is False
    result = cli_json("ops", "migrate-import", "--inventory", out, "--source-id", sid, "--apply", "--out",
                      str(tmp_path / "r.json"))
    assert result["health"]["ok"]
    assert cli_json("ops", "migrate-rollback", str(tmp_path / "r.json"), "--apply")["applied"] is True
    rc, o, err = cli("ops", "migrate-import", "--inventory", out, "--source-id", "src-nope")
    assert rc == 1 and o == "" and len(err.strip().splitlines()) == 1


def test_a_legacy_source_without_facts_imports_cleanly(conn, tmp_path):
    from mindos.store import migrations
    old = tmp_path / "legacy" / "home"
    old.mkdir(parents=True)
    raw = sqlite3.connect(str(old / "state.db"), isolation_level=None)
    raw.execute("BEGIN")
    for number in range(4):  # the schema as of migration 4: no memories, no facts, no session cache
        for statement in db.split_statements(migrations.MIGRATIONS[number]()):
            raw.execute(statement)
    raw.execute("PRAGMA user_version=4")
    raw.execute("INSERT INTO tasks(id, project, title, created_at, updated_at) VALUES"
                " ('old1', 'P', 'legacy task', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')")
    raw.execute("COMMIT")
    raw.close()
    summary = inv.inventory(conn, str(tmp_path / "legacy"), str(tmp_path / "inv.json"))
    assert not summary["fail_closed"] and summary["sources"][0]["kind"] == "autopilot_sqlite"
    result = mi.migrate_import(conn, str(tmp_path / "inv.json"), summary["sources"][0]["source_id"], apply=True)
    assert result["health"]["ok"] and result["inserted"]["tasks"] == 1 and "facts" not in result["inserted"]
    assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0


def test_tables_are_carried_parents_first(conn):
    order = mi._plan_tables(conn, conn)
    assert order[:5] == ["tasks", "dependencies", "receipts", "notes", "handoffs"]
    assert not set(order) & set(mi.NOT_CARRIED)
    for index, table in enumerate(order):
        for parent in mi._parents(conn, table):
            if parent in order:
                assert order.index(parent) < index, (table, parent)


def test_an_import_reads_and_verifies_its_inventory_and_source_once(conn, tmp_path, monkeypatch):
    _, out, source_id = _setup(conn, tmp_path)
    calls = {"load": 0, "verify_source": 0}
    for name in calls:
        real = getattr(inv, name)

        def counted(*args, _real=real, _name=name):
            calls[_name] += 1
            return _real(*args)
        monkeypatch.setattr(inv, name, counted)
    mi.migrate_import(conn, out, source_id)
    assert calls == {"load": 1, "verify_source": 1}
    result = mi.migrate_import(conn, out, source_id, apply=True)
    assert result["health"]["ok"] and result["applied"] and calls == {"load": 2, "verify_source": 2}


def test_source_receipt_paths_outside_its_receipts_or_links_are_never_carried(conn, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    source = os.path.join(root, "autopilot")
    secret = tmp_path / "shadow"
    secret.write_text("root:SECRETHASH\n")
    legacy = sqlite3.connect(os.path.join(source, "state.db"))
    receipt_id, stored = legacy.execute("SELECT id, path FROM receipts").fetchone()
    legacy.execute("UPDATE receipts SET path = ?, file_hash = '' WHERE id = ?", (str(secret), receipt_id))
    legacy.commit()
    legacy.close()
    summary = inv.inventory(conn, root, str(tmp_path / "inv.json"))
    source_id = [s["source_id"] for s in summary["sources"] if s["kind"] == "autopilot_sqlite"][0]
    plan = mi.migrate_import(conn, str(tmp_path / "inv.json"), source_id)
    assert plan["receipt_files"] == 0 and plan["receipt_files_missing"] == [receipt_id]  # an absolute path elsewhere
    linked = os.path.join(source, stored)
    os.unlink(linked)
    os.symlink(secret, linked)  # and a planted link inside receipts/
    legacy = sqlite3.connect(os.path.join(source, "state.db"))
    legacy.execute("UPDATE receipts SET path = ? WHERE id = ?", (stored, receipt_id))
    legacy.commit()
    legacy.close()
    summary = inv.inventory(conn, root, str(tmp_path / "inv.json"), force=True)
    plan = mi.migrate_import(conn, str(tmp_path / "inv.json"), source_id)
    assert plan["receipt_files"] == 0 and plan["receipt_files_missing"] == [receipt_id]
def test_a_legacy_row_that_breaks_the_write_rules_refuses_the_whole_import(conn, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    legacy = sqlite3.connect(os.path.join(root, "autopilot", "state.db"))
    legacy.execute("UPDATE tasks SET status = 'bogus_status', title = 'two' || char(10) || 'lines' WHERE id = 't3'")
    legacy.commit()
    legacy.close()
    out = str(tmp_path / "inv.json")
    summary = inv.inventory(conn, root, out)
    source_id = [s["source_id"] for s in summary["sources"] if s["kind"] == "autopilot_sqlite"][0]
    state = db_state(conn)
    with pytest.raises(IntegrityError, match=r"migrate-import refused: table tasks row \d+ \(id 't3'\) field title"):
        mi.migrate_import(conn, out, source_id, apply=True)
    assert db_state(conn) == state
