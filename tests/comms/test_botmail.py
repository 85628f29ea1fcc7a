"""Botmail: every rejection reason, idempotent delivery, receipts, inbox/ack, bounded context."""

import json

import pytest

from mindos.comms import botmail
from mindos.core import clock
from mindos.errors import InvalidInput, MindosError, NotFound, Refused
from tests.conftest import db_state, last_event

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def mail(conn):
    botmail.allow_peer(conn, "hermes", "codex", profile="work", classes=["chat", "status"], replay_budget=3,
                       window_seconds=3600)
    botmail.allow_peer(conn, "hermes", "opencode", profile="home", classes=["chat"])
    return conn


def env(**overrides):
    fields = {"sender": "codex", "recipient": "hermes", "profile": "work", "body": "tests are green",
              "klass": "chat", "epoch": 1, "harness": "codex", "envelope_id": "m-1"}
    fields.update(overrides)
    return botmail.compose(fields.pop("sender"), fields.pop("recipient"), fields.pop("profile"), fields.pop("body"),
                           **fields)


def reseal(envelope, **changes):
    envelope = {**envelope, **changes}
    envelope["digest"] = botmail.envelope_digest(envelope)
    return envelope


def test_accepted_then_delivered_once(mail):
    receipt = botmail.deliver(mail, env())
    assert receipt["outcome"] == "accepted" and receipt["message_id"] == 1 and receipt["reason"] == ""
    assert last_event(mail, "botmail_accepted")["message_id"] == 1
    box = botmail.inbox(mail, "hermes")
    assert box["count"] == 1 and box["messages"][0]["body"] == "tests are green"
    assert box["messages"][0]["provenance"] == {"harness": "codex"}


def test_a_replayed_envelope_is_a_duplicate_never_a_second_delivery(mail):
    envelope = env()
    first = botmail.deliver(mail, envelope)
    for _ in range(3):
        again = botmail.deliver(mail, json.dumps(envelope))
        assert again["outcome"] == "duplicate" and again["message_id"] == first["message_id"]
    assert botmail.inbox(mail, "hermes")["count"] == 1
    assert [r["outcome"] for r in botmail.receipts(mail)] == ["duplicate"] * 3 + ["accepted"]
    # a duplicate does not spend the replay budget (3): two more distinct messages still land
    assert botmail.deliver(mail, env(envelope_id="m-2"))["outcome"] == "accepted"
    assert botmail.deliver(mail, env(envelope_id="m-3"))["outcome"] == "accepted"


def _malformed_cases():
    good = env()
    drop = {k: v for k, v in good.items() if k != "body"}
    return [
        "{not json",
        "[1, 2]",
        {**good, "extra": 1},
        drop,
        {**good, "format": "other/1"},
        {**good, "id": "bad id!"},
        {**good, "from": ""},
        {**good, "body": "   "},
        {**good, "epoch": -1},
        {**good, "epoch": True},
        {**good, "sent_at": "yesterday"},
        {**good, "provenance": "codex"},
        {**good, "class": 7},
    ]


@pytest.mark.parametrize("envelope", _malformed_cases())
def test_rejected_malformed(mail, envelope):
    receipt = botmail.deliver(mail, envelope)
    assert (receipt["outcome"], receipt["reason"]) == ("rejected", "malformed"), receipt
    assert receipt["message_id"] is None and botmail.inbox(mail, "hermes")["count"] == 0


def _case(name):
    """The envelope that trips exactly rejection reason ``name`` (after the fixture's setup)."""
    return {
        "unknown_peer": env(sender="stranger"),
        "provenance": env(harness="telegram"),
        "clock_skew": reseal(env(), sent_at=clock.shift(clock.now_iso(), 3600)),
        "capability_epoch": env(epoch=2),
        "profile_scope": env(profile="home"),
        "content_class": env(klass="question"),
        "too_large": env(body="x" * (botmail.MAX_BODY + 1)),
        "secret": env(body=f"use {SECRET}"),
    }[name]


@pytest.mark.parametrize("reason", ["unknown_peer", "provenance", "clock_skew", "capability_epoch",
                                    "profile_scope", "content_class", "too_large", "secret"])
def test_every_rejection_reason(mail, reason):
    before = db_state(mail)
    receipt = botmail.deliver(mail, _case(reason))
    assert (receipt["outcome"], receipt["reason"]) == ("rejected", reason), receipt
    assert botmail.inbox(mail, "hermes")["count"] == 0
    assert last_event(mail, "botmail_rejected")["reason"] == reason
    assert SECRET not in json.dumps(receipt) and SECRET not in json.dumps(db_state(mail)[0])
    assert len(db_state(mail)[0]) > len(before[0])  # the receipt and its event were recorded


def test_rejected_digest_mismatch_is_provenance(mail):
    tampered = {**env(), "body": "altered in transit"}
    assert botmail.deliver(mail, tampered)["reason"] == "provenance"


@pytest.mark.parametrize("klass", botmail.RESERVED_CLASSES)
def test_handoffs_receipts_and_user_relay_are_not_bot_chat(mail, klass):
    receipt = botmail.deliver(mail, env(klass=klass))
    assert receipt["reason"] == "content_class" and "not bot chat" in receipt["detail"]


def test_rejected_peer_revoked_and_the_epoch_moves(mail):
    revoked = botmail.revoke_peer(mail, "hermes", "codex")
    assert revoked["revoked"] and revoked["epoch"] == 2
    assert botmail.revoke_peer(mail, "hermes", "codex")["changed"] is False
    assert botmail.deliver(mail, env(epoch=2))["reason"] == "peer_revoked"
    again = botmail.allow_peer(mail, "hermes", "codex", profile="work", classes=["chat", "status"], replay_budget=3)
    assert again["epoch"] == 3 and not again["revoked"]
    assert botmail.deliver(mail, env(epoch=2, envelope_id="m-9"))["reason"] == "capability_epoch"
    assert botmail.deliver(mail, env(epoch=3, envelope_id="m-9"))["outcome"] == "accepted"


def test_rejected_id_reuse(mail):
    botmail.deliver(mail, env())
    receipt = botmail.deliver(mail, env(body="a different message, same id"))
    assert receipt["reason"] == "id_reuse" and botmail.inbox(mail, "hermes")["count"] == 1


def test_rejected_replay_budget_then_the_window_passes(mail):
    for i in range(3):
        assert botmail.deliver(mail, env(envelope_id=f"r-{i}"))["outcome"] == "accepted"
    assert botmail.deliver(mail, env(envelope_id="r-3"))["reason"] == "replay_budget"
    clock.advance(3601)
    assert botmail.deliver(mail, env(envelope_id="r-4"))["outcome"] == "accepted"


def test_every_reason_is_tested():
    tested = {"malformed", "id_reuse", "peer_revoked", "replay_budget", "unknown_peer", "provenance", "clock_skew",
              "capability_epoch", "profile_scope", "content_class", "too_large", "secret"}
    assert tested == set(botmail.REASONS)


def test_expired(mail):
    envelope = env(ttl_seconds=60)
    clock.advance(120)
    receipt = botmail.deliver(mail, envelope)
    assert receipt["outcome"] == "expired" and receipt["message_id"] is None
    assert botmail.inbox(mail, "hermes")["count"] == 0


def test_failed_when_the_store_cannot_deliver(mail, monkeypatch):
    def busy(*args, **kwargs):
        raise MindosError("database busy: locked")

    with monkeypatch.context() as patch:
        patch.setattr(botmail, "_check", busy)
        receipt = botmail.deliver(mail, env())
    assert receipt["outcome"] == "failed" and "busy" in receipt["detail"]
    assert botmail.receipts(mail, outcome="failed")[0]["envelope_id"] == "m-1"
    assert botmail.deliver(mail, env())["outcome"] == "accepted"  # a retry of the same envelope lands once


def test_inbox_ack_addressed_only_and_idempotent(mail):
    botmail.allow_peer(mail, "claude-code", "codex", profile="work", classes=["chat"])
    botmail.deliver(mail, env())
    other = botmail.deliver(mail, env(recipient="claude-code", envelope_id="m-2"))
    with pytest.raises(Refused, match="addressed to 'hermes'"):
        botmail.ack(mail, 1, "claude-code")
    first = botmail.ack(mail, "1", "hermes")
    assert first["acked"] and first["already_acked"] is False
    assert botmail.ack(mail, 1, "hermes")["already_acked"] is True
    assert botmail.inbox(mail, "hermes", unacked_only=True)["count"] == 0
    assert [m["id"] for m in botmail.inbox(mail, "claude-code")["messages"]] == [other["message_id"]]
    with pytest.raises(NotFound):
        botmail.ack(mail, 99, "hermes")


def test_context_is_bounded_redacted_and_profile_scoped(mail):
    botmail.allow_peer(mail, "hermes", "codex", profile="work", classes=["chat"], replay_budget=100)
    for i in range(20):
        assert botmail.deliver(mail, env(epoch=2, envelope_id=f"c-{i}", body=f"message {i} " + "y" * 50))[
            "outcome"] == "accepted"
    botmail.deliver(mail, env(sender="opencode", profile="home", harness="opencode", envelope_id="h-1",
                              body="home profile chatter"))
    packed = botmail.context(mail, "hermes", "work", budget=600)
    assert packed["used_chars"] <= 600 and packed["truncated"]
    ids = [m["id"] for m in packed["messages"]]
    assert ids == sorted(ids) and ids[-1] == 20  # the newest, shown oldest first
    assert "home profile chatter" not in json.dumps(packed)
    assert botmail.context(mail, "hermes", "work", budget=600) == packed  # deterministic
    assert [m["body"] for m in botmail.context(mail, "hermes", "home")["messages"]] == ["home profile chatter"]


def test_allow_peer_is_idempotent_and_validated(mail):
    same = botmail.allow_peer(mail, "hermes", "codex", profile="work", classes=["status", "chat"], replay_budget=3)
    assert same["changed"] is False and same["epoch"] == 1
    with pytest.raises(InvalidInput, match="not bot chat"):
        botmail.allow_peer(mail, "hermes", "codex", profile="work", classes=["handoff"])
    with pytest.raises(InvalidInput, match="at least one"):
        botmail.allow_peer(mail, "hermes", "codex", profile="work", classes=[])
    with pytest.raises(NotFound):
        botmail.revoke_peer(mail, "hermes", "nobody")
    assert [p["peer"] for p in botmail.peers(mail, "hermes")] == ["codex", "opencode"]


def test_cli_round_trip(cli, cli_json):
    cli_json("autopilot", "botmail-peer-allow", "--recipient", "hermes", "--peer", "codex", "--profile", "work",
             "--class", "status")
    receipt = cli_json("autopilot", "botmail-send", "--from", "codex", "--to", "hermes", "--profile", "work",
                       "--class", "status", "--body", "build green", "--harness", "codex", "--id", "s-1")
    assert receipt["outcome"] == "accepted"
    rc, out, err = cli("autopilot", "botmail-send", "--envelope", '{"format": "nope"}')
    raw = json.loads(out)
    assert rc == 1 and err == "" and (raw["outcome"], raw["reason"]) == ("rejected", "malformed")
    rc, out, _ = cli("autopilot", "botmail-send", "--from", "codex", "--to", "hermes", "--profile", "work",
                     "--class", "status", "--body", "build green", "--harness", "codex", "--id", "s-1")
    assert rc == 0 and json.loads(out)["outcome"] == "duplicate"  # a retry of a delivered envelope
    assert cli_json("autopilot", "botmail-inbox", "--recipient", "hermes")["count"] == 1
    assert cli_json("autopilot", "botmail-ack", "1", "--recipient", "hermes")["acked"] is True
    assert len(cli_json("autopilot", "botmail-receipts", "--outcome", "rejected")) == 1
    rc, out, err = cli("autopilot", "botmail-send", "--from", "codex")
    assert rc == 2 and out == "" and "needs --envelope" in err


def test_cli_reads_a_piped_envelope(cli_json, monkeypatch):
    import io

    cli_json("autopilot", "botmail-peer-allow", "--recipient", "hermes", "--peer", "codex", "--profile", "work")
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(env(klass="chat"))))
    receipt = cli_json("autopilot", "botmail-send", "--envelope", "-")
    assert receipt["outcome"] == "accepted" and receipt["envelope_id"] == "m-1"
