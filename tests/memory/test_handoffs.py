"""Agent handoffs: record/supersede/dedup, ack, inbox, search, history, the protocol lint."""

import json
import subprocess
import sys

import pytest
from conftest import ROOT, script

from mindos.core import clock
from mindos.memory import handoffs
from mindos.store import db, fts, ledger
from mindos.work import tasks
from mindos.errors import InvalidInput, NotFound, Refused
from mindos.core.canonical import canonical_json, sha256_hex
from mindos.views import show

AWS_KEY = "AKIAABCDEFGHIJKLMNOP"
D1, D2, D3 = "a" * 64, "b" * 64, "c" * 64
CORE1, CORE2 = "1" * 64, "2" * 64


def make_task(conn, task_id="t1", project="Trove", title="Retry path", priority="P2"):
    return tasks.create(conn, project=project, title=title, task_id=task_id, priority=priority)


def hand(conn, task_id="t1", **kw):
    kw.setdefault("from_agent", "codex")
    kw.setdefault("to_agent", "claude-code")
    kw.setdefault("status", "running")
    kw.setdefault("objective", "implement retry path")
    kw.setdefault("evidence", ["tests pass locally"])
    kw.setdefault("next_actions", ["open PR"])
    return handoffs.record(conn, task_id, **kw)


def recall_event(conn, task_id, digest, core_digest, action="context_recalled", agent="codex"):
    with db.write(conn):
        return ledger.append_event(conn, "task", task_id, action,
                               {"agent": agent, "digest": digest, "core_digest": core_digest, "budget": 6000})


def state(conn):
    """Everything a refusal must leave alone: handoff rows and the audit ledger."""
    rows = [tuple(r) for r in conn.execute("SELECT * FROM handoffs ORDER BY id")]
    events = [tuple(r) for r in conn.execute("SELECT id, action, payload_json FROM audit_events ORDER BY id")]
    return rows, events


def actions(conn):
    return [r[0] for r in conn.execute("SELECT action FROM audit_events ORDER BY id")]


def last_event(conn, action):
    row = conn.execute("SELECT entity_type, entity_id, payload_json FROM audit_events WHERE action = ?"
                       " ORDER BY id DESC LIMIT 1", (action,)).fetchone()
    return row[0], row[1], json.loads(row[2])


def live_count(conn, task_id):
    return conn.execute("SELECT count(*) FROM handoffs WHERE task_id = ? AND superseded_by IS NULL",
                        (task_id,)).fetchone()[0]


# ---------------------------------------------------------------------------------------
# record


def test_record_stores_every_field_and_audits(conn):
    make_task(conn)
    h = hand(conn, constraints=["no new dependencies"], decisions=["use exponential backoff"],
             files=["src/retry.py"], commit="abc1234", risks=["flaky integration test"], recall_digest=D1)
    assert h["id"] == 1 and h["task_id"] == "t1" and h["live"] is True and h["deduplicated"] is False
    assert (h["from_agent"], h["to_agent"], h["status"]) == ("codex", "claude-code", "running")
    assert h["objective"] == "implement retry path"
    assert h["evidence"] == ["tests pass locally"] and h["constraints"] == ["no new dependencies"]
    assert h["decisions"] == ["use exponential backoff"] and h["files"] == ["src/retry.py"]
    assert h["next_actions"] == ["open PR"] and h["risks"] == ["flaky integration test"]
    assert h["commit_ref"] == "abc1234" and h["recall_digest"] == D1
    assert h["created_at"] == "2026-08-21T09:00:00Z" and h["acked_by"] == "" and h["acked_at"] is None
    assert h["supersedes"] is None and h["superseded_by"] is None
    stored = conn.execute("SELECT evidence, files FROM handoffs WHERE id = 1").fetchone()
    assert json.loads(stored[0]) == ["tests pass locally"] and json.loads(stored[1]) == ["src/retry.py"]
    entity_type, entity_id, payload = last_event(conn, "handoff_recorded")
    assert (entity_type, entity_id) == ("handoff", "t1")
    assert payload["handoff_id"] == 1 and payload["recall_digest"] == D1
    assert payload["to_agent"] == "claude-code" and payload["payload_hash"] == h["payload_hash"]


def test_payload_hash_is_sha256_of_canonical_payload(conn):
    make_task(conn)
    h = hand(conn, commit="abc1234")
    expected = {
        "task_id": "t1", "from_agent": "codex", "to_agent": "claude-code", "status": "running",
        "objective": "implement retry path", "evidence": ["tests pass locally"], "constraints": [],
        "decisions": [], "files": [], "commit_ref": "abc1234", "next_actions": ["open PR"], "risks": [],
        "recall_digest": "",
    }
    assert h["payload_hash"] == sha256_hex(canonical_json(expected))


def test_recall_digest_is_normalized_and_validated(conn):
    make_task(conn)
    assert hand(conn, recall_digest="AB" * 32)["recall_digest"] == "ab" * 32
    before = state(conn)
    for bad in ("a" * 63, "a" * 65, "g" * 64, "' OR 1=1 --", "a" * 10000):
        with pytest.raises(InvalidInput, match="--recall-digest"):
            hand(conn, recall_digest=bad, objective="other")
    assert state(conn) == before


@pytest.mark.parametrize("field,value,flag", [
    ("from_agent", "", "--from-agent"),
    ("from_agent", "codex; DROP TABLE handoffs", "--from-agent"),
    ("to_agent", "claude code", "--to-agent"),
    ("to_agent", "x" * 65, "--to-agent"),
    ("objective", "x" * (handoffs.MAX_FIELD + 1), "--objective"),
    ("objective", "bad\x00nul", "--objective"),
    ("status", "s" * 65, "--status"),
    ("commit", "c" * 201, "--commit"),
    ("evidence", [""], "--evidence"),
    ("evidence", ["   "], "--evidence"),
    ("next_actions", ["ok"] * (handoffs.MAX_ITEMS + 1), "--next-action"),
    ("risks", ["r" * (handoffs.MAX_FIELD + 1)], "--risk"),
    ("files", ["a\x00b"], "--file"),
])
def test_bad_input_is_refused_and_changes_nothing(conn, field, value, flag):
    make_task(conn)
    hand(conn)
    before = state(conn)
    with pytest.raises(InvalidInput) as info:
        hand(conn, **{field: value})
    assert flag in str(info.value) and "\n" not in str(info.value)
    assert state(conn) == before


def test_unknown_or_malformed_task_is_refused(conn):
    make_task(conn)
    before = state(conn)
    with pytest.raises(NotFound, match="unknown task 'nope'"):
        hand(conn, "nope")
    with pytest.raises(InvalidInput):
        hand(conn, "../etc/passwd")
    with pytest.raises(InvalidInput):
        hand(conn, "")
    assert state(conn) == before


def test_new_handoff_supersedes_live_one_atomically(conn):
    make_task(conn)
    first = hand(conn)
    clock.advance(minutes=5)
    second = hand(conn, objective="write the PR description", to_agent="hermes")
    assert second["id"] == 2 and second["supersedes"] == first["id"] and second["live"]
    old = conn.execute("SELECT superseded_by, superseded_at FROM handoffs WHERE id = 1").fetchone()
    assert tuple(old) == (2, "2026-08-21T09:05:00Z")
    assert live_count(conn, "t1") == 1
    assert handoffs.live(conn, "t1")["id"] == 2
    assert last_event(conn, "handoff_recorded")[2]["supersedes"] == 1


def test_supersession_rolls_back_whole_when_audit_fails(conn, monkeypatch):
    make_task(conn)
    hand(conn)
    before = state(conn)
    real = ledger.append_event

    def failing(c, entity_type, entity_id, action, payload=None):
        if action == "handoff_recorded":
            raise RuntimeError("disk full")
        return real(c, entity_type, entity_id, action, payload)

    monkeypatch.setattr(ledger, "append_event", failing)
    with pytest.raises(RuntimeError):
        hand(conn, objective="something new")
    monkeypatch.setattr(ledger, "append_event", real)
    assert state(conn) == before
    assert handoffs.live(conn, "t1")["id"] == 1 and live_count(conn, "t1") == 1


def test_supersession_resets_acknowledgment(conn):
    make_task(conn)
    hand(conn)
    handoffs.ack(conn, "t1", "claude-code")
    new = hand(conn, objective="updated objective")
    assert new["acked_by"] == "" and new["acked_at"] is None
    old = conn.execute("SELECT acked_by, acked_at FROM handoffs WHERE id = 1").fetchone()
    assert tuple(old) == ("claude-code", "2026-08-21T09:00:00Z")
    again = handoffs.ack(conn, "t1", "claude-code")
    assert again["already_acked"] is False and again["id"] == new["id"]


def test_identical_live_payload_is_deduplicated(conn):
    make_task(conn)
    first = hand(conn, commit="abc")
    clock.advance(minutes=1)
    again = hand(conn, commit="abc")
    assert again["deduplicated"] is True and again["id"] == first["id"]
    assert conn.execute("SELECT count(*) FROM handoffs").fetchone()[0] == 1
    assert actions(conn).count("handoff_deduplicated") == 1 and actions(conn).count("handoff_recorded") == 1
    assert last_event(conn, "handoff_deduplicated")[2]["handoff_id"] == first["id"]
    # a different recall digest is new provenance, not a duplicate
    assert hand(conn, commit="abc", recall_digest=D1)["deduplicated"] is False
    # dedup compares against the live handoff only: re-recording an old payload is new
    third = hand(conn, commit="abc")
    assert third["deduplicated"] is False and third["id"] == 3 and third["supersedes"] == 2


def test_dedup_keeps_existing_acknowledgment(conn):
    make_task(conn)
    hand(conn)
    handoffs.ack(conn, "t1", "claude-code")
    again = hand(conn)
    assert again["deduplicated"] is True and again["acked_by"] == "claude-code"


def test_handoffs_on_different_tasks_are_independent(conn):
    make_task(conn, "t1")
    make_task(conn, "t2")
    hand(conn, "t1")
    h2 = hand(conn, "t2")
    assert h2["deduplicated"] is False and h2["supersedes"] is None
    assert live_count(conn, "t1") == 1 and live_count(conn, "t2") == 1


# ---------------------------------------------------------------------------------------
# reading: current, list, history, show


def test_current_returns_live_or_not_found(conn):
    make_task(conn)
    with pytest.raises(NotFound, match="has no live handoff"):
        handoffs.current(conn, "t1")
    with pytest.raises(NotFound, match="unknown task"):
        handoffs.current(conn, "ghost")
    hand(conn)
    hand(conn, objective="second")
    assert handoffs.current(conn, "t1")["objective"] == "second"
    assert handoffs.live(conn, "ghost") is None


def test_list_live_and_all_with_ack_fields(conn):
    make_task(conn)
    assert handoffs.list_for_task(conn, "t1") == []
    hand(conn)
    handoffs.ack(conn, "t1", "claude-code")
    clock.advance(minutes=1)
    hand(conn, objective="second", to_agent="hermes")
    live = handoffs.list_for_task(conn, "t1")
    assert [h["id"] for h in live] == [2]
    chain = handoffs.list_for_task(conn, "t1", include_superseded=True)
    assert [h["id"] for h in chain] == [1, 2]
    assert chain[0]["superseded_by"] == 2 and chain[0]["live"] is False
    assert chain[0]["acked_by"] == "claude-code" and chain[0]["acked_at"] == "2026-08-21T09:00:00Z"
    with pytest.raises(NotFound):
        handoffs.list_for_task(conn, "ghost")


def test_history_walks_chain_from_any_link(conn):
    make_task(conn)
    make_task(conn, "t2")
    hand(conn, objective="one")
    hand(conn, "t2", objective="other task")
    hand(conn, objective="two", from_agent="claude-code", to_agent="hermes")
    hand(conn, objective="three", from_agent="hermes", to_agent="codex")
    for link in (1, 3, 4, "3"):
        result = handoffs.history(conn, link)
        assert [h["objective"] for h in result["chain"]] == ["one", "two", "three"]
        assert result["task_id"] == "t1" and result["length"] == 3 and result["live_id"] == 4
    assert handoffs.history(conn, 2)["length"] == 1


@pytest.mark.parametrize("bad", ["0", "-1", "abc", "1.5", "", "99999999999999999999999", "1; DROP TABLE x", True])
def test_history_rejects_malformed_ids(conn, bad):
    with pytest.raises(InvalidInput, match="invalid handoff id"):
        handoffs.history(conn, bad)


def test_history_unknown_id(conn):
    with pytest.raises(NotFound, match="unknown handoff 42"):
        handoffs.history(conn, 42)


def test_show_surfaces_live_handoff(conn):
    make_task(conn)
    assert show.show(conn, "t1")["handoff"] is None
    hand(conn)
    handoffs.ack(conn, "t1", "claude-code")
    shown = show.show(conn, "t1")["handoff"]
    assert shown["id"] == 1 and shown["acked_by"] == "claude-code" and shown["acked_at"]


def test_row_to_handoff_shape(conn):
    make_task(conn)
    hand(conn)
    row = conn.execute("SELECT * FROM handoffs WHERE id = 1").fetchone()
    h = handoffs.row_to_handoff(row)
    expected = {"id", "task_id", "from_agent", "to_agent", "status", "objective", "evidence", "constraints",
                "decisions", "files", "commit_ref", "next_actions", "risks", "recall_digest", "payload_hash",
                "supersedes", "superseded_by", "superseded_at", "acked_by", "acked_at", "ack_recall_digest",
                "created_at", "live"}
    assert set(h) == expected
    assert all(isinstance(h[f], list) for f in handoffs.LIST_FIELDS)


# ---------------------------------------------------------------------------------------
# ack


def test_ack_by_recipient_then_idempotent(conn):
    make_task(conn)
    hand(conn)
    clock.advance(minutes=3)
    acked = handoffs.ack(conn, "t1", "claude-code", recall_digest=D2)
    assert acked["already_acked"] is False and acked["acked_by"] == "claude-code"
    assert acked["acked_at"] == "2026-08-21T09:03:00Z" and acked["ack_recall_digest"] == D2
    _, entity_id, payload = last_event(conn, "handoff_acknowledged")
    assert entity_id == "t1" and payload == {"handoff_id": 1, "agent": "claude-code", "recall_digest": D2}
    clock.advance(minutes=3)
    before = state(conn)
    again = handoffs.ack(conn, "t1", "claude-code")
    assert again["already_acked"] is True and again["acked_at"] == "2026-08-21T09:03:00Z"
    assert again["ack_recall_digest"] == D2
    assert state(conn) == before
    assert actions(conn).count("handoff_acknowledged") == 1


def test_foreign_ack_is_refused_and_changes_nothing(conn):
    make_task(conn)
    hand(conn)
    before = state(conn)
    with pytest.raises(Refused, match="addressed to 'claude-code'"):
        handoffs.ack(conn, "t1", "hermes")
    assert state(conn) == before


def test_ack_after_readdress_belongs_to_new_recipient(conn):
    make_task(conn)
    hand(conn)
    hand(conn, to_agent="hermes", objective="hermes takes over")
    with pytest.raises(Refused):
        handoffs.ack(conn, "t1", "claude-code")
    assert handoffs.ack(conn, "t1", "hermes")["acked_by"] == "hermes"


def test_ack_refusals(conn):
    make_task(conn)
    before = state(conn)
    with pytest.raises(NotFound, match="no live handoff"):
        handoffs.ack(conn, "t1", "claude-code")
    with pytest.raises(NotFound, match="unknown task"):
        handoffs.ack(conn, "ghost", "claude-code")
    with pytest.raises(InvalidInput, match="--agent"):
        handoffs.ack(conn, "t1", "")
    assert state(conn) == before
    hand(conn, to_agent="")
    before = state(conn)
    with pytest.raises(Refused, match="unaddressed"):
        handoffs.ack(conn, "t1", "claude-code")
    with pytest.raises(InvalidInput, match="--recall-digest"):
        handoffs.ack(conn, "t1", "claude-code", recall_digest="nothex")
    assert state(conn) == before


# ---------------------------------------------------------------------------------------
# inbox


def test_inbox_joins_task_state(conn):
    make_task(conn, "t1", title="Retry path", priority="P1")
    make_task(conn, "t2", project="Other", title="Docs", priority="P3")
    make_task(conn, "t3", title="Not for me")
    hand(conn, "t1", commit="abc1234", recall_digest=D1)
    hand(conn, "t2")
    hand(conn, "t3", to_agent="hermes")
    with db.write(conn):
        conn.execute("UPDATE tasks SET lease_owner = 'codex', lease_expires_at = '2026-08-21T10:00:00Z',"
                     " status = 'running' WHERE id = 't1'")
    box = handoffs.inbox(conn, "claude-code")
    assert box["agent"] == "claude-code" and box["count"] == 2 and box["unacked"] == 2
    first, second = box["items"]
    assert first["task_id"] == "t1" and second["task_id"] == "t2"  # P1 before P3
    assert first["title"] == "Retry path" and first["task_status"] == "running" and first["priority"] == "P1"
    assert first["lease_owner"] == "codex" and first["lease_live"] is True
    assert first["from_agent"] == "codex" and first["objective"] == "implement retry path"
    assert first["commit_ref"] == "abc1234" and first["recall_digest"] == D1
    assert first["created_at"] == "2026-08-21T09:00:00Z" and first["acked"] is False and first["acked_at"] is None
    assert first["handoff_id"] == 1 and first["project"] == "Trove" and first["handoff_status"] == "running"
    clock.advance(hours=2)  # the lease lapses
    assert handoffs.inbox(conn, "claude-code")["items"][0]["lease_live"] is False
    assert [i["task_id"] for i in handoffs.inbox(conn, "hermes")["items"]] == ["t3"]


def test_inbox_filters_and_ack_state(conn):
    make_task(conn, "t1")
    make_task(conn, "t2", project="Other")
    hand(conn, "t1")
    hand(conn, "t2")
    handoffs.ack(conn, "t1", "claude-code")
    box = handoffs.inbox(conn, "claude-code")
    acked = {i["task_id"]: (i["acked"], i["acked_at"]) for i in box["items"]}
    assert acked == {"t1": (True, "2026-08-21T09:00:00Z"), "t2": (False, None)} and box["unacked"] == 1
    assert [i["task_id"] for i in handoffs.inbox(conn, "claude-code", unacked_only=True)["items"]] == ["t2"]
    assert [i["task_id"] for i in handoffs.inbox(conn, "claude-code", project="Other")["items"]] == ["t2"]
    assert handoffs.inbox(conn, "claude-code", limit=1)["count"] == 1
    assert handoffs.inbox(conn, "nobody")["items"] == []


def test_inbox_moves_when_handoff_is_readdressed(conn):
    make_task(conn)
    hand(conn)
    assert handoffs.inbox(conn, "claude-code")["count"] == 1
    hand(conn, to_agent="hermes", objective="hermes please")
    assert handoffs.inbox(conn, "claude-code")["count"] == 0
    assert handoffs.inbox(conn, "hermes")["items"][0]["objective"] == "hermes please"


def test_inbox_bad_input(conn):
    for kwargs, flag in (({"agent": ""}, "--agent"), ({"agent": "a b"}, "--agent"),
                         ({"agent": "x", "limit": 0}, "--limit"), ({"agent": "x", "limit": 10**12}, "--limit"),
                         ({"agent": "x", "project": "%"}, "--project")):
        with pytest.raises(InvalidInput, match=flag):
            handoffs.inbox(conn, **kwargs)


def test_inbox_uses_to_agent_index(conn):
    plan = conn.execute(
        "EXPLAIN QUERY PLAN SELECT h.id FROM handoffs h JOIN tasks t ON t.id = h.task_id"
        " WHERE h.to_agent = ? AND h.superseded_by IS NULL", ("x",)).fetchall()
    assert any("idx_handoffs_to_agent" in row[-1] for row in plan)


# ---------------------------------------------------------------------------------------
# search


def seed_search(conn):
    make_task(conn, "t1", title="Pool work")
    make_task(conn, "t2", project="Other", title="Migration work")
    hand(conn, "t1", objective="tune postgres pool size")
    clock.advance(minutes=1)
    hand(conn, "t1", objective="postgres pool now 20 connections", status="waiting_for_review")
    clock.advance(minutes=1)
    hand(conn, "t2", objective="run the schema migration", from_agent="hermes", to_agent="codex")


def test_search_substring_live_by_default(conn):
    seed_search(conn)
    hits = handoffs.search(conn, "postgres")
    assert [h["id"] for h in hits] == [2]
    assert hits[0]["project"] == "Trove" and hits[0]["task_title"] == "Pool work" and "score" not in hits[0]
    everything = handoffs.search(conn, "postgres", include_superseded=True)
    assert [h["id"] for h in everything] == [2, 1]
    assert everything[1]["superseded_by"] == 2
    assert [h["id"] for h in handoffs.search(conn, "POSTGRES POOL")] == [2]  # case-insensitive substring
    assert [h["id"] for h in handoffs.search(conn, "hermes")] == [3]  # from_agent is searched
    assert [h["id"] for h in handoffs.search(conn, "waiting_for")] == [2]  # status is searched


def test_search_filters(conn):
    seed_search(conn)
    assert [h["id"] for h in handoffs.search(conn, "o", from_agent="hermes")] == [3]
    assert [h["id"] for h in handoffs.search(conn, "o", to_agent="claude-code")] == [2]
    assert [h["id"] for h in handoffs.search(conn, "o", project="Other")] == [3]
    assert [h["id"] for h in handoffs.search(conn, "o", task="t1", include_superseded=True)] == [2, 1]
    assert len(handoffs.search(conn, "o", include_superseded=True, limit=1)) == 1
    with pytest.raises(InvalidInput, match="--from-agent"):
        handoffs.search(conn, "o", from_agent="a b")
    with pytest.raises(InvalidInput, match="--limit"):
        handoffs.search(conn, "o", limit=0)


def test_search_ranked(conn):
    seed_search(conn)
    make_task(conn, "t3")
    hand(conn, "t3", objective="pool pool pool postgres pool")
    hits = handoffs.search(conn, "postgres pool", rank=True)
    assert {h["id"] for h in hits} == {2, 4}
    assert all(isinstance(h["score"], float) for h in hits)
    assert hits[0]["score"] <= hits[1]["score"]
    assert hits[0]["id"] == 4  # the denser match ranks first
    assert [h["id"] for h in handoffs.search(conn, "postgres pool", rank=True, project="Trove", task="t1")] == [2]
    assert {h["id"] for h in handoffs.search(conn, "postgres", rank=True, include_superseded=True)} == {1, 2, 4}
    # conjunctive: every token must match
    assert handoffs.search(conn, "postgres migration", rank=True) == []


@pytest.mark.parametrize("query", ['"', '""', "*", "pool*", "NEAR(postgres pool)", "objective:postgres",
                                   "postgres OR migration", "-postgres", "' OR 1=1 --", "%", "_", "%%%", "\\",
                                   "^pool", "(", "AND", "NOT pool"])
def test_search_treats_query_as_text(conn, query):
    seed_search(conn)
    for rank in (False, True):
        hits = handoffs.search(conn, query, rank=rank, include_superseded=True)
        assert len(hits) < 3, (query, rank)  # never "match everything"
    assert handoffs.search(conn, "%", include_superseded=True) == []
    # LIKE wildcards are literal: '_' would otherwise match the space in "pool size"
    assert handoffs.search(conn, "pool_size", include_superseded=True) == []
    assert handoffs.search(conn, "pool%size", include_superseded=True) == []


def test_search_operator_words_are_plain_tokens(conn):
    seed_search(conn)
    assert handoffs.search(conn, "postgres OR migration", rank=True) == []
    make_task(conn, "t9")
    hand(conn, "t9", objective="postgres OR migration literally")
    assert [h["task_id"] for h in handoffs.search(conn, "postgres OR migration", rank=True)] == ["t9"]
    assert [h["task_id"] for h in handoffs.search(conn, "postgres OR migration")] == ["t9"]


def test_search_blank_and_tokenless(conn):
    seed_search(conn)
    assert handoffs.search(conn, "") == [] and handoffs.search(conn, "   ") == []
    assert handoffs.search(conn, "***", rank=True) == []
    with pytest.raises(InvalidInput, match="query"):
        handoffs.search(conn, "x" * (handoffs.MAX_QUERY + 1))
    with pytest.raises(InvalidInput):
        handoffs.search(conn, "a\x00b")


def test_search_rank_falls_back_without_fts(conn, monkeypatch):
    seed_search(conn)
    monkeypatch.setattr(fts, "has", lambda c, table: False)
    hits = handoffs.search(conn, "postgres", rank=True)
    assert [h["id"] for h in hits] == [2] and "score" not in hits[0]
    assert hits[0]["project"] == "Trove" and hits[0]["task_title"] == "Pool work"


def fts_ids(conn, word):
    rows = conn.execute("SELECT rowid FROM handoffs_fts WHERE handoffs_fts MATCH ? ORDER BY rowid",
                        (fts.query(word),))
    return [r[0] for r in rows]


def test_fts_index_in_step(conn):
    if not fts.has(conn, "handoffs_fts"):
        pytest.skip("SQLite without FTS5")
    make_task(conn)
    hand(conn, objective="alpha beta")
    hand(conn, objective="gamma delta")  # supersede: both rows stay indexed
    assert fts_ids(conn, "alpha") == [1] and fts_ids(conn, "gamma") == [2]
    assert fts_ids(conn, "claude") == [1, 2]  # to_agent column indexed
    with db.write(conn):
        conn.execute("UPDATE handoffs SET objective = 'epsilon' WHERE id = 2")
    assert fts_ids(conn, "gamma") == [] and fts_ids(conn, "epsilon") == [2]
    with db.write(conn):
        conn.execute("DELETE FROM handoffs WHERE id = 1")
    assert fts_ids(conn, "alpha") == [] and fts_ids(conn, "claude") == [2]
    conn.execute("INSERT INTO handoffs_fts(handoffs_fts, rank) VALUES ('integrity-check', 1)")
    assert handoffs.search(conn, "alpha", rank=True, include_superseded=True) == []


# ---------------------------------------------------------------------------------------
# handoff-check


def reasons(conn, **kw):
    report = handoffs.check(conn, **kw)
    return {p["task_id"]: p["reasons"] for p in report["problems"]}


def test_check_clean_handoff_is_ok(conn):
    make_task(conn)
    hand(conn)
    report = handoffs.check(conn)
    assert report["ok"] is True and report["checked"] == 1 and report["problems"] == []
    assert report["counts"] == dict.fromkeys(handoffs.CHECK_REASONS, 0) and report["ack_sla_hours"] == 24


def test_check_structural_reasons(conn):
    for tid in ("t1", "t2", "t3", "t4"):
        make_task(conn, tid)
    hand(conn, "t1", to_agent="")
    hand(conn, "t2", objective="   ")
    hand(conn, "t3", evidence=[], next_actions=[])
    hand(conn, "t4", evidence=[], next_actions=["continue"])  # next actions alone suffice
    found = reasons(conn)
    assert found == {"t1": ["unaddressed"], "t2": ["missing_objective"],
                     "t3": ["sparse_no_evidence_or_next_actions"]}
    report = handoffs.check(conn)
    assert report["ok"] is False and report["checked"] == 4
    assert report["counts"]["unaddressed"] == 1 and report["counts"]["missing_objective"] == 1
    problem = [p for p in report["problems"] if p["task_id"] == "t1"][0]
    assert problem["handoff_id"] == 1


def test_check_only_live_handoffs(conn):
    make_task(conn)
    hand(conn, to_agent="", objective="")
    hand(conn)  # the fixed one supersedes the bad one
    assert handoffs.check(conn)["ok"] is True


def test_check_unproven_recall_digest(conn):
    make_task(conn)
    make_task(conn, "t2")
    hand(conn, recall_digest=D1)
    assert reasons(conn) == {"t1": ["unproven_recall_digest"]}
    recall_event(conn, "t2", D1, CORE1)  # a recall of another task proves nothing here
    assert reasons(conn) == {"t1": ["unproven_recall_digest"]}
    recall_event(conn, "t1", D1, CORE1)
    assert reasons(conn) == {}


def test_check_resume_and_core_digest_are_provenance(conn):
    make_task(conn)
    recall_event(conn, "t1", D2, CORE2, action="session_resumed")
    hand(conn, recall_digest=D2)
    assert reasons(conn) == {}
    hand(conn, recall_digest=CORE2, objective="cites the core digest")
    assert reasons(conn) == {}


def test_check_older_than_latest_recall(conn):
    make_task(conn)
    recall_event(conn, "t1", D1, CORE1)
    clock.advance(minutes=1)
    recall_event(conn, "t1", D2, CORE2, agent="hermes")  # context moved on since
    hand(conn, recall_digest=D1)
    assert reasons(conn) == {"t1": ["older_than_latest_recall"]}
    hand(conn, recall_digest=D2, objective="re-recalled")
    assert reasons(conn) == {}


def test_check_later_recall_of_same_core_context_is_not_stale(conn):
    make_task(conn)
    recall_event(conn, "t1", D1, CORE1)
    hand(conn, recall_digest=D1)
    # the recipient recalls after the handoff exists: full digest moved, core did not
    recall_event(conn, "t1", D3, CORE1, agent="claude-code")
    assert reasons(conn) == {}
    recall_event(conn, "t1", D2, CORE2, agent="claude-code")
    assert reasons(conn) == {"t1": ["older_than_latest_recall"]}


def test_check_without_recall_digest_ignores_recall_stream(conn):
    make_task(conn)
    recall_event(conn, "t1", D1, CORE1)
    hand(conn)
    recall_event(conn, "t1", D2, CORE2)
    assert reasons(conn) == {}


def test_check_tolerates_odd_recall_payloads(conn):
    make_task(conn)
    with db.write(conn):
        ledger.append_event(conn, "task", "t1", "context_recalled", ["not", "a", "dict"])
        ledger.append_event(conn, "task", "t1", "context_recalled", {"agent": "x"})
    hand(conn, recall_digest=D1)
    assert reasons(conn) == {"t1": ["unproven_recall_digest"]}


def test_check_terminal_task(conn):
    make_task(conn)
    hand(conn)
    tasks.update(conn, "t1", status="completed")
    assert reasons(conn) == {"t1": ["terminal_task_handoff"]}


def test_check_stale_unacknowledged(conn):
    make_task(conn)
    make_task(conn, "t2")
    make_task(conn, "t3")
    hand(conn, "t1")
    hand(conn, "t2")
    hand(conn, "t3", to_agent="")
    handoffs.ack(conn, "t2", "claude-code")
    clock.advance(hours=24)
    assert reasons(conn) == {"t3": ["unaddressed"]}  # exactly at the SLA is not older than it
    clock.advance(seconds=1)
    assert reasons(conn) == {"t1": ["stale_unacknowledged"], "t3": ["unaddressed"]}
    assert reasons(conn, ack_sla_hours=48) == {"t3": ["unaddressed"]}
    assert "t1" in reasons(conn, ack_sla_hours=0.5)
    assert handoffs.check(conn)["counts"]["stale_unacknowledged"] == 1


def test_check_collects_every_reason_on_one_handoff(conn):
    make_task(conn)
    hand(conn, to_agent="", objective="", evidence=[], next_actions=[], recall_digest=D1)
    tasks.update(conn, "t1", status="cancelled")
    clock.advance(days=3)
    assert reasons(conn) == {"t1": ["unaddressed", "missing_objective", "sparse_no_evidence_or_next_actions",
                                    "unproven_recall_digest", "terminal_task_handoff"]}


def test_check_task_scope_and_bad_input(conn):
    make_task(conn)
    make_task(conn, "t2")
    hand(conn, to_agent="")
    hand(conn, "t2", to_agent="")
    assert set(reasons(conn, task="t2")) == {"t2"}
    assert handoffs.check(conn, task="t2")["checked"] == 1
    with pytest.raises(NotFound):
        handoffs.check(conn, task="ghost")
    with pytest.raises(InvalidInput, match="--task"):
        handoffs.check(conn, task="a b")
    for bad in (-1, float("nan"), float("inf"), 10**6, True, "24"):
        with pytest.raises(InvalidInput, match="--ack-sla-hours"):
            handoffs.check(conn, ack_sla_hours=bad)


def test_check_is_read_only(conn):
    make_task(conn)
    hand(conn, to_agent="", recall_digest=D1)
    before = state(conn)
    changes = conn.total_changes
    handoffs.check(conn)
    assert state(conn) == before and conn.total_changes == changes


# ---------------------------------------------------------------------------------------
# secret guard


def test_secret_is_blocked_and_only_the_refusal_is_recorded(conn):
    make_task(conn)
    hand(conn)
    rows_before, events_before = state(conn)
    with pytest.raises(Refused) as info:
        hand(conn, objective=f"use key {AWS_KEY}")
    assert AWS_KEY not in str(info.value) and "aws_access_key" in str(info.value)
    rows_after, events_after = state(conn)
    assert rows_after == rows_before
    assert events_after[:-1] == events_before and events_after[-1][1] == "secret_blocked"
    assert AWS_KEY not in events_after[-1][2]
    with pytest.raises(Refused):
        hand(conn, evidence=["ok", f"aws {AWS_KEY}"])
    with pytest.raises(Refused):
        hand(conn, risks=["password: hunter2hunter2"])
    assert live_count(conn, "t1") == 1 and handoffs.live(conn, "t1")["id"] == 1


def test_secret_redacted(conn):
    make_task(conn)
    h = hand(conn, objective=f"key {AWS_KEY}", decisions=[f"rotate {AWS_KEY} weekly"], redact=True)
    assert h["objective"] == "key [REDACTED:aws_access_key]"
    assert h["decisions"] == ["rotate [REDACTED:aws_access_key] weekly"]
    assert h["secret_action"] == "redacted" and h["secret_kinds"] == ["aws_access_key"]
    dump = json.dumps([tuple(r) for r in conn.execute("SELECT * FROM handoffs")])
    assert AWS_KEY not in dump
    assert AWS_KEY not in json.dumps(state(conn)[1])
    assert "secret_redacted" in actions(conn)
    # the redacted payload dedupes against itself
    assert hand(conn, objective=f"key {AWS_KEY}", decisions=[f"rotate {AWS_KEY} weekly"],
                redact=True)["deduplicated"] is True


def test_secret_allowed_verbatim_and_audited(conn):
    make_task(conn)
    h = hand(conn, objective=f"key {AWS_KEY}", allow_secret=True)
    assert h["objective"] == f"key {AWS_KEY}" and h["secret_action"] == "allowed"
    assert "secret_allowed" in actions(conn)
    assert AWS_KEY not in json.dumps(state(conn)[1])  # audit payloads carry kinds only
    assert last_event(conn, "handoff_recorded")[2]["secret_action"] == "allowed"


@pytest.mark.parametrize("field", ["from_agent", "to_agent"])
def test_credential_shaped_agents_are_refused_even_with_an_override(conn, field):
    make_task(conn)
    hand(conn)
    rows_before, events_before = state(conn)
    for flags in ({}, {"redact": True}, {"allow_secret": True}):
        with pytest.raises(Refused) as info:
            hand(conn, **{field: AWS_KEY}, **flags)
        assert AWS_KEY not in str(info.value) and field in str(info.value)
    rows_after, events_after = state(conn)
    assert rows_after == rows_before  # the live handoff was not superseded
    assert [e[1] for e in events_after[len(events_before):]] == ["secret_blocked"] * 3
    assert AWS_KEY not in json.dumps(events_after)


def test_secret_flags_are_exclusive(conn):
    make_task(conn)
    before = state(conn)
    with pytest.raises(InvalidInput, match="at most one"):
        hand(conn, redact=True, allow_secret=True)
    assert state(conn) == before


# ---------------------------------------------------------------------------------------
# metrics


def test_metrics(conn):
    from mindos.views import metrics

    make_task(conn)
    make_task(conn, "t2")
    assert handoffs.metrics(conn) == {"handoffs_total": 0, "handoffs_live": 0, "handoffs_acked_total": 0,
                                      "handoffs_with_recall_proof": 0}
    hand(conn, recall_digest=D1)
    handoffs.ack(conn, "t1", "claude-code")
    hand(conn, objective="second")
    hand(conn, "t2", recall_digest=D2)
    snapshot = metrics.collect(conn)
    assert snapshot["handoffs_total"] == 3 and snapshot["handoffs_live"] == 2
    assert snapshot["handoffs_acked_total"] == 1 and snapshot["handoffs_with_recall_proof"] == 2


# ---------------------------------------------------------------------------------------
# CLI


def test_cli_handoff_round_trip(conn, cli, cli_json):
    make_task(conn)
    h = cli_json("autopilot", "handoff", "t1", "--from-agent", "codex", "--to-agent", "claude-code",
                 "--status", "running", "--objective", "implement retry path", "--evidence", "tests pass",
                 "--evidence", "lint clean", "--constraint", "no new deps", "--decision", "backoff",
                 "--file", "src/retry.py", "--commit", "abc1234", "--next-action", "open PR",
                 "--risk", "flaky test", "--recall-digest", D1)
    assert h["evidence"] == ["tests pass", "lint clean"] and h["files"] == ["src/retry.py"]
    assert h["constraints"] == ["no new deps"] and h["risks"] == ["flaky test"] and h["recall_digest"] == D1
    assert cli_json("autopilot", "handoff-current", "t1")["id"] == h["id"]
    assert [x["id"] for x in cli_json("autopilot", "handoffs", "t1", "--all")] == [h["id"]]
    assert cli_json("autopilot", "handoff-history", str(h["id"]))["length"] == 1
    assert cli_json("autopilot", "ack", "t1", "--agent", "claude-code")["already_acked"] is False
    assert cli_json("autopilot", "ack", "t1", "--agent", "claude-code")["already_acked"] is True
    box = cli_json("autopilot", "handoff-inbox", "--agent", "claude-code", "--unacked-only")
    assert box["count"] == 0
    assert cli_json("autopilot", "handoff-inbox", "--agent", "claude-code", "--limit", "5")["count"] == 1
    assert [x["id"] for x in cli_json("autopilot", "search-handoffs", "retry", "--rank", "--project", "Trove")] \
        == [h["id"]]
    assert cli_json("autopilot", "show", "t1")["handoff"]["acked_by"] == "claude-code"
    assert cli_json("autopilot", "metrics")["handoffs_acked_total"] == 1


def test_cli_handoff_check_exit_codes(conn, cli):
    make_task(conn)
    hand(conn)
    rc, out, err = cli("ops", "handoff-check")
    assert (rc, err) == (0, "") and json.loads(out)["ok"] is True
    clock.advance(hours=30)
    rc, out, err = cli("ops", "handoff-check", "--task", "t1", "--ack-sla-hours", "24")
    assert (rc, err) == (1, "")
    assert json.loads(out)["problems"][0]["reasons"] == ["stale_unacknowledged"]
    assert cli("ops", "handoff-check", "--ack-sla-hours", "48")[0] == 0
    rc, out, err = cli("ops", "handoff-check", "--ack-sla-hours", "-3")
    assert rc == 2 and out == "" and "--ack-sla-hours" in err
    rc, out, err = cli("ops", "handoff-check", "--ack-sla-hours", "soon")
    assert rc == 2 and out == ""
    rc, out, err = cli("ops", "handoff-check", "--task", "ghost")
    assert rc == 1 and out == "" and "unknown task 'ghost'" in err


@pytest.mark.parametrize("argv,code,phrase", [
    (["handoff", "ghost", "--from-agent", "codex"], 1, "unknown task 'ghost'"),
    (["handoff", "t1"], 2, "--from-agent"),
    (["handoff", "t1", "--from-agent", "codex", "--recall-digest", "xyz"], 2, "--recall-digest"),
    (["handoff", "t1", "--from-agent", "codex", "--objective", "x" * 5000], 2, "--objective"),
    (["handoff", "t1", "--from-agent", "codex", "--redact", "--allow-secret"], 2, "at most one"),
    (["handoff", "t1", "--from-agent", "codex", "--objective", f"k {AWS_KEY}"], 1, "secret guard"),
    (["handoff-current", "t1"], 1, "no live handoff"),
    (["handoff-history", "abc"], 2, "invalid handoff id"),
    (["handoff-history", "77"], 1, "unknown handoff 77"),
    (["ack", "t1", "--agent", "claude-code"], 1, "no live handoff"),
    (["ack", "t1"], 2, "--agent"),
    (["handoff-inbox", "--agent", "bad agent"], 2, "--agent"),
    (["handoff-inbox", "--agent", "x", "--limit", "-1"], 2, "--limit"),
    (["search-handoffs", "x", "--limit", "0"], 2, "--limit"),
    (["handoffs", "ghost"], 1, "unknown task"),
])
def test_cli_errors(conn, cli, argv, code, phrase):
    make_task(conn)
    before = state(conn)
    rc, out, err = cli("autopilot", *argv)
    assert rc == code and out == "" and phrase in err
    assert err.count("\n") == 1 and "Traceback" not in err and AWS_KEY not in err
    rows, events = state(conn)
    assert rows == before[0]
    assert [e[1] for e in events[len(before[1]):]] in ([], ["secret_blocked"])


def test_cli_foreign_ack(conn, cli):
    make_task(conn)
    hand(conn)
    before = state(conn)
    rc, out, err = cli("autopilot", "ack", "t1", "--agent", "hermes")
    assert rc == 1 and out == "" and "addressed to 'claude-code'" in err
    assert state(conn) == before


def test_cli_search_injection_never_raises(conn, cli):
    make_task(conn)
    hand(conn)
    for query in ['"', "NEAR(", "*", "%", "a:b", "')--"]:
        for extra in ([], ["--rank"]):
            rc, out, err = cli("autopilot", "search-handoffs", query, *extra)
            assert (rc, err) == (0, "") and json.loads(out) == []


def test_cli_help_has_examples(cli):
    for door, name in [("autopilot", n) for n in ("handoff", "handoff-current", "handoffs", "handoff-history",
                                                   "ack", "handoff-inbox", "search-handoffs")] + [
                       ("ops", "handoff-check")]:
        rc, out, err = cli(door, name, "--help")
        assert rc == 0 and "Example:" in out, name


def test_subprocess_front_doors(home):
    create = script("autopilot.py", "create", "--project", "Trove", "--title", "Sub", "--id", "s1", home=home)
    assert create.returncode == 0, create.stderr
    env = {"MINDOS_NOW": "2026-08-21T09:00:00Z"}
    rec = script("autopilot.py", "handoff", "s1", "--from-agent", "codex", "--to-agent", "claude-code",
                 "--objective", "resume me", "--next-action", "go", home=home, env=env)
    assert rec.returncode == 0 and rec.stderr == ""
    cur = script("autopilot.py", "handoff-current", "s1", home=home)
    assert cur.returncode == 0 and json.loads(cur.stdout)["objective"] == "resume me"
    later = {"MINDOS_NOW": "2026-08-23T09:00:00Z"}
    chk = script("ops.py", "handoff-check", home=home, env=later)
    assert chk.returncode == 1 and json.loads(chk.stdout)["problems"][0]["reasons"] == ["stale_unacknowledged"]


def test_concurrent_handoffs_leave_one_live(home):
    assert script("autopilot.py", "create", "--project", "Trove", "--title", "Race", "--id", "r1",
                  home=home).returncode == 0
    env = dict(__import__("os").environ, HERMES_AUTOPILOT_HOME=str(home))
    env.pop("MINDOS_NOW", None)
    procs = [
        subprocess.Popen([sys.executable, f"{ROOT}/autopilot.py", "handoff", "r1", "--from-agent", f"agent{i}",
                          "--to-agent", "claude-code", "--objective", f"attempt {i}", "--next-action", "go"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for i in range(4)
    ]
    results = [p.communicate(timeout=60) + (p.returncode,) for p in procs]
    assert all(rc == 0 and err == "" for _, err, rc in results), results
    conn = db.connect(str(home))
    try:
        assert live_count(conn, "r1") == 1
        assert conn.execute("SELECT count(*) FROM handoffs").fetchone()[0] == 4
        chain = handoffs.history(conn, 1)["chain"]
        assert len(chain) == 4 and chain[-1]["live"]
        assert [h["supersedes"] for h in chain] == [None, 1, 2, 3]
    finally:
        conn.close()
