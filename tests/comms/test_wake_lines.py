"""The seven wake lines that need a flow of their own, each from its post or command to its
record, its decision and its line (in the order of the spec's words page), with a golden
wake text: announced, reacted, incorporate, handoff, handed, after-loop, fresh-failed.

Regenerate the goldens after an intended change with
``MINDOS_REGEN_GOLDEN=1 python3 -m pytest tests/comms/test_wake_lines.py`` and review the diff.
"""

import sys

import pytest
from moodkit import agent, later, room, run_tick, say  # noqa: F401 (agent, room, run_tick: fixtures)
from test_compose import golden

from mindos.comms import agents, dials, moods, posts, tick, wakes
from mindos.errors import InvalidInput, NotFound
from mindos.store import ledger


@pytest.fixture
def rooms(room):
    """'infra' (re, magent) plus 'staging' (re) and a thread Mood 'cert-thread' (re)."""
    dials.set_dial(room, "listening", "mentions", mood="infra", agent="magent")
    for slug, title in (("staging", "Staging room"), ("cert-thread", "Rotating the cert")):
        moods.create(room, slug, title=title)
        moods.join(room, slug, "re")
    dials.set_dial(room, "listening", "mentions", mood="staging")
    dials.set_dial(room, "listening", "mentions", mood="cert-thread")
    later(60)  # the Moods were set up before the morning starts
    return room


def order_of(text, *phrases):
    """The phrases' positions in ``text`` (each must be there)."""
    found = [text.index(phrase) for phrase in phrases]
    return found == sorted(found)


# --- announced ------------------------------------------------------------------------------

def test_an_announce_in_another_mood_is_shown_above_its_posts_in_the_next_wake_only(rooms, agent, run_tick):
    posted = posts.add(rooms, "staging", "justin", "/announce the deploy freeze starts at noon", via="ssh")
    assert posted["command"] == {"kind": "announce", "target": "", "about": "the deploy freeze starts at noon"}
    later(60)
    say(rooms, "@re is step 4 done?", via="web")
    run_tick()
    text = agent.seen[-1]["text"]
    assert "Announced in other Moods since your last wake:\n[staging] #1 09:01Z justin: /announce the deploy" in text
    golden("announced", text)
    later(60)
    say(rooms, "@re and step 5?", via="web")
    run_tick()
    assert "Announced in other Moods" not in agent.seen[-1]["text"], "only since the last wake"


def test_an_announce_is_not_shown_in_its_own_mood(rooms, agent, run_tick):
    posts.add(rooms, "infra", "justin", "/announce lunch is late", via="web")
    later(60)
    say(rooms, "@re hi", via="web")
    run_tick()
    assert "Announced in other Moods" not in agent.seen[-1]["text"]


# --- reacted --------------------------------------------------------------------------------

def test_reactions_to_the_agents_posts_since_its_last_wake_are_shown(rooms, agent, run_tick):
    agent.replies["re"] = ["step 4 is fine"]
    say(rooms, "@re is step 4 done?", via="web")
    reply = run_tick()["wakes"][0]["post"]
    later(60)
    assert posts.react(rooms, "infra", reply, "alice", "👍")["changed"] is True
    assert posts.react(rooms, "infra", reply, "alice", "👍")["changed"] is False, "idempotent"
    posts.react(rooms, "infra", reply, "bob", "+1")
    posts.react(rooms, "infra", 1, "bob", "eyes")  # justin's post: not re's, not shown
    assert ledger.count_action(rooms, "mood_reacted") == 3
    later(60)
    say(rooms, "@re and step 5?", via="web")
    run_tick()
    text = agent.seen[-1]["text"]
    assert f"Reactions to your posts since your last wake:\n#{reply}: 👍 alice, +1 bob\n" in text
    golden("reacted", text)
    later(60)
    say(rooms, "@re and step 6?", via="web")
    run_tick()
    assert "Reactions to your posts" not in agent.seen[-1]["text"]


@pytest.mark.parametrize("reaction", ["", "two words", "x" * 33, "<b>", "a\nb"])
def test_a_reaction_must_be_one_short_word(rooms, reaction):
    say(rooms, "hello", via="web")
    with pytest.raises(InvalidInput):
        posts.react(rooms, "infra", 1, "alice", reaction)
    assert rooms.execute("SELECT count(*) FROM mood_reactions").fetchone()[0] == 0


def test_a_reaction_to_a_post_of_another_mood_is_refused(rooms):
    posts.add(rooms, "staging", "justin", "hello", via="web")
    with pytest.raises(InvalidInput, match="infra has no post 1"):
        posts.react(rooms, "infra", 1, "alice", "ok")


# --- incorporate ----------------------------------------------------------------------------

def test_incorporate_asks_the_named_agent_to_fold_a_closed_thread_back_in(rooms, agent, run_tick):
    posted = posts.add(rooms, "infra", "justin", "/incorporate cert-thread @re the cert is rotated", via="web")
    assert posted["command"] == {"kind": "incorporate", "target": "cert-thread", "about": "the cert is rotated"}
    report = run_tick()
    assert [(w["agent"], w["kind"]) for w in report["wakes"]] == [("re", "mention")]
    text = agent.seen[-1]["text"]
    assert "The thread cert-thread is closed: fold what it settled back into this Mood." in text
    golden("incorporate", text)


@pytest.mark.parametrize("body, error", [
    ("/incorporate", "name the thread first"),
    ("/incorporate @re", "name the thread first"),
    ("/incorporate cert-thread", "name the agent"),
    ("/incorporate infra @re", "is this Mood"),
    ("/handoff staging @re", "say what it is about"),
    ("/handoff staging @magent the cert", "magent is not a member of staging"),
    ("/announce", "say what to announce"),
])
def test_a_slash_command_that_cannot_be_carried_out_is_refused_and_nothing_is_posted(rooms, body, error):
    height = ledger.height(rooms)
    with pytest.raises(InvalidInput, match=error):
        posts.add(rooms, "infra", "justin", body, via="web")
    assert rooms.execute("SELECT count(*) FROM mood_posts").fetchone()[0] == 0 and ledger.height(rooms) == height


def test_a_slash_command_naming_an_unknown_mood_is_refused(rooms):
    with pytest.raises(NotFound):
        posts.add(rooms, "infra", "justin", "/handoff nowhere @re the cert", via="web")


def test_a_slash_word_inside_a_post_is_just_words(rooms, agent, run_tick):
    posted = posts.add(rooms, "infra", "justin", "@re what does /handoff do?", via="web")
    assert "command" not in posted
    assert rooms.execute("SELECT count(*) FROM mood_commands").fetchone()[0] == 0


# --- handoff and handed -----------------------------------------------------------------------

def test_a_handoff_is_asked_answered_and_carried_to_the_other_mood_with_the_turns_tools(rooms, agent, run_tick):
    agent.replies["re"] = ["Context for staging: the cert on infra is rotated; staging is next.",
                           "<silent>noted</silent>"]
    posted = posts.add(rooms, "infra", "justin", "/handoff staging @re the cert rotation", via="ssh")
    assert posted["command"] == {"kind": "handoff", "target": "staging", "about": "the cert rotation"}
    later(600)  # typed in a signed-in session: grace applies
    report = run_tick()
    wake = report["wakes"][0]
    assert (wake["agent"], wake["kind"], wake["tools"], wake["outcome"]) == ("re", "mention", "full", "replied")
    asked = agent.seen[0]["text"]
    assert "Take what is here to staging, about the cert rotation." in asked
    golden("handoff", asked)
    carried = wake["handed"]
    assert len(carried) == 1
    row = dict(rooms.execute("SELECT * FROM mood_posts WHERE id = ?", (carried[0],)).fetchone())
    assert (row["author"], row["via"], row["full_tools"], row["to_agent"]) == ("re", "handoff", 1, "re")
    assert row["body"] == "Context for staging: the cert on infra is rotated; staging is next."
    event = ledger.events(rooms, action="mood_handoff")["events"][0]
    assert event["payload"]["from"] == "infra" and event["payload"]["full_tools"] is True
    # in staging: a handoff has no session behind it, so it wakes at once, with the tools it was sent with
    report = run_tick()
    assert [(w["mood"], w["agent"], w["kind"], w["tools"]) for w in report["wakes"]] == [
        ("staging", "re", "mention", "full")]
    handed = agent.seen[-1]["text"]
    assert "Handed over from another Mood:\n[infra] #" in handed
    assert handed.startswith('<mood-wake reason="mention">\nre handed context over to you in staging.')
    assert order_of(handed, "This is your first wake in staging", "Handed over from another Mood:",
                    "Recent turns in staging:")
    golden("handed", handed)
    later(60)
    assert run_tick()["wakes"] == [], "carried once, woken once"


def test_a_handoff_asked_by_another_agent_is_carried_look_only(rooms, agent, run_tick):
    agent.replies["re"] = ["context: the queue is stuck on job 12"]
    posts.add(rooms, "infra", "magent", "/handoff staging @re the stuck queue", via="agent", full_tools=True)
    later(600)
    wake = run_tick()["wakes"][0]
    assert wake["tools"] == "look-only"
    report = run_tick()
    assert [(w["mood"], w["tools"]) for w in report["wakes"]] == [("staging", "look-only")]


def test_a_silent_answer_to_a_handoff_carries_nothing(rooms, agent, run_tick):
    posts.add(rooms, "infra", "justin", "/handoff staging @re the cert", via="web")
    run_tick()
    assert rooms.execute("SELECT count(*) FROM mood_posts WHERE mood_id = (SELECT id FROM moods"
                         " WHERE slug = 'staging')").fetchone()[0] == 0


def test_a_handoff_reaches_a_mood_renamed_since_it_was_asked(rooms, agent, run_tick):
    agent.replies["re"] = ["context: the cert is rotated"]
    posts.add(rooms, "infra", "justin", "/handoff staging @re the cert", via="web")
    moods.update(rooms, "staging", new_slug="staging-eu")
    run_tick()
    report = run_tick()
    assert [(w["mood"], w["agent"]) for w in report["wakes"]] == [("staging-eu", "re")]


# --- after-loop -----------------------------------------------------------------------------

def test_the_wake_after_a_turn_the_tool_loop_guard_ended_says_so_once(rooms, agent, run_tick):
    agent.replies["re"] = ['I got halfway through step 4.\n<loop-guard why="40 tool calls without progress"/>',
                           "<silent>ok</silent>", "<silent>ok</silent>"]
    say(rooms, "@re is step 4 done?", via="web")
    wake = run_tick()["wakes"][0]
    assert wake["outcome"] == "replied" and wake["loop_guard"] == "40 tool calls without progress"
    assert posts.recent(rooms, "infra")[-1]["body"] == "I got halfway through step 4."
    assert wakes.show(rooms, wake["id"])["loop_guard"] == "40 tool calls without progress"
    later(60)
    say(rooms, "@re and now?", via="web")
    run_tick()
    text = agent.seen[-1]["text"]
    assert "Your last turn was ended by the tool-loop guard (40 tool calls without progress)." in text
    golden("after-loop", text)
    later(60)
    say(rooms, "@re and now?", via="web")
    run_tick()
    assert "tool-loop guard" not in agent.seen[-1]["text"]


# --- fresh-failed ---------------------------------------------------------------------------

def test_a_failed_refresh_of_the_read_only_copies_is_said_in_every_wake_of_that_tick(rooms, agent, run_tick):
    dials.set_dial(rooms, "fresh_command", f'["{sys.executable}", "-c", "import sys; sys.exit(3)"]')
    dials.set_dial(rooms, "listening", "on", mood="infra", agent="magent")
    say(rooms, "@re @magent is step 4 done?", via="web")
    report = run_tick()
    assert [w["agent"] for w in report["wakes"]] == ["magent", "re"]
    assert all(w["fresh_failed"] for w in report["wakes"])
    assert len(report["fresh"]) == 1 and report["fresh"][0]["ok"] is False, "run once per tick"
    assert "exit 3" in report["fresh"][0]["detail"]
    text = agent.seen[-1]["text"]
    assert order_of(text, "This is your first wake in infra", "The read-only copies of the repositories could not",
                    "Woken by")
    golden("fresh-failed", text)
    assert wakes.show(rooms, report["wakes"][0]["id"])["fresh_failed"] is True


def test_a_refresh_that_works_adds_no_line_and_no_refresh_runs_without_a_wake(rooms, agent, run_tick):
    dials.set_dial(rooms, "fresh_command", f'["{sys.executable}", "-c", "pass"]')
    assert "fresh" not in run_tick(), "nothing to wake: nothing refreshed"
    say(rooms, "@re hi", via="web")
    report = run_tick()
    assert report["fresh"] == [{"command": [sys.executable, "-c", "pass"], "ok": True}]
    assert "read-only copies" not in agent.seen[-1]["text"]


# --- all of them, in the spec's order ----------------------------------------------------------

def test_every_optional_line_in_one_wake_keeps_the_spec_order(rooms, agent, run_tick):
    agent.replies["re"] = ['first\n<loop-guard why="looping"/>', "<silent>ok</silent>"]
    say(rooms, "@re start", via="web")
    reply = run_tick()["wakes"][0]["post"]
    later(60)
    posts.react(rooms, "infra", reply, "alice", "ok")
    posts.add(rooms, "staging", "justin", "/announce freeze at noon", via="web")
    posts.add(rooms, "infra", "justin", "/incorporate cert-thread @re done there", via="web")
    posts.add(rooms, "infra", "justin", "/handoff staging @re the rest", via="web")
    dials.set_dial(rooms, "fresh_command", f'["{sys.executable}", "-c", "import sys; sys.exit(1)"]')
    run_tick()
    text = agent.seen[-1]["text"]
    assert order_of(text, "tool-loop guard", "read-only copies", "Woken by", "Announced in other Moods",
                    "Reactions to your posts", "The thread cert-thread is closed", "Take what is here to staging",
                    "Recent turns in infra")


# --- the front door ---------------------------------------------------------------------------

def test_react_reply_to_and_handoff_flags_through_the_front_door(cli, cli_json):
    cli_json("mood_poller", "mood", "create", "infra", "--title", "Infra")
    cli_json("mood_poller", "agent", "create", "re")
    cli_json("mood_poller", "agent", "create", "magent")
    cli_json("mood_poller", "mood", "join", "infra", "re")
    first = cli_json("mood_poller", "post", "infra", "@re rotate the cert", "--author", "justin", "--via", "ssh")
    second = cli_json("mood_poller", "post", "infra", "done it", "--author", "alice", "--via", "web",
                      "--reply-to", str(first["id"]))
    assert second["reply_to"] == first["id"]
    assert cli_json("mood_poller", "react", "infra", str(first["id"]), "+1", "--who", "bob")["changed"] is True
    handed = cli_json("mood_poller", "post", "infra", "context", "--author", "magent", "--via", "handoff", "--to", "re")
    assert handed["to_agent"] == "re"
    for argv, code, words in (
            (["post", "infra", "x", "--author", "a", "--via", "web", "--reply-to", "99"], 2, "infra has no post 99"),
            (["post", "infra", "x", "--author", "a", "--via", "web", "--to", "re"], 2, "only a handoff"),
            (["post", "infra", "x", "--author", "a", "--via", "handoff", "--to", "ghost"], 1, "no agent named"),
            (["react", "infra", "1", "two words", "--who", "bob"], 2, "one word or emoji"),
            (["post", "infra", "/handoff nowhere @re x", "--author", "a", "--via", "web"], 1, "no Mood named")):
        rc, out, err = cli("mood_poller", *argv)
        assert (rc, out) == (code, "") and words in err and err.count("\n") == 1, (argv, rc, err)
    shown = cli_json("mood_poller", "posts", "infra")["posts"]
    assert [p["reply_to"] for p in shown] == [None, first["id"], None]
