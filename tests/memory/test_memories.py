"""Semantic memory: retain, list, forget, import (mindos/memory/memories.py)."""

import json
import os

import pytest

from mindos.core import clock
from mindos.store import ledger as audit
from mindos.errors import Conflict, InvalidInput, NotFound, Refused
from mindos.memory import memories


def _state(conn):
    return (conn.execute("SELECT count(*) FROM memories").fetchone()[0],
            conn.execute("SELECT count(*) FROM audit_events").fetchone()[0])


def test_retain_is_content_addressed_per_project_and_audited(conn):
    first = memories.retain(conn, "  auth sessions expire after 30 days ", kind="decision", project="Auth",
                            tags=["auth"])
    assert first["id"] == memories.memory_id("Auth", "auth sessions expire after 30 days")
    assert (first["content"], first["kind"], first["engine"], first["deduplicated"], first["live"]) == \
        ("auth sessions expire after 30 days", "decision", "memory-fts-v1", False, True)
    before = _state(conn)
    again = memories.retain(conn, "auth sessions expire after 30 days", project="Auth")
    assert again["id"] == first["id"] and again["deduplicated"] is True
    assert _state(conn) == before  # a no-op: no row, no event
    other = memories.retain(conn, "auth sessions expire after 30 days", project="Billing")
    assert other["id"] != first["id"]
    events = audit.events(conn, action="memory_retained")
    assert [e["entity_id"] for e in events["events"]] == [other["id"], first["id"]]


def test_secret_guard_blocks_redacts_or_allows(conn):
    before = _state(conn)
    with pytest.raises(Refused, match="secret guard"):
        memories.retain(conn, "deploy key password: hunter22")
    count, events = _state(conn)
    assert count == before[0] and events == before[1] + 1  # only the audited refusal
    redacted = memories.retain(conn, "deploy key password: hunter22", redact=True)
    assert "hunter22" not in redacted["content"] and redacted["secret_action"] == "redacted"
    allowed = memories.retain(conn, "other password: hunter33", allow_secret=True)
    assert allowed["secret_action"] == "allowed"


@pytest.mark.parametrize("kwargs, message", [
    ({"text": ""}, "--text"),
    ({"text": "   "}, "--text"),
    ({"text": "x" * (memories.MAX_TEXT + 1)}, "--text"),
    ({"text": "ok", "project": "bad project"}, "--project"),
    ({"text": "ok", "kind": "Bad Kind"}, "--kind"),
    ({"text": "ok", "tags": ["NOT A TAG"]}, "--tag"),
    ({"text": "a\x00b"}, "--text"),
])
def test_bad_retain_input_is_refused_and_changes_nothing(conn, kwargs, message):
    before = _state(conn)
    text = kwargs.pop("text")
    with pytest.raises(InvalidInput, match=message):
        memories.retain(conn, text, **kwargs)
    assert _state(conn) == before


def test_forget_retracts_never_deletes_and_links_the_successor(conn):
    old = memories.retain(conn, "sessions expire after 30 days", project="Auth")
    new = memories.retain(conn, "sessions expire after 7 days", project="Auth")
    clock.advance(hours=1)
    gone = memories.forget(conn, old["id"], superseded_by=new["id"])
    assert gone["live"] is False and gone["superseded_by"] == new["id"]
    assert gone["retracted_at"] == clock.now_iso()
    assert [m["id"] for m in memories.list_memories(conn, project="Auth")] == [new["id"]]
    assert {m["id"] for m in memories.list_memories(conn, project="Auth", include_all=True)} == {old["id"], new["id"]}
    with pytest.raises(Conflict, match="already retracted"):
        memories.forget(conn, old["id"])
    assert audit.events(conn, action="memory_forgotten")["events"][0]["payload"]["superseded_by"] == new["id"]


@pytest.mark.parametrize("mid, superseded_by, error", [
    ("mem-0000000000000000", None, NotFound),
    ("nope", None, InvalidInput),
    ("mem-' OR 1=1 --", None, InvalidInput),
    ("X", "mem-0000000000000000", NotFound),
    ("X", "X", InvalidInput),
])
def test_bad_forget_is_refused_and_changes_nothing(conn, mid, superseded_by, error):
    live = memories.retain(conn, "a live memory")
    mid = live["id"] if mid == "X" else mid
    superseded_by = live["id"] if superseded_by == "X" else superseded_by
    before = _state(conn)
    with pytest.raises(error):
        memories.forget(conn, mid, superseded_by=superseded_by)
    assert _state(conn) == before


def test_list_filters_by_project_and_literal_query(conn):
    memories.retain(conn, "rate limit is 60 per minute", project="Api")
    memories.retain(conn, "100% of requests are traced", project="Api")
    memories.retain(conn, "rate limit is global")
    assert len(memories.list_memories(conn, project="Api")) == 2
    assert [m["content"] for m in memories.list_memories(conn, query="100%")] == ["100% of requests are traced"]
    assert memories.list_memories(conn, query="_") == []
    assert memories.list_memories(conn, query="' OR 1=1 --") == []
    with pytest.raises(InvalidInput):
        memories.list_memories(conn, query="")


def _bank(tmp_path, lines):
    path = tmp_path / "bank.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.chmod(path, 0o444)
    return path


def test_import_is_a_dry_run_by_default_and_a_rerun_is_a_no_op(conn, tmp_path):
    path = _bank(tmp_path, [
        json.dumps({"text": "cache ttl is five minutes", "created_at": "2025-01-02T03:04:05Z", "project": "Api"}),
        json.dumps({"content": "deploys happen on tuesdays", "created_at": "2025-02-01T00:00:00+02:00",
                    "tags": ["ops"]}),
        "{torn line",
        json.dumps(["not", "an", "object"]),
        json.dumps({"text": "no timestamp"}),
        json.dumps({"text": "api_key=sk12345678901234567890abcdEFGH", "created_at": "2025-01-01T00:00:00Z"}),
        "",
    ])
    source_before = path.read_bytes()
    before = _state(conn)
    dry = memories.import_bank(conn, str(path))
    assert (dry["applied"], dry["lines"], dry["malformed"], dry["secret_blocked"], dry["would_import"],
            dry["already_present"]) == (False, 6, 3, 1, 2, 0)
    assert _state(conn) == before
    applied = memories.import_bank(conn, str(path), apply=True)
    assert applied["imported"] == 2
    rows = {m["content"]: m for m in memories.list_memories(conn)}
    assert rows["cache ttl is five minutes"]["created_at"] == "2025-01-02T03:04:05Z"
    assert rows["deploys happen on tuesdays"]["created_at"] == "2025-01-31T22:00:00Z"
    assert rows["cache ttl is five minutes"]["project"] == "Api"
    after = _state(conn)
    rerun = memories.import_bank(conn, str(path), apply=True)
    assert (rerun["imported"], rerun["already_present"]) == (0, 2)
    assert _state(conn) == after
    assert path.read_bytes() == source_before
    assert audit.verify_chain(conn)["ok"]


def test_import_of_a_missing_file_is_refused(conn, tmp_path):
    from mindos.errors import MindosError

    with pytest.raises(MindosError, match="cannot read bank"):
        memories.import_bank(conn, str(tmp_path / "missing.jsonl"))


def test_cli_round_trip_and_errors(cli, cli_json):
    made = cli_json("autopilot", "memory-retain", "--text", "auth sessions expire after 30 days", "--project",
                    "Auth", "--tag", "auth", "--kind", "decision")
    listed = cli_json("autopilot", "memory-list", "--project", "Auth")
    assert [m["id"] for m in listed] == [made["id"]]
    forgotten = cli_json("autopilot", "memory-forget", made["id"])
    assert forgotten["live"] is False
    rc, out, err = cli("autopilot", "memory-forget", "mem-zz")
    assert (rc, out) == (2, "") and err.count("\n") == 1 and "memory id" in err
    rc, out, err = cli("autopilot", "memory-retain", "--text", "")
    assert (rc, out) == (2, "") and "--text" in err
    rc, out, err = cli("autopilot", "memory-forget", made["id"])
    assert (rc, out) == (1, "") and "already retracted" in err


def test_the_memory_and_fact_indexes_are_registered_and_stay_in_step(conn):
    from mindos.memory import facts
    from mindos.store import fts

    kept = memories.retain(conn, "indexed memory")
    gone = memories.retain(conn, "retracted memory")
    memories.forget(conn, gone["id"], superseded_by=kept["id"])
    facts.assert_fact(conn, subject="a", predicate="b", obj="c", source="codex")
    assert {"memories_fts", "facts_fts"} <= set(fts.INDEXES)
    if fts.has(conn, "memories_fts"):
        assert fts.drift(conn, "memories_fts")["ok"] and fts.drift(conn, "facts_fts")["ok"]


def test_import_counts_binary_huge_and_bad_field_lines_as_malformed(conn, tmp_path):
    path = tmp_path / "bank.jsonl"
    good = json.dumps({"text": "kept", "created_at": "2025-01-01T00:00:00Z"}).encode()
    lines = [b"\xff\xfe\x00garbage", json.dumps({"text": "x" * 70000, "created_at": "2025-01-01"}).encode(),
             json.dumps({"text": "bad project", "project": "no spaces allowed", "created_at": "2025-01-01"}).encode(),
             json.dumps({"text": "bad time", "created_at": "yesterday"}).encode(),
             json.dumps({"text": "", "created_at": "2025-01-01"}).encode(), good]
    path.write_bytes(b"\n".join(lines) + b"\n")
    before = _state(conn)
    report = memories.import_bank(conn, str(path))
    assert (report["lines"], report["malformed"], report["would_import"]) == (6, 5, 1)
    assert _state(conn) == before
    with pytest.raises(Exception, match="cannot read bank"):
        memories.import_bank(conn, str(tmp_path))  # a directory
