"""Snapshots: exact round trips, verify-before-touch, refusal of non-empty targets and of any changed byte."""

import json
import os
import random

import pytest

from conftest import db_state, overwrite
from recovery_helpers import populate, table_rows
from mindos.core import clock, seal
from mindos.errors import IntegrityError, Refused
from mindos.memory import notes
from mindos.recovery import artifacts, doctor, snapshot
from mindos.store import db, fts, ledger
from mindos.work import leases, tasks


def _forge(path, mutate):
    """Re-seal a modified snapshot validly (what an attacker who knows the format can do)."""
    doc = json.load(open(path))
    doc.pop("seal")
    fmt = doc.pop("format")
    mutate(doc)
    artifacts.write(path, artifacts.seal_doc(fmt, doc))


def test_round_trip_into_a_fresh_home_is_exact(conn, home, tmp_path, cli):
    populate(conn)
    rc, out, err = cli("ops", "snapshot")
    made = json.loads(out)
    assert (rc, err) == (0, "") and made["counts"]["tasks"] == 4 and made["receipt_files"] == 1
    assert os.stat(made["path"]).st_mode & 0o777 == 0o600
    fresh_home = str(tmp_path / "fresh")
    fresh = db.connect(fresh_home)
    try:
        with pytest.raises(Refused, match="which this home does not trust"):
            snapshot.restore(fresh, made["path"])
        os.makedirs(os.path.join(fresh_home, "trusted-keys"))
        with open(os.path.join(fresh_home, "trusted-keys", "old-machine.key"), "w") as handle:
            handle.write(open(os.path.join(str(home), "seal.key")).read())
        report = snapshot.restore(fresh, made["path"])
        assert report["trust"] == "signed_by_trusted_key"
        assert report["restored"] and report["audit"]["ok"] and report["receipt_files_written"] == 1
        assert table_rows(fresh) == table_rows(conn)
        assert [tuple(r) for r in fresh.execute("SELECT * FROM audit_events ORDER BY id")] == \
               [tuple(r) for r in conn.execute("SELECT * FROM audit_events ORDER BY id")]
        assert all(fts.drift(fresh, name)["ok"] for name in fts.INDEXES)
        assert [n["id"] for n in notes.search(fresh, "pgbouncer transaction", rank=True)] == \
               [n["id"] for n in notes.search(conn, "pgbouncer transaction", rank=True)]
        assert doctor.run(fresh_home)["ok"] is True
    finally:
        fresh.close()


def test_restore_over_a_changed_home_needs_force_and_is_exact(conn, home, cli):
    populate(conn)
    made = snapshot.create(conn)
    before = table_rows(conn)
    tasks.create(conn, project="P", title="after the snapshot", task_id="t9")
    leases.release(conn, "t2", "claude")
    state = db_state(conn)
    rc, out, err = cli("ops", "snapshot-restore", made["path"])
    assert rc == 1 and out == "" and "not empty" in err and "--force" in err and err.count("\n") == 1
    assert db_state(conn) == state
    rc, out, err = cli("ops", "snapshot-restore", made["path"], "--force")
    assert (rc, err) == (0, "")
    assert table_rows(conn) == before
    lease = conn.execute("SELECT lease_owner, lease_expires_at, lease_epoch FROM tasks WHERE id = 't2'").fetchone()
    assert tuple(lease) == ("claude", "2026-08-21T09:30:00Z", 1)
    assert ledger.verify_chain(conn)["ok"]


def test_tables_other_domains_add_are_carried(conn, home):
    populate(conn)
    conn.execute("CREATE TABLE widgets (id INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT REFERENCES tasks(id),"
                 " blob BLOB, score REAL)")
    conn.execute("INSERT INTO widgets(task_id, blob, score) VALUES ('t1', x'00ff10', 0.1), ('t2', NULL, 1e300)")
    conn.execute("DELETE FROM widgets WHERE id = 2")
    made = snapshot.create(conn)
    before = table_rows(conn)
    conn.execute("DELETE FROM widgets")
    conn.execute("INSERT INTO widgets(task_id) VALUES ('t3')")
    snapshot.restore(conn, made["path"], force=True)
    assert table_rows(conn) == before
    assert conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'widgets'").fetchone()[0] == 2


def test_check_reports_and_refuses_changes_in_an_old_format_snapshot(conn, home, cli):
    populate(conn)
    path = snapshot.create_v1(conn)["path"]
    rc, out, err = cli("ops", "snapshot-check", path)
    assert (rc, err) == (0, "") and json.loads(out)["ok"] is True
    data = open(path, "rb").read()
    open(path, "wb").write(data.replace(b'"task t1 postgres pool"', b'"task T1 postgres pool"', 1))
    rc, out, err = cli("ops", "snapshot-check", path)
    assert rc == 1 and out == "" and "seal mismatch" in err and err.count("\n") == 1


@pytest.mark.slow
def test_every_single_byte_change_is_refused(conn, home):
    tasks.create(conn, project="P", title="one", task_id="t1")
    path = snapshot.create_v1(conn)["path"]
    original = open(path, "rb").read()
    rng = random.Random(7)
    positions = range(len(original)) if len(original) < 6000 else rng.sample(range(len(original)), 6000)
    for i in positions:
        changed = original[:i] + bytes([(original[i] + 1 + rng.randrange(254)) % 256]) + original[i + 1:]
        assert changed != original
        overwrite(path, changed)
        with pytest.raises(IntegrityError):
            snapshot.load(path)


def test_tampered_file_never_touches_the_database(conn, home, cli):
    populate(conn)
    path = snapshot.create(conn)["path"]
    open(path, "ab").write(b"\n")
    state = db_state(conn)
    rc, out, err = cli("ops", "snapshot-restore", path, "--force")
    assert rc == 1 and out == "" and err.count("\n") == 1
    assert db_state(conn) == state


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(schema_version=99), "schema version 99"),
    (lambda d: d.update(schema_version=1), "tables differ"),
    (lambda d: d["tables"]["tasks"]["rows"][0].__setitem__(19, 2 ** 70), "field lease_epoch: .*out of range"),
    (lambda d: d["tables"]["notes"]["rows"][0].__setitem__(1, "no-such-task"), "foreign-key"),
    (lambda d: d["tables"]["audit_events"]["rows"][1].__setitem__(3, "forged"), "audit chain"),
    (lambda d: d["receipt_files"].update({"receipts/../../evil.json": {"sha256": "x", "text": ""}}), "outside"),
    (lambda d: d["tables"].pop("heartbeats"), "tables differ"),
])
def test_validly_sealed_but_bad_snapshots_change_nothing(conn, home, mutate, message):
    populate(conn)
    path = snapshot.create_v1(conn)["path"]  # the old format, forged field by field

    def bad(doc):
        mutate(doc)
        doc["counts"] = {name: len(block["rows"]) for name, block in doc["tables"].items()}

    _forge(path, bad)
    state = db_state(conn)
    with pytest.raises((IntegrityError, Refused), match=message):
        snapshot.restore(conn, path, force=True, trust_unsigned=True)
    assert db_state(conn) == state


def test_missing_and_malformed_files_are_one_line(conn, home, cli, tmp_path):
    for content in (None, b"", b"not json", b'{"format": "autopilot-snapshot-v1"}', b"[1]"):
        path = tmp_path / "s.json"
        if content is None:
            path = tmp_path / "absent.json"
        else:
            path.write_bytes(content)
        rc, out, err = cli("ops", "snapshot-restore", str(path))
        assert rc == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err


def test_self_contained_fts_tables_are_carried_as_data(conn, home):
    conn.execute("CREATE VIRTUAL TABLE scratch_fts USING fts5(body)")
    conn.execute("INSERT INTO scratch_fts(rowid, body) VALUES (7, 'alpha beta'), (9, 'gamma')")
    made = snapshot.create(conn)
    conn.execute("DELETE FROM scratch_fts")
    conn.execute("INSERT INTO scratch_fts(rowid, body) VALUES (1, 'other')")
    snapshot.restore(conn, made["path"], force=True)
    assert [tuple(r) for r in conn.execute("SELECT rowid, body FROM scratch_fts ORDER BY rowid")] == \
           [(7, "alpha beta"), (9, "gamma")]
    assert [r[0] for r in conn.execute("SELECT rowid FROM scratch_fts WHERE scratch_fts MATCH 'beta'")] == [7]


def test_a_snapshot_from_an_older_schema_is_upgraded_like_a_home(tmp_path, home):
    import sqlite3

    from mindos.store.migrations import MIGRATIONS

    old_home = str(tmp_path / "old")
    os.makedirs(old_home)
    old = sqlite3.connect(os.path.join(old_home, "state.db"), isolation_level=None, factory=db.Connection)
    old.home, old.path = old_home, os.path.join(old_home, "state.db")
    with db.write(old):
        for number in range(1, 5):  # a home last used by MindOS at schema version 4
            for statement in db.split_statements(MIGRATIONS[number - 1]()):
                old.execute(statement)
        old.execute("PRAGMA user_version=4")
        old.execute("INSERT INTO tasks(id, project, title, tags, created_at, updated_at) VALUES"
                    " ('t-old', 'P', 'from before the upgrade', '[\"infra\"]', ?, ?)", (clock.now_iso(),) * 2)
        ledger.append_event(old, "task", "t-old", "created", {"title": "from before the upgrade"})
    made = snapshot.create(old, out=str(tmp_path / "old.json"))
    old.close()
    assert made["schema_version"] == 4
    fresh = db.connect(str(tmp_path / "new"))
    try:
        report = snapshot.restore(fresh, made["path"], trust_unsigned=True)
        assert report["upgraded_from_schema_version"] == 4
        assert fresh.execute("SELECT title, tags FROM tasks").fetchall()[0][:] == ("from before the upgrade", '["infra"]')
        assert [r[0] for r in fresh.execute("SELECT tag FROM task_tags")] == ["infra"]
        assert ledger.verify_chain(fresh)["ok"] and doctor.run(fresh.home)["ok"]
    finally:
        fresh.close()


def test_blob_values_travel_as_base64_and_come_back_exact():
    import binascii

    from mindos.recovery import tables

    raw = bytes(range(256))
    encoded = tables.encode(raw)
    assert set(encoded) == {"$b64"} and encoded["$b64"].isascii()
    assert tables.decode(json.loads(json.dumps(encoded))) == raw
    assert [tables.encode(value) for value in ("text", 7, 1.5, None)] == ["text", 7, 1.5, None]
    with pytest.raises(binascii.Error):
        tables.decode({"$b64": "not base64!"})
