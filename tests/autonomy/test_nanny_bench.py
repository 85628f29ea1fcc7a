"""A smoke test of bench/nanny_bench.py at a tiny size: every figure is produced."""

import os
import sys

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import nanny_bench  # noqa: E402


def test_the_nanny_bench_runs_at_a_tiny_size(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(nanny_bench, "HERE", str(tmp_path))  # results land in the temp dir
    assert nanny_bench.main(["--tasks", "60", "--events", "200", "--stale", "3", "--stalled", "2", "--live", "4",
                             "--progress-history", "5", "--reps", "1", "--workdir", str(tmp_path)]) == 0
    import json

    results = json.loads(capsys.readouterr().out)
    assert results["busy_seed"] == {**results["busy_seed"], "tasks": 60, "events": 200, "stale_leases": 3}
    assert results["busy_seed"]["stalled_leases"] == 2 and results["busy_seed"]["live_leases"] == 4
    assert results["busy"]["sense"]["by_kind"]["stalled_lease"] == 2
    assert results["busy"]["nanny_first_tick"]["repairs"] == [["stale-lease-recover", True],
                                                              ["stalled-lease-escalate", True]]
    assert results["busy"]["nanny_first_tick"]["state"] == "decision_needed"
    assert results["busy"]["nanny_second_tick"]["new"] == 0
    assert results["idle"]["state"] == "all_clear" and results["idle"]["ratio"] > 0
    assert os.path.exists(tmp_path / "results" / "nanny-latest.json")
