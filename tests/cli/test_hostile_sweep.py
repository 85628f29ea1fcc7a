"""The hostile-input sweep (issue 8): hundreds of hostile values across every command and
field, in-process through the real front doors.

Every call must end in exit 0, 1 or 2 with at most one stderr line and no uncaught exception
(a traceback), and a refused call (exit 1 or 2) must leave the database unchanged (audit
refusal events aside) and write no receipt file.  Re-run it as a script for the figures:

    python3 tests/cli/test_hostile_sweep.py
"""

import io
import json
import os
import sys
import tempfile
import traceback
from contextlib import redirect_stderr, redirect_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

AWS = "AKIA2R29TQLR0VLG5W1H"
VALUES = [
    "", " ", "\n", "a\nb", "a\rb", "a\x00b", "\x1b[2J\x07", "'; DROP TABLE tasks; --", "%_%", "*",
    'NEAR(a b) OR "x', "\\", "../../etc/passwd", "/etc/passwd", "x" * 70000, "ＡＢＣ１２３", "٣٠", "+30", "1_000",
    " 30 ", "-1", "9" * 30, "\u202eevil\u202c", "a\u200bb", AWS, "AKIA\u200b2R29TQLR0VLG5W1H",
    "password=hunter2abc9", "bad\udcffbytes", "😀" * 40, "{}", "[]", "null", '{"a": "\\u0000"}',
    "[" * 5000, "1e309", "NaN", "2026-13-45T99:99:99Z", "t1", "Robert'); --", "$(rm -rf /)", "`id`",
    "%s%n%x", "\ufeffBOM", "ｔ１", "P9", "queued\n", "https://user:pw123456@github.com/o/r/pull/1",
]
SLOTS = [
    ("autopilot", ["create", "--project", "P", "--title", "{v}"]),
    ("autopilot", ["create", "--project", "P", "--title", "x", "--description", "{v}"]),
    ("autopilot", ["create", "--project", "{v}", "--title", "x"]),
    ("autopilot", ["create", "--project", "P", "--title", "x", "--id", "{v}"]),
    ("autopilot", ["create", "--project", "P", "--title", "x", "--tag", "{v}"]),
    ("autopilot", ["create", "--project", "P", "--title", "x", "--priority", "{v}"]),
    ("autopilot", ["create", "--project", "P", "--title", "x", "--due-at", "{v}"]),
    ("autopilot", ["create", "--project", "P", "--title", "x", "--owner", "{v}"]),
    ("autopilot", ["create", "--project", "P", "--title", "x", "--depends-on", "{v}"]),
    ("autopilot", ["create", "--project", "P", "--title", "x", "--next-action", "{v}"]),
    ("autopilot", ["create", "--project", "P", "--title", "x", "--request-id", "{v}"]),
    ("autopilot", ["update", "t1", "--title", "{v}"]),
    ("autopilot", ["update", "t1", "--branch", "{v}"]),
    ("autopilot", ["update", "t1", "--pr-url", "{v}"]),
    ("autopilot", ["update", "t1", "--status", "{v}"]),
    ("autopilot", ["update", "{v}", "--title", "x"]),
    ("autopilot", ["claim", "{v}", "--owner", "a"]),
    ("autopilot", ["claim", "t1", "--owner", "{v}"]),
    ("autopilot", ["claim", "t1", "--owner", "a", "--minutes", "{v}"]),
    ("autopilot", ["heartbeat", "t2", "--owner", "a", "--note", "{v}"]),
    ("autopilot", ["heartbeat", "t2", "--owner", "a", "--minutes", "{v}"]),
    ("autopilot", ["heartbeat", "t2", "--owner", "a", "--action", "{v}"]),
    ("autopilot", ["heartbeat", "t2", "--owner", "a", "--intent", "{v}"]),
    ("autopilot", ["heartbeat", "t2", "--owner", "a", "--progress-state", "{v}"]),
    ("autopilot", ["heartbeat", "t2", "--owner", "a", "--stall-deadline", "{v}"]),
    ("autopilot", ["heartbeat", "t2", "--owner", "a", "--evidence", "{v}"]),
    ("autopilot", ["renew", "t2", "--owner", "a", "--epoch", "{v}"]),
    ("autopilot", ["block", "t1", "--owner", "a", "--reason", "{v}"]),
    ("autopilot", ["fail", "t2", "--owner", "a", "--reason", "{v}"]),
    ("autopilot", ["receipt", "t1", "--kind", "{v}", "--payload", "{}"]),
    ("autopilot", ["receipt", "t1", "--kind", "ci", "--payload", "{v}"]),
    ("autopilot", ["note", "t1", "--content", "{v}", "--source", "a"]),
    ("autopilot", ["note", "t1", "--content", "x", "--source", "{v}"]),
    ("autopilot", ["note", "t1", "--content", "x", "--kind", "{v}"]),
    ("autopilot", ["handoff", "t1", "--from-agent", "a", "--objective", "{v}"]),
    ("autopilot", ["handoff", "t1", "--from-agent", "{v}", "--objective", "x"]),
    ("autopilot", ["search", "{v}"]),
    ("autopilot", ["search", "{v}", "--rank"]),
    ("autopilot", ["search-notes", "{v}", "--rank"]),
    ("autopilot", ["search-handoffs", "{v}"]),
    ("autopilot", ["show", "{v}"]),
    ("autopilot", ["events", "--limit", "{v}"]),
    ("autopilot", ["events", "--since", "{v}"]),
    ("autopilot", ["list", "--status", "{v}"]),
    ("autopilot", ["context", "t1", "--budget", "{v}"]),
    ("autopilot", ["next", "--claim", "--owner", "{v}"]),
    ("autopilot", ["next", "--tag", "{v}"]),
    ("autopilot", ["dep", "t1", "{v}"]),
    ("autopilot", ["note-history", "{v}"]),
    ("autopilot", ["{v}"]),
    ("ops", ["policy", "{v}", "merge"]),
    ("ops", ["policy", "P", "{v}"]),
    ("ops", ["recover", "--max-retries", "{v}"]),
    ("ops", ["approval", "approve", "t1", "--by", "{v}"]),
]
ENVIRONMENTS = [
    {"MINDOS_ERRORS": "json"}, {"AUTOPILOT_MAX_ACTIVE_PER_OWNER": "٣"}, {"AUTOPILOT_MAX_ACTIVE_PER_OWNER": "-1"},
    {"HERMES_AUTOPILOT_HOME": "{home}/state.db"}, {"HERMES_AUTOPILOT_HOME": "{home}/missing"},
    {"HERMES_AUTOPILOT_HOME": "", "MINDOS_HOME": "", "AUTOPILOT_HOME_SELECTOR": "{home}/state.db",
     "HOME": "{home}/nohome"},
]


def file_cases(home):
    """Hostile paths (issue 27): a FIFO, a device, a symlink to a system file, a directory, the
    live database and its WAL, as every --out, file argument and *-file flag."""
    scratch = home + "-files"
    os.makedirs(os.path.join(scratch, "tree"), exist_ok=True)
    fifo = os.path.join(scratch, "pipe.jsonl")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
        os.mkfifo(os.path.join(scratch, "tree", "pipe.jsonl"))
        os.symlink("/etc/passwd", os.path.join(scratch, "link.json"))
        with open(os.path.join(scratch, "existing.json"), "w") as handle:
            handle.write("keep")
    database = os.path.join(home, "state.db")
    hostile = [fifo, "/dev/zero", os.path.join(scratch, "link.json"), scratch, database, database + "-wal",
               os.path.join(scratch, "existing.json")]
    cases = []
    for path in hostile:
        for extra in ([], ["--force"]):
            cases += [("ops", ["snapshot", "--out", path, *extra]), ("ops", ["checkpoint", "--out", path, *extra]),
                      ("ops", ["export-task", "t1", "--out", path, *extra])]
        cases += [("autopilot", ["memory-import", path]), ("autopilot", ["memory-import", path, "--apply"]),
                  ("autopilot", ["note", "t1", "--content-file", path, "--source", "a"]),
                  ("ops", ["snapshot-check", path]), ("ops", ["snapshot-restore", path, "--force"]),
                  ("ops", ["archive-restore", path]), ("ops", ["import-task", path]),
                  ("ops", ["brain-import", "--inventory", path, "--target", os.path.join(scratch, "new")]),
                  ("mood_poller", ["page", "set", "Moods/X", "--editor", "re", "--file", path])]
    for root in (fifo, os.path.join(scratch, "tree"), os.path.join(scratch, "link.json")):
        cases += [("autopilot", ["session-scan", "--root", root]),
                  ("autopilot", ["session-ingest", "--source", "claude-code", "--root", root])]
    return cases


def _state(conn):
    dump = [line for line in conn.iterdump() if "audit_events" not in line]
    return dump, sorted(os.listdir(os.path.join(conn.home, "receipts")))


def _call(door, argv):
    from mindos.cli import run

    out, err = io.StringIO(), io.StringIO()
    crashed = None
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = run(door, argv)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # anything else is a traceback a user would see
            rc, crashed = None, traceback.format_exc()
    return rc, out.getvalue(), err.getvalue(), crashed


def sweep(home):
    """Run every hostile case against ``home``; return the figures and the problems."""
    from mindos.store import db
    from mindos.work import leases, tasks

    conn = db.connect(home)
    tasks.create(conn, project="P", title="one", task_id="t1")
    tasks.create(conn, project="P", title="two", task_id="t2")
    leases.claim(conn, "t2", "a")
    figures = {"cases": 0, "accepted": 0, "clean_refusals": 0, "tracebacks": 0, "db_changed_after_refusal": 0,
               "multi_line_errors": 0}
    problems = []
    cases = [(door, [arg.replace("{v}", value) for arg in argv], None)
             for door, argv in SLOTS for value in VALUES]
    cases += [("autopilot", ["create", "--project", "P", "--title", "env"], env) for env in ENVIRONMENTS]
    cases += [(door, argv, None) for door, argv in file_cases(home)]
    for door, argv, env in cases:
        saved = {}
        if env:
            for key, value in env.items():
                saved[key] = os.environ.get(key)
                os.environ[key] = value.replace("{home}", home)
        before = _state(conn)
        try:
            rc, out, err, crashed = _call(door, argv)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        figures["cases"] += 1
        label = f"{door} {' '.join(a[:30] for a in argv)[:120]!r} env={env}"
        if crashed:
            figures["tracebacks"] += 1
            problems.append(("traceback", label, crashed.splitlines()[-1]))
            continue
        if rc == 0:
            figures["accepted"] += 1
            continue
        if rc not in (1, 2) or out:
            problems.append(("bad exit", label, (rc, out[:80], err[:120])))
        if len(err.splitlines()) != 1:
            figures["multi_line_errors"] += 1
            problems.append(("stderr lines", label, err[:200]))
        if _state(conn) != before:
            figures["db_changed_after_refusal"] += 1
            problems.append(("db changed", label, err[:120]))
        else:
            figures["clean_refusals"] += 1
    conn.close()
    return figures, problems


def test_hostile_sweep(tmp_path):
    figures, problems = sweep(str(tmp_path / "home"))
    assert figures["cases"] >= 150 + 150  # the value slots and the hostile paths
    assert problems == []
    assert figures["tracebacks"] == 0 and figures["db_changed_after_refusal"] == 0
    assert figures["clean_refusals"] >= 150


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["HERMES_AUTOPILOT_HOME"] = os.path.join(scratch, "home")
        found, issues = sweep(os.path.join(scratch, "home"))
    print(json.dumps({"figures": found, "problems": [list(map(str, issue)) for issue in issues]}, indent=2))
    sys.exit(1 if issues else 0)
