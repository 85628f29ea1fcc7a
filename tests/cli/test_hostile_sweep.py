"""The hostile-input sweep: hostile values in every argument of every command of every
front door, in-process through the real doors.

Every call must end in exit 0, 1 or 2 with no uncaught exception (a traceback) and within
HANG_SECONDS; a refusal prints one stderr line (or, for a check that ran and failed, its
JSON report) and leaves the database unchanged (its audit event and a rejected envelope's
receipt aside) with no receipt file written; and no accepted call stores a credential.
The commands come from tests/door_cases.py, which holds a working call of every door
command (the sweep fails when a command has none); SLOTS adds the original, deeper sweep of
the core commands.  Re-run it as a script for the figures:

    python3 tests/cli/test_hostile_sweep.py
"""

import io
import json
import os
import sys
import tempfile
import traceback
from contextlib import redirect_stderr, redirect_stdout

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for _path in (ROOT, os.path.join(ROOT, "tests")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

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


# arguments that name a path: the sweep never points a writer or a reader at a hostile path
# (file safety has its own tests); their commands are still swept through every other argument
PATH_ARGUMENTS = {"--out", "--root", "--home", "--target", "--project-dir", "--hermes-home", "--claude-home",
                  "--inventory", "--file", "--checkpoint", "--payload-file", "--content-file", "--objective-file"}
# the values poured into every argument of every door command (the full set goes into SLOTS)
DOOR_VALUES = ["", "\n", "a\x00b", "\x1b[2J\x07", "x" * 70000, "１", "٣", "-1", "9" * 30, AWS, "'; DROP TABLE tasks; --",
               "bad\udcffbytes", "\u202eevil\u202c", "1e309"]
# tables a refusal may write to: its audit event, and a rejected botmail envelope's receipt
REFUSAL_RECORDS = ("audit_events", "botmail_receipts")
# a call running this long has hung (a read blocked on a FIFO, a loop without end)
HANG_SECONDS = 20


# the hostile values that hold a credential, and the part of each that must never be stored
CREDENTIALS = (AWS, "AKIA\u200b2R29TQLR0VLG5W1H", "password=hunter2abc9", "https://user:pw123456@github.com/o/r/pull/1")
NEEDLES = ("2R29TQLR0VLG5W1H", "hunter2abc9", "pw123456")


def _stored_credential(conn):
    """The first ``table.column`` holding a credential of CREDENTIALS, or None."""
    rows = conn.cursor()
    rows.row_factory = None
    for (table,) in rows.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                 " AND sql NOT LIKE 'CREATE VIRTUAL%'").fetchall():
        for column in [row[1] for row in rows.execute(f'PRAGMA table_info("{table}")').fetchall()]:
            for needle in NEEDLES:
                if rows.execute(f'SELECT 1 FROM "{table}" WHERE instr(CAST("{column}" AS TEXT), ?) LIMIT 1',
                                (needle,)).fetchone():
                    return f"{table}.{column}"
    return None


class _Hang(BaseException):
    """Raised in a call that ran past HANG_SECONDS."""


def _tables(conn):
    return [row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        " AND name NOT LIKE 'sqlite_%' ORDER BY name") if row[0] not in REFUSAL_RECORDS]


def _state(conn, cache):
    """A digest per table (refusal records aside) and the home's receipt files.

    ``PRAGMA data_version`` moves only when another connection commits, so a call that
    wrote nothing costs one pragma; otherwise each table is read in one C-level fetch and
    hashed, not dumped as SQL text.
    """
    import hashlib

    version = conn.execute("PRAGMA data_version").fetchone()[0]
    files = sorted(os.listdir(os.path.join(conn.home, "receipts")))
    if cache.get("version") != version:
        cache["version"] = version
        rows = conn.cursor()
        rows.row_factory = None  # plain tuples: their repr is their values
        cache["tables"] = {table: hashlib.sha256(repr(rows.execute(f'SELECT * FROM "{table}"').fetchall())
                                                 .encode("utf-8", "surrogatepass")).hexdigest()
                           for table in _tables(conn)}
    return cache["tables"], files


def _call(door, argv):
    import signal

    from mindos.cli import run

    def hung(signum, frame):
        raise _Hang

    out, err = io.StringIO(), io.StringIO()
    crashed = None
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(HANG_SECONDS)
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = run(door, argv)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except _Hang:
            rc, crashed = None, "hang"
        except BaseException:  # anything else is a traceback a user would see
            rc, crashed = None, traceback.format_exc()
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    return rc, out.getvalue(), err.getvalue(), crashed


def door_slots():
    """``[(door, argv with "{v}")]``: each argument value of each door command's working call
    (tests/door_cases.py) in turn, paths aside; and the working call itself."""
    import door_cases

    slots = []
    for key, argv in door_cases.CASES.items():
        door, command = key
        words = len(command.split())
        slots.append((door, list(argv)))
        declared = door_cases.command_of(door, command)
        switches = {flag for argument in declared.arguments if argument.switch for flag in argument.flags}
        index = words
        while index < len(argv):
            arg = argv[index]
            if arg.startswith("--"):
                if arg in switches:
                    index += 1
                    continue
                if arg not in PATH_ARGUMENTS and "{scratch}" not in argv[index + 1]:
                    slots.append((door, argv[:index + 1] + ["{v}"] + argv[index + 2:]))
                index += 2
                continue
            if "{scratch}" not in arg and "{home}" not in arg:
                slots.append((door, argv[:index] + ["{v}"] + argv[index + 1:]))
            index += 1
    return slots


def covered_commands():
    """``(door, command)`` of every command the sweep calls."""
    import door_cases

    return set(door_cases.CASES) | {(door, argv[0]) for door, argv in SLOTS}


def sweep(home):
    """Run every hostile case against ``home``; return the figures and the problems."""
    import door_cases

    scratch = home + "-scratch"
    saved_selector = os.environ.get("AUTOPILOT_HOME_SELECTOR")
    os.environ["AUTOPILOT_HOME_SELECTOR"] = home + "-selector.json"
    values = door_cases.seed(home, scratch)
    from mindos.store import db

    conn = db.connect(home)
    figures = {"cases": 0, "accepted": 0, "clean_refusals": 0, "tracebacks": 0, "hangs": 0,
               "db_changed_after_refusal": 0, "multi_line_errors": 0, "credentials_stored": 0,
               "commands": len(covered_commands())}
    problems = []
    cases = [(door, [arg.replace("{v}", value) for arg in argv], None)
             for door, argv in SLOTS for value in VALUES]
    for door, argv in door_slots():
        filled = [arg.format(**values) if "{" in arg and "{v}" not in arg and not arg.startswith('{"') else arg
                  for arg in argv]
        if "{v}" not in filled:
            cases.append((door, filled, None))
            continue
        cases += [(door, [arg.replace("{v}", value) for arg in filled], None) for value in DOOR_VALUES]
    cases += [("autopilot", ["create", "--project", "P", "--title", "env"], env) for env in ENVIRONMENTS]
    cases += [(door, argv, None) for door, argv in file_cases(home)]
    cache = {}
    for door, argv, env in cases:
        saved = {}
        if env:
            for key, value in env.items():
                saved[key] = os.environ.get(key)
                os.environ[key] = value.replace("{home}", home)
        before = _state(conn, cache)
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
        if crashed == "hang":
            figures["hangs"] += 1
            problems.append(("hang", label, ""))
            continue
        if crashed:
            figures["tracebacks"] += 1
            problems.append(("traceback", label, crashed.splitlines()[-1]))
            continue
        if rc == 0:
            figures["accepted"] += 1
            if any(value in argv for value in CREDENTIALS) and _state(conn, cache) != before:
                where = _stored_credential(conn)
                if where:
                    figures["credentials_stored"] += 1
                    problems.append(("credential stored", label, where))
            continue
        # a refusal: one error line and nothing on stdout, or a check's report (exit 1, JSON, silent stderr)
        report = rc == 1 and not err and out.lstrip().startswith(("{", "["))
        if rc not in (1, 2) or (out and not report):
            problems.append(("bad exit", label, (rc, out[:80], err[:120])))
        if not report and len(err.splitlines()) != 1:
            figures["multi_line_errors"] += 1
            problems.append(("stderr lines", label, err[:200]))
        if _state(conn, cache) != before:
            figures["db_changed_after_refusal"] += 1
            problems.append(("db changed", label, err[:120]))
        else:
            figures["clean_refusals"] += 1
    conn.close()
    if saved_selector is None:
        os.environ.pop("AUTOPILOT_HOME_SELECTOR", None)
    else:
        os.environ["AUTOPILOT_HOME_SELECTOR"] = saved_selector
    return figures, problems


def test_the_sweep_covers_every_door_command():
    import door_cases

    assert sorted(set(door_cases.door_commands()) - covered_commands()) == []


@pytest.mark.slow
def test_hostile_sweep(tmp_path):
    figures, problems = sweep(str(tmp_path / "home"))
    assert figures["cases"] >= 4000 + 150  # every door command's values, and the hostile paths
    assert problems == [], "\n".join(map(str, problems[:40]))
    assert figures["tracebacks"] == 0 and figures["hangs"] == 0 and figures["db_changed_after_refusal"] == 0
    assert figures["credentials_stored"] == 0
    assert figures["clean_refusals"] >= 2000


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["HERMES_AUTOPILOT_HOME"] = os.path.join(scratch, "home")
        found, issues = sweep(os.path.join(scratch, "home"))
    print(json.dumps({"figures": found, "problems": [list(map(str, issue)) for issue in issues]}, indent=2))
    sys.exit(1 if issues else 0)
