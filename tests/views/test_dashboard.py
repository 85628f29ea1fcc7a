"""The dashboard: compact text with counts, leases, overdue flags and the queue head."""

import pytest

from mindos.core import clock
from mindos.store import db
from mindos.views import dashboard
from mindos.work import tasks


def _lease(conn, task_id, owner, minutes):
    with db.write(conn):
        conn.execute("UPDATE tasks SET lease_owner = ?, lease_expires_at = ?, status = 'running' WHERE id = ?",
                     (owner, clock.shift(clock.now_iso(), minutes * 60), task_id))


def test_empty_home(conn):
    text = dashboard.render(conn)
    assert text == ("MindOS dashboard  2026-08-21T09:00:00Z\nTasks: 0 total\nActive leases: none\n"
                    "Overdue: none\nTop queued: none\n")


@pytest.fixture
def fleet(conn):
    tasks.create(conn, project="P", title="Renew cert", task_id="late", priority="P1", due_at="2026-08-21T06:45:00Z")
    tasks.create(conn, project="P", title="Ship feature", task_id="run", priority="P0")
    tasks.create(conn, project="P", title="Stale work", task_id="stale")
    tasks.create(conn, project="P", title="Plain queued", task_id="q", priority="P3")
    tasks.create(conn, project="P", title="Parked", task_id="parked", not_before="2026-08-22T09:00:00Z")
    tasks.create(conn, project="P", title="Old and done", task_id="done", due_at="2026-08-01")
    tasks.update(conn, "done", status="completed")
    _lease(conn, "run", "hermes", 30)
    _lease(conn, "stale", "codex", -5)
    return conn


def test_counts_leases_overdue_and_queue(fleet):
    text = dashboard.render(fleet)
    lines = text.splitlines()
    assert lines[1] == "Tasks: 6 total | queued 3 | running 2 | completed 1"
    assert "Active leases: 1" in lines
    lease_line = next(line for line in lines if line.startswith("  run "))
    assert "hermes" in lease_line and "until 2026-08-21T09:30:00Z (30m left)" in lease_line
    assert "Stale leases: 1 (expired; ops.py recover requeues them)" in lines
    overdue = lines[lines.index("Overdue: 1") + 1]
    assert overdue.startswith("  late  P1  queued  [OVERDUE 2h 15m, due 2026-08-21T06:45:00Z]")
    assert "done" not in text.split("Overdue")[1].split("Top queued")[0]  # completed is never overdue
    queue = lines[lines.index("Top queued: 3") + 1:]
    assert [line.split()[0] for line in queue] == ["late", "parked", "q"]
    assert "[DEFERRED until 2026-08-22T09:00:00Z]" in queue[1]
    assert text.endswith("\n") and not text.lstrip().startswith("{")


def test_listings_are_capped_with_a_count_of_the_rest(conn):
    for n in range(dashboard.LIST_CAP + 3):
        tasks.create(conn, project="P", title=f"task {n}", task_id=f"t{n:02d}", due_at="2026-08-20")
    lines = dashboard.render(conn).splitlines()
    assert f"Top queued: {dashboard.LIST_CAP + 3} (showing {dashboard.LIST_CAP})" in lines
    assert "  ... and 3 more" in lines
    data = dashboard.collect(conn)
    assert data["overdue"]["total"] == dashboard.LIST_CAP + 3 and len(data["overdue"]["tasks"]) == dashboard.LIST_CAP


def test_user_text_cannot_break_the_screen(conn):
    tasks.create(conn, project="P", title="placeholder", task_id="evil")
    # titles are single-line now; a row written before that rule can still hold controls
    conn.execute("UPDATE tasks SET title = ? WHERE id = 'evil'", ("evil\x1b[2J\nsecond line\r\t" + "x" * 200,))
    text = dashboard.render(conn)
    assert "\x1b" not in text and "\r" not in text and "\t" not in text
    line = next(line for line in text.splitlines() if line.startswith("  evil"))
    assert "evil\\x1b[2J second line" in line and line.endswith("…")
    assert len(text.splitlines()) == 6  # header, counts, three section heads, one task line


def test_cli_dashboard_prints_text(fleet, cli):
    rc, out, err = cli("autopilot", "dashboard")
    assert rc == 0 and err == ""
    assert out.startswith("MindOS dashboard  2026-08-21T09:00:00Z\n") and "[OVERDUE " in out
