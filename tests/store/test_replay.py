"""Idempotent retries (issue 8 item 8): --request-id returns the first result, flagged
replayed, instead of a second effect; a retried next --claim never takes a second lease."""

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from conftest import ROOT


def _count(conn, sql):
    return conn.execute(sql).fetchone()[0]


def test_create_receipt_note_handoff_replay_instead_of_acting_twice(conn, cli_json):
    first = cli_json("autopilot", "create", "--project", "P", "--title", "x", "--request-id", "req-1")
    again = cli_json("autopilot", "create", "--project", "P", "--title", "x", "--request-id", "req-1")
    assert first["replayed"] is False and again["replayed"] is True
    assert {k: v for k, v in again.items() if k != "replayed"} == {k: v for k, v in first.items() if k != "replayed"}
    assert _count(conn, "SELECT count(*) FROM tasks") == 1
    task = first["id"]
    calls = [
        ("receipt", [task, "--kind", "ci", "--payload", '{"ok": true}'], "SELECT count(*) FROM receipts"),
        ("note", [task, "--content", "the cache is warm", "--source", "a"], "SELECT count(*) FROM notes"),
        ("handoff", [task, "--from-agent", "a", "--objective", "finish"], "SELECT count(*) FROM handoffs"),
    ]
    for command, argv, counter in calls:
        one = cli_json("autopilot", command, *argv, "--request-id", f"{command}-1")
        two = cli_json("autopilot", command, *argv, "--request-id", f"{command}-1")
        assert (one["replayed"], two["replayed"]) == (False, True), command
        assert _count(conn, counter) == 1, command
    assert len(os.listdir(os.path.join(conn.home, "receipts"))) == 1


def test_a_retried_claim_gets_the_same_task_and_epoch_never_a_second_lease(conn, cli_json):
    for n in range(3):
        cli_json("autopilot", "create", "--project", "P", "--title", f"t{n}", "--id", f"t{n}")
    first = cli_json("autopilot", "next", "--claim", "--owner", "a", "--request-id", "claim-7")
    again = cli_json("autopilot", "next", "--claim", "--owner", "a", "--request-id", "claim-7")
    assert again["replayed"] is True and again["task"]["id"] == first["task"]["id"]
    assert again["task"]["lease_epoch"] == first["task"]["lease_epoch"] == 1
    assert _count(conn, "SELECT count(*) FROM tasks WHERE lease_owner = 'a'") == 1
    assert _count(conn, "SELECT count(*) FROM audit_events WHERE action = 'claimed'") == 1
    other = cli_json("autopilot", "next", "--claim", "--owner", "b", "--request-id", "claim-7")  # another actor
    assert other["replayed"] is False and other["task"]["id"] != first["task"]["id"]


def test_a_key_reused_for_another_request_is_a_conflict(conn, cli, cli_json):
    cli_json("autopilot", "create", "--project", "P", "--title", "x", "--request-id", "k")
    rc, out, err = cli("autopilot", "create", "--project", "P", "--title", "different", "--request-id", "k",
                       "--json-errors")
    assert rc == 1 and out == "" and json.loads(err)["error"]["code"] == "conflict"
    rc, out, err = cli("autopilot", "create", "--project", "P", "--title", "x", "--request-id", "bad key!")
    assert rc == 2 and "request-id" in err
    assert _count(conn, "SELECT count(*) FROM tasks") == 1


def test_a_refusal_is_not_remembered(conn, cli, cli_json):
    rc, _, _ = cli("autopilot", "receipt", "nope", "--kind", "ci", "--payload", "{}", "--request-id", "r1")
    assert rc == 1 and _count(conn, "SELECT count(*) FROM request_replays") == 0
    cli_json("autopilot", "create", "--project", "P", "--title", "x", "--id", "nope")
    assert cli_json("autopilot", "receipt", "nope", "--kind", "ci", "--payload", "{}", "--request-id", "r1")[
        "replayed"] is False


def test_concurrent_retries_act_once(conn, home):
    environment = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home))

    def attempt(_):
        proc = subprocess.run([sys.executable, os.path.join(ROOT, "autopilot.py"), "create", "--project", "P",
                               "--title", "once", "--request-id", "same-key"],
                              capture_output=True, text=True, env=environment, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(attempt, range(6)))
    assert len({result["id"] for result in results}) == 1
    assert sorted(result["replayed"] for result in results) == [False] + [True] * 5
    assert _count(conn, "SELECT count(*) FROM tasks") == 1


def test_an_older_home_gains_the_table_by_migration(conn):
    from mindos.store import migrations

    assert any(m.__name__.endswith("_request_replays") for m in migrations.MIGRATIONS)
    assert _count(conn, "SELECT count(*) FROM sqlite_master WHERE name = 'request_replays'") == 1


def test_claim_and_complete_take_a_request_id(conn, cli, cli_json):
    cli_json("autopilot", "create", "--project", "P", "--title", "x", "--id", "t1")
    first = cli_json("autopilot", "claim", "t1", "--owner", "a", "--request-id", "c-1")
    again = cli_json("autopilot", "claim", "t1", "--owner", "a", "--request-id", "c-1")
    assert (first["replayed"], again["replayed"]) == (False, True)
    assert again["lease_epoch"] == first["lease_epoch"] == _count(conn, "SELECT lease_epoch FROM tasks")
    done = cli_json("autopilot", "complete", "t1", "--owner", "a", "--request-id", "d-1")
    redo = cli_json("autopilot", "complete", "t1", "--owner", "a", "--request-id", "d-1")
    assert (done["replayed"], redo["replayed"]) == (False, True)
    assert _count(conn, "SELECT count(*) FROM audit_events WHERE action = 'completed'") == 1
    # without the key the retry is evaluated afresh and refused (the task is no longer leased)
    rc, out, err = cli("autopilot", "complete", "t1", "--owner", "a")
    assert rc == 1 and out == ""
    rc, _, err = cli("autopilot", "claim", "t1", "--owner", "a", "--request-id", "bad key")
    assert rc != 0 and "--request-id" in err
