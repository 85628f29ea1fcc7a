"""Shared helpers of the recovery tests: a populated home and byte-level state."""

import os

from mindos.core import clock
from mindos.memory import facts, handoffs, memories, notes
from mindos.store import db
from mindos.work import graph, leases, lifecycle, receipts, tasks


def populate(conn):
    """A small home touching every table: deps, leases, notes with supersession, handoffs,
    memories, a fact with provenance, receipts, terminal tasks.  Returns the ids used."""
    for task_id in ("t1", "t2", "t3", "t4"):
        tasks.create(conn, project="Trove", title=f"task {task_id} postgres pool", task_id=task_id,
                     tags=("backend",) if task_id != "t4" else ())
    graph.add_dependency(conn, "t2", "t1")
    graph.add_dependency(conn, "t3", "ghost")  # an edge naming a task that does not exist (kept on purpose)
    first = notes.add(conn, "t1", content="use pgbouncer for the pool", source="codex")
    notes.supersede(conn, first["id"], content="use pgbouncer in transaction mode")
    notes.add(conn, "t2", content="blocked on t1", source="claude", pinned=True)
    handoffs.record(conn, "t1", from_agent="codex", to_agent="claude", objective="finish the pool", status="half")
    handoffs.record(conn, "t1", from_agent="codex", to_agent="claude", objective="finish the pool now", status="most")
    memories.retain(conn, "auth sessions expire after 30 days", kind="decision", project="Trove")
    facts.assert_fact(conn, subject="service-auth", predicate="uses", obj="postgres-14", source="codex", task="t1",
                      valid_hours=48)
    leases.claim(conn, "t1", "codex", minutes=30)
    receipts.add(conn, "t1", "verification", {"tests": "pass"})
    lifecycle.complete(conn, "t1", "codex", note="done")
    leases.claim(conn, "t2", "claude", minutes=30)
    lifecycle.cancel(conn, "t4", "op", reason="not needed")
    clock.advance(60)
    return ["t1", "t2", "t3", "t4"]


def file_state(home):
    """Bytes of the database files and every receipt file of ``home``."""
    state = {}
    for name in ("state.db", "state.db-wal"):
        path = os.path.join(home, name)
        if os.path.exists(path):
            with open(path, "rb") as handle:
                state[name] = handle.read()
    rdir = db.receipts_dir(str(home))
    for name in sorted(os.listdir(rdir)) if os.path.isdir(rdir) else []:
        with open(os.path.join(rdir, name), "rb") as handle:
            state["receipts/" + name] = handle.read()
    return state


def table_rows(conn):
    """Every data table's rows (in primary-key order) plus sqlite_sequence: for exact comparisons."""
    from mindos.recovery import tables

    result = {}
    for name in tables.data_tables(conn):
        result[name] = sorted((tuple(r) for r in conn.execute(f'SELECT * FROM "{name}"')), key=repr)
    return result
