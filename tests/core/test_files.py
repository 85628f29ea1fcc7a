"""The file-safety module: no-follow, non-blocking, capped reads; one bounded walk; the
``--out`` writer; the new-tree rule; the stale temporary file sweep."""

import os
import socket
import time

import pytest

from mindos.core import clock, files
from mindos.errors import InvalidInput, NotFound, Refused


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    return path


def test_read_bytes_reads_a_regular_file_within_its_cap(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"hello")
    assert files.read_bytes(str(path), max_bytes=5) == b"hello"


def test_a_fifo_is_refused_at_once_and_named(fifo):
    started = time.monotonic()
    with pytest.raises(Refused, match=r"is a FIFO \(named pipe\), not a regular file") as caught:
        files.read_bytes(str(fifo), max_bytes=100)
    assert caught.value.code == "not_regular" and time.monotonic() - started < 5


def test_devices_directories_and_sockets_are_named_as_such(tmp_path):
    with pytest.raises(Refused, match="is a character device, not a regular file"):
        files.read_bytes("/dev/zero", max_bytes=100)
    with pytest.raises(Refused, match="is a directory, not a regular file"):
        files.read_bytes(str(tmp_path), max_bytes=100)
    path = str(tmp_path / "s.sock")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(path)
        with pytest.raises(Refused, match="is a socket") as caught:
            files.read_bytes(path, max_bytes=100)
        assert caught.value.code == "not_regular"
    finally:
        server.close()


def test_a_missing_file_is_not_found_and_a_symlink_is_never_followed(tmp_path):
    with pytest.raises(NotFound, match="no such file"):
        files.read_bytes(str(tmp_path / "missing"), max_bytes=10)
    secret = tmp_path / "secret"
    secret.write_text("s3cret")
    (tmp_path / "link").symlink_to(secret)
    with pytest.raises(Refused, match="symlink") as caught:
        files.read_bytes(str(tmp_path / "link"), max_bytes=100)
    assert caught.value.code == "symlink"
    assert files.read_bytes(str(tmp_path / "link"), max_bytes=100, follow_symlinks=True) == b"s3cret"


def test_size_cap_is_checked_before_reading_and_says_the_limit(tmp_path):
    path = tmp_path / "big"
    path.write_bytes(b"x" * 101)
    with pytest.raises(Refused, match="is too large: 101 bytes, the limit is 100 bytes") as caught:
        files.read_bytes(str(path), max_bytes=100)
    assert caught.value.code == "too_large"


def test_the_cap_holds_while_reading_a_file_that_grew(tmp_path, monkeypatch):
    path = tmp_path / "grows"
    path.write_bytes(b"x" * 50)
    real_fstat = os.fstat

    class Lying:  # a filesystem that reports a small size for a large file
        def __init__(self, st):
            self.st_mode, self.st_size = st.st_mode, 1

    monkeypatch.setattr(files.os, "fstat", lambda fd: Lying(real_fstat(fd)))
    with pytest.raises(Refused, match="too large"):
        files.read_bytes(str(path), max_bytes=10)


def test_walk_never_follows_links_lists_specials_and_counts_what_it_leaves(tmp_path):
    root = tmp_path / "root"
    (root / "b" / "deep").mkdir(parents=True)
    (root / "a.txt").write_text("a")
    (root / "b" / "c.txt").write_text("c")
    (root / "b" / "deep" / "d.txt").write_text("d")
    os.mkfifo(root / "b" / "pipe")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (root / "linkdir").symlink_to(outside)
    (root / "linkfile").symlink_to(outside / "secret.txt")
    found, counts = files.walk(str(root))
    assert [rel for rel, _ in found] == ["a.txt", "b/c.txt", "b/pipe", "b/deep/d.txt"]
    assert counts == {"symlinks": 2, "special": 1, "overflow": 0, "too_deep": 0, "unreadable_dirs": 0}
    found, counts = files.walk(str(root), keep=lambda rel: rel.endswith(".txt"), max_files=2, max_depth=1)
    assert [rel for rel, _ in found] == ["a.txt", "b/c.txt"] and counts["too_deep"] == 1
    found, counts = files.walk(str(root), keep=lambda rel: rel.endswith(".txt"), max_files=1)
    assert [rel for rel, _ in found] == ["a.txt"] and counts["overflow"] == 2
    with pytest.raises(Refused, match="symlink"):
        files.walk(str(root / "linkdir"))
    with pytest.raises(NotFound):
        files.walk(str(tmp_path / "missing"))


def test_check_out_refuses_existing_paths_without_force(tmp_path):
    path = tmp_path / "out.json"
    assert files.check_out(str(path)) == str(path)
    path.write_text("old")
    with pytest.raises(Refused, match="already exists; pass --force") as caught:
        files.check_out(str(path))
    assert caught.value.code == "exists"
    assert files.check_out(str(path), force=True) == str(path)


def test_check_out_never_allows_a_database_its_side_files_a_link_or_a_special_file(home, tmp_path, fifo):
    database = str(home / "state.db")
    for target in (database, database + "-wal", database + "-shm", database + "-journal", database + ".lock"):
        with pytest.raises(Refused, match="never overwritten, even with --force") as caught:
            files.check_out(target, force=True)
        assert caught.value.code == "protected"
    with pytest.raises(Refused, match="FIFO"):
        files.check_out(str(fifo), force=True)
    (tmp_path / "link.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(Refused, match="symlink"):
        files.check_out(str(tmp_path / "link.json"), force=True)
    with pytest.raises(Refused, match="directory"):
        files.check_out(str(tmp_path), force=True)


def test_write_new_is_atomic_0600_and_never_replaces_without_force(tmp_path):
    path = tmp_path / "sub" / "out.json"
    files.write_new(str(path), b"one")
    assert path.read_bytes() == b"one" and path.stat().st_mode & 0o777 == 0o600
    with pytest.raises(Refused, match="already exists"):
        files.write_new(str(path), b"two")
    assert path.read_bytes() == b"one"
    files.write_new(str(path), b"two", force=True)
    assert path.read_bytes() == b"two"
    assert sorted(os.listdir(path.parent)) == ["out.json"]  # no temp file left


def test_write_new_refuses_a_file_that_appears_between_check_and_link(tmp_path, monkeypatch):
    tmp_path = tmp_path / "outs"
    tmp_path.mkdir()
    path = tmp_path / "out.json"
    real_check = files.check_out

    def racing(target, *, force=False):
        checked = real_check(target, force=force)
        path.write_bytes(b"theirs")  # another process wins the name meanwhile
        return checked

    monkeypatch.setattr(files, "check_out", racing)
    with pytest.raises(Refused, match="already exists"):
        files.write_new(str(path), b"ours")
    assert path.read_bytes() == b"theirs" and os.listdir(tmp_path) == ["out.json"]


def test_stale_temps_of_dead_writers_are_swept_live_and_fresh_ones_kept(tmp_path):
    tmp_path = tmp_path / "backups"
    tmp_path.mkdir()
    dead_pid = _dead_pid()
    old = clock.now().timestamp() - files.STALE_TEMP_SECONDS - 10
    stale = tmp_path / f".snapshot-1.json.{dead_pid}.0123abcd.tmp"
    live = tmp_path / f".snapshot-2.json.{os.getpid()}.0123abcd.tmp"
    fresh = tmp_path / f".snapshot-3.json.{dead_pid}.89abcdef.tmp"
    other = tmp_path / ".not-ours.tmp"
    for path in (stale, live, fresh, other):
        path.write_bytes(b"partial")
    for path in (stale, live, other):
        os.utime(path, (old, old))
    assert files.stale_temps(str(tmp_path)) == [stale.name]
    assert files.sweep_stale_temps(str(tmp_path)) == [stale.name]
    assert sorted(os.listdir(tmp_path)) == sorted([live.name, fresh.name, other.name])
    files.write_new(str(tmp_path / "next.json"), b"{}")  # the next writer sweeps too
    clock.set_now("2027-01-01T00:00:00Z")  # an hour later by the package clock: fresh is stale now
    files.write_new(str(tmp_path / "later.json"), b"{}")
    assert fresh.name not in os.listdir(tmp_path) and live.name in os.listdir(tmp_path)


def test_stale_scratch_directories_by_pattern_never_a_symlink_or_a_file(tmp_path):
    dead_pid = _dead_pid()
    old = clock.now().timestamp() - files.STALE_TEMP_SECONDS - 10
    stale = tmp_path / f".staging.{dead_pid}.0123abcd"
    live = tmp_path / f".staging.{os.getpid()}.0123abcd"
    for path in (stale, live):
        path.mkdir()
    plain = tmp_path / f".staging.{dead_pid}.89abcdef"
    plain.write_bytes(b"a file, not a scratch directory")
    link = tmp_path / f".staging.{dead_pid}.deadbeef"
    link.symlink_to(stale)
    for path in (stale, live, plain):
        os.utime(path, (old, old))
    os.utime(link, (old, old), follow_symlinks=False)
    pattern = r"\.staging\.([0-9]{1,10})\.[0-9a-f]{8}"
    assert files.stale_temps(str(tmp_path), pattern=pattern, directories=True) == [stale.name]
    assert files.stale_temps(str(tmp_path), pattern=pattern) == [plain.name]


def test_check_new_tree_refuses_system_directories_home_and_non_empty_targets(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    (tmp_path / "me").mkdir()
    for target in ("/", "/etc", "/etc/mindos", "/usr/local/x", "/bin", "/tmp", "/var", str(tmp_path / "me")):
        with pytest.raises(Refused, match="system directory") as caught:
            files.check_new_tree(target)
        assert caught.value.code == "system_directory"
    (tmp_path / "sneaky").symlink_to("/etc")
    with pytest.raises(Refused, match="system directory"):
        files.check_new_tree(str(tmp_path / "sneaky"))
    assert files.check_new_tree(str(tmp_path / "new")) == str(tmp_path / "new")
    (tmp_path / "empty").mkdir()
    assert files.check_new_tree(str(tmp_path / "empty"))
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("x")
    with pytest.raises(Refused, match="exists and is not empty") as caught:
        files.check_new_tree(str(tmp_path / "used"))
    assert caught.value.code == "not_empty"
    assert files.check_new_tree(str(tmp_path / "used"), allow=lambda names: names == ["x"])


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


def test_walk_root_names_the_flag_and_refuses_links_and_non_directories(tmp_path):
    (tmp_path / "tree").mkdir()
    (tmp_path / "file.txt").write_text("x")
    os.symlink(tmp_path / "tree", tmp_path / "link")
    assert files.walk_root(str(tmp_path / "tree")) == str(tmp_path / "tree")
    with pytest.raises(InvalidInput, match="invalid --root: expected a directory path"):
        files.walk_root("")
    with pytest.raises(Refused, match="--root .*link is a symlink; symlinks are never followed"):
        files.walk_root(str(tmp_path / "link"))
    for missing in ("file.txt", "nope"):
        with pytest.raises(NotFound, match=f"--from .*{missing} is not a directory"):
            files.walk_root(str(tmp_path / missing), flag="--from")
