"""Keyed seals and validated restores: who made an artifact, and whether its rows are rows
this home's commands could have written.

A seal's digest can be recomputed by anyone, so an edited-and-resealed snapshot, archive or
work order used to restore as it was (a task in status ``bogus_status``, a lease for
"mallory" until 2999, a title holding a newline and ESC).  Now artifacts are signed with
the home's key, restores refuse what neither this home nor a trusted key signed unless told
``--trust-unsigned``, and every row passes the write path's validators either way.
"""

import json
import os
import stat

import pytest

from conftest import db_state, make_task
from recovery_helpers import populate, table_rows
from mindos.core import seal
from mindos.errors import IntegrityError, Refused
from mindos.recovery import archive, artifacts, keys, snapshot, workorder
from mindos.store import db
from mindos.work import leases, lifecycle, tasks

BEFORE = "2026-08-21T12:00:00Z"


def _reseal(path, mutate, *, keep_signature=False, key=None):
    """Edit an artifact and seal it again the way an attacker who knows the format can: with
    no key (the signature dropped), keeping the old signature, or with some other key."""
    doc = json.load(open(path))
    stamp = doc.pop("seal")
    fmt = doc.pop("format")
    mutate(doc)
    if "counts" in doc and isinstance(doc.get("tables"), dict) and fmt == snapshot.FORMAT:
        doc["counts"] = {name: len(block["rows"]) for name, block in doc["tables"].items()}
    if keep_signature:
        doc = {"format": fmt, **doc, "seal": {"algorithm": "sha256", "outside": [],
                                                "signature": stamp["signature"]}}
        doc["seal"]["digest"] = seal._sealed_digest(doc, ())
        artifacts.write(path, doc)
        return
    _, data = seal.seal_bytes(fmt, doc, outside=(), key=key)
    with open(path, "wb") as handle:
        handle.write(data)


def _task_row(doc, task_id):
    block = doc["tables"]["tasks"]
    for row in block["rows"]:
        if row[block["columns"].index("id")] == task_id:
            return block["columns"], row
    raise AssertionError(task_id)


def _set(doc, task_id, **values):
    columns, row = _task_row(doc, task_id)
    for name, value in values.items():
        row[columns.index(name)] = value


# -- the home's key ---------------------------------------------------------------------------


def test_the_first_artifact_creates_the_home_key_0600_and_signs_with_it(conn, home, tmp_path):
    assert not os.path.exists(home / "seal.key")
    made = snapshot.create_v1(conn, out=str(tmp_path / "s.json"))
    info = os.stat(home / "seal.key")
    assert stat.S_IMODE(info.st_mode) == 0o600
    key = keys.home_key(str(home))
    doc = json.load(open(made["path"]))
    assert doc["seal"]["signature"]["key_id"] == seal.key_id(key)
    assert doc["seal"]["signature"]["algorithm"] == "hmac-sha256"
    assert snapshot.check(made["path"], str(home))["trust"] == "signed_by_this_home"
    assert snapshot.check(made["path"], str(tmp_path / "elsewhere"))["trust"] == "unsigned"
    # a second artifact reuses the key
    snapshot.create_v1(conn, out=str(tmp_path / "s2.json"))
    assert keys.home_key(str(home)) == key


def test_a_key_never_creates_a_home(tmp_path):
    missing = tmp_path / "no-home"
    assert keys.home_key(str(missing), create=True) is None
    assert not missing.exists()


def test_key_files_are_read_safely(home, tmp_path):
    target = tmp_path / "elsewhere.key"
    target.write_text("ab" * 32 + "\n")
    os.symlink(target, home / "seal.key")
    with pytest.raises(IntegrityError, match="symlink"):
        keys.home_key(str(home))
    os.unlink(home / "seal.key")
    (home / "seal.key").write_text("not a key\n")
    with pytest.raises(IntegrityError, match="64 hex"):
        keys.home_key(str(home))
    os.unlink(home / "seal.key")
    os.mkfifo(home / "seal.key")
    with pytest.raises(IntegrityError, match="not a regular file"):
        keys.home_key(str(home))


def test_two_first_writers_end_with_one_key(home, monkeypatch):
    first = keys.home_key(str(home), create=True)
    monkeypatch.setattr(keys, "read_key", lambda path, real=keys.read_key: real(path))
    os.unlink(home / "seal.key")
    (home / "seal.key").write_text(first.hex() + "\n")  # another writer placed its key first
    real_link = os.link

    def lost_race(src, dst):
        raise FileExistsError(dst)

    monkeypatch.setattr(os, "link", lost_race)
    assert keys.home_key(str(home), create=True) == first
    monkeypatch.setattr(os, "link", real_link)
    assert [name for name in os.listdir(home) if name.endswith(".tmp")] == []


# -- snapshots --------------------------------------------------------------------------------


def test_a_genuine_snapshot_round_trips_byte_exact(conn, home, tmp_path):
    populate(conn)
    first = snapshot.create_v1(conn, out=str(tmp_path / "a.json"))
    rows = table_rows(conn)
    report = snapshot.restore(conn, first["path"], force=True)
    assert report["trust"] == "signed_by_this_home" and report["key_id"]
    assert table_rows(conn) == rows
    second = snapshot.create_v1(conn, out=str(tmp_path / "b.json"))
    assert open(first["path"], "rb").read() == open(second["path"], "rb").read()


@pytest.mark.parametrize("mutate, table, field", [
    (lambda d: _set(d, "t3", status="bogus_status"), "tasks", "status"),
    (lambda d: _set(d, "t3", status="claimed", lease_owner="mallory", lease_expires_at="2999-01-01T00:00:00Z"),
     "tasks", "lease_expires_at"),
    (lambda d: _set(d, "t3", title="line one\n\x1b]0;owned\x07"), "tasks", "title"),
    (lambda d: _set(d, "t3", lease_owner="mal lory"), "tasks", "lease_owner"),
    (lambda d: _set(d, "t3", lease_owner="mallory", lease_expires_at=None), "tasks", "lease_expires_at"),
    (lambda d: _set(d, "t3", id="../../etc"), "tasks", "id"),
    (lambda d: _set(d, "t3", updated_at="yesterday"), "tasks", "updated_at"),
    (lambda d: _set(d, "t3", lease_epoch=-4), "tasks", "lease_epoch"),
    (lambda d: _set(d, "t3", tags='["UPPER case"]'), "tasks", "tags"),
    (lambda d: d["tables"]["notes"]["rows"][0].__setitem__(d["tables"]["notes"]["columns"].index("source"),
                                                           "eve\nmallory"), "notes", "source"),
    (lambda d: d["tables"]["facts"]["rows"][0].__setitem__(d["tables"]["facts"]["columns"].index("subject"),
                                                           "Service Auth"), "facts", "subject"),
    (lambda d: d["tables"]["receipts"]["rows"][0].__setitem__(d["tables"]["receipts"]["columns"].index("path"),
                                                              "/etc/shadow"), "receipts", "path"),
])
def test_a_resealed_snapshot_is_refused_and_its_rows_are_validated(conn, home, cli, mutate, table, field):
    populate(conn)
    path = snapshot.create_v1(conn)["path"]
    _reseal(path, mutate)
    state = db_state(conn)
    rc, out, err = cli("ops", "snapshot-restore", path, "--force")
    assert rc == 1 and out == "" and err.count("\n") == 1
    assert "is unsigned" in err and "--trust-unsigned" in err
    rc, out, err = cli("ops", "snapshot-restore", path, "--force", "--trust-unsigned")
    assert rc == 1 and out == "" and err.count("\n") == 1
    assert f"table {table} row" in err and f"field {field}:" in err, err
    assert db_state(conn) == state


def test_a_resealed_snapshot_keeping_the_signature_is_a_forgery(conn, home, cli):
    populate(conn)
    path = snapshot.create_v1(conn)["path"]
    _reseal(path, lambda d: _set(d, "t3", title="a harmless looking edit"), keep_signature=True)
    state = db_state(conn)
    for extra in ((), ("--trust-unsigned",)):
        rc, out, err = cli("ops", "snapshot-restore", path, "--force", *extra)
        assert rc == 1 and "signature mismatch" in err and err.count("\n") == 1
    rc, out, err = cli("ops", "snapshot-check", path)
    assert rc == 1 and "signature mismatch" in err
    assert db_state(conn) == state


def test_a_snapshot_signed_by_a_foreign_key_needs_trust(conn, home, cli, tmp_path):
    populate(conn)
    path = snapshot.create_v1(conn)["path"]
    mallory = os.urandom(32)
    _reseal(path, lambda d: None, key=mallory)
    rc, out, err = cli("ops", "snapshot-restore", path, "--force")
    assert rc == 1 and f"signed by key {seal.key_id(mallory)}, which this home does not trust" in err
    rc, out, _ = cli("ops", "snapshot-check", path)
    assert rc == 0 and json.loads(out)["trust"] == "unsigned" and json.loads(out)["key_id"] == seal.key_id(mallory)
    os.makedirs(home / "trusted-keys")
    (home / "trusted-keys" / "laptop.key").write_text(mallory.hex() + "\n")
    rc, out, err = cli("ops", "snapshot-restore", path, "--force")
    assert rc == 0, err
    assert json.loads(out)["trust"] == "signed_by_trusted_key"
    (home / "trusted-keys" / "broken.key").write_text("nope")
    rc, out, err = cli("ops", "snapshot-restore", path, "--force")
    assert rc == 1 and "broken.key" in err


def test_the_unsigned_format_stays_readable_with_trust_unsigned(conn, home, cli, tmp_path):
    populate(conn)
    rows = table_rows(conn)
    path = snapshot.create_v1(conn)["path"]
    _reseal(path, lambda d: None)  # exactly what a snapshot from before signing looks like
    assert "signature" not in json.load(open(path))["seal"]
    make_task(conn, "t9")
    rc, out, err = cli("ops", "snapshot-restore", path, "--force", "--trust-unsigned")
    assert (rc, err) == (0, "")
    assert json.loads(out)["trust"] == "unsigned" and json.loads(out)["key_id"] is None
    assert table_rows(conn) == rows


def test_an_unsigned_snapshot_carrying_a_credential_is_refused_by_the_guard(conn, home):
    populate(conn)
    path = snapshot.create_v1(conn)["path"]
    secret = "ghp_" + "a1B2" * 9
    notes = lambda d: d["tables"]["notes"]["rows"][0].__setitem__(  # noqa: E731
        d["tables"]["notes"]["columns"].index("content"), f"the token is {secret}")
    _reseal(path, notes)
    state = db_state(conn)
    with pytest.raises(IntegrityError, match="secret guard: table notes row 1 .* field content") as caught:
        snapshot.restore(conn, path, force=True, trust_unsigned=True)
    assert secret not in str(caught.value)
    assert db_state(conn) == state


def test_a_lease_no_longer_than_the_longest_lease_is_kept(conn, home):
    make_task(conn, "t1")
    leases.claim(conn, "t1", "codex", minutes=leases.MAX_MINUTES)
    path = snapshot.create_v1(conn)["path"]
    assert snapshot.restore(conn, path, force=True)["restored"]


# -- archives ---------------------------------------------------------------------------------


def _retired(conn):
    for task_id in ("a1", "a2"):
        make_task(conn, task_id)
        leases.claim(conn, task_id, "codex")
        lifecycle.complete(conn, task_id, "codex")


def test_a_genuine_archive_round_trips_exact(conn, home):
    _retired(conn)
    rows = {name: rows for name, rows in table_rows(conn).items() if name != "audit_events"}
    made = archive.archive(conn, BEFORE)
    report = archive.restore(conn, made["path"])
    assert report["trust"] == "signed_by_this_home"
    after = {name: rows for name, rows in table_rows(conn).items() if name != "audit_events"}
    assert after == rows


def test_a_resealed_old_format_archive_is_refused_and_its_rows_are_validated(conn, home, cli, tmp_path):
    from recovery_helpers import write_v1_archive

    _retired(conn)
    path = write_v1_archive(conn, BEFORE, str(tmp_path / "old.json"))
    archive.archive(conn, BEFORE)
    genuine = open(path, "rb").read()
    _reseal(path, lambda d: _set(d, "a1", status="bogus_status"))
    state = db_state(conn)
    rc, out, err = cli("ops", "archive-restore", path)
    assert rc == 1 and "is unsigned" in err and err.count("\n") == 1
    rc, out, err = cli("ops", "archive-restore", path, "--trust-unsigned")
    assert rc == 1 and "table tasks row" in err and "field status" in err and err.count("\n") == 1
    assert db_state(conn) == state
    with open(path, "wb") as handle:
        handle.write(genuine)
    _reseal(path, lambda d: _set(d, "a1", title="renamed after the fact"), keep_signature=True)
    rc, out, err = cli("ops", "archive-restore", path, "--trust-unsigned")
    assert rc == 1 and "signature mismatch" in err
    assert db_state(conn) == state
    rc, out, err = cli("ops", "archive-check", path)
    assert rc == 1 and "signature mismatch" in err


# -- work orders ------------------------------------------------------------------------------


@pytest.fixture
def other(tmp_path):
    connection = db.connect(str(tmp_path / "other"))
    yield connection
    connection.close()


def _trust(target, source_home):
    os.makedirs(keys.trusted_dir(target.home), exist_ok=True)
    with open(os.path.join(keys.trusted_dir(target.home), "source.key"), "w") as handle:
        handle.write(keys.home_key(str(source_home), create=True).hex() + "\n")


def test_a_genuine_work_order_round_trips_exact_between_trusting_homes(conn, home, other, tmp_path):
    tasks.create(conn, project="P", title="carry me", task_id="w1", description="multi\nline\tbody")
    path = str(tmp_path / "w1.json")
    workorder.export_task(conn, "w1", out=path)
    with pytest.raises(Refused, match="which this home does not trust"):
        workorder.import_task(other, path)
    _trust(other, home)
    report = workorder.import_task(other, path)
    assert report["created"] and report["trust"] == "signed_by_trusted_key"
    mine = dict(conn.execute("SELECT * FROM tasks WHERE id = 'w1'").fetchone())
    theirs = dict(other.execute("SELECT * FROM tasks WHERE id = 'w1'").fetchone())
    mine.pop("seq"), theirs.pop("seq")
    assert mine == theirs


def test_a_resealed_work_order_is_refused_and_its_rows_are_validated(conn, home, other, tmp_path, cli):
    make_task(conn, "w1")
    path = str(tmp_path / "w1.json")
    workorder.export_task(conn, "w1", out=path)
    _trust(other, home)
    genuine = open(path, "rb").read()
    _reseal(path, lambda d: _set(d, "w1", title="evil\x1b[2J", status="bogus_status"))
    state = db_state(other)
    with pytest.raises(Refused, match="is unsigned"):
        workorder.import_task(other, path)
    with pytest.raises(IntegrityError, match=r"import-task refused: table tasks row 1 \(id 'w1'\) field title: .*control"):
        workorder.import_task(other, path, trust_unsigned=True)
    with pytest.raises(IntegrityError, match="field title"):
        workorder.import_task(other, path, trust_unsigned=True, dry_run=True)
    with open(path, "wb") as handle:
        handle.write(genuine)
    _reseal(path, lambda d: _set(d, "w1", title="evil\x1b[2J"), keep_signature=True)
    with pytest.raises(IntegrityError, match="signature mismatch"):
        workorder.import_task(other, path, trust_unsigned=True)
    assert db_state(other) == state


def test_an_unsigned_snapshot_hiding_a_credential_in_the_ledger_is_refused(conn, home):
    populate(conn)
    path = snapshot.create_v1(conn)["path"]
    secret = "AKIA" + "Z7QW3RTY6UIO2PAS"

    def plant(doc):
        block = doc["tables"]["audit_events"]
        block["rows"][-1][block["columns"].index("payload_json")] = json.dumps({"note": f"key {secret}"})

    _reseal(path, plant)
    with pytest.raises(IntegrityError, match=r"secret guard: table audit_events row \d+ .*field payload_json"):
        snapshot.restore(conn, path, force=True, trust_unsigned=True)


@pytest.mark.parametrize("value, reason", [("nul \x00 inside", "NUL"), ({"nested": 1}, "JSON dict"),
                                           ([1, 2], "JSON list")])
def test_values_sqlite_cannot_store_are_refused_by_name_in_any_table(conn, home, cli, value, reason):
    populate(conn)
    path = snapshot.create_v1(conn)["path"]

    def plant(doc):
        block = doc["tables"]["audit_events"]
        block["rows"][2][block["columns"].index("payload_json")] = value

    _reseal(path, plant)
    state = db_state(conn)
    rc, out, err = cli("ops", "snapshot-restore", path, "--force", "--trust-unsigned")
    assert rc == 1 and out == "" and err.count("\n") == 1
    assert "table audit_events row 3 (id 3) field payload_json" in err and reason in err, err
    assert db_state(conn) == state
