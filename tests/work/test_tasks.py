"""The task registry: create, show, list, update, and the input rules they share."""

import json

import pytest

from mindos.core import clock, validate
from mindos.store import db
from mindos.work import rows, tasks
from mindos.errors import Conflict, InvalidInput, NotFound
from mindos.views import show
from conftest import db_state


def _lease(conn, task_id, owner="hermes", status="running"):
    with db.write(conn):
        conn.execute("UPDATE tasks SET lease_owner = ?, lease_expires_at = ?, status = ? WHERE id = ?",
                     (owner, clock.shift(clock.now_iso(), 1800), status, task_id))


def test_create_defaults(conn):
    task = tasks.create(conn, project="Trove", title="Example task")
    assert task["id"].startswith("t-") and len(task["id"]) == 10
    assert (task["status"], task["priority"], task["tags"], task["due_at"], task["lease_owner"]) == \
        ("queued", "P2", [], None, "")
    assert task["created_at"] == task["updated_at"] == "2026-08-21T09:00:00Z"
    assert task["depends_on"] == []


def test_create_with_every_field(conn):
    tasks.create(conn, project="Trove", title="prereq", task_id="pre")
    task = tasks.create(conn, project="Trove", title="Renew cert", description="d", priority="P1",
                        next_action="Inspect evidence", task_id="cert-1", depends_on=["pre", "later"],
                        tags=["infra", "autopilot-safe", "infra"], due_at="2026-09-01T17:00:00Z", owner="leo",
                        not_before="2026-08-25", requires_receipts=["ci"])
    assert task["tags"] == ["autopilot-safe", "infra"]
    assert task["depends_on"] == ["pre", "later"] and task["missing_dependencies"] == ["later"]
    assert (task["due_at"], task["not_before"], task["requires_receipts"], task["owner"]) == \
        ("2026-09-01T17:00:00Z", "2026-08-25T00:00:00Z", ["ci"], "leo")


@pytest.mark.parametrize("text", [
    "naïve café ✓ 🚀 日本語",
    "it's \"quoted\" `backticked`",
    "line one\nline two\r\n\ttabbed",
    "'); DROP TABLE tasks; --",
    "100% of _all_ \\ escapes",
    "   leading and trailing   ",
])
def test_text_is_stored_exactly(conn, text):
    title = text if text.isprintable() or "\n" not in text else "multi-line text"  # a title is one line
    task = tasks.create(conn, project="P", title=title, description=text, next_action=text, task_id="t1")
    again = rows.get(conn, "t1")
    assert again["description"] == again["next_action"] == task["description"] == text
    assert again["title"] == title
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 1


@pytest.mark.parametrize("value,expected", [
    ("2026-09-01T17:00:00Z", "2026-09-01T17:00:00Z"),
    ("2026-09-02T09:00:00+02:00", "2026-09-02T07:00:00Z"),
    ("2026-09-02T09:00:00-0530", "2026-09-02T14:30:00Z"),
    ("2026-09-01T17:00:00", "2026-09-01T17:00:00Z"),
    ("2026-09-01 17:00", "2026-09-01T17:00:00Z"),
    ("2026-09-01", "2026-09-01T00:00:00Z"),
    ("2026-09-01T17:00:00.999Z", "2026-09-01T17:00:00Z"),
    ("0999-01-01", "0999-01-01T00:00:00Z"),
])
def test_timestamps_in_any_iso_form_are_normalized(conn, value, expected):
    assert tasks.create(conn, project="P", title="t", due_at=value)["due_at"] == expected


BAD_IDS = ["../x", "a/b", "a" * 65, "", "-x", ".hidden", "a b", "x\n", "日本", "a\\b", "a;b", "%", "C:"]


@pytest.mark.parametrize("bad_id", BAD_IDS)
def test_invalid_ids_are_refused_and_change_nothing(conn, bad_id):
    tasks.create(conn, project="P", title="keep", task_id="keep")
    before = db_state(conn)
    with pytest.raises(InvalidInput, match=r"^invalid --id"):
        tasks.create(conn, project="P", title="t", task_id=bad_id)
    for call in (lambda: show.show(conn, bad_id), lambda: tasks.update(conn, bad_id, title="x")):
        with pytest.raises(InvalidInput, match=r"^invalid task id"):
            call()
    assert db_state(conn) == before


def test_64_character_id_is_the_limit(conn):
    assert tasks.create(conn, project="P", title="t", task_id="a" * 64)["id"] == "a" * 64


@pytest.mark.parametrize("kwargs,flag", [
    ({"title": ""}, "--title"),
    ({"title": "   \n"}, "--title"),
    ({"title": "x" * (validate.MAX_TITLE + 1)}, "--title"),
    ({"title": "bad \udcff byte"}, "--title"),
    ({"title": "nul \x00 byte"}, "--title"),
    ({"description": "x" * (validate.MAX_TEXT + 1)}, "--description"),
    ({"priority": "P9"}, "--priority"),
    ({"priority": "p1"}, "--priority"),
    ({"project": "../etc"}, "--project"),
    ({"project": ""}, "--project"),
    ({"due_at": "tomorrow"}, "--due-at"),
    ({"due_at": "2026-02-30"}, "--due-at"),
    ({"due_at": "0001-01-01T00:00:00+01:00"}, "--due-at"),
    ({"due_at": "2" * 100}, "--due-at"),
    ({"not_before": "soon"}, "--not-before"),
    ({"tags": ["UPPER"]}, "--tag"),
    ({"tags": [f"t{n}" for n in range(validate.MAX_TAGS + 1)]}, "--tag"),
    ({"depends_on": ["../up"]}, "--depends-on"),
    ({"owner": "bad owner"}, "--owner"),
    ({"requires_receipts": ["Bad Kind"]}, "--requires-receipt"),
])
def test_create_refuses_bad_values_naming_the_flag_and_changes_nothing(conn, kwargs, flag):
    before = db_state(conn)
    args = {"project": "P", "title": "ok", **kwargs}
    with pytest.raises(InvalidInput, match=f"^invalid {flag}"):
        tasks.create(conn, **args)
    assert db_state(conn) == before


def test_duplicate_id_is_refused_cleanly(conn):
    tasks.create(conn, project="P", title="first", task_id="dup")
    before = db_state(conn)
    with pytest.raises(Conflict, match="task 'dup' already exists"):
        tasks.create(conn, project="P", title="second", task_id="dup")
    assert db_state(conn) == before
    assert rows.get(conn, "dup")["title"] == "first"


def test_show_has_receipts_audit_dependencies_and_dependents(conn):
    tasks.create(conn, project="P", title="prereq", task_id="a")
    tasks.create(conn, project="P", title="dependent", task_id="b", depends_on=["a", "ghost"])
    shown = show.show(conn, "a")
    assert shown["task"]["id"] == "a" and shown["receipts"] == []
    assert [e["action"] for e in shown["audit"]] == ["created"]
    assert shown["dependents"] == [{"id": "b", "status": "queued", "title": "dependent"}]
    deps = show.show(conn, "b")["dependencies"]
    assert deps == [{"id": "a", "status": "queued", "title": "prereq", "satisfied": False},
                    {"id": "ghost", "status": "missing", "title": None, "satisfied": False}]
    with pytest.raises(NotFound, match="unknown task 'nope'"):
        show.show(conn, "nope")


def test_list_orders_by_priority_then_most_recently_updated(conn):
    for task_id, priority in (("a", "P2"), ("b", "P1"), ("c", "P2"), ("d", "P0")):
        tasks.create(conn, project="P", title=task_id, task_id=task_id, priority=priority)
        clock.advance(minutes=1)
    tasks.update(conn, "a", next_action="touched")
    assert [t["id"] for t in tasks.list_tasks(conn)] == ["d", "b", "a", "c"]
    assert [t["id"] for t in tasks.list_tasks(conn, limit=2)] == ["d", "b"]


def test_list_filters(conn):
    tasks.create(conn, project="A", title="one", task_id="1", tags=["ab"], due_at="2026-08-20")
    tasks.create(conn, project="B", title="two", task_id="2", tags=["a"], due_at="2026-08-20")
    tasks.create(conn, project="B", title="three", task_id="3", due_at="2026-08-22")
    clock.advance(minutes=1)
    tasks.update(conn, "2", status="completed")
    assert [t["id"] for t in tasks.list_tasks(conn, project="B")] == ["2", "3"]
    assert [t["id"] for t in tasks.list_tasks(conn, tag="a")] == ["2"]  # whole tags only: 'ab' is not 'a'
    assert [t["id"] for t in tasks.list_tasks(conn, status="completed")] == ["2"]
    assert [t["id"] for t in tasks.list_tasks(conn, overdue=True)] == ["1"]  # completed work is never overdue
    for kwargs, flag in (({"status": "done"}, "--status"), ({"tag": "A B"}, "--tag"),
                         ({"limit": 0}, "--limit"), ({"project": "a/b"}, "--project")):
        with pytest.raises(InvalidInput, match=f"^invalid {flag}"):
            tasks.list_tasks(conn, **kwargs)


def test_update_identity_fields_and_clearing(conn):
    tasks.create(conn, project="P", title="Typo", task_id="t1", due_at="2026-09-01", next_action="n")
    clock.advance(minutes=5)
    task = tasks.update(conn, "t1", title="Corrected title", description="Fuller description", priority="P1",
                        project="RenamedProject", due_at="2026-09-02T09:00:00+02:00", branch="feat/x",
                        worktree="/srv/wt", pr_url="https://example.invalid/pr/1")
    assert (task["title"], task["description"], task["priority"], task["project"], task["due_at"]) == \
        ("Corrected title", "Fuller description", "P1", "RenamedProject", "2026-09-02T07:00:00Z")
    assert task["updated_at"] == "2026-08-21T09:05:00Z"
    cleared = tasks.update(conn, "t1", due_at="", next_action="", branch="", worktree="", pr_url="")
    assert (cleared["due_at"], cleared["next_action"], cleared["branch"], cleared["worktree"], cleared["pr_url"]) == \
        (None, "", "", "", "")
    assert tasks.update(conn, "t1", requires_receipts=["ci", "review"])["requires_receipts"] == ["ci", "review"]
    assert tasks.update(conn, "t1", requires_receipts=[""])["requires_receipts"] == []


@pytest.mark.parametrize("kwargs,flag", [
    ({"priority": "P7"}, "--priority"),
    ({"status": "done"}, "--status"),
    ({"title": ""}, "--title"),
    ({"project": ""}, "--project"),
    ({"due_at": "not a date"}, "--due-at"),
    ({"not_before": "2026-99-01"}, "--not-before"),
    ({"requires_receipts": ["NOPE"]}, "--requires-receipt"),
    ({"branch": "x" * 5000}, "--branch"),
])
def test_update_refuses_bad_values_and_changes_nothing(conn, kwargs, flag):
    tasks.create(conn, project="P", title="t", task_id="t1")
    before = db_state(conn)
    with pytest.raises(InvalidInput, match=f"^invalid {flag}"):
        tasks.update(conn, "t1", **kwargs)
    assert db_state(conn) == before


def test_update_needs_something_to_change_and_a_known_task(conn):
    with pytest.raises(InvalidInput, match="nothing to update"):
        tasks.update(conn, "t1")
    with pytest.raises(NotFound, match="unknown task 't1'"):
        tasks.update(conn, "t1", title="x")
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == 0


@pytest.mark.parametrize("terminal", validate.TERMINAL_STATUSES)
def test_terminal_status_releases_the_lease(conn, terminal):
    tasks.create(conn, project="P", title="t", task_id="t1")
    _lease(conn, "t1")
    task = tasks.update(conn, "t1", status=terminal)
    assert (task["status"], task["lease_owner"], task["lease_expires_at"]) == (terminal, "", None)
    payload = json.loads(conn.execute("SELECT payload_json FROM audit_events ORDER BY id DESC").fetchone()[0])
    assert payload == {"status": terminal, "previous_status": "running", "lease_released": "hermes"}


def test_non_terminal_status_keeps_the_lease(conn):
    tasks.create(conn, project="P", title="t", task_id="t1")
    _lease(conn, "t1")
    task = tasks.update(conn, "t1", status="waiting_for_user", next_action="Leo review")
    assert (task["status"], task["lease_owner"], task["next_action"]) == ("waiting_for_user", "hermes", "Leo review")


def test_metrics_counts_overdue_and_due_soon(conn):
    tasks.create(conn, project="P", title="late", due_at="2026-08-21T08:00:00Z")
    tasks.create(conn, project="P", title="soon", due_at="2026-08-22T08:00:00Z")
    tasks.create(conn, project="P", title="later", due_at="2026-08-30")
    done = tasks.create(conn, project="P", title="late but done", due_at="2026-08-01")
    tasks.update(conn, done["id"], status="completed")
    counters = tasks.metrics(conn)
    assert (counters["overdue_tasks"], counters["due_within_24h"], counters["tasks_total"]) == (1, 1, 4)
    assert counters["tasks_by_status"] == {"queued": 3, "completed": 1}


def test_init_reports_the_home(conn):
    info = tasks.init(conn)
    assert info["schema_version"] == db.latest_version()
    assert info["database"].endswith("state.db") and info["receipts_dir"].endswith("receipts")


def test_show_reports_a_clipped_audit_trail(conn):
    tasks.create(conn, project="P", title="busy", task_id="busy")
    for number in range(show.SHOW_AUDIT_LIMIT + 5):
        tasks.update(conn, "busy", next_action=f"step {number}")
    shown = show.show(conn, "busy")
    assert shown["audit_total"] == show.SHOW_AUDIT_LIMIT + 6
    assert shown["audit_truncated"] is True and len(shown["audit"]) == show.SHOW_AUDIT_LIMIT
    assert shown["audit"][-1]["payload"] == {"next_action": f"step {show.SHOW_AUDIT_LIMIT + 4}"}
    small = tasks.create(conn, project="P", title="quiet", task_id="quiet")
    assert show.show(conn, small["id"])["audit_truncated"] is False
