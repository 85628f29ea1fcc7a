"""The opt-in pack sections and the rerank (mindos/context/sections.py via mindos/context/recall.py)."""

import json

import pytest

from mindos.context import builder, pack as context, recall
from mindos.core import clock
from mindos.memory import handoffs, notes
from mindos.work import graph, leases, lifecycle, receipts, rows
from mindos.memory import facts, memories
from conftest import make_task, scoped_facts
from packview import full


def P(**kw):
    return recall.make_params(**kw)


def _pack(conn, task_id="t1", **kw):
    return full(recall.pack(conn, task_id, P(**kw)))


@pytest.mark.parametrize("kw", [{}, {"budget": 300}, {"related": 3}, {"related": 0, "related_scope": "global"},
                                {"budget": 50, "related": 2}])
def test_a_pack_without_the_new_flags_is_byte_identical(conn, cli, kw):
    make_task(conn, "t1", title="postgres pool tuning", description="long " * 40)
    make_task(conn, "t2", title="postgres replica")
    notes.add(conn, "t1", content="pool is 20", pinned=True)
    notes.add(conn, "t2", content="postgres replica lag 2s")
    handoffs.record(conn, "t1", from_agent="codex", objective="tune the pool")
    legacy = context.pack_context(conn, "t1", **kw)
    assert builder.encode(recall.build_pack(conn, rows.get(conn, "t1"), P(**kw), clock.now_iso())) == legacy
    argv = ["context", "t1"]
    for key, value in kw.items():
        argv += ["--" + key.replace("_", "-"), str(value)]
    rc, out, err = cli("autopilot", *argv)
    assert rc == 0 and out == json.dumps(legacy, sort_keys=True, separators=(",", ":")) + "\n"


def _fleet(conn):
    make_task(conn, "t1", title="Rotate auth database credentials", next_action="update the db pool")
    make_task(conn, "t2", title="Auth service outage follow-up")
    make_task(conn, "x1", project="Other", title="Auth database for Other")
    for n in range(4):
        clock.advance(minutes=1)
        handoffs.record(conn, "t2", from_agent="hermes", to_agent="codex", objective=f"auth database step {n}")
    handoffs.record(conn, "x1", from_agent="hermes", objective="auth database other project")
    handoffs.record(conn, "t1", from_agent="hermes", objective="own auth database handoff")


def test_related_handoffs_live_other_tasks_newest_first_in_scope(conn):
    _fleet(conn)
    pack = _pack(conn, related_handoffs=3)
    assert [h["objective"] for h in pack["related_handoffs"]] == ["auth database step 3"]  # one live per task
    # compact: an empty status and commit ref are left out
    assert set(pack["related_handoffs"][0]) == {"id", "task_id", "via_task_title", "from_agent", "to_agent",
                                                "objective"}
    assert "score" not in pack["related_handoffs"][0]
    wide = _pack(conn, related_handoffs=3, related_scope="global")
    assert [h["task_id"] for h in wide["related_handoffs"]] == ["x1", "t2"]
    assert (wide["related_handoffs_requested"], wide["related_handoffs_matched"],
            wide["related_handoffs_packed"]) == (3, 2, 2)
    assert _pack(conn, related_handoffs=0)["related_handoffs"] == []


def test_related_handoffs_are_the_newest_in_scope_whatever_order_they_were_written_in(conn):
    """The live matches are ordered first and read with their task only until enough are in
    scope: the handoffs packed are still the newest in scope by (created_at, id), here where
    ids and times run in different orders and most matches belong to another project."""
    make_task(conn, "t1", title="Reconcile the ledger export")
    pinned = clock.pinned()
    times = [5, 1, 9, 3, 7, 2, 8, 4, 6, 0, 9, 5]  # minutes past a base: repeats tie on the id
    for n, minute in enumerate(times):
        project = "Trove" if n % 3 == 0 else "Other"
        make_task(conn, f"h{n}", project=project, title=f"ledger task {n}")
        clock.set_now(f"2026-01-01T00:{minute:02d}:00Z")
        handoffs.record(conn, f"h{n}", from_agent="codex", objective=f"ledger export step {n}")
    clock.set_now(pinned)
    live = conn.execute("SELECT h.id, h.created_at, t.project FROM handoffs h JOIN tasks t ON t.id = h.task_id"
                        " WHERE h.superseded_by IS NULL").fetchall()
    for scope, wanted in (("project", {"Trove"}), ("global", {"Trove", "Other"})):
        newest = [row[0] for row in sorted(live, key=lambda row: (row[1], row[0]), reverse=True) if row[2] in wanted]
        for requested in (1, 2, 3, 5, 20):
            packed = _pack(conn, related_handoffs=requested, related_scope=scope)["related_handoffs"]
            assert [item["id"] for item in packed] == newest[:requested]


def test_every_section_obeys_the_one_budget(conn):
    _fleet(conn)
    for n in range(5):
        memories.retain(conn, f"auth database memory {n} " + "y" * 100, project="Trove")
        facts.assert_fact(conn, subject=f"auth-db-{n}", predicate="uses", obj="postgres-14", source="codex")
    full = _pack(conn, related_handoffs=5, related_facts=5, related_semantic=5, budget=100000)
    assert full["truncated"] is False and full["related_semantic_packed"] == 5
    tight_budget = full["used_chars"] - 150
    tight = _pack(conn, related_handoffs=5, related_facts=5, related_semantic=5, budget=tight_budget)
    assert tight["truncated"] is True and tight["used_chars"] <= tight_budget
    assert tight["related_semantic_matched"] == 5 and tight["related_semantic_packed"] < 5
    # the header and the handoff cost their JSON, every list entry its printed row
    rows_cost = sum(builder.TABLES[name].cost(entry) for name in ("dependencies", "notes", "related_handoffs",
                                                                   "related_facts", "related_semantic")
                    for entry in tight[name])
    assert sum(builder.cost(item) for item in (tight["task"], tight["handoff"]) if item) + rows_cost == tight["used_chars"]


def test_semantic_scope_is_enforced_without_fallback(conn):
    make_task(conn, "t1", project="Auth", title="session expiry policy")
    make_task(conn, "t2", project="Billing", title="invoice export")
    mine = memories.retain(conn, "sessions expire after 30 days", project="Auth")
    fleet = memories.retain(conn, "session cookies are httponly")
    memories.retain(conn, "billing sessions expire after 1 day", project="Billing")
    pack = _pack(conn, related_semantic=10)
    assert {m["id"] for m in pack["related_semantic"]} == {mine["id"], fleet["id"]}
    assert all(m["engine"] == "memory-fts-v1" for m in pack["related_semantic"])
    assert "score" not in pack["related_semantic"][0]
    assert _pack(conn, "t2", related_semantic=10)["related_semantic"] == []  # no fallback to other scopes
    assert len(_pack(conn, related_semantic=10, related_scope="global")["related_semantic"]) == 3
    memories.forget(conn, mine["id"])
    assert [m["id"] for m in _pack(conn, related_semantic=10)["related_semantic"]] == [fleet["id"]]


def test_semantic_ordering_is_newest_first_then_id(conn):
    make_task(conn, "t1", title="cache policy")
    made = [memories.retain(conn, f"cache rule {n}") for n in range(3)]
    clock.advance(seconds=5)
    newest = memories.retain(conn, "cache rule newest")
    ids = [m["id"] for m in _pack(conn, related_semantic=10)["related_semantic"]]
    assert ids == [newest["id"], *sorted(m["id"] for m in made)]


def test_related_facts_currently_valid_newest_window_first(conn):
    make_task(conn, "t1", title="Migrate service-auth to postgres 16")
    old = facts.assert_fact(conn, subject="service-auth", predicate="uses", obj="postgres-14", source="codex")
    clock.advance(seconds=5)
    newer = facts.assert_fact(conn, subject="service-auth", predicate="reads", obj="redis", source="codex",
                              valid_hours=1)
    facts.assert_fact(conn, subject="billing", predicate="uses", obj="mysql", source="codex")
    pack = _pack(conn, related_facts=5)
    assert [f["id"] for f in pack["related_facts"]] == [newer["id"], old["id"]]
    clock.advance(hours=1)
    assert [f["id"] for f in _pack(conn, related_facts=5)["related_facts"]] == [old["id"]]
    facts.retract(conn, old["id"], reason="gone")
    assert _pack(conn, related_facts=5)["related_facts"] == []


def test_related_facts_scope_is_the_linked_tasks_project(conn):
    """As memory-search scopes them: unlinked facts, the project's own and those whose task is
    gone; another project's only with --related-scope global."""
    made = scoped_facts(conn)
    make_task(conn, "t1", project="Auth", title="Move the ledger store")
    assert {f["id"] for f in _pack(conn, related_facts=10)["related_facts"]} == \
        {made["unlinked"], made["auth"], made["orphan"]}
    assert {f["id"] for f in _pack(conn, related_facts=10, related_scope="global")["related_facts"]} == \
        set(made.values())


def test_dep_context_packs_completed_prerequisites_with_evidence(conn):
    make_task(conn, "t1", title="downstream")
    for dep in ("d1", "d2", "d3"):
        make_task(conn, dep, title=f"upstream {dep}")
        clock.advance(seconds=1)
        graph.add_dependency(conn, "t1", dep)
    for dep in ("d2", "d1"):
        leases.claim(conn, dep, "hermes")
        receipts.add(conn, dep, "ci", {"dep": dep})
        handoffs.record(conn, dep, from_agent="hermes", objective=f"{dep} shipped")
        lifecycle.complete(conn, dep, "hermes")
    pack = _pack(conn, dep_context=5)
    assert [d["id"] for d in pack["dep_context"]] == ["d1", "d2"]  # edge creation order, completed only
    entry = pack["dep_context"][0]
    assert entry["handoff"]["objective"] == "d1 shipped" and entry["receipt"]["payload"] == {"dep": "d1"}
    assert (pack["dep_context_requested"], pack["dep_context_matched"], pack["dep_context_packed"]) == (5, 2, 2)
    assert [d["id"] for d in _pack(conn, dep_context=1)["dep_context"]] == ["d1"]


def test_no_secret_reaches_a_pack(conn):
    make_task(conn, "t1", title="deploy credentials rotation")
    memories.retain(conn, "deploy rotation key password: hunter22", allow_secret=True)
    pack = _pack(conn, related_semantic=5)
    assert "hunter22" not in json.dumps(pack) and "[REDACTED:" in pack["related_semantic"][0]["content"]


def test_expired_unpinned_notes_never_pack(conn):
    make_task(conn, "t1", title="postgres")
    make_task(conn, "t2", title="postgres other")
    notes.add(conn, "t2", content="postgres short lived", ttl_hours=1)
    notes.add(conn, "t1", content="own short lived", ttl_hours=1)
    clock.advance(hours=2)
    pack = _pack(conn, related=5, rerank=True, related_semantic=3)
    assert pack["notes"] == [] and pack["related_notes"] == []


def test_rerank_scores_recency_and_pins(conn):
    make_task(conn, "t1", title="postgres pool")
    make_task(conn, "t2", title="other")
    old = notes.add(conn, "t2", content="postgres pool old", pinned=True)
    clock.advance(hours=48)
    new = notes.add(conn, "t2", content="postgres pool new")
    clock.advance(minutes=30)
    pack = _pack(conn, related=5, rerank=True, recency_half_life_hours=24, pinned_boost=0.5)
    scores = {n["id"]: n["rank_score"] for n in pack["related_notes"]}
    assert scores[new["id"]] == 1.0  # age 30 minutes floors to 0 hours
    assert scores[old["id"]] == 0.75  # 48 hours = two half-lives -> 0.25, plus the pin's 0.5
    assert [n["id"] for n in pack["related_notes"]] == [new["id"], old["id"]]
    boosted = _pack(conn, related=5, rerank=True, recency_half_life_hours=24, pinned_boost=1)
    assert [n["id"] for n in boosted["related_notes"]] == [old["id"], new["id"]]
    assert "rank_score" not in _pack(conn, related=5)["related_notes"][0]


def test_matching_keeps_the_rarest_groups_and_still_matches_when_all_are_common(conn, monkeypatch):
    from mindos.context import sections

    monkeypatch.setattr(sections, "POSTINGS_BUDGET", 3)
    make_task(conn, "t1", title="gateway service certificate")
    for n in range(6):
        make_task(conn, f"o{n}", title="other")
        handoffs.record(conn, f"o{n}", from_agent="hermes", objective=f"gateway service step {n}")
    make_task(conn, "rare", title="rare")
    handoffs.record(conn, "rare", from_agent="hermes", objective="certificate renewed")
    pack = _pack(conn, related_handoffs=5)
    assert [h["task_id"] for h in pack["related_handoffs"]] == ["rare"]  # the common words were left out
    make_task(conn, "t2", title="gateway service")
    assert _pack(conn, "t2", related_handoffs=2)["related_handoffs_matched"] == 2  # common words alone still match


def test_a_common_group_is_read_only_through_its_newest_matches(conn, monkeypatch):
    from mindos.context import sections

    monkeypatch.setattr(sections, "POSTINGS_BUDGET", 3)
    monkeypatch.setattr(sections, "MATCH_CAP", 4)
    make_task(conn, "t1", title="gateway")
    make_task(conn, "mine", title="mine")
    handoffs.record(conn, "mine", from_agent="hermes", objective="gateway in scope, oldest")
    for n in range(4):
        make_task(conn, f"o{n}", project="Other", title="other")
        handoffs.record(conn, f"o{n}", from_agent="hermes", objective=f"gateway elsewhere {n}")
    assert _pack(conn, related_handoffs=3, related_scope="global")["related_handoffs_matched"] == 3
    # the in-scope row is older than the 4 newest matches of the (common) word: not read
    assert _pack(conn, related_handoffs=3)["related_handoffs_matched"] == 0
    monkeypatch.setattr(sections, "MATCH_CAP", 5)
    assert [h["task_id"] for h in _pack(conn, related_handoffs=3)["related_handoffs"]] == ["mine"]


def test_dependency_receipt_payloads_are_scrubbed(conn, monkeypatch):
    make_task(conn, "t1", title="downstream")
    make_task(conn, "d1", title="upstream")
    graph.add_dependency(conn, "t1", "d1")
    leases.claim(conn, "d1", "hermes")
    # a receipt sealed before the write guard covered payloads (today's guard refuses it)
    with monkeypatch.context() as patched:
        from mindos.store import guard as write_guard

        patched.setattr(write_guard, "check", lambda *args, **kwargs: None)
        receipts.add(conn, "d1", "ci", {"log": "export password: hunter22 done"})
    lifecycle.complete(conn, "d1", "hermes")
    pack = _pack(conn, dep_context=1)
    assert "hunter22" not in json.dumps(pack) and "[REDACTED:" in pack["dep_context"][0]["receipt"]["payload"]["log"]


# ---------------------------------------------------------------------------------------
# Without FTS5: the same sections match by substring


def _sections_world(conn):
    _fleet(conn)
    memories.retain(conn, "auth database password rotation runbook", project="Trove")
    memories.retain(conn, "invoice export format", project="Trove")  # no word of t1
    memories.retain(conn, "auth database of another project", project="Other")  # out of scope
    fact = facts.assert_fact(conn, subject="auth-db", predicate="uses", obj="postgres-14", source="codex")
    facts.assert_fact(conn, subject="billing", predicate="uses", obj="mysql", source="codex")
    return fact


ALL_SECTIONS = dict(related=5, related_handoffs=3, related_facts=5, related_semantic=5, related_sessions=3)


def test_without_fts5_every_section_matches_any_word_by_substring(conn, plain_conn):
    fact = _sections_world(plain_conn)
    pack = _pack(plain_conn, **ALL_SECTIONS)
    assert [h["objective"] for h in pack["related_handoffs"]] == ["auth database step 3"]  # own + other project out
    assert [f["id"] for f in pack["related_facts"]] == [fact["id"]]
    assert [m["content"] for m in pack["related_semantic"]] == ["auth database password rotation runbook"]
    assert (pack["related_sessions"], pack["related_sessions_matched"]) == ([], 0)  # nothing ingested
    wide = _pack(plain_conn, related_handoffs=3, related_semantic=5, related_scope="global")
    assert [h["task_id"] for h in wide["related_handoffs"]] == ["x1", "t2"]
    assert len(wide["related_semantic"]) == 2
    # the same shape as with FTS5: every section, every key, every entry's fields
    clock.set_now("2026-08-21T09:00:00Z")
    _sections_world(conn)
    ranked = _pack(conn, **ALL_SECTIONS)
    assert ranked["sections"] == pack["sections"]
    # lean: the token counters say 0 (and so are left out) when FTS5 found nothing to OR
    assert {key for key in ranked if "_tokens_" not in key} == {key for key in pack if "_tokens_" not in key}
    for name in ("related_handoffs", "related_facts", "related_semantic"):
        assert ranked[name] and all(set(entry) == set(ranked[name][0]) for entry in pack[name]), name
    assert pack["related_handoffs"] == ranked["related_handoffs"]


def test_without_fts5_tokenless_text_matches_nothing_and_recall_still_seals(plain_conn):
    _sections_world(plain_conn)
    make_task(plain_conn, "blank", title="!!! ??? ---")
    pack = _pack(plain_conn, "blank", **ALL_SECTIONS)
    for name in ("related_handoffs", "related_facts", "related_semantic", "related_sessions"):
        assert pack[name] == [] and pack[f"{name}_matched"] == 0, name
    assert pack["related_notes"] == [] and pack["related_matched"] == 0
    sealed = recall.recall(plain_conn, "t1", agent="codex", params=P(**ALL_SECTIONS, dep_context=2, rerank=True))
    handoffs.record(plain_conn, "t1", from_agent="codex", objective="carry on", recall_digest=sealed["core_digest"])
    report = recall.stale(plain_conn, recompute=True)
    assert report["counts"]["fresh"] == 1 and report["ok"] is True
    memories.retain(plain_conn, "auth database failover drill", project="Trove")  # a new substring match
    assert recall.stale(plain_conn)["counts"]["stale"] == 1
    assert "related_semantic" in recall.diff(plain_conn, "t1", sealed["core_digest"])["sections_changed"]
