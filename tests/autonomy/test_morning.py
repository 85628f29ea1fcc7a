"""ops.py morning: the human brief since the last one (finished, failed, stuck, decisions)."""

from autonomykit import expired_grant, home_bytes, parked
from conftest import last_event, make_task
from mindos.autonomy import morning, nanny
from mindos.core import clock
from mindos.work import leases, lifecycle


def finish(conn, task_id):
    make_task(conn, task_id, title=f"ship {task_id}")
    leases.claim(conn, task_id, "hermes", minutes=30)
    lifecycle.complete(conn, task_id, "hermes", note="done")


def test_the_brief_names_what_finished_what_is_stuck_and_what_needs_a_decision(conn):
    finish(conn, "t-done")
    parked(conn, "t-b", "blocked", "vendor outage")
    parked(conn, "t-merge", "ready_to_merge")
    expired_grant(conn)
    nanny.tick(conn)
    text = morning.render(morning.brief(conn))
    assert "Since 2026-08-20T11:00:00Z (last 24h)" in text
    assert "Nanny: decision_needed at" in text
    assert "Finished: 1\n  t-done  P2  ship t-done" in text
    assert "Needs a decision: 2" in text and "awaiting_decision: t-merge  (ready_to_merge)" in text
    assert "grant_expired: t-grant  (model opencode/x-preview-f-free" in text
    assert "Stuck: 1\n  blocked_task: t-b  (vendor outage)" in text


def test_reading_changes_nothing_and_mark_moves_the_window(conn, cli, cli_json):
    finish(conn, "t-old")
    before = home_bytes(conn)
    rc, out, err = cli("ops", "morning")
    assert rc == 0 and err == "" and out.startswith("MindOS morning brief")
    assert home_bytes(conn) == before
    data = cli_json("ops", "morning", "--mark", "--json")
    assert data["marked"] is True and data["finished"]["total"] == 1
    assert last_event(conn, "morning_brief")["finished"] == 1
    clock.advance(hours=1)
    finish(conn, "t-new")
    data = cli_json("ops", "morning", "--json")
    assert (data["since_rule"], data["since"]) == ("last_brief", "2026-08-21T09:00:00Z")
    assert [t["id"] for t in data["finished"]["tasks"]] == ["t-new"]
    assert cli_json("ops", "morning", "--json", "--since", "2026-08-21T00:00:00Z")["finished"]["total"] == 2
    rc, out, err = cli("ops", "morning", "--since", "yesterday")
    assert (rc, out) == (2, "") and err.count("\n") == 1


def test_titles_cannot_redraw_the_terminal(conn):
    make_task(conn, "t-x")
    # create refuses control characters; a row written before that rule (or by hand) may hold them
    conn.execute("UPDATE tasks SET status = 'blocked', title = 'evil\x1b[2Jtitle' WHERE id = 't-x'")
    text = morning.render(morning.brief(conn))
    assert "\x1b" not in text and "evil\\x1b[2Jtitle" in text
