"""Agents: names, aliases, renames."""

from moodkit import room  # noqa: F401 (fixtures)

from mindos.comms import agents, moods, posts


def test_a_renamed_agent_keeps_its_old_name_for_mentions(room):
    agents.update(room, "re", new_name="re2")
    directory = agents.directory(room)
    assert directory["re"] == "re2" and directory["re2"] == "re2"
    assert posts.mentioned("@re: and @RE2. and mail@re.com", directory) == ["re2"]
    assert moods.show(room, "infra")["members"] == ["magent", "re2"]
