"""ops.py fts-rebuild: drift found through fts5vocab, fixed, audited; --dry-run changes nothing."""

import json

from recovery_helpers import file_state, populate
from mindos.recovery import reindex
from mindos.store import db, fts


def _drift_notes(conn):
    row = conn.execute("SELECT id, content FROM notes ORDER BY id LIMIT 1").fetchone()
    with db.write(conn):
        conn.execute("INSERT INTO notes_fts(notes_fts, rowid, content) VALUES ('delete', ?, ?)", tuple(row))
        conn.execute("INSERT INTO tasks_fts(rowid, id, title) VALUES (999, 'ghost', 'ghost title')")
    return row[0]


def test_dry_run_reports_and_changes_nothing(conn, home, cli):
    populate(conn)
    missing = _drift_notes(conn)
    before = file_state(home)
    rc, out, err = cli("ops", "fts-rebuild", "--dry-run")
    assert (rc, err) == (0, "")
    report = json.loads(out)
    assert report["dry_run"] is True and report["drift_found"] == ["tasks_fts", "notes_fts"]
    assert report["would_fix"] == ["tasks_fts", "notes_fts"] and report["fixed"] == []
    notes_entry = [e for e in report["indexes"] if e["index"] == "notes_fts"][0]
    assert notes_entry["drift"]["missing"] == [missing]
    tasks_entry = [e for e in report["indexes"] if e["index"] == "tasks_fts"][0]
    assert tasks_entry["drift"]["stale"] == [999]
    assert file_state(home) == before


def test_rebuild_fixes_every_drifted_index_and_audits(conn, home, cli):
    populate(conn)
    _drift_notes(conn)
    rc, out, _ = cli("ops", "fts-rebuild")
    report = json.loads(out)
    assert rc == 0 and report["fixed"] == ["tasks_fts", "notes_fts"]
    assert all(fts.drift(conn, name)["ok"] for name in fts.INDEXES)
    event = conn.execute("SELECT payload_json FROM audit_events WHERE action = 'fts_rebuilt'").fetchone()
    assert json.loads(event[0])["indexes"] == ["tasks_fts", "notes_fts"]
    again = reindex.rebuild(conn)
    assert again["drift_found"] == [] and again["fixed"] == []
    assert conn.execute("SELECT count(*) FROM audit_events WHERE action = 'fts_rebuilt'").fetchone()[0] == 1
