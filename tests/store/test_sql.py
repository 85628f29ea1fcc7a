"""Shared SQL pieces: terminal lists from the one constant, and the guarded write."""

import sqlite3

import pytest

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


def test_row_dict_is_the_dict_of_the_row_in_column_order(conn):
    row = conn.execute("SELECT 1 AS b, 'x' AS a, NULL AS c").fetchone()
    assert list(sql.row_dict(row).items()) == list(dict(row).items()) == [("b", 1), ("a", "x"), ("c", None)]
    repeated = conn.execute("SELECT 1 AS a, 2 AS b, 3 AS a").fetchone()
    assert sql.row_dict(repeated) == dict(repeated) == {"a": 1, "b": 2}  # the first column of a name
    assert sql.row_dict({"k": 1}) == {"k": 1}  # a mapping is copied as dict() would


def test_task_rows_parse_their_lists_into_fresh_lists(conn):
    from mindos.work import rows, tasks

    for n in range(3):
        tasks.create(conn, task_id=f"r{n}", project="Trove", title="same tags", tags=["infra", "ops"])
    first, second = rows.get(conn, "r0"), rows.get(conn, "r1")
    assert first["tags"] == second["tags"] == ["infra", "ops"] and first["requires_receipts"] == []
    first["tags"].append("changed")
    first["requires_receipts"].append("changed")
    third = rows.get(conn, "r2")
    assert third["tags"] == ["infra", "ops"] and third["requires_receipts"] == []
    with db.write(conn):
        conn.execute("""UPDATE tasks SET tags = '[{"nested": ["x"]}]' WHERE id = 'r2'""")
    nested = rows.get(conn, "r2")["tags"]
    nested[0]["nested"].append("y")
    assert rows.get(conn, "r2")["tags"] == [{"nested": ["x"]}]  # only lists of strings are kept


def test_largest_rowids_reads_every_table_in_one_statement():
    raw = sqlite3.connect(":memory:")
    raw.executescript("CREATE TABLE a(x); CREATE TABLE b(x); CREATE TABLE k(x PRIMARY KEY) WITHOUT ROWID;"
                      "INSERT INTO a(rowid, x) VALUES (7, 1), (3, 2);")
    statements = []
    raw.set_trace_callback(statements.append)
    assert sql.largest_rowids(raw, ["a", "b"]) == {"a": 7, "b": 0}
    assert len(statements) == 1 and sql.largest_rowids(raw, []) == {}
    with pytest.raises(sqlite3.DatabaseError):
        sql.largest_rowids(raw, ["a", "k"])
