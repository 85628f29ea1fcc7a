"""SIGKILL at many points inside snapshot-restore, archive, archive-restore and import-task.

Each operation is first run to completion in a scratch copy of a prepared home, counting
its kill points (every SQL statement, atomic rename, fsync and unlink).  It is then rerun
from the same starting copy, killed at evenly spread points across that whole range.  After
every kill the database must be exactly the before state or exactly the after state, the
doctor clean and the audit chain intact.
"""

import os
import shutil
import signal
import subprocess
import sys

import pytest

from conftest import ROOT
from recovery_helpers import populate, table_rows
from mindos.recovery import archive, doctor, snapshot, workorder
from mindos.store import db, ledger
from mindos.work import lifecycle, tasks

NOW = "2026-08-21T09:05:00Z"
# spread points per operation; MINDOS_CRASH_POINTS=all tries every single one (minutes)
_WANTED = os.environ.get("MINDOS_CRASH_POINTS", "24")
MAX_POINTS = None if _WANTED == "all" else int(_WANTED)

RUNNER = r"""
import atexit, os, signal, sys
sys.path.insert(0, {root!r})
from mindos.store import db
limit = int(os.environ["KILL_AT"])
count = [0]
def tick():
    count[0] += 1
    if count[0] == limit:
        os.kill(os.getpid(), signal.SIGKILL)
def counted(original):
    def wrapper(*args, **kwargs):
        tick()
        return original(*args, **kwargs)
    return wrapper
for name in ("execute", "executemany"):
    setattr(db.Connection, name, counted(getattr(db.Connection, name)))
for name in ("replace", "unlink", "fsync"):
    setattr(os, name, counted(getattr(os, name)))
def report():
    with open(os.environ["COUNT_FILE"], "w") as handle:
        handle.write(str(count[0]))
atexit.register(report)
from mindos.cli.ops import main
sys.exit(main({argv!r}))
"""

pytestmark = [pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals"),
              pytest.mark.slow]  # killed processes: the full suite runs them, the fast loop skips them


def _run(work, argv, kill_at, count_file):
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=str(work), MINDOS_NOW=NOW, KILL_AT=str(kill_at),
               COUNT_FILE=str(count_file))
    code = RUNNER.format(root=ROOT, argv=list(argv))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def _state(work):
    conn = db.connect(str(work))
    try:
        return table_rows(conn)
    finally:
        conn.close()


def _kill_matrix(tmp_path, template, argv):
    """Return how many kill points were tried (all of them must land before or after)."""
    work = tmp_path / "work"
    count_file = tmp_path / "count"

    def reset():
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(template, work)

    reset()
    before = _state(work)
    done = _run(work, argv, 0, count_file)
    assert done.returncode == 0, done.stderr
    total = int(count_file.read_text())
    after = _state(work)
    assert after != before
    step = 1 if MAX_POINTS is None else max(1, total // MAX_POINTS)
    points = sorted(set(range(1, total + 1, step)) | {total - 2, total - 1, total} - {0, -1})
    killed = 0
    for point in points:
        reset()
        proc = _run(work, argv, point, count_file)
        if proc.returncode == 0:
            assert _state(work) == after
            continue
        assert proc.returncode == -signal.SIGKILL, (point, proc.stderr)
        killed += 1
        state = _state(work)
        assert state in (before, after), f"kill point {point} of {total} left a mixed state"
        report = doctor.run(str(work))
        assert report["ok"], (point, report["problems"])
        conn = db.connect(str(work))
        try:
            assert ledger.verify_chain(conn)["ok"]
        finally:
            conn.close()
    return killed, total


def _prepared(tmp_path, name):
    from mindos.recovery import keys

    path = tmp_path / name
    conn = db.connect(str(path))
    populate(conn)
    keys.home_key(str(path), create=True)  # one signing key for every copy: artifacts come out identical
    return conn, path


def test_snapshot_restore_survives_sigkill(tmp_path):
    conn, path = _prepared(tmp_path, "template")
    made = snapshot.create(conn, out=str(tmp_path / "snap.json"))
    tasks.create(conn, project="P", title="after the snapshot", task_id="t9")
    lifecycle.cancel(conn, "t3", "op")
    conn.close()
    killed, total = _kill_matrix(tmp_path, path, ["snapshot-restore", made["path"], "--force"])
    assert killed >= min(10, total - 3)
    print(f"snapshot-restore: {killed} kill points of {total}")


def test_archive_survives_sigkill(tmp_path):
    conn, path = _prepared(tmp_path, "template")
    lifecycle.complete(conn, "t2", "claude")
    conn.close()
    killed, total = _kill_matrix(tmp_path, path, ["archive", "--before", "2026-08-21T10:00:00Z",
                                                  "--out", str(tmp_path / "archive.json"), "--force"])
    assert killed >= 10
    print(f"archive: {killed} kill points of {total}")


def test_archive_restore_survives_sigkill(tmp_path):
    conn, path = _prepared(tmp_path, "template")
    lifecycle.complete(conn, "t2", "claude")
    made = archive.archive(conn, "2026-08-21T10:00:00Z", out=str(tmp_path / "archive.tar"))
    conn.close()
    killed, total = _kill_matrix(tmp_path, path, ["archive-restore", made["path"]])
    assert killed >= 10
    print(f"archive-restore: {killed} kill points of {total}")


def test_import_task_survives_sigkill(tmp_path):
    source, _ = _prepared(tmp_path, "source")
    order = str(tmp_path / "t1.json")
    workorder.export_task(source, "t1", out=order)
    source.close()
    target = tmp_path / "template"
    conn = db.connect(str(target))
    tasks.create(conn, project="P", title="already here", task_id="t0")
    conn.close()
    killed, total = _kill_matrix(tmp_path, target, ["import-task", order, "--trust-unsigned"])
    assert killed >= 10
    print(f"import-task: {killed} kill points of {total}")
