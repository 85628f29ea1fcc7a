"""Errors that say what happened, one integer rule and one single-line rule, through the doors.

Each case here was accepted, or refused with a misleading message, by an earlier build:
fullwidth and Arabic-Indic digits read as numbers, newlines stored in one-line fields, a
misspelt flag reported as a missing one, a rejected botmail envelope exiting 0 and a
recall-diff of a digest no recall produced exiting 0.
"""

import json

import pytest

from conftest import db_state


def test_a_misspelt_flag_is_named_not_reported_as_a_missing_one(cli):
    rc, out, err = cli("autopilot", "create", "--pro", "X", "--title", "t")
    assert (rc, out) == (2, "") and "unrecognized arguments: --pro" in err and "required" not in err
    rc, _, err = cli("autopilot", "create", "--title", "t", "--pro=X")
    assert rc == 2 and "unrecognized arguments: --pro" in err
    # a nested command names it too; a call that only lacks a flag still says so
    rc, _, err = cli("mood_poller", "mood", "create", "--naem", "x")
    assert rc == 2 and "unrecognized arguments: --naem" in err
    rc, _, err = cli("autopilot", "create", "--title", "t")
    assert rc == 2 and "required: --project" in err


def test_recall_diff_of_a_digest_no_recall_produced_fails(cli, cli_json, conn):
    cli_json("autopilot", "create", "--project", "P", "--title", "t", "--id", "t1")
    before = db_state(conn)
    rc, out, err = cli("autopilot", "recall-diff", "t1", "--digest", "a" * 64)
    assert (rc, out) == (1, "") and "no audited recall of t1 produced digest" in err
    assert db_state(conn) == before
    sealed = cli_json("autopilot", "recall", "t1", "--agent", "codex")
    assert cli_json("autopilot", "recall-diff", "t1", "--digest", sealed["digest"])["fresh"] is True


def test_botmail_send_fails_when_the_envelope_is_rejected(cli):
    rc, out, err = cli("autopilot", "botmail-send", "--from", "codex", "--to", "hermes", "--profile", "work",
                       "--body", "hello")
    assert rc == 1 and err == "" and json.loads(out)["outcome"] == "rejected"
    rc, out, _ = cli("autopilot", "botmail-send", "--envelope", "[1]")
    assert rc == 1 and json.loads(out)["outcome"] == "rejected"


# --- one integer rule: ASCII digits only --------------------------------------------------

def _fact(cli_json):
    return cli_json("autopilot", "fact-assert", "--subject", "auth", "--predicate", "uses", "--object", "pg",
                    "--source", "a")["id"]


@pytest.mark.parametrize("digit", ["１", "٣", "۱", "१", " 1", "+1", "1_0"])
def test_fact_retract_takes_an_id_in_ascii_digits_only(cli, cli_json, conn, digit):
    assert _fact(cli_json) == 1
    before = db_state(conn)
    rc, out, err = cli("autopilot", "fact-retract", digit, "--reason", "x")
    assert (rc, out) == (2, "") and "invalid fact id" in err
    assert db_state(conn) == before


@pytest.mark.parametrize("argv", [
    ["autopilot", "botmail-ack", "１", "--recipient", "hermes"],
    ["autopilot", "fact-assert", "--subject", "a", "--predicate", "b", "--object", "c", "--source", "s",
     "--valid-hours", "٣"],
    ["autopilot", "fact-assert", "--subject", "a", "--predicate", "b", "--object", "c", "--source", "s",
     "--valid-hours", "1e3"],
    ["autopilot", "sessions-prune", "--older-than", "٣d"],
    ["autopilot", "note", "t1", "--content", "x", "--ttl-hours", "٣"],
    ["autopilot", "prime", "--agent", "a", "--seconds", "nan"],
    ["autopilot", "botmail-peer-allow", "--recipient", "h", "--peer", "c", "--profile", "w", "--replay-budget", "٣"],
    ["autopilot", "search-notes", "x", "--pinned-boost", "inf"],
    ["ops", "dup-tasks", "--threshold", "٠.5"],
    ["mood_poller", "set", "max_wakes_per_hour", "٣"],
    ["mood_poller", "set", "daily_budget_usd", "٣"],
    ["mood_poller", "set", "grace", "+30"],
    ["mood_poller", "tick", "--dry-run", "--seconds", "٣"],
])
def test_every_number_is_written_in_ascii_digits(cli, cli_json, conn, argv):
    cli_json("autopilot", "create", "--project", "P", "--title", "t", "--id", "t1")
    before = db_state(conn)
    rc, out, err = cli(*argv)
    assert rc == 2 and out == "" and "ASCII" in err or "invalid" in err, (argv, rc, err)
    assert rc == 2
    assert db_state(conn) == before


def test_ascii_numbers_still_work(cli, cli_json):
    assert _fact(cli_json) == 1
    assert cli_json("autopilot", "fact-retract", "1", "--reason", "moved")["retracted_at"]
    assert cli_json("mood_poller", "set", "max_wakes_per_hour", "3")["effective"] == 3
    assert cli_json("mood_poller", "set", "daily_budget_usd", "2.5")["effective"] == 2.5
    assert cli_json("autopilot", "fact-assert", "--subject", "a", "--predicate", "b", "--object", "c",
                    "--source", "s", "--valid-hours", "1.5")["valid_until"]


# --- one single-line rule ------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["autopilot", "fact-retract", "1", "--reason", "moved\nforged line"],
    ["autopilot", "fact-retract", "1", "--reason", "moved\x1b[2J"],
    ["autopilot", "botmail-send", "--from", "codex", "--to", "hermes", "--profile", "work", "--body", "hi",
     "--thread", "t\nforged"],
    ["mood_poller", "agent", "create", "x1", "--command", "claude -p\nrm -rf /"],
    ["mood_poller", "agent", "update", "re", "--command", "claude\r-p"],
    ["mood_poller", "set", "listening", "on", "--note", "busy\nweek"],
    ["mood_poller", "page", "set", "Moods/P", "--editor", "re", "--text", "body", "--note", "a\u2028b"],
    ["mood_poller", "page", "set", "Moods/P\x85", "--editor", "re", "--text", "body"],
    ["autopilot", "handoff", "t1", "--from-agent", "a", "--status", "running\nforged", "--objective", "o"],
    ["autopilot", "handoff", "t1", "--from-agent", "a", "--commit", "abc\n123", "--objective", "o"],
])
def test_one_line_fields_refuse_line_breaks_and_controls(cli, cli_json, conn, argv):
    cli_json("autopilot", "create", "--project", "P", "--title", "t", "--id", "t1")
    _fact(cli_json)
    cli_json("autopilot", "botmail-peer-allow", "--recipient", "hermes", "--peer", "codex", "--profile", "work")
    cli_json("mood_poller", "agent", "create", "re")
    cli_json("mood_poller", "page", "trust", "re")
    before = db_state(conn)
    rc, out, err = cli(*argv)
    if argv[1] == "botmail-send":  # a rejected envelope: the receipt records it, the message is not delivered
        assert rc == 1 and json.loads(out)["reason"] == "malformed"
        assert conn.execute("SELECT count(*) FROM botmail").fetchone()[0] == 0
        return
    assert (rc, out) == (2, "") and ("single line" in err or "printable" in err), (argv, rc, err)
    assert db_state(conn) == before


def test_a_rejected_envelope_keeps_no_forged_line_in_its_receipt(cli, conn):
    rc, _, _ = cli("autopilot", "botmail-send", "--from", "codex\nforged", "--to", "hermes\x1b[2J", "--profile",
                   "work", "--body", "hi", "--id", "m\nx", "--class", "chat\x1b]0;t\x07")
    assert rc == 1
    rc, _, _ = cli("autopilot", "botmail-send", "--from", "codex", "--to", "hermes", "--profile", "work",
                   "--body", "hi", "--class", "chat\x1b]0;t\x07")
    assert rc == 1
    rows = conn.execute("SELECT envelope_id, sender, recipient, detail FROM botmail_receipts").fetchall()
    assert len(rows) == 2 and all(_inert("".join(row)) and "\n" not in "".join(row) for row in rows)


# --- text that reaches a terminal or an agent is inert --------------------------------------

HOSTILE_TITLE = "evil\u202etitle\u2066x\u2069"
HOSTILE_BODY = "line one\nclear \x1b[2J\x1b]0;pwned\x07 csi\x9b31m \r overwrite"


def _hostile_task(cli_json):
    cli_json("autopilot", "create", "--project", "P", "--title", HOSTILE_TITLE, "--id", "t1",
             "--description", HOSTILE_BODY, "--next-action", "do \x1b[31mred\x1b[0m")
    cli_json("autopilot", "claim", "t1", "--owner", "a")
    cli_json("autopilot", "note", "t1", "--content", "pinned \x1b[5mblink", "--source", "a", "--pinned",
             "--kind", "constraint")


def _inert(text):
    active = [ch for ch in text if (ord(ch) < 32 and ch not in "\n\t") or 0x7f <= ord(ch) <= 0x9f
              or ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029\u200e\u200f\u061c"]
    return active == []


def test_prime_text_shows_stored_escape_sequences_as_escapes(cli, cli_json):
    _hostile_task(cli_json)
    rc, out, err = cli("autopilot", "prime", "--agent", "a", "--format", "text")
    assert rc == 0 and err == ""
    assert _inert(out) and "\\x1b[2J" in out and "\\u202e" in out and "\\x1b[5mblink" in out


def test_every_text_view_is_inert(cli, cli_json):
    _hostile_task(cli_json)
    for argv in (["autopilot", "dashboard"], ["ops", "morning"], ["autopilot", "prime", "--agent", "a",
                                                                 "--format", "text"]):
        rc, out, _ = cli(*argv)
        assert rc == 0 and _inert(out), argv


def test_the_gateway_hook_context_is_inert(cli_json, monkeypatch, tmp_path):
    from mindos.harness import hermes

    _hostile_task(cli_json)
    monkeypatch.setenv("MINDOS_AGENT", "a")
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "hermes"))
    answer = hermes.respond({"hook_event_name": "pre_llm_call", "session_id": "s1", "is_first_turn": True})
    assert _inert(answer["context"]) and "\\x1b[2J" in answer["context"]


def test_an_error_echoing_a_value_is_inert(cli):
    rc, _, err = cli("autopilot", "show", "t\x1b]0;x\x07")
    assert rc == 2 and _inert(err.rstrip("\n"))


def test_a_wake_reaches_the_agent_inert(tmp_path):
    import sys

    from mindos.comms import delivery
    from mindos.core.text import inert

    # compose.wake makes the body inert (tests/comms/test_comms_fixes.py drives it through a
    # tick); delivery hands the agent exactly what was composed
    wake = inert("hi \x1b]0;pwned\x07\n\u202eevil", multiline=True)
    assert "\x1b" not in wake and "\u202e" not in wake and "\\x1b]0;pwned\\x07" in wake
    script = "import sys; print(repr(sys.stdin.read()))"
    result = delivery.run([sys.executable, "-c", script], wake)
    assert result["outcome"] == "replied" and result["text"].strip() == repr(wake)


def test_a_transcript_timestamp_in_other_script_digits_is_not_a_timestamp():
    from mindos.memory import transcripts

    assert transcripts._timestamp("2026-08-20T10:00:05.123Z") == "2026-08-20T10:00:05Z"
    assert transcripts._timestamp("２０２６-08-20T10:00:05.123Z") is None
    assert transcripts._timestamp("2026-08-20T10:00:0٥Z") is None
