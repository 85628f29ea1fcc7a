"""Hostile paths through the real front doors: artifact writers that must not overwrite,
receipts that must not exfiltrate, databases never created or repaired implicitly, targets
that must be new homes, reads that must not hang, and errors that say what happened."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, db_state, script

sys.path.insert(0, os.path.join(ROOT, "tests", "recovery"))
from recovery_helpers import populate  # noqa: E402

BEFORE = "2026-08-21T10:00:00Z"


def _bytes(path):
    with open(path, "rb") as handle:
        return handle.read()


def _retire(conn):
    from mindos.work import lifecycle

    populate(conn)
    lifecycle.complete(conn, "t2", "claude", note="done too")  # so t1, t2 and t4 can be archived


def _writers(tmp_path, home):
    """Every --out writer as (door, argv without --out)."""
    tree = tmp_path / "tree"
    tree.mkdir(exist_ok=True)
    return [
        ("ops", ["snapshot"]),
        ("ops", ["checkpoint"]),
        ("ops", ["archive", "--before", BEFORE]),
        ("ops", ["export-task", "t3"]),
        ("ops", ["brain-inventory", "--home", str(home), "--hermes-home", str(tmp_path / "nohermes"),
                 "--claude-home", str(tmp_path / "noclaude")]),
        ("ops", ["migrate-inventory", "--root", str(tree)]),
    ]


def test_every_out_writer_refuses_an_existing_file_unless_forced(conn, home, cli, tmp_path):
    _retire(conn)
    for door, argv in _writers(tmp_path, home):
        existing = tmp_path / "existing.json"
        existing.write_bytes(b"keep me")
        before = db_state(conn)
        rc, out, err = cli(door, *argv, "--out", str(existing))
        assert (rc, out) == (1, "") and "already exists; pass --force" in err and len(err.splitlines()) == 1, argv
        assert existing.read_bytes() == b"keep me"
        assert db_state(conn)[0] == before[0], argv  # not even an audit event
        rc, out, err = cli(door, *argv, "--out", str(existing), "--force")
        assert rc == 0, (argv, err)
        assert existing.read_bytes() != b"keep me" and existing.stat().st_mode & 0o777 == 0o600
        existing.unlink()


def test_no_writer_replaces_the_live_database_its_side_files_or_a_fifo_even_forced(conn, home, cli, tmp_path):
    _retire(conn)
    database = str(home / "state.db")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for door, argv in _writers(tmp_path, home):
        for target in (database, database + "-wal", database + "-shm", database + "-journal", str(fifo)):
            exists = os.path.exists(target)
            before = _bytes(database), db_state(conn)
            rc, out, err = cli(door, *argv, "--out", target, "--force")
            assert (rc, out) == (1, "") and "refusing to write" in err, (argv, target, err)
            assert "even with --force" in err
            assert (_bytes(database), db_state(conn)) == before
            assert os.path.exists(target) == exists
    assert os.path.exists(fifo) and not os.path.isfile(fifo)  # still a FIFO, never made a regular file


def test_a_symlink_at_out_is_refused_and_its_target_untouched(conn, cli, tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    (tmp_path / "link.json").symlink_to(victim)
    rc, out, err = cli("ops", "snapshot", "--out", str(tmp_path / "link.json"), "--force")
    assert rc == 1 and "symlink" in err and victim.read_bytes() == b"precious"


def _plant_receipt_link(conn, home, secret):
    """t3's receipt file replaced by a symlink to ``secret``, the row still indexing it."""
    from mindos.work import receipts

    made = receipts.add(conn, "t3", "ci", {"tests": "pass"})
    path = os.path.join(str(home), "receipts", f"{made['receipt_id']}.json")
    os.unlink(path)
    os.symlink(secret, path)
    return made


def test_artifacts_never_seal_what_a_symlinked_receipt_points_at(conn, home, cli, tmp_path):
    _retire(conn)
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$SECRETHASH:19000:0:99999:7:::\n")
    from mindos.work import lifecycle

    made = _plant_receipt_link(conn, home, secret)
    lifecycle.cancel(conn, "t3", "op", reason="done with it")
    outs = {"snapshot": tmp_path / "snap.json", "export-task": tmp_path / "t3.json",
            "archive": tmp_path / "archive.json"}
    reports = [cli("ops", "snapshot", "--out", str(outs["snapshot"])),
               cli("ops", "export-task", "t3", "--out", str(outs["export-task"])),
               cli("ops", "archive", "--before", "2027-01-01T00:00:00Z", "--out", str(outs["archive"]))]
    for rc, out, err in reports:
        assert rc == 0, err
        refused = json.loads(out)["receipt_files_refused"]  # left out, and said so
        assert refused == [{"path": f"receipts/{made['receipt_id']}.json", "reason": refused[0]["reason"]}]
        assert "symlink" in refused[0]["reason"]
    for name, path in outs.items():
        assert b"SECRETHASH" not in path.read_bytes(), name
    assert secret.read_text().startswith("root:")  # and the target is still there, untouched


def test_restores_never_write_through_a_symlinked_receipts_directory(conn, home, cli, tmp_path):
    populate(conn)
    snap = tmp_path / "snap.json"
    assert cli("ops", "snapshot", "--out", str(snap))[0] == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(home / "receipts")
    (home / "receipts").symlink_to(outside)
    before = db_state(conn)[0]
    rc, out, err = cli("ops", "snapshot-restore", str(snap), "--force")
    assert (rc, out) == (1, "") and "symlink" in err and len(err.splitlines()) == 1
    assert os.listdir(outside) == [] and db_state(conn)[0] == before


def test_archive_restore_never_writes_through_a_symlinked_receipts_directory(conn, home, cli, tmp_path):
    _retire(conn)
    path = tmp_path / "archive.json"
    rc, out, err = cli("ops", "archive", "--before", BEFORE, "--out", str(path))
    assert rc == 0 and json.loads(out)["counts"]["receipt_files"] == 1
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in os.listdir(home / "receipts"):
        os.unlink(home / "receipts" / name)
    os.rmdir(home / "receipts")
    (home / "receipts").symlink_to(outside)
    before = db_state(conn)[0]
    rc, out, err = cli("ops", "archive-restore", str(path))
    assert (rc, out) == (1, "") and "symlink" in err
    assert os.listdir(outside) == [] and db_state(conn)[0] == before


@pytest.mark.bare_home
@pytest.mark.parametrize("content", [b"", b"this is not a database\n" * 10])
def test_an_empty_or_foreign_state_db_is_refused_by_every_command_and_left_byte_identical(home, cli, content):
    home.mkdir()
    (home / "state.db").write_bytes(content)
    for door, argv in [("autopilot", ["list"]), ("autopilot", ["create", "--project", "P", "--title", "x"]),
                       ("autopilot", ["init"]), ("autopilot", ["show", "t1"]), ("autopilot", ["next"]),
                       ("ops", ["snapshot"]), ("autopilot", ["verify-chain"]), ("ops", ["nanny"]),
                       ("mood_poller", ["mood", "list"])]:
        rc, out, err = cli(door, *argv)
        assert (rc, out) == (1, ""), (argv, rc, out, err)
        assert ("is empty (0 bytes)" if not content else "not a valid SQLite database") in err, (argv, err)
        assert len(err.splitlines()) == 1
        assert (home / "state.db").read_bytes() == content
        assert sorted(os.listdir(home)) == ["state.db"], argv  # no -wal, -journal, lock or receipts
    rc, out, err = cli("ops", "doctor")
    report = json.loads(out)
    assert rc == 1 and report["ok"] is False
    assert set(report["problems_by_kind"]) == ({"database_empty"} if not content else {"database_unusable"})
    assert (home / "state.db").read_bytes() == content


@pytest.mark.bare_home
def test_init_builds_a_complete_database_and_never_leaves_an_empty_one(home, cli):
    rc, out, err = cli("autopilot", "init")
    assert rc == 0, err
    assert sorted(os.listdir(home)) == ["receipts", "state.db"]  # no temp file, no lock of the temp
    assert _bytes(home / "state.db")[:16] == b"SQLite format 3\x00"
    assert cli("autopilot", "list")[0] == 0


# System directories through the door are tried where a regression could write nothing
# (/proc, /sys); tests/core/test_files.py proves /etc, /usr, / and HOME are refused.
@pytest.mark.bare_home
@pytest.mark.parametrize("system", ["/proc/mindos-home", "/sys/mindos-home"])
def test_init_never_makes_a_system_directory_a_home(monkeypatch, cli, system):
    monkeypatch.setenv("HERMES_AUTOPILOT_HOME", system)
    rc, out, err = cli("autopilot", "init")
    assert (rc, out) == (1, "") and "system directory" in err
    assert not os.path.exists(os.path.join(system, "state.db"))


def _readonly_runner():
    """A way to run a front door as a user who cannot write the home, or None."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        return None
    runner = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = subprocess.run(runner + [sys.executable, "-c", f"import sys; sys.path.insert(0, {ROOT!r}); import mindos"],
                           capture_output=True, timeout=60)
    return runner if probe.returncode == 0 else None  # this interpreter or checkout unreadable to nobody


def test_a_read_only_home_can_be_read_and_refuses_writes_clearly():
    runner = _readonly_runner()
    if runner is None:
        pytest.skip("no way to drop privileges here")
    import pathlib
    import tempfile

    scratch = pathlib.Path(tempfile.mkdtemp(prefix="mindos-ro-"))  # outside pytest's private (0700) tree
    home = scratch / "home"
    try:
        _read_only_home(runner, scratch, home)
    finally:
        for path in (scratch, home, home / "receipts"):
            if path.exists():
                path.chmod(0o700)
        shutil.rmtree(scratch, ignore_errors=True)


def _read_only_home(runner, tmp_path, home):
    assert script("autopilot.py", "init", home=home).returncode == 0
    assert script("autopilot.py", "create", "--project", "P", "--title", "readable", "--id", "t1",
                  home=home).returncode == 0
    for path in (tmp_path, home, home / "receipts"):
        path.chmod(0o755)
    for name in os.listdir(home):
        (home / name).chmod(0o444 if name.startswith("state.db") else 0o555)
    home.chmod(0o555)
    before = {name: _bytes(home / name) for name in os.listdir(home) if (home / name).is_file()}
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home), PYTHONDONTWRITEBYTECODE="1")

    def run(*argv):
        return subprocess.run(runner + [sys.executable, os.path.join(ROOT, "autopilot.py"), *argv],
                              capture_output=True, text=True, env=env, timeout=60)

    shown = run("show", "t1")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["task"]["title"] == "readable"
    assert shown.stderr.strip() == f"note: home {home} is read-only: reads work, writes are refused"
    made = run("create", "--project", "P", "--title", "x")
    assert made.returncode == 1 and made.stdout == ""
    assert made.stderr.strip() == f"home {home} is read-only: reads work, writes are refused; nothing was changed"
    assert {name: _bytes(home / name) for name in before} == before
    home.chmod(0o777)  # a writable directory, a database file this user cannot write
    (home / "receipts").chmod(0o777)
    made = run("--json-errors", "create", "--project", "P", "--title", "x")
    assert made.returncode == 1 and made.stdout == ""
    assert json.loads(made.stderr)["error"]["code"] == "read_only"
    assert _bytes(home / "state.db") == before["state.db"]


def test_brain_import_refuses_system_directories_and_existing_trees(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    (tmp_path / "me").mkdir()
    inventory = tmp_path / "brain.json"
    rc, out, err = cli("ops", "brain-inventory", "--out", str(inventory), "--hermes-home", str(tmp_path / "h"),
                       "--claude-home", str(tmp_path / "c"))
    assert rc == 0, err
    for target in ("/proc/mindos-home", "/sys/mindos-home", str(tmp_path / "me")):  # see the note above
        rc, out, err = cli("ops", "brain-import", "--inventory", str(inventory), "--target", target, "--apply")
        assert (rc, out) == (1, "") and "system directory" in err, target
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "mine.txt").write_text("mine")
    rc, out, err = cli("ops", "brain-import", "--inventory", str(inventory), "--target", str(occupied), "--apply")
    assert (rc, out) == (1, "") and "exists and is not empty" in err
    assert os.listdir(occupied) == ["mine.txt"]
    fresh = tmp_path / "fresh"
    assert cli("ops", "brain-import", "--inventory", str(inventory), "--target", str(fresh), "--apply")[0] == 0
    rerun = cli("ops", "brain-import", "--inventory", str(inventory), "--target", str(fresh), "--apply")
    assert rerun[0] == 0 and json.loads(rerun[1])["noop"] is True  # a re-run of the same import is still a no-op


def test_memory_import_of_dev_zero_and_a_fifo_end_at_once(home, tmp_path):
    fifo = tmp_path / "bank.jsonl"
    os.mkfifo(fifo)
    for source, needle in (("/dev/zero", "character device"), (str(fifo), "FIFO")):
        for extra in ([], ["--apply"]):
            done = script("autopilot.py", "memory-import", source, *extra, home=home, timeout=30)
            assert done.returncode == 1 and done.stdout == "", done.stderr
            assert needle in done.stderr and "not a regular file" in done.stderr


def test_session_scan_and_ingest_never_block_on_a_fifo(home, tmp_path):
    root = tmp_path / "transcripts"
    root.mkdir()
    (root / "real.jsonl").write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}) + "\n")
    os.mkfifo(root / "pipe.jsonl")
    for argv in (["session-scan", "--root", str(root)],
                 ["session-ingest", "--source", "claude-code", "--root", str(root)]):
        done = script("autopilot.py", *argv, home=home, timeout=30)
        assert done.returncode in (0, 1), done.stderr
        assert "not_regular" in done.stdout, done.stdout


def test_non_regular_and_oversized_files_are_named_as_such(conn, cli, tmp_path):
    fifo = tmp_path / "snap.json"
    os.mkfifo(fifo)
    rc, out, err = cli("ops", "snapshot-check", str(fifo))
    assert rc == 1 and "FIFO" in err and "no such file" not in err
    big = tmp_path / "big.txt"
    with open(big, "wb") as handle:
        handle.truncate(64 * 1024 * 1024)  # 64 MiB (sparse)
    conn.execute("SELECT 1")
    from mindos.work import tasks

    tasks.create(conn, project="P", title="x", task_id="t1")
    rc, out, err = cli("autopilot", "note", "t1", "--content-file", str(big), "--source", "a")
    assert rc == 2 and "too large" in err and "the limit is" in err and "UTF-8" not in err
    rc, out, err = cli("autopilot", "note", "t1", "--content-file", "/dev/zero", "--source", "a")
    assert rc == 2 and "character device" in err


def test_page_set_file_errors_name_the_problem_not_a_python_class(conn, cli, tmp_path):
    latin = tmp_path / "latin1.md"
    latin.write_bytes(b"caf\xe9")
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    for path, needle in ((tmp_path, "directory"), (tmp_path / "missing.md", "no such file"), (fifo, "FIFO"),
                         (latin, "not valid UTF-8")):
        rc, out, err = cli("mood_poller", "page", "set", "Moods/Wake texts", "--editor", "re", "--file", str(path))
        assert (rc, out) == (2, "") and needle in err, (path, err)
        for name in ("Error", "IsADirectory", "FileNotFound", "UnicodeDecode"):
            assert name not in err, err


def test_the_next_snapshot_sweeps_a_killed_snapshots_stale_temp_file(conn, home, cli):
    from mindos.core import clock, files

    backups = home / "backups"
    backups.mkdir()
    stale = backups / f".snapshot-20260821T080000Z.json.{_dead_pid()}.0123abcd.tmp"
    live = backups / f".snapshot-20260821T080500Z.json.{os.getpid()}.0123abcd.tmp"
    for path in (stale, live):
        path.write_bytes(b'{"format":"autopilot-snap')
        old = clock.now().timestamp() - files.STALE_TEMP_SECONDS - 60
        os.utime(path, (old, old))
    rc, out, err = cli("ops", "snapshot")
    assert rc == 0, err
    names = os.listdir(backups)
    assert stale.name not in names and live.name in names
    assert len([n for n in names if n.startswith("snapshot-") and n.endswith(".tar")]) == 1  # a streamed snapshot


def _dead_pid():
    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid += 1


@pytest.mark.bare_home
def test_init_sweeps_the_private_database_a_killed_init_left(home, cli):
    from mindos.core import clock, files

    home.mkdir()
    stale = home / f".state.db.{_dead_pid()}.0123abcd.tmp"
    live = home / f".state.db.{os.getpid()}.89abcdef.tmp"
    old = clock.now().timestamp() - files.STALE_TEMP_SECONDS - 60
    for path in (stale, live, home / (stale.name + ".lock"), home / (stale.name + "-wal")):
        path.write_bytes(b"")
        os.utime(path, (old, old))
    assert cli("autopilot", "init")[0] == 0
    assert sorted(os.listdir(home)) == sorted([live.name, "receipts", "state.db"])


@pytest.mark.bare_home
def test_a_fifo_named_state_db_or_given_as_an_inventory_is_named_as_such(home, cli, tmp_path):
    home.mkdir()
    os.mkfifo(home / "state.db")
    for door, argv in (("autopilot", ["list"]), ("autopilot", ["init"])):
        rc, out, err = cli(door, *argv)
        assert (rc, out) == (1, "") and "is a FIFO (named pipe), not a regular file" in err, err
    rc, out, err = cli("ops", "doctor")
    assert rc == 1 and "FIFO" in json.loads(out)["problems"][0]["detail"]
    fifo = tmp_path / "inventory.json"
    os.mkfifo(fifo)
    for argv in (["brain-inventory-check", str(fifo)], ["onboard", "--inventory", str(fifo)]):
        rc, out, err = cli("ops", *argv)
        assert rc == 1 and "FIFO" in err and "not found" not in err, (argv, err)
