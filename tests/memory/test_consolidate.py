"""Memory consolidation: deterministic clustering, pin-aware canonicals, history, idempotence."""

import json
import time

import pytest

from mindos.core import clock
from mindos.memory import consolidate, notes
from mindos.store import db
from mindos.work import tasks


@pytest.fixture
def task(conn):
    tasks.create(conn, project="Trove", title="memory", task_id="t1")
    return "t1"


def _add(conn, task, content, **kw):
    clock.advance(minutes=1)
    return notes.add(conn, task, content=content, **kw)["id"]


def _state(conn):
    return ([tuple(r) for r in conn.execute("SELECT * FROM notes ORDER BY id")],
            tuple(conn.execute("SELECT count(*), max(hash) FROM audit_events").fetchone()))


def _live(conn, task):
    return [n["id"] for n in notes.list_notes(conn, task)]


A = "the api rate limit is sixty requests per minute"
A2 = "the api rate limit is sixty requests per minute now"
A3 = "the api rate limit is sixty requests per minute today"
B = "deploys are frozen on fridays until the launch"
B2 = "deploys are frozen on fridays until the big launch"


def test_dry_run_plans_without_touching_anything(cli, conn, task):
    a, a2, b = _add(conn, task, A), _add(conn, task, A2), _add(conn, task, B)
    before = _state(conn)
    rc, out, err = cli("ops", "consolidate", "--dry-run")
    assert rc == 0 and err == ""
    plan = json.loads(out)
    assert plan["dry_run"] is True and plan["notes_consolidated"] == 0 and plan["threshold"] == 0.8
    assert plan["clusters"] == [{"task_id": task, "kept_note_id": a2, "pinned": False,
                                 "merged": [{"note_id": a, "similarity": 0.9}]}]
    assert _state(conn) == before and b in _live(conn, task)


def test_merge_supersedes_losers_into_the_newest_and_audits(cli_json, conn, task):
    a, b, a2, b2, a3 = (_add(conn, task, A), _add(conn, task, B), _add(conn, task, A2), _add(conn, task, B2),
                        _add(conn, task, A3))
    result = cli_json("ops", "consolidate")
    assert result["notes_consolidated"] == 3 and result["clusters_total"] == 2
    assert [(c["kept_note_id"], [m["note_id"] for m in c["merged"]]) for c in result["clusters"]] == [
        (a3, [a, a2]), (b2, [b])]
    assert _live(conn, task) == [b2, a3]
    for loser, kept in ((a, a3), (a2, a3), (b, b2)):
        note = notes.get(conn, loser)
        assert note["superseded_by"] == kept and note["superseded_at"] is not None
    events = [json.loads(r[0]) for r in conn.execute(
        "SELECT payload_json FROM audit_events WHERE action = 'note_consolidated' ORDER BY id")]
    assert [(e["note_id"], e["kept_note_id"]) for e in events] == [(a, a3), (a2, a3), (b, b2)]
    assert all(0.8 <= e["similarity"] <= 1 for e in events)
    assert cli_json("autopilot", "metrics")["notes_consolidated_total"] == 3
    history = notes.history(conn, a)
    assert [n["id"] for n in history["chain"]] == [a, a2, a3] and history["head_id"] == a3


def test_pinned_beats_newer_and_newest_pin_wins(conn, task):
    pin = _add(conn, task, A, pinned=True)
    newer = _add(conn, task, A2)
    result = consolidate.consolidate(conn)
    assert result["clusters"][0]["kept_note_id"] == pin and result["clusters"][0]["pinned"] is True
    assert _live(conn, task) == [pin] and notes.get(conn, newer)["superseded_by"] == pin
    second_pin = _add(conn, task, A3, pinned=True)
    consolidate.consolidate(conn)
    assert _live(conn, task) == [second_pin] and notes.get(conn, pin)["superseded_by"] == second_pin


def test_greedy_clustering_compares_with_the_current_canonical(conn, task):
    # w1 ~ w2 (0.8), w2 ~ w3 (0.8) but w1 !~ w3: w3 joins because w2 became the canonical
    w1 = _add(conn, task, "a b c d e f g h")
    w2 = _add(conn, task, "a b c d e f g h i j")
    w3 = _add(conn, task, "a b c d e f g h i j k l")
    assert notes.jaccard("a b c d e f g h", "a b c d e f g h i j k l") < 0.8
    plan = consolidate.consolidate(conn, dry_run=True)
    assert [(c["kept_note_id"], [m["note_id"] for m in c["merged"]]) for c in plan["clusters"]] == [(w3, [w1, w2])]
    assert consolidate.consolidate(conn, dry_run=True) == plan  # same rows, same plan


def test_idempotent_second_pass_finds_nothing(conn, task):
    _add(conn, task, A), _add(conn, task, A2), _add(conn, task, B)
    assert consolidate.consolidate(conn)["notes_consolidated"] == 1
    before = _state(conn)
    again = consolidate.consolidate(conn)
    assert again["notes_consolidated"] == 0 and again["clusters"] == []
    assert _state(conn) == before


def test_retirees_are_never_candidates_but_expired_pins_are(conn, task):
    old = _add(conn, task, A, ttl_hours=1)
    clock.advance(hours=2)
    fresh = _add(conn, task, A2)
    assert consolidate.consolidate(conn)["clusters"] == []
    assert notes.get(conn, old)["superseded_by"] is None
    pin = _add(conn, task, B, pinned=True, ttl_hours=1)
    clock.advance(hours=2)
    twin = _add(conn, task, B2)
    result = consolidate.consolidate(conn)
    assert [(c["kept_note_id"], [m["note_id"] for m in c["merged"]]) for c in result["clusters"]] == [(pin, [twin])]
    assert fresh in _live(conn, task)


def test_scoped_to_one_task_and_never_across_tasks(cli_json, conn, task):
    tasks.create(conn, project="Trove", title="other", task_id="t2")
    a = _add(conn, task, A)
    other = _add(conn, "t2", A2)
    assert consolidate.consolidate(conn)["clusters"] == []  # same text on two tasks is not a cluster
    b = _add(conn, "t2", A3)
    result = cli_json("ops", "consolidate", "--task", task)
    assert result["clusters"] == [] and result["tasks_scanned"] == 1
    result = cli_json("ops", "consolidate", "--task", "t2")
    assert result["clusters"][0]["kept_note_id"] == b and _live(conn, "t2") == [b]
    assert _live(conn, task) == [a] and notes.get(conn, other)["superseded_by"] == b


def test_threshold_flag_and_environment(cli_json, conn, task, monkeypatch):
    _add(conn, task, "alpha beta gamma delta")
    _add(conn, task, "alpha beta gamma epsilon")  # 0.6
    assert cli_json("ops", "consolidate", "--dry-run")["clusters"] == []
    assert len(cli_json("ops", "consolidate", "--dry-run", "--threshold", "0.6")["clusters"]) == 1
    monkeypatch.setenv("AUTOPILOT_NEAR_DUP_THRESHOLD", "0.5")
    assert cli_json("ops", "consolidate", "--dry-run")["threshold"] == 0.5


@pytest.mark.parametrize("argv, code", [
    (["--threshold", "0"], 2), (["--threshold", "1.5"], 2), (["--threshold", "nan"], 2), (["--threshold", "x"], 2),
    (["--task", "ghost"], 1), (["--task", "../etc"], 2), (["--task", "t1' OR 1=1"], 2),
])
def test_bad_input_changes_nothing(cli, conn, task, argv, code):
    _add(conn, task, A), _add(conn, task, A2)
    before = _state(conn)
    rc, out, err = cli("ops", "consolidate", *argv)
    assert rc == code and out == "" and err.count("\n") == 1
    assert _state(conn) == before


def test_a_concurrent_supersede_keeps_its_own_successor(conn, task, monkeypatch):
    a, a2, a3 = _add(conn, task, A), _add(conn, task, A2), _add(conn, task, A3)
    real = consolidate._cluster

    def racing(rows, threshold):
        # another writer supersedes `a` after we read it but before our guarded UPDATE
        conn.execute("UPDATE notes SET superseded_by = ?, superseded_at = 'x' WHERE id = ?", (a2, a))
        return real(rows, threshold)

    monkeypatch.setattr(consolidate, "_cluster", racing)
    result = consolidate.consolidate(conn)
    assert result["notes_consolidated"] == 1
    assert notes.get(conn, a)["superseded_by"] == a2
    assert notes.get(conn, a2)["superseded_by"] == a3


def test_fleet_scale_pass_is_fast(conn):
    now = clock.now_iso()
    with db.write(conn):
        for t in range(1000):
            conn.execute("INSERT INTO tasks(id, project, title, created_at, updated_at) VALUES (?, 'P', 'x', ?, ?)",
                         (f"s{t}", now, now))
            topics = ["cache warmup window is ten minutes", "postgres pool size stays at twenty",
                      "deploys freeze on fridays", "retry budget is three attempts with backoff",
                      "retry budget is three attempts with backoff"]  # the last restates the fourth
            for words in topics:
                conn.execute("INSERT INTO notes(task_id, kind, content, created_at) VALUES (?, 'fact', ?, ?)",
                             (f"s{t}", words, now))
    started = time.perf_counter()
    result = consolidate.consolidate(conn)
    assert time.perf_counter() - started < 5
    assert result["notes_consolidated"] == 1000
    assert consolidate.consolidate(conn, dry_run=True)["clusters"] == []
