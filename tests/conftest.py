"""Shared fixtures: every test gets its own temporary home and a pinned clock."""

import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from mindos.core import clock  # noqa: E402
from mindos.store import db

START = "2026-08-21T09:00:00Z"


def pytest_configure(config):
    config.addinivalue_line("markers", "bare_home: the test home path is not created (no database yet)")


def pytest_terminal_summary(terminalreporter):
    """The end-to-end tests (tests/e2e) say in ONE line when they could not run the real clients."""
    e2ekit = sys.modules.get("e2ekit")
    line = e2ekit.skipped_line() if e2ekit is not None else None
    if line:
        terminalreporter.write_line(line, red=True, bold=True)


@pytest.fixture(scope="session")
def _template_db(tmp_path_factory):
    """One freshly built database per session; each test home starts as a copy of it."""
    path = tmp_path_factory.mktemp("template")
    db.connect(str(path)).close()
    return path / "state.db"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch, request, _template_db):
    """A throwaway, initialized home for each test (commands other than init refuse a home
    without a database); a test marked ``bare_home`` gets the path only, not yet created.
    Nothing is written to the working directory."""
    path = tmp_path / "home"
    if request.node.get_closest_marker("bare_home") is None:
        (path / "receipts").mkdir(parents=True, mode=0o700)
        path.chmod(0o700)
        shutil.copyfile(_template_db, path / "state.db")
        (path / "state.db").chmod(0o600)
    monkeypatch.setenv("HERMES_AUTOPILOT_HOME", str(path))
    monkeypatch.delenv("MINDOS_HOME", raising=False)
    monkeypatch.delenv("MINDOS_NOW", raising=False)
    monkeypatch.delenv("AUTOPILOT_MAX_ACTIVE_PER_OWNER", raising=False)
    monkeypatch.delenv("AUTOPILOT_NEAR_DUP_THRESHOLD", raising=False)
    monkeypatch.setenv("AUTOPILOT_HOME_SELECTOR", str(tmp_path / "no-selector.json"))
    clock.set_now(START)
    yield path
    clock.set_now(None)


@pytest.fixture
def conn(home):
    """A fresh, migrated database in the test home."""
    connection = db.connect(str(home))
    yield connection
    connection.close()


_SEEDS = {}


def _home_files(home):
    """What a home holds besides its database files (the receipts and any other file)."""
    found = []
    for folder, _, names in os.walk(home):
        found += [os.path.relpath(os.path.join(folder, name), home) for name in names
                  if not name.startswith("state.db")]
    return sorted(found)


def seed_once(conn, key, build):
    """Give ``conn``'s fresh database what ``build(conn)`` writes to it, running ``build`` only
    once per session for each ``key`` and starting clock; every later call gets a copy of the
    database ``build`` left (SQLite's backup, page for page: the same rows, sequences, indexes
    and audit chain) and the clock where ``build`` left it.  For fixtures that seed a fleet with
    a commit per row before each of many tests.  ``build`` must write nothing but the database
    (checked) and depend on nothing but the pinned clock."""
    key = key, clock.pinned()
    if key in _SEEDS:
        kept, moved_to = _SEEDS[key]
        kept.backup(conn)
        clock.set_now(moved_to)
        return
    files = _home_files(conn.home)
    build(conn)
    assert _home_files(conn.home) == files, f"seed_once({key[0]!r}): the build wrote files besides the database"
    kept = sqlite3.connect(":memory:")
    conn.backup(kept)
    _SEEDS[key] = kept, clock.pinned()


@pytest.fixture
def plain_conn(tmp_path, monkeypatch):
    """A database built as on an SQLite without FTS5 (no *_fts tables at all, so every ranked
    path takes its substring twin); front doors run in-process use its home."""
    from mindos.store import fts

    monkeypatch.setattr(db, "fts5_supported", lambda: False)
    path = tmp_path / "plain"
    connection = db.connect(str(path))
    assert not any(fts.has(connection, name) for name in fts.INDEXES)
    monkeypatch.setenv("HERMES_AUTOPILOT_HOME", str(path))
    yield connection
    connection.close()


@pytest.fixture
def cli():
    """Run a front door in-process: ``cli("autopilot", "create", ...) -> (rc, out, err)``."""

    def run(door, *argv):
        module = __import__(f"mindos.cli.{door}", fromlist=["main"])
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            try:
                rc = module.main(list(argv))
            except SystemExit as exc:  # argparse usage errors and --help
                rc = exc.code if isinstance(exc.code, int) else 1
        return rc, out.getvalue(), err.getvalue()

    return run


@pytest.fixture
def cli_json(cli):
    """Like ``cli`` but asserts success and parses stdout as JSON."""

    def run(door, *argv):
        rc, out, err = cli(door, *argv)
        assert rc == 0, f"rc={rc} err={err!r}"
        assert err == ""
        return json.loads(out)

    return run


def script(name, *argv, home, env=None, timeout=60):
    """Run a real front door as a subprocess, the way agents do; return CompletedProcess."""
    environment = dict(os.environ)
    environment["HERMES_AUTOPILOT_HOME"] = str(home)
    environment.pop("MINDOS_NOW", None)
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, name), *argv],
        capture_output=True, text=True, env=environment, timeout=timeout,
    )


_LOADED_PROBE = """import io, json, sys
sys.path.insert(0, %r)
from mindos.cli import run
watched, rounds = json.loads(sys.argv[1])
out, sys.stdout = sys.stdout, io.StringIO()
codes = [run('autopilot', ['create', '--project', 'P', '--title', 'retry the payments path'])]
task = json.loads(sys.stdout.getvalue())['id']
steps = []
for calls in rounds:
    codes += [run('autopilot', [task if arg == '{task}' else arg for arg in argv]) for argv in calls]
    steps.append(sorted(m for m in watched if m in sys.modules))
sys.stdout = out
print(json.dumps([codes, steps]))
"""


def modules_loaded(home, watched, rounds):
    """Which of the ``watched`` modules the CLI has loaded after each round of calls, in one
    fresh interpreter without site packages: a task titled "retry the payments path" is
    created first, then each round's autopilot argument lists run (``{task}`` is its id).
    Returns ``(exit codes, [sorted loaded modules per round])``."""
    proc = subprocess.run([sys.executable, "-S", "-c", _LOADED_PROBE % ROOT, json.dumps([list(watched), rounds])],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, HERMES_AUTOPILOT_HOME=str(home)))
    assert proc.returncode == 0, proc.stderr
    return tuple(json.loads(proc.stdout))


def make_task(conn, task_id="t1", **kw):
    """Create a task in project Trove with a default title (the usual test fixture row)."""
    from mindos.work import tasks

    kw.setdefault("project", "Trove")
    kw.setdefault("title", f"task {task_id}")
    return tasks.create(conn, task_id=task_id, **kw)


def scoped_facts(conn):
    """Facts unlinked, linked to an Auth task, to a Billing task, and to a task since removed
    (the link is soft: archiving removes tasks): ``{label: id}``."""
    from mindos.memory import facts

    make_task(conn, "a1", project="Auth", title="auth work")
    make_task(conn, "b1", project="Billing", title="billing work")
    make_task(conn, "g1", project="Billing", title="archived soon")
    made = {label: facts.assert_fact(conn, subject="ledger-store", predicate="uses", obj=obj, source="codex",
                                     task=task)["id"]
            for label, task, obj in (("unlinked", None, "postgres"), ("auth", "a1", "redis"),
                                     ("billing", "b1", "mysql"), ("orphan", "g1", "sqlite"))}
    conn.execute("DELETE FROM tasks WHERE id = 'g1'")
    return made


def overwrite(path, data):
    """Give the file at ``path`` the bytes ``data``, as ``open(path, "wb").write(data)`` does, but
    without truncating it to zero first when ``data`` is no shorter: ext4 writes a file that was
    truncated to zero and refilled back to disk at close (auto_da_alloc), so a tamper loop of
    thousands of rewrites waited on the disk at each one (seconds on a busy machine)."""
    with open(path, "r+b") as handle:
        handle.write(data)
        handle.truncate()


def db_state(conn):
    """Everything a refused call must leave alone: the whole database (as SQL text) and the
    receipt files of the home."""
    try:
        files = sorted(os.listdir(os.path.join(conn.home, "receipts")))
    except OSError:
        files = []
    return list(conn.iterdump()), files


def last_event(conn, action):
    """The parsed payload of the newest audit event with ``action`` (None when there is none)."""
    row = conn.execute("SELECT payload_json FROM audit_events WHERE action = ? ORDER BY id DESC LIMIT 1",
                       (action,)).fetchone()
    return json.loads(row[0]) if row else None


def refused_unchanged(conn, call, error=None, match=None):
    """Run ``call``, which must raise ``error`` (a MindosError by default, message matching
    ``match``) and change nothing but the refusal events the rules record; return the error."""
    from mindos.errors import MindosError

    before = [line for line in db_state(conn)[0] if "audit_events" not in line], db_state(conn)[1]
    with pytest.raises(error or MindosError, match=match) as caught:
        call()
    after = [line for line in db_state(conn)[0] if "audit_events" not in line], db_state(conn)[1]
    assert after == before, "a refused call changed the database or the receipt files"
    return caught.value


def kill_at_statement_script(home, action, *, kill_at, after_commit=False):
    """Python source that runs ``action`` (code using ``conn``) against ``home`` and SIGKILLs
    itself at the ``kill_at``-th statement executed inside a write transaction (COMMIT
    included), or just after the COMMIT returns when ``after_commit``; it prints how many
    statements it counted.  The crash tests run it with ``sys.executable -c``."""
    return f"""
import os, signal, sys
sys.path.insert(0, {ROOT!r})
from mindos.store import db
conn = db.connect({str(home)!r})
state = {{"n": 0}}
real_execute, real_many = db.Connection.execute, db.Connection.executemany
KILL_AT, AFTER_COMMIT = {kill_at!r}, {bool(after_commit)!r}
def count(sql):
    if conn.in_transaction or sql == "COMMIT":
        state["n"] += 1
        if state["n"] == KILL_AT:
            os.kill(os.getpid(), signal.SIGKILL)
def execute(self, sql, *a):
    count(sql)
    result = real_execute(self, sql, *a)
    if AFTER_COMMIT and sql == "COMMIT":
        os.kill(os.getpid(), signal.SIGKILL)
    return result
def executemany(self, sql, *a):
    count(sql)
    return real_many(self, sql, *a)
db.Connection.execute, db.Connection.executemany = execute, executemany
{action}
print(state["n"])
"""
