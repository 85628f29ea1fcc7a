"""Repair policies as data: repair-list, repair (dry run first, audited), home overrides, caps."""

import json
import os

import pytest

from autonomykit import fts_drift, home_bytes, orphan_receipt, stale_lease, stuck_lease
from conftest import last_event, script
from mindos.autonomy import repairs, sense
from mindos.core import clock, policyfile
from mindos.errors import NotFound, Refused


def write_policy(home, name, text):
    folder = os.path.join(str(home), "policies", "repairs")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{name}.yaml"), "w", encoding="utf-8") as handle:
        handle.write(text)


def test_the_shipped_policies_parse_and_list(conn):
    listing = repairs.listing(conn)
    assert [p["name"] for p in listing["eligible"]] == ["fts-rebuild", "receipts-sweep", "stale-lease-recover",
                                                        "stalled-lease-escalate"]
    assert {p["name"]: (p["finding"], p["tier"], p["command"]) for p in listing["eligible"]} == {
        "fts-rebuild": ("fts_index_drift", 0, "fts-rebuild"),
        "stalled-lease-escalate": ("stalled_lease", 0, "escalate-stalled"),
        "receipts-sweep": ("receipt_file_unindexed", 0, "receipts-sweep"),
        "stale-lease-recover": ("stale_lease", 0, "recover")}
    assert all(p["runs_today"] == 0 and p["origin"] == "shipped" for p in listing["eligible"])
    assert listing["ineligible"] == []


def test_a_command_missing_from_the_build_is_unavailable(conn, monkeypatch):
    monkeypatch.setitem(repairs.COMMANDS, "receipts-sweep", None)
    listing = repairs.listing(conn)
    assert [(p["name"], p["reason"]) for p in listing["ineligible"]] == [("receipts-sweep", "command_unavailable")]
    orphan_receipt(conn)
    with pytest.raises(Refused, match="command_unavailable"):
        repairs.run(conn, "receipts-sweep")


def test_a_home_policy_replaces_the_shipped_one_and_raising_the_tier_takes_it_out_of_the_nanny(conn, home):
    write_policy(home, "stale-lease-recover", "finding: stale_lease\ntier: 1\ncommand: recover\n")
    entry = repairs.find(conn, "stale-lease-recover")
    assert (entry["origin"], entry["tier"], entry["eligible"], entry["reason"]) == \
        ("home", 1, False, "tier_requires_operator")
    assert (entry["max_subjects"], entry["max_per_day"]) == (100, 24)  # defaults


def test_malformed_or_foreign_policies_are_ineligible_never_guessed(conn, home):
    write_policy(home, "bad-tier", "finding: stale_lease\ntier: 7\ncommand: recover\n")
    write_policy(home, "bad-word", "finding: stale_lease\ntier: yes\ncommand: recover\n")
    write_policy(home, "no-command", "finding: stale_lease\ntier: 0\n")
    write_policy(home, "shell", "finding: stale_lease\ntier: 0\ncommand: rm-rf\n")
    listing = {p["name"]: p for p in repairs.listing(conn)["ineligible"]}
    assert "bad-tier.yaml:2: tier must be from 0 to 3" in listing["bad-tier"]["error"]
    assert "ambiguous bare value" in listing["bad-word"]["error"]
    assert "missing command" in listing["no-command"]["error"]
    assert listing["shell"]["reason"] == "unknown_command"
    with pytest.raises(Refused, match="tier must be from 0 to 3"):
        repairs.run(conn, "bad-tier")


def test_policyfile_range_keys():
    keys = {"tier": range(0, 4), "n": int}
    assert policyfile.parse("tier: 0\nn: 3\n", keys) == {"tier": 0, "n": 3}
    for text in ("tier: -1\n", "tier: 4\n", "tier: true\n", "n: 0\n"):
        with pytest.raises(Refused):
            policyfile.parse(text, keys)


def test_repair_dry_run_changes_nothing_then_the_real_run_is_audited(conn, home):
    stale_lease(conn)
    before = home_bytes(conn)
    proc = script("ops.py", "repair", "stale-lease-recover", "--dry-run", home=home,
                  env={"MINDOS_NOW": clock.now_iso()})
    assert proc.returncode == 0 and proc.stderr == ""
    record = json.loads(proc.stdout)
    assert record["dry_run"] is True and record["result"]["would_recover"] == ["t-stale"]
    assert home_bytes(conn) == before
    record = repairs.run(conn, "stale-lease-recover")
    assert (record["ok"], record["changed"], record["result"]["recovered"]) == (True, True, ["t-stale"])
    assert last_event(conn, "repair_applied") == {"command": "recover", "tier": 0, "trigger": "manual",
                                                  "findings": record["findings"], "changed": True, "error": None}
    assert last_event(conn, "lease_recovered")["previous_owner"] == "hermes"
    assert repairs.run(conn, "stale-lease-recover")["skipped"] == "no_findings"


def test_fts_rebuild_repairs_drift_and_audits_it(conn, cli_json):
    fts_drift(conn)
    record = cli_json("ops", "repair", "fts-rebuild")
    assert record["result"]["fixed"] == ["tasks_fts"]
    assert last_event(conn, "fts_rebuilt") == {"indexes": ["tasks_fts"], "missing": {"tasks_fts": 1},
                                               "stale": {"tasks_fts": 0}}
    assert sense.sense(conn)["findings"] == []


def test_receipts_sweep_quarantines_what_it_cannot_adopt(conn, cli_json, home):
    path = orphan_receipt(conn)
    before = home_bytes(conn)
    planned = cli_json("ops", "repair", "receipts-sweep", "--dry-run")
    assert planned["result"]["quarantine"] == [{"file": "r-orphan.json", "reason": planned["result"]["quarantine"][0]
                                                ["reason"]}]
    assert home_bytes(conn) == before
    record = cli_json("ops", "repair", "receipts-sweep")
    assert record["changed"] is True and not os.path.exists(path)
    assert os.path.exists(os.path.join(str(home), record["result"]["quarantined"][0]["moved_to"]))
    assert sense.sense(conn)["findings"] == []


def test_refusals_are_one_line_exit_1(cli, conn, home):
    rc, out, err = cli("ops", "repair", "nope")
    assert (rc, out) == (1, "") and "unknown repair 'nope'" in err and err.count("\n") == 1
    write_policy(home, "broken", "finding: stale_lease\ntier: 9\ncommand: recover\n")
    rc, out, err = cli("ops", "repair", "broken")
    assert (rc, out) == (1, "") and "broken.yaml:2: tier must be from 0 to 3" in err and err.count("\n") == 1
    rc, out, err = cli("ops", "repair")
    assert (rc, out) == (2, "")


def test_caps_per_day_and_per_subject_count(conn, home):
    write_policy(home, "stale-lease-recover",
                 "finding: stale_lease\ntier: 0\ncommand: recover\nmax_per_day: 1\nmax_subjects: 1\n")
    stale_lease(conn, "t-a")
    repairs.run(conn, "stale-lease-recover")
    stale_lease(conn, "t-b")
    with pytest.raises(Refused, match="max_per_day"):
        repairs.run(conn, "stale-lease-recover")
    clock.advance(hours=24)
    stale_lease(conn, "t-c")
    with pytest.raises(Refused, match="over_subject_cap"):
        repairs.run(conn, "stale-lease-recover")
    with pytest.raises(NotFound):
        repairs.find(conn, "missing")


@pytest.mark.parametrize("name", ["stale-lease-recover", "fts-rebuild", "receipts-sweep", "stalled-lease-escalate"])
def test_every_repair_dry_run_leaves_the_home_byte_identical(conn, home, name):
    stale_lease(conn)
    fts_drift(conn)
    orphan_receipt(conn)
    stuck_lease(conn)
    before = home_bytes(conn)
    proc = script("ops.py", "repair", name, "--dry-run", home=home, env={"MINDOS_NOW": clock.now_iso()})
    assert proc.returncode == 0 and proc.stderr == ""
    record = json.loads(proc.stdout)
    assert record["dry_run"] is True and record["findings"] and record["changed"] is False
    assert home_bytes(conn) == before
    assert not os.path.exists(os.path.join(str(home), "quarantine"))


def test_the_commands_that_narrow_are_declared_and_take_subjects():
    """NARROWS declares which registered commands repair one finding; each of them takes
    ``subjects`` and no other does (a new command must be declared, not guessed)."""
    import inspect

    from mindos.autonomy import repairs

    takes = {name for name, command in repairs.COMMANDS.items()
             if command is not None and "subjects" in inspect.signature(command).parameters}
    assert repairs.NARROWS == takes
