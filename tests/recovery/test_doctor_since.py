"""doctor --since-checkpoint: the chain from the newest signed checkpoint and only what
changed since it, with the very findings of the full sweep for faults that happen after it;
checkpoint signatures are checked when read."""

import json
import os
import sqlite3

import pytest

from recovery_helpers import populate
from mindos.core import clock, seal
from mindos.recovery import checkpoint, doctor, keys
from mindos.store import db, ledger
from mindos.memory import notes
from mindos.work import receipts, tasks


def raw(home):
    return sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)


def _grow(conn, start=10, count=4):
    """Work after the checkpoint: tasks, notes and receipts."""
    for n in range(start, start + count):
        tasks.create(conn, project="Trove", title=f"later task {n}", task_id=f"l{n}")
        notes.add(conn, f"l{n}", content=f"later note {n}", source="codex")
        receipts.add(conn, f"l{n}", "verification", {"n": n})
        clock.advance(60)


def _receipt_path(conn, home, which="min"):
    stored = conn.execute(f"SELECT path FROM receipts WHERE rowid = (SELECT {which}(rowid) FROM receipts)").fetchone()[0]
    return os.path.join(str(home), stored)


def _tamper_old_event(home, conn):
    r = raw(home)
    r.execute("UPDATE audit_events SET action = 'forged' WHERE id = (SELECT max(id) - 2 FROM audit_events)")
    r.close()


def _break_old_fts_row(home, conn):
    row = conn.execute("SELECT id, content FROM notes ORDER BY id LIMIT 1").fetchone()
    with db.write(conn):
        conn.execute("INSERT INTO notes_fts(notes_fts, rowid, content) VALUES ('delete', ?, ?)", tuple(row))


def _unindex_new_row(home, conn):
    row = conn.execute("SELECT id, content FROM notes ORDER BY id DESC LIMIT 1").fetchone()
    with db.write(conn):
        conn.execute("INSERT INTO notes_fts(notes_fts, rowid, content) VALUES ('delete', ?, ?)", tuple(row))


def _remove_old_receipt(home, conn):
    os.unlink(_receipt_path(conn, home))


def _alter_old_receipt(home, conn):
    with open(_receipt_path(conn, home), "ab") as handle:
        handle.write(b" ")


def _alter_new_receipt(home, conn):
    with open(_receipt_path(conn, home, "max"), "ab") as handle:
        handle.write(b" ")


def _orphan_rows(home, conn):
    r = raw(home)
    r.execute("INSERT INTO notes(task_id, kind, content, created_at) VALUES ('nope', 'fact', 'x', '2026-01-01T00:00:00Z')")
    r.execute("INSERT INTO receipts(id, task_id, kind, path, created_at) VALUES ('r-orphan', 'nope', 'ci',"
              " 'receipts/r-orphan.json', '2026-01-01T00:00:00Z')")
    r.close()


def _stale_lease(home, conn):
    clock.advance(3 * 3600)


def _delete_new_event(home, conn):
    r = raw(home)
    r.execute("DELETE FROM audit_events WHERE id = (SELECT max(id) - 1 FROM audit_events)")
    r.close()


def _dangling_supersession(home, conn):
    r = raw(home)
    r.execute("UPDATE notes SET superseded_by = 9999 WHERE id = (SELECT max(id) FROM notes)")
    r.close()


FAULTS = {
    "none": lambda home, conn: None,
    "tampered_audit_row": _tamper_old_event,
    "deleted_audit_row": _delete_new_event,
    "broken_fts_row_of_an_old_note": _break_old_fts_row,
    "new_note_missing_from_the_index": _unindex_new_row,
    "old_receipt_file_removed": _remove_old_receipt,
    "old_receipt_file_altered": _alter_old_receipt,
    "new_receipt_file_altered": _alter_new_receipt,
    "orphan_rows": _orphan_rows,
    "stale_lease": _stale_lease,
    "dangling_supersession": _dangling_supersession,
}


def _findings(report):
    return report["problems"], report["problems_by_kind"]


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_findings_after_a_checkpoint_are_those_of_the_full_sweep(conn, home, fault):
    populate(conn)
    made = checkpoint.create(conn)
    _grow(conn)
    FAULTS[fault](home, conn)
    full = doctor.run(str(home))
    since = doctor.run(str(home), since_checkpoint=True)
    assert _findings(since) == _findings(full)
    assert (fault == "none") is full["ok"]
    assert since["since"]["event_id"] == made["last_event_id"]
    assert since["since"]["checkpoint"] == made["path"]
    assert since["since"]["changed_only"] == ["integrity", "audit_chain", "receipts", "fts_drift", "references"]
    assert not [c for c in since["checks"] if c.startswith("integrity")] and "since" not in full


def test_without_a_checkpoint_the_sweep_is_the_full_one(conn, home, cli):
    populate(conn)
    rc, out, err = cli("ops", "doctor", "--since-checkpoint")
    assert (rc, err) == (0, "")
    report = json.loads(out)
    assert report["since"]["event_id"] is None and "integrity_full" in report["checks"]
    assert report["since"]["reason"] == "no signed checkpoint contained in the live ledger"


def test_the_newest_contained_checkpoint_is_the_anchor(conn, home, cli):
    populate(conn)
    checkpoint.create(conn)
    _grow(conn)
    newer = checkpoint.create(conn)
    rc, out, err = cli("ops", "doctor", "--since-checkpoint")
    assert (rc, err) == (0, "")
    assert json.loads(out)["since"]["event_id"] == newer["last_event_id"]


def _forge(monkeypatch, home, source, target, **changes):
    """A checkpoint changed and resealed by someone without this home's key, claiming it."""
    with open(source, "rb") as handle:
        doc = json.loads(handle.read())
    body = {key: value for key, value in doc.items() if key not in ("format", "seal")}
    body.update(changes)
    own = seal.key_id(keys.home_key(str(home)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(seal, "key_id", lambda key: own)
        _, data = seal.seal_bytes(checkpoint.FORMAT, body, outside=(), key=b"k" * 32)
    with open(target, "wb") as handle:
        handle.write(data)


def test_a_resealed_checkpoint_is_refused_by_its_signature(conn, home, monkeypatch, cli):
    populate(conn)
    made = checkpoint.create(conn)
    forged = os.path.join(str(home), "backups", "checkpoint-forged.json")
    _forge(monkeypatch, home, made["path"], forged, event_count=1)
    assert checkpoint.load(forged)["event_count"] == 1  # the seal alone cannot tell
    with pytest.raises(Exception, match="signature mismatch"):
        checkpoint.load(forged, str(home))
    rc, _out, err = cli("ops", "checkpoint-check", forged)
    assert rc == 1 and "signature mismatch" in err
    report = doctor.run(str(home), since_checkpoint=True)
    assert [p["path"] for p in report["problems"] if p["kind"] == "checkpoint_invalid"] == [forged]
    assert report["since"]["checkpoint"] == made["path"]


def test_an_unsigned_checkpoint_is_compared_but_never_an_anchor(conn, home):
    populate(conn)
    made = checkpoint.create(conn)
    with open(made["path"], "rb") as handle:
        doc = json.loads(handle.read())
    body = {key: value for key, value in doc.items() if key not in ("format", "seal")}
    _, data = seal.seal_bytes(checkpoint.FORMAT, body, outside=(), key=None)
    with open(made["path"], "wb") as handle:
        handle.write(data)
    report = doctor.run(str(home), since_checkpoint=True)
    assert report["ok"] is True and report["since"]["event_id"] is None


def test_a_checkpoint_carries_the_watermark_it_starts_from(conn, home):
    populate(conn)
    made = checkpoint.create(conn)
    doc = checkpoint.load(made["path"], str(home))
    assert doc["watermark"]["event_id"] == made["last_event_id"] == ledger.height(conn)
    assert doc["watermark"]["rowids"]["notes"] == conn.execute("SELECT max(id) FROM notes").fetchone()[0]
    assert doc["watermark"]["fts"]["notes_fts"] == 0 and doc["watermark"]["rowids"]["receipts"] >= 1


@pytest.mark.parametrize("fault", ["none", "broken_fts_row_of_an_old_note", "old_receipt_file_altered",
                                   "tampered_audit_row", "orphan_rows"])
def test_a_checkpoint_without_a_watermark_still_gives_the_full_findings(conn, home, fault):
    # a pin written before checkpoints carried watermarks: the chain starts from it, and the
    # receipt and index checks run in full
    from mindos.recovery import artifacts

    populate(conn)
    head = checkpoint.head(conn)
    path = os.path.join(str(home), "backups", "checkpoint-old.json")
    artifacts.seal_write(path, checkpoint.FORMAT, {**head, "created_at": clock.now_iso()}, home=str(home))
    _grow(conn)
    FAULTS[fault](home, conn)
    since = doctor.run(str(home), since_checkpoint=True)
    assert since["since"]["event_id"] == head["last_event_id"]
    assert _findings(since) == _findings(doctor.run(str(home)))


def test_a_doctor_sweep_reads_through_the_page_cache_not_a_memory_map(conn, home, monkeypatch):
    """A sweep reads every page once: mapped, the whole file (up to 1 GiB) would count in the
    process's resident memory (about 1 GB at 1M tasks); through SQLite's cache it stays small."""
    from mindos.recovery import doctor

    seen = []
    real = doctor.sweep

    def spy(connection, **kwargs):
        seen.append(connection.execute("PRAGMA mmap_size").fetchone()[0])
        return real(connection, **kwargs)

    monkeypatch.setattr(doctor, "sweep", spy)
    assert doctor.run(str(home))["ok"]
    assert doctor.run(str(home), since_checkpoint=True)["ok"]
    assert seen == [0, 0]
