#!/usr/bin/env python3
"""Benchmark the mood poller's tick: 200 Moods, 50k posts, every Mood with something due.

What is measured (one seeded home, the clock pinned so every run decides the same things)
  * ``active_dry_run_process``: ``python3 mood_poller.py tick --dry-run`` as a process, the
    way cron runs it, over a home where every Mood has fresh posts (mentions without a
    session, bursts past consider_after), so every agent in every Mood gets a wake composed.
  * ``active_in_process``: the same tick in-process, delivering to a stand-in that answers
    ``<silent>`` at once, so every wake is also recorded (wake row, bundle, budget line,
    cursors, audit events before and after) -- the tick's own cost without agent time.
    Reported with its CPU seconds (the figure a machine busy with other work cannot
    disturb) and its COMMITs (one: a tick's records are one transaction when no external
    command runs between them).
  * ``idle_process``: a tick with nothing to do, as a process (after the one tick that
    settles the cursors the wakes left behind).
  * ``idle_queries``: statements an idle tick runs (``conn.set_trace_callback``), at the full
    size and at a tenth of it: bounded, not one per post or per Mood.
Medians over ``--reps`` runs; the seeded home is copied afresh for every active run.

Seeding writes rows with SQL in one transaction (the commands would take minutes), and every
seeded post gets the audit event ``post`` would have written, so the seeded chain verifies.

Measured (December 2026, the 2-core test machine, load about 0.7-0.9, three runs each interleaved
with the previous tree): ``active_in_process`` 0.39-0.42 s of CPU and 0.46-0.49 s wall (before
the poller's cost pass 0.50-0.52 s and 0.57-0.58 s); ``active_dry_run_process`` 0.38-0.39 s
(0.47-0.48 s); one COMMIT; 10 idle statements at both sizes.  Those figures were taken with
the COMMIT counter (a trace callback, for which SQLite writes out every statement with its
bound values) on the timed ticks, which cost them about 0.02-0.04 s; the COMMITs are now
counted on one more tick of their own; timed so, three runs at load 0.5-0.6 gave 0.36-0.38 s
of CPU and 0.44-0.45 s wall.

Run:   python3 bench/mood_poller_bench.py                 (200 Moods, 50k posts; about 10 seconds)
       python3 bench/mood_poller_bench.py --moods 20 --posts 5000 --reps 3
Results go to stdout (JSON).
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from mindos.core import clock  # noqa: E402
from mindos.store import db, ledger  # noqa: E402

NOW = "2026-08-21T12:00:00Z"
START = "2026-08-19T12:00:00Z"
PEOPLE = ("justin", "alice", "bob", "carol", "skyler", "dana")
VIAS = ("ssh", "web", "terminal", "web", "ssh")
WORDS = ("deploy", "queue", "cache", "step", "build", "logs", "review", "merge", "schema", "tests", "latency",
         "rollback", "config", "index", "release", "metrics", "alert", "runner", "token", "budget")


def _sentence(rng, words=12):
    return " ".join(rng.choice(WORDS) for _ in range(words))


def seed(home, moods=200, posts=50000, agents=20, fresh=3, *, seed_value=5):
    """Seed a home: ``moods`` Moods with two member agents each, ``posts`` posts spread over
    two days, and the last ``fresh`` posts of every Mood unseen: a burst from the web that
    ends, in every other Mood, with a mention of both members (no session: no grace), so
    every member has a wake due at NOW (a mention or a consider look).  Returns counts."""
    rng = random.Random(seed_value)
    clock.set_now(START)
    conn = db.connect(home)
    names = [f"agent{i:02d}" for i in range(agents)]
    per_mood = posts // moods
    span = clock.seconds_between(START, NOW) - 3600
    try:
        with db.write(conn):
            # unasked looks are what the budget limits; the bench measures the tick, not the budget
            conn.execute("INSERT INTO mood_settings(mood_id, agent, name, value, updated_at)"
                         " VALUES (0, '', 'daily_budget_usd', '10000', ?)", (START,))
            for name in names:
                conn.execute("INSERT INTO mood_agents(name, command, created_at, updated_at) VALUES (?, '[]', ?, ?)",
                             (name, START, START))
            for m in range(moods):
                slug = f"mood{m:03d}"
                mood_id = conn.execute("INSERT INTO moods(slug, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                                       (slug, f"Mood {m}", START, START)).lastrowid
                members = [names[(2 * m) % agents], names[(2 * m + 1) % agents]]
                for agent in members:
                    conn.execute("INSERT INTO mood_members(mood_id, agent, joined_at) VALUES (?, ?, ?)",
                                 (mood_id, agent, START))
                for i in range(per_mood):
                    tail = i >= per_mood - fresh
                    if tail:
                        at = clock.shift(NOW, -(600 - 60 * (i - (per_mood - fresh))))  # quiet for 8+ minutes
                    else:
                        at = clock.shift(START, int(span * i / per_mood))
                    agent_turn = not tail and rng.random() < 0.3
                    author = rng.choice(members) if agent_turn else rng.choice(PEOPLE)
                    body = _sentence(rng, rng.randint(6, 30))
                    if tail and i == per_mood - 1 and m % 2 == 0:  # even Moods: a mention ends the burst
                        body = f"@{members[0]} @{members[1]} {body}?"
                    elif not tail and rng.random() < 0.05:
                        body = f"@{rng.choice(members)} {body}"
                    via = "agent" if agent_turn else ("web" if tail else rng.choice(VIAS))
                    post_id = conn.execute(
                        "INSERT INTO mood_posts(mood_id, kind, author, is_agent, via, full_tools, body, created_at)"
                        " VALUES (?, 'post', ?, ?, ?, 0, ?, ?)",
                        (mood_id, author, int(agent_turn), via, body, at)).lastrowid
                    clock.set_now(at)
                    ledger.append_event(conn, "mood", slug, "mood_posted",
                                        {"post": post_id, "author": author, "via": via, "full_tools": False,
                                         "chars": len(body)})
                    if i == per_mood - fresh - 1:
                        seen = post_id
                for agent in members:
                    conn.execute(
                        "INSERT INTO mood_agent_state(mood_id, agent, seen_id, mention_id, considered_id, last_wake_at)"
                        " VALUES (?, ?, ?, ?, ?, ?)", (mood_id, agent, seen, seen, seen, START))
    finally:
        conn.close()
        clock.set_now(None)
    return {"moods": moods, "posts": per_mood * moods, "agents": agents, "fresh_per_mood": fresh}


def _door(home, *argv):
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=home, MINDOS_NOW=NOW)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "mood_poller.py"), *argv], env=env,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"mood_poller.py {' '.join(argv)} failed: {proc.stderr.strip()}")
    return elapsed, json.loads(proc.stdout)


def _copy(seeded, workdir, label):
    target = os.path.join(workdir, label)
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(seeded, target)
    return target


def silent(agent, text, env, timeout):
    return {"outcome": "silent", "why": "bench", "seconds": 0.0}


def in_process_tick(home, stats=None, *, count_commits=False, **kw):
    """``(wall seconds, report)`` of one tick in-process; ``stats`` (a dict) gets its CPU
    seconds, and with ``count_commits`` the COMMITs it made as well.  Counting them takes a
    trace callback, for which SQLite writes out every statement with its bound values (wake
    bodies included): a tick timed so is about 0.02-0.04 s slower, so the timed runs count none."""
    from mindos.comms import tick

    clock.set_now(NOW)
    conn = db.connect(home)
    commits = []
    try:
        if count_commits:
            conn.set_trace_callback(lambda sql: commits.append(1) if sql == "COMMIT" else None)
        cpu = time.process_time()
        started = time.perf_counter()
        report = tick.run(conn, **kw)
        elapsed = time.perf_counter() - started
        if stats is not None:
            stats["cpu_seconds"] = time.process_time() - cpu
            if count_commits:
                stats["commits"] = len(commits)
        return elapsed, report
    finally:
        conn.close()
        clock.set_now(None)


def idle_queries(home):
    """Statements an idle tick executes (the home must have nothing due)."""
    from mindos.comms import tick

    clock.set_now(NOW)
    conn = db.connect(home)
    statements = []
    try:
        conn.set_trace_callback(statements.append)
        report = tick.run(conn, deliver=silent)
        conn.set_trace_callback(None)
    finally:
        conn.close()
        clock.set_now(None)
    assert not report["wakes"], "the home was not idle"
    return len(statements)


def bench(workdir, moods, posts, reps):
    seeded = os.path.join(workdir, f"seeded-{moods}-{posts}")
    started = time.perf_counter()
    info = seed(seeded, moods, posts)
    info["seed_seconds"] = round(time.perf_counter() - started, 2)
    dry, active, idle, cpu = [], [], [], []
    wakes = None
    for rep in range(reps):
        home = _copy(seeded, workdir, "run")
        elapsed, report = _door(home, "tick", "--dry-run")
        dry.append(elapsed)
        wakes = len(report["wakes"])
        stats = {}
        elapsed, report = in_process_tick(home, stats, deliver=silent)
        active.append(elapsed)
        cpu.append(stats["cpu_seconds"])
        recorded = len(report["wakes"])
        _door(home, "tick")  # settles cursors (one write), delivers nothing
        elapsed, report = _door(home, "tick")
        assert not report["wakes"], "the idle tick should have nothing to do"
        idle.append(elapsed)
    queries = idle_queries(home)
    counted = {}  # the COMMITs of the same tick, on a fresh copy, outside the timed runs
    in_process_tick(_copy(seeded, workdir, "run"), counted, count_commits=True, deliver=silent)
    return {"seeded": info, "wakes_composed": wakes, "wakes_recorded": recorded,
            "active_dry_run_process_seconds": round(statistics.median(dry), 3),
            "active_in_process_seconds": round(statistics.median(active), 3),
            # the same tick's CPU time (what a machine not shared with other work would take) and commits
            "active_in_process_cpu_seconds": round(statistics.median(cpu), 3),
            "active_in_process_commits": counted["commits"],
            "idle_process_seconds": round(statistics.median(idle), 3),
            "idle_queries": queries}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moods", type=int, default=200)
    parser.add_argument("--posts", type=int, default=50000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--workdir", help="where to build the throwaway homes (default: a temp dir)")
    args = parser.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="mood-bench-")
    try:
        full = bench(workdir, args.moods, args.posts, args.reps)
        seed(os.path.join(workdir, "small"), max(2, args.moods // 10), max(100, args.posts // 10))
        # an idle home at a tenth of the size: the same number of statements
        home = os.path.join(workdir, "small")
        in_process_tick(home, deliver=silent)  # the wakes
        in_process_tick(home, deliver=silent)  # the one write that settles cursors after them
        full["idle_queries_at_a_tenth"] = idle_queries(home)
        full["load_average_1m_5m_15m"] = [round(x, 2) for x in os.getloadavg()]  # 2 cores: above 2 is contention
        full["budget_seconds"] = 0.5  # a 400-wake tick, recorded, in-process
        full["within_budget"] = full["active_in_process_seconds"] < 0.5
        print(json.dumps(full, indent=2, sort_keys=True))
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
