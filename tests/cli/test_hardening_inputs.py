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
