"""Test kit for the autonomy tests: build each kind of finding, and snapshot a home's bytes."""

import os

from conftest import make_task
from mindos.autonomy import grants
from mindos.core import clock
from mindos.work import leases


def stale_lease(conn, task_id="t-stale", owner="hermes"):
    """A task whose lease expired a minute ago (moves the clock 6 minutes)."""
    make_task(conn, task_id)
    leases.claim(conn, task_id, owner, minutes=5)
    clock.advance(minutes=6)


def overdue(conn, task_id="t-late", priority="P2"):
    make_task(conn, task_id, priority=priority, due_at=clock.shift(clock.now_iso(), 60))
    clock.advance(minutes=2)


def stalled(conn, task_id="t-stall", owner="codex"):
    """Running under a live 4-hour lease with its only heartbeat 61 minutes ago."""
    make_task(conn, task_id)
    leases.claim(conn, task_id, owner, minutes=30)
    leases.heartbeat(conn, task_id, owner, note="working")
    leases.renew(conn, task_id, owner, minutes=240)
    clock.advance(minutes=61)


def stuck_lease(conn, task_id="t-stuck", owner="claude", deadline=30):
    """A live 4-hour lease whose holder keeps heartbeating the same progress state past its
    ``deadline``-minute stall deadline (moves the clock deadline + 1 minutes)."""
    make_task(conn, task_id)
    leases.claim(conn, task_id, owner, minutes=240)
    leases.heartbeat(conn, task_id, owner, action="running the suite", progress_state="tests-running",
                     stall_deadline=deadline)
    clock.advance(minutes=deadline + 1)
    leases.heartbeat(conn, task_id, owner, progress_state="tests-running")


def parked(conn, task_id, status, reason=""):
    make_task(conn, task_id)
    conn.execute("UPDATE tasks SET status = ?, blocked_reason = ? WHERE id = ?", (status, reason, task_id))


def expired_grant(conn, task_id="t-grant", model="opencode/x-preview-f-free"):
    make_task(conn, task_id)
    grants.declare(conn, task_id, model_name=model, autonomy_level="L1", granted_by="leo", grant_hours=1)
    clock.advance(hours=2)


def orphan_receipt(conn, receipt_id="r-orphan"):
    path = os.path.join(conn.home, "receipts", f"{receipt_id}.json")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('{"receipt_id": "%s"}' % receipt_id)
    return path


def fts_drift(conn, task_id="t-fts"):
    """Drop one task from the tasks_fts inverted index behind the triggers' back."""
    make_task(conn, task_id, title="rotate the billing export keys")
    row = conn.execute("SELECT seq, id, project, title, description, next_action, blocked_reason FROM tasks"
                       " WHERE id = ?", (task_id,)).fetchone()
    conn.execute("INSERT INTO tasks_fts(tasks_fts, rowid, id, project, title, description, next_action,"
                 " blocked_reason) VALUES ('delete', ?, ?, ?, ?, ?, ?, ?)", tuple(row))


def tamper(conn, event_id=1):
    conn.execute("UPDATE audit_events SET payload_json = '{\"edited\":true}' WHERE id = ?", (event_id,))


def home_bytes(conn):
    """The exact bytes of the database (and its WAL) and of every receipt file, after a
    checkpoint so that no later reader can fold the WAL into the file.  A missing WAL reads
    as an empty one: SQLite may delete the empty file when a process closes."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    found = {}
    for name in ("state.db", "state.db-wal"):
        path = os.path.join(conn.home, name)
        found[name] = b""
        if os.path.exists(path):
            with open(path, "rb") as handle:
                found[name] = handle.read()
    receipts = os.path.join(conn.home, "receipts")
    for name in sorted(os.listdir(receipts)):
        with open(os.path.join(receipts, name), "rb") as handle:
            found["receipts/" + name] = handle.read()
    return found
