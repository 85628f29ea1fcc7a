"""fail --cause: transient and infra requeue under backoff as before; a defect requeues the task
behind one correction task (linked, inheriting project, priority and tags, carrying the reason
and the evidence) that dispatch routes first.  Retries never make a second correction."""

import json

import pytest

from mindos.context import builder
from mindos.errors import InvalidInput, NotFound, Refused
from mindos.mcp import server, tools
from mindos.views import show
from mindos.work import dispatch, leases, lifecycle, receipts, rows
from conftest import db_state, last_event, make_task as make, refused_unchanged

FAKE_KEY = "AKIA2R29TQLR0VLG5W1H"


def held(conn, task_id="t1", owner="codex", **kw):
    make(conn, task_id, **kw)
    return leases.claim(conn, task_id, owner)


def corrections_of(conn, task_id):
    return [r[0] for r in conn.execute("SELECT id FROM tasks WHERE correction_of = ? ORDER BY id", (task_id,))]


def task_count(conn):
    return conn.execute("SELECT count(*) FROM tasks").fetchone()[0]


# ---------------------------------------------------------------------------------------
# Without a defect: today's behaviour


def test_no_cause_keeps_the_output_exactly_as_before(conn, cli_json):
    held(conn)
    out = cli_json("autopilot", "fail", "t1", "--owner", "codex", "--reason", "flaky network")
    assert out["retry_scheduled"] is True and out["backoff_seconds"] == 60 and out["status"] == "queued"
    for key in ("cause", "correction_task", "correction_created", "receipts"):
        assert key not in out
        assert key not in last_event(conn, "task_failed")
    assert task_count(conn) == 1


@pytest.mark.parametrize("cause", ["transient", "infra"])
def test_transient_and_infra_requeue_under_backoff_and_record_the_cause(conn, cli_json, cause):
    held(conn)
    out = cli_json("autopilot", "fail", "t1", "--owner", "codex", "--cause", cause, "--reason", "runner died")
    assert out["cause"] == cause and out["retry_scheduled"] is True and out["backoff_seconds"] == 60
    assert out["recover_after"] is not None and "correction_task" not in out
    assert last_event(conn, "task_failed")["cause"] == cause
    assert task_count(conn) == 1 and last_event(conn, "correction_task_created") is None


def test_a_terminal_failure_records_the_cause_too(conn):
    held(conn)
    out = lifecycle.fail(conn, "t1", "codex", cause="infra", no_retry=True)
    assert out["status"] == "failed" and out["cause"] == "infra"
    assert last_event(conn, "task_failed_terminal")["cause"] == "infra"


# ---------------------------------------------------------------------------------------
# A defect opens one correction task


def test_a_defect_opens_one_linked_correction_task_that_dispatch_routes_first(conn, cli_json):
    held(conn, priority="P1", tags=["billing"], title="Parse invoices")
    evidence = receipts.add(conn, "t1", "ci", {"tests": "red", "failing": "test_last_row"})["receipt_id"]
    out = cli_json("autopilot", "fail", "t1", "--owner", "codex", "--cause", "defect",
                   "--reason", "parser drops the last row", "--receipt", evidence)
    fix = out["correction_task"]
    assert out["correction_created"] is True and out["cause"] == "defect" and out["receipts"] == [evidence]
    assert out["status"] == "queued" and out["retry_scheduled"] is True and out["backoff_seconds"] == 0
    assert out["recover_after"] is None and out["retry_count"] == 1 and out["lease_owner"] == ""
    correction = rows.get(conn, fix)
    assert correction["correction_of"] == "t1" and correction["status"] == "queued"
    assert (correction["project"], correction["priority"], correction["tags"]) == ("Trove", "P1", ["billing"])
    assert correction["title"] == "Correct the defect in: Parse invoices"
    assert "parser drops the last row" in correction["description"] and evidence in correction["description"]
    # the failed task now waits for its correction
    assert [r[0] for r in conn.execute("SELECT depends_on FROM dependencies WHERE task_id = 't1'")] == [fix]
    # audited on both tasks
    assert last_event(conn, "correction_task_created") == {
        "correction_task": fix, "cause": "defect", "reason": "parser drops the last row", "depends_on": fix,
        "receipts": [evidence]}
    assert last_event(conn, "created")["correction_of"] == "t1"
    assert cli_json("autopilot", "metrics")["correction_tasks_created_total"] == 1
    failed = last_event(conn, "task_failed")
    assert failed["cause"] == "defect" and failed["correction_task"] == fix and failed["correction_created"] is True
    # dispatch picks the fix first, and explain names the correction the task waits for
    assert cli_json("autopilot", "next")["task"]["id"] == fix
    explained = cli_json("autopilot", "next", "--explain")
    skip = next(item for item in explained["skipped"] if item["task_id"] == "t1")
    assert skip == {"task_id": "t1", "reason": "unsatisfied_dependencies", "blocked_by": [fix],
                    "awaiting_correction": [fix]}
    # show names it both ways
    view = cli_json("autopilot", "show", "t1")
    assert view["corrections"] == [{"id": fix, "status": "queued", "title": correction["title"]}]
    assert view["dependencies"][0]["id"] == fix
    assert cli_json("autopilot", "show", fix)["task"]["correction_of"] == "t1"


def test_the_correction_inherits_the_urgency_and_unblocks_the_task_when_done(conn, cli_json):
    held(conn, priority="P0")
    make(conn, "other", priority="P1")
    fix = lifecycle.fail(conn, "t1", "codex", cause="defect", reason="bad math")["correction_task"]
    assert dispatch.next_task(conn)["task"]["id"] == fix  # P0 like the task it unblocks, ahead of P1
    leases.claim(conn, fix, "fixer")
    done = lifecycle.complete(conn, fix, "fixer", recap="Fixed the rounding in totals.")
    assert done["newly_unblocked"] == ["t1"]
    assert dispatch.next_task(conn)["task"]["id"] == "t1"
    # the agent retrying the task reads what the fix did, not the fix's history
    packed = builder.decode(cli_json("autopilot", "context", "t1", "--dep-context", "3"))["dep_context"]
    assert [(item["id"], item["recap"]) for item in packed] == [(fix, "Fixed the rounding in totals.")]


def test_a_retried_defect_failure_never_makes_a_second_correction(conn, cli, cli_json):
    held(conn)
    argv = ("autopilot", "fail", "t1", "--owner", "codex", "--cause", "defect", "--reason", "off by one",
            "--request-id", "fail-1")
    first = cli_json(*argv)
    before = db_state(conn)
    again = cli_json(*argv)  # the agent never saw the answer and retries
    assert again["replayed"] is True and again["correction_task"] == first["correction_task"]
    assert db_state(conn) == before
    # the same key for a different request is refused, not replayed
    rc, out, err = cli("autopilot", "fail", "t1", "--owner", "codex", "--cause", "infra", "--request-id", "fail-1")
    assert (rc, out) == (1, "") and "different fail request" in err
    # an operator removes the edge, the task is claimed and fails with a defect again: the
    # open correction is reused (and relinked), never duplicated
    fix = first["correction_task"]
    cli_json("autopilot", "dep-remove", "t1", fix)
    leases.claim(conn, "t1", "codex")
    second = cli_json("autopilot", "fail", "t1", "--owner", "codex", "--cause", "defect", "--reason", "still")
    assert second["correction_task"] == fix and second["correction_created"] is False
    assert corrections_of(conn, "t1") == [fix]
    assert last_event(conn, "task_failed")["correction_created"] is False
    assert [r[0] for r in conn.execute("SELECT depends_on FROM dependencies WHERE task_id = 't1'")] == [fix]


def test_a_new_defect_after_the_fix_opens_a_new_correction(conn):
    held(conn)
    first = lifecycle.fail(conn, "t1", "codex", cause="defect", reason="one")["correction_task"]
    leases.claim(conn, first, "fixer")
    lifecycle.complete(conn, first, "fixer")
    leases.claim(conn, "t1", "codex")
    second = lifecycle.fail(conn, "t1", "codex", cause="defect", reason="two")
    assert second["correction_created"] is True and second["correction_task"] != first
    assert corrections_of(conn, "t1") == sorted([first, second["correction_task"]])


def test_a_defect_past_the_budget_or_with_no_retry_fails_terminally_without_a_correction(conn):
    held(conn)
    out = lifecycle.fail(conn, "t1", "codex", cause="defect", no_retry=True, reason="unfixable")
    assert out["status"] == "failed" and out["cause"] == "defect" and "correction_task" not in out
    held(conn, "t2")
    out = lifecycle.fail(conn, "t2", "codex", cause="defect", max_retries=0)
    assert out["status"] == "failed" and "correction_task" not in out
    assert task_count(conn) == 2 and last_event(conn, "correction_task_created") is None


def test_a_long_title_still_makes_a_valid_correction_title(conn):
    held(conn, title="x" * 500)
    fix = lifecycle.fail(conn, "t1", "codex", cause="defect")["correction_task"]
    assert len(rows.get(conn, fix)["title"]) == 500


# ---------------------------------------------------------------------------------------
# Bad input changes nothing


def test_bad_input_is_refused_with_a_clear_error_and_the_database_unchanged(conn, cli):
    held(conn)
    make(conn, "t2")
    foreign = receipts.add(conn, "t2", "ci", {"ok": True})["receipt_id"]
    before = db_state(conn)
    for argv, code, phrase in [
        (["--cause", "bogus"], 2, "invalid choice: 'bogus'"),
        (["--cause", ""], 2, "invalid choice"),
        (["--cause", "DEFECT"], 2, "invalid choice"),
        (["--cause", "defect", "--receipt", "r-nope"], 1, "unknown receipt 'r-nope'"),
        (["--cause", "defect", "--receipt", foreign], 1, "belongs to another task"),
        (["--cause", "defect", "--receipt", "'; DROP TABLE tasks; --"], 2, "invalid --receipt"),
        (["--cause", "defect", "--reason", "two\nlines"], 2, "single line"),
        (["--cause", "defect", "--reason", "r" * 5000], 2, "over the limit of 4096"),
        (["--cause", "defect", "--request-id", "bad key!"], 2, "invalid --request-id"),
    ]:
        rc, out, err = cli("autopilot", "fail", "t1", "--owner", "codex", *argv)
        assert (rc, out) == (code, ""), argv
        assert phrase in err and len(err.strip().splitlines()) == 1, (argv, err)
    rc, out, err = cli("autopilot", "fail", "nope", "--owner", "codex", "--cause", "defect")
    assert (rc, out) == (1, "") and "unknown task 'nope'" in err
    assert db_state(conn)[1] == before[1]
    assert [line for line in db_state(conn)[0] if "audit_events" not in line] == \
        [line for line in before[0] if "audit_events" not in line]
    with pytest.raises(InvalidInput, match="invalid --cause"):
        lifecycle.fail(conn, "t1", "codex", cause="bogus")


def test_a_foreign_holder_cannot_open_a_correction(conn):
    held(conn)
    refused_unchanged(conn, lambda: lifecycle.fail(conn, "t1", "intruder", cause="defect"), Refused,
                      "leased by 'codex'")
    refused_unchanged(conn, lambda: lifecycle.fail(conn, "t1", "codex", cause="defect", receipts=["r-x"]), NotFound,
                      "unknown receipt")
    assert corrections_of(conn, "t1") == []


def test_the_guard_refuses_a_credential_in_the_reason_before_any_correction(conn, cli):
    held(conn)
    rc, out, err = cli("autopilot", "fail", "t1", "--owner", "codex", "--cause", "defect",
                       "--reason", f"deploy key {FAKE_KEY} rejected", "--json-errors")
    assert rc == 1 and out == "" and json.loads(err)["error"]["code"] == "secret_blocked"
    assert FAKE_KEY not in err
    assert task_count(conn) == 1 and rows.get(conn, "t1")["lease_owner"] == "codex"
    assert last_event(conn, "secret_blocked")["fields"] == ["reason"]
    assert not any(FAKE_KEY in line for line in db_state(conn)[0])


def test_the_mcp_fail_tool_offers_the_causes(conn):
    held(conn)
    tool = tools.exposed()["fail"]
    assert tool.schema["properties"]["cause"]["enum"] == ["transient", "infra", "defect"]
    answer = server.Server(conn, {"fail": tool}).run(tool, {"task_id": "t1", "owner": "codex", "cause": "defect"})
    assert answer["isError"] is False and answer["structuredContent"]["correction_created"] is True
    bad = server.Server(conn, {"fail": tool}).run(tool, {"task_id": "t1", "owner": "codex", "cause": "meh"})
    assert bad["isError"] is True


def test_show_of_a_task_without_corrections_lists_none(conn):
    make(conn)
    assert show.show(conn, "t1")["corrections"] == []
