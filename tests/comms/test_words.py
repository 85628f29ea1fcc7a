"""The words: page revisions by trusted editors, the phrase checks, filling, the recovery copy."""

import pytest
from moodkit import later, say

from moodkit import agent, room  # noqa: F401 (fixtures)
from mindos.comms import dials, pages, tick, words
from mindos.comms.words import Words
from mindos.errors import IntegrityError

SPEC_ENTRIES = ("full-tools", "full-tools-offer", "look-only", "tools-offer", "after-loop", "reorient",
                "fresh-failed", "crosstalk", "quiet", "arrival", "others-asked", "wait-offer", "wait-all",
                "take-offer", "taken", "took", "settings-changed", "typing", "announced", "reacted", "nearmiss",
                "incorporate", "handoff", "handed")


def entry(key, text, purpose="test"):
    return f"## {key}\nPurpose: {purpose}\n```text\n{text}\n```\n"


def test_the_recovery_copy_holds_every_entry_the_spec_lists_each_with_its_purpose():
    recovery = words.load_recovery()
    texts = recovery[pages.WAKE_TEXTS]
    for key in SPEC_ENTRIES:
        assert key in texts, key
        assert texts[key]["purpose"] and texts[key]["text"].strip(), key
    assert "has your full tools" in texts["full-tools"]["text"]
    assert "can look but not touch" in texts["look-only"]["text"]
    assert words.usable(texts)
    for key in ("verbosity-terse", "verbosity-verbose", "discretion-reserved", "discretion-normal",
                "discretion-chatty"):
        assert recovery[pages.DIALS][key]["text"], key
    for page in recovery.values():  # every recovery text can be filled
        for key, item in page.items():
            assert words.fill(item["text"], {}) is not None, key


def test_fill_fills_known_fields_keeps_unknown_ones_and_refuses_stray_braces():
    assert words.fill("{who} took it, {to}.", {"who": "re", "to": "check"}) == "re took it, check."
    assert words.fill("{who} and {nobody}", {"who": "re"}) == "re and {nobody}"
    assert words.fill("{0.__class__} {who}", {"who": "re"}) is None
    assert words.fill("a stray } brace", {}) is None
    assert words.fill("{who", {"who": "re"}) is None
    for _ in range(2):  # the same answers when the template's check is remembered
        assert words.fill("a stray } brace", {}) is None
        assert words.fill("{who} and {nobody}", {"who": "bo"}) == "bo and {nobody}"
        assert words.fill("no fields at all", {"who": "re"}) == "no fields at all"


def look_only_of(agent_):
    return agent_.seen[-1]["text"].split("\n")[-4]


@pytest.fixture
def mentioned(room, agent):
    dials.set_dial(room, "listening", "mentions", mood="infra")

    def ask():
        later(60)
        say(room, "@re look", via="web")
        tick.run(room, deliver=agent, words=Words())
        return look_only_of(agent)

    return ask


def test_missing_pages_fall_back_to_the_recovery_copy(mentioned):
    assert mentioned().startswith("This turn can look but not touch: read what you need")


def test_a_trusted_revision_changes_the_words_on_the_next_tick(room, mentioned):
    pages.set_trust(room, "re", True)
    pages.save(room, pages.WAKE_TEXTS, entry("look-only", "You can look but not touch this turn, {agent}."),
               editor="re")
    line = mentioned()
    assert line.startswith("You can look but not touch this turn, {agent}. If this needs"), \
        "unknown fields stay as written; the missing tools-offer comes from the recovery copy"


def test_an_untrusted_revision_is_kept_but_not_used(room, mentioned):
    pages.save(room, pages.WAKE_TEXTS, entry("look-only", "Mallory says: you can look but not touch."),
               editor="mallory")
    assert mentioned().startswith("This turn can look but not touch")
    shown = pages.show(room, pages.WAKE_TEXTS, history=True)
    assert shown["in_use"] is None and shown["history"][0]["trusted"] is False


def test_a_revision_without_the_record_phrases_is_not_used(room, mentioned):
    pages.set_trust(room, "re", True)
    pages.save(room, pages.WAKE_TEXTS, entry("look-only", "Older words: can look but not touch."), editor="re")
    pages.save(room, pages.WAKE_TEXTS, entry("look-only", "Read only this turn."), editor="re")
    assert mentioned().startswith("Older words: can look but not touch."), "the newest usable trusted revision"
    pages.save(room, pages.WAKE_TEXTS, entry("full-tools", "Everything is allowed.") +
               entry("look-only", "New words: can look but not touch."), editor="re")
    assert mentioned().startswith("Older words"), "a phrase-less full-tools line spoils the whole revision"


def test_a_text_that_cannot_be_filled_is_sent_in_the_recovery_copys_words(room, mentioned):
    pages.set_trust(room, "re", True)
    pages.save(room, pages.WAKE_TEXTS, entry("look-only", "You can look but not touch {this"), editor="re")
    assert mentioned().startswith("This turn can look but not touch: read what you need")


def test_words_are_reread_at_most_five_minutes_stale(room):
    pages.set_trust(room, "re", True)
    cache = Words()
    assert cache.text(room, pages.DIALS, "verbosity-terse").startswith("Keep your reply short")
    pages.save(room, pages.DIALS, entry("verbosity-terse", "Be brief."), editor="re")
    later(299)
    assert cache.text(room, pages.DIALS, "verbosity-terse").startswith("Keep your reply short")
    later(1)
    assert cache.text(room, pages.DIALS, "verbosity-terse") == "Be brief."
    assert cache.source(room, pages.DIALS) == 1


def test_an_unreadable_recovery_copy_is_a_clear_error(room, tmp_path):
    cache = Words(recovery_path=str(tmp_path / "missing.md"))
    with pytest.raises(IntegrityError, match="cannot read the wake texts recovery copy"):
        cache.text(room, pages.WAKE_TEXTS, "look-only")


def test_a_page_entry_without_a_closed_block_is_not_words():
    assert words.parse_entries("## look-only\nPurpose: x\n```text\nhalf written") == {}
