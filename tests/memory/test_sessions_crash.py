"""kill -9 inside session-ingest --apply: the cache is fully before or fully after, and a
re-run completes it.

A real interpreter runs the ingest and SIGKILLs itself at the K-th statement the store
executes inside the ingest's write transaction (K over every point from the first DELETE to
the COMMIT itself), and once just after the COMMIT returned.
"""

import os
import shutil
import signal
import subprocess
import sys

import pytest

import sessionkit
from conftest import kill_at_statement_script
from mindos.core import clock
from mindos.memory import sessions
from mindos.store import db, ledger

pytestmark = pytest.mark.slow  # killed processes and races: the full suite runs them, the fast loop skips them

NOW = "2026-08-21T10:00:00Z"

AWS = "AKIA" + "Z7QW3RTY6UIO2PAS"


def _cache(home):
    conn = db.connect(str(home))
    try:
        files = [tuple(r) for r in conn.execute("SELECT source, path, file_hash, messages FROM session_files ORDER BY path")]
        messages = [tuple(r) for r in conn.execute(
            "SELECT f.path, m.seq, m.role, m.content FROM session_messages m JOIN session_files f ON f.id = m.file_id"
            " ORDER BY f.path, m.seq")]
        events = [r[0] for r in conn.execute("SELECT action FROM audit_events ORDER BY id")]
        chain = ledger.verify_chain(conn)["ok"]
        from mindos.store import fts
        drift = fts.drift(conn, "session_messages_fts")["ok"]
        return files, messages, events, chain, drift
    finally:
        conn.close()


def _prepare(tmp_path, name):
    """A home with one earlier ingest, and a store where one file changed and two are new."""
    root = tmp_path / "store"
    shutil.rmtree(root, ignore_errors=True)
    sessionkit.write(str(root / "a" / "s1.jsonl"), sessionkit.claude_session())
    sessionkit.write(str(root / "a" / "s2.jsonl"), sessionkit.generic_lines([("user", "old text")]))
    home = tmp_path / name
    conn = db.connect(str(home))
    clock.set_now(NOW)
    sessions.ingest(conn, "claude-code", str(root), apply=True)
    conn.close()
    return home, root


def _change(root):
    sessionkit.write(str(root / "a" / "s2.jsonl"), sessionkit.generic_lines([("user", "new text"), ("assistant", "x")]))
    sessionkit.write(str(root / "b" / "s3.jsonl"), sessionkit.codex_rollout())
    sessionkit.write(str(root / "b" / "s4.jsonl"), sessionkit.generic_lines([("user", f"token {AWS} here")]))


def _run(home, root, kill_at=0, after_commit=False):
    code = kill_at_statement_script(home, f"from mindos.memory import sessions\nsessions.ingest(conn, 'claude-code', {str(root)!r}, apply=True, redact=True)", kill_at=kill_at,
                                    after_commit=after_commit)
    env = dict(os.environ, MINDOS_NOW=NOW)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_killed_ingest_is_all_or_nothing_and_rerun_completes(tmp_path):
    reference, root = _prepare(tmp_path, "reference")
    before = _cache(reference)
    _change(root)
    done = _run(reference, root)
    assert done.returncode == 0, done.stderr
    statements = int(done.stdout.strip())  # statements in the transaction, COMMIT included
    after = _cache(reference)
    assert after != before and after[3] and after[4]
    points = list(range(1, statements + 1))
    outcomes = {"before": 0, "after": 0}
    for kill_at in points + ["after_commit"]:
        shutil.rmtree(tmp_path / "victim", ignore_errors=True)
        victim, _ = _prepare(tmp_path, "victim")
        _change(root)
        killed = _run(victim, root, kill_at=0 if kill_at == "after_commit" else kill_at,
                      after_commit=kill_at == "after_commit")
        assert killed.returncode == -signal.SIGKILL, (kill_at, killed.stderr)
        state = _cache(victim)
        assert state in (before, after), f"kill at statement {kill_at} left a partial cache"
        outcomes["before" if state == before else "after"] += 1
        rerun = _run(victim, root)
        assert rerun.returncode == 0, rerun.stderr
        assert _cache(victim) == after
    print(f"kill points: {len(points) + 1}")
    assert len(points) >= 6 and outcomes["before"] == len(points) and outcomes["after"] == 1
