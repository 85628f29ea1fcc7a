"""Pack format 4: entry lists print as tables.

Every entry list of a pack (notes, dependencies, related rows, receipts, leases, inbox,
constraints, first-turn facts, memories and snippets) prints as a header row naming the columns
once and a row per entry; :func:`mindos.context.builder.decode` reads it back.  A row is what
the budget charges; recalls recorded in an older pack format verify as not fresh, recall-diff
says the format moved, and recall-stale rebuilds them instead of trusting the ledger."""

import json

import pytest

from mindos.context import builder, first_turn, prime, recall
from mindos.context import pack as context
from mindos.core import clock
from mindos.core.canonical import canonical_json, sha256_hex
from mindos.memory import facts, handoffs, memories, notes
from mindos.store import db, ledger
from mindos.work import graph, leases, lifecycle, receipts, tasks
import packview

ALL = dict(related=5, related_handoffs=3, dep_context=3, related_facts=3, related_semantic=3, related_sessions=3)


def _world(conn):
    tasks.create(conn, task_id="t1", project="Shop", title="Deploy the checkout service", priority="P1",
                 description="Roll the checkout service to production behind the flag", tags=["deploy"])
    tasks.create(conn, task_id="t2", project="Shop", title="Checkout latency on deploy")
    tasks.create(conn, task_id="dep", project="Shop", title="Provision the checkout database")
    tasks.create(conn, task_id="open", project="Shop", title="Checkout feature flag wiring")
    graph.add_dependency(conn, "t1", "dep")
    graph.add_dependency(conn, "t1", "open")
    leases.claim(conn, "dep", "hermes")
    receipts.add(conn, "dep", "verification", {"tests": "pass"})
    handoffs.record(conn, "dep", from_agent="hermes", objective="checkout database ready", evidence=["migrated"])
    lifecycle.complete(conn, "dep", "hermes", recap="Database provisioned with checkout schema")
    notes.add(conn, "t1", content="checkout deploys go through the canary first", source="codex",
              kind="observation")
    notes.add(conn, "t1", content="MUST NOT deploy on Friday", kind="constraint", pinned=True)
    notes.add(conn, "t1", content="the checkout flag is named checkout_v2", ttl_hours=48)
    notes.add(conn, "t2", content="checkout service deploy doubled p99 latency")
    handoffs.record(conn, "t2", from_agent="hermes", to_agent="codex", objective="checkout deploy latency traced",
                    commit="abc1234")
    handoffs.record(conn, "t1", from_agent="codex", objective="checkout deploy prepared", next_actions=["canary"])
    memories.retain(conn, "checkout service deploys take ten minutes", project="Shop", tags=["deploy"])
    facts.assert_fact(conn, subject="service-checkout", predicate="deploys-to", obj="cluster-eu", source="codex")
    receipts.add(conn, "t1", "ci", {"checkout": "green"})
    leases.claim(conn, "t2", "codex")  # t1 waits on "open": prime holds t2


def _printed_packs(conn):
    """One of every kind of printed pack, each with every section it can carry."""
    yield context.pack_context(conn, "t1", related=5)
    yield recall.pack(conn, "t1", recall.make_params(**ALL))
    yield recall.recall(conn, "t1", agent="codex", params=recall.make_params(**ALL))
    yield recall.resume(conn, "t2", agent="codex", params=recall.make_params(**ALL))["recall"]
    yield prime.prime(conn, "codex", fmt="json", extras=first_turn.DEFAULTS)


def _tables(pack):
    for key, value in pack.items():
        if key in builder.TABLES and value:
            yield key, value
        elif key in ("held", "recall") and isinstance(value, dict):
            yield from _tables(value)


def test_every_entry_list_is_a_table_with_its_documented_columns(conn):
    _world(conn)
    seen = set()
    for printed in _printed_packs(conn):
        for key, table in _tables(printed):
            seen.add(key)
            header, rows = packview.unhoist(table)[0], packview.unhoist(table)[1:]
            assert header == list(builder.TABLES[key].columns[:len(header)]), (key, header)  # no extra column
            assert rows and all(row and row[-1] is not None and len(row) <= len(header) for row in rows), key
    assert seen >= {"notes", "related_notes", "dependencies", "related_handoffs", "dep_context", "related_facts",
                    "related_semantic", "receipts", "leases", "constraints", "facts", "semantic"}


def _dated(entries, table):
    return [{key: value[:10] if key in table.dates and isinstance(value, str) else value
             for key, value in entry.items()} for entry in entries]


def test_a_table_reads_back_into_its_entries(conn):
    """decode(encode(pack)) gives every entry back, its created_at as the date the row shows."""
    _world(conn)
    bundle = recall.bundle(conn, "t1", "codex", recall.make_params(**ALL))
    printed = builder.encode(bundle)
    assert printed != bundle
    read = builder.decode(printed)
    for key, value in bundle.items():
        table = builder.TABLES.get(key)
        if table is not None and value:
            assert read[key] == _dated(value, table), key
            assert isinstance(printed[key][0], list) and len(printed[key]) == len(value) + 1
        elif key == "agent":  # a printed bundle leaves out the caller's own agent
            assert key not in read
        else:
            assert read[key] == value, key
    assert builder.decode(builder.encode(read)) == read  # dates are already dates: a fixed point
    assert builder.encode(printed) == printed  # a printed pack is left as it is


def test_rows_leave_out_nulls_the_one_engine_and_keep_a_missing_seal():
    notes_table, memories_table, receipts_table = (builder.TABLES[name] for name in ("notes", "semantic", "receipts"))
    plain = {"id": 7, "content": "pool is 20", "created_at": "2026-08-21T09:00:00Z"}
    pinned = {"id": 8, "content": "MUST NOT deploy on Friday", "kind": "constraint", "pinned": True,
              "created_at": "2026-08-21T09:00:00Z", "expires_at": "2026-08-23T09:00:00Z", "expired": True}
    table = notes_table.encode([plain, pinned])
    # the one date of both rows is hoisted into the header
    assert table == [["id", "kind", "source", {"created_at": "2026-08-21"}, "content", "pinned", "expired",
                      "expires_at"],
                     [7, None, None, "pool is 20"],
                     [8, "constraint", None, "MUST NOT deploy on Friday", True, True,
                      "2026-08-23T09:00:00Z"]]  # a lifetime keeps its second: it says when the note retires
    assert notes_table.cost(plain) == len(canonical_json(packview.unhoist(table)[1])) == 39
    assert notes_table.decode(table) == [{**plain, "created_at": "2026-08-21"}, {**pinned, "created_at": "2026-08-21"}]
    memory = {"id": "m1", "content": "deploys take ten minutes", "engine": builder.MEMORY_ENGINE}
    other = {"id": "m2", "content": "from elsewhere", "engine": "other-engine-v2"}
    table = memories_table.encode([memory, other])
    assert table[1] == ["m1", None, "deploys take ten minutes"]  # the shipped engine is implied
    assert table[2][-1] == "other-engine-v2"
    assert memories_table.decode(table) == [memory, other]  # every memory reads back with its engine tag
    unsealed = {"receipt_id": "r1", "kind": "ci", "hash_ok": None}
    broken = {"receipt_id": "r2", "kind": "ci", "hash_ok": False}
    assert receipts_table.decode(receipts_table.encode([unsealed, broken])) == [unsealed, broken]


def test_a_key_outside_the_columns_is_never_lost():
    table = builder.TABLES["dependencies"]
    entries = [{"id": "a", "status": "queued"}, {"id": "b", "status": "missing", "zeta": 1, "alpha": "x"}]
    printed = table.encode(entries)
    assert printed[0] == ["id", "status", "title", "alpha", "zeta"]
    assert table.decode(printed) == entries
    assert table.cost(entries[1]) == len(canonical_json(["b", "missing", None, "x", 1]))


@pytest.mark.parametrize("budget", [120, 200, 300, 450, 700, 4000])
def test_used_chars_is_the_rows_and_objects_printed(conn, budget):
    """The budget charges each list entry its row and each object its JSON; the header row is
    free, like the envelope's keys."""
    _world(conn)
    printed = recall.pack(conn, "t1", recall.make_params(budget=budget, **ALL))
    charged = sum(len(canonical_json(printed[key])) for key in ("task", "handoff") if key in printed)
    charged += sum(len(canonical_json(row)) for _, table in _tables(printed) for row in packview.unhoist(table)[1:])
    assert printed["used_chars"] == charged <= budget
    # a hoisted column prints once: the rows as printed never cost more than they are charged
    assert sum(len(canonical_json(row)) for _, table in _tables(printed) for row in table[1:]) <= sum(
        len(canonical_json(row)) for _, table in _tables(printed) for row in packview.unhoist(table)[1:])


def test_prime_charges_rows_and_its_lower_bound_holds(conn):
    _world(conn)
    for limit in (400, 600, 900, 4000):
        built = prime.build(conn, "codex", budget=max(limit, prime.MIN_BUDGET), extras=first_turn.DEFAULTS)
        printed = builder.encode(builder.flatten(built["sections"]))
        charged = sum(len(canonical_json(printed[key])) for key in ("next",) if printed.get(key))
        held = printed.get("held") or {}
        charged += sum(len(canonical_json(held[key])) for key in ("task", "handoff") if held.get(key))
        charged += sum(len(canonical_json(row)) for _, table in _tables(printed)
                       for row in packview.unhoist(table)[1:])
        assert built["used_chars"] == charged
    entry = {"note_id": 3, "task_id": "t1", "project": "Shop", "content": "x" * 50, "created_at": "2026-08-21T09:00:00Z"}
    table = builder.TABLES["constraints"]
    assert prime.least_cost(entry, table) <= table.cost(prime.scrub(dict(entry)))


def test_digests_are_taken_over_the_printed_tables_and_stay_deterministic(conn):
    _world(conn)
    params = recall.make_params(**ALL)
    first = recall.bundle(conn, "t1", "codex", params)
    clock.advance(seconds=30)
    again = recall.bundle(conn, "t1", "codex", params)
    assert (first["digest"], first["core_digest"]) == (again["digest"], again["core_digest"])
    durable = {key: value for key, value in first.items() if key not in ("digest", "core_digest", "recalled_at")}
    assert recall.digest_of(durable) == sha256_hex(canonical_json(builder.encode(recall.sealed_form(durable))))
    assert prime.build(conn, "codex")["digest"] == prime.build(conn, "codex")["digest"]


def _old_format_recall(conn, task_id, agent, params):
    """Record a recall the way pack format 3 did: no ``pack_format`` in the event and a digest
    over the older shape (here: the bundle with ``pack_format`` 3 and its lists as objects)."""
    bundle = recall.bundle(conn, task_id, agent, params)
    older = {key: value for key, value in bundle.items() if key not in ("digest", "core_digest", "recalled_at")}
    older["pack_format"] = 3
    digest = sha256_hex(canonical_json(recall.sealed_form(older)))
    with db.write(conn):
        ledger.append_event(conn, "task", task_id, "context_recalled", {
            "agent": agent, "digest": digest, "core_digest": digest, "params": params,
            "manifest": recall.manifest(bundle), "via": "recall"})
    return digest


def test_a_recall_of_an_older_pack_format_is_not_fresh_and_says_why(conn, cli_json):
    _world(conn)
    params = recall.make_params()
    old = _old_format_recall(conn, "t1", "codex", params)
    verdict = recall.verify(conn, "t1", old, agent="codex", params=params)
    assert verdict["fresh"] is False and verdict["current_digest"] != old
    moved = cli_json("autopilot", "recall-diff", "t1", "--digest", old)
    assert moved["fresh"] is False and moved["pack_format_changed"] is True
    assert moved["sections_changed"] == [] and moved["changes"] == {}  # nothing durable moved: only the shape
    current = recall.recall(conn, "t1", agent="codex", params=params)
    assert recall.same_format(json.loads(conn.execute(
        "SELECT payload_json FROM audit_events WHERE action = 'context_recalled' ORDER BY id DESC LIMIT 1"
    ).fetchone()[0]))
    fresh = recall.diff(conn, "t1", current["digest"])
    assert fresh["fresh"] is True and "pack_format_changed" not in fresh


def test_recall_stale_rebuilds_a_recall_of_an_older_pack_format(conn):
    """The ledger proves a cited recall fresh only when it was packed in this format: an older
    one is rebuilt, and its digest (taken over the older shape) reports stale."""
    _world(conn)
    params = recall.make_params()
    old = _old_format_recall(conn, "t2", "hermes", params)
    handoffs.record(conn, "t2", from_agent="hermes", objective="latency traced again", recall_digest=old)
    current = recall.recall(conn, "t1", agent="codex", params=params)
    handoffs.record(conn, "t1", from_agent="codex", objective="ready for the canary", recall_digest=current["digest"])
    report = recall.stale(conn)
    by_task = {item["task_id"]: item for item in report["items"]}
    assert by_task["t1"]["status"] == "fresh" and by_task["t1"]["checked_by"] == "ledger"
    assert by_task["t2"]["status"] == "stale" and by_task["t2"]["checked_by"] == "recompute"
    assert by_task["t2"]["current_digest"] == recall.bundle(conn, "t2", "hermes", params)["digest"]


def test_known_tables_are_reused_only_for_the_same_list(conn):
    """``encode(pack, known)`` prints exactly what ``encode(pack)`` prints; a second encode
    reuses a table laid out from the very same list and lays out again one whose list moved."""
    _world(conn)
    bundle = recall.bundle(conn, "t1", "codex", recall.make_params(**ALL))
    known = {}
    assert builder.encode(bundle, known) == builder.encode(bundle)
    assert set(known) == {key for key, _ in _tables(bundle)}
    again = builder.encode(bundle, known)
    assert all(again[key] is known[key][1] for key in known)
    moved = {**bundle, "notes": bundle["notes"][:1]}  # another list under a known key
    printed = builder.encode(moved, known)
    assert printed["notes"] == builder.encode(moved)["notes"] and known["notes"][0] is moved["notes"]
    assert printed["notes"] != again["notes"]


def test_a_recall_prints_the_tables_its_digest_laid_out_byte_for_byte(conn, monkeypatch):
    """recall, resume and next --recall lay their tables out once for the digests and the
    printing: what they print is what a fresh encode of the same bundle prints, and each
    table is laid out once (related notes twice: the sealed form orders them by id and drops
    their scores)."""
    _world(conn)
    params = recall.make_params(**ALL)
    laid = []
    real = builder.Table.encode
    monkeypatch.setattr(builder.Table, "encode", lambda self, entries: laid.append(self) or real(self, entries))
    seen = {}
    real_bundle = recall.bundle
    monkeypatch.setattr(recall, "bundle", lambda *a, **k: seen.setdefault("bundle", real_bundle(*a, **k)))
    printed = recall.recall(conn, "t1", agent="codex", params=params)
    bundle = seen.pop("bundle")
    monkeypatch.setattr(builder.Table, "encode", real)
    assert json.dumps(printed, sort_keys=True) == json.dumps(builder.encode(bundle), sort_keys=True)
    tables = [key for key, _ in _tables(bundle)]
    assert "related_notes" in tables and len(laid) == len(tables) + 1
    resumed = recall.resume(conn, "t2", agent="codex", params=params)
    assert resumed["recall"]["digest"] == resumed["recall_digest"]
