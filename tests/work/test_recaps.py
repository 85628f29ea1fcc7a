"""complete --recap / --recap-file: one bounded, guarded paragraph of what was done, which show,
the dependency context of dependent tasks' packs and handoff views surface."""

import json
import os

import pytest

from mindos.context import builder, pack
from mindos.errors import InvalidInput
from mindos.memory import handoffs
from mindos.work import leases, lifecycle, rows
from conftest import db_state, last_event, make_task as make

FAKE_KEY = "AKIA2R29TQLR0VLG5W1H"
RECAP = "Moved invoice parsing to the streaming reader; the last-row bug is fixed and covered by test_last_row."


def held(conn, task_id="t1", owner="hermes", **kw):
    make(conn, task_id, **kw)
    return leases.claim(conn, task_id, owner)


def test_complete_stores_the_recap_and_show_surfaces_it(conn, cli_json):
    held(conn)
    out = cli_json("autopilot", "complete", "t1", "--owner", "hermes", "--recap", f"  {RECAP}\n")
    assert out["status"] == "completed" and out["recap"] == RECAP  # stored trimmed
    assert last_event(conn, "completed")["recap"] == RECAP
    assert cli_json("autopilot", "show", "t1")["task"]["recap"] == RECAP


def test_without_a_recap_nothing_changes(conn, cli_json):
    held(conn)
    out = cli_json("autopilot", "complete", "t1", "--owner", "hermes")
    assert out["recap"] == "" and "recap" not in last_event(conn, "completed")


def test_recap_file_is_read_from_a_regular_file(conn, cli_json, tmp_path):
    held(conn)
    path = tmp_path / "recap.txt"
    path.write_text(RECAP + "\n", encoding="utf-8")
    assert cli_json("autopilot", "complete", "t1", "--owner", "hermes", "--recap-file", str(path))["recap"] == RECAP


def test_recap_file_refuses_symlinks_fifos_devices_and_directories(conn, cli, tmp_path):
    held(conn)
    target = tmp_path / "recap.txt"
    target.write_text(RECAP, encoding="utf-8")
    link = tmp_path / "link.txt"
    os.symlink(target, link)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # no writer: a blocking open would hang the call forever
    before = db_state(conn)
    for path, phrase in [(link, "is a symlink"), (fifo, "is a FIFO (named pipe), not a regular file"),
                         ("/dev/null", "is a character device, not a regular file"),
                         (tmp_path, "is a directory, not a regular file"),
                         (tmp_path / "missing", "cannot read")]:
        rc, out, err = cli("autopilot", "complete", "t1", "--owner", "hermes", "--recap-file", str(path))
        assert (rc, out) == (2, "") and phrase in err and len(err.strip().splitlines()) == 1, (path, err)
    rc, out, err = cli("autopilot", "complete", "t1", "--owner", "hermes", "--recap", "x", "--recap-file",
                       str(target))
    assert rc == 2 and "not allowed with" in err
    assert db_state(conn) == before


def test_recap_is_bounded_and_refuses_blank_and_binary_text(conn, cli, tmp_path):
    held(conn)
    big = tmp_path / "big.txt"
    big.write_text("y" * (lifecycle.MAX_RECAP + 1), encoding="utf-8")
    huge = tmp_path / "huge.txt"
    huge.write_bytes(b"z" * (3 * 1024 * 1024))  # refused by the file-size cap before it is read
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe not utf-8")
    before = db_state(conn)
    for argv, phrase in [
        (["--recap", "y" * (lifecycle.MAX_RECAP + 1)], f"over the limit of {lifecycle.MAX_RECAP}"),
        (["--recap-file", str(big)], f"over the limit of {lifecycle.MAX_RECAP}"),
        (["--recap-file", str(huge)], "is too large"),
        (["--recap-file", str(bad)], "not valid UTF-8"),
        (["--recap", "   \n\t "], "must not be empty"),
        (["--recap", "a\x00b"], "NUL"),
    ]:
        rc, out, err = cli("autopilot", "complete", "t1", "--owner", "hermes", *argv)
        assert (rc, out) == (2, "") and phrase in err and len(err.strip().splitlines()) == 1, (argv, err)
    assert db_state(conn) == before
    with pytest.raises(InvalidInput, match="invalid --recap"):
        lifecycle.complete(conn, "t1", "hermes", recap=["not", "text"])
    assert lifecycle.check_recap("y" * lifecycle.MAX_RECAP + "\n") == "y" * lifecycle.MAX_RECAP  # the limit fits


def test_a_credential_in_the_recap_is_refused_and_audited(conn, cli):
    held(conn)
    rc, out, err = cli("autopilot", "complete", "t1", "--owner", "hermes", "--recap", f"used key {FAKE_KEY}",
                       "--json-errors")
    assert rc == 1 and out == "" and json.loads(err)["error"]["code"] == "secret_blocked" and FAKE_KEY not in err
    task = rows.get(conn, "t1")
    assert task["status"] == "claimed" and task["recap"] == ""
    assert last_event(conn, "secret_blocked")["fields"] == ["recap"]
    assert not any(FAKE_KEY in line for line in db_state(conn)[0])


def test_a_retried_complete_replays_instead_of_failing(conn, cli, cli_json):
    held(conn)
    argv = ("autopilot", "complete", "t1", "--owner", "hermes", "--recap", RECAP, "--request-id", "done-1")
    first = cli_json(*argv)
    before = db_state(conn)
    again = cli_json(*argv)
    assert again["replayed"] is True and again["recap"] == first["recap"] == RECAP
    assert db_state(conn) == before
    # without the key the retry is refused (the lease is gone), and changes nothing
    rc, out, err = cli("autopilot", "complete", "t1", "--owner", "hermes", "--recap", RECAP)
    assert (rc, out) == (1, "") and "completed" in err
    assert db_state(conn) == before


def test_dependent_packs_carry_the_prerequisite_recap(conn, cli_json):
    held(conn, "hub")
    make(conn, "plain")
    leases.claim(conn, "plain", "hermes")
    make(conn, "leaf", depends_on=["hub", "plain"])
    lifecycle.complete(conn, "hub", "hermes", recap=RECAP)
    lifecycle.complete(conn, "plain", "hermes")
    out = cli_json("autopilot", "context", "leaf", "--dep-context", "5")
    by_id = {item["id"]: item for item in builder.decode(out)["dep_context"]}  # printed as a table
    assert by_id["hub"]["recap"] == RECAP
    assert "recap" not in by_id["plain"]  # a prerequisite without one packs exactly as before
    assert "dep_context" not in pack.pack_context(conn, "leaf")  # the section stays opt-in


def test_handoff_views_surface_the_task_recap(conn, cli_json):
    held(conn)
    handoffs.record(conn, "t1", from_agent="hermes", to_agent="codex", objective="ship the parser")
    assert cli_json("autopilot", "handoff-current", "t1")["task_recap"] == ""
    lifecycle.complete(conn, "t1", "hermes", recap=RECAP)
    assert cli_json("autopilot", "handoff-current", "t1")["task_recap"] == RECAP
    inbox = cli_json("autopilot", "handoff-inbox", "--agent", "codex")
    assert [item["task_recap"] for item in inbox["items"]] == [RECAP]


def test_the_mcp_complete_tool_takes_a_recap_but_no_recap_file(conn):
    from mindos.mcp import server, tools

    held(conn)
    tool = tools.exposed()["complete"]
    assert "recap" in tool.schema["properties"] and "recap_file" not in tool.schema["properties"]
    answer = server.Server(conn, {"complete": tool}).run(tool, {"task_id": "t1", "owner": "hermes", "recap": RECAP})
    assert answer["isError"] is False and answer["structuredContent"]["recap"] == RECAP


def test_recap_from_stdin_through_the_real_front_door(conn, home):
    held(conn)
    import subprocess
    import sys

    from conftest import ROOT

    env = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home), MINDOS_NOW="2026-08-21T09:05:00Z")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "autopilot.py"), "complete", "t1", "--owner", "hermes",
                           "--recap-file", "-"], input=RECAP, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "" and json.loads(proc.stdout)["recap"] == RECAP
