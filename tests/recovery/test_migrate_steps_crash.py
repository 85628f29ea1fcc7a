"""kill -9 inside an archive-copy / hermes-register --apply: the home holds no copy and no event,
or both -- except a kill at the COMMIT itself, which leaves a complete copy the re-run records --
and a re-run always completes it (every statement of the step's write transaction, COMMIT
included, plus just after the COMMIT)."""

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


def _state(home, dest_rel, source_id):
    """(copy: None | the copy's files and bytes, migration_imported events, chain ok, staging leftovers)."""
    dest = os.path.join(str(home), *dest_rel.split("/"))
    copy = migratekit.tree_state(dest) if os.path.exists(dest) else None
    parent = os.path.dirname(dest)
    staging = [n for n in os.listdir(parent) if ".staging-" in n] if os.path.isdir(parent) else []
    conn = db.connect(str(home))
    try:
        events = conn.execute("SELECT count(*) FROM audit_events WHERE action = 'migration_imported'"
                              " AND entity_id = ?", (source_id,)).fetchone()[0]
        return copy, events, ledger.verify_chain(conn)["ok"], staging
    finally:
        conn.close()


def _prepare(tmp_path, name, root, out):
    home = tmp_path / name
    shutil.rmtree(home, ignore_errors=True)
    conn = db.connect(str(home))
    clock.set_now(NOW)
    summary = inv.inventory(conn, root, out, force=True)
    conn.close()
    return home, {s["kind"]: s["source_id"] for s in summary["sources"]}


def _run(home, out, source_id, kill_at=0, after_commit=False):
    code = kill_at_statement_script(
        home, f"from mindos.migration import importer as migrate_import\n"
              f"migrate_import.migrate_import(conn, {out!r}, {source_id!r}, apply=True)",
        kill_at=kill_at, after_commit=after_commit)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, MINDOS_NOW=NOW))


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
@pytest.mark.parametrize("kind,folder", [("obsidian_vault", "archive/obsidian"), ("hermes_home", "hermes/registered")])
def test_killed_copy_step_is_all_or_nothing_and_rerun_completes(tmp_path, kind, folder):
    root = migratekit.machine(str(tmp_path / "old"))
    out = str(tmp_path / "inv.json")
    reference, ids = _prepare(tmp_path, "reference", root, out)
    source_id = ids[kind]
    dest_rel = f"{folder}/{source_id}"
    before = _state(reference, dest_rel, source_id)
    done = _run(reference, out, source_id)
    assert done.returncode == 0, done.stderr
    statements = int(done.stdout.strip())
    after = _state(reference, dest_rel, source_id)
    assert before[0] is None and before[1] == 0 and after[0] is not None and after[1] == 1 and after[2]
    seen = {"before": 0, "after": 0, "copied_unrecorded": 0}
    points = list(range(1, statements + 1))
    for kill_at in points + ["after_commit"]:
        victim, _ = _prepare(tmp_path, "victim", root, out)
        killed = _run(victim, out, source_id, kill_at=0 if kill_at == "after_commit" else kill_at,
                      after_commit=kill_at == "after_commit")
        assert killed.returncode == -signal.SIGKILL, (kill_at, killed.stderr)
        copy, events, chain_ok, _ = _state(victim, dest_rel, source_id)
        assert chain_ok
        if copy is None:
            assert events == 0, f"kill at {kill_at}: an event without its copy"
            seen["before"] += 1
        else:
            assert copy == after[0], f"kill at {kill_at} left a partial copy"
            seen["after" if events == 1 else "copied_unrecorded"] += 1
            if events == 0:
                assert kill_at == statements, "only a kill at the COMMIT may leave an unrecorded copy"
        rerun = _run(victim, out, source_id)
        assert rerun.returncode == 0, rerun.stderr
        final = _state(victim, dest_rel, source_id)
        assert final[0] == after[0] and final[1] == 1 and final[2] and final[3] == []  # staging swept
    print(f"{kind}: kill points {len(points) + 1} of {statements} statements: {seen}")
    assert seen["before"] >= 1 and seen["after"] >= 1 and sum(seen.values()) == len(points) + 1
