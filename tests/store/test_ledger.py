"""The audit ledger: one event per mutation, chain verification, the event stream."""

import json

import pytest

from mindos.core import clock
from mindos.store import db, ledger
from mindos.work import receipts, tags, tasks
from mindos.errors import InvalidInput
from conftest import make_task


def _events(conn):
    return [tuple(r) for r in conn.execute("SELECT entity_type, entity_id, action FROM audit_events ORDER BY id")]


def _seed(conn, count=5):
    for n in range(1, count + 1):
        tasks.create(conn, project="P", title=f"task {n}", task_id=f"t{n}")
        clock.advance(minutes=1)


def test_every_mutation_appends_exactly_one_event(conn):
    steps = [
        (lambda: tasks.create(conn, project="P", title="one", task_id="t1"), "created"),
        (lambda: tasks.update(conn, "t1", title="renamed", priority="P1"), "updated"),
        (lambda: tags.add(conn, "t1", ["infra"]), "task_tagged"),
        (lambda: tags.remove(conn, "t1", ["infra"]), "task_untagged"),
        (lambda: receipts.add(conn, "t1", "ci", {"ok": True}), "receipt_added"),
        (lambda: tasks.update(conn, "t1", status="cancelled"), "updated"),
    ]
    for step, action in steps:
        before = _events(conn)
        step()
        after = _events(conn)
        assert after[:-1] == before and after[-1] == ("task", "t1", action)
    assert ledger.verify_chain(conn) == {"ok": True, "events": len(steps), "problems": []}


def test_update_event_records_the_new_values(conn):
    tasks.create(conn, project="P", title="one", task_id="t1")
    tasks.update(conn, "t1", title="Corrected", description="Fuller", project="Renamed", priority="P1")
    payload = json.loads(conn.execute("SELECT payload_json FROM audit_events ORDER BY id DESC").fetchone()[0])
    assert payload == {"title": "Corrected", "description": "Fuller", "project": "Renamed", "priority": "P1"}


def test_empty_ledger_verifies(conn):
    assert ledger.verify_chain(conn) == {"ok": True, "events": 0, "problems": []}


@pytest.mark.parametrize("column,value", [
    ("payload_json", '{"project":"P","title":"forged"}'),
    ("action", "completed"),
    ("entity_id", "t9"),
    ("created_at", "2020-01-01T00:00:00Z"),
    ("payload_json", 5),
])
def test_tampering_with_a_historical_row_is_a_hash_mismatch(conn, column, value):
    _seed(conn)
    conn.execute(f"UPDATE audit_events SET {column} = ? WHERE id = 2", (value,))
    report = ledger.verify_chain(conn)
    assert report["ok"] is False
    assert report["events"] == 5
    assert report["problems"] == [{"event_id": 2, "kind": "hash_mismatch"}]


def test_deleting_a_middle_row_is_a_broken_link(conn):
    _seed(conn)
    conn.execute("DELETE FROM audit_events WHERE id = 3")
    report = ledger.verify_chain(conn)
    assert report["ok"] is False
    assert report["problems"] == [{"event_id": 4, "kind": "broken_link", "previous_event_id": 2}]


def test_the_indexed_link_query_agrees_with_the_scan(conn):
    _seed(conn, 6)
    conn.execute("DELETE FROM audit_events WHERE id IN (2, 5)")
    conn.execute("UPDATE audit_events SET prev_hash = ? WHERE id = 1", ("e" * 64,))
    scanned = [p["event_id"] for p in ledger.verify_chain(conn)["problems"] if p["kind"] == "broken_link"]
    assert scanned == [event for event, _previous in ledger.broken_links(conn)] == [1, 3, 6]
    assert ledger.broken_links(conn) == [(1, None), (3, 1), (6, 4)]


def test_relinking_a_row_reports_both_problems_in_id_order(conn):
    _seed(conn)
    conn.execute("UPDATE audit_events SET prev_hash = ? WHERE id = 4", ("f" * 64,))
    assert ledger.verify_chain(conn)["problems"] == [
        {"event_id": 4, "kind": "broken_link", "previous_event_id": 3}, {"event_id": 4, "kind": "hash_mismatch"}]


def test_verify_chain_agrees_with_append_event_on_unicode_payloads(conn):
    tasks.create(conn, project="P", title='naïve "quoted" line ✓ 🚀', description='multi\nline', task_id="u1")
    tasks.update(conn, "u1", description="\u2028 separator and \\ backslash")
    assert ledger.verify_chain(conn)["ok"]


def test_verify_chain_cli_exits_1_when_broken(conn, cli):
    _seed(conn, 3)
    rc, out, err = cli("autopilot", "verify-chain")
    assert (rc, err, json.loads(out)["ok"]) == (0, "", True)
    conn.execute("DELETE FROM audit_events WHERE id = 2")
    rc, out, err = cli("autopilot", "verify-chain")
    assert rc == 1 and err == ""
    assert json.loads(out)["problems"] == [{"event_id": 3, "kind": "broken_link", "previous_event_id": 1}]


def test_events_are_newest_first_with_parsed_payloads_and_clip_counts(conn):
    _seed(conn, 5)
    result = ledger.events(conn, limit=2)
    assert [e["id"] for e in result["events"]] == [5, 4]
    assert result["total_matching"] == 5 and result["truncated"] is True
    assert result["events"][0]["payload"]["title"] == "task 5"
    assert "verify" not in result
    whole = ledger.events(conn, limit=50)
    assert whole["truncated"] is False and len(whole["events"]) == 5


def test_events_filters(conn):
    _seed(conn, 3)  # created at 09:00, 09:01, 09:02
    tags.add(conn, "t2", ["infra"])  # 09:03
    assert [e["id"] for e in ledger.events(conn, action="task_tagged")["events"]] == [4]
    assert [e["id"] for e in ledger.events(conn, entity_id="t2")["events"]] == [4, 2]
    window = ledger.events(conn, since="2026-08-21T09:01:00Z", until="2026-08-21T11:02:00+02:00")
    assert [e["id"] for e in window["events"]] == [3, 2]
    assert window["total_matching"] == 2
    assert ledger.events(conn, action="no_such_action") == {"events": [], "total_matching": 0, "truncated": False}
    assert ledger.events(conn, limit=1, verify=True)["verify"]["ok"] is True


@pytest.mark.parametrize("kwargs,flag", [
    ({"since": "yesterday"}, "--since"),
    ({"until": "2026-13-01"}, "--until"),
    ({"since": "2026-08-21T25:00:00Z"}, "--since"),
    ({"limit": 0}, "--limit"),
    ({"limit": -3}, "--limit"),
])
def test_events_refuse_bad_values_naming_the_flag(conn, kwargs, flag):
    with pytest.raises(InvalidInput, match=f"^invalid {flag}"):
        ledger.events(conn, **kwargs)


def test_events_cli_bad_timestamp_names_the_flag(conn, cli):
    rc, out, err = cli("autopilot", "events", "--since", "not-a-time")
    assert rc == 2 and out == ""
    assert err.startswith("invalid --since:") and err.count("\n") == 1


def test_events_cli(conn, cli_json):
    _seed(conn, 2)
    result = cli_json("autopilot", "events", "--entity-id", "t1", "--verify", "--limit", "5")
    assert [e["action"] for e in result["events"]] == ["created"]
    assert result["verify"] == {"ok": True, "events": 2, "problems": []}


def test_count_action(conn):
    _seed(conn, 2)
    assert ledger.count_action(conn, "created") == 2
    assert ledger.count_action(conn, "updated") == 0


def test_refusal_events_chain_like_any_other(conn):
    _seed(conn, 1)
    with pytest.raises(InvalidInput):
        with db.write(conn):
            ledger.append_refusal(conn, "task", "t1", "completion_blocked_evidence", {"missing": ["ci"]})
            raise InvalidInput("refused")
    assert _events(conn)[-1] == ("task", "t1", "completion_blocked_evidence")
    assert ledger.verify_chain(conn)["ok"]


def test_a_row_rewritten_and_rehashed_in_place_is_named(conn):
    # a forger who edits event 2 and recomputes its hash keeps row 2 self-consistent; the
    # link from event 3 breaks, and the report names the rewritten row as its predecessor
    _seed(conn)
    row = conn.execute("SELECT * FROM audit_events WHERE id = 2").fetchone()
    forged = '{"forged":true}'
    digest = ledger.event_hash(2, row["prev_hash"], row["entity_type"], row["entity_id"], row["action"], forged,
                           row["created_at"])
    conn.execute("UPDATE audit_events SET payload_json = ?, hash = ? WHERE id = 2", (forged, digest))
    assert ledger.verify_chain(conn)["problems"] == [{"event_id": 3, "kind": "broken_link", "previous_event_id": 2}]


def test_tampered_unparsable_payload_is_shown_raw_not_a_crash(conn, cli):
    _seed(conn, 3)
    conn.execute("UPDATE audit_events SET payload_json = '{bad' WHERE id = 2")
    rc, out, err = cli("autopilot", "events", "--verify")
    assert rc == 1 and err == ""  # the check ran and found the tampering
    report = json.loads(out)
    tampered = [e for e in report["events"] if e["id"] == 2][0]
    assert tampered["payload"] is None and tampered["payload_raw"] == "{bad"
    assert report["verify"]["problems"] == [{"event_id": 2, "kind": "hash_mismatch"}]
    entity = tampered["entity_id"]
    rc, out, err = cli("autopilot", "show", entity)
    assert rc == 0 and err == ""
    assert [e for e in json.loads(out)["audit"] if e["id"] == 2][0]["payload_raw"] == "{bad"


def test_events_verify_exits_0_on_an_intact_chain(conn, cli):
    _seed(conn, 2)
    rc, out, err = cli("autopilot", "events", "--verify")
    assert (rc, err) == (0, "") and json.loads(out)["verify"]["ok"] is True


def test_a_fixed_event_has_a_pinned_hash():
    """Stored chains depend on this exact preimage (fields joined by 0x1f) and digest."""
    from mindos.core.canonical import canonical_json

    payload = canonical_json({"title": "Renew cert", "priority": "P1"})
    assert ledger.event_hash(1, ledger.GENESIS_HASH, "task", "t1", "created", payload, "2026-01-01T00:00:00Z") == (
        "b1e248e6ef28d3a720343a23e77267967af319d082dca4ec99bab2ef92a5e8c8")
    assert ledger.preimage(1, "p", "task", "t1", "created", "{}", "ts") == "1\x1fp\x1ftask\x1ft1\x1fcreated\x1f{}\x1fts"


def test_verify_recomputes_with_the_same_hash_as_append(conn):
    make_task(conn, "t1")
    row = conn.execute("SELECT * FROM audit_events ORDER BY id DESC LIMIT 1").fetchone()
    assert row["hash"] == ledger.event_hash(row["id"], row["prev_hash"], row["entity_type"], row["entity_id"],
                                            row["action"], row["payload_json"], row["created_at"])
    assert ledger.height(conn) == row["id"]


def test_a_chain_hashed_in_python_verifies_with_hashlib_and_back(conn, monkeypatch):
    """Events appended by the pure-Python SHA-256 (a fresh process's first hashes) and by
    hashlib are the same chain: verify_chain (hashlib) accepts both, and every stored hash
    recomputes in Python."""
    import sys

    from mindos.core import canonical

    _seed(conn, 3)  # hashlib (the test process has it loaded)
    used = []
    real = canonical._sha256_python
    with monkeypatch.context() as patched:
        patched.delitem(sys.modules, "hashlib", raising=False)
        patched.setattr(canonical, "_sha256", None)
        patched.setattr(canonical, "_pure_left", 10**6)
        patched.setattr(canonical, "_sha256_python", lambda data: used.append(len(data)) or real(data))
        for n in range(4, 9):
            tasks.create(conn, project="P", title=f"task {n} ✓ " + "é" * n * 9, task_id=f"t{n}")
    assert len(used) == 5
    for n in (1, 5):
        tasks.update(conn, f"t{n}", title=f"renamed {n}")  # hashlib again
    assert len(used) == 5
    assert ledger.verify_chain(conn) == {"ok": True, "events": 10, "problems": []}
    for row in conn.execute("SELECT id, prev_hash, entity_type, entity_id, action, payload_json, created_at, hash"
                            " FROM audit_events ORDER BY id"):
        preimage = ledger.preimage(*row[:7]).encode("utf-8")
        assert canonical._sha256_python(preimage) == row[7]
