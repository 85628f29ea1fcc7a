"""Home selection: verify-then-select, the rollback default refused, deselect as the rollback."""

import json
import os
import sqlite3

import pytest

from recovery_helpers import file_state, populate
from mindos.core import clock, home as home_core
from mindos.store import db


@pytest.fixture
def hermes(tmp_path, monkeypatch):
    """HOME pointed at a temp dir, no env override, the selector under it."""
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("HERMES_AUTOPILOT_HOME", raising=False)
    monkeypatch.setenv("AUTOPILOT_HOME_SELECTOR", str(tmp_path / "user" / ".hermes" / "selector.json"))
    os.makedirs(tmp_path / "user" / ".hermes", exist_ok=True)
    return tmp_path / "user"


def _home(path, populated=True):
    conn = db.connect(str(path))
    if populated:
        populate(conn)
    conn.close()
    return str(path)


def test_show_reports_the_default_without_a_selector(hermes, cli):
    rc, out, err = cli("ops", "home-show")
    shown = json.loads(out)
    assert (rc, err) == (0, "") and shown["source"] == "default"
    assert shown["home"] == str(hermes / ".hermes" / "autopilot") and shown["selector"]["present"] is False


def test_select_then_deselect_round_trip(hermes, tmp_path, cli):
    target = _home(tmp_path / "mindos")
    before = file_state(target)
    rc, out, err = cli("ops", "home-select", "--home", target)
    selected = json.loads(out)
    assert (rc, err) == (0, "") and selected["selected"] == target and selected["active_source"] == "selector"
    selector = os.environ["AUTOPILOT_HOME_SELECTOR"]
    assert os.stat(selector).st_mode & 0o777 == 0o600
    assert home_core.resolve() == (target, "selector")
    shown = json.loads(cli("ops", "home-show")[1])["selector"]
    assert shown["home"] == target and shown["sealed"] is True
    assert file_state(target) == before  # the selected home is never mutated
    assert not os.path.exists(os.path.join(target, "state.db-shm"))  # not even side files appear
    rc, out, _ = cli("ops", "home-deselect")
    plan = json.loads(out)
    assert rc == 0 and plan["apply"] is False and plan["present"] and os.path.exists(selector)
    rc, out, _ = cli("ops", "home-deselect", "--apply")
    assert rc == 0 and json.loads(out)["removed"] is True and not os.path.exists(selector)
    assert home_core.resolve()[1] == "default"
    assert json.loads(cli("ops", "home-deselect", "--apply")[1])["removed"] is False


def test_rollback_default_is_refused(hermes, cli):
    _home(hermes / ".hermes" / "autopilot", populated=False)
    rc, out, err = cli("ops", "home-select", "--home", str(hermes / ".hermes" / "autopilot"))
    assert rc == 1 and out == "" and "rollback default" in err and err.count("\n") == 1
    assert not os.path.exists(os.environ["AUTOPILOT_HOME_SELECTOR"])


def test_unhealthy_home_is_refused_naming_every_problem(hermes, tmp_path, cli):
    target = _home(tmp_path / "sick")
    raw = sqlite3.connect(os.path.join(target, "state.db"))
    raw.execute("UPDATE audit_events SET action = 'x' WHERE id = 2")
    raw.commit()
    raw.close()
    clock.advance(3600)  # and a stale lease
    before = file_state(target)
    rc, out, err = cli("ops", "home-select", "--home", target)
    assert rc == 1 and out == "" and err.count("\n") == 1
    assert "hash_mismatch" in err and "stale_lease" in err and "task_id=t2" in err
    assert not os.path.exists(os.environ["AUTOPILOT_HOME_SELECTOR"])
    rc, out, _ = cli("ops", "home-doctor", "--home", target)
    assert rc == 1 and json.loads(out)["ok"] is False
    assert file_state(target) == before


def test_missing_home_is_refused(hermes, tmp_path, cli):
    for argv in (("home-select", "--home", str(tmp_path / "none")), ("home-doctor", "--home", str(tmp_path / "none"))):
        rc, out, err = cli("ops", *argv)
        assert rc == 1 and out == "" and "no MindOS database" in err
    assert not (tmp_path / "none").exists()
    rc, out, err = cli("ops", "home-select")
    assert rc == 2 and out == ""


def test_environment_still_wins(hermes, tmp_path, cli, monkeypatch):
    target = _home(tmp_path / "mindos")
    cli("ops", "home-select", "--home", target)
    monkeypatch.setenv("HERMES_AUTOPILOT_HOME", str(tmp_path / "env"))
    shown = json.loads(cli("ops", "home-show")[1])
    assert shown["source"] == "HERMES_AUTOPILOT_HOME" and shown["overridden_by"] == "HERMES_AUTOPILOT_HOME"
    assert shown["selector"]["home"] == target
