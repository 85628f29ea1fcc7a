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
