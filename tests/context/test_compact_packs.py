"""Compact packs: every packed entry carries only the keys that say something, in every
pack (context, recall, resume, next --claim --recall, prime --format json), and every entry
list is printed as a table (pack format 4: a header row naming the columns, a row per entry;
format 5: a column constant over a table hoisted into its header) under an envelope without
keys that repeat the pack; pinned notes survive the tight budgets that drop unpinned ones."""

import json

import pytest

from mindos.context import builder, params as pack_params, prime, recall
from mindos.context import pack as context
from mindos.core import clock
from mindos.core.canonical import canonical_json
from mindos.memory import facts, handoffs, memories, notes
from mindos.work import graph, leases, lifecycle, receipts, tasks
import packview

ALL = dict(related=5, related_handoffs=3, dep_context=3, related_facts=3, related_semantic=3)
EMPTY = (None, False, "", [], {})


def _world(conn):
    tasks.create(conn, task_id="t1", project="Shop", title="Deploy the checkout service",
                 description="Roll the checkout service to production behind the flag")
    tasks.create(conn, task_id="t2", project="Shop", title="Checkout latency on deploy")
    tasks.create(conn, task_id="dep", project="Shop", title="Provision the checkout database")
    graph.add_dependency(conn, "t1", "dep")
    leases.claim(conn, "dep", "hermes")
    receipts.add(conn, "dep", "verification", {"tests": "pass"})
    handoffs.record(conn, "dep", from_agent="hermes", objective="checkout database ready", evidence=["migrated"])
    lifecycle.complete(conn, "dep", "hermes")
    notes.add(conn, "t1", content="checkout deploys go through the canary first")
    notes.add(conn, "t1", content="MUST NOT deploy on Friday", kind="constraint", pinned=True)
    notes.add(conn, "t2", content="checkout service deploy doubled p99 latency")
    handoffs.record(conn, "t2", from_agent="hermes", to_agent="codex", objective="checkout deploy latency traced")
    handoffs.record(conn, "t1", from_agent="codex", objective="checkout deploy prepared")
    memories.retain(conn, "checkout service deploys take ten minutes", project="Shop")
    facts.assert_fact(conn, subject="service-checkout", predicate="deploys-to", obj="cluster-eu", source="codex")


def _entries(pack, printed=True):
    """Every packed entry of a printed pack, nested ones included (dep_context's handoff
    and receipt, prime's held pack), its tables read back into entries."""
    if printed:
        _assert_tables(pack)
        pack = builder.decode(pack)
    for key in ("task", "handoff", "next"):
        if isinstance(pack.get(key), dict):
            yield pack[key]
    for key in ("dependencies", "notes", "related_notes", "related_handoffs", "related_facts", "related_semantic",
                "related_sessions", "receipts", "leases", "inbox", "constraints"):
        yield from pack.get(key) or ()
    for item in pack.get("dep_context") or ():
        yield item
        yield from (item[key] for key in ("handoff", "receipt") if key in item)
    if isinstance(pack.get("held"), dict):
        yield from _entries(pack["held"], printed=False)


def _assert_compact(pack):
    found = list(_entries(pack))
    assert found
    for entry in found:
        for key, value in entry.items():
            if key == "hash_ok":
                continue
            assert value not in EMPTY or value == 0 and value is not False, (key, entry)
        assert entry.get("kind") != "fact" or "engine" in entry or "subject" in entry  # a note's default kind is left out
        assert entry.get("source") != "operator" and entry.get("priority") != "P2" and "payload_hash" not in entry
    assert pack["pack_format"] == builder.PACK_FORMAT == 5
    _assert_lean(pack)
    return found


def _assert_tables(pack):
    """Every entry list of a printed pack is a table: a header row of column names (a prefix of
    its documented columns), then rows no longer than the header that never end on a null."""
    for key, value in pack.items():
        if key in builder.TABLES and value:
            columns = builder.TABLES[key].columns
            header, rows = packview.unhoist(value)[0], packview.unhoist(value)[1:]
            assert rows and header == list(columns[:len(header)]), (key, header)
            assert all(type(row) is list and row and row[-1] is not None and len(row) <= len(header) for row in rows)
            assert max(len(row) for row in rows) == len(header), (key, value)  # no column that every row leaves out
        elif key in ("held", "recall") and isinstance(value, dict):
            _assert_tables(value)


# what every pack (and a recall bundle) always carries, whatever its values
ALWAYS = {"used_chars", "truncated", "pack_format"}


def _assert_lean(pack):
    """The envelope says only what is so: no zero counter, empty list, null or false value."""
    assert ALWAYS <= set(pack), set(pack)
    for key, value in pack.items():
        if key in ALWAYS or key in ("recall", "held"):
            continue
        assert value not in EMPTY and value != 0 and value is not False, (key, value)
    if isinstance(pack.get("held"), dict):
        for key, value in pack["held"].items():
            if key != "sections":
                assert value not in EMPTY and value != 0 and value is not False, (key, value)


def test_compact_drops_empty_default_and_implied_keys_and_keeps_what_says_something():
    entry = {"a": None, "b": False, "c": 0, "d": "", "e": [], "f": {}, "g": "x", "hash_ok": False, "h": True,
             "kind": "fact", "source": "codex", "task_id": "t1"}
    assert builder.compact(entry, implied=("task_id",), defaults=builder.NOTE_DEFAULTS) == {
        "c": 0, "g": "x", "hash_ok": False, "h": True, "source": "codex"}
    assert builder.compact({"hash_ok": None})["hash_ok"] is None  # no seal differs from a broken one


def test_the_defaults_match_the_stores_defaults(conn):
    assert builder.NOTE_DEFAULTS == {"kind": notes.DEFAULT_KIND, "source": notes.DEFAULT_SOURCE}
    assert builder.MEMORY_DEFAULTS == {"kind": memories.DEFAULT_KIND, "source": memories.DEFAULT_SOURCE}
    assert builder.MEMORY_ENGINE == memories.ENGINE  # the engine a memory row leaves implied
    import inspect

    assert builder.TASK_DEFAULTS["priority"] == inspect.signature(tasks.create).parameters["priority"].default
    assert tasks.create(conn, project="Shop", title="A new task")["status"] == builder.TASK_DEFAULTS["status"]


def test_every_pack_carries_compact_entries(conn):
    _world(conn)
    printed = context.pack_context(conn, "t1")
    entries = _assert_compact(printed)
    own = builder.decode(printed)
    assert own["handoff"] == {"id": own["handoff"]["id"], "from_agent": "codex", "objective": "checkout deploy prepared",
                              "created_at": own["handoff"]["created_at"]}
    pinned, plain = own["notes"]
    assert pinned["pinned"] is True and pinned["kind"] == "constraint" and "kind" not in plain and "pinned" not in plain
    assert "task_id" not in pinned and "expires_at" not in pinned and "superseded_at" not in pinned
    assert len(entries) >= 4
    bundle = recall.recall(conn, "t1", agent="codex", params=recall.make_params(**ALL))
    _assert_compact(bundle)
    bundle = builder.decode(bundle)
    assert bundle["related_notes"] and bundle["related_handoffs"] and bundle["dep_context"]
    assert bundle["related_facts"] and bundle["related_semantic"]
    assert bundle["dep_context"][0]["handoff"]["objective"] == "checkout database ready"
    assert bundle["dep_context"][0]["receipt"]["hash_ok"] is True
    resumed = recall.resume(conn, "t1", agent="codex", params=recall.make_params(**ALL))
    _assert_compact(resumed["recall"])
    tasks.create(conn, task_id="t3", project="Shop", title="Checkout deploy dashboard")
    dispatched = recall.next_and_recall(conn, params=recall.make_params(**ALL), claim=True, owner="opencode",
                                        project="Shop")
    assert dispatched["task"]["id"] in ("t2", "t3")
    _assert_compact(dispatched["recall"])
    primed = prime.prime(conn, "codex", fmt="json")
    _assert_compact(primed)
    primed = builder.decode(primed)
    assert primed["constraints"] and "source" not in primed["constraints"][0]


def test_compact_packs_stay_deterministic(conn):
    _world(conn)
    params = recall.make_params(**ALL)
    first = recall.bundle(conn, "t1", "codex", params)
    clock.advance(seconds=30)
    again = recall.bundle(conn, "t1", "codex", params)
    assert (first["digest"], first["core_digest"]) == (again["digest"], again["core_digest"])
    assert canonical_json(context.pack_context(conn, "t1")) == canonical_json(context.pack_context(conn, "t1"))
    assert prime.build(conn, "codex")["digest"] == prime.build(conn, "codex")["digest"]


def test_used_chars_is_the_compact_cost(conn):
    """The header and the handoff cost their JSON, every list entry the characters of its row;
    a table's header row costs nothing (like the envelope's keys)."""
    _world(conn)
    pack = recall.pack(conn, "t1", recall.make_params(**ALL))
    lists = ("dependencies", "notes", "related_notes", "related_handoffs", "dep_context", "related_facts",
             "related_semantic")
    assert all(pack[name] for name in lists[1:])
    charged = [pack.get("task"), pack.get("handoff")] + [row for name in lists
                                                         for row in packview.unhoist(pack.get(name, [[]]))[1:]]
    assert pack["used_chars"] == sum(len(canonical_json(item)) for item in charged if item is not None)


def _friday(conn, description=""):
    tasks.create(conn, task_id="t1", project="Shop", title="Deploy the checkout service", description=description)
    for n in range(3):
        notes.add(conn, "t1", content=f"checkout deploy observation number {n} about the canary rollout")
    notes.add(conn, "t1", content="MUST NOT deploy on Friday", kind="constraint", pinned=True)


def test_budget_300_keeps_the_pinned_friday_constraint_through_the_door(conn, cli_json):
    _friday(conn)
    printed = cli_json("autopilot", "context", "t1", "--budget", "300")
    # the pin first, in a row of 67 characters (pack format 3 charged it 116), which leaves
    # room for one of the three unpinned notes as well; their one date prints once, in the header
    assert printed["notes"] == [["id", "kind", "source", {"created_at": "2026-08-21"}, "content", "pinned"],
                                [4, "constraint", None, "MUST NOT deploy on Friday", True],
                                [1, None, None, "checkout deploy observation number 0 about the canary rollout"]]
    assert len(canonical_json(packview.unhoist(printed["notes"])[1])) == 67
    pack = builder.decode(printed)
    assert pack["notes"][0] == {"id": 4, "kind": "constraint", "created_at": "2026-08-21",
                                "content": "MUST NOT deploy on Friday", "pinned": True}
    assert pack["notes_pinned_packed"] == 1 and pack["notes_dropped"] == 2 and pack["truncated"] is True
    assert pack["task"]["title"] == "Deploy the checkout service" and pack["used_chars"] <= 300


def test_a_long_description_yields_to_the_pinned_notes(conn):
    _friday(conn, description="Roll the checkout service to every region " * 20)
    pack = builder.decode(context.pack_context(conn, "t1", budget=300))
    assert [n["content"] for n in pack["notes"]] == ["MUST NOT deploy on Friday"]
    assert pack["task"]["description_truncated"] is True and pack["used_chars"] <= 300
    roomy = builder.decode(context.pack_context(conn, "t1", budget=4000))
    assert "description_truncated" not in roomy["task"] and len(roomy["notes"]) == 4


def test_a_budget_too_small_for_header_and_pins_keeps_the_header_first(conn):
    _friday(conn)
    bare = len(canonical_json({"description_truncated": True, "project": "Shop", "status": "queued",
                               "title": "Deploy the checkout service"}))
    pack = builder.decode(context.pack_context(conn, "t1", budget=bare + 10))
    assert pack["task"]["title"] == "Deploy the checkout service" and "notes" not in pack  # lean: none packed
    assert pack["truncated"] is True and pack["notes_dropped"] == 4 and pack["notes_total_live"] == 4


@pytest.mark.parametrize("budget", ["0", "-1", "abc", ""])
def test_bad_budgets_are_refused_and_nothing_changes(conn, cli, budget):
    _friday(conn)
    before = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    rc, out, err = cli("autopilot", "context", "t1", "--budget", budget)
    assert rc in (1, 2) and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == before


def test_the_pack_format_is_in_every_pack_json(conn, cli_json):
    _friday(conn)
    assert cli_json("autopilot", "context", "t1")["pack_format"] == 5
    assert cli_json("autopilot", "recall", "t1", "--agent", "codex")["pack_format"] == 5
    leases.claim(conn, "t1", "codex")
    assert cli_json("autopilot", "prime", "--agent", "codex", "--format", "json")["pack_format"] == 5
    assert json.loads(json.dumps(pack_params.DEFAULT_BUDGET)) == 4000


def test_the_envelope_is_lean_and_absence_means_zero_empty_or_null(conn, cli_json):
    tasks.create(conn, task_id="t1", project="Shop", title="Deploy the checkout service")
    pack = cli_json("autopilot", "context", "t1")
    # nothing but the header: no notes, handoff, dependencies or their counters; the default
    # budget and sections left out (format 5)
    assert set(pack) == {"task_id", "used_chars", "truncated", "pack_format", "task"}
    assert pack["truncated"] is False
    assert builder.decode(pack)["sections"] == ["task", "handoff", "dependencies", "notes"]
    assert builder.decode(pack)["budget"] == pack_params.DEFAULT_BUDGET
    bundle = cli_json("autopilot", "recall", "t1", "--agent", "codex")
    # never leased: no lease; no live handoff: the core digest is the digest, printed once
    assert "lease" not in bundle and "receipts" not in bundle and "grant" not in bundle
    assert {"digest", "core_digest", "recalled_at"} <= set(bundle) and "agent" not in bundle
    read = builder.decode(bundle)
    assert read["lease"] == {"epoch": 0} and read["core_digest"] == bundle["digest"]
    # a counter that is not zero is there, and a packed handoff says so
    notes.add(conn, "t1", content="MUST NOT deploy on Friday", kind="constraint", pinned=True)
    handoffs.record(conn, "t1", from_agent="codex", objective="canary at 10 percent")
    pack = cli_json("autopilot", "context", "t1")
    # the notes counters the table shows are left out (one row); the spec's pinned count stays
    assert pack["notes_pinned_packed"] == 1 and len(pack["notes"]) == 2
    assert "notes_packed" not in pack and "notes_total_live" not in pack
    assert builder.decode(pack)["notes_packed"] == builder.decode(pack)["notes_total_live"] == 1
    assert pack["handoff_packed"] is True and pack["handoff"]["objective"] == "canary at 10 percent"
    assert "notes_dropped" not in pack and "dependencies_total" not in pack


def test_lean_drops_only_what_says_nothing():
    keys = {"n": 0, "m": 2, "flag": False, "on": True, "gone": None, "empty": [], "items": [{"id": 1}], "s": "",
            "word": "project", "score": 0.0}
    assert builder.lean(keys) == {"m": 2, "on": True, "items": [{"id": 1}], "word": "project", "score": 0.0}
    assert builder.flatten([("x", {"x": [], "x_total": 0}), ("y", {"y": [1], "y_total": 1})]) == {
        "sections": ["x", "y"], "y": [1], "y_total": 1}
