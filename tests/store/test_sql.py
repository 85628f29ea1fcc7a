"""Shared SQL pieces: terminal lists from the one constant, and the guarded write."""

from conftest import make_task
from mindos.core import validate
from mindos.store import db, sql


def test_terminal_and_open_lists_come_from_the_status_constants(conn):
    assert sql.TERMINAL_SQL == "(" + ", ".join(f"'{s}'" for s in validate.TERMINAL_STATUSES) + ")"
    make_task(conn, "open1")
    make_task(conn, "done1")
    with db.write(conn):
        conn.execute("UPDATE tasks SET status = 'completed' WHERE id = 'done1'")
    assert [r[0] for r in conn.execute(f"SELECT id FROM tasks WHERE {sql.open_condition()}")] == ["open1"]
    assert [r[0] for r in conn.execute(f"SELECT id FROM tasks t WHERE t.status IN {sql.OPEN_SQL}")] == ["open1"]


def test_compare_and_set_lands_only_on_the_row_as_read(conn):
    make_task(conn, "t1")
    read = dict(conn.execute("SELECT id, title, due_at FROM tasks WHERE id = 't1'").fetchone())
    with db.write(conn):
        # due_at is NULL: None must match it
        assert sql.compare_and_set(conn, "tasks", ["title = ?"], ("first",), read) is True
    with db.write(conn):
        # the title moved on since it was read: the stale write must not land
        assert sql.compare_and_set(conn, "tasks", ["title = ?"], ("second",), read) is False
    assert conn.execute("SELECT title FROM tasks WHERE id = 't1'").fetchone()[0] == "first"
    with db.write(conn):
        assert sql.compare_and_set(conn, "tasks", ["title = ?"], ("third",), {"id": "t1", "title": "first"},
                                   extra="priority = ?", extra_params=("P0",)) is False
