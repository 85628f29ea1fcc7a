"""A tick records in one transaction: one commit for all its wakes, nothing of it left when it
fails half way (the next tick does it all again), and a commit before any external command so
no write lock is held while another process runs."""

import json
import os
import sys

import pytest
from moodkit import agent, later, room, run_tick, say  # noqa: F401 (agent, room, run_tick: fixtures)

from mindos.comms import moods, tick
from mindos.store import ledger

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def busy(room):
    """Four Moods of two members each, every member mentioned: eight wakes due."""
    for index in range(3):
        slug = f"room{index}"
        moods.create(room, slug, title=f"Room {index}")
        moods.join(room, slug, "re")
        moods.join(room, slug, "magent")
    for slug in ("infra", "room0", "room1", "room2"):
        say(room, "@re @magent please check", via="web", mood=slug)
    return room


def state(conn):
    return {"wakes": conn.execute("SELECT count(*) FROM mood_wakes").fetchone()[0],
            "bundles": conn.execute("SELECT count(*) FROM mood_bundles").fetchone()[0],
            "budget": conn.execute("SELECT count(*) FROM mood_budget").fetchone()[0],
            "posts": conn.execute("SELECT count(*) FROM mood_posts").fetchone()[0],
            "cursors": conn.execute("SELECT * FROM mood_agent_state ORDER BY mood_id, agent").fetchall(),
            "height": ledger.height(conn)}


def commits(conn):
    seen = []
    conn.set_trace_callback(lambda sql: seen.append(sql) if sql == "COMMIT" else None)
    return seen


def test_a_tick_with_many_wakes_commits_once(busy, agent, run_tick):
    agent.replies["re"] = ["on it"] * 4
    seen = commits(busy)
    report = run_tick()
    busy.set_trace_callback(None)
    assert len(report["wakes"]) == 8 and len(seen) == 1
    assert [w["outcome"] for w in report["wakes"]].count("replied") == 4
    assert ledger.verify_chain(busy)["ok"]


def test_a_tick_that_fails_half_way_leaves_nothing_and_the_next_one_redoes_it(busy, agent, run_tick, monkeypatch):
    before = state(busy)
    agent.replies["re"] = ["on it"] * 8
    real, calls = tick.record_outcome, []

    def crash_on_the_fourth(*args, **kw):
        calls.append(1)
        if len(calls) == 4:
            raise RuntimeError("the poller died here")
        return real(*args, **kw)

    monkeypatch.setattr(tick, "record_outcome", crash_on_the_fourth)
    with pytest.raises(RuntimeError, match="died here"):
        run_tick()
    assert len(agent.seen) == 4, "three wakes were recorded and delivered before the failure"
    assert state(busy) == before, "nothing of the failed tick persisted"
    assert not busy.in_transaction
    monkeypatch.setattr(tick, "record_outcome", real)
    report = run_tick()
    assert len(report["wakes"]) == 8 and all(w["outcome"] in ("replied", "silent") for w in report["wakes"])
    assert state(busy)["wakes"] == 8
    assert ledger.verify_chain(busy)["ok"]


def test_external_commands_run_with_no_transaction_open(busy, agent, run_tick):
    agent.external = True  # as the default delivery with a command of its own
    open_during = []
    agent.during["re"] = lambda: open_during.append(busy.in_transaction)
    seen = commits(busy)
    report = run_tick()
    busy.set_trace_callback(None)
    assert len(report["wakes"]) == 8
    assert open_during == [False]
    assert len(seen) == 9, "each wake's record commits before its command runs, the last outcome after it"


def test_the_default_delivery_commits_before_the_agents_command(room, tmp_path, monkeypatch):
    """A real command that writes to the home while it runs (here: it takes the write lock)."""
    script = tmp_path / "agent.py"
    script.write_text(
        "import sys, os\n"
        f"sys.path.insert(0, {ROOT!r})\n"
        "from mindos.store import db\n"
        "conn = db.connect(os.environ['HERMES_AUTOPILOT_HOME'])\n"
        "with db.write(conn, timeout=5):\n"
        "    pass\n"
        "print('<silent>wrote fine</silent>')\n")
    room.execute("UPDATE mood_agents SET command = ? WHERE name = 're'",
                 (json.dumps([sys.executable, str(script)]),))
    say(room, "@re look", via="web")
    monkeypatch.setenv("HERMES_AUTOPILOT_HOME", room.home)
    report = tick.run(room)
    outcomes = [w["outcome"] for w in report["wakes"] if w["agent"] == "re"]
    assert outcomes == ["silent"], report["wakes"]
