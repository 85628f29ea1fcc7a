"""Migration inventory: read-only discovery, classification, fail-closed, determinism, the seal."""

import json
import os

import pytest

import migratekit
from conftest import last_event
from mindos.core import clock, seal
from mindos.errors import IntegrityError, NotFound, Refused
from mindos.migration import inventory as inv


def _run(conn, root, out):
    summary = inv.inventory(conn, str(root), str(out))
    return summary, (1 if summary["fail_closed"] else 0), json.loads(open(out).read())  # the exit code ops.py gives


def test_classifies_every_source_kind_read_only(conn, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    before = migratekit.tree_state(root)
    summary, code, doc = _run(conn, root, tmp_path / "inv.json")
    assert migratekit.tree_state(root) == before  # nothing scanned is ever mutated (no -wal/-shm either)
    assert code == 0 and doc["fail_closed"] is False and doc["blocked"] == []
    kinds = [s["kind"] for s in doc["sources"]]
    assert kinds == ["autopilot_sqlite", "hindsight_bank", "hermes_home", "obsidian_vault"]
    ap = doc["sources"][0]
    assert ap["integrity"] == "ok" and ap["row_counts"]["tasks"] == 5 and ap["row_counts"]["receipts"] == 1
    assert ap["receipt_files"] == 1 and ap["file_count"] == 2 and len(ap["sha256"]) == 64
    bank = doc["sources"][1]
    assert bank["lines"] == 2 and bank["malformed_lines"] == 1
    hermes = doc["sources"][2]
    assert (hermes["profiles"], hermes["skills"], hermes["cron_jobs"]) == (1, 1, 2)
    assert all(f["path"].startswith("hermes/") and "bank.jsonl" not in f["path"] for f in hermes["files"])
    assert doc["sources"][3]["notes"] == 1
    assert [step["action"] for step in doc["plan"]] == ["migrate-import", "memory-import", "hermes-register",
                                                        "archive-copy"]
    assert doc["unclassified_files"] == 1
    assert os.stat(tmp_path / "inv.json").st_mode & 0o777 == 0o600
    event = last_event(conn, "migration_inventory_sealed")
    assert event["digest"] == doc["seal"]["digest"] and event["fail_closed"] is False
    assert inv.check(str(tmp_path / "inv.json"))["ok"] is True


def test_secret_findings_are_kinds_only(conn, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"), with_secret=True)
    _, _, doc = _run(conn, root, tmp_path / "inv.json")
    vault = [s for s in doc["sources"] if s["kind"] == "obsidian_vault"][0]
    assert vault["secret_findings"] == {"aws_access_key": 1}
    assert migratekit.AWS not in open(tmp_path / "inv.json").read()


def test_deterministic_bytes_modulo_created_at(conn, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    one, _, first = _run(conn, root, tmp_path / "a.json")
    clock.advance(hours=5)
    two, _, second = _run(conn, root, tmp_path / "b.json")
    assert first["created_at"] != second["created_at"]
    assert first["seal"] != second["seal"]  # created_at is inside the seal
    assert one["content_digest"] == two["content_digest"] == inv.check(str(tmp_path / "b.json"))["content_digest"]
    for doc in (first, second):
        doc.pop("created_at"), doc.pop("seal")
    assert seal.dumps(first) == seal.dumps(second)  # everything else byte-identical


@pytest.mark.parametrize("damage", ["corrupt", "foreign", "jobs"])
def test_fail_closed_names_every_blocked_source(conn, tmp_path, damage):
    root = migratekit.machine(str(tmp_path / "old"))
    if damage == "corrupt":
        path = os.path.join(root, "autopilot", "state.db")
        data = bytearray(open(path, "rb").read())
        data[4096:4096 + 200] = b"\xff" * 200  # a torn page after the header
        open(path, "wb").write(bytes(data))
    elif damage == "foreign":
        migratekit.plain_sqlite(os.path.join(root, "clutter", "mystery.sqlite"))
    else:
        open(os.path.join(root, "hermes", "cron", "jobs.json"), "w").write("{garbage")
    summary, code, doc = _run(conn, root, tmp_path / "inv.json")
    assert code == 1 and doc["fail_closed"] is True and summary["blocked"]
    blocked_ids = {b["source_id"] for b in doc["blocked"]}
    assert blocked_ids and not blocked_ids & {step["source_id"] for step in doc["plan"]}
    assert last_event(conn, "migration_inventory_sealed")["fail_closed"] is True


def test_symlinks_are_never_followed(conn, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    elsewhere = tmp_path / "private"
    migratekit.autopilot_home(str(elsewhere))
    os.symlink(str(elsewhere), os.path.join(root, "linked-home"))
    os.symlink(os.path.join(str(elsewhere), "state.db"), os.path.join(root, "clutter", "state.db"))
    _, _, doc = _run(conn, root, tmp_path / "inv.json")
    assert doc["caps"]["symlinks_skipped"] == 2
    assert [s["kind"] for s in doc["sources"]].count("autopilot_sqlite") == 1


def test_caps_are_reported(conn, tmp_path, monkeypatch):
    root = migratekit.machine(str(tmp_path / "old"))
    monkeypatch.setattr(inv, "MAX_FILES", 3)
    monkeypatch.setattr(inv, "MAX_SCAN_BYTES", 4)
    _, _, doc = _run(conn, root, tmp_path / "inv.json")
    assert doc["caps"]["files_over_cap"] > 0 and doc["caps"]["max_files"] == 3
    assert doc["files_seen"] == 3 and doc["caps"]["files_not_scanned_over_size"] > 0


def test_any_single_byte_change_is_refused(conn, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    out = tmp_path / "inv.json"
    _run(conn, root, out)
    data = open(out, "rb").read()
    start = data.index(b'"sources"')
    for offset in range(start, len(data) - 2, max(1, (len(data) - start) // 60)):
        changed = bytearray(data)
        changed[offset] = (changed[offset] + 1) % 256
        if changed == data:
            continue
        open(tmp_path / "bad.json", "wb").write(bytes(changed))
        with pytest.raises(IntegrityError):
            inv.check(str(tmp_path / "bad.json"))
    with pytest.raises(NotFound):
        inv.check(str(tmp_path / "missing.json"))


def test_cli(cli, cli_json, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    out = str(tmp_path / "inv.json")
    summary = cli_json("ops", "migrate-inventory", "--root", root, "--out", out)
    assert summary["sources_total"] == 4 and summary["fail_closed"] is False
    assert cli_json("ops", "migrate-inventory-check", out)["ok"] is True
    open(out, "a").write(" ")
    doc = open(out).read().replace('"hermes_home"', '"hermes_homf"')
    open(out, "w").write(doc)
    rc, outp, err = cli("ops", "migrate-inventory-check", out)
    assert rc == 1 and outp == "" and len(err.strip().splitlines()) == 1 and "seal" in err
    rc, outp, err = cli("ops", "migrate-inventory", "--root", str(tmp_path / "nope"), "--out", out)
    assert rc == 1 and outp == ""


def test_a_database_with_a_live_log_is_read_from_a_private_copy(conn, tmp_path):
    from mindos.store import db
    from mindos.work import tasks
    root = migratekit.machine(str(tmp_path / "old"))
    live = db.connect(os.path.join(root, "autopilot"))
    try:
        live.execute("PRAGMA wal_autocheckpoint=0")
        tasks.create(live, project="Trove", title="only in the log", task_id="t-log")
        assert os.path.exists(os.path.join(root, "autopilot", "state.db-wal"))
        before = migratekit.tree_state(root)
        _, code, doc = _run(conn, root, tmp_path / "inv.json")
        assert migratekit.tree_state(root) == before
        ap = doc["sources"][0]
        assert code == 0 and ap["row_counts"]["tasks"] == 6
        # the log is read through, never recorded: the database's identity is its content
        main = [f for f in ap["files"] if f["path"] == os.path.join("autopilot", "state.db")]
        assert not any(f["path"].endswith(("-wal", "-shm")) for f in ap["files"])
        assert ap["runtime_files_skipped"] == 3 and len(main[0]["content_sha256"]) == 64
        live.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the live home checkpoints its log...
        inv.verify_source(doc, ap)  # ...and the source has not changed
        tasks.create(live, project="Trove", title="new work after the inventory", task_id="t-new")
        with pytest.raises(Refused, match="source changed since the inventory: autopilot/state.db$|autopilot/state.db;"):
            inv.verify_source(doc, ap)
    finally:
        live.close()


# ---------------------------------------------------------------------------------------
# A corrupted database fails closed (spec: "any corrupted database (integrity_check != ok,
# unreadable bytes) ... marks the inventory fail_closed and exits non-zero, naming every
# blocked source")


@pytest.mark.parametrize("damage", ["garbage", "header", "empty", "sqlite-suffix"])
def test_a_corrupted_database_fails_closed_naming_it(conn, cli, tmp_path, damage):
    root = migratekit.machine(str(tmp_path / "old"))
    path = os.path.join(root, "autopilot", "state.db")
    if damage == "garbage":
        open(path, "wb").write(b"this was a database once\n" * 400)
    elif damage == "header":
        data = bytearray(open(path, "rb").read())
        data[0:16] = b"\0" * 16  # the SQLite header itself is gone
        open(path, "wb").write(bytes(data))
    elif damage == "empty":
        open(path, "wb").close()
    else:
        path = os.path.join(root, "clutter", "old.sqlite")
        open(path, "wb").write(b"\xff" * 4096)
    rel = os.path.relpath(path, root)
    out = str(tmp_path / "inv.json")
    rc, stdout, err = cli("ops", "migrate-inventory", "--root", root, "--out", out)
    assert rc == 1
    summary = json.loads(stdout)
    assert summary["fail_closed"] is True
    assert rel in [b["path"] for b in summary["blocked"]]
    doc = json.loads(open(out).read())
    assert doc["fail_closed"] is True and rel in [b["path"] for b in doc["blocked"]]
    assert not any(f["path"] == rel for s in doc["sources"] if not s.get("blocked") for f in s["files"])
    assert all(step["path"] != rel for step in doc["plan"])
    assert last_event(conn, "migration_inventory_sealed")["fail_closed"] is True


def test_a_non_database_with_a_db_like_name_elsewhere_is_not_guessed_at(conn, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    open(os.path.join(root, "clutter", "notes.db.txt"), "w").write("plain text")
    _, code, doc = _run(conn, root, tmp_path / "inv.json")
    assert code == 0 and doc["fail_closed"] is False


# ---------------------------------------------------------------------------------------
# A live home: inventoried through a consistent read, never its -wal/-shm files


def test_inventorying_this_very_home_then_importing_it_elsewhere(conn, home, tmp_path):
    from mindos.migration import onboard
    from mindos.store import db
    from mindos.work import tasks

    tasks.create(conn, project="Trove", title="live work", task_id="t-live")
    assert os.path.exists(os.path.join(str(home), "state.db-wal"))  # this connection keeps the log live
    out = str(tmp_path / "inv.json")
    summary = inv.inventory(conn, str(home), out)  # audits itself into the very source it read
    assert summary["fail_closed"] is False
    doc = inv.load(out)
    src = [s for s in doc["sources"] if s["kind"] == "autopilot_sqlite"][0]
    assert [f["path"] for f in src["files"]] == ["state.db"]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    target = db.connect(str(tmp_path / "new-home"))
    try:
        report = onboard.onboard(target, out)
        assert report["ok"], report
        report = onboard.onboard(target, out, apply=True)
        assert report["ok"], report
        assert target.execute("SELECT count(*) FROM tasks WHERE id = 't-live'").fetchone()[0] == 1
    finally:
        target.close()


def test_a_copy_that_raced_a_writer_is_taken_again_and_a_busy_one_fails_closed(conn, tmp_path, monkeypatch):
    from mindos.store import db
    from mindos.work import tasks
    root = migratekit.machine(str(tmp_path / "old"))
    live = db.connect(os.path.join(root, "autopilot"))
    try:
        live.execute("PRAGMA wal_autocheckpoint=0")
        tasks.create(live, project="Trove", title="only in the log", task_id="t-log")
        real, calls = inv._stamp, {"n": 0}

        def moving_once(path):  # the log grows between the first stamp and the copy's end, once
            calls["n"] += 1
            stamp = real(path)
            return (stamp[0] + 1,) + stamp[1:] if calls["n"] == 3 and stamp else stamp

        monkeypatch.setattr(inv, "_stamp", moving_once)
        _, code, doc = _run(conn, root, tmp_path / "a.json")
        assert code == 0 and doc["sources"][0]["row_counts"]["tasks"] == 6 and calls["n"] > 4

        def always_moving(path):
            calls["n"] += 1
            stamp = real(path)
            return stamp and (calls["n"],) + stamp[1:]

        monkeypatch.setattr(inv, "_stamp", always_moving)
        summary, code, doc = _run(conn, root, tmp_path / "b.json")
        assert code == 1 and doc["fail_closed"] is True
        assert "kept changing" in summary["blocked"][0]["reason"]
    finally:
        live.close()
