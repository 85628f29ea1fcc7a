"""kill -9 inside migrate-import --apply: the target is fully before or fully after, and a
re-run completes it (every statement of the import's write transaction, COMMIT included,
plus just after the COMMIT)."""

import os
import shutil
import signal
import subprocess
import sys

import pytest

import migratekit
from conftest import kill_at_statement_script
from mindos.core import clock
from mindos.migration import inventory as inv
from mindos.store import db, ledger

pytestmark = pytest.mark.slow  # killed processes and races: the full suite runs them, the fast loop skips them

NOW = "2026-08-21T10:00:00Z"
TABLES = ("tasks", "dependencies", "receipts", "notes", "handoffs", "audit_events")


def _state(home):
    conn = db.connect(str(home))
    try:
        rows = {t: sorted(tuple(r) for r in conn.execute(f"SELECT * FROM {t}")) for t in TABLES if t != "tasks"}
        rows["tasks"] = sorted(tuple(r)[1:] for r in conn.execute("SELECT * FROM tasks"))
        folder = os.path.join(str(home), "receipts")
        indexed = {r[0] for r in conn.execute("SELECT path FROM receipts")}
        return rows, ledger.verify_chain(conn)["ok"], indexed
    finally:
        conn.close()


def _prepare(tmp_path, name, root, out):
    home = tmp_path / name
    shutil.rmtree(home, ignore_errors=True)
    conn = db.connect(str(home))
    clock.set_now(NOW)
    summary = inv.inventory(conn, root, out, force=True)
    conn.close()
    return home, summary["plan"][0]["source_id"]


def _copy(template, tmp_path, name):
    """A fresh copy of the prepared (closed) ``template`` home: the same home ``_prepare`` builds,
    without building the database and taking the inventory again for every kill point."""
    home = tmp_path / name
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(template, home)
    return home


def _run(home, out, source_id, kill_at=0, after_commit=False):
    code = kill_at_statement_script(home, f"from mindos.migration import importer as migrate_import\nmigrate_import.migrate_import(conn, {out!r}, {source_id!r}, apply=True)", kill_at=kill_at,
                                    after_commit=after_commit)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, MINDOS_NOW=NOW))


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_killed_import_is_all_or_nothing_and_rerun_completes(tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    out = str(tmp_path / "inv.json")
    template, source_id = _prepare(tmp_path, "template", root, out)
    reference = _copy(template, tmp_path, "reference")
    before = _state(reference)
    done = _run(reference, out, source_id)
    assert done.returncode == 0, done.stderr
    statements = int(done.stdout.strip())
    after = _state(reference)
    assert after != before and after[1]
    points = list(range(1, statements + 1))
    seen = {"before": 0, "after": 0}
    for kill_at in points + ["after_commit"]:
        victim = _copy(template, tmp_path, "victim")
        killed = _run(victim, out, source_id, kill_at=0 if kill_at == "after_commit" else kill_at,
                      after_commit=kill_at == "after_commit")
        assert killed.returncode == -signal.SIGKILL, (kill_at, killed.stderr)
        state = _state(victim)
        assert state[:2] in (before[:2], after[:2]), f"kill at statement {kill_at} left a partial import"
        seen["before" if state[:2] == before[:2] else "after"] += 1
        rerun = _run(victim, out, source_id)
        assert rerun.returncode == 0, rerun.stderr
        assert _state(victim)[:2] == after[:2]
        # receipt files: the indexed ones exist byte-for-byte after the re-run
        for path in _state(victim)[2]:
            assert os.path.exists(os.path.join(str(victim), path))
    print(f"kill points: {len(points) + 1} of {statements} statements: {seen}")
    # kills up to the COMMIT leave "before"; the rest (the post-apply health reads) leave "after"
    assert seen["before"] >= 10 and seen["after"] >= 1 and sum(seen.values()) == len(points) + 1
