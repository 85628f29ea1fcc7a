"""Pack format 5: a column constant over a table is hoisted into its header, and the printed
envelope leaves out what the pack already shows (default sections and budget, counters that
are a table's row count, a never-leased lease, a bundle's own agent); builder.decode puts each
back.  Both digests print always, and resume keeps its lease and digest beside the bundle.
Recalls recorded in format 4 still verify, diff and sweep (as stale: their digest moved)."""

import json

import pytest

from mindos.context import builder, params as pack_params, prime, recall
from mindos.context import pack as context
from mindos.core.canonical import canonical_json, sha256_hex
from mindos.memory import handoffs, notes
from mindos.store import db, ledger
from mindos.work import graph, leases, tasks
import packview

NOTES = builder.TABLES["notes"]


def _task(conn, task_id="t1", **kw):
    return tasks.create(conn, task_id=task_id, project="Shop", title=kw.pop("title", "Deploy the checkout service"),
                        **kw)


# ---------------------------------------------------------------------------------------
# Hoisting


def test_a_column_the_same_in_every_row_prints_once_in_the_header():
    entries = [{"id": n, "source": "codex", "created_at": "2026-08-21T09:00:00Z", "content": f"note {n}"}
               for n in (1, 2, 3)]
    table = NOTES.encode(entries)
    assert table[0] == ["id", "kind", {"source": "codex"}, {"created_at": "2026-08-21"}, "content"]
    assert table[1:] == [[1, None, "note 1"], [2, None, "note 2"], [3, None, "note 3"]]
    assert NOTES.decode(table) == [{**entry, "created_at": "2026-08-21"} for entry in entries]
    # the budget still charges each entry its whole row
    assert [NOTES.cost(entry) for entry in entries] == [len(canonical_json(row)) for row in packview.unhoist(table)[1:]]


def test_hoisting_only_when_shorter_and_never_a_null_or_a_single_row():
    one = [{"id": 1, "source": "codex", "content": "x"}]
    assert NOTES.encode(one) == [["id", "kind", "source", "created_at", "content"], [1, None, "codex", None, "x"]]
    # a one-character value in two rows: hoisting would print as many characters, so it stays
    deps = builder.TABLES["dependencies"]
    short = [{"id": "a", "title": 7}, {"id": "b", "title": 7}]
    assert deps.encode(short)[0] == ["id", "status", "title"]
    # a null column (a default kind) is left null, never hoisted
    plain = [{"id": 1, "content": "x"}, {"id": 2, "content": "y"}]
    assert NOTES.encode(plain)[0] == ["id", "kind", "source", "created_at", "content"]
    # the same value of a different type is not the same value (1 is not true)
    mixed = [{"id": "a", "status": 1}, {"id": "b", "status": True}]
    assert deps.decode(deps.encode(mixed)) == mixed


def test_a_row_whose_trailing_values_are_hoisted_drops_its_trailing_nulls():
    entries = [{"id": 1, "content": "a", "pinned": True}, {"id": 2, "kind": "decision", "content": "b", "pinned": True}]
    table = NOTES.encode(entries)
    assert table[0][-1] == {"pinned": True} and table[1] == [1, None, None, None, "a"]
    assert NOTES.decode(table) == entries


def test_an_extra_key_is_kept_beside_a_hoisted_column():
    deps = builder.TABLES["dependencies"]
    entries = [{"id": "a", "status": "queued", "zeta": 1}, {"id": "b", "status": "queued", "zeta": 2}]
    table = deps.encode(entries)
    assert table[0] == ["id", {"status": "queued"}, "title", "zeta"]
    assert deps.decode(table) == entries


# ---------------------------------------------------------------------------------------
# The envelope


def test_the_default_sections_and_budget_are_left_out_and_read_back(conn):
    _task(conn)
    printed = context.pack_context(conn, "t1")
    assert "sections" not in printed and "budget" not in printed
    read = builder.decode(printed)
    assert read["sections"] == list(builder.DEFAULT_SECTIONS) and read["budget"] == pack_params.DEFAULT_BUDGET
    # another budget, or an opt-in section, is printed
    printed = recall.pack(conn, "t1", recall.make_params(budget=900, related=2))
    assert printed["budget"] == 900 and printed["sections"][-1] == "related_notes"


def test_the_default_sections_are_the_registries():
    assert tuple(s.name for s in context.SECTIONS.active({})) == builder.DEFAULT_SECTIONS
    assert tuple(s.name for s in prime.SECTIONS.active({})) == builder.PRIME_SECTIONS


def test_row_count_counters_are_left_out_only_when_they_repeat_the_table(conn):
    _task(conn)
    _task(conn, "dep", title="Provision the database")
    graph.add_dependency(conn, "t1", "dep")
    for n in range(3):
        notes.add(conn, "t1", content=f"checkout observation {n} about the canary rollout")
    printed = context.pack_context(conn, "t1")
    for key in ("notes_packed", "notes_total_live", "dependencies_packed", "dependencies_total"):
        assert key not in printed, key
    read = builder.decode(printed)
    assert (read["notes_packed"], read["notes_total_live"]) == (3, 3)
    assert (read["dependencies_packed"], read["dependencies_total"]) == (1, 1)
    # a tight budget: what was dropped is said, and the total reads back from the parts
    tight = context.pack_context(conn, "t1", budget=200)
    assert tight["notes_dropped"] >= 1 and "notes_total_live" not in tight
    assert builder.decode(tight)["notes_total_live"] == 3


def test_a_dependency_total_above_the_rows_is_printed():
    pack = {"pack_format": builder.PACK_FORMAT, "task_id": "t1", "dependencies": [{"id": "a", "status": "queued"}],
            "dependencies_total": 2, "dependencies_packed": 1}
    printed = builder.encode(pack)
    assert printed["dependencies_total"] == 2 and "dependencies_packed" not in printed
    assert builder.decode(printed)["dependencies_packed"] == 1


def test_a_bundle_leaves_out_a_never_leased_lease_and_its_agent_but_prints_both_digests(conn):
    _task(conn)
    printed = recall.recall(conn, "t1", agent="codex", params=recall.make_params())
    assert not {"lease", "agent"} & set(printed)
    assert printed["core_digest"] == printed["digest"]  # the spec names both: printed even when equal
    read = builder.decode(printed)
    assert read["lease"] == {"epoch": 0}
    # a live handoff: the two digests differ and both print
    handoffs.record(conn, "t1", from_agent="codex", objective="canary at 10 percent")
    leases.claim(conn, "t1", "codex")
    printed = recall.recall(conn, "t1", agent="codex", params=recall.make_params())
    assert printed["core_digest"] != printed["digest"] and printed["lease"]["epoch"] == 1


def test_the_agent_stays_sealed(conn):
    _task(conn)
    params = recall.make_params()
    assert recall.bundle(conn, "t1", "codex", params)["digest"] != recall.bundle(conn, "t1", "hermes", params)["digest"]
    sealed = recall.recall(conn, "t1", agent="codex", params=params)
    assert recall.verify(conn, "t1", sealed["digest"], agent="codex", params=params)["fresh"] is True
    assert recall.verify(conn, "t1", sealed["digest"], agent="hermes", params=params)["fresh"] is False


def test_the_core_digest_of_a_pack_without_a_handoff_survives_the_callers_handoff(conn):
    _task(conn)
    notes.add(conn, "t1", content="MUST NOT deploy on Friday", kind="constraint", pinned=True)
    sealed = builder.decode(recall.recall(conn, "t1", agent="codex", params=recall.make_params()))
    assert sealed["core_digest"] == sealed["digest"]
    handoffs.record(conn, "t1", from_agent="codex", objective="ready", recall_digest=sealed["digest"])
    after = recall.bundle(conn, "t1", "codex", recall.make_params())
    assert after["digest"] != sealed["digest"] and after["core_digest"] == sealed["core_digest"]
    assert recall.stale(conn)["counts"]["fresh"] == 1


def test_resume_keeps_the_lease_and_digest_beside_its_bundle(conn):
    _task(conn)
    resumed = recall.resume(conn, "t1", agent="codex", params=recall.make_params())
    assert set(resumed) == {"task_id", "agent", "action", "lease_epoch", "lease_expires_at", "recall",
                            "recall_digest"}
    assert resumed["recall_digest"] == resumed["recall"]["digest"] and resumed["lease_epoch"] == 1
    lease = resumed["recall"]["lease"]
    assert lease["expires_at"] == resumed["lease_expires_at"]
    assert lease["epoch"] == 1 and lease["held_by_caller"] is True and lease["expires_at"]


def test_a_printed_pack_is_never_longer_than_before_and_reads_back_whole(conn):
    _task(conn, description="Roll the checkout service to production behind the flag")
    for n in range(4):
        notes.add(conn, "t1", content=f"checkout observation {n}", source="codex")
    bundle = recall.bundle(conn, "t1", "codex", recall.make_params())
    printed = builder.encode(bundle)
    read = builder.decode(printed)
    for key in ("sections", "budget", "notes_packed", "notes_total_live", "lease", "core_digest", "digest"):
        assert read[key] == bundle[key], key
    assert [note["content"] for note in read["notes"]] == [note["content"] for note in bundle["notes"]]
    assert printed["notes"][0][2] == {"source": "codex"}


def test_an_injection_shaped_constant_is_hoisted_as_data():
    text = '"],["x"]}; DROP TABLE notes;--'
    entries = [{"id": 1, "source": text, "content": "a"}, {"id": 2, "source": text, "content": "b"}]
    table = NOTES.encode(entries)
    assert {"source": text} in table[0]
    assert NOTES.decode(table) == entries


# ---------------------------------------------------------------------------------------
# Recalls recorded in pack format 4


def _format4_recall(conn, task_id, agent, params):
    """A recall recorded by pack format 4: ``pack_format: 4`` in its event and a digest over
    that shape (here: the bundle's sealed form printed as format 4 named it)."""
    bundle = recall.bundle(conn, task_id, agent, params)
    older = {key: value for key, value in bundle.items() if key not in ("digest", "core_digest", "recalled_at")}
    older["pack_format"] = 4
    digest = sha256_hex(canonical_json({"format": 4, **{key: repr(value) for key, value in older.items()}}))
    with db.write(conn):
        ledger.append_event(conn, "task", task_id, "context_recalled", {
            "agent": agent, "digest": digest, "core_digest": digest, "params": params,
            "manifest": recall.manifest(bundle), "pack_format": 4, "via": "recall"})
    return digest


def test_a_format_4_recall_verifies_diffs_and_sweeps_as_moved(conn, cli, cli_json):
    _task(conn)
    notes.add(conn, "t1", content="checkout deploys go through the canary first")
    params = recall.make_params()
    old = _format4_recall(conn, "t1", "codex", params)
    assert recall.verify(conn, "t1", old, agent="codex", params=params)["fresh"] is False
    moved = cli_json("autopilot", "recall-diff", "t1", "--digest", old)
    assert moved["fresh"] is False and moved["pack_format_changed"] is True and moved["sections_changed"] == []
    handoffs.record(conn, "t1", from_agent="codex", objective="canary ready", recall_digest=old)
    assert handoffs.check(conn, task="t1")["counts"]["unproven_recall_digest"] == 0  # still provenance
    item = recall.stale(conn)["items"][0]
    assert (item["status"], item["checked_by"]) == ("stale", "recompute")
    assert item["current_digest"] == recall.bundle(conn, "t1", "codex", params)["digest"]
    rc, out, err = cli("ops", "recall-stale")  # a stale citation fails the check: exit 1, the report on stdout
    assert rc == 1 and json.loads(out)["counts"]["stale"] == 1


def test_the_300_character_pin_still_packs(conn, cli_json):
    _task(conn)
    for n in range(3):
        notes.add(conn, "t1", content=f"checkout deploy observation number {n} about the canary rollout")
    notes.add(conn, "t1", content="MUST NOT deploy on Friday", kind="constraint", pinned=True)
    printed = builder.decode(cli_json("autopilot", "context", "t1", "--budget", "300"))
    assert printed["notes"][0]["content"] == "MUST NOT deploy on Friday" and printed["notes_pinned_packed"] == 1
    assert printed["used_chars"] <= 300 and printed["truncated"] is True


@pytest.mark.parametrize("budget", [300, 4000])
def test_every_pack_kind_prints_format_5(conn, budget):
    _task(conn)
    notes.add(conn, "t1", content="MUST NOT deploy on Friday", kind="constraint", pinned=True)
    leases.claim(conn, "t1", "codex")
    params = recall.make_params(budget=budget)
    packs = [context.pack_context(conn, "t1", budget=budget), recall.recall(conn, "t1", agent="codex", params=params),
             recall.resume(conn, "t1", agent="codex", params=params)["recall"],
             prime.prime(conn, "codex", fmt="json", budget=max(budget, prime.MIN_BUDGET))]
    for printed in packs:
        assert printed["pack_format"] == builder.PACK_FORMAT == 5
        assert builder.encode(builder.decode(printed)) == printed  # decode is encode's inverse
