"""The correction look-ups (show, dispatch --explain, complete's check) search the partial
index on ``tasks.correction_of`` instead of scanning every task: a read stays flat with size."""

import sqlite3

from conftest import make_task

from mindos.views import show
from mindos.work import dispatch, lifecycle


def test_every_correction_query_searches_the_index(conn, monkeypatch):
    make_task(conn, "t1")
    asked = []
    real = sqlite3.Connection.execute

    def spying(self, sql, *params):
        if "correction_of = ?" in sql:
            asked.append((sql, params[0] if params else ()))
        return real(self, sql, *params)

    monkeypatch.setattr(type(conn), "execute", spying)
    show.show(conn, "t1")
    lifecycle.open_corrections(conn, "t1")
    with conn:
        conn.execute("UPDATE tasks SET status = 'queued'")
    dispatch.next_task(conn, explain=True)
    monkeypatch.undo()
    assert len(asked) >= 2
    for sql, params in asked:
        plan = " ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
        assert "USING INDEX idx_tasks_correction_of" in plan, (sql, plan)
