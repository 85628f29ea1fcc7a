"""The temporal fact graph (mindos/memory/facts.py)."""

import pytest

from mindos.core import clock
from mindos.store import ledger as audit
from mindos.errors import Conflict, InvalidInput, NotFound, Refused
from mindos.memory import facts
from conftest import make_task


def _state(conn):
    return (conn.execute("SELECT count(*), coalesce(sum(retracted_at IS NULL), 0) FROM facts").fetchone()[:],
            conn.execute("SELECT count(*) FROM audit_events").fetchone()[0])


def _assert(conn, obj="postgres-14", **kw):
    kw.setdefault("subject", "service-auth")
    kw.setdefault("predicate", "uses")
    kw.setdefault("source", "codex")
    return facts.assert_fact(conn, obj=obj, **kw)


def test_assert_dedups_inside_the_window_and_records_fresh_after_expiry(conn):
    make_task(conn, "t1")
    first = _assert(conn, task="t1", valid_hours=2)
    assert (first["deduplicated"], first["task_id"], first["valid_until"]) == (False, "t1", "2026-08-21T11:00:00Z")
    again = _assert(conn)
    assert again["id"] == first["id"] and again["deduplicated"] is True
    assert audit.events(conn, action="fact_deduplicated")["events"][0]["entity_id"] == str(first["id"])
    clock.advance(hours=2)
    assert facts.list_facts(conn) == []
    fresh = _assert(conn)
    assert fresh["id"] != first["id"] and fresh["valid_until"] is None
    history = facts.list_facts(conn, include_all=True)
    assert [(f["id"], f["live"]) for f in history] == [(fresh["id"], True), (first["id"], False)]


def test_retract_closes_the_window_with_a_reason(conn):
    fact = _assert(conn)
    clock.advance(hours=1)
    closed = facts.retract(conn, fact["id"], reason="migrated to postgres-16")
    assert (closed["live"], closed["retract_reason"], closed["valid_until"]) == \
        (False, "migrated to postgres-16", clock.now_iso())
    assert facts.list_facts(conn, subject="service-auth") == []
    with pytest.raises(Conflict, match="already retracted"):
        facts.retract(conn, fact["id"], reason="again")
    expiring = _assert(conn, obj="redis-7", valid_hours=1)
    clock.advance(hours=1)
    with pytest.raises(Conflict, match="not currently valid"):
        facts.retract(conn, expiring["id"], reason="late")


@pytest.mark.parametrize("kw, error, flag", [
    ({"subject": "Service Auth"}, InvalidInput, "--subject"),
    ({"predicate": ""}, InvalidInput, "--predicate"),
    ({"obj": "x" * 65}, InvalidInput, "--object"),
    ({"obj": "' OR 1=1 --"}, InvalidInput, "--object"),
    ({"source": ""}, InvalidInput, "--source"),
    ({"task": "nope"}, NotFound, "^unknown task 'nope'$"),
    ({"task": "bad id!"}, InvalidInput, "--task"),
    ({"valid_hours": 0}, InvalidInput, "--valid-hours"),
    ({"valid_hours": 10**9}, InvalidInput, "--valid-hours"),
    ({"source": "AKIAIOSFODNN7EXAMPLE"}, Refused, "secret guard"),
])
def test_bad_assert_is_refused_and_changes_nothing(conn, kw, error, flag):
    before = _state(conn)[0]
    events = _state(conn)[1]
    with pytest.raises(error, match=flag):
        _assert(conn, **kw)
    assert _state(conn)[0] == before
    if error is not Refused:
        assert _state(conn)[1] == events


def test_bad_retract_is_refused_and_changes_nothing(conn):
    fact = _assert(conn)
    before = _state(conn)
    for fid, reason, error in ((fact["id"], "", InvalidInput), ("x", "r", InvalidInput), (999, "r", NotFound),
                               ("1; DROP TABLE facts", "r", InvalidInput)):
        with pytest.raises(error):
            facts.retract(conn, fid, reason=reason)
    assert _state(conn) == before


def test_soft_task_link_survives_the_task(conn):
    make_task(conn, "t1")
    fact = _assert(conn, task="t1")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("DELETE FROM tasks WHERE id = 't1'")
    assert facts.get(conn, fact["id"])["task_id"] == "t1"


def test_search_substring_and_ranked(conn):
    _assert(conn)
    _assert(conn, subject="deploy-api", predicate="reads", obj="redis-cache")
    assert [f["object"] for f in facts.search(conn, "postgres")] == ["postgres-14"]
    ranked = facts.search(conn, "postgres", rank=True)
    assert [f["object"] for f in ranked] == ["postgres-14"] and ranked[0]["score"] > 0
    assert facts.search(conn, "%") == [] and facts.search(conn, "NEAR(a b)") == []
    assert facts.search(conn, '" OR *', rank=True) == []


def test_ranked_search_without_fts5_matches_any_word_by_substring(plain_conn):
    conn = plain_conn
    old = _assert(conn)
    clock.advance(seconds=5)
    newer = _assert(conn, subject="deploy-api", predicate="reads", obj="redis-cache")
    _assert(conn, subject="billing", predicate="writes-to", obj="mysql")
    # any word: the whole query is nowhere as one substring, its words are
    assert facts.search(conn, "postgres redis") == []
    ranked = facts.search(conn, "postgres redis", rank=True)
    assert [f["id"] for f in ranked] == [newer["id"], old["id"]] and "score" not in ranked[0]
    assert set(ranked[0]) == set(facts.search(conn, "redis")[0])  # the substring shape
    assert facts.search(conn, "!!!", rank=True) == [] and facts.search(conn, '" OR *', rank=True) == []
    facts.retract(conn, newer["id"], reason="moved")
    assert [f["id"] for f in facts.search(conn, "postgres redis", rank=True)] == [old["id"]]
    history = facts.search(conn, "postgres redis", rank=True, include_all=True)
    assert [(f["id"], f["live"]) for f in history] == [(old["id"], True), (newer["id"], False)]  # closed windows last


def test_metrics_counts(conn):
    fact = _assert(conn)
    _assert(conn, obj="redis-7")
    facts.retract(conn, fact["id"], reason="gone")
    assert facts.metrics(conn) == {"facts_total": 2, "facts_live": 1, "facts_closed": 1}


def test_cli(cli, cli_json):
    made = cli_json("autopilot", "fact-assert", "--subject", "service-auth", "--predicate", "uses", "--object",
                    "postgres-14", "--source", "codex")
    assert cli_json("autopilot", "facts", "--subject", "service-auth")[0]["id"] == made["id"]
    rc, out, err = cli("autopilot", "fact-retract", str(made["id"]))
    assert rc == 2 and out == "" and "--reason" in err
    closed = cli_json("autopilot", "fact-retract", str(made["id"]), "--reason", "moved")
    assert closed["live"] is False
    assert cli_json("autopilot", "facts", "--all")[0]["live"] is False
    rc, out, err = cli("autopilot", "fact-assert", "--subject", "A B", "--predicate", "p", "--object", "o",
                       "--source", "s")
    assert (rc, out) == (2, "") and err.count("\n") == 1
