"""One-command onboarding: stages in order, dry run, apply + doctor, probe, idempotence, the seal,
and the round trip over a seeded history."""

import json
import os
import sqlite3

import pytest

import migratekit
from conftest import db_state, last_event
from mindos.errors import InvalidInput
from mindos.memory import handoffs, notes
from mindos.migration import importer as mi
from mindos.migration import inventory as inv
from mindos.migration import onboard, rollback
from mindos.cli.migration import onboard as onboard_command
from mindos.store import db, ledger
from mindos.work import graph, receipts, tasks

TABLES = ("tasks", "dependencies", "receipts", "notes", "handoffs", "memories", "facts")


def _inventory(conn, tmp_path, root=None):
    root = root or migratekit.machine(str(tmp_path / "old"))
    out = str(tmp_path / "inv.json")
    inv.inventory(conn, root, out)
    return root, out


def test_dry_run_plans_and_writes_only_bookkeeping(conn, tmp_path):
    _, out = _inventory(conn, tmp_path)
    before = [line for line in db_state(conn)[0] if "audit_events" not in line]
    report = onboard.onboard(conn, out)
    assert report["ok"] and report["applied"] is False
    # the spec lists doctor as unconditional: only import_apply and protocol_probe need --apply
    assert [s["stage"] for s in report["stages"]] == ["preflight", "init_control_plane", "select_source",
                                                      "import_plan", "doctor"]
    assert report["stages"][-1]["ok"] is True and "audit_chain" in report["stages"][-1]["checks"]
    assert [line for line in db_state(conn)[0] if "audit_events" not in line] == before
    assert last_event(conn, "onboarding_planned")["stages"][-1] == "doctor"
    with pytest.raises(InvalidInput, match="--probe requires --apply"):
        onboard.onboard(conn, out, probe_flag=True)


FRONT_DOOR = onboard_command.front_door()


def test_the_probe_needs_the_front_door_passed_in(conn, tmp_path):
    _, out = _inventory(conn, tmp_path)
    report = onboard.onboard(conn, out, apply=True, probe_flag=True)
    assert not report["ok"] and report["failed_stage"] == "protocol_probe"
    assert "front door" in report["stages"][-1]["error"]


def test_apply_probe_idempotent_and_sealed(conn, tmp_path, home):
    _, out = _inventory(conn, tmp_path)
    report_path = str(tmp_path / "report.json")
    report = onboard.onboard(conn, out, apply=True, probe_flag=True, out=report_path, front_door=FRONT_DOOR)
    assert report["ok"], report
    names = [s["stage"] for s in report["stages"]]
    assert names == list(onboard.STAGES)
    stages = {s["stage"]: s for s in report["stages"]}
    assert stages["doctor"]["ok"] and stages["protocol_probe"]["steps"][-1] == "complete:codex"
    journal = stages["import_apply"]["journal"]
    assert journal.startswith(os.path.join(str(home), "migrations"))
    assert conn.execute("SELECT status FROM tasks WHERE id='onboard-probe'").fetchone()[0] == "completed"
    doc = onboard.load_report(report_path)
    assert doc["ok"] is True and os.stat(report_path).st_mode & 0o777 == 0o600
    journal_bytes = open(journal, "rb").read()
    again = onboard.onboard(conn, out, apply=True, probe_flag=True, front_door=FRONT_DOOR)
    assert again["ok"]
    stages = {s["stage"]: s for s in again["stages"]}
    assert stages["import_apply"]["deduplicated"] and stages["protocol_probe"]["skipped"]
    assert open(journal, "rb").read() == journal_bytes  # the working journal is never overwritten
    assert ledger.verify_chain(conn)["ok"]


def test_dry_run_fails_closed_when_the_doctor_finds_problems(conn, tmp_path):
    _, out = _inventory(conn, tmp_path)
    conn.execute("UPDATE audit_events SET payload_json = '{}' WHERE id = 1")  # a tampered ledger
    report = onboard.onboard(conn, out)
    assert report["ok"] is False and report["failed_stage"] == "doctor"
    assert "doctor found problems" in report["stages"][-1]["error"]
    assert last_event(conn, "onboarding_planned")["failed_stage"] == "doctor"


def test_probe_recalls_and_resumes_as_the_spec_s_probe_does(conn, tmp_path):
    _, out = _inventory(conn, tmp_path)
    report = onboard.onboard(conn, out, apply=True, probe_flag=True, front_door=FRONT_DOOR)
    assert report["ok"], report
    probe = report["stages"][-1]
    assert probe["stage"] == "protocol_probe"
    assert probe["steps"] == ["create", "claim:hermes", "handoff:hermes->codex", "release:hermes", "recall:codex",
                              "ack:codex", "resume:codex", "receipt:codex", "complete:codex"]
    trail = [(action, json.loads(payload)) for action, payload in conn.execute(
        "SELECT action, payload_json FROM audit_events WHERE entity_id = ? ORDER BY id", (onboard.PROBE_TASK,))]
    actions = [action for action, _ in trail]
    for earlier, later in (("handoff_recorded", "context_recalled"), ("context_recalled", "handoff_acknowledged"),
                           ("handoff_acknowledged", "session_resumed"), ("session_resumed", "completed")):
        assert actions.index(earlier) < actions.index(later), actions
    recalled = dict(trail)["context_recalled"]
    resumed = dict(trail)["session_resumed"]
    assert recalled["agent"] == "codex" and resumed["agent"] == "codex" and resumed["action"] == "claimed"


def test_stops_at_the_first_failure(conn, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    migratekit.autopilot_home(os.path.join(root, "second"))
    _, out = _inventory(conn, tmp_path, root)
    report = onboard.onboard(conn, out, apply=True)
    assert not report["ok"] and report["failed_stage"] == "select_source"
    assert "several autopilot_sqlite sources" in report["stages"][-1]["error"]
    assert [s["stage"] for s in report["stages"]][-1] == "select_source"
    assert last_event(conn, "onboarding_failed")["failed_stage"] == "select_source"
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0


def test_cli(cli, cli_json, tmp_path, monkeypatch):
    root = migratekit.machine(str(tmp_path / "old"))
    out = str(tmp_path / "inv.json")
    cli_json("autopilot", "init")
    cli_json("ops", "migrate-inventory", "--root", root, "--out", out)
    bare = tmp_path / "bare-home"
    monkeypatch.setenv("HERMES_AUTOPILOT_HOME", str(bare))  # onboard needs no prior init
    fresh = cli_json("ops", "onboard", "--inventory", out, "--apply")
    assert fresh["ok"] and (bare / "state.db").exists()
    monkeypatch.setenv("HERMES_AUTOPILOT_HOME", str(tmp_path / "home"))
    plan = cli_json("ops", "onboard", "--inventory", out)
    assert plan["ok"] and plan["applied"] is False
    rc, o, err = cli("ops", "onboard", "--inventory", out, "--probe")
    assert rc == 2 and o == "" and "--probe requires --apply" in err


def _seed_history(path, n=1000):
    """A demo-sized home plus a seeded history: n tasks with deps, notes, handoffs, receipts."""
    conn = db.connect(str(path))
    try:
        for i in range(n):
            tasks.create(conn, project=f"P{i % 7}", title=f"seeded task {i} cookie redirect", task_id=f"s{i}")
        for i in range(1, n, 3):
            graph.add_dependency(conn, f"s{i}", f"s{i - 1}")
        for i in range(0, n, 4):
            notes.add(conn, f"s{i}", content=f"note {i} about the rate limit", source="hermes")
        for i in range(0, n, 10):
            handoffs.record(conn, f"s{i}", from_agent="hermes", to_agent="codex", objective=f"finish {i}")
        for i in range(0, n, 25):
            receipts.add(conn, f"s{i}", "verification", {"tests": "pass", "i": i})
        from mindos.memory import facts, memories
        for i in range(0, n, 5):
            memories.retain(conn, f"memory {i}: auth sessions expire after {i} days", project=f"P{i % 7}")
        for i in range(0, n, 8):
            facts.assert_fact(conn, subject=f"service-{i}", predicate="uses", obj=f"postgres-{i % 3}",
                              source="codex", task=f"s{i}", valid_hours=48)
        extra = ["memories", "facts"]
    finally:
        conn.close()
    return extra


@pytest.mark.slow
def test_round_trip_over_a_seeded_history(conn, tmp_path, home):
    import shutil
    from mindos.demo import tour
    root = tmp_path / "old"
    demo = tour.run(keep=True)  # a home built by the demo, then a seeded history on top of it
    shutil.copytree(demo["home"], str(root / "autopilot"))
    shutil.rmtree(demo["home"])
    extra = _seed_history(root / "autopilot")
    pre = {t: sorted(tuple(r) for r in conn.execute(f"SELECT * FROM {t}")) for t in TABLES}
    _, out = _inventory(conn, tmp_path, str(root))
    report = onboard.onboard(conn, out, apply=True)
    assert report["ok"], report
    stages = {s["stage"]: s for s in report["stages"]}
    assert stages["doctor"]["ok"] and "audit_chain" in stages["doctor"]["checks"]
    src = sqlite3.connect(str(root / "autopilot" / "state.db"))
    sanitized = {r[0] for r in src.execute(
        "SELECT id FROM tasks WHERE status IN ('claimed', 'running', 'waiting_for_agent')")}
    assert len(sanitized) == report["stages"][3]["sanitized_tasks"]
    assert all(r[0] == "queued" for r in conn.execute(
        f"SELECT status FROM tasks WHERE id IN ({','.join('?' * len(sanitized))})", sorted(sanitized)))
    for table in TABLES:
        columns = [c for c in mi.column_names(conn, table) if c != "seq"]
        skip = f" WHERE id NOT IN ({','.join(repr(i) for i in sorted(sanitized))})" if table == "tasks" else ""
        mine = sorted(tuple(r) for r in conn.execute(f"SELECT {', '.join(columns)} FROM {table}{skip}"))
        theirs = sorted(tuple(r) for r in src.execute(f"SELECT {', '.join(columns)} FROM {table}{skip}"))
        assert mine == theirs, table
    src.close()
    folder_old, folder_new = root / "autopilot" / "receipts", home / "receipts"
    assert sorted(os.listdir(folder_old)) == sorted(os.listdir(folder_new))
    for name in os.listdir(folder_old):
        assert (folder_old / name).read_bytes() == (folder_new / name).read_bytes()
    done = rollback.rollback(conn, stages["import_apply"]["journal"], apply=True)
    assert done["chain"]["ok"]
    assert {t: sorted(tuple(r) for r in conn.execute(f"SELECT * FROM {t}")) for t in TABLES} == pre
    assert os.listdir(folder_new) == []
    assert isinstance(extra, list)
    # verify-chain over the imported home held before the rollback (the doctor stage); after it too
    assert ledger.verify_chain(conn)["ok"]


@pytest.mark.parametrize("version, ok", [((3, 10, 14), False), ((3, 9, 18), False), ((3, 11, 0), True)])
def test_preflight_wants_the_python_the_package_declares(conn, monkeypatch, version, ok):
    # pyproject.toml's requires-python is >=3.11: an older interpreter stops onboarding at preflight
    monkeypatch.setattr(onboard.sys, "version_info", version)
    stage = onboard._preflight(conn)
    assert stage["ok"] is ok
    assert stage.get("error") == (None if ok else "python 3.11+ required")


def test_preflight_minimum_matches_pyproject():
    import tomllib

    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(here, "pyproject.toml"), "rb") as handle:
        declared = tomllib.load(handle)["project"]["requires-python"]
    assert f">={onboard.MIN_PYTHON[0]}.{onboard.MIN_PYTHON[1]}" in declared
