"""Archival: seal-then-destroy, dependency guard, append-only audit, exact restore with children."""

import json
import os
import random

import pytest

from conftest import db_state, overwrite
from recovery_helpers import file_state, populate, table_rows, write_v1_archive
from mindos.errors import IntegrityError, Refused
from mindos.memory import facts
from mindos.recovery import archive, artifacts, doctor
from mindos.store import fts, ledger
from mindos.work import lifecycle, tasks

BEFORE = "2026-08-21T10:00:00Z"


def _retire(conn):
    populate(conn)
    lifecycle.complete(conn, "t2", "claude", note="done too")


def _without_audit(rows):
    return {name: value for name, value in rows.items() if name != "audit_events"}


def test_dry_run_previews_ids_and_counts_without_writing(conn, home, cli):
    _retire(conn)
    before = file_state(home)
    rc, out, err = cli("ops", "archive", "--before", BEFORE, "--dry-run")
    report = json.loads(out)
    assert (rc, err) == (0, "") and report["dry_run"] is True
    assert report["task_ids"] == ["t1", "t2", "t4"]
    assert report["counts"]["tasks"] == 3 and report["counts"]["receipts"] == 1
    assert report["counts"]["notes"] == 3 and report["counts"]["handoffs"] == 2
    assert report["counts"]["audit_events"] > 0 and report["counts"]["receipt_files"] == 1
    assert file_state(home) == before and not os.path.exists(os.path.join(str(home), "backups"))


def test_dry_run_counts_the_receipt_files_the_archive_takes_without_reading_them(conn, home, tmp_path, monkeypatch):
    from mindos.core import files
    from mindos.work import receipts

    _retire(conn)
    for task_id in ("t2", "t4", "t4", "t2"):
        receipts.add(conn, task_id, "verification", {"tests": "pass", "task": task_id})
    stored = [row[0] for row in conn.execute("SELECT path FROM receipts ORDER BY id")]
    assert len(stored) == 5
    targets = [artifacts.receipt_target(str(home), path) for path in stored]
    os.unlink(targets[1])  # a missing file
    outside = tmp_path / "secret.json"
    outside.write_text("{}")
    os.unlink(targets[2])
    os.symlink(outside, targets[2])  # a planted link: refused
    with open(targets[3], "ab") as handle:  # over the receipt size limit
        handle.write(b" " * (artifacts.MAX_RECEIPT_BYTES + 1))
    refused_sized, refused_read = [], []
    sizes = dict(artifacts.receipt_sizes(str(home), stored, refused_sized))
    assert sizes == {path: len(data) for path, data in artifacts.receipt_bytes(str(home), stored, refused_read)}
    assert sorted(sizes) == sorted([stored[0], stored[4]]) and refused_sized == refused_read and len(refused_read) == 2
    real_read = files.read_bytes
    monkeypatch.setattr(files, "read_bytes", lambda *a, **k: pytest.fail("a dry run read a receipt file"))
    preview = archive.archive(conn, BEFORE, dry_run=True)
    monkeypatch.setattr(files, "read_bytes", real_read)
    assert preview["counts"]["receipt_files"] == 2  # t1's and the last one
    made = archive.archive(conn, BEFORE)
    assert made["counts"]["receipt_files"] == preview["counts"]["receipt_files"]
    assert [entry["path"] for entry in made["receipt_files_refused"]] == sorted([stored[2], stored[3]])
    assert dict(artifacts.receipt_sizes(str(home), stored)) == {}  # what is left: the refused two
    assert os.path.islink(targets[2])


def test_archive_then_restore_round_trips(conn, home, cli):
    _retire(conn)
    rows_before = table_rows(conn)
    events_before = rows_before["audit_events"]
    rc, out, err = cli("ops", "archive", "--before", BEFORE)
    made = json.loads(out)
    assert (rc, err) == (0, "") and made["task_ids"] == ["t1", "t2", "t4"]
    assert os.stat(made["path"]).st_mode & 0o777 == 0o600
    assert [r[0] for r in conn.execute("SELECT id FROM tasks")] == ["t3"]
    assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 0
    assert os.listdir(os.path.join(str(home), "receipts")) == []
    # append-only: every old event is still there, plus the archive event; the chain verifies
    now_events = table_rows(conn)["audit_events"]
    assert set(events_before) <= set(now_events) and len(now_events) == len(events_before) + 1
    assert ledger.verify_chain(conn)["ok"] and all(fts.drift(conn, n)["ok"] for n in fts.INDEXES)
    assert doctor.run(str(home))["ok"]
    rc, out, err = cli("ops", "archive-check", made["path"])
    assert (rc, err) == (0, "") and json.loads(out)["task_ids"] == ["t1", "t2", "t4"]
    rc, out, err = cli("ops", "archive-restore", made["path"])
    restored = json.loads(out)
    assert (rc, err) == (0, "") and restored["restored"] == ["t1", "t2", "t4"]
    assert restored["receipt_files_written"] == 1
    assert _without_audit(table_rows(conn)) == _without_audit(rows_before)
    rid, path = conn.execute("SELECT id, path FROM receipts").fetchone()
    assert os.stat(os.path.join(str(home), path)).st_mode & 0o777 == 0o600
    assert doctor.run(str(home))["ok"] and all(fts.drift(conn, n)["ok"] for n in fts.INDEXES)
    actions = [r[0] for r in conn.execute("SELECT action FROM audit_events ORDER BY id DESC LIMIT 2")]
    assert actions == ["archive_restored", "tasks_archived"]


def test_dependency_guard_refuses_and_changes_nothing(conn, home):
    populate(conn)  # t2 (claimed, live) depends on t1 (completed)
    state = file_state(home)
    with pytest.raises(Refused, match=r"live tasks still depend on archive candidates \(t2 -> t1\)"):
        archive.archive(conn, BEFORE)
    assert file_state(home) == state
    assert not os.path.exists(os.path.join(str(home), "backups"))


def test_collisions_need_force(conn, home):
    _retire(conn)
    made = archive.archive(conn, BEFORE)
    archive.restore(conn, made["path"])
    state = db_state(conn)
    with pytest.raises(Refused, match="task ids already exist .t1, t2, t4.; pass --force"):
        archive.restore(conn, made["path"])
    assert db_state(conn) == state
    tasks.update(conn, "t4", title="edited locally")
    result = archive.restore(conn, made["path"], force=True)
    assert result["replaced"] == ["t1", "t2", "t4"]
    assert conn.execute("SELECT title FROM tasks WHERE id = 't4'").fetchone()[0] == "task t4 postgres pool"


def test_facts_are_detached_and_reattached(conn, home):
    _retire(conn)
    kept = facts.assert_fact(conn, subject="auth", predicate="uses", obj="pg14", source="codex", task="t1",
                             valid_hours=48)
    other = facts.assert_fact(conn, subject="db", predicate="runs", obj="pg16", source="codex", task="t3")
    made = archive.archive(conn, BEFORE)
    assert made["counts"]["facts_detached"] == 2  # populate's fact on t1 and this one
    rows = {r[0]: r[1] for r in conn.execute("SELECT id, task_id FROM facts")}
    assert rows[kept["id"]] is None and rows[other["id"]] == "t3"  # knowledge stays, provenance detached
    assert doctor.run(str(home))["ok"]
    assert archive.restore(conn, made["path"])["reattached"] == 2
    assert conn.execute("SELECT task_id FROM facts WHERE id = ?", (kept["id"],)).fetchone()[0] == "t1"


def test_single_byte_changes_of_an_old_format_archive_are_refused_and_touch_nothing(conn, home, cli, tmp_path):
    _retire(conn)
    path = write_v1_archive(conn, BEFORE, str(tmp_path / "old.json"))
    archive.archive(conn, BEFORE)
    original = open(path, "rb").read()
    state = db_state(conn)
    rng = random.Random(3)
    for i in rng.sample(range(len(original)), 400):
        overwrite(path, original[:i] + bytes([(original[i] + 1) % 256]) + original[i + 1:])
        with pytest.raises(IntegrityError):
            archive.load(path)
    rc, out, err = cli("ops", "archive-restore", path)
    assert rc == 1 and out == "" and err.count("\n") == 1
    rc, out, err = cli("ops", "archive-check", path)
    assert rc == 1 and out == "" and err.count("\n") == 1
    assert db_state(conn) == state


def test_receipt_paths_outside_the_home_are_refused(conn, home, tmp_path):
    _retire(conn)
    path = write_v1_archive(conn, BEFORE, str(tmp_path / "old.json"))
    doc = json.load(open(path))
    doc.pop("seal")
    fmt = doc.pop("format")
    (stored, entry), = doc["receipt_files"].items()
    doc["receipt_files"] = {"receipts/../../../escape.json": entry}
    artifacts.write(path, artifacts.seal_doc(fmt, doc))
    state = db_state(conn)
    with pytest.raises(Refused, match="outside the home's receipts directory"):
        archive.restore(conn, path, trust_unsigned=True)
    assert db_state(conn) == state


@pytest.mark.parametrize("listed", [["t1", "t2", "t4", "t9"], ["t1", "t2"], ["t1", "t2", "t2", "t4"], ["t1", "t2", "t9"]])
def test_an_old_format_archive_whose_task_ids_are_not_its_task_rows_is_refused(conn, home, cli, tmp_path, listed):
    _retire(conn)
    path = write_v1_archive(conn, BEFORE, str(tmp_path / "old.json"))
    archive.archive(conn, BEFORE)
    doc = json.load(open(path))
    doc.pop("seal")
    fmt = doc.pop("format")
    doc["task_ids"] = listed
    artifacts.seal_write(path, fmt, doc, home=conn.home)  # signed by this home, and still refused
    assert archive.check(path, str(home))["trust"] == "signed_by_this_home"
    state = db_state(conn)
    with pytest.raises(IntegrityError, match="the task ids its manifest lists are not the rows of its tasks table"):
        archive.restore(conn, path)
    rc, out, err = cli("ops", "archive-restore", path, "--trust-unsigned")
    assert (rc, out) == (1, "") and err.count("\n") == 1 and "are not the rows of its tasks table" in err
    assert db_state(conn) == state


def test_bad_before_is_a_usage_error(conn, cli):
    rc, out, err = cli("ops", "archive", "--before", "yesterday")
    assert rc == 2 and out == "" and "--before" in err and err.count("\n") == 1


def test_restore_reports_and_audits_true_counts(conn, cli):
    """Two tasks restored says tasks: 2 -- in the output and in the archive_restored event --
    however many rows the search-index and tag triggers wrote beside them."""
    for task_id in ("a1", "a2"):
        tasks.create(conn, project="Trove", title=f"retire {task_id} cookie redirect", task_id=task_id,
                     tags=["infra", "client:trove"], description="a long description " * 5)
        tasks.update(conn, task_id, status="completed")
    made = archive.archive(conn, BEFORE)
    assert made["counts"]["tasks"] == 2
    rc, out, err = cli("ops", "archive-restore", made["path"])
    restored = json.loads(out)
    assert (rc, err) == (0, "")
    manifest = archive._stream(made["path"], None)[0]
    expected = {name: manifest["tables"][name]["rows"] for name in manifest["restore_tables"]}
    assert restored["counts"]["tasks"] == 2 and restored["counts"] == expected
    event = json.loads(conn.execute("SELECT payload_json FROM audit_events WHERE action = 'archive_restored'"
                                    " ORDER BY id DESC LIMIT 1").fetchone()[0])
    assert event["tasks"] == 2 and event["counts"] == expected


def test_an_old_format_archive_still_checks_and_restores(conn, home, cli, tmp_path):
    """A v1 archive (one sealed JSON document, as archives were written before they streamed)
    is still verified by archive-check and re-imported by archive-restore, exactly."""
    _retire(conn)
    facts.assert_fact(conn, subject="auth", predicate="uses", obj="pg14", source="codex", task="t1")
    rows_before = _without_audit(table_rows(conn))
    receipts = {n: open(os.path.join(str(home), "receipts", n), "rb").read()
                for n in os.listdir(os.path.join(str(home), "receipts"))}
    old = write_v1_archive(conn, BEFORE, str(tmp_path / "old.json"))
    archive.archive(conn, BEFORE)  # the rows leave the live database (as the old archive pass did)
    rc, out, err = cli("ops", "archive-check", old)
    checked = json.loads(out)
    assert (rc, err) == (0, "") and checked["format"] == "autopilot-archive-v1"
    assert checked["task_ids"] == ["t1", "t2", "t4"] and checked["trust"] == "signed_by_this_home"
    rc, out, err = cli("ops", "archive-restore", old)
    restored = json.loads(out)
    assert (rc, err) == (0, "") and restored["restored"] == ["t1", "t2", "t4"] and restored["reattached"] == 2
    assert _without_audit(table_rows(conn)) == rows_before
    assert {n: open(os.path.join(str(home), "receipts", n), "rb").read()
            for n in os.listdir(os.path.join(str(home), "receipts"))} == receipts
    assert doctor.run(str(home))["ok"] and all(fts.drift(conn, n)["ok"] for n in fts.INDEXES)


def test_an_old_format_archive_reassigns_a_taken_seq_after_the_rows_that_keep_theirs(conn, home, tmp_path):
    _retire(conn)
    seqs = {r[0]: r[1] for r in conn.execute("SELECT id, seq FROM tasks")}
    old = write_v1_archive(conn, BEFORE, str(tmp_path / "old.json"))
    archive.archive(conn, BEFORE)
    conn.execute("UPDATE tasks SET seq = ? WHERE id = 't3'", (seqs["t1"],))  # t1's seq is taken meanwhile
    archive.restore(conn, old)
    now = {r[0]: r[1] for r in conn.execute("SELECT id, seq FROM tasks")}
    assert now["t1"] not in (None, seqs["t1"]) and now["t2"] == seqs["t2"] and now["t4"] == seqs["t4"]
