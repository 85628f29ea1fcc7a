"""Four poller fixes, each pinned: handoffs resolve their Mood the one way, the wake text is
made inert where it is composed, a refused wake costs no refresh, page names hold no control
characters."""

import sys

import pytest
from moodkit import agent, later, room, run_tick, say  # noqa: F401 (agent, room, run_tick: fixtures)

from mindos.comms import compose, delivery, dials, moods, pages, posts, tick, wakes
from mindos.errors import InvalidInput


def test_a_handoff_finds_its_mood_through_moods_resolve(room, agent, run_tick, monkeypatch):
    moods.create(room, "staging", title="Staging")
    moods.join(room, "staging", "re")
    dials.set_dial(room, "listening", "mentions", mood="infra", agent="magent")
    agent.replies["re"] = ["the cert is rotated"]
    posts.add(room, "infra", "justin", "/handoff staging @re the cert", via="web")
    asked = []
    real = moods.resolve
    monkeypatch.setattr(moods, "resolve", lambda conn, name, *a: asked.append(name) or real(conn, name, *a))
    report = run_tick()
    assert asked == ["staging"]
    assert report["wakes"][0]["handed"]


def test_a_handoff_to_a_mood_gone_or_malformed_carries_nothing(room):
    unit = {"agent": "re", "slug": "infra"}
    for target in ("nowhere", "Not A Slug!"):
        command = {"target": target, "about": "x", "post_id": 1}
        assert tick.carry_handoff(room, unit, 1, command, "body", "look-only") is None


def test_the_wake_text_is_inert_when_composed_and_delivered_as_composed(room, agent, run_tick, tmp_path):
    dials.set_dial(room, "listening", "mentions", mood="infra", agent="magent")
    say(room, "@re look \x1b[31mred\x1b[0m and \u202eevil", via="web")
    wake = run_tick()["wakes"][0]
    text = agent.seen[-1]["text"]
    assert "\x1b" not in text and "\u202e" not in text
    assert "\\x1b[31mred" in text and "\\u202eevil" in text
    assert wakes.show(room, wake["id"])["text"] == text, "the record holds what was delivered"
    # delivery hands the text over byte for byte: it no longer rewrites it
    script = tmp_path / "echo.py"
    script.write_text("import sys\nprint(sys.stdin.read().encode('unicode_escape').decode('ascii'))\n")
    ran = delivery.run([sys.executable, str(script)], "a\\x1b b\tc")
    assert ran["outcome"] == "replied" and ran["text"] == "a\\\\x1b b\\tc"


def test_a_look_the_budget_refuses_runs_no_fresh_command(room, agent, run_tick, tmp_path):
    marker = tmp_path / "refreshed"
    dials.set_dial(room, "listening", "mentions", mood="infra", agent="magent")
    dials.set_dial(room, "fresh_command", f'["{sys.executable}", "-c", "open({str(marker)!r}, \'a\').write(\'x\')"]')
    dials.set_dial(room, "daily_budget_usd", "0.001")
    say(room, "the deploy looks slow today")
    later(200)
    report = run_tick()
    assert report["wakes"] == [] and "daily budget" in report["waiting"][0]["why"]
    assert "fresh" not in report and not marker.exists()


def test_a_look_the_screen_dismisses_runs_no_fresh_command(room, agent, run_tick, tmp_path):
    marker = tmp_path / "refreshed"
    script = tmp_path / "screen.py"
    script.write_text("print('dismiss people coordinating')\n")
    dials.set_dial(room, "listening", "mentions", mood="infra", agent="magent")
    dials.set_dial(room, "screen_command", f"{sys.executable} {script}")
    dials.set_dial(room, "fresh_command", f'["{sys.executable}", "-c", "open({str(marker)!r}, \'a\').write(\'x\')"]')
    say(room, "the deploy looks slow today")
    later(200)
    report = run_tick()
    assert report["screens"][0]["verdict"] == "dismiss" and report["wakes"] == []
    assert "fresh" not in report and not marker.exists()
    say(room, "@re please look", via="web")
    report = run_tick()
    assert report["fresh"] == [{"command": report["fresh"][0]["command"], "ok": True}] and marker.exists()


@pytest.mark.parametrize("name", ["Moods\tWake texts", "a\nb", "esc\x1bape", "nul\x00", "del\x7f", "rtl\u202eo"])
def test_a_page_name_with_a_control_character_is_refused(room, name):
    with pytest.raises(InvalidInput, match="control character"):
        pages.page_name(name)
    with pytest.raises(InvalidInput, match="control character"):
        pages.save(room, name, "words", editor="justin")
    assert room.execute("SELECT count(*) FROM mood_pages WHERE name = ?", (name,)).fetchone()[0] == 0
