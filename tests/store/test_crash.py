"""A process killed in the middle of a write leaves one coherent state.

Each test runs a real interpreter that is SIGKILLed at the worst moment: inside the write
transaction, after the row (and for receipts the sealed file) were written but before the
commit.  The survivors must see no half-made task or receipt and an intact audit chain.
"""

import json
import os
import signal
import subprocess
import sys

import pytest

from conftest import ROOT
from mindos.store import db, ledger
from mindos.work import receipts, tasks

KILL_AT_AUDIT_APPEND = """
import os, signal, sys
sys.path.insert(0, {root!r})
from mindos.store import db, ledger
from mindos.work import receipts, tasks
conn = db.connect({home!r})
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
ledger.append_event = die
{action}
"""


def _run_killed(home, action):
    code = KILL_AT_AUDIT_APPEND.format(root=ROOT, home=str(home), action=action)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_killed_create_leaves_no_task_and_a_valid_chain(conn, home):
    tasks.create(conn, project="P", title="survivor", task_id="t0")
    _run_killed(home, "tasks.create(conn, project='P', title='doomed', task_id='t1')")
    fresh = db.connect(str(home))
    try:
        assert [r[0] for r in fresh.execute("SELECT id FROM tasks")] == ["t0"]
        assert ledger.verify_chain(fresh) == {"ok": True, "events": 1, "problems": []}
        # the home is fully usable afterwards: the same id can be created now
        assert tasks.create(fresh, project="P", title="again", task_id="t1")["id"] == "t1"
    finally:
        fresh.close()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_killed_receipt_leaves_no_row_and_no_torn_file(conn, home):
    tasks.create(conn, project="P", title="t", task_id="t1")
    _run_killed(home, "receipts.add(conn, 't1', 'verification', {'tests': 'pass'})")
    fresh = db.connect(str(home))
    try:
        assert fresh.execute("SELECT count(*) FROM receipts").fetchone()[0] == 0
        assert [e["action"] for e in ledger.events(fresh)["events"]] == ["created"]
        assert ledger.verify_chain(fresh)["ok"] is True
        names = os.listdir(os.path.join(str(home), "receipts"))
        # the sealed file was complete before the kill: whole JSON, never a fragment
        for name in names:
            with open(os.path.join(str(home), "receipts", name), encoding="utf-8") as handle:
                assert json.load(handle)["payload"] == {"tests": "pass"}
        assert receipts.metrics(fresh) == {"receipt_files_unindexed": len(names)}
    finally:
        fresh.close()
