"""A smoke test of bench/mood_poller_bench.py at tiny sizes: the seeded home is valid, every
Mood has a wake due, and an idle tick's statement count does not grow with the home."""

import os
import sys

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import mood_poller_bench as bench  # noqa: E402

from mindos.store import db, ledger  # noqa: E402


def test_seeded_home_has_a_wake_due_everywhere_and_a_verifying_chain(tmp_path):
    home = str(tmp_path / "seeded")
    info = bench.seed(home, 4, 200)
    conn = db.connect(home)
    try:
        assert conn.execute("SELECT count(*) FROM mood_posts").fetchone()[0] == info["posts"] == 200
        assert ledger.verify_chain(conn)["ok"]
    finally:
        conn.close()
    elapsed, report = bench.in_process_tick(home, dry_run=True)
    assert len(report["wakes"]) == 8 and {w["kind"] for w in report["wakes"]} == {"mention", "consider"}


def test_an_idle_tick_runs_the_same_few_statements_at_any_size(tmp_path):
    counts = []
    for moods, posts in ((2, 100), (6, 600)):
        home = str(tmp_path / f"h{moods}")
        bench.seed(home, moods, posts)
        bench.in_process_tick(home, deliver=bench.silent)
        bench.in_process_tick(home, deliver=bench.silent)
        counts.append(bench.idle_queries(home))
    assert counts[0] == counts[1] <= 12
