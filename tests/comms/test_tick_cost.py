"""The shortcuts that make a busy tick cheaper give what the long way gives: the turn lines a
tick shares between the members of a Mood, the byte scan that stands in for inert, the
dials table's cached answers, the skipped state insert and the skipped summary query."""

import pytest
from moodkit import later, say

from moodkit import agent, room, run_tick  # noqa: F401 (fixtures)
from mindos.comms import compose, dials, moods, tick
from mindos.core.text import inert
from mindos.errors import Conflict


def test_the_turn_lines_memo_never_shares_lines_across_waking_sets(room):
    mood_id = moods.resolve(room, "infra")["id"]
    first = say(room, "deploy <b>now</b> & then", via="web")
    second = say(room, "@re look at the logs", via="web")
    upto = room.execute("SELECT max(id) FROM mood_posts").fetchone()[0]
    memo = {}
    _, _, woken_by_first = compose.recent(room, mood_id, upto, 2000, [first], memo=memo)
    _, _, woken_by_second = compose.recent(room, mood_id, upto, 2000, [second], memo=memo)
    _, _, again = compose.recent(room, mood_id, upto, 2000, [first, first], memo=memo)
    assert woken_by_first[0].startswith("* #") and not woken_by_first[1].startswith("*")
    assert woken_by_second[1].startswith("* #") and not woken_by_second[0].startswith("*")
    assert again is woken_by_first  # the same waking set (as a set): the lines rendered once
    # each equals the long way: turn_line of each turn, marked when it woke the agent
    for waking, lines in (([first], woken_by_first), ([second], woken_by_second)):
        turns, _ = compose.recent_turns(room, mood_id, upto, 2000, waking)
        assert lines == [compose.turn_line(p, p["id"] in waking) for p in turns]
        assert compose.recent(room, mood_id, upto, 2000, waking)[2] == lines  # and without a memo
    assert "&lt;b&gt;now&lt;/b&gt; &amp; then" in woken_by_first[0]


def test_the_byte_scan_escapes_exactly_what_inert_escapes_among_ascii_characters():
    from mindos.core import text

    active = text._ASCII_ACTIVE_IN_BODY
    for code in range(128):
        assert (bytes([code]) in active) == (inert(chr(code), multiline=True) != chr(code)), code
    assert b"\n" not in active and b"\t" not in active and b"\x1b" in active and b"\x7f" in active
    for code in range(128):  # and in a line, where line breaks and tabs are escaped too
        assert (bytes([code]) in text._ASCII_ACTIVE_IN_LINE) == (inert(chr(code)) != chr(code)), code


def test_a_wake_with_an_ascii_control_character_or_a_non_ascii_one_is_still_made_inert(room, agent, run_tick):
    say(room, "@re look \x1b[2J at this\x7f", via="web")
    say(room, "@re and \u202etxt.exe too, caf\u00e9", via="web")
    run_tick()
    text = agent.seen[0]["text"]
    assert "\x1b" not in text and "\x7f" not in text and "\u202e" not in text
    assert "\\x1b[2J" in text and "\\x7f" in text and "\\u202etxt.exe" in text and "caf\u00e9" in text
    assert text == inert(text, multiline=True)


def test_recent_turns_summarize_the_older_posts_whenever_the_window_was_full(room, monkeypatch):
    """The summary query is skipped only when the read ran out of posts before the window:
    a window filled to the brim may leave older posts, and they are counted."""
    mood_id = moods.resolve(room, "infra")["id"]
    ids = [say(room, f"post {i}", via="web") for i in range(7)]
    monkeypatch.setattr(compose, "RECENT_WINDOW", 4)
    turns, summary = compose.recent_turns(room, mood_id, ids[-1], 100000, [])
    assert [t["id"] for t in turns] == ids[-4:] and summary["count"] == 3
    monkeypatch.setattr(compose, "RECENT_WINDOW", 7)
    turns, summary = compose.recent_turns(room, mood_id, ids[-1], 100000, [])
    assert [t["id"] for t in turns] == ids and summary is None
    assert sorted(turns[0]) == ["author", "body", "created_at", "id"]


def test_a_dials_table_answers_again_as_it_answered_first(room):
    dials.set_dial(room, "grace", "30", mood="infra")
    dials.set_dial(room, "discretion", "chatty", agent="re")
    mood_id = moods.resolve(room, "infra")["id"]
    table = dials.Table(dials.load(room))
    for _ in range(2):
        assert table.get("grace", mood_id, "re") == 30 and table.get("grace", mood_id + 1, "re") == 600
        assert table.get("discretion", mood_id, "re") == "chatty"
        assert table.get("discretion", mood_id, "magent") == "normal"
        assert table.get("verbosity", mood_id, "re") == "normal" and table.get("max_wakes_per_hour", 0) == 6
    assert table.source("grace", mood_id, "re") == "mood" and table.source("verbosity", mood_id) == "default"


def _unit(room, agent_name):
    from mindos.core import clock

    snap = tick.Snapshot(room, clock.now_iso())
    return next(u for u in snap.units if u["agent"] == agent_name)


def test_a_claim_for_a_state_row_gone_since_the_snapshot_makes_it_again_as_before(room, agent, run_tick):
    say(room, "@re check", via="web")
    run_tick()
    unit = _unit(room, "re")
    assert unit["has_state"]
    with room:
        room.execute("UPDATE mood_agent_state SET seen_id = 0, mention_id = 0, considered_id = 0, held_id = 0,"
                     " arrival_id = 0, quiet_looks = 0, quiet_last_at = NULL WHERE agent = 're'")
    unit = _unit(room, "re")
    with room:
        room.execute("DELETE FROM mood_agent_state WHERE agent = 're'")
    with room:  # the snapshot's values are a fresh row's: the claim makes the row and moves it
        tick._claim_state(room, unit, max_seen_id=5)
    assert room.execute("SELECT seen_id FROM mood_agent_state WHERE agent = 're'").fetchone()[0] == 5


def test_a_claim_for_a_state_row_another_tick_moved_is_refused(room, agent, run_tick):
    say(room, "@re check", via="web")
    run_tick()
    unit = _unit(room, "re")
    later(60)
    say(room, "@re again", via="web")
    run_tick()  # moves re's cursors on
    with pytest.raises(Conflict):
        with room:
            tick._claim_state(room, unit, max_seen_id=10**6)
    fresh = dict(unit, has_state=0)  # a unit read without its row takes the long way: the same refusal
    with pytest.raises(Conflict):
        with room:
            tick._claim_state(room, fresh, max_seen_id=10**6)


def test_a_silent_wake_whose_row_was_deleted_meanwhile_is_still_audited(room, agent, run_tick):
    say(room, "@re check", via="web")

    def delete_the_wake():
        room.execute("DELETE FROM mood_budget WHERE wake_id = (SELECT max(id) FROM mood_wakes)")
        room.execute("DELETE FROM mood_wakes WHERE id = (SELECT max(id) FROM mood_wakes)")

    agent.during["re"] = delete_the_wake
    run_tick()
    assert room.execute("SELECT count(*) FROM mood_wakes").fetchone()[0] == 0
    audited = room.execute("SELECT payload_json FROM audit_events WHERE action = 'mood_reply'").fetchall()
    assert len(audited) == 1 and '"outcome":"silent"' in audited[0][0]
