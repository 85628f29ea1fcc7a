"""Answers with their history: when a current row replaced a hidden one, memory-search carries
the change on the answer and ranks the row that records the change right after it."""

import pytest

from conftest import make_task
from mindos.core import clock
from mindos.memory import facts, history, memories, notes
from mindos.memory import memory_search as search


def _keys(hits):
    return [(hit["kind"], hit["id"]) for hit in hits]


def _payments(conn, with_note=True, crowd=8):
    make_task(conn, "pay", project="Shop", title="payments knowledge")
    old = facts.assert_fact(conn, subject="service-payments", predicate="uses", obj="braintree-api", source="codex",
                            task="pay")
    clock.advance(hours=1)
    facts.assert_fact(conn, subject="service-payments", predicate="uses", obj="postgres-15", source="codex", task="pay")
    clock.advance(days=30)
    facts.retract(conn, old["id"], reason="processing fees doubled")
    new = facts.assert_fact(conn, subject="service-payments", predicate="uses", obj="stripe-api", source="codex",
                            task="pay")
    change = None
    if with_note:
        clock.advance(hours=1)
        change = notes.add(conn, "pay", content="Moved payments processing off Braintree onto Stripe in March")
    for n in range(crowd):  # newer rows that match the query better than the change note, worse than the fact
        clock.advance(hours=1)
        notes.add(conn, "pay", content=f"payments api call number {n} retried twice")
    clock.advance(hours=1)
    return old, new, change


def test_the_change_note_ranks_right_after_the_current_fact(conn, monkeypatch):
    old, new, change = _payments(conn)
    hits = search.memory_search(conn, "which payments api does the service use", project="Shop", limit=5)
    keys = _keys(hits)
    assert ("fact", new["id"]) in keys
    at = keys.index(("fact", new["id"]))
    assert keys[at + 1] == ("note", change["id"])
    answer, record = hits[at], hits[at + 1]
    assert answer["change"] == {"from": "service-payments uses braintree-api", "at": answer["change"]["at"],
                                "reason": "processing fees doubled"}
    assert record["history_of"] == {"kind": "fact", "id": new["id"]}
    assert ("fact", old["id"]) not in keys  # the replaced row itself stays hidden
    # without the change step (and the feedback, which names braintree too) the note is not
    # in the top 5
    monkeypatch.setattr(search, "FEEDBACK_WEIGHT", 0.0)
    plain = history.with_history
    try:
        history.with_history = lambda conn, ranked, **kw: ranked
        assert ("note", change["id"]) not in _keys(search.memory_search(
            conn, "which payments api does the service use", project="Shop", limit=5))
    finally:
        history.with_history = plain


def test_a_later_value_of_a_many_valued_predicate_replaced_nothing(conn):
    _payments(conn, with_note=False)
    hits = search.memory_search(conn, "service-payments postgres", project="Shop", limit=5)
    top = [hit for hit in hits if hit["kind"] == "fact" and "postgres" in hit["text"]]
    assert top and "change" not in top[0]  # asserted before braintree was retracted: it replaced nothing


def test_a_superseded_note_brings_its_change_record(conn):
    make_task(conn, "acc", project="Auth", title="accounts")
    first = notes.add(conn, "acc", content="Accounts lock after 5 failed logins")
    clock.advance(days=2)
    current = notes.supersede(conn, first["id"], content="Accounts lock after 10 failed logins")["note"]
    clock.advance(hours=1)
    record = notes.add(conn, "acc", content="Raised the lockout threshold from 5 to 10 after support tickets")
    for n in range(8):
        clock.advance(hours=1)
        notes.add(conn, "acc", content=f"failed logins dashboards panel {n}")
    hits = search.memory_search(conn, "how many failed logins lock an account", project="Auth", limit=5)
    keys = _keys(hits)
    at = keys.index(("note", current["id"]))
    assert keys[at + 1] == ("note", record["id"])
    assert hits[at]["change"]["from"] == "Accounts lock after 5 failed logins"
    assert ("note", first["id"]) not in keys


@pytest.mark.parametrize("project", ["Auth", None])  # None: fleet-wide memories
def test_a_change_record_outside_the_candidates_is_probed(conn, project):
    mem_old = memories.retain(conn, "Token cache runs on memcached", project=project)
    clock.advance(days=1)
    mem_new = memories.retain(conn, "Token cache runs on a redis cluster", project=project)
    memories.forget(conn, mem_old["id"], superseded_by=mem_new["id"])
    make_task(conn, "ops", project="Auth", title="ops log")
    clock.advance(hours=1)
    record = notes.add(conn, "ops", content="Swapped memcached out for redis last week")  # no query word
    hits = search.memory_search(conn, "token cache", project="Auth", limit=5)
    keys = _keys(hits)
    assert keys[0] == ("memory", mem_new["id"]) and keys[1] == ("note", record["id"])
    assert hits[1]["history_of"] == {"kind": "memory", "id": mem_new["id"]}


def test_an_unrelated_row_is_not_taken_for_a_change_record(conn):
    make_task(conn, "idx", project="Search", title="index")
    first = notes.add(conn, "idx", content="Index refresh interval is 30 seconds")
    clock.advance(days=1)
    current = notes.supersede(conn, first["id"], content="Index refresh interval is 5 seconds")["note"]
    for n in range(3):
        clock.advance(hours=1)
        notes.add(conn, "idx", content=f"Search index is rebuilt every 5 minutes from the change stream {n}")
    hits = search.memory_search(conn, "index refresh interval", project="Search", limit=5)
    assert hits[0]["id"] == current["id"] and "change" in hits[0]
    assert not any("history_of" in hit for hit in hits)


def test_results_without_history_are_unchanged_and_include_history_adds_nothing(conn):
    make_task(conn, "t1", project="Shop", title="t")
    notes.add(conn, "t1", content="checkout uses the canary lane")
    hits = search.memory_search(conn, "checkout canary", project="Shop")
    assert hits and not any("change" in hit or "history_of" in hit for hit in hits)
    old, new, change = _payments(conn)
    with_history = search.memory_search(conn, "which payments api does the service use", project="Shop",
                                        include_history=True, limit=50)
    assert not any("change" in hit or "history_of" in hit for hit in with_history)
    assert ("fact", old["id"]) in _keys(with_history)


def test_history_is_deterministic(conn):
    _payments(conn)
    first = search.memory_search(conn, "which payments api does the service use", project="Shop")
    assert search.memory_search(conn, "which payments api does the service use", project="Shop") == first


def test_memory_search_door_shows_the_change(conn, cli_json):
    old, new, change = _payments(conn)
    hits = cli_json("autopilot", "memory-search", "which payments api does the service use", "--project", "Shop",
                    "--limit", "5")
    answer = next(hit for hit in hits if hit["kind"] == "fact" and hit["id"] == new["id"])
    assert answer["change"]["reason"] == "processing fees doubled"
    assert any(hit.get("history_of") == {"kind": "fact", "id": new["id"]} for hit in hits)


@pytest.mark.parametrize("query", ['" OR braintree NEAR(', "a" * 1000, "-- DROP TABLE notes;"])
def test_injection_shaped_queries_are_plain_text(conn, cli, query):
    _payments(conn)
    before = conn.execute("SELECT count(*) FROM notes").fetchone()[0]
    rc, out, err = cli("autopilot", "memory-search", query, "--project", "Shop")
    assert rc == 0 and "Traceback" not in err
    assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == before
