"""Streamed archives (autopilot-archive-v2): a tar of a sealed manifest, an SQLite file of the
archived rows and the receipt files, written as the rows are read and verified while it is read."""

import io
import json
import os
import sqlite3
import subprocess
import sys
import tarfile

import pytest

from conftest import db_state, overwrite
from recovery_helpers import populate, table_rows
from mindos.core import canonical, seal
from mindos.errors import IntegrityError, Refused
from mindos.recovery import archive, doctor, stream, tables
from mindos.store import backup, db, fts
from mindos.work import lifecycle, tasks

BEFORE = "2026-08-21T10:00:00Z"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _members(path):
    with tarfile.open(path, "r|") as tar:
        return [(info, tar.extractfile(info).read()) for info in tar]


def _rewrite(path, members):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            info = tarfile.TarInfo(info.name) if isinstance(info, tarfile.TarInfo) else tarfile.TarInfo(info)
            info.size, info.mode = len(data), 0o600
            tar.addfile(info, io.BytesIO(data))


def _unsealed(members):
    doc = json.loads(members[0][1])
    doc.pop("seal")
    return doc.pop("format"), doc


def _resealed(members, doc, fmt=archive.FORMAT_V2):
    return seal.seal_bytes(fmt, doc, outside=())[1]  # a valid seal, no signature


def _without_audit(rows):
    return {name: value for name, value in rows.items() if name != "audit_events"}


def _staging_left(home):
    return [name for name in os.listdir(home) if name.startswith(".archive-")]


def _receipts(home):
    folder = os.path.join(str(home), "receipts")
    return {name: open(os.path.join(folder, name), "rb").read() for name in sorted(os.listdir(folder))}


@pytest.fixture
def made(conn, home, tmp_path):
    """A streamed archive of t1, t2, t4 (rows gone from the live home), plus a live task."""
    populate(conn)
    lifecycle.complete(conn, "t2", "claude", note="done too")
    return archive.archive(conn, BEFORE, out=str(tmp_path / "a.tar"))["path"]


def _refused_unchanged(conn, home, cli, path, match):
    """archive-check and archive-restore (with and without --force) each refuse ``path`` with
    one clear line matching ``match``, and nothing changes."""
    state = db_state(conn)
    for argv in (["archive-check", path], ["archive-restore", path], ["archive-restore", path, "--force"]):
        rc, out, err = cli("ops", *argv)
        assert (rc, out) == (1, "") and err.count("\n") == 1 and "Traceback" not in err, (argv, err)
        assert __import__("re").search(match, err), (argv, err)
    assert db_state(conn) == state and _staging_left(home) == []


def test_an_archive_is_a_tar_of_manifest_rows_and_receipts(conn, home, made):
    names = [info.name for info, _ in _members(made)]
    assert names == ["manifest.json", "archive.db", "receipts/" + names[2].split("/")[1]] and len(names) == 3
    assert os.stat(made).st_mode & 0o777 == 0o600
    fmt, manifest = _unsealed(_members(made))
    assert fmt == "autopilot-archive-v2" and manifest["task_ids"] == ["t1", "t2", "t4"]
    assert manifest["restore_tables"][0] == "tasks" and "audit_events" not in manifest["restore_tables"]
    assert set(manifest["tables"]) == set(manifest["restore_tables"]) | {"audit_events", "detached/facts"}
    assert manifest["counts"]["tasks"] == 3 and manifest["counts"]["facts_detached"] == 1
    assert manifest["counts"]["audit_events"] == manifest["tables"]["audit_events"]["rows"] > 0
    assert not [n for n in os.listdir(os.path.dirname(made)) if n.startswith(".")]  # no staging left behind


def test_round_trip_through_the_cli_restores_every_row_and_receipt_exactly(conn, home, cli, tmp_path):
    populate(conn)
    lifecycle.complete(conn, "t2", "claude", note="done too")
    rows, receipts = _without_audit(table_rows(conn)), _receipts(home)
    path = str(tmp_path / "a.tar")
    rc, out, err = cli("ops", "archive", "--before", BEFORE, "--out", path)
    made = json.loads(out)
    assert (rc, err) == (0, "") and made["path"] == path and made["counts"]["receipt_files"] == 1
    assert _receipts(home) == {} and [r[0] for r in conn.execute("SELECT id FROM tasks")] == ["t3"]
    rc, out, err = cli("ops", "archive-check", path)
    checked = json.loads(out)
    assert (rc, err) == (0, "") and checked["format"] == "autopilot-archive-v2" and checked["ok"]
    assert checked["task_ids"] == ["t1", "t2", "t4"] and checked["counts"] == made["counts"]
    assert checked["trust"] == "signed_by_this_home"
    rc, out, err = cli("ops", "archive-restore", path)
    restored = json.loads(out)
    assert (rc, err) == (0, "") and restored["restored"] == ["t1", "t2", "t4"] and restored["reattached"] == 1
    assert _without_audit(table_rows(conn)) == rows and _receipts(home) == receipts
    assert {k: v for k, v in restored["counts"].items()} == {
        k: v for k, v in made["counts"].items() if k not in ("audit_events", "receipt_files", "facts_detached")}
    assert doctor.run(str(home))["ok"] and all(fts.drift(conn, n)["ok"] for n in fts.INDEXES)
    assert _staging_left(home) == []


def test_a_restore_that_fails_late_rolls_back_whole(conn, home, made, monkeypatch):
    """One transaction: a failure after rows went in (the receipt file write) leaves nothing."""
    state = db_state(conn)
    from mindos.recovery import artifacts

    def broken(*args, **kwargs):
        raise Refused("cannot write the receipt: disk full")

    monkeypatch.setattr(artifacts, "atomic_write_bytes", broken)
    with pytest.raises(Refused, match="disk full"):
        archive.restore(conn, made)
    assert db_state(conn) == state and _staging_left(home) == []


def test_a_flipped_byte_in_each_part_is_refused(conn, home, cli, made):
    original = open(made, "rb").read()
    spots = {"manifest": (original.index(b'"task_ids":') + 14, "seal mismatch|canonical form|not valid"),
             "database": (original.index(b"SQLite format 3\x00") + 3000, "archive.db does not match its sha256"),
             "receipt": (original.rindex(b'"tests"') + 2, r"receipts/.* does not match its sha256"),
             "header": (512 + 10, "changed|damaged|truncated|manifest")}
    for part, (offset, match) in spots.items():
        changed = bytearray(original)
        changed[offset] ^= 0x01
        open(made, "wb").write(bytes(changed))
        _refused_unchanged(conn, home, cli, made, match)


def test_a_truncated_archive_is_refused(conn, home, cli, made):
    data = open(made, "rb").read()
    for keep in (len(data) // 2, len(data) - 2000, 600, 0):
        open(made, "wb").write(data[:keep])
        _refused_unchanged(conn, home, cli, made, "truncated|not a streamed archive|manifest|not valid|does not end")


def test_reordered_extra_missing_members_and_trailing_bytes_are_refused(conn, home, cli, made):
    members = _members(made)
    cases = [(members + [(tarfile.TarInfo("extra.txt"), b"x")], "unexpected member"),
             ([members[0], members[2], members[1]], "not its second member"),
             (members[:2], "missing receipts/"),
             ([members[0]], "missing archive.db"),
             ([members[1], members[0]] + members[2:], "not a streamed archive"),
             (members[:2] + [members[1]], "a second copy of|unexpected member")]
    for rewritten, match in cases:
        _rewrite(made, rewritten)
        _refused_unchanged(conn, home, cli, made, match)
    _rewrite(made, members)
    open(made, "ab").write(b"\n")
    _refused_unchanged(conn, home, cli, made, "data after its end|does not end as a tar file ends")


def test_a_resealed_manifest_needs_trust_and_its_digests_still_bind_the_rows(conn, home, cli, made):
    members = _members(made)
    fmt, doc = _unsealed(members)
    _rewrite(made, [(members[0][0], _resealed(members, doc))] + members[1:])
    assert archive.check(made, str(home))["trust"] == "unsigned"  # check says who signed; restore weighs it
    state = db_state(conn)
    for argv in (["archive-restore", made], ["archive-restore", made, "--force"]):
        rc, out, err = cli("ops", *argv)
        assert (rc, out) == (1, "") and "is unsigned" in err and err.count("\n") == 1
    assert db_state(conn) == state and _staging_left(home) == []
    # a wrong table digest under a valid (unsigned) seal: the copy's rows are re-digested
    doc["tables"]["notes"]["sha256"] = "0" * 64
    _rewrite(made, [(members[0][0], _resealed(members, doc))] + members[1:])
    state = db_state(conn)
    with pytest.raises(IntegrityError, match="table notes of the database copy does not match its digest"):
        archive.restore(conn, made, trust_unsigned=True)
    assert db_state(conn) == state and _staging_left(home) == []


def _forge(made, tmp_path, change):
    """Rewrite the archive's database copy with ``change(sqlite connection)`` and reseal a
    manifest that describes it truthfully (unsigned)."""
    members = _members(made)
    copy = tmp_path / "forge" / "archive.db"
    copy.parent.mkdir(exist_ok=True)
    copy.write_bytes(members[1][1])
    raw = sqlite3.connect(copy)
    change(raw)
    raw.commit()
    raw.close()
    data = copy.read_bytes()
    fmt, doc = _unsealed(members)
    doc["database"] = {"member": "archive.db", "bytes": len(data), "sha256": canonical.sha256_hex(data)}
    source = backup.open_copy(str(copy))
    try:
        for name in tables.data_tables(source):
            rows, digest = tables.digest_table(source, name)
            doc["tables"][name] = {"rows": rows, "sha256": digest}
    finally:
        source.close()
    _rewrite(made, [(members[0][0], _resealed(members, doc)), (members[1][0], data)] + members[2:])


def test_forged_rows_under_a_valid_seal_are_checked_by_the_write_path_rules(conn, home, tmp_path, made):
    _forge(made, tmp_path, lambda raw: raw.execute("UPDATE tasks SET status = 'bogus' WHERE id = 't4'"))
    state = db_state(conn)
    with pytest.raises(IntegrityError, match="table tasks .*field status"):
        archive.restore(conn, made, trust_unsigned=True)
    assert db_state(conn) == state and _staging_left(home) == []


@pytest.mark.parametrize("listed, change", [
    (["t1", "t2", "t4", "t9"], None),  # the manifest names a task the copy lacks
    (["t1", "t2"], None),  # the copy holds a task the manifest leaves out
    (["t1", "t2", "t2", "t4"], None),  # one listed twice
    (None, "UPDATE tasks SET id = 't9' WHERE id = 't4'"),  # as many tasks, another id
    (None, "CREATE TEMP TABLE extra AS SELECT * FROM tasks WHERE id = 't4';"  # one more, a whole row
           " UPDATE extra SET id = 't9', seq = seq + 1000; INSERT INTO tasks SELECT * FROM extra"),
], ids=["listed-extra", "listed-fewer", "listed-twice", "copy-renamed", "copy-extra"])
def test_a_manifest_whose_task_ids_are_not_the_copys_tasks_is_refused(conn, home, cli, tmp_path, made, listed, change):
    if change is not None:
        _forge(made, tmp_path, lambda raw: raw.executescript(change))
    if listed is not None:
        members = _members(made)
        fmt, doc = _unsealed(members)
        doc["task_ids"] = listed
        _rewrite(made, [(members[0][0], _resealed(members, doc))] + members[1:])
    assert archive.check(made, str(home))["trust"] == "unsigned"
    state = db_state(conn)
    with pytest.raises(IntegrityError, match="the task ids its manifest lists are not the tasks in archive.db"):
        archive.restore(conn, made, trust_unsigned=True)
    for argv in (["archive-restore", made, "--trust-unsigned"], ["archive-restore", made, "--trust-unsigned", "--force"]):
        rc, out, err = cli("ops", *argv)
        assert (rc, out) == (1, "") and err.count("\n") == 1 and "Traceback" not in err, err
        assert "are not the tasks in archive.db" in err
    assert db_state(conn) == state and _staging_left(home) == []


def test_a_copy_whose_columns_differ_from_this_database_is_refused(conn, home, tmp_path, made):
    _forge(made, tmp_path, lambda raw: raw.execute("ALTER TABLE notes ADD COLUMN planted"))
    state = db_state(conn)
    with pytest.raises(Refused, match="table notes of the archive does not match this database"):
        archive.restore(conn, made, trust_unsigned=True)
    assert db_state(conn) == state and _staging_left(home) == []


def test_symlink_and_fifo_archives_and_outs_are_refused(conn, home, cli, tmp_path, made):
    link = tmp_path / "link.tar"
    link.symlink_to(made)
    fifo = tmp_path / "pipe.tar"
    os.mkfifo(fifo)
    state = db_state(conn)
    for path, needle in ((link, "symlink"), (fifo, "FIFO")):
        for argv in (["archive-check", str(path)], ["archive-restore", str(path)]):
            rc, out, err = cli("ops", *argv)
            assert (rc, out) == (1, "") and needle in err and err.count("\n") == 1, err
    tasks.create(conn, project="P", title="retire me", task_id="t8")
    tasks.update(conn, "t8", status="completed")
    state = db_state(conn)
    rc, out, err = cli("ops", "archive", "--before", "2030-01-01T00:00:00Z", "--out", str(link), "--force")
    assert (rc, out) == (1, "") and "symlink" in err and err.count("\n") == 1
    assert db_state(conn) == state and link.is_symlink()


def test_oversized_members_are_refused_before_they_are_read(conn, home, cli, made, monkeypatch):
    members = _members(made)
    fmt, doc = _unsealed(members)
    (stored, entry), = doc["receipt_files"].items()
    doc["receipt_files"][stored] = {**entry, "bytes": 10 ** 12}  # far over the receipt size limit
    _rewrite(made, [(members[0][0], _resealed(members, doc))] + members[1:])
    state = db_state(conn)
    with pytest.raises(IntegrityError, match="manifest is malformed"):
        archive.restore(conn, made, trust_unsigned=True)
    _rewrite(made, members)
    monkeypatch.setattr(stream, "MAX_MANIFEST_BYTES", 100)  # a manifest over the limit is never read whole
    with pytest.raises(IntegrityError, match="not a streamed archive"):
        archive.check(made)
    assert db_state(conn) == state and _staging_left(home) == []


def test_a_malformed_manifest_is_refused(conn, home, made):
    members = _members(made)
    for change in ({"restore_tables": ["notes"]}, {"restore_tables": ["tasks", "audit_events"]},
                   {"task_ids": "t1"}, {"detached": {"facts": "audit_events"}}, {"before": None}):
        fmt, doc = _unsealed(members)
        doc.update(change)
        _rewrite(made, [(members[0][0], _resealed(members, doc))] + members[1:])
        with pytest.raises(IntegrityError, match="manifest is malformed"):
            archive.check(made)


def test_collisions_refuse_and_force_replaces(conn, home, made):
    archive.restore(conn, made)
    state = db_state(conn)
    with pytest.raises(Refused, match=r"task ids already exist \(t1, t2, t4\); pass --force"):
        archive.restore(conn, made)
    assert db_state(conn) == state and _staging_left(home) == []
    tasks.update(conn, "t4", title="edited locally")
    assert archive.restore(conn, made, force=True)["replaced"] == ["t1", "t2", "t4"]
    assert conn.execute("SELECT title FROM tasks WHERE id = 't4'").fetchone()[0] == "task t4 postgres pool"


def test_a_taken_seq_is_reassigned_and_others_keep_theirs(conn, home, tmp_path):
    populate(conn)
    lifecycle.complete(conn, "t2", "claude")
    seqs = {r[0]: r[1] for r in conn.execute("SELECT id, seq FROM tasks")}
    path = archive.archive(conn, BEFORE, out=str(tmp_path / "a.tar"))["path"]
    conn.execute("UPDATE tasks SET seq = ? WHERE id = 't3'", (seqs["t1"],))  # t1's seq is taken meanwhile
    archive.restore(conn, path)
    now = {r[0]: r[1] for r in conn.execute("SELECT id, seq FROM tasks")}
    assert now["t1"] not in (None, seqs["t1"]) and now["t2"] == seqs["t2"] and now["t4"] == seqs["t4"]


def test_the_reader_never_reads_more_than_a_chunk_at_once(conn, home, tmp_path):
    for n in range(500):
        tasks.create(conn, project="P", title=f"retired {n}", task_id=f"r{n}", description=os.urandom(3000).hex())
        tasks.update(conn, f"r{n}", status="completed")
    made = archive.archive(conn, "2030-01-01T00:00:00Z", out=str(tmp_path / "big.tar"))
    size = os.path.getsize(made["path"])
    assert size > 2 * stream.CHUNK
    archive.check(made["path"])
    assert stream.LAST_READER.total == size and stream.LAST_READER.largest <= stream.CHUNK
    archive.restore(conn, made["path"])
    assert stream.LAST_READER.total == size and stream.LAST_READER.largest <= stream.CHUNK
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 500


_PEAK = ("import resource, subprocess, sys\n"
         "proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
         "assert proc.returncode == 0, proc.stderr\n"
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")

_OLD_WRITER = ("import sys\nsys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
               "from recovery_helpers import write_v1_archive\nfrom mindos.store import db\n"
               "conn = db.connect(sys.argv[3])\nwrite_v1_archive(conn, '2030-01-01T00:00:00Z', sys.argv[4])\n")


def _peak_kib(argv, home):
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home))
    env.pop("MINDOS_NOW", None)
    proc = subprocess.run([sys.executable, "-c", _PEAK, *argv], env=env, capture_output=True, text=True, check=True)
    return int(proc.stdout.strip())


@pytest.mark.slow
def test_peak_memory_stays_flat_while_the_old_design_grows(tmp_path):
    """~95 MB of archived rows (the old writer peaks near 0.85 GB): the old in-memory writer's
    peak grows with them; the streamed archive, archive-check and archive-restore stay far
    below (each measured in its own process)."""
    home = tmp_path / "home"
    conn = db.connect(str(home))
    try:
        body = "x" * 3800
        with db.write(conn):
            conn.executemany(
                "INSERT INTO tasks(id, project, title, description, status, created_at, updated_at)"
                " VALUES (?, 'P', ?, ?, 'completed', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
                ((f"m{n}", f"retired task {n}", body + str(n)) for n in range(25000)))
        count = conn.execute("SELECT count(*) FROM tasks").fetchone()[0]
    finally:
        conn.close()
    assert count == 25000
    ops = os.path.join(ROOT, "ops.py")
    old = _peak_kib([sys.executable, "-c", _OLD_WRITER, ROOT, os.path.join(ROOT, "tests", "recovery"), str(home),
                     str(tmp_path / "old.json")], home)
    path = str(tmp_path / "a.tar")
    made = _peak_kib([sys.executable, ops, "archive", "--before", "2030-01-01T00:00:00Z", "--out", path], home)
    checked = _peak_kib([sys.executable, ops, "archive-check", path], home)
    restored = _peak_kib([sys.executable, ops, "archive-restore", path], home)
    print(f"peak KiB: old writer {old}, archive {made}, archive-check {checked}, archive-restore {restored}")
    assert os.path.getsize(path) > 94 * 1024 * 1024
    assert old > 400 * 1024  # the whole document in memory, several times over
    for peak in (made, checked, restored):
        # bounded by the page caches and one digest chunk of rows, not by what the archive holds
        assert peak < 200 * 1024 and peak * 4 < old


@pytest.mark.slow
def test_every_single_byte_change_of_a_streamed_archive_is_refused(conn, home, made):
    import random

    original = open(made, "rb").read()
    rng = random.Random(7)
    with tarfile.open(made, "r|") as tar:
        starts = [0, len(original) - 12000] + [info.offset_data - 512 for info in tar]
    positions = {i for start in starts for i in range(max(start, 0), min(start + 700, len(original)))}
    positions |= set(rng.sample(range(len(original)), 1500))  # headers, padding, tail and a sample of the rest
    for i in sorted(positions):
        overwrite(made, original[:i] + bytes([original[i] ^ (1 << rng.randrange(8))]) + original[i + 1:])
        with pytest.raises((IntegrityError, Refused)):
            archive.check(made, str(home))


def test_a_default_name_is_chosen_under_the_lock_and_never_replaces_an_archive(conn, home, monkeypatch):
    # two archives in one second: the name is picked inside the write transaction, so the
    # second sees the first's file; and a file that appears at the chosen name anyway is
    # refused, never replaced, with every row still in place
    from mindos.recovery import artifacts

    populate(conn)
    lifecycle.complete(conn, "t2", "claude", note="done too")
    real = artifacts.default_path
    squatter = real(str(home), "archive", ext=".tar")
    os.makedirs(os.path.dirname(squatter), exist_ok=True)
    with open(squatter, "wb") as handle:
        handle.write(b"someone else's archive")
    before = db_state(conn)
    monkeypatch.setattr(artifacts, "default_path", lambda *args, **kwargs: squatter)
    with pytest.raises(Refused, match="already exists"):
        archive.archive(conn, BEFORE)
    with open(squatter, "rb") as handle:
        assert handle.read() == b"someone else's archive"
    assert db_state(conn) == before and not _staging_left(home)
    picked = []

    def default_path(*args, **kwargs):
        picked.append(conn.in_transaction)
        return real(*args, **kwargs)

    monkeypatch.setattr(artifacts, "default_path", default_path)
    made = archive.archive(conn, BEFORE)
    assert picked == [True] and made["path"] != squatter and os.path.exists(made["path"])


@pytest.mark.parametrize("records", [{"comment": "x" * 3000}, {"size": None, "path": None}])
def test_header_records_the_writer_never_writes_are_refused(conn, home, cli, made, records):
    # a pax record slipped in front of a member (a comment, or a name given twice) changes
    # nothing restored, yet the file is not the one written: refused like any changed byte
    members = _members(made)
    with tarfile.open(made, "w", format=tarfile.PAX_FORMAT) as tar:
        for number, (info, data) in enumerate(members):
            copy = tarfile.TarInfo(info.name)
            copy.size, copy.mode = len(data), 0o600
            if number == 1:
                copy.pax_headers = {key: (value if value is not None else (str(len(data)) if key == "size"
                                                                           else info.name))
                                    for key, value in records.items()}
            tar.addfile(copy, io.BytesIO(data))
    _refused_unchanged(conn, home, cli, made, "records its writer never writes|changed")


def test_bytes_between_members_are_refused(conn, home, cli, made):
    # a well-formed member header block whose data tar skips over, slipped between two members
    members = _members(made)
    with open(made, "rb") as handle:
        raw = handle.read()
    second = members[1][0]
    extra = tarfile.TarInfo("filler")
    extra.size = 0
    block = extra.tobuf(tarfile.USTAR_FORMAT)
    header = raw[second.offset:second.offset + 512]
    assert header[:len(second.name)] == second.name.encode()
    with open(made, "wb") as handle:
        handle.write(raw[:second.offset] + block + raw[second.offset:])
    _refused_unchanged(conn, home, cli, made, "between its members|unexpected member|changed")
