"""Clean failures at the front door (issue 8 items 4, 10, 13): one line on stderr, a defined
exit code, never a traceback, and the database unchanged or fully committed."""

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import ROOT, db_state, script
from mindos.store import db

# ---------------------------------------------------------------------------------------
# item 10: a home without a database is refused, naming the home and the rule


@pytest.mark.parametrize("rule,env", [
    ("HERMES_AUTOPILOT_HOME", {"HERMES_AUTOPILOT_HOME": "{typo}"}),
    ("MINDOS_HOME", {"HERMES_AUTOPILOT_HOME": "", "MINDOS_HOME": "{typo}"}),
])
def test_a_home_without_a_database_is_refused_and_not_created(tmp_path, rule, env):
    typo = tmp_path / "hoem"
    env = {key: value.replace("{typo}", str(typo)) for key, value in env.items()}
    for argv in (["list"], ["create", "--project", "P", "--title", "x"], ["next", "--claim", "--owner", "a"]):
        proc = script("autopilot.py", *argv, home=typo, env=env)
        assert proc.returncode == 1 and proc.stdout == ""
        assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
        assert str(typo) in proc.stderr and rule in proc.stderr and "init" in proc.stderr
    proc = script("ops.py", "recover", home=typo, env=env)
    assert proc.returncode == 1 and str(typo) in proc.stderr
    assert not typo.exists(), "a refused command must not create the home"


def test_default_and_selector_rules_are_named(tmp_path, monkeypatch, cli):
    monkeypatch.delenv("HERMES_AUTOPILOT_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    rc, out, err = cli("autopilot", "list")
    assert rc == 1 and out == "" and "the default" in err and str(tmp_path / "user") in err
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    selector = tmp_path / "selector.json"
    selector.write_text(json.dumps({"home": str(chosen)}))
    monkeypatch.setenv("AUTOPILOT_HOME_SELECTOR", str(selector))
    rc, out, err = cli("autopilot", "list")
    assert rc == 1 and "selector" in err and str(chosen) in err
    assert os.listdir(chosen) == []


@pytest.mark.bare_home
def test_init_creates_and_reports_home_and_rule(home, cli, cli_json):
    assert cli("autopilot", "--help")[0] == 0 and cli("autopilot", "--version")[0] == 0
    assert not home.exists()
    info = cli_json("autopilot", "init")
    assert info["home"] == str(home) and info["home_rule"] == "HERMES_AUTOPILOT_HOME"
    assert cli_json("autopilot", "list") == []


# ---------------------------------------------------------------------------------------
# item 13: --json-errors / MINDOS_ERRORS=json


def _error(err):
    lines = err.splitlines()
    assert len(lines) == 1, err
    doc = json.loads(lines[0])
    assert set(doc) == {"error"} and set(doc["error"]) == {"code", "message"}
    return doc["error"]


def test_json_errors_carry_stable_codes(conn, cli, monkeypatch):
    cases = [
        (["show", "nope"], 1, "not_found"),
        (["create", "--project", "P", "--title", "x", "--priority", "P9"], 2, "invalid"),
        (["create", "--title", "x"], 2, "usage"),
        (["frobnicate"], 2, "usage"),
        (["unblock", "t1", "--owner", "a"], 1, "refused"),
        (["note", "t1", "--content", "password = hunter2abc9", "--source", "a"], 1, "secret_blocked"),
    ]
    assert cli("autopilot", "create", "--project", "P", "--title", "x", "--id", "t1")[0] == 0
    for argv, rc_expected, code in cases:
        rc, out, err = cli("autopilot", "--json-errors", *argv)
        assert (rc, out) == (rc_expected, "") and _error(err)["code"] == code, (argv, err)
        rc, out, err = cli("autopilot", *argv, "--json-errors")  # anywhere on the line
        assert _error(err)["code"] == code
    rc, _, err = cli("autopilot", "create", "--project", "P", "--title", "x", "--id", "t1", "--json-errors")
    assert _error(err)["code"] == "conflict"
    assert cli("autopilot", "claim", "t1", "--owner", "a")[0] == 0
    rc, _, err = cli("autopilot", "heartbeat", "t1", "--owner", "a", "--epoch", "7", "--json-errors")
    assert _error(err)["code"] == "lease_superseded"
    monkeypatch.setenv("MINDOS_ERRORS", "json")
    rc, out, err = cli("autopilot", "show", "nope")
    assert _error(err) == {"code": "not_found", "message": "unknown task 'nope'"}
    monkeypatch.delenv("MINDOS_ERRORS")
    rc, out, err = cli("autopilot", "show", "nope")
    assert err == "unknown task 'nope'\n"


def test_json_errors_for_a_missing_home_and_a_busy_store(tmp_path, monkeypatch, cli, conn):
    proc = script("autopilot.py", "list", "--json-errors", home=tmp_path / "none")
    assert _error(proc.stderr)["code"] == "no_database"
    blocker = sqlite3.connect(db.database_path(conn.home), isolation_level=None, timeout=0)
    blocker.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(db, "BUSY_TIMEOUT_SECONDS", 0.05)
    monkeypatch.setattr(db, "LOCK_TIMEOUT_SECONDS", 0.05, raising=False)
    try:
        rc, out, err = cli("autopilot", "--json-errors", "create", "--project", "P", "--title", "x")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert rc == 1 and _error(err)["code"] == "busy"


def test_readme_documents_every_code():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    for code in ("not_found", "invalid", "usage", "refused", "conflict", "lease_superseded", "secret_blocked",
                 "busy", "no_database", "storage", "io_error", "interrupted", "integrity", "untrusted_artifact"):
        assert f"`{code}`" in readme, code


# ---------------------------------------------------------------------------------------
# item 4: disk full, closed or full stdout, odd encodings, undecodable argv, SIGINT


def _shell(command, home, env=None):
    environment = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home), **(env or {}))
    return subprocess.run(["bash", "-c", command], capture_output=True, env=environment, timeout=60)


def test_closed_stdout_refuses_before_writing(conn, home):
    before = db_state(conn)
    proc = _shell(f"{sys.executable} {ROOT}/autopilot.py create --project P --title x >&-", home)
    assert proc.returncode == 1 and b"stdout is closed" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and b"Traceback" not in proc.stderr
    assert db_state(conn) == before


def test_full_stdout_is_one_line_and_the_write_committed(conn, home):
    proc = _shell(f"{sys.executable} {ROOT}/autopilot.py create --project P --title x --id full1 > /dev/full", home)
    assert proc.returncode == 1 and b"No space left on device" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and b"Traceback" not in proc.stderr
    assert conn.execute("SELECT count(*) FROM tasks WHERE id = 'full1'").fetchone()[0] == 1


def test_non_utf8_stdout_prints_escapes(conn, home, cli):
    assert cli("autopilot", "create", "--project", "P", "--title", "héllo ✓ 日本")[0] == 0
    for argv in (["dashboard"], ["list"]):
        proc = script("autopilot.py", *argv, home=home, env={"PYTHONIOENCODING": "ascii"})
        assert proc.returncode == 0 and proc.stderr == ""
        assert "h\\xe9llo" in proc.stdout or "h\\u00e9llo" in proc.stdout


def test_undecodable_argument_bytes_are_refused(conn, home):
    before = db_state(conn)
    environment = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home))
    for argv in ([b"create", b"--project", b"P", b"--title", b"caf\xe9"], [b"search", b"\xff\xfe"],
                 [b"note", b"t1", b"--content", b"\xc3", b"--source", b"a"], [b"show", b"\xff"]):
        proc = subprocess.run([sys.executable.encode(), os.path.join(ROOT, "autopilot.py").encode(), *argv],
                              capture_output=True, env=environment, timeout=60)
        assert proc.returncode == 2 and proc.stdout == b"", proc.stderr
        assert len(proc.stderr.splitlines()) == 1 and b"UTF-8" in proc.stderr
    assert db_state(conn) == before


def test_disk_full_at_commit_leaves_the_database_unchanged(conn, cli, monkeypatch):
    real_connect = db.connect

    def full(*args, **kwargs):
        connection = real_connect(*args, **kwargs)
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {pages}")  # no room for one more page
        return connection

    monkeypatch.setattr(db, "connect", full)
    before = db_state(conn)
    rc, out, err = cli("autopilot", "create", "--project", "P", "--title", "x", "--description", "y" * 60000)
    assert rc == 1 and out == "" and len(err.splitlines()) == 1 and "full" in err
    assert db_state(conn) == before


def test_disk_full_during_a_receipt_write(conn, cli, monkeypatch):
    assert cli("autopilot", "create", "--project", "P", "--title", "x", "--id", "t1")[0] == 0
    before = db_state(conn)

    def no_space(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    rc, out, err = cli("autopilot", "receipt", "t1", "--kind", "ci", "--payload", '{"ok": true}')
    monkeypatch.undo()
    assert rc == 1 and out == "" and "No space left on device" in err and len(err.splitlines()) == 1
    assert db_state(conn) == before


def test_interrupt_in_a_handler_exits_130(conn, cli, monkeypatch):
    from mindos.work import tasks

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tasks, "create", interrupted)
    rc, out, err = cli("autopilot", "create", "--project", "P", "--title", "x")
    assert (rc, out, err) == (130, "", "interrupted\n")


def _interrupted_before_mindos(err):
    """True when Ctrl-C landed in CPython's own initialization, before the front door's first line.

    CPython reports that in several ways (a fatal init error, a traceback through site, zipimport
    or the __main__ loader, a bare "KeyboardInterrupt" line when no Python frame exists yet, as
    while the front door's source is compiled, or the front door's frame at "line 0", entered
    but before its first statement), none of which MindOS can catch. What they share: no line
    of ours ran. A traceback raised while MindOS code runs always names a line of ours, and
    MindOS's own report of an interrupt is the line "interrupted".
    """
    if b"Fatal Python error: init_" in err or err.strip() == b"KeyboardInterrupt":
        return True
    ours = re.findall(rb'File "' + re.escape(str(ROOT).encode()) + rb'[^"]*", line (\d+)', err)
    return b"Traceback" in err and not any(int(line) > 0 for line in ours)


def test_sigint_at_any_point_of_a_real_process(conn, home):
    environment = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home))
    judged = 0
    for delay in (0.0, 0.03, 0.06, 0.1, 0.2, 0.4):
        proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "autopilot.py"), "create", "--project", "P",
                                 "--title", "x"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        if _interrupted_before_mindos(err):
            continue
        judged += 1
        assert b"Traceback" not in err, err
        # before Python installs its handler the signal kills the interpreter outright
        assert proc.returncode in (0, 130, -signal.SIGINT), (delay, proc.returncode, err)
        assert len(err.splitlines()) <= 1
    assert judged, "every signal landed before MindOS code ran; nothing was tested"
    assert db.connect(str(home)).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
