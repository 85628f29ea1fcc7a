"""The secret guard on every write path (issue 8 items 1-2): task fields, names, tags, seams,
reasons and notes, receipt payloads; refused by default, audited kind-only, nothing stored."""

import json
import os

import pytest

from conftest import db_state, seed_once
from mindos.store import db

AWS = "AKIA2R29TQLR0VLG5W1H"
GH = "ghp_DJANQMiy5mD3bM5MBKFiuut5I5zF8GHHIgjU"
EVADED = "AKIA\u200b2R29TQLR0VLG5W1H"          # split by a zero-width space
FULLWIDTH = "".join(chr(ord(c) + 0xFEE0) for c in AWS)  # written in fullwidth forms


def _db_bytes(home):
    data = b""
    for suffix in ("", "-wal"):
        path = os.path.join(str(home), "state.db" + suffix)
        if os.path.exists(path):
            with open(path, "rb") as handle:
                data += handle.read()
    for name in os.listdir(os.path.join(str(home), "receipts")):
        with open(os.path.join(str(home), "receipts", name), "rb") as handle:
            data += handle.read()
    return data


SURFACES = [
    ("create --title", ["create", "--project", "P", "--title", "key {v}"]),
    ("create --description", ["create", "--project", "P", "--title", "x", "--description", "use {v} here"]),
    ("create --next-action", ["create", "--project", "P", "--title", "x", "--next-action", "rotate {v}"]),
    ("create --project", ["create", "--project", "{v}", "--title", "x"]),
    ("create --id", ["create", "--project", "P", "--title", "x", "--id", "{v}"]),
    ("create --owner", ["create", "--project", "P", "--title", "x", "--owner", "{v}"]),
    ("create --tag", ["create", "--project", "P", "--title", "x", "--tag", "{lower}"]),
    ("create --depends-on", ["create", "--project", "P", "--title", "x", "--depends-on", "{v}"]),
    ("update --title", ["update", "t1", "--title", "key {v}"]),
    ("update --description", ["update", "t1", "--description", "key {v}"]),
    ("update --worktree", ["update", "t1", "--worktree", "/tmp/{v}"]),
    ("update --branch", ["update", "t1", "--branch", "fix/{v}"]),
    ("update --pr-url", ["update", "t1", "--pr-url", "https://{v}@github.com/o/r/pull/1"]),
    ("update --approved-by", ["update", "t1", "--status", "ready_to_merge", "--approved-by", "{v}"]),
    ("tag", ["tag", "t1", "--tag", "{lower}"]),
    ("claim --owner", ["claim", "t1", "--owner", "{v}"]),
    ("next --claim --owner", ["next", "--claim", "--owner", "{v}"]),
    ("heartbeat --note", ["heartbeat", "t2", "--owner", "a", "--note", "using {v}"]),
    ("heartbeat --action", ["heartbeat", "t2", "--owner", "a", "--action", "using {v}"]),
    ("heartbeat --intent", ["heartbeat", "t2", "--owner", "a", "--intent", "rotate {v}"]),
    ("heartbeat --progress-state", ["heartbeat", "t2", "--owner", "a", "--progress-state", "{lower}"]),
    ("complete --note", ["complete", "t2", "--owner", "a", "--note", "done with {v}"]),
    ("fail --reason", ["fail", "t2", "--owner", "a", "--reason", "denied for {v}"]),
    ("cancel --reason", ["cancel", "t1", "--owner", "a", "--reason", "leaked {v}"]),
    ("block --reason", ["block", "t1", "--owner", "a", "--reason", "needs {v}"]),
    ("transfer --to-owner", ["transfer", "t2", "--from-owner", "a", "--to-owner", "{v}"]),
    ("dep", ["dep", "t1", "{v}"]),
    ("receipt value", ["receipt", "t1", "--kind", "ci", "--payload", '{{"log": "key {v}"}}']),
    ("receipt key", ["receipt", "t1", "--kind", "ci", "--payload", '{{"{v}": 1}}']),
    ("receipt nested", ["receipt", "t1", "--kind", "ci", "--payload", '[{{"a": ["x", {{"b": "{v}"}}]}}]']),
    ("receipt escaped", ["receipt", "t1", "--kind", "ci", "--payload", '{{"k": "\\u0041KIA2R29TQLR0VLG5W1H"}}']),
]


@pytest.fixture
def fleet(conn, cli_json):
    def build(conn):  # once per session; each test gets a copy of the database it left
        cli_json("autopilot", "create", "--project", "P", "--title", "one", "--id", "t1")
        cli_json("autopilot", "create", "--project", "P", "--title", "two", "--id", "t2")
        cli_json("autopilot", "claim", "t2", "--owner", "a")

    seed_once(conn, __name__ + ".fleet", build)
    return conn


@pytest.mark.parametrize("value", [AWS, GH, EVADED, FULLWIDTH], ids=["aws", "github", "zero-width", "fullwidth"])
@pytest.mark.parametrize("surface", [name for name, _ in SURFACES])
def test_every_write_surface_refuses_credentials(fleet, cli, home, surface, value):
    argv = dict(SURFACES)[surface]
    lower = "xoxb-2718281828-" + "".join(c for c in AWS.lower() if c.isalnum())  # tags are lowercase
    filled = [arg.format(v=value, lower=lower) for arg in argv]
    if value != AWS and surface in ("receipt escaped",):
        pytest.skip("one spelling is enough for the escape case")
    before = [line for line in db_state(fleet)[0] if "audit_events" not in line], db_state(fleet)[1]
    blocked_before = fleet.execute("SELECT count(*) FROM audit_events WHERE action = 'secret_blocked'").fetchone()[0]
    rc, out, err = cli("autopilot", *filled, "--json-errors")
    assert out == "", (surface, out)
    if rc == 2:  # the charset of an id, tag or name refused it first: also a clean refusal
        assert json.loads(err)["error"]["code"] in ("invalid", "usage"), err
    else:
        assert rc == 1 and json.loads(err)["error"]["code"] == "secret_blocked", (surface, err)
        blocked = fleet.execute("SELECT payload_json FROM audit_events WHERE action = 'secret_blocked'"
                                " ORDER BY id DESC").fetchall()
        assert len(blocked) == blocked_before + 1
        payload = json.loads(blocked[0][0])
        assert set(payload) == {"kinds", "fields"} and payload["kinds"]
    after = [line for line in db_state(fleet)[0] if "audit_events" not in line], db_state(fleet)[1]
    assert after == before
    raw = _db_bytes(home)
    for spelled in {value, AWS, value.lower()}:
        assert spelled.encode() not in raw and spelled not in err


def test_url_userinfo_in_pr_url_is_refused_even_without_a_known_token(fleet, cli):
    for url in ("https://deploy:hunter2@github.com/o/r/pull/1", "https://opaquevalue@github.com/o/r/pull/2"):
        rc, out, err = cli("autopilot", "update", "t1", "--pr-url", url)
        assert rc == 1 and "secret guard" in err and "hunter2" not in err
    assert fleet.execute("SELECT pr_url FROM tasks WHERE id = 't1'").fetchone()[0] == ""
    rc, out, err = cli("autopilot", "update", "t1", "--pr-url", "https://github.com/o/r/pull/3")
    assert rc == 0


def test_approval_note_and_approver_are_guarded(fleet, cli):
    rc, out, err = cli("ops", "approval", "approve", "t1", "--by", "leo", "--note", f"ok {GH}")
    assert rc == 1 and "secret guard" in err
    rc, out, err = cli("ops", "approval", "approve", "t1", "--by", AWS)
    assert rc == 1 and "secret guard" in err
    assert fleet.execute("SELECT count(*) FROM receipts").fetchone()[0] == 0


def test_clean_values_still_pass_everywhere(fleet, cli_json):
    cli_json("autopilot", "update", "t1", "--title", "rotate the API key policy", "--branch", "fix/token-budget",
             "--pr-url", "https://github.com/o/r/pull/9", "--worktree", "/work/wt-1")
    cli_json("autopilot", "heartbeat", "t2", "--owner", "a", "--note", "password policy review")
    cli_json("autopilot", "receipt", "t1", "--kind", "ci", "--payload", '{"max_tokens": 4096, "token": "budget"}')
    cli_json("autopilot", "block", "t1", "--owner", "x", "--reason", "waiting on the secret rotation runbook")


def test_secret_scan_finds_what_the_write_guard_would_refuse(fleet, cli):
    with db.write(fleet):  # legacy rows written before the guard covered them
        fleet.execute("UPDATE tasks SET title = ?, pr_url = ? WHERE id = 't1'",
                      (f"key {EVADED}", "https://u:p4ssw0rd9@github.com/o/r/pull/1"))
        fleet.execute("UPDATE tasks SET owner = ? WHERE id = 't2'", (GH,))
    rc, out, err = cli("ops", "secret-scan")
    report = json.loads(out)
    assert rc == 1 and report["tasks_scanned"] == 2
    found = {item["id"]: item for item in report["findings"] if item["table"] == "tasks"}
    assert set(found) == {"t1", "t2"}
    assert found["t1"]["fields"] == ["pr_url", "title"] and "aws_access_key" in found["t1"]["kinds"]
    assert found["t2"]["kinds"] == ["github_token"] and GH not in out and AWS not in out
