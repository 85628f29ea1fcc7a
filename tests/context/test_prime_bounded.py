"""Session-start hooks never stall: prime and the Hermes gateway hook answer within their
--seconds while another process holds the write lock; the audit event is deferred to the
next write, never dropped."""

import json
import os
import subprocess
import sys
import time

import pytest

from mindos.context import prime
from mindos.store import db, deferred, ledger
from tests.conftest import ROOT, make_task, script

HOLDER = """
import sys
sys.path.insert(0, {root!r})
from mindos.store import db
conn = db.connect({home!r}, create=False)
with db.write(conn):
    print("held", flush=True)
    sys.stdin.read()  # holds the lock until the test closes our stdin
"""


@pytest.fixture
def hold(home):
    """``hold()`` starts a separate process holding the home's write lock (file lock and
    BEGIN IMMEDIATE) until ``release()``; a test seeds its data first."""
    holders = []

    def start():
        holder = subprocess.Popen([sys.executable, "-c", HOLDER.format(root=ROOT, home=str(home))],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        holders.append(holder)
        assert holder.stdout.readline().strip() == "held"
        return holder

    yield start
    for holder in holders:
        release(holder)


def release(holder):
    if not holder.stdin.closed:
        holder.stdin.close()
    holder.wait(timeout=60)


def _events(conn, action):
    return [json.loads(row[0]) for row in conn.execute(
        "SELECT payload_json FROM audit_events WHERE action = ? ORDER BY id", (action,))]


def test_prime_audits_at_once_when_the_lock_is_free(conn):
    pack = prime.prime(conn, "claude-code", fmt="json")
    assert "audit_deferred" not in pack and len(_events(conn, "context_primed")) == 1
    assert deferred.pending(conn.home) == []


def test_a_busy_audit_is_spooled_then_landed_by_the_next_write(conn, monkeypatch):
    make_task(conn, "t1")
    real = db.write

    def busy(c, timeout=None):
        assert timeout is not None and timeout >= 0  # prime always bounds its wait
        raise db.MindosError("database busy: held", code="busy")

    monkeypatch.setattr(db, "write", busy)
    pack = prime.prime(conn, "claude-code", seconds=2, fmt="json")
    text = prime.prime(conn, "claude-code", seconds=2)
    monkeypatch.setattr(db, "write", real)
    assert pack["audit_deferred"] is True and "[audit deferred]" in text.splitlines()[0]
    assert len(deferred.pending(conn.home)) == 2 and _events(conn, "context_primed") == []
    make_task(conn, "t2")  # any command's next write lands them
    landed = _events(conn, "context_primed")
    assert len(landed) == 2 and all(e["deferred_id"] and e["deferred_at"] for e in landed)
    assert landed[0]["digest"] == pack["digest"]
    assert deferred.pending(conn.home) == [] and not os.path.exists(deferred.directory(conn.home))
    assert ledger.verify_chain(conn)["ok"]


def test_a_replay_never_lands_an_event_twice(conn):
    deferred.spool(conn.home, [("agent", "a1", "context_primed", {"agent": "a1"})])
    name = deferred.pending(conn.home)[0]
    keep = open(os.path.join(deferred.directory(conn.home), name), encoding="utf-8").read()
    make_task(conn, "t1")
    # a crash between COMMIT and unlink leaves the file: the next write must not append it again
    os.makedirs(deferred.directory(conn.home), exist_ok=True)
    with open(os.path.join(deferred.directory(conn.home), name), "w", encoding="utf-8") as handle:
        handle.write(keep)
    make_task(conn, "t2")
    assert len(_events(conn, "context_primed")) == 1 and deferred.pending(conn.home) == []


def test_a_rolled_back_write_keeps_the_spool(conn):
    deferred.spool(conn.home, [("agent", "a1", "context_primed", {"agent": "a1"})])
    with pytest.raises(RuntimeError):
        with db.write(conn):
            raise RuntimeError("the command failed")
    assert len(deferred.pending(conn.home)) == 1 and _events(conn, "context_primed") == []
    make_task(conn, "t1")
    assert len(_events(conn, "context_primed")) == 1


@pytest.mark.parametrize("content", ["", "{not json", '{"id": "x", "events": [{"action": 1}]}', "[]"])
def test_an_unreadable_spool_file_is_set_aside_not_fatal(conn, content):
    os.makedirs(deferred.directory(conn.home))
    with open(os.path.join(deferred.directory(conn.home), "0-bad.json"), "w", encoding="utf-8") as handle:
        handle.write(content)
    make_task(conn, "t1")
    assert deferred.pending(conn.home) == []
    assert os.listdir(os.path.join(conn.home, deferred.REJECTED_DIR)) == ["0-bad.json"]


def test_a_bounded_write_raises_busy_past_its_timeout(conn, hold):
    hold()
    started = time.monotonic()
    with pytest.raises(db.MindosError) as caught:
        with db.write(conn, timeout=0.3):
            pass
    assert caught.value.code == "busy" and time.monotonic() - started < 5


@pytest.mark.slow
def test_prime_exits_0_within_its_seconds_while_the_lock_is_held(conn, home, hold):
    make_task(conn, "t1", title="the work")
    held_lock = hold()
    started = time.monotonic()
    done = script("autopilot.py", "prime", "--agent", "claude-code", "--seconds", "3", "--format", "json", home=home)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert elapsed < 3.0, f"prime took {elapsed:.2f} s with --seconds 3"
    pack = json.loads(done.stdout)
    assert pack["audit_deferred"] is True and pack["next"]["id"] == "t1"  # the pack itself is complete
    assert not pack.get("degraded")
    release(held_lock)
    assert _events(conn, "context_primed") == []
    assert script("autopilot.py", "create", "--project", "Trove", "--title", "later", home=home).returncode == 0
    landed = _events(conn, "context_primed")
    assert len(landed) == 1 and landed[0]["digest"] == pack["digest"] and landed[0]["deferred_id"]


@pytest.mark.slow
def test_the_claude_hook_and_the_gateway_hook_answer_in_time_while_the_lock_is_held(conn, home, hold, tmp_path):
    make_task(conn, "t1", title="the work")
    hold()
    event = json.dumps({"session_id": "abc123", "cwd": str(tmp_path), "source": "startup",
                        "hook_event_name": "SessionStart"})
    started = time.monotonic()
    done = subprocess.run([sys.executable, os.path.join(ROOT, "autopilot.py"), "session-start", "--hook", "claude",
                           "--seconds", "3"], input=event, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HERMES_AUTOPILOT_HOME": str(home)})
    assert done.returncode == 0 and time.monotonic() - started < 3.0, done.stderr
    assert done.stdout.startswith("# MindOS prime for claude-code-abc123 ") and "audit deferred" in done.stdout
    hermes_home = tmp_path / "hermes"
    hermes_home.mkdir()
    first = json.dumps({"hook_event_name": "pre_llm_call", "session_id": "h1", "extra": {"is_first_turn": True}})
    started = time.monotonic()
    done = subprocess.run([sys.executable, os.path.join(ROOT, "mindos_gateway_hook.py"), "--seconds", "3"],
                          input=first, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HERMES_AUTOPILOT_HOME": str(home), "HERMES_HOME": str(hermes_home)})
    assert done.returncode == 0 and time.monotonic() - started < 3.0, done.stderr
    assert "t1" in json.loads(done.stdout)["context"]
    assert len(deferred.pending(str(home))) == 2


def test_a_failing_replay_never_costs_the_command_its_write(conn, monkeypatch):
    deferred.spool(conn.home, [("agent", "a1", "context_primed", {"agent": "a1"})])
    real = deferred.replay

    def broken(c):
        ledger.append_event(c, "agent", "a1", "context_primed", {"partial": True})
        raise OSError("disk trouble")

    monkeypatch.setattr(deferred, "replay", broken)
    make_task(conn, "t1")
    assert conn.execute("SELECT count(*) FROM tasks WHERE id = 't1'").fetchone()[0] == 1
    assert _events(conn, "context_primed") == [] and len(deferred.pending(conn.home)) == 1
    monkeypatch.setattr(deferred, "replay", real)
    make_task(conn, "t2")
    assert len(_events(conn, "context_primed")) == 1 and ledger.verify_chain(conn)["ok"]


def test_a_fifo_planted_in_the_spool_is_rejected_without_blocking_the_write(conn, home):
    """The spool is read while the write lock is held: a FIFO there (which a plain open
    would wait on forever) is moved aside, and the write it rides on still lands."""
    from mindos.store import deferred
    from mindos.work import tasks

    folder = deferred.directory(str(home))
    os.makedirs(folder, mode=0o700, exist_ok=True)
    fifo = os.path.join(folder, "2026-08-21T090000Z-planted.json")
    os.mkfifo(fifo)
    tasks.create(conn, project="P", title="lands anyway", task_id="t-fifo")
    assert conn.execute("SELECT count(*) FROM tasks WHERE id = 't-fifo'").fetchone()[0] == 1
    assert not os.path.exists(fifo)
    assert os.path.exists(os.path.join(str(home), deferred.REJECTED_DIR, os.path.basename(fifo)))


def test_a_full_budget_stops_scanning_leftover_items_but_packs_the_same(monkeypatch):
    from mindos.context import builder
    from mindos.core import secrets as secret_scan

    token = "ghp_" + "a1B2" * 9
    items = [{"note_id": n, "content": f"constraint {n}: keep the deploy window " + "x" * (n % 7) * 20}
             for n in range(60)]
    items[3]["content"] += f" token {token}"
    items.append({"note_id": 99, "content": "ok"})  # small and last: still fits in what is left

    plain = builder.Budget(700)
    expected = [item for item in (prime.scrub(json.loads(json.dumps(i))) for i in items) if plain.take(item)]
    scans = []
    real = secret_scan.scan
    monkeypatch.setattr(secret_scan, "scan", lambda text: scans.append(text) or real(text))
    meter = prime.RedactingBudget(700)
    packed = meter.take_all(json.loads(json.dumps(items)))
    assert packed == expected and meter.used == plain.used and meter.truncated
    assert token not in json.dumps(packed) and "[REDACTED:" in json.dumps(packed)
    ids = [item["note_id"] for item in packed]
    first_dropped = next(n for n in range(len(items)) if n not in ids)
    assert ids[-1] > first_dropped  # first fit: a later, smaller item still went in
    assert len(scans) < len(items) // 2  # the leftovers that cannot fit were never scanned


def test_least_cost_is_a_lower_bound_of_the_scrubbed_cost():
    from mindos.context import builder

    token = "ghp_" + "a1B2" * 9
    for content in ("", "a", "x" * 40, token, f"k={token}", "\u00e9\"\\" * 5, f"{token} and {token}"):
        item = {"id": 1, "content": content, "tags": [content, "t"], "nested": {"s": content}}
        assert prime.least_cost(json.loads(json.dumps(item))) <= builder.cost(prime.scrub(json.loads(json.dumps(item))))
