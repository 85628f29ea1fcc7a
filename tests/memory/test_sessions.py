"""Session ingestion: scan, ingest (dry run, incremental, atomic), search, prune, the pack section."""

import hashlib
import json
import os

import pytest

import sessionkit
from conftest import make_task, last_event, db_state
from mindos.context import builder, recall
from mindos.core import clock
from mindos.errors import InvalidInput, NotFound, Refused
from mindos.memory import sessions, transcripts
from mindos.views import metrics

AWS = "AKIA" + "Z7QW3RTY6UIO2PAS"


@pytest.fixture
def store(tmp_path):
    root = tmp_path / "store"
    sessionkit.write(str(root / "-home-me-proj-a" / "s1.jsonl"), sessionkit.claude_session())
    sessionkit.write(str(root / "codex" / "2026" / "08" / "20" / "rollout-1.jsonl"), sessionkit.codex_rollout())
    sessionkit.write(str(root / "misc" / "generic.jsonl"),
                     sessionkit.generic_lines([("user", "deploy the cookie patch"), ("assistant", "deployed")]))
    sessionkit.write(str(root / "misc" / "notes.txt"), "not a transcript")
    return root


def _ingest(conn, root, **kw):
    kw.setdefault("source", "claude-code")
    source = kw.pop("source")
    return sessions.ingest(conn, source, str(root), **kw)


# --- formats ---------------------------------------------------------------------------


def test_claude_code_records_tools_and_bookkeeping_are_counted_not_stored():
    parsed = transcripts.parse(sessionkit.claude_session().encode())
    assert parsed["format"] == "claude-code"
    assert [m[0] for m in parsed["messages"]] == ["user", "assistant", "assistant"]
    assert parsed["messages"][1][1].startswith("The redirect drops")  # thinking and tool_use left out
    assert parsed["messages"][1][2] == "2026-08-20T10:00:05Z"
    counts = parsed["counts"]
    assert counts["tool_calls_skipped"] == 1 and counts["tool_results_skipped"] == 1
    assert counts["other_records_skipped"] == 4 and counts["unrecognized_records"] == 0
    assert parsed["session_id"] == "5f1c2a9e-0000-4000-8000-000000000001"


def test_codex_rollout_messages_only_boilerplate_echoes_and_developer_skipped():
    parsed = transcripts.parse(sessionkit.codex_rollout().encode())
    assert parsed["format"] == "codex"
    assert parsed["messages"] == [("user", "Why does the login redirect loop?", "2026-08-20T11:00:00Z"),
                                  ("assistant", "The redirect loops because the cookie domain is wrong.",
                                   "2026-08-20T11:00:30Z")]
    assert parsed["counts"]["unknown_roles_skipped"] == 1  # developer
    assert parsed["counts"]["tool_calls_skipped"] == 1 and parsed["counts"]["tool_results_skipped"] == 1
    assert parsed["session_id"] == "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"


def test_generic_malformed_and_unknown_lines_are_counted():
    text = sessionkit.generic_lines([("user", "hello"), ("tool", "out"), ("system", "sys")]) + "{not json\n[1,2]\n\n{\"x\":1}\n"
    parsed = transcripts.parse(text.encode())
    assert [m[:2] for m in parsed["messages"]] == [("user", "hello")]
    c = parsed["counts"]
    assert (c["malformed_lines"], c["unknown_roles_skipped"], c["tool_results_skipped"], c["unrecognized_records"],
            c["blank_lines"]) == (2, 1, 1, 1, 1)


# --- scan and dry run ------------------------------------------------------------------


def test_scan_is_redacted_counts_only_and_mutates_nothing(store):
    sessionkit.write(str(store / "misc" / "leak.jsonl"),
                     sessionkit.generic_lines([("user", f"my key is {AWS} keep it"), ("assistant", "ok")]))
    before = sessionkit.tree_hashes(str(store))
    report = sessions.scan(str(store))
    assert sessionkit.tree_hashes(str(store)) == before
    assert [f["path"] for f in report["files"]] == sorted(f["path"] for f in report["files"])
    assert len(report["files"]) == 4  # .txt is not a transcript
    assert report["secret_kinds"] == ["aws_access_key"]
    assert AWS not in json.dumps(report) and "redirect" not in json.dumps(report)
    assert report["totals"]["messages"] == 3 + 2 + 2 + 2


def test_dry_run_ingest_writes_nothing(conn, store):
    before = db_state(conn)
    result = _ingest(conn, store)
    assert result["applied"] is False and result["new"] == 3 and result["messages_written"] == 0
    assert db_state(conn) == before


def test_symlinks_are_never_followed(conn, store, tmp_path):
    secret_dir = tmp_path / "private"
    sessionkit.write(str(secret_dir / "x.jsonl"), sessionkit.generic_lines([("user", "private context")]))
    os.symlink(str(secret_dir), str(store / "linked-dir"))
    os.symlink(str(secret_dir / "x.jsonl"), str(store / "misc" / "linked.jsonl"))
    result = _ingest(conn, store, apply=True)
    assert result["skipped"]["symlinks"] == 2
    assert sessions.search(conn, "private context") == []
    with pytest.raises(Refused, match="symlink"):
        sessions.scan(str(store / "linked-dir"))


def test_missing_root_and_bad_labels(conn, tmp_path):
    with pytest.raises(NotFound):
        _ingest(conn, tmp_path / "nope")
    with pytest.raises(InvalidInput):
        sessions.ingest(conn, "bad source!", str(tmp_path))


# --- apply, incremental, atomic ---------------------------------------------------------


def test_apply_indexes_with_provenance_then_unchanged_costs_nothing(conn, store):
    result = _ingest(conn, store, project="Auth", profile="hermes", apply=True)
    assert result["applied"] and result["new"] == 3 and result["messages_written"] == 7
    event = last_event(conn, "session_ingested")
    assert event["new"] == 3 and event["messages"] == 7
    hits = sessions.search(conn, "redirect cookie", role="assistant", rank=True)
    assert hits and hits[0]["source"] == "claude-code" and hits[0]["project"] == "Auth"
    assert hits[0]["profile"] == "hermes" and hits[0]["session_id"] and "seq" in hits[0] and "score" in hits[0]
    events = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    again = _ingest(conn, store, project="Auth", profile="hermes", apply=True)
    assert again["unchanged"] == 3 and again["new"] == again["changed"] == 0 and again["messages_written"] == 0
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == events  # nothing to audit
    assert metrics.collect(conn)["sessions_indexed"] == 3
    assert metrics.collect(conn)["session_messages_indexed"] == 7


def test_changed_file_is_reindexed_atomically(conn, store):
    _ingest(conn, store, apply=True)
    path = store / "misc" / "generic.jsonl"
    sessionkit.write(str(path), sessionkit.generic_lines([("user", "rollback the cookie patch")]))
    result = _ingest(conn, store, apply=True)
    assert result["changed"] == 1 and result["unchanged"] == 2
    assert sessions.search(conn, "deployed") == []
    assert [h["content"] for h in sessions.search(conn, "rollback")] == ["rollback the cookie patch"]
    from mindos.store import fts
    assert fts.drift(conn, "session_messages_fts")["ok"]


def test_changed_file_that_now_yields_no_message_drops_its_old_rows(conn, store, monkeypatch):
    _ingest(conn, store, apply=True)
    path = store / "misc" / "generic.jsonl"
    sessionkit.write(str(path), '{"foo": 1}\nnot json\n')  # same file, nothing recognizable left
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    before = db_state(conn)
    real = sessions.ledger.append_event

    def fail(*args, **kw):  # a failure inside the run's transaction changes nothing
        raise RuntimeError("disk full")

    monkeypatch.setattr(sessions.ledger, "append_event", fail)
    with pytest.raises(RuntimeError):
        _ingest(conn, store, apply=True)
    assert db_state(conn) == before and [h["content"] for h in sessions.search(conn, "deployed")] == ["deployed"]
    monkeypatch.setattr(sessions.ledger, "append_event", real)
    plan = _ingest(conn, store)
    emptied = [f for f in plan["files"] if f["path"].endswith("generic.jsonl")][0]
    assert emptied["status"] == "changed" and emptied["messages"] == 0 and emptied["supported"] is False
    result = _ingest(conn, store, apply=True)
    assert result["changed"] == 1 and result["unchanged"] == 2 and result["messages_written"] == 0
    assert sessions.search(conn, "deployed") == [] and sessions.search(conn, "cookie patch") == []
    row = conn.execute("SELECT id, file_hash, messages, first_at, last_at FROM session_files"
                       " WHERE path LIKE '%generic.jsonl'").fetchone()
    assert (row[1], row[2], row[3], row[4]) == (digest, 0, None, None)
    assert conn.execute("SELECT count(*) FROM session_messages WHERE file_id = ?", (row[0],)).fetchone()[0] == 0
    assert last_event(conn, "session_ingested")["changed"] == 1
    from mindos.store import fts
    assert fts.drift(conn, "session_messages_fts")["ok"]
    again = _ingest(conn, store, apply=True)  # recorded with its new digest: now one hash read
    assert again["unchanged"] == 3 and again["changed"] == 0


def test_unsupported_files_are_reported_never_stored(conn, store):
    sessionkit.write(str(store / "misc" / "odd.jsonl"), '{"foo": 1}\nnot json\n')
    result = _ingest(conn, store, apply=True)
    odd = [f for f in result["files"] if f["path"].endswith("odd.jsonl")][0]
    assert odd["status"] == "unsupported" and odd["counts"]["malformed_lines"] == 1
    assert conn.execute("SELECT count(*) FROM session_files WHERE path LIKE '%odd.jsonl'").fetchone()[0] == 0


def test_secret_guard_refuses_redacts_or_allows(conn, store):
    sessionkit.write(str(store / "misc" / "leak.jsonl"),
                     sessionkit.generic_lines([("user", f"my key is {AWS} keep it")]))
    before = [line for line in db_state(conn)[0] if "audit_events" not in line]
    with pytest.raises(Refused, match="secret guard"):
        _ingest(conn, store, apply=True)
    assert [line for line in db_state(conn)[0] if "audit_events" not in line] == before
    assert last_event(conn, "secret_blocked")["kinds"] == ["aws_access_key"]
    result = _ingest(conn, store, apply=True, redact=True)
    assert result["secret_action"] == "redacted"
    stored = sessions.search(conn, "keep it")[0]["content"]
    assert AWS not in stored and "[REDACTED:aws_access_key]" in stored
    # unchanged files settled at their original ingest never block a later run
    sessionkit.write(str(store / "misc" / "new.jsonl"), sessionkit.generic_lines([("user", "fresh clean line")]))
    assert _ingest(conn, store, apply=True)["new"] == 1


def test_allow_secret_is_audited(conn, store):
    sessionkit.write(str(store / "misc" / "leak.jsonl"), sessionkit.generic_lines([("user", f"key {AWS}")]))
    result = _ingest(conn, store, apply=True, allow_secret=True)
    assert result["secret_action"] == "allowed" and last_event(conn, "secret_allowed")["kinds"] == ["aws_access_key"]


# --- search and prune -------------------------------------------------------------------


def test_search_filters(conn, store):
    _ingest(conn, store, apply=True, project="Auth")
    _ingest(conn, store / "codex", source="codex", apply=True, project="Web")
    assert {h["source"] for h in sessions.search(conn, "redirect")} == {"claude-code", "codex"}
    assert {h["source"] for h in sessions.search(conn, "redirect", source="codex")} == {"codex"}
    assert {h["project"] for h in sessions.search(conn, "redirect", project="Auth")} == {"Auth"}
    assert all(h["role"] == "user" for h in sessions.search(conn, "redirect", role="user"))
    assert sessions.search(conn, "!!!") == []
    with pytest.raises(InvalidInput):
        sessions.search(conn, "x", role="tool")


def test_prune_is_bounded_planned_and_audited_per_source(conn, store):
    _ingest(conn, store, apply=True)
    _ingest(conn, store / "codex", source="codex", apply=True)
    with pytest.raises(InvalidInput):
        sessions.prune(conn, "")
    with pytest.raises(InvalidInput):
        sessions.prune(conn, "forever")
    # messages are dated 2026-08-20; the clock is 2026-08-21T09:00Z
    before = db_state(conn)
    plan = sessions.prune(conn, "12h")
    assert plan["applied"] is False and plan["sessions"] == 4
    assert plan["by_source"]["codex"]["sessions"] == 1 and plan["by_source"]["claude-code"]["sessions"] == 3
    assert db_state(conn) == before
    assert sessions.prune(conn, "2d", apply=True)["sessions"] == 0
    assert last_event(conn, "session_pruned") is None  # zero-candidate apply audits nothing
    done = sessions.prune(conn, "12h", source="codex", apply=True)
    assert done["sessions"] == 1 and last_event(conn, "session_pruned")["sessions"] == 1
    assert {h["source"] for h in sessions.search(conn, "redirect")} == {"claude-code"}
    assert metrics.collect(conn)["sessions_pruned_total"] == 1
    from mindos.store import fts
    assert fts.drift(conn, "session_messages_fts")["ok"]
    # rebuildable: re-ingesting restores the pruned session
    assert _ingest(conn, store / "codex", source="codex", apply=True)["new"] == 1


# --- context pack -----------------------------------------------------------------------


def test_related_sessions_section_is_flag_gated_and_deterministic(conn, store):
    make_task(conn, "t1", title="Fix the redirect cookie bug")
    without = json.dumps(recall.pack(conn, "t1", recall.make_params()), sort_keys=True)
    _ingest(conn, store, apply=True)
    assert json.dumps(recall.pack(conn, "t1", recall.make_params()), sort_keys=True) == without  # byte-identical
    packed = recall.pack(conn, "t1", recall.make_params(related_sessions=3))
    assert packed["sections"][-1] == "related_sessions"
    items = builder.decode(packed)["related_sessions"]  # printed as a table
    assert 0 < len(items) <= 3 and packed["related_sessions_packed"] == len(items)
    assert [i["at"] for i in items] == sorted((i["at"] for i in items), reverse=True)
    assert {"source", "session_id", "seq", "role", "at", "snippet"} <= set(items[0])  # compact: no empty profile
    assert recall.pack(conn, "t1", recall.make_params(related_sessions=3)) == packed
    # after dep context, before facts (the spec's order)
    both = recall.pack(conn, "t1", recall.make_params(related_sessions=2, related_facts=2, dep_context=2))
    assert both["sections"][-3:] == ["dep_context", "related_sessions", "related_facts"]
    with pytest.raises(InvalidInput):
        recall.make_params(related_sessions=-1)
    sealed = recall.recall(conn, "t1", agent="codex", params=recall.make_params(related_sessions=3))
    assert recall.verify(conn, "t1", sealed["digest"], agent="codex",
                         params=recall.make_params(related_sessions=3))["fresh"] is True


def test_related_sessions_without_fts5_match_any_word_by_substring(plain_conn, store):
    make_task(plain_conn, "t1", title="Fix the redirect cookie bug")
    _ingest(plain_conn, store, apply=True)
    packed = recall.pack(plain_conn, "t1", recall.make_params(related_sessions=3))
    items = builder.decode(packed)["related_sessions"]  # printed as a table
    assert 0 < len(items) <= 3 and packed["related_sessions_matched"] == len(items)
    assert all("redirect" in i["snippet"].lower() or "cookie" in i["snippet"].lower() for i in items)
    assert [i["at"] for i in items] == sorted((i["at"] for i in items), reverse=True)
    assert {"source", "session_id", "seq", "role", "at", "snippet"} <= set(items[0])  # compact: no empty profile
    make_task(plain_conn, "t2", title="...")
    assert recall.pack(plain_conn, "t2", recall.make_params(related_sessions=3)).get("related_sessions_matched", 0) == 0


# --- CLI --------------------------------------------------------------------------------


def test_cli_round_trip(cli, cli_json, store):
    report = cli_json("autopilot", "session-scan", "--root", str(store))
    assert report["totals"]["files"] == 3
    dry = cli_json("autopilot", "session-ingest", "--source", "claude-code", "--root", str(store))
    assert dry["applied"] is False
    done = cli_json("autopilot", "session-ingest", "--source", "claude-code", "--root", str(store), "--apply",
                    "--project", "Auth")
    assert done["messages_written"] == 7
    hits = cli_json("autopilot", "search-sessions", "redirect cookie", "--role", "assistant", "--rank")
    assert hits and hits[0]["role"] == "assistant"
    rc, out, err = cli("autopilot", "sessions-prune")
    assert rc == 2 and out == "" and "--older-than" in err
    rc, out, err = cli("autopilot", "sessions-prune", "--older-than", "soon")
    assert rc == 2 and out == "" and "Traceback" not in err and len(err.strip().splitlines()) == 1
    rc, out, err = cli("autopilot", "session-scan", "--root", str(store / "nope"))
    assert rc == 1 and out == "" and len(err.strip().splitlines()) == 1


def test_doctor_sweeps_the_session_index(conn, store):
    from mindos.recovery import doctor
    _ingest(conn, store, apply=True)
    assert doctor.run(conn.home)["ok"]
    with __import__("mindos.store.db", fromlist=["write"]).write(conn):
        conn.execute("INSERT INTO session_messages_fts(session_messages_fts, rowid, content) VALUES ('delete', 1, ?)",
                     (conn.execute("SELECT content FROM session_messages WHERE id = 1").fetchone()[0],))
    report = doctor.run(conn.home)
    assert any(p["kind"] == "fts_index_drift" and p["index"] == "session_messages_fts" for p in report["problems"])


def test_context_flag_through_the_cli(cli_json, conn, store):
    make_task(conn, "t1", title="Fix the redirect cookie bug")
    _ingest(conn, store, apply=True)
    packed = cli_json("autopilot", "context", "t1", "--related-sessions", "2")
    assert packed["related_sessions_packed"] >= 1 and "related_sessions" in packed["sections"]
    assert "related_sessions" not in cli_json("autopilot", "context", "t1")
