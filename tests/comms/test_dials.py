"""The dials: precedence, scopes, values."""

import pytest

from moodkit import room  # noqa: F401 (fixtures)
from mindos.comms import dials
from mindos.errors import InvalidInput, NotFound


def effective(conn, name, mood_id=1, agent="re"):
    return dials.Table(dials.load(conn)).get(name, mood_id, agent)


def test_precedence_is_mood_and_agent_then_mood_then_agent_then_global_then_default(room):
    assert effective(room, "grace") == 600
    dials.set_dial(room, "grace", "500")
    assert effective(room, "grace") == 500
    dials.set_dial(room, "grace", "400", agent="re")
    assert effective(room, "grace") == 400
    dials.set_dial(room, "grace", "300", mood="infra")
    assert effective(room, "grace") == 300
    dials.set_dial(room, "grace", "200", mood="infra", agent="re")
    assert effective(room, "grace") == 200
    assert effective(room, "grace", agent="magent") == 300
    table = dials.Table(dials.load(room))
    assert table.source("grace", 1, "re") == "mood+agent" and table.source("grace", 1, "magent") == "mood"
    result = dials.set_dial(room, "grace", None, mood="infra", agent="re")
    assert result["effective"] == 300


@pytest.mark.parametrize("name, value, kw, message", [
    ("loudness", "11", {}, "unknown dial"),
    ("listening", "sometimes", {}, "expected one of on, mentions, off"),
    ("grace", "-1", {}, "expected an integer from 0 to 86400"),
    ("grace", "ten", {}, "expected an integer"),
    ("daily_budget_usd", "nan", {}, "dollar amount"),
    ("daily_budget_usd", "5", {"mood": "infra"}, "cannot be set per mood"),
    ("max_considers_per_hour", "2", {"agent": "re"}, "cannot be set per agent"),
    ("full_tools_for", "alice,bad name", {}, "invalid full_tools_for"),
    ("screen_command", "'unclosed", {}, "No closing quotation"),
])
def test_bad_values_and_scopes_are_refused_and_nothing_changes(room, name, value, kw, message):
    before = room.execute("SELECT count(*) FROM mood_settings").fetchone()[0]
    with pytest.raises(InvalidInput, match=message):
        dials.set_dial(room, name, value, **kw)
    assert room.execute("SELECT count(*) FROM mood_settings").fetchone()[0] == before


def test_unknown_mood_or_agent_is_not_found(room):
    with pytest.raises(NotFound, match="no Mood named 'nowhere'"):
        dials.set_dial(room, "grace", "1", mood="nowhere")
    with pytest.raises(NotFound, match="no agent named 'ghost'"):
        dials.set_dial(room, "grace", "1", agent="ghost")


def test_a_stored_value_that_no_longer_parses_falls_back_to_the_default(room):
    room.execute("INSERT INTO mood_settings(mood_id, agent, name, value, updated_at) VALUES (0, '', 'grace', 'x', 'y')")
    assert effective(room, "grace") == 600


# --- command dials: a JSON array is the argv as is ------------------------------------------------

def test_a_command_dial_given_a_json_array_is_that_argv_and_never_a_shell_line(room):
    result = dials.set_dial(room, "screen_command", '["python3", "/opt/my screen.py", "--model", "small"]')
    assert result["effective"] == ["python3", "/opt/my screen.py", "--model", "small"]
    assert dials.set_dial(room, "screen_command", "python3 '/opt/my screen.py'")["effective"] == [
        "python3", "/opt/my screen.py"]
    assert dials.set_dial(room, "fresh_command", '["git", "-C", "/srv/ro", "pull"]')["effective"] == [
        "git", "-C", "/srv/ro", "pull"]


@pytest.mark.parametrize("value, words", [
    ('["python3", "screen.py"', "not a JSON array"),
    ("[python3, screen.py]", "not a JSON array"),
    ("[]", "one or more non-empty strings"),
    ('["python3", 3]', "one or more non-empty strings"),
    ('["python3", ""]', "one or more non-empty strings"),
    ('{"argv": ["python3"]}', "not an array"),
    ("python3 'unclosed", "No closing quotation"),
])
def test_a_command_dial_that_cannot_be_parsed_is_refused_in_one_line_and_nothing_is_stored(room, value, words):
    with pytest.raises(InvalidInput) as refused:
        dials.set_dial(room, "screen_command", value)
    message = str(refused.value)
    assert message.startswith("invalid value for screen_command: ") and words in message and "\n" not in message
    assert room.execute("SELECT count(*) FROM mood_settings").fetchone()[0] == 0


def test_a_screen_command_set_as_a_json_array_runs_and_dismisses(room, tmp_path):
    import json
    import sys

    from moodkit import later, say
    from mindos.comms import tick
    from mindos.comms.words import Words

    script = tmp_path / "screen.py"
    script.write_text("import sys\nsys.stdin.read()\nprint('dismiss people coordinating')\n")
    dials.set_dial(room, "screen_command", json.dumps([sys.executable, str(script)]))
    dials.set_dial(room, "listening", "mentions", mood="infra", agent="magent")
    say(room, "alice, lunch at 12 with bob and carol?")
    later(200)
    report = tick.run(room, deliver=lambda *a: {"outcome": "silent", "seconds": 0}, words=Words())
    assert report["wakes"] == []
    assert report["screens"][0]["verdict"] == "dismiss" and report["screens"][0]["by"] == "command"
