"""A smoke test of bench/bench_mcp.py at tiny sizes: both sections report and the race is clean."""

import os
import sys

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import bench_mcp  # noqa: E402


def test_latency_and_race_sections_report(tmp_path):
    results, code = bench_mcp.run(["--tasks", "150", "--reps", "2", "--servers", "3", "--race-tasks", "60",
                                   "--http-clients", "4", "--http-tasks", "40", "--out", str(tmp_path / "out"), "--workdir", str(tmp_path / "work")])
    assert code == 0 and results["errors"] == []
    for label in ("claim", "note", "next --claim", "show", "next (read)"):
        row = results["latency"]["commands"][label]
        assert row["samples"] == 2 and row["mcp_p50_ms"] > 0 and row["process_p50_ms"] > 0
        assert row["http_p50_ms"] > 0 and row["stdio_ratio"] > 0 and row["http_ratio"] > 0
    sizes = results["definitions"]
    assert sizes["default"]["bytes"] <= 12 * 1024 < sizes["all"]["bytes"]
    assert sizes["default"]["tools"] < sizes["all"]["tools"]
    race = results["race"]
    assert race["ok"] is True and race["claims"] == race["distinct_tasks"] == 60
    assert race["double_claims"] == [] and race["failed_calls"] == 0
    http = results["http_race"]
    assert http["ok"] is True and http["claims"] == 40 and http["clients"] == 4
    assert http["double_claims"] == [] and http["failed_calls"] == 0 and http["claims_per_second"] > 0
    assert os.listdir(tmp_path / "out")


def test_reads_section_times_the_search_calls_on_a_home_against_another_tree(tmp_path, conn, home):
    from conftest import make_task
    from mindos.memory import notes

    for n in range(6):
        make_task(conn, f"b{n}", title=f"retry payments {n}")
        notes.add(conn, f"b{n}", content=f"the rate limit of payments {n}")
    results, code = bench_mcp.run(["--sections", "reads", "--home", str(home), "--base-tree", ROOT, "--reps", "2",
                                   "--out", str(tmp_path / "out"), "--workdir", str(tmp_path / "work")])
    assert code == 0 and results["errors"] == []
    reads = results["reads"]["commands"]
    assert set(reads) == {label for label, _, _ in bench_mcp.READS}
    for row in reads.values():
        assert row["samples"] == 2 and row["mcp_p50_ms"] > 0 and row["base_p50_ms"] > 0 and row["ratio"] > 0
