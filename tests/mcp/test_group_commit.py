"""Group commit: write calls waiting together share one transaction, each under its own
savepoint, each audited, fenced and answered on its own; one that fails leaves the others be."""

import queue
import sqlite3

import pytest
from conftest import make_task

from mindos.errors import Conflict
from mindos.mcp import server, tools
from mindos.store import db, ledger


@pytest.fixture
def srv(conn):
    return server.Server(conn, tools.exposed(profile="all"))


def job(request_id, name, arguments):
    return server.Job(request_id, "tools/call", {"name": name, "arguments": arguments})


def commits(conn):
    seen = []
    conn.set_trace_callback(lambda sql: seen.append(sql) if sql.strip().upper() == "COMMIT" else None)
    return seen


def test_the_store_batch_rolls_back_only_the_failing_call(conn):
    make_task(conn, "t1")
    make_task(conn, "t2")
    with db.batch(conn) as group:
        group.run(lambda: ledger.append_event(conn, "task", "t1", "probe", {"n": 1}))
        with pytest.raises(Conflict):
            def failing():
                conn.execute("UPDATE tasks SET title = 'changed' WHERE id = 't2'")
                ledger.append_event(conn, "task", "t2", "probe", {"n": 2})
                raise Conflict("refused")
            group.run(failing)
        group.run(lambda: ledger.append_event(conn, "task", "t1", "probe", {"n": 3}))
    assert conn.execute("SELECT title FROM tasks WHERE id = 't2'").fetchone()[0] != "changed"
    probes = [e["payload"]["n"] for e in ledger.events(conn, action="probe")["events"]]
    assert sorted(probes) == [1, 3]
    assert ledger.verify_chain(conn)["ok"]


def test_a_batch_must_be_the_outer_write(conn):
    with db.write(conn):
        with pytest.raises(RuntimeError):
            db.batch(conn).__enter__()


def test_a_failing_call_in_a_batch_does_not_affect_its_batch_mates(srv, conn):
    for task_id in ("t1", "t2", "t3"):
        make_task(conn, task_id)
    jobs = [job(1, "claim", {"task_id": "t1", "owner": "a1"}),
            job(2, "claim", {"task_id": "nope", "owner": "a2"}),             # not found
            job(3, "claim", {"task_id": "t1", "owner": "a3"}),               # held by a1: refused
            job(4, "note", {"task_id": "t1", "content": "seen the cache", "source": "a1"}),
            job(5, "claim", {"task_id": "t2", "owner": "a2", "minutes": "x"}),  # bad arguments
            job(6, "claim", {"task_id": "t3", "owner": "a2"})]
    seen = commits(conn)
    answers = srv.execute_batch(jobs, srv.store)
    conn.set_trace_callback(None)
    assert len(seen) == 1, "one transaction for the batch"
    assert [a["id"] for a in answers] == [1, 2, 3, 4, 5, 6]
    errors = [a["result"]["isError"] for a in answers]
    assert errors == [False, True, True, False, True, False]
    assert answers[1]["result"]["structuredContent"]["error"]["code"] == "not_found"
    assert answers[2]["result"]["structuredContent"]["error"]["code"] in ("conflict", "refused")
    assert answers[4]["result"]["structuredContent"]["error"]["code"] == "usage"
    owners = dict(conn.execute("SELECT id, lease_owner FROM tasks"))
    assert owners == {"t1": "a1", "t2": "", "t3": "a2"}
    claimed = [(e["entity_id"], e["payload"].get("owner")) for e in ledger.events(conn, action="claimed")["events"]]
    assert sorted(claimed) == [("t1", "a1"), ("t3", "a2")]
    assert conn.execute("SELECT count(*) FROM notes WHERE task_id = 't1'").fetchone()[0] == 1
    assert ledger.verify_chain(conn)["ok"]
    assert not srv.session.pending


def test_the_epoch_fence_holds_inside_a_batch(srv, conn):
    make_task(conn, "t1")
    first = srv.execute_batch([job(1, "claim", {"task_id": "t1", "owner": "a1"}),
                               job(2, "release", {"task_id": "t1", "owner": "a1"}),
                               job(3, "claim", {"task_id": "t1", "owner": "a2"})], srv.store)
    assert [a["result"]["isError"] for a in first] == [False, False, False]
    old_epoch = first[0]["result"]["structuredContent"]["lease_epoch"]
    # a1's stale epoch is fenced out, in the same batch as a2's live heartbeat
    answers = srv.execute_batch([job(4, "heartbeat", {"task_id": "t1", "owner": "a1", "epoch": old_epoch}),
                                 job(5, "heartbeat", {"task_id": "t1", "owner": "a2"})], srv.store)
    assert [a["result"]["isError"] for a in answers] == [True, False]
    assert ledger.verify_chain(conn)["ok"]


def test_a_cancelled_call_in_a_batch_is_not_committed_nor_answered(srv, conn):
    make_task(conn, "t1")
    make_task(conn, "t2")
    jobs = [job(1, "claim", {"task_id": "t1", "owner": "a1"}), job(2, "claim", {"task_id": "t2", "owner": "a2"})]
    jobs[1].cancelled.set()
    answers = srv.execute_batch(jobs, srv.store)
    assert answers[1] is None and answers[0]["result"]["isError"] is False
    assert conn.execute("SELECT lease_owner FROM tasks WHERE id = 't2'").fetchone()[0] == ""


def test_a_batch_whose_commit_fails_runs_each_call_alone(srv, conn, monkeypatch):
    make_task(conn, "t1")
    make_task(conn, "t2")
    real = db.batch.__exit__
    tries = []

    def failing_exit(self, *exc):
        tries.append(1)
        real(self, sqlite3.OperationalError, None, None)  # roll the batch back, as a failed COMMIT would
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(db.batch, "__exit__", failing_exit)
    answers = srv.execute_batch([job(1, "claim", {"task_id": "t1", "owner": "a1"}),
                                 job(2, "claim", {"task_id": "t2", "owner": "a2"})], srv.store)
    assert tries == [1]
    assert [a["result"]["isError"] for a in answers] == [False, False]
    assert dict(conn.execute("SELECT id, lease_owner FROM tasks")) == {"t1": "a1", "t2": "a2"}
    assert len(ledger.events(conn, action="claimed")["events"]) == 2
    assert ledger.verify_chain(conn)["ok"]


def test_which_calls_may_share_a_transaction(srv):
    assert srv.batchable(job(1, "claim", {"task_id": "t1", "owner": "a"}))
    assert srv.batchable(job(1, "complete", {"task_id": "t1", "owner": "a"}))
    assert not srv.batchable(job(1, "complete", {"task_id": "t1", "owner": "a", "receipt": ["r"]}))
    assert not srv.batchable(job(1, "receipt", {"task_id": "t1", "payload": "{}"}))
    assert not srv.batchable(job(1, "show", {"task_id": "t1"}))
    assert not srv.batchable(server.Job(1, "resources/read", {"uri": "mindos://task/t1"}))


def test_gather_takes_only_what_is_already_waiting():
    batchable = lambda j: j.startswith("w")  # noqa: E731
    jobs = queue.Queue()
    assert server.gather(jobs, "w1", batchable) == (["w1"], None), "idle: no wait"
    for item in ("w2", "w3", "r1", "w4"):
        jobs.put(item)
    assert server.gather(jobs, "w1", batchable) == (["w1", "w2", "w3"], "r1")
    assert server.gather(jobs, "r1", batchable) == (["r1"], None)
    jobs.put(None)
    assert server.gather(jobs, "w5", batchable) == (["w5", "w4"], False)
    for i in range(5):
        jobs.put(f"w{i}")
    assert server.gather(jobs, "w", batchable, limit=3) == (["w", "w0", "w1"], None)


def test_stdio_serve_batches_what_is_queued_and_answers_each_call(conn, monkeypatch):
    import io
    import json

    for index in range(12):
        make_task(conn, f"t{index:02d}")
    sizes = []
    real = server.Server.execute_batch

    def recording(self, jobs, store, sessions=None):
        sizes.append(len(jobs))
        return real(self, jobs, store, sessions)

    monkeypatch.setattr(server.Server, "execute_batch", recording)
    lines = [{"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
              "params": {"name": "claim", "arguments": {"task_id": f"t{i:02d}", "owner": f"a{i % 3}"}}}
             for i in range(12)]
    lines.insert(6, {"jsonrpc": "2.0", "id": 50, "method": "tools/call",
                     "params": {"name": "show", "arguments": {"task_id": "t00"}}})
    lines.append({"jsonrpc": "2.0", "id": 51, "method": "tools/call",
                  "params": {"name": "claim", "arguments": {"task_id": "t00", "owner": "intruder"}}})
    stdin = io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    stdout = io.BytesIO()
    server.serve(conn, tools.exposed(profile="all"), stdin, stdout)
    answers = {a["id"]: a for a in map(json.loads, stdout.getvalue().splitlines())}
    assert sorted(answers) == sorted(line["id"] for line in lines), "every call answered once"
    assert all(not answers[100 + i]["result"]["isError"] for i in range(12))
    assert answers[51]["result"]["isError"] and not answers[50]["result"]["isError"]
    assert sum(sizes) == len(lines)
    owners = dict(conn.execute("SELECT id, lease_owner FROM tasks"))
    assert owners == {f"t{i:02d}": f"a{i % 3}" for i in range(12)}
    assert ledger.verify_chain(conn)["ok"]
