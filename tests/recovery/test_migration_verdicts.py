"""mindos.migration returns results and the commands turn their verdicts into exit codes;
onboard is a class of stages run in a declared order."""

import json
import os

import pytest

import migratekit
import sessionkit_brain
from conftest import last_event
from mindos.errors import Refused
from mindos.migration import importer as mi
from mindos.migration import inventory as inv
from mindos.migration import onboard


def _inventory(conn, tmp_path, root=None):
    root = root or migratekit.machine(str(tmp_path / "old"))
    out = str(tmp_path / "inv.json")
    summary = inv.inventory(conn, root, out)
    return summary, out


def test_core_functions_return_results_not_exit_codes(conn, tmp_path):
    summary, out = _inventory(conn, tmp_path)
    source_id = next(s["source_id"] for s in summary["sources"] if s["kind"] == "autopilot_sqlite")
    assert isinstance(summary, dict) and summary["fail_closed"] is False
    plan = mi.migrate_import(conn, out, source_id)
    assert isinstance(plan, dict) and plan["applied"] is False and "health" not in plan
    report = onboard.onboard(conn, out)
    assert isinstance(report, dict) and report["ok"] is True


def test_an_onboarding_that_stops_exits_1_with_its_report_on_stdout(cli, cli_json, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    migratekit.autopilot_home(os.path.join(root, "second"))  # two candidates: select_source refuses
    out = str(tmp_path / "inv.json")
    cli_json("autopilot", "init")
    cli_json("ops", "migrate-inventory", "--root", root, "--out", out)
    rc, stdout, err = cli("ops", "onboard", "--inventory", out, "--apply")
    report = json.loads(stdout)
    assert rc == 1 and err == "" and report["ok"] is False and report["failed_stage"] == "select_source"


def test_an_unhealthy_import_exits_1_and_a_dry_run_exits_0(cli, cli_json, tmp_path, monkeypatch):
    root = migratekit.machine(str(tmp_path / "old"))
    out = str(tmp_path / "inv.json")
    cli_json("autopilot", "init")
    summary = cli_json("ops", "migrate-inventory", "--root", root, "--out", out)
    source_id = next(s["source_id"] for s in summary["sources"] if s["kind"] == "autopilot_sqlite")
    assert cli("ops", "migrate-import", "--inventory", out, "--source-id", source_id)[0] == 0
    monkeypatch.setattr(mi, "health", lambda conn, baseline=(): {"ok": False, "problems": ["integrity_check failed"]})
    rc, stdout, err = cli("ops", "migrate-import", "--inventory", out, "--source-id", source_id, "--apply")
    result = json.loads(stdout)
    assert rc == 1 and err == "" and result["applied"] and result["health"]["ok"] is False


def test_a_fail_closed_brain_inventory_is_sealed_and_exits_1(cli, tmp_path):
    homes = sessionkit_brain.installation(tmp_path)
    open(os.path.join(homes["hermes"], "cron", "jobs.json"), "w").write("{garbage")
    out = str(tmp_path / "brain.json")
    rc, stdout, err = cli("ops", "brain-inventory", "--out", out, "--home", homes["home"],
                          "--hermes-home", homes["hermes"], "--claude-home", homes["claude"])
    assert rc == 1 and err == "" and json.loads(stdout)["fail_closed"] is True and os.path.isfile(out)
    rc, stdout, _ = cli("ops", "brain-inventory-check", out)
    assert rc == 0 and json.loads(stdout)["fail_closed"] is True


def _recording(monkeypatch, calls, failing=None):
    """Replace every stage method with one that records its name (``failing`` raises)."""
    for name in onboard.STAGES:
        def stage(self, _name=name):
            calls.append(_name)
            if _name == failing:
                raise Refused(f"{_name} refused for the test")
            return {"ok": True}
        monkeypatch.setattr(onboard.Onboarding, name, stage)


@pytest.mark.parametrize("apply,probe,expected", [
    (False, False, ["preflight", "init_control_plane", "select_source", "import_plan", "doctor"]),
    (True, False, ["preflight", "init_control_plane", "select_source", "import_plan", "import_apply", "doctor"]),
    (True, True, list(onboard.STAGES)),
])
def test_the_stages_run_in_their_declared_order(conn, monkeypatch, apply, probe, expected):
    calls = []
    _recording(monkeypatch, calls)
    report = onboard.Onboarding(conn, "inventory.json", apply=apply, probe=probe).run()
    assert calls == expected and [s["stage"] for s in report["stages"]] == expected
    assert report["ok"] is True and report["failed_stage"] is None


def test_a_refusing_stage_is_its_failed_section_and_stops_the_run(conn, monkeypatch):
    calls = []
    _recording(monkeypatch, calls, failing="import_plan")
    report = onboard.onboard(conn, "inventory.json", apply=True)
    assert calls == ["preflight", "init_control_plane", "select_source", "import_plan"]
    assert report["ok"] is False and report["failed_stage"] == "import_plan"
    assert report["stages"][-1] == {"stage": "import_plan", "ok": False, "error": "import_plan refused for the test"}
    assert last_event(conn, "onboarding_failed")["failed_stage"] == "import_plan"


def test_every_declared_stage_is_a_method():
    assert all(callable(getattr(onboard.Onboarding, name, None)) for name in onboard.STAGES)
