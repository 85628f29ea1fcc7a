"""Context packs: budget honesty, section order, handoff placement, TTL, related notes, determinism."""

import json

import pytest

from conftest import script
from packview import full as lean_full

from mindos.context import builder, pack as context
from mindos.core import clock
from mindos.memory import handoffs, notes
from mindos.work import tasks
from mindos.errors import InvalidInput, NotFound
from mindos.store import fts
from mindos.core.canonical import canonical_json

INJECTION = 'NEAR(pool "x" AND) OR -deploy * title:foo ^ {a b}: ( \' % _ \\ ;DROP TABLE notes;--'


def make_task(conn, task_id, project="Trove", title="Tune the postgres pool", **kw):
    return tasks.create(conn, project=project, title=title, task_id=task_id, **kw)


def note(conn, task_id, content, **kw):
    return notes.add(conn, task_id, content=content, source=kw.pop("source", "hermes"), **kw)


def _pack(*args, **kwargs):
    """The pack, its lean envelope read with absent keys at their meaning (tests/context/packview.py)."""
    return lean_full(context.pack_context(*args, **kwargs))


def hand(conn, task_id, **kw):
    kw.setdefault("from_agent", "codex")
    kw.setdefault("to_agent", "claude-code")
    kw.setdefault("objective", "resume the pool tuning")
    return handoffs.record(conn, task_id, **kw)


def snapshot(conn):
    """Every row a read-only command must leave alone."""
    return {table: [tuple(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2")]
            for table in ("tasks", "notes", "handoffs", "audit_events", "dependencies")}


def row_cost(name, entries):
    """What entries of the list ``name`` charge: the characters of their rows, as printed when
    no column is hoisted (a hoisted table prints fewer: see test_pack_tables)."""
    return sum(len(canonical_json(builder.TABLES[name].row(entry))) for entry in entries)


def packed_cost(pack):
    """Recompute used_chars from the packed items, as the module docstring defines it: the
    header and the handoff their JSON, every list entry its row (the header row is free)."""
    objects = sum(len(canonical_json(item)) for item in (pack["task"], pack["handoff"]) if item is not None)
    return objects + sum(row_cost(name, pack.get(name) or []) for name in ("dependencies", "notes", "related_notes"))


@pytest.fixture
def world(conn):
    """t1 with a handoff, deps, pinned/unpinned notes; siblings with related notes."""
    make_task(conn, "dep-done", title="Provision database")
    make_task(conn, "dep-open", title="Write migration")
    tasks.update(conn, "dep-done", status="completed")
    tasks.create(conn, project="Trove", title="Tune the postgres pool", task_id="t1",
                 description="Connections time out under load", next_action="measure pool waits",
                 depends_on=["dep-done", "dep-open", "ghost"], tags=["infra"], due_at="2026-09-01T17:00:00Z")
    note(conn, "t1", "pool size is 10 today")
    clock.advance(minutes=1)
    note(conn, "t1", "MUST NOT restart postgres during business hours", kind="constraint", pinned=True)
    clock.advance(minutes=1)
    note(conn, "t1", "waits spike at 09:00 when the batch starts", kind="observation")
    clock.advance(minutes=1)
    note(conn, "t1", "never raise max_connections above 200", kind="constraint", pinned=True)
    hand(conn, "t1")
    make_task(conn, "sib", title="Postgres upgrade")
    note(conn, "sib", "postgres pool waits vanish with pgbouncer")
    note(conn, "sib", "lunch menu for friday")
    make_task(conn, "other", project="Elsewhere", title="Unrelated project")
    note(conn, "other", "postgres pool tuning notes from another project")
    return conn


# ---------------------------------------------------------------------------------------
# Shape and sections


def test_pack_sections_in_order_with_header_fields(world):
    pack = _pack(world, "t1")
    assert pack["sections"] == ["task", "handoff", "dependencies", "notes"]
    header = pack["task"]
    assert pack["task_id"] == "t1" and "id" not in header  # the pack's task_id names it once
    assert header["project"] == "Trove" and "status" not in header  # compact: a new task is queued
    assert header["due_at"] == "2026-09-01T17:00:00Z"
    assert header["tags"] == ["infra"] and "priority" not in header  # compact: P2 is the default
    assert header["next_action"] == "measure pool waits"
    assert header["description"] == "Connections time out under load"
    assert "description_truncated" not in header
    assert pack["budget"] == 4000 and pack["truncated"] is False
    assert "related_notes" not in pack and "related_requested" not in pack


def test_unsatisfied_dependencies_only_in_edge_order(world):
    pack = _pack(world, "t1")
    assert pack["dependencies"] == [
        {"id": "dep-open", "status": "queued", "title": "Write migration"},
        {"id": "ghost", "status": "missing"},  # compact: a missing prerequisite has no title
    ]
    assert pack["dependencies_total"] == 2 and pack["dependencies_packed"] == 2


def test_notes_pinned_first_oldest_to_newest_within_each_group(world):
    pack = _pack(world, "t1")
    contents = [n["content"] for n in pack["notes"]]
    assert contents == [
        "MUST NOT restart postgres during business hours",
        "never raise max_connections above 200",
        "pool size is 10 today",
        "waits spike at 09:00 when the batch starts",
    ]
    assert [n.get("pinned", False) for n in pack["notes"]] == [True, True, False, False]
    assert "pinned" not in pack["notes"][2]  # compact: absence is false
    assert pack["notes_packed"] == 4 and pack["notes_pinned_packed"] == 2
    assert pack["notes_total_live"] == 4 and pack["notes_dropped"] == 0


def test_superseded_notes_are_not_packed(world):
    old = notes.list_notes(world, "t1")[0]
    notes.supersede(world, old["id"], content="pool size is 20 now")
    pack = _pack(world, "t1")
    contents = [n["content"] for n in pack["notes"]]
    assert "pool size is 10 today" not in contents
    assert contents[-1] == "pool size is 20 now"
    assert pack["notes_total_live"] == 4


def test_handoff_packs_right_after_the_header(world):
    pack = _pack(world, "t1")
    assert pack["sections"].index("handoff") == 1
    assert pack["handoff_packed"] is True
    live = handoffs.live(world, "t1")
    assert pack["handoff"] == builder.compact(live, implied=builder.HANDOFF_IMPLIED)
    assert pack["handoff"]["objective"] == live["objective"] and "superseded_by" not in pack["handoff"]


def test_handoff_survives_a_budget_that_drops_deps_and_notes(world):
    full = _pack(world, "t1")
    budget = len(canonical_json(full["task"])) + len(canonical_json(full["handoff"])) + 5
    pack = _pack(world, "t1", budget=budget)
    assert pack["handoff_packed"] is True and pack["handoff"] == full["handoff"]
    assert pack["notes"] == [] and pack["dependencies"] == []
    assert pack["dependencies_total"] == 2 and pack["notes_dropped"] == 4
    assert pack["truncated"] is True and pack["used_chars"] <= budget


def test_no_handoff_reports_none(conn):
    make_task(conn, "t1")
    pack = _pack(conn, "t1")
    assert pack["handoff"] is None and pack["handoff_packed"] is False
    assert pack["truncated"] is False


def test_handoff_that_does_not_fit_is_dropped_and_flagged(world):
    full = _pack(world, "t1")
    budget = len(canonical_json(full["task"])) + 20
    pack = _pack(world, "t1", budget=budget)
    assert pack["handoff"] is None and pack["handoff_packed"] is False and pack["truncated"] is True


# ---------------------------------------------------------------------------------------
# Budget honesty


@pytest.mark.parametrize("budget", [1, 2, 5, 17, 50, 100, 200, 250, 300, 400, 500, 650, 800, 1000, 1200, 1500,
                                    2000, 3000, 4000, 100000])
def test_used_chars_is_the_true_packed_size_and_never_over_budget(world, budget):
    pack = _pack(world, "t1", budget=budget, related=5)
    assert pack["used_chars"] <= budget
    assert pack["used_chars"] == packed_cost(pack)
    assert pack["truncated"] is (packed_cost(_pack(world, "t1", budget=100000, related=5))
                                 > pack["used_chars"])


def test_truncated_flips_exactly_when_something_is_dropped(world):
    full = _pack(world, "t1", budget=100000)
    assert full["truncated"] is False
    assert _pack(world, "t1", budget=full["used_chars"])["truncated"] is False
    tight = _pack(world, "t1", budget=full["used_chars"] - 1)
    assert tight["truncated"] is True and tight["used_chars"] < full["used_chars"]


def test_pinned_notes_survive_a_budget_that_drops_unpinned(world):
    full = _pack(world, "t1", budget=100000)
    pinned = [n for n in full["notes"] if n.get("pinned")]
    head = sum(len(canonical_json(x)) for x in [full["task"], full["handoff"]]) + row_cost("dependencies",
                                                                                         full["dependencies"])
    budget = head + row_cost("notes", pinned) + 10
    pack = _pack(world, "t1", budget=budget)
    assert pack["notes"] == pinned
    assert pack["notes_pinned_packed"] == 2 and pack["notes_packed"] == 2 and pack["notes_dropped"] == 2
    assert pack["truncated"] is True


def test_first_fit_lets_a_later_small_note_in(conn):
    make_task(conn, "t1")
    note(conn, "t1", "x" * 400)
    note(conn, "t1", "short")
    header = _pack(conn, "t1")["task"]
    budget = len(canonical_json(header)) + 300
    pack = _pack(conn, "t1", budget=budget)
    assert [n["content"] for n in pack["notes"]] == ["short"]
    assert pack["notes_dropped"] == 1 and pack["truncated"] is True


def test_oversized_description_is_clipped_to_the_longest_prefix_that_fits(conn):
    description = "".join(f"word{i} " for i in range(1500))
    make_task(conn, "t1", description=description)
    pack = _pack(conn, "t1", budget=1000)
    header = pack["task"]
    assert header["description_truncated"] is True
    assert description.startswith(header["description"]) and 0 < len(header["description"]) < len(description)
    assert pack["used_chars"] == len(canonical_json(header)) <= 1000
    longer = dict(header, description=description[:len(header["description"]) + 1])
    assert len(canonical_json(longer)) > 1000
    assert pack["truncated"] is True


def test_header_is_dropped_only_when_even_an_empty_description_cannot_fit(conn):
    make_task(conn, "t1", description="some words")
    pack = _pack(conn, "t1", budget=10)
    assert pack["task"] is None and pack["used_chars"] == 0 and pack["truncated"] is True
    assert pack["task_id"] == "t1"


# ---------------------------------------------------------------------------------------
# TTL


def test_expired_unpinned_notes_are_excluded_and_counted_expired_pins_pack(conn):
    make_task(conn, "t1")
    note(conn, "t1", "short lived fact", ttl_hours=1)
    note(conn, "t1", "short lived pinned constraint", pinned=True, ttl_hours=1)
    note(conn, "t1", "immortal fact")
    before = _pack(conn, "t1")
    assert before["notes_packed"] == 3 and before["notes_expired_excluded"] == 0
    assert not any("expired" in n for n in before["notes"])
    clock.advance(hours=2)
    pack = _pack(conn, "t1")
    assert [n["content"] for n in pack["notes"]] == ["short lived pinned constraint", "immortal fact"]
    assert pack["notes"][0]["expired"] is True and "expired" not in pack["notes"][1]
    assert pack["notes_expired_excluded"] == 1 and pack["notes_expired_pinned_packed"] == 1
    assert pack["notes_total_live"] == 3 and pack["notes_dropped"] == 0
    assert pack["truncated"] is False


# ---------------------------------------------------------------------------------------
# Related notes


def test_related_notes_carry_provenance_and_exclude_own_notes(world):
    pack = _pack(world, "t1", related=5)
    assert pack["sections"] == ["task", "handoff", "dependencies", "notes", "related_notes"]
    related = pack["related_notes"]
    assert [n["content"] for n in related] == ["postgres pool waits vanish with pgbouncer"]
    item = related[0]
    assert item["task_id"] == "sib" and item["via_task_title"] == "Postgres upgrade"
    assert isinstance(item["score"], float) and item["score"] < 0
    assert all(n["task_id"] != "t1" for n in related)
    assert pack["related_requested"] == 5 and pack["related_matched"] == 1 and pack["related_packed"] == 1
    assert pack["related_scope"] == "project" and pack["related_tokens_used"] > 0


def test_related_scope_global_reaches_other_projects(world):
    pack = _pack(world, "t1", related=5, related_scope="global")
    assert {n["task_id"] for n in pack["related_notes"]} == {"sib", "other"}
    scores = [n["score"] for n in pack["related_notes"]]
    assert scores == sorted(scores)


def test_related_ordered_by_bm25_strongest_first(conn):
    make_task(conn, "t1", title="postgres pool timeout")
    make_task(conn, "a", title="A")
    make_task(conn, "b", title="B")
    note(conn, "a", "timeout seen once")
    note(conn, "b", "postgres pool timeout reproduced with postgres pool settings")
    pack = _pack(conn, "t1", related=5)
    assert [n["task_id"] for n in pack["related_notes"]] == ["b", "a"]


def test_related_limit_and_zero(world):
    make_task(world, "sib2", title="Pool sizing")
    note(world, "sib2", "postgres pool of 30 worked")
    one = _pack(world, "t1", related=1)
    assert one["related_matched"] == 1 and len(one["related_notes"]) == 1
    zero = _pack(world, "t1", related=0)
    assert zero["related_notes"] == [] and zero["related_requested"] == 0 and zero["related_matched"] == 0


def test_related_excludes_superseded_and_retired_but_keeps_expired_pins(conn):
    make_task(conn, "t1", title="postgres pool")
    make_task(conn, "s", title="Sibling")
    gone = note(conn, "s", "postgres pool old fact")
    notes.supersede(conn, gone["id"], content="postgres pool new fact")
    note(conn, "s", "postgres pool retiring fact", ttl_hours=1)
    note(conn, "s", "postgres pool pinned rule", pinned=True, ttl_hours=1)
    clock.advance(hours=2)
    pack = _pack(conn, "t1", related=10)
    by_content = {n["content"]: n for n in pack["related_notes"]}
    assert set(by_content) == {"postgres pool new fact", "postgres pool pinned rule"}
    assert by_content["postgres pool pinned rule"]["expired"] is True


def test_related_notes_share_the_budget(world):
    full = _pack(world, "t1", related=5, budget=100000)
    budget = full["used_chars"] - 1
    pack = _pack(world, "t1", related=5, budget=budget)
    assert pack["related_matched"] == 1 and pack["related_packed"] == 0
    assert pack["truncated"] is True and pack["used_chars"] <= budget


def test_tokenless_task_text_yields_zero_related(conn):
    make_task(conn, "t1", title="!!! ??? ...")
    make_task(conn, "s", title="S")
    note(conn, "s", "anything at all")
    pack = _pack(conn, "t1", related=5)
    assert pack["related_notes"] == [] and pack["related_matched"] == 0 and pack["related_tokens_used"] == 0


@pytest.mark.parametrize("title", [INJECTION, '"', "NEAR(", "a OR", "*", "col:", "AND AND", "%", "_", "\\"])
def test_injection_shaped_task_text_never_raises(conn, title):
    make_task(conn, "t1", title=title, description=INJECTION, next_action='") OR ("')
    make_task(conn, "s", title="S")
    note(conn, "s", "near pool deploy drop table notes title foo")
    pack = _pack(conn, "t1", related=5, related_scope="global")
    assert pack["task"]["title"] == title
    assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 1


def test_related_notes_match_stems_and_synonyms_of_the_task_text(conn):
    make_task(conn, "t1", title="db invoices")
    make_task(conn, "s", title="S")
    note(conn, "s", "the database is slow at night")
    note(conn, "s", "invoice totals were wrong")
    note(conn, "s", "lunch menu for friday")
    pack = _pack(conn, "t1", related=5)
    assert sorted(n["content"] for n in pack["related_notes"]) == ["invoice totals were wrong",
                                                                   "the database is slow at night"]
    assert pack["related_tokens_used"] == 2 and pack["related_tokens_skipped"] == 0


def test_related_keeps_the_rarest_groups_within_the_postings_budget(conn, monkeypatch):
    monkeypatch.setattr(context, "RELATED_POSTINGS_BUDGET", 3)
    make_task(conn, "t1", title="common rare absent")
    make_task(conn, "s", title="S")
    for i in range(3):
        note(conn, "s", f"common word number {i}")
    note(conn, "s", "rare word")
    pack = _pack(conn, "t1", related=5)
    assert [n["content"] for n in pack["related_notes"]] == ["rare word"]
    assert pack["related_tokens_used"] == 1 and pack["related_tokens_skipped"] == 1


def test_all_common_groups_still_find_matches_through_the_first(conn, monkeypatch):
    # every group is over the postings budget: counts stop at the cap, so they tie and the
    # first in the task's text (the title's) is kept, never none
    monkeypatch.setattr(context, "RELATED_POSTINGS_BUDGET", 3)
    make_task(conn, "t1", title="often common")
    make_task(conn, "s", title="S")
    for i in range(6):
        note(conn, "s", f"often seen {i}")
    for i in range(4):
        note(conn, "s", f"common word {i}")
    pack = _pack(conn, "t1", related=5)
    assert pack["related_tokens_used"] == 1 and pack["related_tokens_skipped"] == 1
    # the BM25 walk is bounded: only the 3 newest postings of the kept group are ranked
    assert pack["related_matched"] == 3
    assert sorted(n["content"] for n in pack["related_notes"]) == ["often seen 3", "often seen 4", "often seen 5"]
    assert all(isinstance(n["score"], float) for n in pack["related_notes"])
    assert _pack(conn, "t1", related=5) == pack  # deterministic


def test_a_common_group_is_read_through_its_word_alone(conn, monkeypatch):
    # "deploy" alone reaches the cap, so its prefix term (deploy*: deployment) is not read:
    # the newest note, reachable only through the prefix, is not ranked
    monkeypatch.setattr(context, "RELATED_POSTINGS_BUDGET", 3)
    make_task(conn, "t1", title="deploy")
    make_task(conn, "s", title="S")
    for i in range(5):
        note(conn, "s", f"deploy step {i}")
    note(conn, "s", "deployment checklist")
    pack = _pack(conn, "t1", related=5)
    assert sorted(n["content"] for n in pack["related_notes"]) == ["deploy step 2", "deploy step 3", "deploy step 4"]


def test_a_common_word_window_ranks_in_fts5s_own_order(conn, monkeypatch):
    # one common word read through its window is scored in process (no walk of all its
    # postings): the order must be the one ORDER BY bm25(notes_fts), rowid gives the window
    monkeypatch.setattr(context, "RELATED_POSTINGS_BUDGET", 6)
    make_task(conn, "t1", title="latency")
    make_task(conn, "s", title="S")
    texts = ["latency", "latency latency spikes", "a long note that mentions latency once among many other words",
             "latency and more latency and latency", "old latency note", "latency budget", "latency of the queue",
             "tail latency", "latency latency"]
    for text in texts:
        note(conn, "s", text)
    calls = []
    rank_one_word = fts.rank_one_word
    monkeypatch.setattr(fts, "rank_one_word", lambda *args: calls.append(args[2]) or rank_one_word(*args))
    pack = _pack(conn, "t1", related=4)
    assert calls == ["latency"]  # the in-process scoring ran
    floor = conn.execute("SELECT min(rowid) FROM (SELECT rowid FROM notes_fts WHERE notes_fts MATCH '\"latency\"'"
                         " ORDER BY rowid DESC LIMIT 6)").fetchone()[0]
    expected = [row[0] for row in conn.execute(
        "SELECT n.content FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid WHERE notes_fts MATCH '\"latency\"'"
        " AND notes_fts.rowid >= ? AND n.task_id = 's' ORDER BY bm25(notes_fts), notes_fts.rowid LIMIT 4", (floor,))]
    assert [n["content"] for n in pack["related_notes"]] == expected
    scores = [n["score"] for n in pack["related_notes"]]
    assert scores == sorted(scores) and all(isinstance(score, float) for score in scores)
    # the window is scored from ids and texts; the notes packed are read whole afterwards
    assert all(n["via_task_title"] == "S" and n["task_id"] == "s" and n["id"] and n["created_at"]
               for n in pack["related_notes"])


def test_a_common_prefix_window_merges_the_prefix_once(conn, monkeypatch):
    # "migrating" is in no note, its prefix term (migrat*: migration) reaches the cap: the
    # group is counted by reading its newest rowids, and the window is those rows, so the
    # prefix (every posting of every word it covers, merged) is read by one statement only;
    # the pack is the one a window read again gives
    monkeypatch.setattr(context, "RELATED_POSTINGS_BUDGET", 3)
    make_task(conn, "t1", title="migrating")
    make_task(conn, "s", title="S")
    make_task(conn, "far", project="Elsewhere", title="Far")
    for i in range(4):
        note(conn, "s", f"migration step {i}")
    note(conn, "far", "migration elsewhere")  # among the newest postings, dropped by the scope
    note(conn, "s", "unrelated words")
    statements = []
    conn.set_trace_callback(statements.append)
    try:
        pack = _pack(conn, "t1", related=5)
    finally:
        conn.set_trace_callback(None)
    assert sum('"migrat"*' in statement for statement in statements) == 1
    assert pack["related_tokens_used"] == 1
    assert sorted(n["content"] for n in pack["related_notes"]) == ["migration step 2", "migration step 3"]
    monkeypatch.setattr(fts, "cached_newest", lambda *args: None)  # the window read again
    assert _pack(conn, "t1", related=5) == pack


def test_a_common_group_with_a_prefix_finds_its_window_floor_from_the_probe(conn, monkeypatch):
    # "db" (db, databas*, datastor*) is kept alone over the budget: its probe read the newest
    # rowids, so the window's floor comes from them; the group's prefixes are merged by the
    # probe and the ranking only, and the pack is the one a floor read again gives
    monkeypatch.setattr(context, "RELATED_POSTINGS_BUDGET", 3)
    make_task(conn, "t1", title="db")
    make_task(conn, "s", title="S")
    for i in range(5):
        note(conn, "s", f"database row {i}")
    statements = []
    conn.set_trace_callback(statements.append)
    try:
        pack = _pack(conn, "t1", related=5)
    finally:
        conn.set_trace_callback(None)
    assert sum('"databas"*' in statement for statement in statements) == 2
    assert sorted(n["content"] for n in pack["related_notes"]) == ["database row 2", "database row 3",
                                                                   "database row 4"]
    monkeypatch.setattr(fts, "cached_newest", lambda *args: None)
    assert _pack(conn, "t1", related=5) == pack


def test_related_window_widens_until_enough_pass_the_filters(conn):
    make_task(conn, "t1", title="needle")
    make_task(conn, "far", project="Elsewhere", title="Far")
    make_task(conn, "near", title="Near")
    for i in range(60):  # the best-ranked hits are all in another project
        note(conn, "far", f"needle needle needle {i}")
    note(conn, "near", "one needle in a long haystack of many other words here")
    pack = _pack(conn, "t1", related=2)
    assert [n["task_id"] for n in pack["related_notes"]] == ["near"]


# ---------------------------------------------------------------------------------------
# No FTS5


def test_substring_fallback_has_the_same_shape_minus_score(world, plain_conn):
    make_task(plain_conn, "t1", description="Connections time out under load")
    make_task(plain_conn, "sib", title="Postgres upgrade")
    note(plain_conn, "sib", "postgres pool waits vanish with pgbouncer")
    note(plain_conn, "sib", "lunch menu for friday")
    note(plain_conn, "t1", "own postgres note")
    fts = _pack(world, "t1", related=5)["related_notes"][0]
    plain_pack = _pack(plain_conn, "t1", related=5)
    plain = plain_pack["related_notes"]
    assert [n["content"] for n in plain] == ["postgres pool waits vanish with pgbouncer"]
    assert plain[0]["task_id"] == "sib" and plain[0]["via_task_title"] == "Postgres upgrade"
    assert "score" not in plain[0] and set(fts) - set(plain[0]) == {"score"}
    assert plain_pack["related_tokens_skipped"] == 0


def test_substring_fallback_is_newest_first_and_survives_injection(plain_conn):
    make_task(plain_conn, "t1", title="pool %_\\ %")  # LIKE wildcards in the task text stay literal
    make_task(plain_conn, "s", title="S")
    note(plain_conn, "s", "pool one")
    clock.advance(minutes=1)
    note(plain_conn, "s", "pool two")
    note(plain_conn, "s", "100% literal_value")
    pack = _pack(plain_conn, "t1", related=5)
    assert [n["content"] for n in pack["related_notes"]] == ["pool two", "pool one"]
    make_task(plain_conn, "t2", title=INJECTION)
    assert _pack(plain_conn, "t2", related=5)["related_matched"] >= 1


# ---------------------------------------------------------------------------------------
# Determinism and read-only


def test_identical_state_gives_byte_identical_output(world, cli):
    first = cli("autopilot", "context", "t1", "--budget", "2500", "--related", "5")
    second = cli("autopilot", "context", "t1", "--budget", "2500", "--related", "5")
    assert first == second and first[0] == 0 and first[2] == ""


def test_unrelated_writes_do_not_move_the_pack(world, cli):
    plain = cli("autopilot", "context", "t1", "--budget", "3000")
    related = cli("autopilot", "context", "t1", "--budget", "3000", "--related", "5")
    # writes elsewhere: other tasks, their handoffs and updates, audit traffic, the clock
    make_task(world, "new1", project="Elsewhere", title="Something else")
    hand(world, "sib", objective="upgrade postgres")
    tasks.update(world, "sib", next_action="schedule window")
    clock.advance(hours=3)
    assert cli("autopilot", "context", "t1", "--budget", "3000", "--related", "5") == related
    note(world, "other", "fresh note on another task")  # moves BM25 stats, not the plain pack
    assert cli("autopilot", "context", "t1", "--budget", "3000") == plain
    # and a change to the task itself does move it
    note(world, "t1", "a new fact on t1")
    assert cli("autopilot", "context", "t1", "--budget", "3000") != plain


def test_context_is_read_only(world):
    before = snapshot(world)
    _pack(world, "t1", related=5, related_scope="global", budget=50)
    _pack(world, "t1")
    assert snapshot(world) == before


# ---------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("kwargs,flag", [
    ({"budget": 0}, "--budget"), ({"budget": -5}, "--budget"), ({"budget": 10**8}, "--budget"),
    ({"budget": "4000"}, "--budget"), ({"budget": True}, "--budget"),
    ({"related": -1}, "--related"), ({"related": 101}, "--related"), ({"related": 2.5}, "--related"),
    ({"related_scope": "world"}, "--related-scope"), ({"related_scope": ""}, "--related-scope"),
])
def test_core_rejects_bad_options(world, kwargs, flag):
    before = snapshot(world)
    with pytest.raises(InvalidInput, match=f"invalid {flag}"):
        _pack(world, "t1", **kwargs)
    assert snapshot(world) == before


@pytest.mark.parametrize("task_id", ["", "../etc/passwd", "a" * 65, "t1' OR '1'='1", "x\x00y"])
def test_core_rejects_malformed_task_ids(world, task_id):
    with pytest.raises(InvalidInput, match="invalid task id"):
        _pack(world, task_id)


def test_core_unknown_task(world):
    with pytest.raises(NotFound, match="unknown task 'nope'"):
        _pack(world, "nope")


@pytest.mark.parametrize("argv,rc,message", [
    (["context", "nope"], 1, "unknown task 'nope'"),
    (["context", "t1", "--budget", "0"], 2, "invalid --budget"),
    (["context", "t1", "--budget", "-1"], 2, "invalid --budget"),
    (["context", "t1", "--budget", "lots"], 2, "expected an integer in ASCII digits"),
    (["context", "t1", "--related", "-3"], 2, "invalid --related"),
    (["context", "t1", "--related", "1000"], 2, "invalid --related"),
    (["context", "t1", "--related-scope", "world"], 2, "invalid choice"),
    (["context", "../x"], 2, "invalid task id"),
    (["context", "t" * 5000], 2, "invalid task id"),
    (["context"], 2, "required"),
])
def test_cli_errors_are_one_line_and_change_nothing(world, cli, argv, rc, message):
    before = snapshot(world)
    code, out, err = cli("autopilot", *argv)
    assert code == rc and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert snapshot(world) == before


def test_cli_prints_the_pack_as_json(world, cli_json):
    pack = cli_json("autopilot", "context", "t1", "--budget", "4000", "--related", "2", "--related-scope", "global")
    assert pack == json.loads(json.dumps(context.pack_context(world, "t1", related=2, related_scope="global")))


def test_real_front_door_subprocess(world, home):
    proc = script("autopilot.py", "context", "t1", "--budget", "600", home=home, env={"MINDOS_NOW": clock.now_iso()})
    assert proc.returncode == 0 and proc.stderr == ""
    pack = json.loads(proc.stdout)
    assert pack["task_id"] == "t1" and pack["used_chars"] <= 600 and pack["truncated"] is True
    missing = script("autopilot.py", "context", "nope", home=home)
    assert missing.returncode == 1 and missing.stdout == "" and missing.stderr.strip() == "unknown task 'nope'"


def test_assemble_is_the_ordered_section_list_the_pack_flattens(world):
    built = context.assemble(world, "t1", related=3)
    names = [name for name, _ in built["sections"]]
    assert names == ["task", "handoff", "dependencies", "notes", "related_notes"]
    keys = dict(built["sections"])
    assert set(keys["handoff"]) == {"handoff", "handoff_packed"}
    assert set(keys["task"]) == {"task"}
    flat = _pack(world, "t1", related=3)
    assert flat["sections"] == names and flat["used_chars"] == built["used_chars"]
    for _, section in built["sections"]:  # as printed: entry lists are tables, read back here
        assert {k: flat[k] for k in section} == builder.decode(builder.encode(section))
    assert canonical_json(built["sections"]) == canonical_json(context.assemble(world, "t1", related=3)["sections"])
