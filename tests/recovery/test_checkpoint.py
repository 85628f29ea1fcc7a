"""Checkpoints: sealed chain heads; truncation, head rewrites and shrinkage are proven, growth is normal."""

import json
import os
import sqlite3

import pytest

from conftest import overwrite
from recovery_helpers import populate
from mindos.errors import IntegrityError
from mindos.recovery import checkpoint
from mindos.work import tasks


def _raw(home):
    return sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)


def test_checkpoint_pins_the_head_with_0600(conn, home, cli):
    populate(conn)
    rc, out, err = cli("ops", "checkpoint")
    made = json.loads(out)
    assert (rc, err) == (0, "")
    assert made["path"].startswith(os.path.join(str(home), "backups", "checkpoint-"))
    assert os.stat(made["path"]).st_mode & 0o777 == 0o600
    last = conn.execute("SELECT id, hash FROM audit_events ORDER BY id DESC LIMIT 1").fetchone()
    assert (made["last_event_id"], made["head_hash"]) == tuple(last)
    doc = json.load(open(made["path"]))
    assert doc["format"] == "autopilot-checkpoint-v1" and doc["seal"]["outside"] == []


def test_growth_is_normal(conn, home, cli):
    populate(conn)
    path = checkpoint.create(conn)["path"]
    tasks.create(conn, project="P", title="later", task_id="t9")
    rc, out, _ = cli("ops", "checkpoint-check", path)
    assert rc == 0 and json.loads(out)["ok"] is True
    rc, out, _ = cli("autopilot", "verify-chain", "--checkpoint", path)
    report = json.loads(out)
    assert rc == 0 and report["ok"] and report["checkpoint"]["problems"] == []


def test_tail_truncation_is_detected(conn, home, cli):
    populate(conn)
    path = checkpoint.create(conn)["path"]
    r = _raw(home)
    r.execute("DELETE FROM audit_events WHERE id >= (SELECT max(id) - 1 FROM audit_events)")
    r.close()
    rc, out, _ = cli("autopilot", "verify-chain")
    assert rc == 0  # the chain alone cannot see it
    rc, out, _ = cli("autopilot", "verify-chain", "--checkpoint", path)
    report = json.loads(out)
    assert rc == 1 and report["ok"] is False
    assert [p["kind"] for p in report["checkpoint"]["problems"]] == ["chain_truncated", "events_removed_since_checkpoint"]
    rc, out, _ = cli("ops", "checkpoint-check", path)
    assert rc == 1


def test_head_rewrite_is_detected(conn, home):
    populate(conn)
    path = checkpoint.create(conn)["path"]
    r = _raw(home)
    r.execute("UPDATE audit_events SET hash = ? WHERE id = (SELECT max(id) FROM audit_events)", ("f" * 64,))
    r.close()
    assert [p["kind"] for p in checkpoint.check(conn, path)["problems"]] == ["checkpoint_head_mismatch"]


def test_rewrite_then_regrow_is_still_caught_by_count(conn, home):
    populate(conn)
    path = checkpoint.create(conn)["path"]
    r = _raw(home)
    r.execute("DELETE FROM audit_events WHERE id = 2")
    r.close()
    problems = checkpoint.check(conn, path)["problems"]
    assert [p["kind"] for p in problems] == ["events_removed_since_checkpoint"]


@pytest.mark.slow
def test_every_single_byte_change_is_refused(conn, home):
    populate(conn)
    path = checkpoint.create(conn)["path"]
    original = open(path, "rb").read()
    for i in range(len(original)):
        for replacement in {(original[i] + 1) % 256, ord(" ")} - {original[i]}:
            changed = original[:i] + bytes([replacement]) + original[i + 1:]
            overwrite(path, changed)
            with pytest.raises(IntegrityError):
                checkpoint.load(path)
    with open(path, "wb") as handle:
        handle.write(original)
    checkpoint.load(path)


def test_bad_inputs_are_one_line_refusals(conn, home, cli, tmp_path):
    populate(conn)
    path = checkpoint.create(conn)["path"]
    data = open(path).read().replace('"event_count":', '"event_count": ')
    bad = tmp_path / "bad.json"
    bad.write_text(data)
    for argv in (("ops", "checkpoint-check", str(tmp_path / "missing.json")), ("ops", "checkpoint-check", str(bad)),
                 ("autopilot", "verify-chain", "--checkpoint", str(bad))):
        rc, out, err = cli(*argv)
        assert rc == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err


def test_files_lists_only_checkpoints_in_name_order(tmp_path):
    assert checkpoint.files(str(tmp_path)) == []  # no backups directory yet
    backups = tmp_path / "backups"
    backups.mkdir()
    for name in ("checkpoint-20261203T2.json", "checkpoint-20261203T1.json", "snapshot-1.json",
                 "checkpoint-1.json.tmp", "my-checkpoint-1.json", "checkpoint-[x].json"):
        (backups / name).write_text("{}", encoding="utf-8")
    assert checkpoint.files(str(tmp_path)) == [str(backups / name) for name in
                                               ("checkpoint-20261203T1.json", "checkpoint-20261203T2.json",
                                                "checkpoint-[x].json")]
    (tmp_path / "backups-file").write_text("", encoding="utf-8")
    assert checkpoint.files(str(tmp_path / "backups-file")) == []  # a home that is a file: nothing, no error


# -- automatic pins, kept inside and outside the home --------------------------------------


def test_nanny_ticks_and_snapshots_pin_the_head_inside_and_outside_the_home(conn, home, tmp_path, monkeypatch, cli):
    import shutil

    from mindos.autonomy import nanny
    from mindos.recovery import snapshot

    outside = tmp_path / "pins"
    outside.mkdir()
    monkeypatch.setenv(checkpoint.PIN_DIR_ENV, str(outside))
    populate(conn)
    report = nanny.tick(conn)
    assert report["checkpoint_pin"]["pinned"] is True and len(report["checkpoint_pin"]["written"]) == 2
    inside = os.path.join(str(home), "backups", checkpoint.AUTO_NAME)
    external = str(outside / f"checkpoint-{checkpoint.home_tag(str(home))}-auto.json")
    assert sorted(report["checkpoint_pin"]["written"]) == sorted([inside, external])
    assert checkpoint.load(external)["last_event_id"] == checkpoint.head(conn)["last_event_id"]
    assert os.stat(external).st_mode & 0o777 == 0o600
    # a snapshot pins too; an unchanged head is not rewritten
    tasks.create(conn, project="P", title="later", task_id="t9")
    made = snapshot.create(conn, out=str(tmp_path / "snap.json"))
    assert made["checkpoint_pin"]["written"] and checkpoint.load(external)["last_event_id"] == \
        checkpoint.head(conn)["last_event_id"]
    assert checkpoint.auto_pin(conn)["written"] == []
    # tail truncation with backups/ deleted: the pin kept outside the home still catches it
    pinned = checkpoint.head(conn)["last_event_id"]
    r = _raw(home)
    r.execute("DELETE FROM audit_events WHERE id >= ?", (pinned - 1,))
    r.close()
    shutil.rmtree(os.path.join(str(home), "backups"))
    rc, out, _ = cli("autopilot", "verify-chain")
    assert rc == 0  # the chain alone cannot see it
    rc, out, _ = cli("ops", "doctor")
    report = json.loads(out)
    assert rc == 1 and "chain_truncated" in report["problems_by_kind"]
    assert any(p.get("path") == external for p in report["problems"])
    # the next tick reports the problem and keeps the evidence instead of re-pinning lower
    before = open(external, "rb").read()
    again = nanny.tick(conn)
    assert again["checkpoint_pin"]["pinned"] is False and again["checkpoint_pin"]["written"] == []
    assert again["checkpoint_pin"]["problems"][0]["kind"] == "chain_truncated"
    assert open(external, "rb").read() == before
    assert "chain_truncated" in again["findings"]["by_kind"]


def test_a_pin_directory_that_does_not_exist_is_reported_not_created(conn, home, tmp_path, monkeypatch):
    missing = tmp_path / "nowhere"
    monkeypatch.setenv(checkpoint.PIN_DIR_ENV, str(missing))
    populate(conn)
    pin = checkpoint.auto_pin(conn)
    assert pin["pinned"] is False and pin["problems"][0]["kind"] == "checkpoint_dir_missing"
    assert not missing.exists() and os.path.exists(os.path.join(str(home), "backups", checkpoint.AUTO_NAME))


def test_pins_of_other_homes_in_a_shared_directory_are_not_this_homes(conn, home, tmp_path, monkeypatch):
    outside = tmp_path / "pins"
    outside.mkdir()
    monkeypatch.setenv(checkpoint.PIN_DIR_ENV, str(outside))
    (outside / "checkpoint-0123456789abcdef-auto.json").write_text("not a checkpoint")
    populate(conn)
    assert checkpoint.auto_pin(conn)["pinned"] is True
    assert checkpoint.sweep(conn) == []
