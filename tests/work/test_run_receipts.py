"""run-receipt: one sealed receipt of an agent run on a task, whose kind carries the outcome so a
definition of done can require a successful run."""

import json

import pytest

from mindos.errors import InvalidInput, NotFound
from mindos.mcp import server, tools
from mindos.work import leases, lifecycle, receipts
from conftest import db_state, last_event, make_task as make, refused_unchanged

FAKE_KEY = "AKIA2R29TQLR0VLG5W1H"
RUN = ("--harness", "claude-code", "--model", "claude-opus-4-5", "--session", "s-42", "--workspace", "/src/trove")


def run_receipt(cli_json, task_id, *extra, outcome="ok"):
    return cli_json("autopilot", "run-receipt", task_id, *RUN, "--outcome", outcome, *extra)


def test_a_run_receipt_is_sealed_evidence_of_who_ran_with_what_where_and_how_it_ended(conn, cli_json):
    make(conn)
    out = run_receipt(cli_json, "t1", "--timeout-seconds", "1800", "--capability", "shell", "--capability",
                      "network", "--capability", "shell")
    assert out["kind"] == "run" and out["deduplicated"] is False and out["task_id"] == "t1"
    assert out["run"] == {"harness": "claude-code", "model": "claude-opus-4-5", "session": "s-42",
                          "workspace": "/src/trove", "outcome": "ok", "timeout_seconds": 1800,
                          "capabilities": ["network", "shell"]}
    loaded = receipts.load(conn, out["receipt_id"])
    assert loaded["hash_ok"] is True and loaded["document"]["payload"] == out["run"]
    assert loaded["document"]["format"] == "mindos-receipt-v1"
    assert last_event(conn, "receipt_added") == {"receipt_id": out["receipt_id"], "kind": "run",
                                                 "file_hash": out["file_hash"]}
    shown = cli_json("autopilot", "show", "t1")["receipts"]
    assert [(r["receipt_id"], r["kind"]) for r in shown] == [(out["receipt_id"], "run")]


@pytest.mark.parametrize("outcome", ["failed", "timeout", "cancelled"])
def test_other_outcomes_are_kind_run_outcome(conn, cli_json, outcome):
    make(conn)
    out = run_receipt(cli_json, "t1", outcome=outcome)
    assert out["kind"] == f"run:{outcome}" and out["run"]["outcome"] == outcome
    assert "timeout_seconds" not in out["run"]


def test_a_definition_of_done_requiring_run_is_met_only_by_a_successful_run(conn, cli, cli_json):
    make(conn, requires_receipts=["run"])
    leases.claim(conn, "t1", "claude-code")
    run_receipt(cli_json, "t1", outcome="failed")
    run_receipt(cli_json, "t1", outcome="timeout")
    rc, out, err = cli("autopilot", "complete", "t1", "--owner", "claude-code")
    assert (rc, out) == (1, "") and "missing required receipt kinds: run" in err
    ok = run_receipt(cli_json, "t1")
    done = cli_json("autopilot", "complete", "t1", "--owner", "claude-code", "--receipt", ok["receipt_id"])
    assert done["status"] == "completed" and done["required_evidence_met"] is True
    assert done["receipts"] == [ok["receipt_id"]]
    assert lifecycle.metrics(conn)["tasks_missing_required_evidence"] == 0


def test_the_operator_override_honours_a_run_requirement_too(conn, cli, cli_json):
    make(conn, requires_receipts=["run"])
    rc, out, err = cli("autopilot", "update", "t1", "--status", "completed")
    assert rc == 1 and "missing required receipt kinds: run" in err
    run_receipt(cli_json, "t1")
    assert cli_json("autopilot", "update", "t1", "--status", "completed")["status"] == "completed"


def test_recording_the_same_run_again_returns_the_first_receipt(conn, cli_json):
    make(conn)
    first = run_receipt(cli_json, "t1", "--capability", "shell")
    before = db_state(conn)
    again = run_receipt(cli_json, "t1", "--capability", "shell")
    assert again["deduplicated"] is True and again["receipt_id"] == first["receipt_id"]
    assert {k: again[k] for k in ("file_hash", "stored_path", "file", "path", "bytes", "kind", "created_at")} == \
        {k: first[k] for k in ("file_hash", "stored_path", "file", "path", "bytes", "kind", "created_at")}
    assert db_state(conn) == before
    # a different run (another outcome, another session) is a new receipt
    assert run_receipt(cli_json, "t1", outcome="failed")["deduplicated"] is False
    assert cli_json("autopilot", "run-receipt", "t1", "--harness", "claude-code", "--model", "claude-opus-4-5",
                    "--session", "s-43", "--workspace", "/src/trove", "--outcome", "ok",
                    "--capability", "shell")["deduplicated"] is False
    assert conn.execute("SELECT count(*) FROM receipts").fetchone()[0] == 3


def test_a_request_id_replays_the_first_answer(conn, cli, cli_json):
    make(conn)
    first = run_receipt(cli_json, "t1", "--request-id", "run-1")
    before = db_state(conn)
    again = run_receipt(cli_json, "t1", "--request-id", "run-1")
    assert again["replayed"] is True and again["receipt_id"] == first["receipt_id"]
    assert db_state(conn) == before
    rc, out, err = cli("autopilot", "run-receipt", "t1", *RUN, "--outcome", "failed", "--request-id", "run-1")
    assert (rc, out) == (1, "") and "different run-receipt request" in err


def test_bad_input_is_refused_with_a_clear_error_and_nothing_written(conn, cli):
    make(conn)
    before = db_state(conn)
    cases = [
        ([*RUN, "--outcome", "success"], 2, "invalid choice: 'success'"),
        ([*RUN, "--outcome", ""], 2, "invalid choice"),
        ([*RUN], 2, "the following arguments are required: --outcome"),
        (["--harness", "x", "--outcome", "ok"], 2, "required"),
        ([*RUN, "--outcome", "ok", "--timeout-seconds", "0"], 2, "invalid --timeout-seconds"),
        ([*RUN, "--outcome", "ok", "--timeout-seconds", "-5"], 2, "invalid --timeout-seconds"),
        ([*RUN, "--outcome", "ok", "--timeout-seconds", "1e3"], 2, "ASCII digits"),
        ([*RUN, "--outcome", "ok", "--timeout-seconds", "99999999999"], 2, "invalid --timeout-seconds"),
        ([*RUN, "--outcome", "ok", "--capability", "Shell"], 2, "invalid --capability"),
        ([*RUN, "--outcome", "ok", "--capability", "a b"], 2, "invalid --capability"),
        ([*RUN, "--outcome", "ok", "--request-id", "no spaces"], 2, "invalid --request-id"),
    ]
    for flag in ("--harness", "--model", "--session", "--workspace"):
        args = list(RUN)
        at = args.index(flag) + 1
        for value, phrase in (("", "must not be empty"), ("   ", "must not be empty"), ("a\nb", "single line"),
                              ("x" * 5000, "over the limit")):
            args[at] = value
            cases.append(([*args, "--outcome", "ok"], 2, f"invalid {flag}: "))
            cases.append(([*args, "--outcome", "ok"], 2, phrase))
    for argv, code, phrase in cases:
        rc, out, err = cli("autopilot", "run-receipt", "t1", *argv)
        assert (rc, out) == (code, ""), (argv, err)
        assert phrase in err and len(err.strip().splitlines()) == 1, (argv, err)
    for task_id, code, phrase in (("nope", 1, "unknown task 'nope'"), ("'; DROP TABLE receipts; --", 2, "invalid task id")):
        rc, out, err = cli("autopilot", "run-receipt", task_id, *RUN, "--outcome", "ok")
        assert (rc, out) == (code, "") and phrase in err
    assert db_state(conn) == before
    with pytest.raises(InvalidInput, match="invalid --outcome"):
        receipts.add_run(conn, "t1", harness="h", model="m", session="s", workspace="w", outcome="won")
    refused_unchanged(conn, lambda: receipts.add_run(conn, "nope", harness="h", model="m", session="s", workspace="w",
                                                     outcome="ok"), NotFound, "unknown task")


@pytest.mark.parametrize("flag", ["--harness", "--model", "--session", "--workspace"])
def test_the_guard_refuses_a_credential_in_any_field(conn, cli, flag):
    make(conn)
    args = list(RUN)
    args[args.index(flag) + 1] = f"/home/ci/{FAKE_KEY}" if flag == "--workspace" else f"k-{FAKE_KEY}"
    before = db_state(conn)
    rc, out, err = cli("autopilot", "run-receipt", "t1", *args, "--outcome", "ok", "--json-errors")
    assert rc == 1 and out == "" and json.loads(err)["error"]["code"] == "secret_blocked" and FAKE_KEY not in err
    after = db_state(conn)
    assert after[1] == before[1] == []  # no receipt file
    assert [line for line in after[0] if "audit_events" not in line] == \
        [line for line in before[0] if "audit_events" not in line]
    assert last_event(conn, "secret_blocked")["fields"] == [flag.lstrip("-")]
    assert not any(FAKE_KEY in line for line in after[0])


def test_the_mcp_run_receipt_tool_mirrors_the_command(conn):
    make(conn)
    tool = tools.exposed()["run-receipt"]
    schema = tool.schema
    assert schema["properties"]["outcome"]["enum"] == list(receipts.RUN_OUTCOMES)
    assert schema["properties"]["timeout_seconds"]["type"] == "integer"
    assert schema["properties"]["capability"]["type"] == "array"
    assert set(schema["required"]) == {"task_id", "harness", "model", "session", "workspace", "outcome"}
    answer = server.Server(conn, {"run-receipt": tool}).run(tool, {
        "task_id": "t1", "harness": "codex", "model": "gpt-5", "session": "s1", "workspace": "/w",
        "outcome": "timeout", "timeout_seconds": 600, "capability": ["shell"]})
    assert answer["isError"] is False and answer["structuredContent"]["kind"] == "run:timeout"
