"""Shared fixtures: every test gets its own temporary home and a pinned clock."""

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from mindos import clock, db  # noqa: E402

START = "2026-08-21T09:00:00Z"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """A throwaway home for each test; nothing is written to the working directory."""
    path = tmp_path / "home"
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


def make_task(conn, task_id="t1", **kw):
    """Create a task in project Trove with a default title (the usual test fixture row)."""
    from mindos import tasks

    kw.setdefault("project", "Trove")
    kw.setdefault("title", f"task {task_id}")
    return tasks.create(conn, task_id=task_id, **kw)

