"""The decision rules as pure functions (no database, no clock)."""

import pytest

from mindos.comms import decide, dials

NOW = "2026-08-21T10:00:00Z"


def values(**overrides):
    table = {name: dials.Table({}).get(name, 1, "re") for name in dials.DIALS}
    table.update(overrides)
    return table


def unit(**kw):
    base = {"agent": "re", "last_post_id": 0, "mention_id": 0, "considered_id": 0, "seen_id": 0, "held_id": 0,
            "last_post_at": None, "last_post_person": 0, "last_post_author": "", "quiet_post_id": 0,
            "quiet_looks": 0, "quiet_last_at": None}
    base.update(kw)
    return base


def post(i, author="justin", via="ssh", *, is_agent=False, full_tools=False, mentions=(), at=NOW, reply_to=None,
         to_agent=""):
    return {"id": i, "kind": "post", "author": author, "via": via, "is_agent": is_agent, "full_tools": full_tools,
            "body": "", "created_at": at, "mentions": list(mentions), "reply_to": reply_to, "to_agent": to_agent}


@pytest.mark.parametrize("p, full_tools_for, expected", [
    (post(1, via="ssh"), (), True),
    (post(1, via="web"), (), False),
    (post(1, via="terminal"), (), False),
    (post(1, via="handoff"), (), False),
    (post(1, via="web", author="alice"), ("alice",), True),
    # the spec: another agent's ordinary mention wakes it look-only, whatever its turn's tools
    (post(1, "magent", via="handoff", is_agent=True, full_tools=True), (), False),
    (post(1, "magent", via="agent", is_agent=True, full_tools=True), (), False),
    (post(1, "magent", via="agent", is_agent=True), (), False),
    (post(1, "magent", via="ssh", is_agent=True), (), False),
    (post(1, "magent", via="agent", is_agent=True, full_tools=True), ("magent",), False),
    # an agent's own post, itself sent with full tools, as a handoff
    (post(1, "re", via="handoff", is_agent=True, full_tools=True, to_agent="re"), (), True),
    (post(1, "re", via="handoff", is_agent=True, to_agent="re"), (), False),
    (post(1, "re", via="agent", is_agent=True, full_tools=True), (), False),
])
def test_trusted(p, full_tools_for, expected):
    assert decide.trusted(p, full_tools_for, "re") is expected


def test_tools_are_full_only_when_every_waking_post_is_trusted():
    assert decide.tools_for([post(1), post(2)], (), "re") == "full"
    assert decide.tools_for([post(1), post(2, via="web")], (), "re") == "look-only"
    assert decide.tools_for([], (), "re") == "look-only"


def test_answered_only_by_the_agent_or_a_persons_explicit_reply():
    mention = post(1, mentions=["re"])
    assert not decide.answers(post(2, "justin", reply_to=1), mention, "re"), "the author's own follow-up"
    assert not decide.answers(post(2, "magent", is_agent=True, reply_to=1), mention, "re")
    assert not decide.answers(post(2, "alice"), mention, "re"), "small talk answers nothing"
    assert not decide.answers(post(2, "alice", reply_to=7), mention, "re"), "a reply to another post"
    assert decide.answers(post(2, "alice", reply_to=1), mention, "re")
    assert decide.answers(post(2, "re", is_agent=True), mention, "re")


def test_small_talk_after_a_mention_leaves_it_pending():
    said = [post(1, mentions=["re"]), post(2, "alice"), post(3, "bob", via="web")]
    assert [p["id"] for p in decide.pending_mentions(said, "re", 0)] == [1]
    said.append(post(4, "carol", reply_to=1))
    assert decide.pending_mentions(said, "re", 0) == []


def test_a_handoff_addressed_to_the_agent_asks_it_even_when_it_wrote_it():
    handed = post(1, "re", via="handoff", is_agent=True, full_tools=True, to_agent="re")
    assert [p["id"] for p in decide.pending_mentions([handed], "re", 0)] == [1]
    assert decide.pending_mentions([handed], "magent", 0) == []


def test_grace_counts_from_the_mention_and_no_session_skips_it():
    posts = [post(1, via="terminal", mentions=["re"], at="2026-08-21T09:55:00Z")]
    u = unit(last_post_id=1, last_post_at="2026-08-21T09:55:00Z", last_post_person=1)
    waiting = decide.decide(u, posts, dials=values(), now=NOW)
    assert waiting["action"] == "wait" and waiting["due"] == "2026-08-21T10:05:00Z"
    assert decide.decide(u, posts, dials=values(grace=300), now=NOW)["action"] == "mention"
    posts[0]["via"] = "web"
    assert decide.decide(u, posts, dials=values(), now=NOW)["action"] == "mention"


def test_quiet_due_doubles():
    at = "2026-08-21T09:00:00Z"
    assert decide.quiet_due(at, None, 0, 3600) == "2026-08-21T10:00:00Z"
    assert decide.quiet_due(at, "2026-08-21T10:00:00Z", 1, 3600) == "2026-08-21T12:00:00Z"
    assert decide.quiet_due(at, "2026-08-21T12:00:00Z", 2, 3600) == "2026-08-21T16:00:00Z"


def test_twelve_hours_of_total_silence_rests():
    u = unit(last_post_id=1, last_post_at="2026-08-20T21:59:59Z", last_post_person=1, last_post_author="justin")
    result = decide.decide(u, [], dials=values(), now=NOW)
    assert result["action"] == "none" and "12 hours" in result["why"]


def test_an_agents_own_last_post_is_not_unanswered():
    u = unit(last_post_id=1, last_post_at="2026-08-21T07:00:00Z", last_post_person=0, last_post_author="re")
    assert decide.decide(u, [], dials=values(), now=NOW)["action"] == "none"


def test_chatty_skips_the_screen_and_arrivals_are_never_screened():
    posts = [post(1, at="2026-08-21T09:50:00Z")]
    u = unit(last_post_id=1, last_post_at="2026-08-21T09:50:00Z", last_post_person=1, last_post_author="justin")
    assert decide.decide(u, posts, dials=values(), now=NOW)["screen"] is True
    assert decide.decide(u, posts, dials=values(discretion="chatty"), now=NOW)["screen"] is False
    arrival = {"id": 1, "who": "justin", "via": "ssh", "created_at": NOW}
    result = decide.decide(unit(), [], dials=values(), now=NOW, arrival=arrival)
    assert result["action"] == "arrival" and result["screen"] is False


def test_listening_off_holds_once_then_waits():
    posts = [post(1, via="web", mentions=["re"])]
    u = unit(last_post_id=1, last_post_at=NOW, last_post_person=1)
    assert decide.decide(u, posts, dials=values(listening="off"), now=NOW)["action"] == "hold"
    u["held_id"] = 1
    assert decide.decide(u, posts, dials=values(listening="off"), now=NOW)["action"] == "wait"


def test_pending_mentions_agrees_with_answered_on_a_mixed_history():
    import random

    rng = random.Random(3)
    people = ("justin", "alice", "bob")
    for _ in range(200):
        history = []
        for i in range(1, rng.randint(1, 12)):
            author = rng.choice(people + ("re", "magent"))
            reply_to = rng.randint(1, i) if i > 1 and rng.random() < 0.3 else None
            history.append(post(i, author, is_agent=author in ("re", "magent"),
                                mentions=["re"] if rng.random() < 0.5 else [], reply_to=reply_to))
        expected = [p for p in history if p["author"] != "re" and "re" in p["mentions"]
                    and not any(decide.answers(later, p, "re") for later in history)]
        assert decide.pending_mentions(history, "re", 0) == expected
