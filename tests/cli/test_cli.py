"""The front doors as agents use them: real subprocesses and in-process main(argv)."""

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from conftest import ROOT, script
from mindos.store import db, ledger


def _ok(proc):
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return json.loads(proc.stdout)


def _fails(proc, code):
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.strip()
    assert "Traceback" not in proc.stderr
    return proc.stderr.strip()


def test_subprocess_success_prints_json_and_nothing_on_stderr(home):
    info = _ok(script("autopilot.py", "init", home=home))
    assert info["home"] == str(home) and info["schema_version"] == db.latest_version()
    task = _ok(script("autopilot.py", "create", "--project", "Trove", "--title", "Example task", "--priority", "P1",
                      "--next-action", "Inspect evidence", "--id", "ex-1", home=home,
                      env={"MINDOS_NOW": "2026-08-21T10:00:00+02:00"}))
    assert (task["id"], task["priority"], task["created_at"]) == ("ex-1", "P1", "2026-08-21T08:00:00Z")
    shown = _ok(script("autopilot.py", "show", "ex-1", home=home))
    assert shown["task"]["title"] == "Example task" and shown["audit"][0]["action"] == "created"
    assert [t["id"] for t in _ok(script("autopilot.py", "list", home=home))] == ["ex-1"]


def test_subprocess_failures_are_one_line_with_the_right_exit_code(home):
    _ok(script("autopilot.py", "create", "--project", "P", "--title", "t", "--id", "dup", home=home))
    assert _fails(script("autopilot.py", "show", "missing", home=home), 1) == "unknown task 'missing'"
    assert _fails(script("autopilot.py", "create", "--project", "P", "--title", "again", "--id", "dup",
                         home=home), 1) == "task 'dup' already exists"
    assert _fails(script("autopilot.py", "create", "--project", "P", "--title", "t", "--priority", "P9",
                         home=home), 2).startswith("invalid --priority")
    assert _fails(script("autopilot.py", "update", "dup", "--due-at", "someday", home=home),
                  2).startswith("invalid --due-at")
    assert "--title" in _fails(script("autopilot.py", "create", "--project", "P", home=home), 2)
    assert "no-such-command" in _fails(script("autopilot.py", "no-such-command", home=home), 2)
    assert _fails(script("autopilot.py", "list", "--limit", "many", home=home), 2)


@pytest.mark.parametrize("argv", [
    ["create", "--project", "P", "--title", b"\xff\xfe not utf-8"],
    ["create", "--project", "P", "--title", "x", "--id", "../escape"],
    ["create", "--project", "P", "--title", "x", "--id", "a/b"],
    ["create", "--project", "P", "--title", "x", "--due-at", "0001-01-01T00:00:00+01:00"],
    ["create", "--project", "P", "--title", ""],
    ["receipt", "nope", "--kind", "ci", "--payload", "[" * 5000],
    ["search", b"\xff", "--rank"],
    ["events", "--until", "2026-02-30"],
    ["show", "a" * 65],
])
def test_bad_input_never_produces_a_traceback(home, argv):
    _ok(script("autopilot.py", "init", home=home))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "autopilot.py"), *argv], capture_output=True,
                          env=dict(os.environ, HERMES_AUTOPILOT_HOME=str(home)), timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == b"" and b"Traceback" not in proc.stderr and proc.stderr.count(b"\n") == 1
    conn = db.connect(str(home))
    try:
        assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == 0
    finally:
        conn.close()


def test_a_database_from_newer_code_is_refused_cleanly(home):
    _ok(script("autopilot.py", "init", home=home))
    raw = sqlite3.connect(str(home / "state.db"))
    raw.execute(f"PRAGMA user_version={db.latest_version() + 5}")
    raw.close()
    message = _fails(script("autopilot.py", "list", home=home), 1)
    assert "newer than this MindOS supports" in message


def test_concurrent_creators_on_a_fresh_home_all_succeed(home):
    procs = [subprocess.Popen([sys.executable, os.path.join(ROOT, "autopilot.py"), "create", "--project", "P",
                               "--title", f"parallel {n}", "--id", f"p{n}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, HERMES_AUTOPILOT_HOME=str(home)))
             for n in range(8)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        results.append((proc.returncode, out, err))
    assert all(rc == 0 and err == "" for rc, _, err in results), results
    assert "database is locked" not in "".join(err for _, _, err in results)
    conn = db.connect(str(home))
    try:
        ids = sorted(r[0] for r in conn.execute("SELECT id FROM tasks"))
        assert ids == sorted(f"p{n}" for n in range(8))
        assert ledger.verify_chain(conn) == {"ok": True, "events": 8, "problems": []}
    finally:
        conn.close()


def test_subprocess_search_tag_receipt_and_dashboard(home):
    _ok(script("autopilot.py", "create", "--project", "Trove", "--title", "Rate limit the API", "--id", "r1",
               "--due-at", "2026-08-01", home=home))
    assert _ok(script("autopilot.py", "tag", "r1", "--tag", "autopilot-safe", home=home))["added"] == \
        ["autopilot-safe"]
    hits = _ok(script("autopilot.py", "search", "rate limit", "--rank", "--tag", "autopilot-safe", home=home))
    assert [h["id"] for h in hits] == ["r1"] and "score" in hits[0]
    receipt = _ok(script("autopilot.py", "receipt", "r1", "--kind", "verification", "--payload",
                         '{"tests":"pass","health":200}', home=home))
    assert len(receipt["file_hash"]) == 64
    proc = script("autopilot.py", "dashboard", home=home)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith("MindOS dashboard") and "[OVERDUE " in proc.stdout


def test_help_lists_the_commands(home):
    proc = script("autopilot.py", "--help", home=home)
    assert proc.returncode == 0 and proc.stderr == ""
    for name in ("search", "tag", "untag", "receipt", "dashboard", "create", "verify-chain", "events"):
        assert name in proc.stdout
    sub = script("autopilot.py", "search", "--help", home=home)
    assert sub.returncode == 0 and "Example:" in sub.stdout and "--rank" in sub.stdout


def test_in_process_no_arguments_is_a_usage_error(cli):
    rc, out, err = cli("autopilot")
    assert rc == 2 and out == "" and err.startswith("usage:")


def test_in_process_update_clears_and_rejects(conn, cli, cli_json):
    cli_json("autopilot", "create", "--project", "P", "--title", "t", "--id", "t1", "--due-at",
             "2026-09-01T17:00:00Z")
    task = cli_json("autopilot", "update", "t1", "--due-at", "2026-09-02T09:00:00+02:00", "--title", "Corrected")
    assert (task["due_at"], task["title"]) == ("2026-09-02T07:00:00Z", "Corrected")
    assert cli_json("autopilot", "update", "t1", "--due-at", "")["due_at"] is None
    dump = list(conn.iterdump())
    for argv, flag in ((["--priority", "urgent"], "--priority"), (["--status", "finished"], "--status"),
                       (["--title", ""], "--title"), (["--description", "x" * 70000], "--description")):
        rc, out, err = cli("autopilot", "update", "t1", *argv)
        assert (rc, out) == (2, "") and err.startswith(f"invalid {flag}")
    assert list(conn.iterdump()) == dump


def test_in_process_huge_and_hostile_values(conn, cli, cli_json):
    for argv in (["--title", "x" * 10000], ["--id", "x" * 65], ["--project", "a b"], ["--tag", "DROP TABLE"]):
        rc, out, err = cli("autopilot", "create", "--project", "P", "--title", "ok", *argv)
        assert rc == 2 and out == "" and err.startswith("invalid ")
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0
    hostile = "Robert'); DROP TABLE tasks;-- \"%_\" ✓\tline"
    task = cli_json("autopilot", "create", "--project", "P", "--title", hostile, "--id", "h1")
    assert task["title"] == hostile
    assert [t["id"] for t in cli_json("autopilot", "search", "DROP TABLE tasks;--")] == ["h1"]
    assert cli_json("autopilot", "show", "h1")["task"]["title"] == hostile


@pytest.mark.parametrize("argv", [
    ("context", "t1", "--related-scope", "password=Hunter2x9"),   # argparse: invalid choice echo
    ("list", "--limit", "api_key=Zx81Kq29Lm"),                     # argparse: invalid int echo
    ("events", "--since", "ghp_R8m2kQ7vX3nL9pT4wZ6yB1cD5fH0jG2aS4eU"),  # core: invalid timestamp
])
def test_errors_never_echo_a_credential_shaped_value(cli, argv):
    rc, out, err = cli("autopilot", *argv)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    for secret in ("Hunter2x9", "Zx81Kq29Lm", "ghp_R8m2kQ7vX3nL9pT4wZ6yB1cD5fH0jG2aS4eU"):
        assert secret not in err
