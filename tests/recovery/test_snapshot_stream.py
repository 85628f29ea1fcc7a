"""Streamed snapshots (autopilot-snapshot-v2): a tar of a sealed manifest, a VACUUM INTO copy of the
database and the receipt files, verified while it is read; old JSON snapshots stay readable."""

import io
import json
import os
import tarfile

import pytest

from conftest import db_state, overwrite
from recovery_helpers import populate, table_rows
from mindos.errors import IntegrityError, Refused
from mindos.recovery import artifacts, doctor, snapshot, stream, tables
from mindos.store import backup, db
from mindos.work import tasks


def _members(path):
    """``[(TarInfo, bytes)]`` of a (small) test snapshot."""
    with tarfile.open(path, "r|") as tar:
        return [(info, tar.extractfile(info).read()) for info in tar]


def _rewrite(path, members):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            info = tarfile.TarInfo(info.name) if isinstance(info, tarfile.TarInfo) else tarfile.TarInfo(info)
            info.size, info.mode = len(data), 0o600
            tar.addfile(info, io.BytesIO(data))


def _manifest(path):
    return json.loads(_members(path)[0][1])


def _staging_left(home):
    return [name for name in os.listdir(home) if name.startswith(".snapshot-")]


def test_a_snapshot_is_a_tar_of_manifest_database_and_receipts(conn, home):
    populate(conn)
    made = snapshot.create(conn)
    assert made["path"].endswith(".tar") and os.stat(made["path"]).st_mode & 0o777 == 0o600
    names = [info.name for info, _ in _members(made["path"])]
    assert names[:2] == ["manifest.json", "state.db"] and names[2:] == ["receipts/" + n for n in
                                                                           sorted(os.listdir(home / "receipts"))]
    manifest = _manifest(made["path"])
    assert manifest["format"] == "autopilot-snapshot-v2" and manifest["seal"]["signature"]
    assert set(manifest["tables"]) == set(tables.data_tables(conn)) and manifest["counts"] == made["counts"]
    assert manifest["counts"]["tasks"] == 4 and made["receipt_files"] == len(manifest["receipt_files"]) == 1
    assert not [n for n in os.listdir(home / "backups") if n.startswith(".")]  # no staging left behind


def test_round_trip_gives_identical_table_digests_and_receipts(conn, home, tmp_path):
    populate(conn)
    made = snapshot.create(conn, out=str(tmp_path / "s.tar"))
    manifest = _manifest(made["path"])
    before = table_rows(conn)
    receipts = {n: (home / "receipts" / n).read_bytes() for n in os.listdir(home / "receipts")}
    fresh = db.connect(str(tmp_path / "other"))
    try:
        report = snapshot.restore(fresh, made["path"], trust_unsigned=True)
        assert report["restored"] and report["audit"]["ok"] and report["receipt_files_written"] == 1
        for name, entry in manifest["tables"].items():
            assert tables.digest_table(fresh, name) == (entry["rows"], entry["sha256"]), name
        assert table_rows(fresh) == before
        assert {n: (tmp_path / "other" / "receipts" / n).read_bytes() for n in receipts} == receipts
        assert doctor.run(fresh.home)["ok"]
    finally:
        fresh.close()
    # and over the changed home itself, with --force
    tasks.create(conn, project="P", title="after the snapshot", task_id="t9")
    assert snapshot.restore(conn, made["path"], force=True)["replaced"]
    assert table_rows(conn) == before and _staging_left(home) == []


def test_the_same_connection_restores_twice(conn, home, tmp_path):
    # the second restore verifies the chain inside a transaction that has just rebuilt the
    # full-text indexes, which keeps a statement open: its check functions cannot be redefined
    populate(conn)
    made = snapshot.create(conn, out=str(tmp_path / "s.tar"))
    before = table_rows(conn)
    for title in ("first change", "second change"):
        tasks.create(conn, project="P", title=title)
        report = snapshot.restore(conn, made["path"], force=True)
        assert report["restored"] and report["audit"]["ok"]
        assert table_rows(conn) == before


def test_the_cli_writes_checks_and_restores_a_streamed_snapshot(conn, home, cli, tmp_path):
    populate(conn)
    out = tmp_path / "snap.tar"
    rc, made, err = cli("ops", "snapshot", "--out", str(out))
    assert rc == 0, err
    rc, checked, err = cli("ops", "snapshot-check", str(out))
    checked = json.loads(checked)
    assert rc == 0 and checked["ok"] and checked["format"] == "autopilot-snapshot-v2"
    assert checked["trust"] == "signed_by_this_home" and checked["counts"] == json.loads(made)["counts"]
    rc, out_text, err = cli("ops", "snapshot-restore", str(out))
    assert rc == 1 and "not empty" in err and err.count("\n") == 1
    rc, out_text, err = cli("ops", "snapshot-restore", str(out), "--force")
    assert rc == 0 and json.loads(out_text)["restored"] is True


def test_an_old_format_snapshot_still_restores(conn, home, tmp_path):
    populate(conn)
    old = snapshot.create_v1(conn, out=str(tmp_path / "old.json"))
    assert open(old["path"], "rb").read(1) == b"{"
    before = table_rows(conn)
    assert snapshot.check(old["path"], str(home))["format"] == "autopilot-snapshot-v1"
    tasks.create(conn, project="P", title="later", task_id="t9")
    assert snapshot.restore(conn, old["path"], force=True)["restored"]
    assert table_rows(conn) == before


def _flip(path, offset):
    data = bytearray(open(path, "rb").read())
    data[offset] ^= 0x01
    open(path, "wb").write(bytes(data))


def _refused_unchanged(conn, home, path, match):
    state = db_state(conn)
    with pytest.raises(IntegrityError, match=match):
        snapshot.check(path, str(home))
    with pytest.raises(IntegrityError, match=match):
        snapshot.restore(conn, path, force=True)
    assert db_state(conn) == state and _staging_left(home) == []


@pytest.fixture
def snap(conn, home, tmp_path):
    populate(conn)
    path = snapshot.create(conn, out=str(tmp_path / "snap.tar"))["path"]
    tasks.create(conn, project="P", title="after the snapshot", task_id="t9")  # what a bad restore would lose
    return path


def test_a_flipped_byte_in_the_database_copy_is_refused(conn, home, snap):
    data = open(snap, "rb").read()
    start = data.index(b"SQLite format 3\x00")
    _flip(snap, start + 5000)
    _refused_unchanged(conn, home, snap, "state.db does not match its sha256")


def test_a_flipped_byte_in_the_manifest_is_refused(conn, home, snap):
    data = open(snap, "rb").read()
    _flip(snap, data.index(b'"schema_version":') + 3)
    _refused_unchanged(conn, home, snap, "seal mismatch|canonical form")


def test_a_missing_receipt_is_refused(conn, home, snap):
    members = _members(snap)
    _rewrite(snap, [m for m in members if not m[0].name.startswith("receipts/")])
    _refused_unchanged(conn, home, snap, "missing receipts/")


def test_a_truncated_snapshot_is_refused(conn, home, snap):
    data = open(snap, "rb").read()
    for keep in (len(data) // 2, len(data) - 20000, 600):
        open(snap, "wb").write(data[:keep])
        _refused_unchanged(conn, home, snap, "truncated|not a streamed snapshot|manifest|not valid")


def test_extra_or_reordered_members_and_trailing_bytes_are_refused(conn, home, snap):
    members = _members(snap)
    _rewrite(snap, members + [(tarfile.TarInfo("extra.txt"), b"x")])
    _refused_unchanged(conn, home, snap, "unexpected member")
    _rewrite(snap, [members[0]] + members[2:] + [members[1]])
    _refused_unchanged(conn, home, snap, "not its second member")
    _rewrite(snap, members)
    open(snap, "ab").write(b"\n")
    _refused_unchanged(conn, home, snap, "data after its end|does not end as a tar file ends")


def test_a_resealed_manifest_is_unsigned_and_needs_trust(conn, home, snap):
    members = _members(snap)
    doc = json.loads(members[0][1])
    doc.pop("seal")
    fmt = doc.pop("format")
    _, sealed = artifacts.seal.seal_bytes(fmt, doc, outside=())  # valid seal, no signature
    _rewrite(snap, [(members[0][0], sealed)] + members[1:])
    state = db_state(conn)
    with pytest.raises(Refused, match="unsigned"):
        snapshot.restore(conn, snap, force=True)
    assert db_state(conn) == state
    assert snapshot.restore(conn, snap, force=True, trust_unsigned=True)["trust"] == "unsigned"


def test_an_untrusted_snapshot_is_refused_before_its_database_is_read(conn, home, tmp_path, snap):
    other = db.connect(str(tmp_path / "elsewhere"))
    try:
        with pytest.raises(Refused, match="unsigned"):
            snapshot.restore(other, snap)
        assert stream.LAST_READER.total < os.path.getsize(snap) / 2
    finally:
        other.close()


def test_a_snapshot_taken_while_another_connection_writes_is_consistent(conn, home, tmp_path, monkeypatch):
    populate(conn)
    writer = db.connect(str(home))
    real = backup.copy_to

    def copy_then_write(source, path):
        writer.execute("BEGIN IMMEDIATE")  # an open, uncommitted write while the copy is made
        tasks.create(writer, project="P", title="uncommitted during the copy", task_id="t-open")
        try:
            return real(source, path)
        finally:
            writer.execute("COMMIT")
            tasks.create(writer, project="P", title="committed right after the copy", task_id="t-after")

    monkeypatch.setattr(backup, "copy_to", copy_then_write)
    try:
        made = snapshot.create(conn, out=str(tmp_path / "s.tar"))
    finally:
        writer.close()
    assert made["counts"]["tasks"] == 4  # neither the open write nor the later one
    fresh = db.connect(str(tmp_path / "other"))
    try:
        snapshot.restore(fresh, made["path"], trust_unsigned=True)
        ids = sorted(r[0] for r in fresh.execute("SELECT id FROM tasks"))
        assert ids == ["t1", "t2", "t3", "t4"] and doctor.run(fresh.home)["ok"]
    finally:
        fresh.close()


def test_symlink_and_fifo_snapshots_and_outs_are_refused(conn, home, cli, tmp_path, snap):
    link = tmp_path / "link.tar"
    link.symlink_to(snap)
    fifo = tmp_path / "pipe.tar"
    os.mkfifo(fifo)
    state = db_state(conn)
    for path, needle in ((link, "symlink"), (fifo, "FIFO")):
        for argv in (["snapshot-check", str(path)], ["snapshot-restore", str(path), "--force"]):
            rc, out, err = cli("ops", *argv)
            assert (rc, out) == (1, "") and needle in err and err.count("\n") == 1, err
    rc, out, err = cli("ops", "snapshot", "--out", str(link), "--force")
    assert rc == 1 and "symlink" in err
    assert db_state(conn) == state and link.is_symlink()


def test_restore_reads_the_file_in_bounded_chunks(conn, home, tmp_path):
    populate(conn)
    conn.execute("CREATE TABLE ballast(id INTEGER PRIMARY KEY, body BLOB)")
    conn.executemany("INSERT INTO ballast(body) VALUES (?)", [(os.urandom(4096),) for _ in range(1024)])
    made = snapshot.create(conn, out=str(tmp_path / "big.tar"))
    size = os.path.getsize(made["path"])
    assert size > 4 * stream.CHUNK
    snapshot.restore(conn, made["path"], force=True)
    reader = stream.LAST_READER
    assert reader.total == size and reader.largest <= stream.CHUNK  # never the whole file at once
    snapshot.check(made["path"], str(home))
    assert stream.LAST_READER.largest <= stream.CHUNK
    with pytest.raises(ValueError):
        reader.read()


def _bad_rows_snapshot(conn, tmp_path):
    """A streamed snapshot whose copy holds a task in status 'bogus', resealed (unsigned)."""
    populate(conn)
    made = snapshot.create(conn, out=str(tmp_path / "s.tar"))
    members = _members(made["path"])
    copy = tmp_path / "copy" / "state.db"
    copy.parent.mkdir()
    copy.write_bytes(members[1][1])
    import sqlite3

    raw = sqlite3.connect(copy)
    raw.execute("UPDATE tasks SET status = 'bogus' WHERE id = 't3'")
    raw.commit()
    raw.close()
    data = copy.read_bytes()
    doc = json.loads(members[0][1])
    doc.pop("seal")
    fmt = doc.pop("format")
    from mindos.core import canonical

    doc["database"] = {"member": "state.db", "bytes": len(data), "sha256": canonical.sha256_hex(data)}
    source = backup.open_copy(str(copy))
    try:
        rows, digest = tables.digest_table(source, "tasks")
    finally:
        source.close()
    doc["tables"]["tasks"] = {"rows": rows, "sha256": digest}
    _, sealed = artifacts.seal.seal_bytes(fmt, doc, outside=())
    _rewrite(made["path"], [(members[0][0], sealed), (members[1][0], data)] + members[2:])
    return made["path"]


def test_a_copy_with_bad_rows_under_a_valid_seal_changes_nothing(conn, home, tmp_path):
    path = _bad_rows_snapshot(conn, tmp_path)
    receipts = sorted(os.listdir(os.path.join(home, "receipts")))
    for name in receipts:  # receipt files a restore would write back
        os.unlink(os.path.join(home, "receipts", name))
    state = db_state(conn)
    # (the load runs while the rows are checked: the refusal comes before its commit and files)
    with pytest.raises(IntegrityError, match="table tasks .*field status"):
        snapshot.restore(conn, path, force=True, trust_unsigned=True)
    assert db_state(conn) == state and _staging_left(home) == []
    assert os.listdir(os.path.join(home, "receipts")) == []


def test_a_copy_refused_by_its_rows_is_refused_so_before_a_non_empty_home(conn, home, tmp_path):
    path = _bad_rows_snapshot(conn, tmp_path)
    state = db_state(conn)
    with pytest.raises(IntegrityError, match="table tasks .*field status"):  # not "the database is not empty"
        snapshot.restore(conn, path, trust_unsigned=True)
    assert db_state(conn) == state and _staging_left(home) == []


def test_a_newer_schema_is_refused(conn, home, tmp_path):
    populate(conn)
    made = snapshot.create(conn, out=str(tmp_path / "s.tar"))
    members = _members(made["path"])
    doc = json.loads(members[0][1])
    doc.pop("seal")
    fmt = doc.pop("format")
    doc["schema_version"] = 999
    _, sealed = artifacts.seal.seal_bytes(fmt, doc, outside=())
    _rewrite(made["path"], [(members[0][0], sealed)] + members[1:])
    state = db_state(conn)
    with pytest.raises(Refused, match="schema version 999"):
        snapshot.restore(conn, made["path"], force=True, trust_unsigned=True)
    assert db_state(conn) == state


def test_a_killed_snapshots_staging_directory_is_swept_by_the_next(conn, home, tmp_path):
    from mindos.core import clock, files

    backups = home / "backups"
    backups.mkdir()
    dead = backups / ".snapshot-staging.4000000.0123abcd"
    live = backups / f".snapshot-staging.{os.getpid()}.0123abcd"
    for path in (dead, live):
        path.mkdir()
        (path / "state.db").write_bytes(b"partial copy")
        old = clock.now().timestamp() - files.STALE_TEMP_SECONDS - 60
        os.utime(path, (old, old))
    snapshot.create(conn)
    names = os.listdir(backups)
    assert dead.name not in names and live.name in names  # a running process's scratch is never taken


@pytest.mark.slow
def test_every_single_byte_change_of_a_streamed_snapshot_is_refused(conn, home, tmp_path):
    import random

    tasks.create(conn, project="P", title="one", task_id="t1")
    path = snapshot.create(conn, out=str(tmp_path / "s.tar"))["path"]
    original = open(path, "rb").read()
    rng = random.Random(11)
    starts = [0, len(original) - 12000] + [info.offset_data - 512 for info, _ in _members_with_offsets(path)]
    positions = {i for start in starts for i in range(max(start, 0), min(start + 700, len(original)))}
    positions |= set(rng.sample(range(len(original)), 1500))  # headers, padding, tail and a sample of the rest
    for i in sorted(positions):
        changed = original[:i] + bytes([original[i] ^ (1 << rng.randrange(8))]) + original[i + 1:]
        overwrite(path, changed)
        with pytest.raises((IntegrityError, Refused)):
            snapshot.check(path, str(home))


def _members_with_offsets(path):
    with tarfile.open(path, "r|") as tar:
        return [(info, None) for info in tar]


def test_a_manifest_naming_a_huge_digest_chunk_is_malformed(conn, home, tmp_path):
    tasks.create(conn, project="P", title="one", task_id="t1")
    made = snapshot.create(conn, out=str(tmp_path / "s.tar"))
    members = _members(made["path"])
    doc = json.loads(members[0][1])
    doc.pop("seal")
    fmt = doc.pop("format")
    doc["digest_chunk_rows"] = 10 ** 9  # would hold a whole table in memory
    _, sealed = artifacts.seal.seal_bytes(fmt, doc, outside=())
    _rewrite(made["path"], [(members[0][0], sealed)] + members[1:])
    with pytest.raises(IntegrityError, match="manifest is malformed"):
        snapshot.restore(conn, made["path"], force=True, trust_unsigned=True)


def test_a_respelled_header_checksum_is_refused(conn, home, tmp_path):
    # tar reads " 11636" as 011636, so a checksum field respelled with the same value passes
    # tar's own check: the file is still not the one written
    tasks.create(conn, project="P", title="one", task_id="t1")
    path = snapshot.create(conn, out=str(tmp_path / "s.tar"))["path"]
    original = open(path, "rb").read()
    for info, _ in _members_with_offsets(path):
        at = info.offset_data - 512 + 148
        assert original[at:at + 1] == b"0"  # a sum under 0o100000: the first digit is a padding zero
        overwrite(path, original[:at] + b" " + original[at + 1:])
        with pytest.raises(IntegrityError, match="header"):
            snapshot.check(path, str(home))
    overwrite(path, original)
    snapshot.check(path, str(home))
