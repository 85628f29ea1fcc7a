"""Shared memory: notes, dedup, near-duplicate guard, pinning, supersession, TTL, history, search."""

import json

import pytest

from conftest import script
from mindos.core import clock
from mindos.memory import note_live, notes
from mindos.store import db, fts
from mindos.work import tasks
from mindos.errors import Conflict, InvalidInput, NotFound, Refused

AWS = "AKIAQ3EGRT7XMPL2WQ9Z"


@pytest.fixture
def task(conn):
    tasks.create(conn, project="Trove", title="rate limits", task_id="t1")
    return "t1"


def _state(conn):
    """Everything a refusal must leave unchanged (rows, FTS, ledger)."""
    rows = conn.execute("SELECT * FROM notes ORDER BY id").fetchall()
    events = conn.execute("SELECT count(*), max(hash) FROM audit_events").fetchone()
    return [tuple(r) for r in rows], tuple(events)


def _actions(conn, action):
    return [json.loads(r[0]) for r in conn.execute(
        "SELECT payload_json FROM audit_events WHERE action = ? ORDER BY id", (action,))]


# ---------------------------------------------------------------------------------------
# note: adding, provenance, validation


def test_note_records_provenance_and_audits(cli_json, conn, task):
    note = cli_json("autopilot", "note", task, "--kind", "fact", "--content", "  API rate limit is 60/min  ",
                    "--source", "hermes")
    assert note["content"] == "API rate limit is 60/min"
    assert (note["kind"], note["source"], note["task_id"], note["created_at"]) == (
        "fact", "hermes", task, "2026-08-21T09:00:00Z")
    assert note["pinned"] is False and note["expires_at"] is None and note["expired"] is False
    assert note["deduplicated"] is False and note["similar_to"] == []
    assert _actions(conn, "note_added") == [{"note_id": note["id"], "kind": "fact", "source": "hermes",
                                             "pinned": False}]


def test_note_defaults_kind_and_source(conn, task):
    note = notes.add(conn, task, content="defaults")
    assert (note["kind"], note["source"]) == ("fact", "operator")


@pytest.mark.parametrize("argv, message", [
    (["--kind", "rumor", "--content", "x"], "invalid --kind"),
    (["--content", ""], "invalid --content: must not be empty"),
    (["--content", "   \n\t "], "invalid --content: must not be empty"),
    (["--content", "x" * 65537], "over the limit"),
    (["--content", "bad\x00nul"], "NUL"),
    (["--content", "x", "--source", "bad source!"], "invalid --source"),
    (["--content", "x", "--ttl-hours", "0"], "invalid --ttl-hours"),
    (["--content", "x", "--ttl-hours", "-3"], "invalid --ttl-hours"),
    (["--content", "x", "--ttl-hours", "nan"], "--ttl-hours: expected a number in ASCII digits"),
    (["--content", "x", "--ttl-hours", "inf"], "--ttl-hours: expected a number in ASCII digits"),
    (["--content", "x", "--ttl-hours", "1e12"], "--ttl-hours: expected a number in ASCII digits"),
    (["--content", "x", "--redact", "--allow-secret"], "at most one of --redact and --allow-secret"),
])
def test_note_rejects_bad_input_without_changing_anything(cli, conn, task, argv, message):
    before = _state(conn)
    rc, out, err = cli("autopilot", "note", task, *argv)
    assert rc == 2 and out == "" and message in err and err.count("\n") == 1
    assert _state(conn) == before


@pytest.mark.parametrize("task_id, rc", [("nope", 1), ("../etc/passwd", 2), ("t1'; DROP TABLE notes;--", 2),
                                         ("", 2), ("x" * 200, 2)])
def test_note_on_unknown_or_malformed_task(cli, conn, task, task_id, rc):
    before = _state(conn)
    code, out, err = cli("autopilot", "note", task_id, "--content", "x")
    assert code == rc and out == "" and err
    assert _state(conn) == before


def test_ttl_argparse_rejects_non_numbers(cli, conn, task):
    rc, out, err = cli("autopilot", "note", task, "--content", "x", "--ttl-hours", "soon")
    assert rc == 2 and out == "" and "--ttl-hours" in err


# ---------------------------------------------------------------------------------------
# Deduplication and the near-duplicate guard


def test_exact_duplicate_returns_the_live_note(cli_json, conn, task):
    first = cli_json("autopilot", "note", task, "--content", "API rate limit is 60/min")
    events = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    again = cli_json("autopilot", "note", task, "--content", "API rate limit is 60/min  ", "--kind", "decision")
    assert again["id"] == first["id"] and again["deduplicated"] is True and again["kind"] == "fact"
    assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == events


def test_pinned_duplicate_promotes_the_existing_note(cli_json, conn, task):
    first = cli_json("autopilot", "note", task, "--content", "MUST NOT deploy on Friday", "--kind", "constraint")
    again = cli_json("autopilot", "note", task, "--content", "MUST NOT deploy on Friday", "--pinned")
    assert again["id"] == first["id"] and again["pinned"] is True and again["deduplicated"] is True
    assert again["promoted_to_pinned"] is True
    assert notes.get(conn, first["id"])["pinned"] is True
    assert _actions(conn, "note_pinned") == [{"note_id": first["id"], "via": "duplicate_add"}]
    third = cli_json("autopilot", "note", task, "--content", "MUST NOT deploy on Friday", "--pinned")
    assert "promoted_to_pinned" not in third and len(_actions(conn, "note_pinned")) == 1


def test_duplicates_are_per_task_and_live_only(conn, task):
    tasks.create(conn, project="Trove", title="other", task_id="t2")
    a = notes.add(conn, task, content="same words")
    b = notes.add(conn, "t2", content="same words")
    assert a["id"] != b["id"] and b["deduplicated"] is False
    newer = notes.supersede(conn, a["id"], content="different words now")["note"]
    c = notes.add(conn, task, content="same words")
    assert c["id"] not in (a["id"], newer["id"]) and c["deduplicated"] is False


def test_near_duplicates_are_stored_but_flagged(conn, task):
    a = notes.add(conn, task, content="the API rate limit is sixty requests per minute")
    b = notes.add(conn, task, content="the API rate limit is sixty requests per minute today")
    assert b["id"] != a["id"] and b["deduplicated"] is False
    assert b["similar_to"] == [{"note_id": a["id"], "score": 0.9}]
    assert _actions(conn, "note_added")[-1]["similar_notes"] == [{"note_id": a["id"], "score": 0.9}]
    c = notes.add(conn, task, content="deploys happen on tuesdays")
    assert c["similar_to"] == [] and "similar_notes" not in _actions(conn, "note_added")[-1]


def test_default_near_duplicate_boundary_is_inclusive(conn, task, monkeypatch):
    monkeypatch.delenv("AUTOPILOT_NEAR_DUP_THRESHOLD", raising=False)
    a = notes.add(conn, task, content="a b c d")
    b = notes.add(conn, task, content="a b c d e")  # Jaccard 4/5 = 0.8, exactly the default
    assert b["similar_to"] == [{"note_id": a["id"], "score": 0.8}]
    assert _actions(conn, "note_added")[-1]["similar_notes"] == [{"note_id": a["id"], "score": 0.8}]
    c = notes.add(conn, task, content="a b c d e f")  # 4/6 against a: below; 5/6 against b: above
    assert c["similar_to"] == [{"note_id": b["id"], "score": 0.8333}]


def test_near_duplicate_threshold_comes_from_the_environment(conn, task, monkeypatch, cli):
    a = notes.add(conn, task, content="alpha beta gamma delta")
    assert notes.add(conn, task, content="alpha beta gamma epsilon")["similar_to"] == []  # 3/5 = 0.6
    monkeypatch.setenv("AUTOPILOT_NEAR_DUP_THRESHOLD", "0.5")
    flagged = notes.add(conn, task, content="alpha beta gamma zeta")
    assert [s["note_id"] for s in flagged["similar_to"]][0] == a["id"]
    monkeypatch.setenv("AUTOPILOT_NEAR_DUP_THRESHOLD", "1.5")
    before = _state(conn)
    rc, out, err = cli("autopilot", "note", task, "--content", "something new")
    assert rc == 2 and "AUTOPILOT_NEAR_DUP_THRESHOLD" in err and _state(conn) == before
    monkeypatch.setenv("AUTOPILOT_NEAR_DUP_THRESHOLD", "lots")
    assert cli("autopilot", "note", task, "--content", "something new")[0] == 2


def test_near_duplicate_candidates_ignore_retirees_and_other_tasks(conn, task):
    tasks.create(conn, project="Trove", title="other", task_id="t2")
    notes.add(conn, "t2", content="one two three four five")
    notes.add(conn, task, content="one two three four five six", ttl_hours=1)
    clock.advance(hours=2)
    assert notes.add(conn, task, content="one two three four five")["similar_to"] == []


def test_near_duplicate_lookup_uses_the_task_index(conn, task):
    plan = " ".join(row[3] for row in conn.execute(
        f"EXPLAIN QUERY PLAN SELECT n.id, n.content FROM notes n WHERE n.task_id = ? AND {note_live('n')}",
        ("t1", clock.now_iso())))
    assert "idx_notes_task_live" in plan


def test_jaccard_and_tokens_are_the_shared_measure():
    assert notes.tokens("Rate-limit: 60/min, RATE") == {"rate", "limit", "60", "min"}
    assert notes.jaccard("a b c", "a b d") == 0.5
    assert notes.jaccard("!!!", "???") == 0.0
    assert notes.jaccard({"a"}, "A") == 1.0


# ---------------------------------------------------------------------------------------
# Secret guard on the note path


def test_secret_note_is_blocked_then_redacted_or_allowed(cli, cli_json, conn, task):
    before = _state(conn)
    rc, out, err = cli("autopilot", "note", task, "--content", f"key is {AWS}")
    assert rc == 1 and out == "" and "aws_access_key" in err and AWS not in err
    rows, _ = _state(conn)
    assert rows == before[0]
    assert _actions(conn, "secret_blocked") == [{"kinds": ["aws_access_key"], "fields": ["content"]}]
    red = cli_json("autopilot", "note", task, "--content", f"key is {AWS}", "--redact")
    assert red["content"] == "key is [REDACTED:aws_access_key]"
    assert (red["secret_action"], red["secret_kinds"]) == ("redacted", ["aws_access_key"])
    again = cli_json("autopilot", "note", task, "--content", f"key is {AWS}", "--redact")
    assert again["id"] == red["id"] and again["deduplicated"] is True
    allowed = cli_json("autopilot", "note", task, "--content", f"key is {AWS}", "--allow-secret")
    assert allowed["content"] == f"key is {AWS}" and allowed["secret_action"] == "allowed"
    assert all(AWS not in json.dumps(p) for p in _actions(conn, "note_added"))


def test_secret_supersede_is_blocked_and_the_old_note_stays_live(cli, conn, task):
    note = notes.add(conn, task, content="rate limit is 60/min")
    before = _state(conn)
    rc, out, err = cli("autopilot", "supersede-note", str(note["id"]), "--content", f"use key {AWS}")
    assert rc == 1 and out == "" and AWS not in err
    assert _state(conn)[0] == before[0]
    assert notes.get(conn, note["id"])["superseded_by"] is None
    red = notes.supersede(conn, note["id"], content=f"use key {AWS}", redact=True)
    assert red["note"]["content"] == "use key [REDACTED:aws_access_key]" and red["secret_action"] == "redacted"


def test_supersede_never_re_stores_a_credential_shaped_legacy_source(cli, cli_json, conn, task):
    note = notes.add(conn, task, content="rate limit is 60/min")
    with db.write(conn):  # a row written before the identity guard existed
        conn.execute("UPDATE notes SET source = ? WHERE id = ?", (AWS, note["id"]))
    before = _state(conn)
    rc, out, err = cli("autopilot", "supersede-note", str(note["id"]), "--content", "rate limit is 120/min")
    assert rc == 1 and out == "" and "source" in err and AWS not in err
    assert _state(conn)[0] == before[0]
    assert _actions(conn, "secret_blocked") == [{"kinds": ["aws_access_key"], "fields": ["source"]}]
    fixed = cli_json("autopilot", "supersede-note", str(note["id"]), "--content", "rate limit is 120/min",
                     "--source", "hermes")
    assert fixed["note"]["source"] == "hermes" and AWS not in json.dumps(fixed["note"])


def test_note_source_is_guarded_before_the_duplicate_shortcut(conn, task):
    notes.add(conn, task, content="rate limit is 60/min")
    with pytest.raises(Refused, match="source"):
        notes.add(conn, task, content="rate limit is 60/min", source=AWS)
    assert AWS not in json.dumps(_actions(conn, "note_added"))


# ---------------------------------------------------------------------------------------
# Supersession and history


def test_supersede_links_both_ways_and_inherits_the_pin(cli_json, conn, task):
    old = notes.add(conn, task, kind="constraint", content="no deploys on Friday", source="hermes", pinned=True,
                    ttl_hours=5)
    clock.advance(minutes=10)
    out = cli_json("autopilot", "supersede-note", str(old["id"]), "--content", "no deploys on Friday or Saturday")
    new, retired = out["note"], out["superseded"]
    assert new["supersedes"] == old["id"] and retired["superseded_by"] == new["id"]
    assert retired["superseded_at"] == "2026-08-21T09:10:00Z"
    assert (new["kind"], new["source"], new["pinned"]) == ("constraint", "hermes", True)
    assert new["expires_at"] is None  # a superseding note is fresh
    assert [n["id"] for n in notes.list_notes(conn, task)] == [new["id"]]
    assert _actions(conn, "note_superseded") == [{"note_id": old["id"], "superseded_by": new["id"],
                                                  "kind": "constraint", "source": "hermes", "pinned": True}]


def test_supersede_overrides_kind_source_and_ttl(conn, task):
    old = notes.add(conn, task, content="limit 60")
    new = notes.supersede(conn, old["id"], content="limit 120", kind="decision", source="codex", ttl_hours=2)["note"]
    assert (new["kind"], new["source"], new["expires_at"]) == ("decision", "codex", "2026-08-21T11:00:00Z")


def test_supersede_refusals_leave_everything_unchanged(cli, conn, task):
    old = notes.add(conn, task, content="limit 60")
    notes.supersede(conn, old["id"], content="limit 120")
    before = _state(conn)
    rc, out, err = cli("autopilot", "supersede-note", str(old["id"]), "--content", "limit 240")
    assert rc == 1 and out == "" and "already superseded" in err
    live = notes.list_notes(conn, task)[0]
    rc, out, err = cli("autopilot", "supersede-note", str(live["id"]), "--content", "  limit 120 ")
    assert rc == 1 and "already says exactly that" in err
    for bad, code in (("999", 1), ("abc", 2), ("0", 2), ("-1", 2), ("1; DROP TABLE notes", 2)):
        rc, out, err = cli("autopilot", "supersede-note", bad, "--content", "x")
        assert rc == code and out == "" and err, bad
    rc, _, err = cli("autopilot", "supersede-note", str(live["id"]), "--content", "x", "--kind", "gossip")
    assert rc == 2
    assert _state(conn) == before


def test_supersede_guard_refuses_a_lost_race(conn, task):
    old = notes.add(conn, task, content="limit 60")
    with pytest.raises(Conflict):
        with db.write(conn):
            # another writer lands between our read and our guarded update
            real_get = notes.get

            def racing_get(c, nid):
                note = real_get(c, nid)
                if nid == old["id"] and note["superseded_by"] is None:
                    c.execute("UPDATE notes SET superseded_by = 4242 WHERE id = ?", (nid,))
                return note

            notes.get = racing_get
            try:
                notes.supersede(conn, old["id"], content="limit 90")
            finally:
                notes.get = real_get
    assert notes.get(conn, old["id"])["superseded_by"] is None  # rolled back whole


def test_note_history_walks_from_any_link(cli_json, conn, task):
    a = notes.add(conn, task, content="v1 limit 60")
    b = notes.supersede(conn, a["id"], content="v2 limit 120")["note"]
    c = notes.supersede(conn, b["id"], content="v3 limit 240")["note"]
    other = notes.add(conn, task, content="unrelated")
    for start in (a["id"], b["id"], c["id"]):
        hist = cli_json("autopilot", "note-history", str(start))
        assert [n["id"] for n in hist["chain"]] == [a["id"], b["id"], c["id"]]
        assert hist["head_id"] == c["id"] and hist["length"] == 3 and hist["note_id"] == start
    assert [n["id"] for n in notes.history(conn, other["id"])["chain"]] == [other["id"]]
    with pytest.raises(NotFound):
        notes.history(conn, 9999)
    with pytest.raises(InvalidInput):
        notes.history(conn, "x")


def test_notes_lists_live_oldest_first_and_all_with_history(cli_json, conn, task):
    a = notes.add(conn, task, content="first")
    b = notes.add(conn, task, content="second")
    c = notes.supersede(conn, a["id"], content="first, revised")["note"]
    assert [n["id"] for n in cli_json("autopilot", "notes", task)] == [b["id"], c["id"]]
    assert [n["id"] for n in cli_json("autopilot", "notes", task, "--all")] == [a["id"], b["id"], c["id"]]


def test_notes_on_unknown_task(cli):
    rc, out, err = cli("autopilot", "notes", "ghost")
    assert rc == 1 and out == "" and "unknown task 'ghost'" in err


# ---------------------------------------------------------------------------------------
# TTL: retirement, pins, revival, the expired sweep


def test_ttl_retires_unpinned_and_flags_expired_pins(cli_json, conn, task):
    fact = notes.add(conn, task, content="cache warm for 2h", ttl_hours=2)
    pin = notes.add(conn, task, content="freeze until launch", pinned=True, ttl_hours=1)
    forever = notes.add(conn, task, content="we use sqlite")
    assert fact["expires_at"] == "2026-08-21T11:00:00Z"
    pack = notes.live_for_pack(conn, task)
    assert [n["id"] for n in pack["notes"]] == [fact["id"], pin["id"], forever["id"]]
    assert pack["notes_expired_excluded"] == 0
    clock.advance(hours=2)
    pack = notes.live_for_pack(conn, task)
    assert [(n["id"], n["expired"]) for n in pack["notes"]] == [(pin["id"], True), (forever["id"], False)]
    assert pack["notes_expired_excluded"] == 1
    listed = {n["id"]: n["expired"] for n in cli_json("autopilot", "notes", task)}
    assert listed == {fact["id"]: True, pin["id"]: True, forever["id"]: False}
    assert cli_json("autopilot", "search-notes", "cache warm") == []
    assert [n["id"] for n in cli_json("autopilot", "search-notes", "cache warm", "--include-expired")] == [fact["id"]]
    assert [n["id"] for n in cli_json("autopilot", "search-notes", "freeze")] == [pin["id"]]
    metrics = cli_json("autopilot", "metrics")
    assert metrics["notes_expired_live"] == 2 and metrics["notes_pinned_live"] == 1


def test_expiry_boundary_is_inclusive(conn, task):
    note = notes.add(conn, task, content="short lived", ttl_hours=0.5)
    assert note["expires_at"] == "2026-08-21T09:30:00Z"
    clock.advance(minutes=29, seconds=59)
    assert notes.live_for_pack(conn, task)["notes_expired_excluded"] == 0
    clock.advance(seconds=1)
    assert notes.live_for_pack(conn, task)["notes_expired_excluded"] == 1


def test_readding_a_retiree_revives_it_and_restates_its_lifetime(cli_json, conn, task):
    fact = notes.add(conn, task, content="staging is on v2", ttl_hours=1)
    clock.advance(hours=3)
    revived = cli_json("autopilot", "note", task, "--content", "staging is on v2", "--ttl-hours", "4")
    assert revived["id"] == fact["id"] and revived["revived"] is True and revived["deduplicated"] is True
    assert revived["expires_at"] == "2026-08-21T16:00:00Z" and revived["expired"] is False
    assert _actions(conn, "note_ttl_refreshed") == [{"note_id": fact["id"], "previous_expires_at":
                                                     "2026-08-21T10:00:00Z", "expires_at": "2026-08-21T16:00:00Z"}]
    clock.advance(hours=5)
    immortal = cli_json("autopilot", "note", task, "--content", "staging is on v2")
    assert immortal["revived"] is True and immortal["expires_at"] is None
    assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 1
    clock.advance(days=365)
    assert notes.live_for_pack(conn, task)["notes_expired_excluded"] == 0


def test_live_duplicate_does_not_touch_the_lifetime(conn, task):
    fact = notes.add(conn, task, content="staging is on v2", ttl_hours=1)
    again = notes.add(conn, task, content="staging is on v2", ttl_hours=10)
    assert again["expires_at"] == fact["expires_at"] and "revived" not in again


def test_notes_expired_lists_actions_fleet_wide(cli_json, conn, task):
    tasks.create(conn, project="Other", title="other", task_id="t2")
    retiree = notes.add(conn, task, content="ephemeral", ttl_hours=1)
    pin = notes.add(conn, "t2", content="pinned rule", pinned=True, ttl_hours=2)
    notes.add(conn, task, content="still fresh", ttl_hours=10)
    gone = notes.add(conn, task, content="superseded soon", ttl_hours=1)
    notes.supersede(conn, gone["id"], content="superseded now")
    clock.advance(hours=3)
    report = cli_json("ops", "notes-expired")
    assert [(n["id"], n["action"], n["project"]) for n in report["notes"]] == [
        (retiree["id"], "revive", "Trove"), (pin["id"], "supersede", "Other")]
    assert (report["total"], report["revive"], report["supersede"]) == (2, 1, 1)


# ---------------------------------------------------------------------------------------
# search-notes


@pytest.fixture
def corpus(conn, task):
    tasks.create(conn, project="Other", title="elsewhere", task_id="t2")
    ids = {}
    ids["rate"] = notes.add(conn, task, content="API rate limit is 60/min", kind="fact")["id"]
    clock.advance(minutes=1)
    ids["pool"] = notes.add(conn, task, content="postgres pool size 20", kind="decision")["id"]
    clock.advance(minutes=1)
    ids["other"] = notes.add(conn, "t2", content="rate limit on the other API is 10/min", kind="fact")["id"]
    clock.advance(minutes=1)
    odd = '100% literal "quoted" under_score NEAR(x) a*b'
    ids["odd"] = notes.add(conn, task, content=odd, kind="observation")["id"]
    return ids


def test_substring_search_newest_first_with_filters(cli_json, corpus):
    hits = cli_json("autopilot", "search-notes", "rate limit")
    assert [h["id"] for h in hits] == [corpus["other"], corpus["rate"]]
    assert "score" not in hits[0] and hits[0]["project"] == "Other" and hits[0]["task_title"] == "elsewhere"
    assert hits[1]["task_status"] == "queued"
    assert [h["id"] for h in cli_json("autopilot", "search-notes", "rate limit", "--project", "Trove")] == [
        corpus["rate"]]
    assert cli_json("autopilot", "search-notes", "rate limit", "--kind", "decision") == []
    assert cli_json("autopilot", "search-notes", "rate limit", "--status", "completed") == []
    assert len(cli_json("autopilot", "search-notes", "rate limit", "--limit", "1")) == 1


def test_ranked_search_is_conjunctive_and_scored(cli_json, conn, corpus):
    if not fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    hits = cli_json("autopilot", "search-notes", "rate limit", "--rank")
    assert {h["id"] for h in hits} == {corpus["rate"], corpus["other"]}
    assert all(isinstance(h["score"], float) for h in hits)
    assert [h["score"] for h in hits] == sorted(h["score"] for h in hits)
    assert cli_json("autopilot", "search-notes", "rate banana", "--rank") == []
    assert [h["id"] for h in cli_json("autopilot", "search-notes", "POSTGRES", "--rank", "--kind", "decision")] == [
        corpus["pool"]]


@pytest.mark.parametrize("query", ['"', "NEAR(", "NEAR(rate limit)", "*", "rate*", "rate OR x", "AND", "content:rate",
                                   "rate NOT limit", "^rate", "(", ")", "{rate}", "%", "_", "\\", "%%", "' OR 1=1 --",
                                   "-rate", "+", "..."])
def test_injection_shaped_queries_never_raise_or_match_everything(cli, corpus, query):
    for rank in ([], ["--rank"]):
        rc, out, err = cli("autopilot", "search-notes", *rank, "--", query)
        assert rc == 0 and err == "", (query, err)
        assert len(json.loads(out)) < 4, query


def test_special_characters_match_literally(cli_json, corpus):
    assert [h["id"] for h in cli_json("autopilot", "search-notes", "100%")] == [corpus["odd"]]
    assert [h["id"] for h in cli_json("autopilot", "search-notes", "under_score")] == [corpus["odd"]]
    assert [h["id"] for h in cli_json("autopilot", "search-notes", '"quoted"')] == [corpus["odd"]]
    assert cli_json("autopilot", "search-notes", "0%l") == []
    assert cli_json("autopilot", "search-notes", "under%score") == []
    assert [h["id"] for h in cli_json("autopilot", "search-notes", "NEAR(x)", "--rank")] == [corpus["odd"]]


def test_tokenless_and_bad_queries(cli, cli_json, corpus):
    assert cli_json("autopilot", "search-notes", "") == []
    assert cli_json("autopilot", "search-notes", "   ", "--rank") == []
    assert cli_json("autopilot", "search-notes", "!!!", "--rank") == []
    for argv in (["x" * 1001], ["rate", "--kind", "gossip"], ["rate", "--status", "nope"], ["rate", "--limit", "0"],
                 ["rate", "--project", "../x"]):
        rc, out, err = cli("autopilot", "search-notes", *argv)
        assert rc == 2 and out == "" and err


def test_search_without_fts_degrades_to_substring(conn, corpus):
    conn._fts_tables = set()  # what a build without FTS5 reports
    hits = notes.search(conn, "rate limit", rank=True)
    assert [h["id"] for h in hits] == [corpus["other"], corpus["rate"]] and "score" not in hits[0]


# search-notes --rerank: the temporal hybrid score the packs use


@pytest.fixture
def aged(conn, task):
    """Three postgres notes: an old one that matches best, a fresh weaker one, an old pin."""
    ids = {}
    ids["old"] = notes.add(conn, task, content="postgres pool postgres pool sizing notes")["id"]
    ids["pin"] = notes.add(conn, task, content="postgres pool is pinned for the cutover plan today", pinned=True)["id"]
    clock.advance(hours=48, minutes=30)  # the old ones are 48.5 h old: floored to 48
    ids["fresh"] = notes.add(conn, task, content="postgres pool raised to 40 after the incident review")["id"]
    return ids


def test_rerank_scores_bm25_recency_and_pins_with_the_pack_formula(cli_json, conn, aged):
    if not fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    plain = cli_json("autopilot", "search-notes", "postgres pool", "--rank")
    assert plain[0]["id"] == aged["old"] and all("rank_score" not in hit for hit in plain)
    hits = cli_json("autopilot", "search-notes", "postgres pool", "--rank", "--rerank",
                    "--recency-half-life-hours", "24")
    assert [h["id"] for h in hits] == [aged["pin"], aged["fresh"], aged["old"]]
    by_id = {hit["id"]: hit for hit in hits}
    best = min(hit["score"] for hit in hits)
    assert by_id[aged["old"]]["rank_score"] == 0.25  # lexical 1.0, two half-lives
    assert by_id[aged["fresh"]]["rank_score"] == round(by_id[aged["fresh"]]["score"] / best, 6)
    assert by_id[aged["pin"]]["rank_score"] == round(by_id[aged["pin"]]["score"] / best * 0.25 + 0.5, 6)
    # the same hits as --rank, only re-scored and re-ordered; --pinned-boost moves the pin
    assert sorted(h["id"] for h in hits) == sorted(h["id"] for h in plain)
    boosted = cli_json("autopilot", "search-notes", "postgres pool", "--rank", "--rerank", "--recency-half-life-hours",
                       "24", "--pinned-boost", "0")
    assert [h["id"] for h in boosted] == [aged["fresh"], aged["old"], aged["pin"]]
    default = cli_json("autopilot", "search-notes", "postgres pool", "--rank", "--rerank")  # 168 h, 0.5
    assert default[0]["id"] == aged["pin"] and default[0]["rank_score"] > 1


def test_rerank_is_the_function_the_packs_use(conn, aged):
    from mindos.memory import rerank

    hits = notes.search(conn, "postgres pool", rank=True)
    expected = rerank.rerank([dict(hit) for hit in hits], clock.now_iso(), 24, 0.5)
    assert notes.search(conn, "postgres pool", rank=True, rerank=True, recency_half_life_hours=24) == expected


def test_rerank_looks_past_the_limit_and_keeps_limit_rows(conn, aged):
    if not fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")
    assert [h["id"] for h in notes.search(conn, "postgres pool", rank=True, limit=1)] == [aged["old"]]
    hits = notes.search(conn, "postgres pool", rank=True, limit=1, rerank=True, recency_half_life_hours=24,
                        pinned_boost=0)
    assert [h["id"] for h in hits] == [aged["fresh"]]  # BM25 put it below the cut; recency brings it up


def test_rerank_without_rank_scores_substring_hits_as_full_matches(cli_json, conn, aged):
    # the substring path has no BM25: every hit counts 1.0, so recency and pins decide
    hits = cli_json("autopilot", "search-notes", "postgres pool", "--rerank", "--recency-half-life-hours", "24")
    assert [(h["id"], h["rank_score"]) for h in hits] == [(aged["fresh"], 1.0), (aged["pin"], 0.75), (aged["old"], 0.25)]
    assert all("score" not in hit for hit in hits)


def test_rerank_ties_go_to_the_newest(conn, task):
    first = notes.add(conn, task, content="redis cache warmed")["id"]
    second = notes.add(conn, task, content="redis cache flushed")["id"]  # same instant, later id
    clock.advance(minutes=10)  # the same whole hour: equal recency, equal scores
    hits = notes.search(conn, "redis cache", rerank=True)
    assert [h["id"] for h in hits] == [second, first] and hits[0]["rank_score"] == hits[1]["rank_score"]


def test_without_fts_rank_rerank_counts_every_row_as_a_full_match(conn, aged):
    conn._fts_tables = set()  # what a build without FTS5 reports
    hits = notes.search(conn, "postgres pool", rank=True, rerank=True, recency_half_life_hours=24)
    assert [(h["id"], h["rank_score"]) for h in hits] == [(aged["fresh"], 1.0), (aged["pin"], 0.75), (aged["old"], 0.25)]


def test_without_rerank_the_output_is_unchanged(cli, conn, aged):
    for rank in ([], ["--rank"]):
        rc, out, err = cli("autopilot", "search-notes", "postgres pool", *rank)
        assert rc == 0 and err == "" and "rank_score" not in out
        expected = notes.search(conn, "postgres pool", rank=bool(rank))
        assert json.loads(out) == expected
        assert notes.search(conn, "postgres pool", rank=bool(rank), rerank=False) == expected


@pytest.mark.parametrize("argv, message", [
    (["--recency-half-life-hours", "24"], "need --rerank"),
    (["--pinned-boost", "1"], "need --rerank"),
    (["--rerank", "--recency-half-life-hours", "0"], "invalid --recency-half-life-hours"),
    (["--rerank", "--recency-half-life-hours", "nan"], "--recency-half-life-hours: expected a number in ASCII"),
    (["--rerank", "--pinned-boost", "-1"], "invalid --pinned-boost"),
])
def test_rerank_options_are_validated(cli, aged, argv, message):
    rc, out, err = cli("autopilot", "search-notes", "postgres pool", "--rank", *argv)
    assert rc != 0 and out == "" and message in err


def test_fts_stays_in_step_with_insert_update_delete_supersede(conn, corpus):
    if not fts.has(conn, "notes_fts"):
        pytest.skip("SQLite without FTS5")

    def indexed(word):
        return sorted(r[0] for r in conn.execute("SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?", (word,)))

    assert indexed("postgres") == [corpus["pool"]]
    new = notes.supersede(conn, corpus["pool"], content="pgbouncer pool size 40")["note"]
    assert indexed("pgbouncer") == [new["id"]]
    assert [h["id"] for h in notes.search(conn, "pool", rank=True)] == [new["id"]]  # superseded excluded
    assert notes.search(conn, "postgres") == []
    with db.write(conn):
        conn.execute("UPDATE notes SET content = 'renamed thing' WHERE id = ?", (corpus["rate"],))
    assert corpus["rate"] not in indexed("rate") and indexed("renamed") == [corpus["rate"]]
    with db.write(conn):
        conn.execute("DELETE FROM notes WHERE id = ?", (corpus["rate"],))
    assert indexed("renamed") == []
    with db.write(conn):
        conn.execute("DELETE FROM tasks WHERE id = 't2'")  # cascades to its notes
    assert indexed("other") == []


def test_superseded_notes_are_hidden_from_search(conn, corpus):
    notes.supersede(conn, corpus["rate"], content="API quota is 120/min")
    assert [h["id"] for h in notes.search(conn, "rate limit")] == [corpus["other"]]


# ---------------------------------------------------------------------------------------
# metrics, CLI surface, subprocess


def test_metrics_counters(cli_json, conn, task):
    a = notes.add(conn, task, content="one", pinned=True)
    notes.supersede(conn, a["id"], content="one revised")
    notes.add(conn, task, content="two", ttl_hours=1)
    clock.advance(hours=1)
    m = cli_json("autopilot", "metrics")
    assert (m["notes_total"], m["notes_superseded"], m["notes_pinned_live"], m["notes_expired_live"],
            m["notes_consolidated_total"]) == (3, 1, 1, 1, 0)


@pytest.mark.parametrize("command", ["note", "notes", "supersede-note", "note-history", "search-notes"])
def test_every_command_has_help_with_an_example(cli, command):
    rc, out, err = cli("autopilot", command, "--help")
    assert rc == 0 and "Example:" in out and command in out


@pytest.mark.parametrize("command", ["notes-expired", "secret-scan", "consolidate"])
def test_every_ops_command_has_help_with_an_example(cli, command):
    rc, out, err = cli("ops", command, "--help")
    assert rc == 0 and "Example:" in out


def test_note_round_trip_through_the_real_front_door(home):
    env = {"MINDOS_NOW": "2026-08-21T09:00:00Z"}
    assert script("autopilot.py", "create", "--project", "Trove", "--title", "x", "--id", "t7", home=home,
                  env=env).returncode == 0
    added = script("autopilot.py", "note", "t7", "--content", "API rate limit is 60/min", "--ttl-hours", "1",
                   home=home, env=env)
    assert added.returncode == 0 and added.stderr == ""
    note = json.loads(added.stdout)
    assert note["expires_at"] == "2026-08-21T10:00:00Z"
    later = {"MINDOS_NOW": "2026-08-21T12:00:00Z"}
    expired = script("ops.py", "notes-expired", home=home, env=later)
    assert expired.returncode == 0 and json.loads(expired.stdout)["notes"][0]["action"] == "revive"
    revived = script("autopilot.py", "note", "t7", "--content", "API rate limit is 60/min", home=home, env=later)
    assert json.loads(revived.stdout)["revived"] is True


def test_refusals_are_exceptions_in_core(conn, task):
    note = notes.add(conn, task, content="x1")
    notes.supersede(conn, note["id"], content="x2")
    with pytest.raises(Refused):
        notes.supersede(conn, note["id"], content="x3")
    with pytest.raises(NotFound):
        notes.add(conn, "ghost", content="x")


def test_concurrent_processes_dedup_and_supersede_safely(home):
    import os
    import subprocess
    import sys

    from conftest import ROOT

    env = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home), MINDOS_NOW="2026-08-21T09:00:00Z")
    assert script("autopilot.py", "create", "--project", "Trove", "--title", "x", "--id", "t8", home=home,
                  env=env).returncode == 0

    def run_all(argv, count=4):
        procs = [subprocess.Popen([sys.executable, os.path.join(ROOT, "autopilot.py"), *argv], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(count)]
        return [(p.wait(timeout=60), *p.communicate()) for p in procs]

    added = run_all(["note", "t8", "--content", "only one copy of this fact"])
    assert all(rc == 0 and err == "" for rc, _, err in added)
    ids = {json.loads(out)["id"] for _, out, _ in added}
    assert len(ids) == 1
    assert sorted(json.loads(out)["deduplicated"] for _, out, _ in added) == [False, True, True, True]
    note_id = ids.pop()
    raced = run_all(["supersede-note", str(note_id), "--content", "the one true successor"])
    assert sorted(rc for rc, _, _ in raced) == [0, 1, 1, 1]
    assert all("already superseded" in err for rc, _, err in raced if rc == 1)
    listed = script("autopilot.py", "notes", "t8", "--all", home=home, env=env)
    chain = json.loads(listed.stdout)
    assert len(chain) == 2 and chain[0]["superseded_by"] == chain[1]["id"]
