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


def write_v1_archive(conn, before, path):
    """Write the ``autopilot-archive-v1`` document (one sealed JSON file, signed by this home)
    the archive writer made before archives streamed, for the tasks ``archive --before``
    would take; nothing is deleted.  The old format's fixture: readers must keep accepting it."""
    import json

    from mindos.recovery import archive, artifacts, tables

    ids = archive._candidates(conn, before)
    ids_json, where = json.dumps(ids), archive._IDS
    blocks = {"tasks": tables.dump(conn, "tasks", f"id IN {where}", (ids_json,))}
    for name, column in archive._child_tables(conn).items():
        blocks[name] = tables.dump(conn, name, f'"{column}" IN {where}', (ids_json,))
    detached = {}
    for name, column in archive._soft_links(conn).items():
        key = "id" if "id" in tables.columns(conn, name) else "rowid"
        detached[name] = [[row[0], row[1]] for row in conn.execute(
            f'SELECT {key}, "{column}" FROM {name} WHERE "{column}" IN {where} ORDER BY {key}', (ids_json,))]
    events = tables.dump(conn, "audit_events", f"entity_id IN {where}", (ids_json,))
    paths = [row[0] for row in conn.execute(f"SELECT path FROM receipts WHERE task_id IN {where}", (ids_json,))]
    files = artifacts.receipt_files(conn.home, paths)
    counts = {name: len(block["rows"]) for name, block in blocks.items()}
    counts.update({"audit_events": len(events["rows"]), "receipt_files": len(files)})
    counts.update({f"{name}_detached": len(links) for name, links in detached.items()})
    body = {"before": before, "task_ids": ids, "tables": blocks, "audit_events": events, "receipt_files": files,
            "counts": counts, "schema_version": conn.execute("PRAGMA user_version").fetchone()[0],
            "created_at": clock.now_iso()}
    if detached:
        body["detached"] = detached
    artifacts.seal_write(path, archive.FORMAT, body, home=conn.home)
    return path
