"""The first-turn sections of the session-start pack (the Hermes first turn): receipts, facts,
semantic memory and session history, with provenance, relevant to the agent's focus, never
beyond its projects; a prime without them is byte-identical to the legacy one."""

import json
import os

import pytest

from conftest import last_event, make_task
from mindos.context import builder, first_turn, prime
from mindos.errors import InvalidInput
from mindos.memory import facts, handoffs, memories, sessions
from mindos.work import leases, receipts

SECRET = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


def _session(tmp_path, name, text, project):
    root = tmp_path / name
    root.mkdir()
    (root / "s.jsonl").write_text(json.dumps({"role": "user", "content": text, "timestamp": "2026-08-20T10:00:00Z"})
                                  + "\n")
    return str(root), project


@pytest.fixture
def seeded(conn, tmp_path):
    make_task(conn, "t-auth", project="Auth", title="fix the redirect cookie", next_action="patch the auth session")
    leases.claim(conn, "t-auth", "hermes")
    receipts.add(conn, "t-auth", "verification", {"tests": "pass"})
    memories.retain(conn, f"auth deploy key {SECRET}", project="Auth", allow_secret=True)  # an audited override
    facts.assert_fact(conn, subject="service-auth", predicate="uses", obj="postgres-14", source="codex",
                      task="t-auth")
    facts.assert_fact(conn, subject="fleet-wide", predicate="runs", obj="sqlite", source="leo")  # unlinked
    memories.retain(conn, "auth sessions expire after 30 days", project="Auth", source="leo")
    memories.retain(conn, "We chose SQLite for execution truth")  # project-less: fleet-wide
    # another project's evidence and memory, matching the same words
    make_task(conn, "t-bill", project="Billing", title="billing cookie redirect", next_action="auth session")
    leases.claim(conn, "t-bill", "codex")
    receipts.add(conn, "t-bill", "verification", {"billing": "auth cookie"})
    facts.assert_fact(conn, subject="billing-auth", predicate="uses", obj="redis", source="codex", task="t-bill")
    memories.retain(conn, "billing auth sessions are separate", project="Billing")
    for name, text, project in (("a", "the auth session cookie is SameSite Strict", "Auth"),
                                ("b", "billing auth session cookie talk", "Billing"),
                                ("c", "auth session cookie with no project", None)):
        root, project = _session(tmp_path, name, text, project)
        sessions.ingest(conn, "claude-code", root, project=project, apply=True)
    return conn


def _pack(conn, agent="hermes", **kw):
    """The first-turn pack as JSON, its tables read back into entries (builder.decode)."""
    return builder.decode(prime.prime(conn, agent, fmt="json", extras=first_turn.DEFAULTS, **kw))


def test_the_first_turn_sections_carry_provenance_relevant_to_the_held_task(seeded):
    pack = _pack(seeded)
    assert pack["sections"][-4:] == ["receipts", "facts", "semantic", "sessions"]
    assert pack["focus_task_id"] == "t-auth"
    [receipt] = pack["receipts"]
    assert receipt["task_id"] == "t-auth" and receipt["kind"] == "verification" and receipt["hash_ok"] is True
    assert len(receipt["file_hash"]) == 64 and receipt["payload"]["tests"] == "pass"
    assert SECRET not in json.dumps(pack)
    assert [(f["subject"], f["source"], f["task_id"]) for f in pack["facts"]] == [("service-auth", "codex", "t-auth")]
    assert {"valid_from", "id"} <= set(pack["facts"][0]) and "valid_until" not in pack["facts"][0]  # compact
    assert [m["content"] for m in pack["semantic"]] == ["auth deploy key [REDACTED:github_token]",
                                                        "auth sessions expire after 30 days"]
    assert pack["semantic"][0]["engine"] == "memory-fts-v1" and pack["semantic"][0]["project"] == "Auth"
    assert [(s["project"], s["source"], s["seq"]) for s in pack["sessions"]] == [("Auth", "claude-code", 0)]
    assert "SameSite" in pack["sessions"][0]["snippet"]
    text = prime.prime(seeded, "hermes", extras=first_turn.DEFAULTS)
    for expected in ("## Latest receipts", receipt["receipt_id"], "service-auth uses postgres-14 (source codex",
                     "auth sessions expire after 30 days", "## Session history relevant to t-auth"):
        assert expected in text
    assert "Billing" not in text and "billing" not in text and "redis" not in text  # never another project's
    assert last_event(seeded, "context_primed")["first_turn"] == first_turn.DEFAULTS


def test_without_a_focus_the_newest_in_scope_and_nothing_of_other_projects(seeded):
    pack = _pack(seeded, agent="newcomer")  # no lease, no inbox, nothing dispatchable
    assert "focus_task_id" not in pack  # lean: no focus
    assert "receipts" not in pack and "sessions" not in pack  # no projects: nothing task- or project-bound
    assert [f["subject"] for f in pack["facts"]] == ["fleet-wide"]  # unlinked facts are fleet-wide
    assert [m["content"] for m in pack["semantic"]] == ["We chose SQLite for execution truth"]


def test_an_inbox_handoff_is_the_focus_when_nothing_is_held(seeded):
    make_task(seeded, "t-in", project="Auth", title="rotate the auth cookie secret")
    handoffs.record(seeded, "t-in", from_agent="codex", to_agent="opencode", objective="rotate it")
    leases.claim(seeded, "t-in", "codex")  # held by someone else: next gives opencode nothing
    pack = _pack(seeded, agent="opencode")
    assert pack["focus_task_id"] == "t-in" and pack["projects"] == ["Auth"]
    assert [r["task_id"] for r in pack["receipts"]] == ["t-auth"]  # its project's evidence


def test_the_legacy_prime_is_unchanged_without_the_extras(seeded):
    plain = prime.build(seeded, "hermes")
    assert [name for name, _ in plain["sections"]] == ["leases", "inbox", "constraints", "next", "held"]
    extra = prime.build(seeded, "hermes", extras=first_turn.DEFAULTS)
    assert extra["sections"][:5] == plain["sections"]
    assert prime.build(seeded, "hermes")["digest"] == plain["digest"]
    prime.prime(seeded, "hermes")
    assert "first_turn" not in last_event(seeded, "context_primed")


def test_the_budget_counts_the_extras_and_drops_what_does_not_fit(seeded):
    pack = prime.prime(seeded, "hermes", fmt="json", budget=400, extras=first_turn.DEFAULTS)
    assert pack["used_chars"] <= 400 and pack["truncated"] is True
    text = prime.prime(seeded, "hermes", budget=600, extras=first_turn.DEFAULTS)
    assert len(text.encode("utf-8")) <= 600


@pytest.mark.parametrize("extras", [{"receipts": -1}, {"facts": 51}, {"bogus": 1}, {"semantic": "x"}, ["facts"]])
def test_bad_extras_are_refused(seeded, extras):
    before = seeded.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    with pytest.raises(InvalidInput):
        prime.prime(seeded, "hermes", extras=extras)
    assert seeded.execute("SELECT count(*) FROM audit_events").fetchone()[0] == before


def test_injection_shaped_task_text_matches_safely(conn):
    make_task(conn, "t-x", project="Auth", title="'); DROP TABLE facts; -- \" OR 1=1 NEAR(a b) *",
              next_action="auth")
    leases.claim(conn, "t-x", "hermes")
    memories.retain(conn, "auth note", project="Auth")
    pack = _pack(conn)
    assert pack["focus_task_id"] == "t-x" and conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0
    assert [m["content"] for m in pack["semantic"]] == ["auth note"]


def test_without_fts5_the_sections_match_by_substring(plain_conn):
    make_task(plain_conn, "t-auth", project="Auth", title="fix the redirect cookie", next_action="auth session")
    leases.claim(plain_conn, "t-auth", "hermes")
    memories.retain(plain_conn, "auth sessions expire after 30 days", project="Auth")
    facts.assert_fact(plain_conn, subject="service-auth", predicate="uses", obj="postgres-14", source="codex",
                      task="t-auth")
    pack = _pack(plain_conn)
    assert [m["content"] for m in pack["semantic"]] == ["auth sessions expire after 30 days"]
    assert [f["subject"] for f in pack["facts"]] == ["service-auth"]
