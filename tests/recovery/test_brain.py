"""Brain inventory and brain import: roles, read-only, fail-closed, the seal, quarantine,
provenance, drift refusal and the verified no-op re-run."""

import json
import os
import sqlite3

import pytest

import migratekit
import sessionkit_brain as kit
from mindos.core import clock, seal
from mindos.errors import IntegrityError, InvalidInput, Refused
from mindos.migration import brain_import as bi
from mindos.migration import brain_inventory as binv


def _brain(tmp_path, **kw):
    return kit.installation(tmp_path, **kw)


def _inv(tmp_path, homes, name="brain.json"):
    out = str(tmp_path / name)
    summary = binv.inventory(out, home=homes["home"], hermes=homes["hermes"], claude=homes["claude"])
    return out, summary, (1 if summary["fail_closed"] else 0), json.loads(open(out).read())  # as ops.py exits


def test_inventory_roles_read_only_and_deterministic(tmp_path, conn):
    homes = _brain(tmp_path)
    before = {k: migratekit.tree_state(v) for k, v in homes.items()}
    out, summary, code, doc = _inv(tmp_path, homes)
    assert {k: migratekit.tree_state(v) for k, v in homes.items()} == before
    assert code == 0 and doc["fail_closed"] is False
    by = {s["source"]: s for s in doc["sources"]}
    assert [s["source"] for s in doc["sources"]] == list(binv.ORDER)
    assert by["autopilot"]["role"] == "execution truth" and by["autopilot"]["row_counts"]["tasks"] == 5
    assert by["temporal"]["counts"] == {"entities": 2, "relations": 1, "events": 0}
    assert by["memories"]["plan"] == "external_execution_import_required"
    assert by["claude_sync"]["entries"] == 2 and by["claude_memory"]["file_count"] == 2
    assert by["sessions"]["derived_rows"]["session_files"] == 0 and by["sessions"]["file_count"] == 3
    assert by["cron"]["cron_jobs"] == 1
    assert by["skills"]["secret_findings"] == {"aws_access_key": 1}
    assert migratekit.AWS not in open(out).read()
    clock.advance(hours=3)
    out2, summary2, _, doc2 = _inv(tmp_path, homes, "b2.json")
    assert doc["created_at"] != doc2["created_at"] and doc["seal"] != doc2["seal"]  # created_at is sealed too
    assert summary["content_digest"] == summary2["content_digest"] == binv.check(out2)["content_digest"]
    for one in (doc, doc2):
        one.pop("created_at"), one.pop("seal")
    assert seal.dumps(doc) == seal.dumps(doc2)  # byte-identical modulo created_at and its seal
    assert binv.check(out)["ok"]
    data = bytearray(open(out, "rb").read())
    data[len(data) // 3] ^= 1
    open(tmp_path / "bad.json", "wb").write(bytes(data))
    with pytest.raises(IntegrityError):
        binv.check(str(tmp_path / "bad.json"))


def test_absent_optional_sources_do_not_block(tmp_path):
    homes = _brain(tmp_path, temporal=False, sync=False)
    _, _, code, doc = _inv(tmp_path, homes)
    by = {s["source"]: s for s in doc["sources"]}
    assert code == 0 and by["temporal"]["status"] == "absent" and by["claude_sync"]["status"] == "unavailable"


@pytest.mark.parametrize("damage", ["jobs", "temporal"])
def test_fail_closed_names_the_blocker(tmp_path, damage):
    homes = _brain(tmp_path)
    if damage == "jobs":
        open(os.path.join(homes["hermes"], "cron", "jobs.json"), "w").write("{garbage")
    else:
        open(os.path.join(homes["home"], "temporal.db"), "w").write("not sqlite")
    out, summary, code, doc = _inv(tmp_path, homes)
    assert code == 1 and doc["fail_closed"] and summary["blocked"][0]["source"] == ("cron" if damage == "jobs"
                                                                                   else "temporal")
    with pytest.raises(Refused, match="fail_closed"):
        bi.brain_import(out, str(tmp_path / "new"))


def test_import_plan_apply_quarantine_provenance_and_noop(tmp_path):
    homes = _brain(tmp_path)
    out, _, _, _ = _inv(tmp_path, homes)
    target = str(tmp_path / "new")
    with pytest.raises(InvalidInput, match="absolute"):
        bi.brain_import(out, "relative/path")
    plan = bi.brain_import(out, target)
    assert plan["applied"] is False and not os.path.exists(target)
    reasons = {(q["source"], q["reason"].split(" (")[0]) for q in plan["quarantine"]}
    assert ("sessions", "derived session cache artifact") in reasons
    assert ("profiles", "profile runtime state") in reasons
    assert ("skills", "non-definition skill support or cache file") in reasons
    assert ("cron", "non-definition cron artifact") in reasons
    assert ("skills", "credential-shaped text") in reasons
    assert [e["source"] for e in plan["external"]] == ["autopilot", "memories"]
    done = bi.brain_import(out, target, apply=True)
    assert done["created"] == plan["import_count"] and done["noop"] is False
    assert open(os.path.join(target, "hermes", "cron", "jobs.json")).read() == \
        open(os.path.join(homes["hermes"], "cron", "jobs.json")).read()
    assert os.stat(os.path.join(target, "temporal.db")).st_mode & 0o777 == 0o600
    provenance = bi.load_report(done["provenance"], bi.PROVENANCE_FORMAT)
    assert all(a["source_sha256"] == a["target_sha256"] for a in provenance["artifacts"])
    report = bi.load_report(done["report"])
    assert report["created"] == done["created"] and migratekit.AWS not in open(done["report"]).read()
    report_bytes = open(done["report"], "rb").read()
    again = bi.brain_import(out, target, apply=True)
    assert again["noop"] is True and again["created"] == 0 and open(done["report"], "rb").read() == report_bytes


def test_redact_copies_a_derivative(tmp_path):
    homes = _brain(tmp_path)
    out, _, _, _ = _inv(tmp_path, homes)
    target = str(tmp_path / "new")
    done = bi.brain_import(out, target, apply=True, redact=True)
    skill = open(os.path.join(target, "hermes", "skills", "deploy", "SKILL.md")).read()
    assert "[REDACTED:aws_access_key]" in skill and migratekit.AWS not in skill
    assert any(i["redacted"] for i in done["imports"])


def test_drift_and_foreign_destination_refuse_before_any_write(tmp_path):
    homes = _brain(tmp_path)
    out, _, _, _ = _inv(tmp_path, homes)
    target = tmp_path / "new"
    open(os.path.join(homes["hermes"], "cron", "jobs.json"), "w").write('{"jobs": []}')
    with pytest.raises(Refused, match="source drift"):
        bi.brain_import(out, str(target), apply=True)
    assert not target.exists()
    out, _, _, _ = _inv(tmp_path, homes, "b3.json")
    os.makedirs(target / "hermes" / "cron")
    open(target / "hermes" / "cron" / "jobs.json", "w").write("local")
    with pytest.raises(Refused, match="exists and is not empty"):  # a foreign tree: refused before planning
        bi.brain_import(out, str(target), apply=True)
    assert not (target / "temporal.db").exists()


def test_cli(cli, cli_json, tmp_path):
    homes = _brain(tmp_path)
    out = str(tmp_path / "brain.json")
    summary = cli_json("ops", "brain-inventory", "--out", out, "--home", homes["home"], "--hermes-home",
                       homes["hermes"], "--claude-home", homes["claude"])
    assert summary["fail_closed"] is False
    assert cli_json("ops", "brain-inventory-check", out)["ok"]
    plan = cli_json("ops", "brain-import", "--inventory", out, "--target", str(tmp_path / "new"))
    assert plan["applied"] is False
    rc, o, err = cli("ops", "brain-import", "--inventory", out, "--target", "rel")
    assert rc == 2 and o == "" and "absolute" in err
