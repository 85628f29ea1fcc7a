"""Moods, agents, posts and pages: management and bad input (clear errors, nothing changed)."""

import pytest

from moodkit import room  # noqa: F401 (fixtures)
from mindos.comms import agents, moods, pages, posts
from mindos.errors import Conflict, InvalidInput, NotFound, Refused
from mindos.store import ledger


def test_a_renamed_mood_keeps_its_old_slug_as_an_alias(room):
    moods.update(room, "infra", new_slug="infrastructure")
    assert moods.resolve(room, "infra")["slug"] == "infrastructure"
    assert moods.show(room, "infra")["aliases"] == ["infra"]
    posts.add(room, "infra", "justin", "still reachable", via="web")
    assert moods.show(room, "infrastructure")["posts"] == 1
    with pytest.raises(Conflict):
        moods.create(room, "infra", title="taken by the alias")


def test_a_renamed_agent_keeps_its_old_name_for_mentions(room):
    agents.update(room, "re", new_name="re2")
    directory = agents.directory(room)
    assert directory["re"] == "re2" and directory["re2"] == "re2"
    assert posts.mentioned("@re: and @RE2. and mail@re.com", directory) == ["re2"]
    assert moods.show(room, "infra")["members"] == ["magent", "re2"]


def test_mentions_ignore_mail_addresses_and_unknown_names():
    directory = {"re": "re", "mag": "magent"}
    assert posts.mentioned("ping justin@re.org and @nobody", directory) == []
    assert posts.mentioned("@mag, @re.", directory) == ["magent", "re"]


@pytest.mark.parametrize("call, error, message", [
    (lambda c: posts.add(c, "infra", "justin", "", via="web"), InvalidInput, "must not be empty"),
    (lambda c: posts.add(c, "infra", "justin", "x" * 40000, via="web"), InvalidInput, "over the limit"),
    (lambda c: posts.add(c, "infra", "justin", "hi", via="carrier-pigeon"), InvalidInput, "invalid --via"),
    (lambda c: posts.add(c, "nowhere", "justin", "hi", via="web"), NotFound, "no Mood named 'nowhere'"),
    (lambda c: posts.add(c, "infra'; DROP TABLE moods; --", "j", "hi", via="web"), InvalidInput, "invalid mood"),
    (lambda c: posts.add(c, "infra", "justin", "hi", via="agent"), InvalidInput, "not a registered agent"),
    (lambda c: posts.add(c, "infra", "justin", "hi", via="ssh", full_tools=True), InvalidInput, "only an agent"),
    (lambda c: posts.add(c, "infra", "justin", "key AKIAIOSFODNN7EXAMPLE", via="web"), Refused, "secret guard"),
    (lambda c: posts.add(c, "infra", "bad name", "hi", via="web"), InvalidInput, "invalid --author"),
    (lambda c: agents.create(c, "re"), Conflict, "already taken"),
    (lambda c: agents.create(c, "new", aliases=["mag"]), Conflict, "already taken"),
    (lambda c: agents.create(c, "@re"), InvalidInput, "invalid agent"),
    (lambda c: agents.update(c, "ghost", page="x"), NotFound, "no agent named 'ghost'"),
    (lambda c: agents.update(c, "re"), InvalidInput, "nothing to change"),
    (lambda c: moods.create(c, "infra", title="again"), Conflict, "already exists"),
    (lambda c: moods.create(c, "new", title=" "), InvalidInput, "must not be empty"),
    (lambda c: moods.leave(c, "infra", "ghost"), NotFound, "no agent named"),
    (lambda c: pages.save(c, "Moods/Dials", "", editor="re"), InvalidInput, "must not be empty"),
    (lambda c: pages.save(c, "bad\nname", "x", editor="re"), InvalidInput, "invalid page"),
    (lambda c: pages.show(c, "Nope"), NotFound, "no page named"),
    (lambda c: posts.signal(c, "infra", "alice", seconds=0), InvalidInput, "--seconds"),
])
def test_bad_input_is_refused_with_one_clear_line_and_nothing_changes(room, call, error, message):
    height = ledger.height(room)
    counts = [room.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
              for t in ("moods", "mood_agents", "mood_posts", "mood_page_revisions", "mood_signals")]
    with pytest.raises(error, match=message) as caught:
        call(room)
    assert "\n" not in str(caught.value)
    assert [room.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("moods", "mood_agents", "mood_posts", "mood_page_revisions", "mood_signals")] == counts
    added = [e["action"] for e in ledger.events(room, limit=5)["events"] if e["id"] > height]
    assert added == (["secret_blocked"] if error is Refused else []), "only a refusal the rules name is recorded"


def test_redact_posts_a_redacted_copy_and_a_refusal_is_audited(room):
    post = posts.add(room, "infra", "justin", "key AKIAIOSFODNN7EXAMPLE", via="web", redact=True)
    assert "AKIAIOSFODNN7EXAMPLE" not in post["body"]
    assert ledger.count_action(room, "secret_redacted") == 1
    with pytest.raises(Refused):
        posts.add(room, "infra", "justin", "key AKIAIOSFODNN7EXAMPLE", via="web")
    assert ledger.count_action(room, "secret_blocked") == 1
    allowed = posts.add(room, "infra", "justin", "key AKIAIOSFODNN7EXAMPLE", via="web", allow_secret=True)
    assert "AKIAIOSFODNN7EXAMPLE" in allowed["body"] and ledger.count_action(room, "secret_allowed") == 1


def test_injection_shaped_text_is_stored_and_shown_verbatim(room):
    text = "'); DELETE FROM mood_posts; -- {0.__class__} <mood-wake reason=\"x\"> @re"
    post = posts.add(room, "infra", "justin", text, via="web")
    assert posts.recent(room, "infra")[-1]["body"] == text and post["id"] == 1


def test_page_history_and_trust(room):
    pages.save(room, "GeneralOrders", "one", editor="mallory")
    pages.set_trust(room, "re", True)
    pages.save(room, "GeneralOrders", "two", editor="re")
    pages.save(room, "GeneralOrders", "three", editor="mallory")
    shown = pages.show(room, "GeneralOrders", history=True)
    assert shown["in_use"] == 2 and shown["revision"]["body"] == "two" and shown["revisions"] == 3
    assert pages.show(room, "GeneralOrders", revision=3)["revision"]["trusted"] is False
    pages.set_trust(room, "re", False)
    assert pages.show(room, "GeneralOrders")["in_use"] is None
    assert pages.listing(room)["editors"] == [{"editor": "re", "trusted": False}]
