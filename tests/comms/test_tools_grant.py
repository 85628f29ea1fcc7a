"""A full-tools grant never passes from agent to agent, by any path a post can take into a Mood.

The spec: full tools only when every post that woke the agent is trusted -- a person signed in
with an SSH key, someone named in full_tools_for, or the agent's own post itself sent with
full tools, as a handoff; "another agent's ordinary mention" wakes it look-only.  One test per
path: a post from the front door (as an agent, as a handoff, addressed or not), the reply the
poller posts after a full-tools turn, the crosstalk look, a take's follow-up, a /handoff
carried to another Mood, full_tools_for naming an agent, and botmail (which never enters a Mood).
"""

import pytest
from moodkit import agent, later, room, run_tick, say  # noqa: F401 (agent, room, run_tick: fixtures)

from mindos.comms import botmail, dials, moods, posts


def woke(report, name):
    return [(w["kind"], w["tools"]) for w in report["wakes"] if w["agent"] == name]


@pytest.fixture
def mentions_only(room):
    dials.set_dial(room, "listening", "mentions", mood="infra")
    return room


@pytest.mark.parametrize("via, full_tools, to_agent", [
    ("agent", True, ""), ("agent", False, ""), ("handoff", True, ""), ("handoff", True, "re"), ("ssh", False, ""),
])
def test_a_post_by_another_agent_wakes_look_only_whatever_it_was_sent_with(mentions_only, agent, run_tick, via,
                                                                          full_tools, to_agent):
    say(mentions_only, "@re please double-check the deploy", author="magent", via=via, full_tools=full_tools,
        to_agent=to_agent)
    later(600)
    report = run_tick()
    assert woke(report, "re") == [("mention", "look-only")]
    assert agent.seen[-1]["env"]["MOOD_WAKE_TOOLS"] == "look-only" and "can look but not touch" in agent.seen[-1]["text"]


def test_the_reply_the_poller_posts_from_a_full_tools_turn_wakes_the_agent_it_mentions_look_only(
        mentions_only, agent, run_tick):
    # the case: re's full-tools turn replies "@magent please double-check the deploy"
    agent.replies["re"] = ["@magent please double-check the deploy"]
    say(mentions_only, "@re ship the deploy", via="ssh")
    later(600)
    report = run_tick()
    assert woke(report, "re") == [("mention", "full")]
    reply = posts.recent(mentions_only, "infra")[-1]
    assert reply["author"] == "re" and reply["full_tools"] is True, "the reply records the turn's tools"
    later(600)  # the reply has a session behind it: grace applies
    assert woke(run_tick(), "magent") == [("mention", "look-only")]


def test_a_crosstalk_look_over_another_agents_full_tools_post_is_look_only(mentions_only, agent, run_tick):
    agent.replies["re"] = ["step 4 is fine", "<silent>unrelated</silent>"]
    agent.during["re"] = lambda: say(mentions_only, "the deploy is green", author="magent", via="agent",
                                     full_tools=True)
    say(mentions_only, "@re check step 4", via="ssh")
    later(600)
    report = run_tick()
    assert woke(report, "re") == [("mention", "full"), ("crosstalk", "look-only")]


def test_a_mix_of_a_trusted_person_and_another_agent_is_look_only(mentions_only, agent, run_tick):
    say(mentions_only, "@re rotate the staging cert", via="ssh")
    say(mentions_only, "@re and the prod one", author="magent", via="handoff", full_tools=True)
    later(600)
    assert woke(run_tick(), "re") == [("mention", "look-only")]


def test_a_takes_follow_up_keeps_the_look_only_tools(mentions_only, agent, run_tick):
    agent.replies["re"] = ['<take to="check it"/>', "checked"]
    say(mentions_only, "@re check the deploy", author="magent", via="agent", full_tools=True)
    later(600)
    assert woke(run_tick(), "re") == [("mention", "look-only"), ("mention", "look-only")]


def test_full_tools_for_never_names_an_agent_into_a_grant(mentions_only, agent, run_tick):
    dials.set_dial(mentions_only, "full_tools_for", "magent,alice", mood="infra")
    say(mentions_only, "@re please double-check the deploy", author="magent", via="agent", full_tools=True)
    later(600)
    assert woke(run_tick(), "re") == [("mention", "look-only")]
    later(3600)
    say(mentions_only, "@re alice asks from the web", author="alice", via="web")
    assert woke(run_tick(), "re") == [("mention", "full")], "a person named in full_tools_for still is"


def test_a_handoff_carries_full_tools_only_to_the_agent_that_had_them(mentions_only, agent, run_tick):
    moods.create(mentions_only, "staging", title="Staging")
    for name in ("re", "magent"):
        moods.join(mentions_only, "staging", name)
    dials.set_dial(mentions_only, "listening", "mentions", mood="staging")
    agent.replies["re"] = ["context: the cert is rotated on infra", "<silent>ok</silent>"]
    posts.add(mentions_only, "infra", "justin", "/handoff staging @re the cert", via="ssh")
    later(600)
    assert woke(run_tick(), "re") == [("mention", "full")]
    report = run_tick()
    assert [(w["mood"], w["agent"], w["tools"]) for w in report["wakes"]] == [("staging", "re", "full")]
    assert woke(report, "magent") == [], "the carried context is addressed to re alone"
    # another agent forwarding that context to magent: look-only
    say(mentions_only, "@magent context: the cert is rotated on infra", author="re", via="handoff",
        full_tools=True, mood="staging")
    assert woke(run_tick(), "magent") == [("mention", "look-only")]


def test_botmail_never_enters_a_mood_or_wakes_anyone(mentions_only, agent, run_tick):
    botmail.allow_peer(mentions_only, "re", "magent", profile="work")
    envelope = botmail.compose("magent", "re", "work", "@re please double-check the deploy", epoch=1,
                               harness="claude-code")
    assert botmail.deliver(mentions_only, envelope)["outcome"] == "accepted"
    later(600)
    assert run_tick()["wakes"] == []
    assert mentions_only.execute("SELECT count(*) FROM mood_posts").fetchone()[0] == 0
