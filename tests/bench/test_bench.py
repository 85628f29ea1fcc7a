"""A smoke test of bench/bench.py at tiny sizes: seeding is valid and every section reports."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import bench  # noqa: E402

from mindos.store import db, fts, ledger  # noqa: E402
from mindos.work import graph


def test_seeded_home_is_a_valid_dag_with_a_verifying_chain(tmp_path):
    home = str(tmp_path / "seeded")
    info = bench.seed_tasks(home, 300, reserve=4)
    conn = db.connect(home)
    try:
        assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 304
        assert len(info.ids) == 300 and len(info.reserved) == 4
        assert conn.execute("SELECT count(*) FROM dependencies").fetchone()[0] == info.edges > 0
        report = ledger.verify_chain(conn)
        assert report["ok"] is True and report["events"] == info.events == 304
        # edges only point backwards in creation order, so the graph has no cycle
        seq = {row[0]: row[1] for row in conn.execute("SELECT id, seq FROM tasks")}
        assert all(seq[a] > seq[b] for a, b in conn.execute("SELECT task_id, depends_on FROM dependencies"))
        # roots are exactly the tasks without prerequisites, and all of them are queued
        assert set(info.roots) == {t for t in info.ids if not graph.blockers(conn, t)}
        assert {r[0] for r in conn.execute("SELECT DISTINCT status FROM tasks")} == {"queued"}
        assert len({r[0] for r in conn.execute("SELECT priority FROM tasks")}) == 4
        assert conn.execute("SELECT count(*) FROM tasks WHERE tags <> '[]'").fetchone()[0] > 100
        created = [r[0] for r in conn.execute("SELECT created_at FROM tasks ORDER BY seq")]
        assert created == sorted(created) and created[0] < created[-1], "mixed ages, oldest first"
        # reserved tasks are deferred out of dispatch
        assert all(conn.execute("SELECT not_before FROM tasks WHERE id = ?", (t,)).fetchone()[0]
                   for t in info.reserved)
    finally:
        conn.close()


def test_seeded_memory_matches_the_commands_row_shapes(tmp_path):
    home = str(tmp_path / "memory")
    info = bench.seed_tasks(home, 50)
    bench.seed_memory(info, 120, 20)
    conn = db.connect(home)
    try:
        assert conn.execute("SELECT count(*) FROM notes WHERE superseded_by IS NULL").fetchone()[0] == 120
        assert conn.execute("SELECT count(*) FROM handoffs WHERE superseded_by IS NULL").fetchone()[0] == 20
        assert ledger.verify_chain(conn)["ok"] is True
        assert conn.execute("SELECT count(*) FROM audit_events WHERE action = 'note_added'").fetchone()[0] == 120
        if fts.has(conn, "notes_fts"):
            assert conn.execute("SELECT count(*) FROM notes_fts WHERE notes_fts MATCH 'retry'").fetchone()[0] > 0
    finally:
        conn.close()


TINY_COMMANDS = ("show", "create", "list --limit 20", "claim", "complete", "next --claim", "note",
                 "search-notes --rank", "recall (all sections)", "memory-search", "recall-stale")


@pytest.mark.slow
@pytest.mark.bare_home
def test_tiny_run_times_every_section(tmp_path, home):
    out = tmp_path / "results"
    results, code = bench.run([
        "--sizes", "150", "--reps", "1", "--ledger-events", "400", "--processes", "2", "--claims", "3",
        "--memory-tasks", "60", "--notes", "150", "--handoffs", "15", "--memories", "40", "--facts", "20",
        "--cited", "5", "--out", str(out),
        "--workdir", str(tmp_path), "--no-compile", "--commands", ",".join(TINY_COMMANDS),
    ])
    assert code == 0, results["errors"]
    assert results["errors"] == []
    interpreter = results["meta"]["interpreter"]
    assert interpreter["mode"] == "clean" and interpreter["path"].startswith(str(tmp_path))
    size = results["sizes"]["150"]
    assert size["tasks"] == 150 and size["baseline_median_ms"] > 0
    task_labels = {spec[0] for spec in bench.task_specs(bench.Seed("", 0), "x")}
    assert set(size["commands"]) | set(size["skipped"]) == task_labels & set(TINY_COMMANDS)
    for label in ("show", "create", "list --limit 20"):
        entry = size["commands"][label]
        assert entry["median_ms"] > 0 and entry["samples"] == 1 and entry["stdout_bytes_median"] > 2
        assert entry["ratio"] == pytest.approx(entry["median_ms"] / entry["baseline_median_ms"], rel=0.01)
        # the CPU figures are the child's own (the rusage of reaped children)
        assert 0 < entry["cpu_median_ms"] and 0 < entry["baseline_cpu_median_ms"]
        assert entry["cpu_ratio"] == pytest.approx(entry["cpu_median_ms"] / entry["baseline_cpu_median_ms"], rel=0.01)
    assert results["verify_chain"]["ok"] is True and results["verify_chain"]["events"] == 400
    assert results["verify_chain"]["events_per_second"] > 0
    concurrency = results["concurrency"]
    if "skipped" not in concurrency:
        assert concurrency["claims"] == concurrency["distinct_tasks"] == concurrency["leased_rows"] == 6
        assert concurrency["claimed_events"] == 6 and concurrency["double_claims"] == []
        assert concurrency["baseline_calls_per_second"] > 0 and concurrency["ratio"] > 0
    memory = results["memory"]
    assert memory["notes"] == 150 and memory["handoffs"] == 15
    memory_labels = {s[0] for s in bench.memory_specs(bench.Seed("", 0), "x")}
    assert set(memory["commands"]) | set(memory["skipped"]) == memory_labels & set(TINY_COMMANDS)
    recalled = results["recall"]
    assert recalled["memories"] == 40 and recalled["facts"] == 20
    assert set(recalled["commands"]) == {"recall (all sections)", "memory-search"}
    lived_in = recalled["lived_in"]  # one real nanny tick, then fresh writes through the core
    assert isinstance(lived_in["index_upkeep"], list) and lived_in["fresh_writes"] == 35
    assert set(lived_in["segments_after_fresh_writes"]) == {"notes_fts", "handoffs_fts", "facts_fts", "memories_fts"}
    for cited in ("all_sections", "related_5"):
        for mode in ("default", "recompute"):
            stale = recalled["recall_stale"][cited][mode]
            assert stale["checked"] == 5 and sum(stale["counts"].values()) == 5 and stale["median_seconds"] > 0
            assert stale["counts"]["unproven_recall_digest"] == stale["counts"]["unknown_recall_params"] == 0
            assert stale["proven_by_ledger"] <= 5
    written = json.loads((out / "latest.json").read_text(encoding="utf-8"))
    assert written["sizes"]["150"]["commands"].keys() == size["commands"].keys()
    assert not home.exists(), "the bench must not touch the selected home"
    assert [p for p in os.listdir(tmp_path) if p.startswith("mindos-bench-")] == [], "throwaway homes removed"


def test_unregistered_commands_are_skipped_not_timed(tmp_path):
    info = bench.Seed(str(tmp_path), 0)
    info.ids = ["t-1", "t-2"]
    specs = [("show", "show", lambda rep: ["show"]), ("nope", "no-such-command", lambda rep: ["nope"])]
    live, skipped = bench._available(specs, {"show"})
    assert [label for label, _ in live] == ["show"]
    assert skipped == {"nope": "'no-such-command' is not registered in autopilot.py"}


def test_a_failing_command_is_reported_as_an_error(tmp_path):
    home = str(tmp_path / "h")
    bench.seed_tasks(home, 5)
    results, baseline, errors = bench.Bench(home, 1).time_commands(
        [("show", lambda rep: ["show", "t-does-not-exist"])])
    assert results == {} and baseline is None
    assert errors and errors[0]["command"] == "show" and errors[0]["exit"] == 1
    assert "unknown task" in errors[0]["stderr"][0]


def test_bad_arguments_are_refused():
    with pytest.raises(SystemExit, match="unknown section"):
        bench.run(["--sections", "tasks,bogus"])
    with pytest.raises(SystemExit, match="--reps must be at least 1"):
        bench.run(["--reps", "0"])
    with pytest.raises(SystemExit, match="--sizes takes task counts"):
        bench.run(["--sizes", "many"])
    with pytest.raises(SystemExit, match="at least 10"):
        bench.run(["--sizes", "1000,3"])


def test_the_other_sections_scale_with_the_largest_size(tmp_path):
    results, code = bench.run(["--sizes", "40", "--sections", "ledger", "--out", str(tmp_path), "--no-compile"])
    assert code == 0
    assert results["meta"]["scale"] == {"ledger_events": 120, "processes": 8, "claims": 5, "memory_tasks": 40,
                                        "notes": 200, "handoffs": 20, "memories": 40, "facts": 20, "cited": 20}
    assert results["verify_chain"]["events"] == 120
    assert "sizes" not in results and "memory" not in results


def test_the_clean_interpreter_leaves_out_this_machines_site_packages(tmp_path):
    python = bench.clean_interpreter(str(tmp_path))
    import site

    theirs = [path for path in site.getsitepackages() if path in sys.path]
    assert theirs, "this interpreter reads its site-packages"
    probe = "import sys; print(sys.path)"
    ours = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert not any(repr(path) in ours for path in theirs), ours
    # the same interpreter underneath: the figures compare like with like
    version = "import sys, sqlite3; print(sys.version, sqlite3.sqlite_version)"
    assert (subprocess.run([python, "-c", version], capture_output=True, text=True, check=True).stdout
            == subprocess.run([sys.executable, "-c", version], capture_output=True, text=True, check=True).stdout)


def test_startup_hooks_names_the_pth_files_that_run_code(tmp_path, monkeypatch):
    import site

    (tmp_path / "hook.pth").write_text("import os; os.environ.setdefault('X', '1')\n", encoding="utf-8")
    (tmp_path / "paths.pth").write_text("/some/extra/path\n# import not at line start\n", encoding="utf-8")
    (tmp_path / "tabbed.pth").write_text("import\tsys\n", encoding="utf-8")
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(tmp_path), str(tmp_path / "missing")])
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(tmp_path / "missing-too"))
    assert bench.startup_hooks() == [str(tmp_path / "hook.pth"), str(tmp_path / "tabbed.pth")]


def test_fts_merging_compares_segments_and_write_times(capsys):
    import fts_merging

    fts_merging.main(["--tasks", "20", "--notes", "40", "--writes", "40", "--values", "16,2"])
    report = json.loads(capsys.readouterr().out)
    default, eager = report["results"]
    assert (default["crisismerge"], eager["crisismerge"]) == (16, 2) and report["writes"] == 40
    assert eager["segments_max"] < default["segments_max"]  # merging sooner keeps fewer segments
    assert all(entry["write_median_ms"] > 0 and entry["segments_mean"] >= 1 for entry in (default, eager))
