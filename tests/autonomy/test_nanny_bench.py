"""A smoke test of bench/nanny_bench.py at a tiny size: every figure is produced."""

import os
import shutil
import sys

import pytest

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


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_the_nanny_bench_counts_tick_instructions_by_slice(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(nanny_bench, "HERE", str(tmp_path))
    # The floor (the bare interpreter's import line) is the same process for both homes and each
    # of its three median samples: count it once under callgrind, not six times (~4 s each).
    count_one, floors = nanny_bench.instructions, {}

    def instructions(argv, env):
        if argv[1:] != ["-c", nanny_bench.bench.BASELINE_CODE]:
            return count_one(argv, env)
        if argv[0] not in floors:
            floors[argv[0]] = count_one(argv, env)
        return floors[argv[0]]

    monkeypatch.setattr(nanny_bench, "instructions", instructions)
    assert nanny_bench.main(["--tasks", "60", "--events", "200", "--stale", "0", "--stalled", "0", "--live", "0",
                             "--progress-history", "0", "--instructions", "--skip-timing", "--ticks", "5",
                             "--interpreter", "current", "--workdir", str(tmp_path)]) == 0
    import json

    results = json.loads(capsys.readouterr().out)
    for key in ("idle_instructions", "busy_instructions"):
        counted = results[key]
        assert counted["first_tick"]["slice"] == "all"
        assert {row["slice"] for row in counted["ticks"]} == {"integrity", "audit_chain", "receipts", "fts_drift",
                                                               "references"}
        assert counted["idle_tick_ratio"] > 0 and counted["max_slice_ratio"] >= counted["idle_tick_ratio"]
        assert counted["after_new_events"]["ratio"] > 0
        assert counted["floor_instructions"] == floors[sys.executable][0] > 0
