"""Moods (renames keep aliases), and bad input across the poller's management calls: one clear
line, nothing changed."""

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
