"""Posts: mentions, the secret guard, injection-shaped text."""

import pytest
from moodkit import room  # noqa: F401 (fixtures)

from mindos.comms import posts
from mindos.errors import Refused
from mindos.store import ledger


def test_mentions_ignore_mail_addresses_and_unknown_names():
    directory = {"re": "re", "mag": "magent"}
    assert posts.mentioned("ping justin@re.org and @nobody", directory) == []
    assert posts.mentioned("@mag, @re.", directory) == ["magent", "re"]


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
