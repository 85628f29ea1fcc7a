"""Recall: sealed bundles, recall-verify, recall-diff, recall-stale, next --recall, resume
(mindos/context/recall.py)."""

import json

import pytest

from mindos.context import builder, recall
from mindos.core import clock
from mindos.memory import handoffs, notes
from mindos.store import db, ledger as audit
from mindos.work import graph, leases, lifecycle, receipts, tasks
from mindos.errors import InvalidInput, NotFound, Refused
from mindos.memory import facts, memories
from conftest import make_task, script

ALL = dict(related=5, related_handoffs=3, dep_context=3, related_facts=3, related_semantic=3)


def P(**kw):
    return recall.make_params(**kw)


def _events(conn, action):
    return audit.events(conn, action=action)["events"]


def _world(conn, with_dep=False):
    make_task(conn, "t1", title="Migrate auth database to postgres 16", next_action="check pool settings")
    make_task(conn, "t2", title="Tune postgres pool for auth")
    make_task(conn, "dep", title="Provision postgres 16 cluster")
    if with_dep:
        graph.add_dependency(conn, "t1", "dep")
    notes.add(conn, "t1", content="cutover window is sunday", pinned=True)
    notes.add(conn, "t2", content="postgres pool size is 20")
    handoffs.record(conn, "t2", from_agent="hermes", to_agent="codex", objective="postgres pool tuned for auth",
                    next_actions=["watch latency"])
    memories.retain(conn, "auth database runs on postgres in Trove", project="Trove")
    facts.assert_fact(conn, subject="service-auth", predicate="uses", obj="postgres-14", source="codex")


def test_identical_state_gives_identical_digests_and_the_time_is_outside(conn):
    _world(conn)
    first = recall.bundle(conn, "t1", "codex", P(**ALL))
    clock.advance(seconds=30)
    second = recall.bundle(conn, "t1", "codex", P(**ALL))
    assert first["recalled_at"] != second["recalled_at"]
    assert (first["digest"], first["core_digest"]) == (second["digest"], second["core_digest"])
    durable = {k: v for k, v in first.items() if k not in ("digest", "core_digest", "recalled_at")}
    assert recall.digest_of(durable) == first["digest"]


def test_digest_is_identical_across_processes(conn, home):
    _world(conn)
    runs = [script("autopilot.py", "recall", "t1", "--agent", "codex", "--related", "5", "--related-facts", "3",
                   "--related-semantic", "3", "--related-handoffs", "3", "--dep-context", "3", home=home,
                   env={"MINDOS_NOW": "2026-08-21T10:00:00Z"}) for _ in range(2)]
    outs = [json.loads(run.stdout) for run in runs]
    assert all(run.returncode == 0 and run.stderr == "" for run in runs)
    assert outs[0]["digest"] == outs[1]["digest"]
    clock.set_now("2026-08-21T10:00:00Z")
    assert recall.bundle(conn, "t1", "codex", P(**ALL))["digest"] == outs[0]["digest"]


@pytest.mark.parametrize("change", ["note", "supersede", "receipt", "claim", "dep", "handoff_elsewhere", "memory",
                                    "forget", "fact", "retract", "dep_done", "task_field"])
def test_any_durable_change_in_a_packed_section_moves_the_digest(conn, change):
    _world(conn, with_dep=change == "dep_done")
    before = recall.bundle(conn, "t1", "codex", P(**ALL))
    if change == "note":
        notes.add(conn, "t1", content="another fact")
    elif change == "supersede":
        notes.supersede(conn, before["notes"][0]["id"], content="cutover window is saturday")
    elif change == "receipt":
        receipts.add(conn, "t1", "ci", {"tests": "pass"})
    elif change == "claim":
        leases.claim(conn, "t1", "codex")
    elif change == "dep":
        make_task(conn, "dep2")
        graph.add_dependency(conn, "t1", "dep2")
    elif change == "handoff_elsewhere":
        handoffs.record(conn, "t2", from_agent="codex", to_agent="hermes", objective="auth postgres pool retuned")
    elif change == "memory":
        memories.retain(conn, "postgres auth backups are nightly", project="Trove")
    elif change == "forget":
        memories.forget(conn, before["related_semantic"][0]["id"])
    elif change == "fact":
        clock.advance(seconds=1)
        facts.assert_fact(conn, subject="service-auth", predicate="reads", obj="redis-cache", source="codex")
    elif change == "retract":
        facts.retract(conn, before["related_facts"][0]["id"], reason="moved")
    elif change == "dep_done":
        leases.claim(conn, "dep", "hermes")
        lifecycle.complete(conn, "dep", "hermes")
    elif change == "task_field":
        tasks.update(conn, "t1", next_action="run the cutover")
    after = recall.bundle(conn, "t1", "codex", P(**ALL))
    assert after["digest"] != before["digest"]
    assert after["core_digest"] != before["core_digest"]


@pytest.mark.parametrize("budget", [4000, 600])  # 600: the handoff packs and pushes other items out
def test_core_digest_ignores_the_callers_own_later_handoff(conn, budget):
    _world(conn)
    sealed = builder.decode(recall.recall(conn, "t1", agent="codex", params=P(budget=budget, **ALL)))
    handoffs.record(conn, "t1", from_agent="codex", to_agent="hermes", objective="cutover prepared",
                    evidence=["dry run ok"], recall_digest=sealed["digest"])
    after = recall.bundle(conn, "t1", "codex", P(budget=budget, **ALL))
    assert after["handoff_packed"] and after["truncated"] == (budget == 600)
    assert after["digest"] != sealed["digest"]
    assert after["core_digest"] == sealed["core_digest"]
    assert recall.stale(conn)["counts"]["fresh"] == 1
    notes.add(conn, "t1", content="late note")
    assert recall.bundle(conn, "t1", "codex", P(budget=budget, **ALL))["core_digest"] != sealed["core_digest"]


@pytest.mark.parametrize("printed", [
    {"agent": "a", "handoff": {"id": 1, "objective": "x"}, "handoff_packed": True, "notes": [["id"], [2]]},
    {"handoff": {"id": 1}, "handoff_packed": True, "task_id": "t1"},
    {"budget": 9, "handoff": {"id": 1, "objective": "quote \" and é"}, "handoff_packed": True},
    {"handoff": {"id": 1}, "handoff_packed": True},
])
def test_the_core_text_is_the_bundle_text_with_the_handoff_cut_out(printed):
    """The core digest's text is cut from the bundle's canonical JSON instead of encoding the
    bundle again: byte for byte what encoding it without the handoff gives."""
    from mindos.core.canonical import canonical_json

    core = {key: value for key, value in printed.items() if key not in ("handoff", "handoff_packed")}
    assert recall._without_handoff(canonical_json(printed), printed) == canonical_json(core)


@pytest.mark.parametrize("printed", [
    # the same run nested in a receipt's payload: not provably the top-level one
    {"handoff": {"id": 1}, "handoff_packed": True, "receipts": [{"payload": {"handoff": {"id": 1},
                                                                             "handoff_packed": True}}]},
    {"handoff": {"id": 1}, "handoff_b": 2, "handoff_packed": True},  # a key sorts between the two
    {"handoff": {"id": 1}, "handoff_packed": True, "used_chars": 40},  # the core form changes it
])
def test_the_core_text_is_encoded_again_when_the_cut_is_not_provably_exact(printed):
    from mindos.core.canonical import canonical_json

    assert recall._without_handoff(canonical_json(printed), printed) is None


def test_recall_is_audited_with_params_and_a_manifest_outside_the_digest(conn):
    _world(conn)
    leases.claim(conn, "t1", "codex")
    receipts.add(conn, "t1", "ci", {"tests": "pass"})
    sealed = builder.decode(recall.recall(conn, "t1", agent="codex", params=P(budget=6000, **ALL)))
    assert sealed["lease"]["held_by_caller"] is True
    assert sealed["receipts"][0]["payload"] == {"tests": "pass"}
    event = _events(conn, "context_recalled")[0]
    payload = event["payload"]
    assert event["entity_id"] == "t1"
    assert (payload["agent"], payload["digest"], payload["core_digest"]) == \
        ("codex", sealed["digest"], sealed["core_digest"])
    assert payload["params"] == P(budget=6000, **ALL)
    assert set(payload["manifest"]) >= {"task", "dependencies", "handoff", "notes", "related_notes", "lease",
                                        "receipts", "related_handoffs", "dep_context", "related_facts",
                                        "related_semantic"}
    assert "manifest" not in sealed
    assert "held_by_caller" not in recall.bundle(conn, "t1", "hermes", P(budget=6000, **ALL))["lease"]  # lean: false


def test_receipts_are_the_latest_three_newest_first(conn):
    make_task(conn, "t1")
    ids = []
    for n in range(5):
        clock.advance(seconds=1)
        ids.append(receipts.add(conn, "t1", "ci", {"run": n})["receipt_id"])
    sealed = recall.bundle(conn, "t1", "codex", P())
    assert [r["receipt_id"] for r in sealed["receipts"]] == ids[:1:-1]
    assert [r["payload"]["run"] for r in sealed["receipts"]] == [4, 3, 2]


def test_verify_recomputes_without_writing(conn):
    _world(conn)
    sealed = recall.recall(conn, "t1", agent="codex", params=P(related=5))
    height = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    fresh = recall.verify(conn, "t1", sealed["digest"], agent="codex", params=P(related=5))
    assert fresh["fresh"] is True and fresh["current_digest"] == sealed["digest"]
    assert recall.verify(conn, "t1", sealed["digest"], agent="codex", params=P(related=4))["fresh"] is False
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == height
    notes.add(conn, "t1", content="drift")
    stale = recall.verify(conn, "t1", sealed["digest"], agent="codex", params=P(related=5))
    assert stale["fresh"] is False and stale["current_digest"] != sealed["digest"]


def test_diff_names_what_moved_section_by_section(conn):
    _world(conn)
    sealed = recall.recall(conn, "t1", agent="codex", params=P(**ALL))
    unchanged = recall.diff(conn, "t1", sealed["digest"])
    assert unchanged["fresh"] is True and unchanged["sections_changed"] == [] and unchanged["changes"] == {}
    added = notes.add(conn, "t1", content="new evidence")
    receipt = receipts.add(conn, "t1", "ci", {"ok": True})
    leases.claim(conn, "t1", "codex")
    tasks.update(conn, "t1", priority="P0")
    result = recall.diff(conn, "t1", sealed["digest"])
    assert result["fresh"] is False
    assert result["sections_changed"] == ["task", "notes", "lease", "receipts"]
    assert result["changes"]["notes"]["added"] == [added["id"]]
    assert result["changes"]["receipts"]["added"] == [receipt["receipt_id"]]
    assert result["changes"]["task"] == {"status": {"from": "queued", "to": "claimed"},
                                         "priority": {"from": "P2", "to": "P0"}}
    assert result["changes"]["lease"]["to"]["owner"] == "codex"
    assert "related_facts" in result["unchanged"]


def test_diff_reports_facts_memories_dep_context_and_handoffs(conn):
    _world(conn, with_dep=True)
    sealed = recall.recall(conn, "t1", agent="codex", params=P(**ALL))
    fact = facts.assert_fact(conn, subject="service-auth", predicate="reads", obj="redis-cache", source="codex")
    memory = memories.retain(conn, "postgres auth replicas are two", project="Trove")
    leases.claim(conn, "dep", "hermes")
    lifecycle.complete(conn, "dep", "hermes")
    handoffs.record(conn, "t1", from_agent="codex", to_agent="hermes", objective="prepared")
    changes = recall.diff(conn, "t1", sealed["digest"])["changes"]
    assert changes["related_facts"]["added"] == [fact["id"]]
    assert changes["related_semantic"]["added"] == [memory["id"]]
    assert changes["dep_context"]["added"] == [["dep", None, None]]
    assert changes["dependencies"]["satisfied"] == ["dep"]
    assert changes["handoff"]["from"] is None and changes["handoff"]["to"]["from_agent"] == "codex"


def test_diff_of_an_unproven_or_legacy_digest(conn):
    make_task(conn, "t1")
    with pytest.raises(NotFound, match="no audited recall of t1 produced digest a{64}") as raised:
        recall.diff(conn, "t1", "a" * 64)
    assert raised.value.code == "unproven_recall_digest"
    sealed = recall.bundle(conn, "t1", "codex", P())

    with db.write(conn):  # an event written before manifests and parameters were recorded
        audit.append_event(conn, "task", "t1", "context_recalled",
                        {"agent": "codex", "digest": sealed["digest"], "core_digest": sealed["core_digest"]})
    legacy = recall.diff(conn, "t1", sealed["digest"])
    assert legacy["legacy_event"] is True and legacy["fresh"] is True
    assert recall.stale(conn)["checked"] == 0


def test_recall_stale_sweeps_every_cited_handoff(conn):
    for tid in ("a", "b", "c", "d"):
        make_task(conn, tid, title=f"task {tid}")
    fresh = recall.recall(conn, "a", agent="codex", params=P(related=2, rerank=True))
    handoffs.record(conn, "a", from_agent="codex", objective="x", recall_digest=fresh["digest"])
    drift = builder.decode(recall.recall(conn, "b", agent="codex", params=P()))
    handoffs.record(conn, "b", from_agent="codex", objective="x", recall_digest=drift["core_digest"])
    notes.add(conn, "b", content="moved")
    handoffs.record(conn, "c", from_agent="codex", objective="x", recall_digest="b" * 64)
    legacy = recall.bundle(conn, "d", "codex", P())

    with db.write(conn):
        audit.append_event(conn, "task", "d", "context_recalled", {"agent": "codex", "digest": legacy["digest"]})
    handoffs.record(conn, "d", from_agent="codex", objective="x", recall_digest=legacy["digest"])
    height = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    report = recall.stale(conn)
    assert report["counts"] == {"fresh": 1, "stale": 1, "unproven_recall_digest": 1, "unknown_recall_params": 1}
    by_task = {item["task_id"]: item for item in report["items"]}
    assert by_task["b"]["current_digest"] == recall.bundle(conn, "b", "codex", P())["digest"]
    assert report["ok"] is False
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == height


def test_the_cited_recalls_of_some_tasks_are_the_whole_list_filtered_to_them(conn, monkeypatch):
    for tid in ("a", "b", "c", "d"):
        make_task(conn, tid, title=f"task {tid}")
    for tid in ("a", "b", "d"):
        sealed = recall.recall(conn, tid, agent="codex", params=P(related=2))
        if tid == "b":  # recalled twice to the same digest: the newer recall is the one named
            clock.advance(60)
            again = recall.recall(conn, tid, agent="codex", params=P(related=2))
            assert again["digest"] == sealed["digest"]
        handoffs.record(conn, tid, from_agent="codex", objective="x", recall_digest=sealed["digest"])
    handoffs.record(conn, "c", from_agent="codex", objective="x", recall_digest="c" * 64)  # unproven
    whole = recall.cited_events(conn)
    assert [handoff["task_id"] for handoff, _ in whole] == ["a", "b", "c", "d"]
    for tasks in (["b"], {"d", "c"}, ["a", "b", "c", "d"], ["b", "b", "zz"], ["t-unknown"], []):
        assert recall.cited_events(conn, tasks) == [entry for entry in whole if entry[0]["task_id"] in set(tasks)]
    recalls_of_b = [event["id"] for event in _events(conn, "context_recalled") if event["entity_id"] == "b"]
    assert len(recalls_of_b) == 2 and recall.cited_events(conn, ["b"])[0][1]["id"] == max(recalls_of_b)
    assert recall.cited_events(conn, ["c"])[0][1] is None
    monkeypatch.setattr(recall, "CITED_TASKS_NARROWED", 1)  # past the bound: the whole list, filtered
    assert recall.cited_events(conn, ["d", "a"]) == [whole[0], whole[3]]


def test_a_recheck_of_some_cited_recalls_reads_only_theirs(conn, monkeypatch):
    for tid in ("a", "b", "c"):
        make_task(conn, tid, title=f"task {tid}")
        sealed = recall.recall(conn, tid, agent="codex", params=P(related=2))
        handoffs.record(conn, tid, from_agent="codex", objective="x", recall_digest=sealed["digest"])
    notes.add(conn, "b", content="moved")
    statements = []
    conn.set_trace_callback(statements.append)
    report, _ = recall.stale_sweep(conn, tasks=["b", "c"])
    conn.set_trace_callback(None)
    assert [(item["task_id"], item["status"]) for item in report["items"]] == [("b", "stale"), ("c", "fresh")]
    reads = [text for text in statements if "FROM handoffs h LEFT JOIN audit_events" in text]
    assert len(reads) == 1 and "h.task_id IN ('b', 'c')" in reads[0]


def test_the_full_pack_taken_from_its_core_form_is_the_pack_built_whole(conn, monkeypatch):
    from mindos.work import rows

    _world(conn, with_dep=True)
    notes.add(conn, "t1", content="the cutover runbook, step by step: " + "drain, snapshot, switch; " * 40)
    notes.add(conn, "t1", content="pool size stays at 20 until the cutover")
    handoffs.record(conn, "t1", from_agent="codex", objective="cut over auth to postgres 16",
                    decisions=["keep the pool at 20"], next_actions=["run the smoke tests"])
    task, now, real = rows.get(conn, "t1"), clock.now_iso(), recall.build_pack
    built = []
    monkeypatch.setattr(recall, "build_pack", lambda *a, **k: built.append(1) or real(*a, **k))
    shortcut = set()
    for budget in range(100, 3001, 20):  # the core packs all or drops some; the handoff fits or not
        params = P(budget=budget, **ALL)
        core = real(conn, task, params, now, with_handoff=False)
        built.clear()
        assert recall._full_pack(conn, task, params, now, core, {}, {}) == real(conn, task, params, now)
        shortcut.add((not built, core["truncated"]))
    # (taken from the core form, the core truncated): each case met in the sweep
    assert shortcut == {(True, False), (True, True), (False, False), (False, True)}


def test_rerank_parameters_travel_in_the_event_and_recompute_exactly(conn):
    _world(conn)
    params = P(related=5, rerank=True, recency_half_life_hours=24, pinned_boost=0.25)
    sealed = builder.decode(recall.recall(conn, "t1", agent="codex", params=params))
    assert sealed["related_notes"][0]["rank_score"] == 1.0
    assert _events(conn, "context_recalled")[0]["payload"]["params"]["recency_half_life_hours"] == 24
    clock.advance(minutes=59)
    assert recall.diff(conn, "t1", sealed["digest"])["fresh"] is True
    assert recall.bundle(conn, "t1", "codex", params)["related_notes"][0]["rank_score"] == 1.0  # floored hours
    handoffs.record(conn, "t1", from_agent="codex", objective="x", recall_digest=sealed["digest"])
    assert recall.stale(conn)["counts"]["fresh"] == 1
    notes.add(conn, "t2", content="postgres pool raised to 40")
    assert recall.stale(conn)["counts"]["stale"] == 1


def test_bm25_drift_from_unrelated_notes_does_not_stale_the_digest(conn):
    _world(conn)
    sealed = builder.decode(recall.recall(conn, "t1", agent="codex", params=P(related=5)))
    make_task(conn, "elsewhere", project="Other")
    for n in range(20):  # other projects' notes move every BM25 score in notes_fts
        notes.add(conn, "elsewhere", content=f"unrelated chatter number {n}")
    current = recall.bundle(conn, "t1", "codex", P(related=5))
    assert current["related_notes"][0]["score"] != sealed["related_notes"][0]["score"]
    assert current["digest"] == sealed["digest"]


def test_next_claim_recall_embeds_and_audits_the_bundle(conn):
    _world(conn)
    result = recall.next_and_recall(conn, params=P(related=5), claim=True, owner="codex", project="Trove")
    picked = result["task"]["id"]
    assert result["recall"]["task_id"] == picked and result["recall_digest"] == result["recall"]["digest"]
    assert result["recall"]["lease"]["held_by_caller"] is True
    event = _events(conn, "context_recalled")[0]
    assert (event["entity_id"], event["payload"]["agent"], event["payload"]["via"]) == (picked, "codex", "next")
    assert recall.verify(conn, picked, result["recall_digest"], agent="codex", params=P(related=5))["fresh"]
    handoffs.record(conn, picked, from_agent="codex", to_agent="hermes", objective="done",
                    evidence=["x"], recall_digest=result["recall_digest"])
    assert handoffs.check(conn, task=picked)["counts"]["unproven_recall_digest"] == 0
    with pytest.raises(InvalidInput, match="--recall requires --claim"):
        recall.next_and_recall(conn, params=P(), claim=False, owner="codex")
    empty = recall.next_and_recall(conn, params=P(), claim=True, owner="codex", project="Nowhere")
    assert (empty["task"], empty["recall"], empty["recall_digest"]) == (None, None, None)


def test_next_cli_shape_is_unchanged_without_recall_and_refuses_bundle_flags(cli, cli_json, conn):
    make_task(conn, "t1")
    plain = cli_json("autopilot", "next")
    assert set(plain) == {"task"}
    rc, out, err = cli("autopilot", "next", "--budget", "100")
    assert (rc, out) == (2, "") and "--budget need --recall" in err
    rc, out, err = cli("autopilot", "next", "--recall", "--owner", "codex")
    assert (rc, out) == (2, "") and "--recall requires --claim" in err
    claimed = cli_json("autopilot", "next", "--claim", "--owner", "codex", "--recall", "--budget", "8000",
                       "--related", "5")
    assert claimed["recall"]["budget"] == 8000 and len(claimed["recall_digest"]) == 64


def test_resume_claims_keeps_or_refuses(conn):
    _world(conn)
    first = recall.resume(conn, "t2", agent="codex", params=P())
    assert first["action"] == "claimed" and first["recall"]["lease"]["held_by_caller"] is True
    again = recall.resume(conn, "t2", agent="codex", params=P())
    assert again["action"] == "already_held" and again["lease_epoch"] == first["lease_epoch"]
    assert again["recall_digest"] == first["recall_digest"] == first["recall"]["digest"]
    assert "agent" not in again["recall"]  # the caller's own agent: sealed, not printed (pack format 5)
    events = _events(conn, "session_resumed")
    assert [e["payload"]["action"] for e in events] == ["already_held", "claimed"]
    assert events[0]["payload"]["digest"] == again["recall_digest"]
    with pytest.raises(Refused, match="leased by 'codex'.*transfer"):
        recall.resume(conn, "t2", agent="hermes", params=P())
    graph.add_dependency(conn, "t1", "dep")
    with pytest.raises(Refused, match="unsatisfied dependencies"):
        recall.resume(conn, "t1", agent="codex", params=P())
    clock.advance(hours=1)  # the lease expired: resume takes it again with a fresh epoch
    third = recall.resume(conn, "t2", agent="hermes", params=P())
    assert third["action"] == "claimed" and third["lease_epoch"] == first["lease_epoch"] + 1
    make_task(conn, "t3")
    lifecycle.block(conn, "t3", "leo", reason="waiting on creds")
    with pytest.raises(Refused, match="blocked: waiting on creds"):
        recall.resume(conn, "t3", agent="codex", params=P())
    make_task(conn, "t4")
    lifecycle.cancel(conn, "t4", "leo")
    with pytest.raises(Refused, match="terminal"):
        recall.resume(conn, "t4", agent="codex", params=P())


def test_resume_digest_is_recall_provenance(conn):
    make_task(conn, "t1")
    resumed = recall.resume(conn, "t1", agent="codex", params=P())
    handoffs.record(conn, "t1", from_agent="codex", to_agent="hermes", objective="o", evidence=["e"],
                    recall_digest=resumed["recall_digest"])
    assert recall.stale(conn)["counts"]["fresh"] == 1
    assert recall.diff(conn, "t1", resumed["recall_digest"])["event_id"] == _events(conn, "session_resumed")[0]["id"]


def _db_state(conn):
    return [conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("tasks", "notes", "handoffs", "audit_events", "memories", "facts")]


@pytest.mark.parametrize("call, error", [
    (lambda c: recall.recall(c, "nope", agent="codex", params=P()), NotFound),
    (lambda c: recall.recall(c, "'; DROP TABLE tasks; --", agent="codex", params=P()), InvalidInput),
    (lambda c: recall.recall(c, "t1", agent="", params=P()), InvalidInput),
    (lambda c: recall.recall(c, "t1", agent="a b", params=P()), InvalidInput),
    (lambda c: recall.verify(c, "t1", "not-hex", agent="codex", params=P()), InvalidInput),
    (lambda c: recall.verify(c, "t1", "", agent="codex", params=P()), InvalidInput),
    (lambda c: recall.diff(c, "t1", "z" * 64), InvalidInput),
    (lambda c: recall.diff(c, "nope", "a" * 64), NotFound),
    (lambda c: recall.resume(c, "nope", agent="codex", params=P()), NotFound),
    (lambda c: recall.resume(c, "t1", agent="codex", params=P(), minutes=0), InvalidInput),
    (lambda c: P(budget=0), InvalidInput),
    (lambda c: P(budget=10**12), InvalidInput),
    (lambda c: P(related=-1), InvalidInput),
    (lambda c: P(related_facts=101), InvalidInput),
    (lambda c: P(related_scope="everything"), InvalidInput),
    (lambda c: P(recency_half_life_hours=24), InvalidInput),
    (lambda c: P(rerank=True, recency_half_life_hours=0), InvalidInput),
    (lambda c: P(rerank=True, recency_half_life_hours=float("nan")), InvalidInput),
    (lambda c: P(rerank=True, pinned_boost=-1), InvalidInput),
])
def test_bad_input_is_refused_and_changes_nothing(conn, call, error):
    make_task(conn, "t1")
    before = _db_state(conn)
    with pytest.raises(error):
        call(conn)
    assert _db_state(conn) == before


def test_fts_and_like_shaped_task_text_packs_safely(conn):
    make_task(conn, "t1", title='"postgres" OR NEAR(a b) * %_ \' ; --', description="col:value ^x")
    make_task(conn, "t2", title="postgres notes")
    notes.add(conn, "t2", content="postgres OR NEAR")
    memories.retain(conn, "postgres NEAR memory", project="Trove")
    sealed = recall.bundle(conn, "t1", "codex", P(**ALL))
    assert sealed["related_semantic_matched"] == 1 and sealed["related_matched"] == 1


def test_cli_round_trip(cli, cli_json, conn):
    _world(conn)
    sealed = cli_json("autopilot", "recall", "t1", "--agent", "codex", "--related", "5", "--related-facts", "2")
    verified = cli_json("autopilot", "recall-verify", "t1", "--digest", sealed["digest"], "--agent", "codex",
                        "--related", "5", "--related-facts", "2")
    assert verified["fresh"] is True
    notes.add(conn, "t1", content="moved on")
    assert cli_json("autopilot", "recall-verify", "t1", "--digest", sealed["digest"], "--agent", "codex",
                    "--related", "5", "--related-facts", "2")["fresh"] is False
    diffed = cli_json("autopilot", "recall-diff", "t1", "--digest", sealed["digest"])
    assert diffed["sections_changed"] == ["notes"]
    handoffs.record(conn, "t1", from_agent="codex", objective="x", recall_digest=sealed["digest"])
    rc, out, err = cli("ops", "recall-stale")
    assert rc == 1 and err == "" and json.loads(out)["counts"]["stale"] == 1
    resumed = cli_json("autopilot", "resume", "t2", "--agent", "codex")
    assert resumed["action"] == "claimed"
    rc, out, err = cli("autopilot", "recall", "t1")
    assert (rc, out) == (2, "") and "--agent" in err
    rc, out, err = cli("autopilot", "recall-diff", "t1", "--digest", "xyz")
    assert (rc, out) == (2, "") and err.count("\n") == 1
    rc, out, err = cli("autopilot", "recall", "t1", "--agent", "codex", "--pinned-boost", "1")
    assert (rc, out) == (2, "") and "need --rerank" in err


def test_metrics_count_recalls_resumes_memories_and_facts(cli_json, conn):
    make_task(conn, "t1")
    recall.recall(conn, "t1", agent="codex", params=P())
    recall.resume(conn, "t1", agent="codex", params=P())
    memories.retain(conn, "a memory")
    facts.assert_fact(conn, subject="a", predicate="b", obj="c", source="codex")
    snapshot = cli_json("autopilot", "metrics")
    assert (snapshot["recalls_total"], snapshot["sessions_resumed_total"]) == (1, 1)
    assert (snapshot["memories_total"], snapshot["memories_live"], snapshot["memories_retracted"]) == (1, 1, 0)
    assert (snapshot["facts_total"], snapshot["facts_live"], snapshot["facts_closed"]) == (1, 1, 0)


def _cited(conn, task_id="t1", **kw):
    sealed = builder.decode(recall.recall(conn, task_id, agent="codex", params=P(**kw)))
    handoffs.record(conn, task_id, from_agent="codex", objective="x", recall_digest=sealed["core_digest"])
    return sealed


def _item(conn, **kw):
    return recall.stale(conn, **kw)["items"][0]


def test_recall_stale_proves_quiet_recalls_from_the_ledger_and_recomputes_otherwise(conn):
    _world(conn)
    _cited(conn, related=5, related_semantic=3)
    recall.recall(conn, "t2", agent="hermes", params=P())  # recalls change nothing a bundle holds
    assert (_item(conn)["status"], _item(conn)["checked_by"]) == ("fresh", "ledger")
    assert (_item(conn, recompute=True)["status"], _item(conn, recompute=True)["checked_by"]) == ("fresh", "recompute")
    memories.retain(conn, "an unrelated memory about billing")  # any write: rebuild, still fresh
    assert (_item(conn)["status"], _item(conn)["checked_by"]) == ("fresh", "recompute")
    memories.retain(conn, "postgres auth memory that matches", project="Trove")
    assert (_item(conn)["status"], _item(conn)["checked_by"]) == ("stale", "recompute")


def test_a_lifetime_ending_since_the_recall_forces_a_recompute(conn):
    make_task(conn, "t1")
    notes.add(conn, "t1", content="short lived", ttl_hours=1)
    _cited(conn)
    assert _item(conn)["checked_by"] == "ledger"
    clock.advance(hours=2)  # nothing was written, but the note retired
    assert (_item(conn)["status"], _item(conn)["checked_by"]) == ("stale", "recompute")


def test_an_expiring_lease_and_rerank_force_a_recompute(conn):
    make_task(conn, "t1")
    leases.claim(conn, "t1", "codex", minutes=30)
    _cited(conn)
    clock.advance(hours=1)
    assert (_item(conn)["status"], _item(conn)["checked_by"]) == ("stale", "recompute")
    make_task(conn, "t2")
    _cited(conn, "t2", related=3, rerank=True)
    by_task = {item["task_id"]: item for item in recall.stale(conn)["items"]}
    assert by_task["t2"]["checked_by"] == "recompute"


def test_a_tampered_receipt_file_is_never_proven_fresh(conn, home):
    make_task(conn, "t1")
    receipt = receipts.add(conn, "t1", "ci", {"tests": "pass"})
    _cited(conn)
    assert _item(conn)["checked_by"] == "ledger"
    with open(receipt["path"], "w", encoding="utf-8") as handle:
        handle.write('{"tampered": true}\n')
    assert (_item(conn)["status"], _item(conn)["checked_by"]) == ("stale", "recompute")


def _alone(conn, item):
    """The verdict of one cited handoff recomputed on its own: its event found by itself,
    the bundle rebuilt from scratch with the event's parameters (no sweep, no sharing)."""
    event, _ = recall.find_event(conn, item["task_id"], item["recall_digest"])
    params = recall.params_from_event(event["payload"])
    current = recall.bundle(conn, item["task_id"], event["payload"]["agent"], params)
    if current["core_digest"] == event["payload"]["core_digest"]:
        return "fresh", None
    return "stale", current["digest"]


def test_a_batch_with_mixed_parameters_gets_the_verdicts_of_each_alone(conn):
    # tasks sharing a project and words share the sweep's index counts and section rows;
    # each task's own live handoff matches the shared related-handoffs query and must stay out
    make_task(conn, "dep", title="Provision postgres pool cluster")
    for tid in ("p1", "p2", "p3", "p4", "p5", "p6"):
        make_task(conn, tid, title="Tune postgres pool for auth", description="pool settings")
    make_task(conn, "far", project="Other", title="Tune postgres pool for billing")
    graph.add_dependency(conn, "p3", "dep")
    leases.claim(conn, "dep", "hermes")
    receipts.add(conn, "dep", "ci", {"tests": "pass"})
    lifecycle.complete(conn, "dep", "hermes")
    for tid in ("p1", "p2", "far"):
        notes.add(conn, tid, content=f"postgres pool size for {tid} is 20", pinned=tid == "p2")
        handoffs.record(conn, tid, from_agent="hermes", to_agent="codex", objective=f"postgres pool tuned on {tid}")
    memories.retain(conn, "auth postgres pool runs pgbouncer", project="Trove")
    facts.assert_fact(conn, subject="service-auth", predicate="uses", obj="postgres-pool", source="codex")
    mixed = {
        "p1": P(related=5, related_handoffs=3),
        "p2": P(**ALL),
        "p3": P(budget=900, **ALL),  # truncated: the core form is rebuilt without the handoff
        "p4": P(related=3, rerank=True, recency_half_life_hours=24, pinned_boost=0.25),
        "p5": P(related=5, related_handoffs=3, related_scope="global", related_facts=2),
        "p6": P(),
        "far": P(related=5, related_handoffs=3, related_semantic=2),
    }
    for tid, params in mixed.items():
        clock.advance(seconds=1)
        sealed = builder.decode(recall.recall(conn, tid, agent="codex", params=params))
        cited = sealed["digest"] if tid in ("p2", "p6") else sealed["core_digest"]
        handoffs.record(conn, tid, from_agent="codex", to_agent="hermes", objective=f"postgres pool continued on {tid}",
                        recall_digest=cited)
    # drift for some: a matching handoff elsewhere, a note on p4's neighbours, a retracted fact
    clock.advance(minutes=5)
    make_task(conn, "late", title="Audit postgres pool")
    handoffs.record(conn, "late", from_agent="hermes", to_agent="codex", objective="postgres pool audited for auth")
    notes.add(conn, "p1", content="postgres pool raised to 40 for auth")
    facts.retract(conn, facts.list_facts(conn)[0]["id"], reason="moved")
    for recompute in (False, True):
        report = recall.stale(conn, recompute=recompute)
        assert report["checked"] == len(mixed)
        verdicts = {item["task_id"]: (item["status"], item.get("current_digest")) for item in report["items"]}
        assert verdicts == {item["task_id"]: _alone(conn, item) for item in report["items"]}
        assert {status for status, _ in verdicts.values()} == {"fresh", "stale"}


def _mixed_citations(conn):
    """Cited handoffs of every verdict: ledger-proved fresh, recomputed fresh (rerank),
    stale, an unproven digest, a legacy event without parameters."""
    _world(conn)
    for tid in ("a", "b", "c", "d", "e", "f"):
        make_task(conn, tid, title=f"postgres pool task {tid}")
    _cited(conn, "a")
    _cited(conn, "b", related=3, rerank=True)
    _cited(conn, "c", related=5, related_semantic=3)
    _cited(conn, "t1", **ALL)
    handoffs.record(conn, "d", from_agent="codex", objective="x", recall_digest="b" * 64)
    legacy = recall.bundle(conn, "e", "codex", P())
    with db.write(conn):
        audit.append_event(conn, "task", "e", "context_recalled", {"agent": "codex", "digest": legacy["digest"]})
    handoffs.record(conn, "e", from_agent="codex", objective="x", recall_digest=legacy["digest"])
    _cited(conn, "f")
    notes.add(conn, "c", content="postgres pool raised to 40")  # c goes stale


def test_a_sweep_shared_between_processes_reports_exactly_the_serial_sweep(conn, monkeypatch):
    from mindos.cli.context import stale_worker
    from mindos.context import stale_shares

    _mixed_citations(conn)
    clock.advance(minutes=5)
    serial = recall.stale(conn)
    assert serial["checked"] == 7 and serial["counts"]["stale"] >= 1 and serial["counts"]["unproven_recall_digest"] == 1
    checked_here = []
    real = recall.check_cited
    monkeypatch.setattr(recall, "check_cited", lambda c, plan: checked_here.append(plan["cited"]) or real(c, plan))
    for processes in (2, 3, 7):
        checked_here.clear()
        assert stale_shares.sweep(conn, processes=processes, worker_command=stale_worker.command) == serial
        # this process checked its own share only: the workers delivered the others
        assert len(checked_here) == 1 and len(checked_here[0]) == len(stale_shares.shares(list(range(7)),
                                                                                           processes)[0])
    recomputed = recall.stale(conn, recompute=True)
    assert stale_shares.sweep(conn, recompute=True, processes=3, worker_command=stale_worker.command) == recomputed
    # no worker command: every share is checked here, with the same report
    checked_here.clear()
    assert stale_shares.sweep(conn, processes=3) == serial and len(checked_here) == 1 and len(checked_here[0]) == 7


def test_a_worker_that_cannot_start_or_fails_leaves_its_share_to_the_caller(conn, monkeypatch):
    from mindos.cli.context import stale_worker
    from mindos.context import stale_shares

    _mixed_citations(conn)
    serial = recall.stale(conn)
    for broken in ("/nonexistent/python3", "/bin/false"):
        monkeypatch.setattr(stale_worker.sys, "executable", broken)
        assert stale_shares.sweep(conn, processes=3, worker_command=stale_worker.command) == serial


def test_sweeps_share_only_when_large_enough_and_shares_cover_every_item(monkeypatch):
    from mindos.context import stale_shares

    monkeypatch.setattr(stale_shares.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5, 6, 7})
    assert stale_shares.processes_for(10) == 1
    assert stale_shares.processes_for(2 * stale_shares.MIN_SHARE) == 2
    assert stale_shares.processes_for(100 * stale_shares.MIN_SHARE) == stale_shares.MAX_PROCESSES
    monkeypatch.setattr(stale_shares.os, "sched_getaffinity", lambda pid: {0})
    assert stale_shares.processes_for(100 * stale_shares.MIN_SHARE) == 1
    items = list(range(11))
    for parts in (1, 2, 3, 4, 11):
        cut = stale_shares.shares(items, parts)
        assert len(cut) == parts and [x for share in cut for x in share] == items
        assert max(map(len, cut)) - min(map(len, cut)) <= 1


def test_a_worker_checks_its_share_from_a_plan_on_stdin(conn, home):
    import subprocess

    from conftest import ROOT
    from mindos.cli.context import stale_worker

    _mixed_citations(conn)
    plan = recall.stale_plan(conn)
    command = stale_worker.command()
    assert ROOT in command[-1]
    run = subprocess.run(command, input=json.dumps({"home": str(home), "plan": plan}),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stderr == ""
    assert json.loads(run.stdout) == recall.check_cited(conn, plan)
    bad = subprocess.run(command, input="{not json", capture_output=True, text=True,
                         timeout=60)
    assert (bad.returncode, bad.stdout, bad.stderr) == (1, "", "")


def test_a_home_that_never_granted_recalls_without_loading_the_grants_module(conn, home, cli_json):
    """The recall commands add the task's live grant unsealed; while the home holds no grant
    row at all, one probe answers ``grant: null`` without loading the grants module, and
    once one exists the grants module answers as before (the printed recall alike)."""
    import subprocess
    import sys

    from conftest import ROOT
    from mindos.autonomy import grants
    from mindos.cli.context import recall as recall_cli

    make_task(conn, "t1")
    make_task(conn, "t2")
    probe = ("import json, sys; from mindos.store import db; from mindos.cli.context import recall as r; "
             f"c = db.connect({str(home)!r}); section = r.unsealed_sections()[0](c, 't1'); "
             "print(json.dumps([section, 'mindos.autonomy.grants' in sys.modules]))")

    def in_a_process():
        done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
        return json.loads(done.stdout)

    assert in_a_process() == [{"grant": None}, False]
    assert recall_cli.unsealed_sections()[0](conn, "t1") == grants.recall_section(conn, "t1") == {"grant": None}
    assert "grant" not in cli_json("autopilot", "recall", "t1", "--agent", "codex")
    granted = grants.declare(conn, "t2", model_name="codex/gpt", autonomy_level="L1", granted_by="leo",
                             grant_hours=24)
    section, loaded = in_a_process()
    assert loaded and section == {"grant": None}  # t1 has none, t2 does: the module now answers
    assert recall_cli.unsealed_sections()[0](conn, "t2") == grants.recall_section(conn, "t2")
    assert cli_json("autopilot", "recall", "t2", "--agent", "codex")["grant"]["id"] == granted["id"]
    assert "grant" not in cli_json("autopilot", "recall", "t1", "--agent", "codex")
