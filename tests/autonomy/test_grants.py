"""Continuation grants: declare, expiry by the clock, exact model binding, levels, show."""

import json

import pytest

from conftest import last_event, make_task, refused_unchanged
from mindos.autonomy import grants
from mindos.core import clock
from mindos.errors import InvalidInput, NotFound, Refused
from mindos.views import show

MODEL = "opencode/x-preview-f-free"


def declare(conn, task_id="t1", model=MODEL, level="L1", hours=24, by="leo"):
    return grants.declare(conn, task_id, model_name=model, autonomy_level=level, granted_by=by, grant_hours=hours)


def test_declare_records_a_model_bound_time_limited_audited_grant(conn):
    make_task(conn, "t1")
    grant = declare(conn)
    assert (grant["model"], grant["autonomy_level"], grant["granted_by"]) == (MODEL, "L1", "leo")
    assert grant["granted_at"] == "2026-08-21T09:00:00Z" and grant["expires_at"] == "2026-08-22T09:00:00Z"
    assert grant["active"] is True and grant["expired"] is False
    assert last_event(conn, "grant_declared") == {"grant_id": grant["id"], "model": MODEL, "autonomy_level": "L1",
                                                  "granted_by": "leo", "grant_hours": 24,
                                                  "expires_at": "2026-08-22T09:00:00Z"}


def test_grant_expiry_is_enforced_by_the_clock(conn):
    make_task(conn, "t1")
    declare(conn, hours=2)
    assert grants.check(conn, "t1", MODEL)["authorized"] is True
    clock.advance(hours=1, minutes=59, seconds=59)
    assert grants.authorize(conn, "t1", MODEL)["reason"] == "granted"
    clock.advance(seconds=1)
    result = grants.check(conn, "t1", MODEL)
    assert (result["authorized"], result["reason"], result["grant"]["expired"]) == (False, "grant_expired", True)
    with pytest.raises(Refused, match=r"expired at 2026-08-21T11:00:00Z"):
        grants.authorize(conn, "t1", MODEL)
    assert last_event(conn, "grant_refused")["reason"] == "grant_expired"


def test_a_grant_for_one_model_never_authorizes_another(conn):
    make_task(conn, "t1")
    declare(conn)
    for other in ("opencode/x-preview-f", "OpenCode/x-preview-f-free", "opencode/x-preview-f-free-2", "codex/gpt"):
        assert grants.check(conn, "t1", other)["reason"] == "wrong_model"
        with pytest.raises(Refused, match="binds model 'opencode/x-preview-f-free'"):
            grants.authorize(conn, "t1", other)
    assert last_event(conn, "grant_refused") == {"model": "codex/gpt", "level": "L0", "reason": "wrong_model",
                                                 "grant_id": 1}


def test_levels_are_ordered_and_missing_grants_refuse(conn):
    make_task(conn, "t1")
    make_task(conn, "t2")
    assert grants.check(conn, "t2", MODEL)["reason"] == "no_grant"
    declare(conn, level="L1")
    assert grants.check(conn, "t1", MODEL, "L1")["authorized"] is True
    assert grants.check(conn, "t1", MODEL, "L2")["reason"] == "level_too_low"


def test_declaring_again_supersedes_and_keeps_history(conn):
    make_task(conn, "t1")
    first = declare(conn)
    clock.advance(hours=1)
    second = declare(conn, model="codex/gpt-5", level="L2", hours=4)
    assert grants.current(conn, "t1")["id"] == second["id"]
    history = grants.history(conn, "t1")
    assert [g["id"] for g in history] == [first["id"], second["id"]]
    assert history[0]["superseded_by"] == second["id"] and history[0]["active"] is False
    assert last_event(conn, "grant_declared")["supersedes"] == first["id"]
    assert grants.check(conn, "t1", MODEL)["reason"] == "wrong_model"


def test_declare_refuses_bad_input_unknown_and_finished_tasks(conn):
    make_task(conn, "t1")
    for kwargs, error in (({"model": "bad model"}, InvalidInput), ({"level": "L4"}, InvalidInput),
                          ({"hours": 0}, InvalidInput), ({"hours": 24 * 31}, InvalidInput),
                          ({"by": ""}, InvalidInput), ({"task_id": "nope"}, NotFound)):
        refused_unchanged(conn, lambda: declare(conn, **kwargs), error)
    conn.execute("UPDATE tasks SET status = 'completed' WHERE id = 't1'")
    refused_unchanged(conn, lambda: declare(conn), Refused, "finished task")


def test_show_surfaces_the_grant(conn):
    make_task(conn, "t1")
    sections = (grants.show_section,)  # what the show command passes down
    assert show.show(conn, "t1", sections=sections)["grant"] is None
    assert "grant" not in show.show(conn, "t1")  # the view alone names no upper floor
    declare(conn)
    assert show.show(conn, "t1", sections=sections)["grant"]["model"] == MODEL
    clock.advance(hours=25)
    assert show.show(conn, "t1", sections=sections)["grant"]["expired"] is True


def test_cli_declare_show_and_grant_check(cli, cli_json, conn):
    make_task(conn, "t1")
    grant = cli_json("autopilot", "declare", "t1", "--model", MODEL, "--autonomy-level", "L1", "--granted-by", "leo",
                     "--grant-hours", "24")
    assert grant["active"] is True
    assert cli_json("autopilot", "show", "t1")["grant"]["id"] == grant["id"]
    # the commands pass the grant down to the engines that may not name autonomy
    assert cli_json("autopilot", "recall", "t1", "--agent", "codex")["grant"]["id"] == grant["id"]
    assert cli_json("autopilot", "resume", "t1", "--agent", "codex")["recall"]["grant"]["id"] == grant["id"]
    assert cli_json("autopilot", "metrics")["grants_active"] == 1
    assert cli_json("autopilot", "grant-check", "t1", "--model", MODEL, "--level", "L1")["authorized"] is True
    rc, out, err = cli("autopilot", "grant-check", "t1", "--model", "codex/gpt")
    assert (rc, out) == (1, "") and err.count("\n") == 1 and "binds model" in err
    rc, out, err = cli("autopilot", "declare", "t1", "--model", MODEL, "--autonomy-level", "L9", "--granted-by",
                       "leo", "--grant-hours", "24")
    assert (rc, out) == (2, "") and err.count("\n") == 1
    rc, out, err = cli("autopilot", "declare", "t1", "--model", "a b", "--autonomy-level", "L1", "--granted-by",
                       "leo", "--grant-hours", "24")
    assert (rc, out) == (2, "") and "invalid --model" in err and "Traceback" not in err
    assert json.loads(cli("ops", "sense")[1])["findings"] == []


def test_next_claim_recall_carries_the_grant_it_is_passed(cli_json, conn):
    make_task(conn, "t1")
    grant = declare(conn)
    picked = cli_json("autopilot", "next", "--claim", "--owner", "codex", "--recall")
    assert picked["task"]["id"] == "t1" and picked["recall"]["grant"]["id"] == grant["id"]
