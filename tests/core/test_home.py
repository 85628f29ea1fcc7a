"""Home selection: HERMES_AUTOPILOT_HOME > MINDOS_HOME > selector file > default."""

import json
import os

import pytest

from mindos.core import home as home_mod


@pytest.fixture
def env(tmp_path, monkeypatch):
    """No env homes, a fake user home, and a selector path under tmp."""
    monkeypatch.delenv("HERMES_AUTOPILOT_HOME", raising=False)
    monkeypatch.delenv("MINDOS_HOME", raising=False)
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    selector = tmp_path / "selector.json"
    monkeypatch.setenv("AUTOPILOT_HOME_SELECTOR", str(selector))
    return {"user": user, "selector": selector, "tmp": tmp_path, "mp": monkeypatch}


def _dir(env, name):
    path = env["tmp"] / name
    path.mkdir()
    return str(path)


def test_default_is_the_rollback_home(env):
    assert home_mod.resolve() == (str(env["user"] / ".hermes" / "autopilot"), "default")


def test_full_precedence_order(env):
    selected = _dir(env, "selected")
    env["selector"].write_text(json.dumps({"home": selected}))
    assert home_mod.resolve() == (selected, "selector")
    mindos_home = _dir(env, "mindos")
    env["mp"].setenv("MINDOS_HOME", mindos_home)
    assert home_mod.resolve() == (mindos_home, "MINDOS_HOME")
    hermes = str(env["tmp"] / "hermes-not-created-yet")
    env["mp"].setenv("HERMES_AUTOPILOT_HOME", hermes)
    assert home_mod.resolve() == (hermes, "HERMES_AUTOPILOT_HOME")
    assert home_mod.home_dir() == hermes


def test_env_homes_expand_user_and_become_absolute(env):
    env["mp"].setenv("MINDOS_HOME", "~/brain")
    assert home_mod.resolve() == (str(env["user"] / "brain"), "MINDOS_HOME")
    env["mp"].setenv("MINDOS_HOME", "")  # empty means unset
    assert home_mod.resolve()[1] == "default"


def test_default_selector_path_is_under_hermes(env):
    env["mp"].delenv("AUTOPILOT_HOME_SELECTOR")
    assert home_mod.selector_path() == str(env["user"] / ".hermes" / "autopilot-home-selector.json")


@pytest.mark.parametrize("content", [
    b"{not json",
    b"[]",
    b'"just a string"',
    b"{}",
    b'{"home": ""}',
    b'{"home": 42}',
    b'{"home": "/definitely/not/a/dir/anywhere"}',
    b"\xff\xfe\x00garbage",
    b"[" * 100000,
    b'{"home": "/tmp\\u0000x"}',
])
def test_bad_selectors_are_ignored(env, content):
    env["selector"].write_bytes(content)
    assert home_mod.resolve()[1] == "default"


def test_selector_pointing_at_a_file_or_being_a_directory_is_ignored(env):
    target = env["tmp"] / "a-file"
    target.write_text("x")
    env["selector"].write_text(json.dumps({"home": str(target)}))
    assert home_mod.resolve()[1] == "default"
    env["selector"].unlink()
    env["selector"].mkdir()
    assert home_mod.resolve()[1] == "default"


def test_selector_whose_directory_vanished_is_ignored(env):
    selected = _dir(env, "gone")
    env["selector"].write_text(json.dumps({"home": selected}))
    assert home_mod.resolve() == (selected, "selector")
    os.rmdir(selected)
    assert home_mod.resolve()[1] == "default"


def test_front_door_uses_the_resolved_home(env, cli_json):
    mindos_home = env["tmp"] / "via-mindos-home"
    env["mp"].setenv("MINDOS_HOME", str(mindos_home))
    info = cli_json("autopilot", "init")
    assert info["home"] == str(mindos_home)
    assert (mindos_home / "state.db").exists()


def test_relative_selector_home_is_ignored_wherever_the_agent_starts(env):
    _dir(env, "relative-home")
    env["selector"].write_text(json.dumps({"home": "relative-home"}))
    env["mp"].chdir(env["tmp"])  # the directory exists relative to here, and still must not win
    assert home_mod.resolve()[1] == "default"
    env["selector"].write_text(json.dumps({"home": "~/"}))  # ~ expands to an absolute path
    assert home_mod.resolve() == (os.path.abspath(str(env["user"])), "selector")
