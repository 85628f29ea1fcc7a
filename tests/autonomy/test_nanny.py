"""The nanny tick: the four states, carry-forward by digest, the breaker, the caps, dry runs
that change nothing, and two ticks at once never both repairing."""

import json
import os
import subprocess
import sys

import pytest

from autonomykit import expired_grant, fts_drift, home_bytes, parked, stale_lease
from conftest import ROOT, last_event, make_task
from mindos.autonomy import nanny, repairs, sense
from mindos.core import clock
from mindos.errors import Refused
from mindos.store import db, fts
from mindos.work import leases


def tick(conn, **kw):
    return nanny.tick(conn, **kw)


def write_policy(home, name, text):
    folder = os.path.join(str(home), "policies", "repairs")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{name}.yaml"), "w", encoding="utf-8") as handle:
        handle.write(text)


def ops(home, *argv, env=None):
    environment = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home), MINDOS_NOW=clock.now_iso(), **(env or {}))
    return subprocess.Popen([sys.executable, os.path.join(ROOT, "ops.py"), *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=environment)


# ---------------------------------------------------------------------------------------
# The four states


def test_all_clear_on_a_quiet_home_and_every_tick_is_audited(conn):
    report = tick(conn)
    assert (report["state"], report["lock"], report["repairs"], report["because"]) == ("all_clear", "held", [], [])
    assert last_event(conn, "nanny_tick")["state"] == "all_clear"


def test_working_when_work_is_active(conn):
    make_task(conn, "t1")
    leases.claim(conn, "t1", "hermes", minutes=30)
    report = tick(conn)
    assert (report["state"], report["active_leases"]) == ("working", 1)


def test_working_when_a_repair_fixed_what_it_found(conn):
    stale_lease(conn)
    report = tick(conn)
    assert report["state"] == "working"
    run, = report["repairs"]
    assert (run["repair"], run["ok"], run["changed"], run["persisting"]) == ("stale-lease-recover", True, True, [])
    assert report["findings"]["total"] == 0 and report["findings"]["new"] == []
    assert last_event(conn, "repair_applied")["trigger"] == "nanny"
    assert tick(conn)["state"] == "all_clear"


def test_hit_snag_names_the_findings_behind_it(conn):
    parked(conn, "t-b", "blocked", "vendor outage")
    report = tick(conn)
    finding, = sense.sense(conn)["findings"]
    assert (report["state"], report["because"]) == ("hit_snag", [finding["digest"]])


@pytest.mark.parametrize("setup", ["approval", "grant"])
def test_decision_needed_for_an_approval_seam_or_an_expired_grant(conn, setup):
    if setup == "approval":
        parked(conn, "t-u", "ready_to_merge")
    else:
        expired_grant(conn)
    report = tick(conn)
    assert report["state"] == "decision_needed"
    decision, = report["decisions"]
    assert decision["kind"] == {"approval": "awaiting_decision", "grant": "grant_expired"}[setup]
    assert report["repairs"] == []  # the nanny never crosses an approval seam


def test_an_invalid_repair_policy_is_a_decision_and_runs_nothing(conn, home):
    write_policy(home, "stale-lease-recover", "finding: stale_lease\ntier: 0\ncommand: recover\ncommand: x\n")
    stale_lease(conn)
    report = tick(conn)
    assert report["state"] == "decision_needed" and report["repairs"] == []
    assert [d["kind"] for d in report["decisions"]] == ["repair_policy_invalid"]


# ---------------------------------------------------------------------------------------
# Carry-forward, breaker, caps


def test_persistent_findings_are_reported_once_then_counted(conn):
    parked(conn, "t-b", "blocked", "vendor")
    first = tick(conn)
    assert first["findings"]["new_total"] == 1 and first["findings"]["carried"] == 0
    digest = first["findings"]["new"][0]["digest"]
    for _ in range(3):
        clock.advance(minutes=5)
        again = tick(conn)
        assert again["findings"]["new"] == [] and again["findings"]["carried"] == 1 and again["state"] == "hit_snag"
    assert last_event(conn, "nanny_tick")["new"] == []
    row = conn.execute("SELECT ticks, first_seen_at FROM nanny_findings WHERE digest = ?", (digest,)).fetchone()
    assert (row[0], row[1]) == (4, "2026-08-21T09:00:00Z")
    conn.execute("UPDATE tasks SET status = 'queued', blocked_reason = '' WHERE id = 't-b'")
    gone = tick(conn)
    assert (gone["state"], gone["findings"]["resolved"]) == ("all_clear", [digest])
    conn.execute("UPDATE tasks SET status = 'blocked', blocked_reason = 'vendor' WHERE id = 't-b'")
    assert tick(conn)["findings"]["new"][0]["digest"] == digest  # it came back: new again


def test_the_breaker_stops_a_repair_that_failed_twice_on_the_same_finding(conn, monkeypatch):
    calls = []

    def useless(conn, dry_run):
        calls.append(dry_run)
        return {"changed": False, "report": {}}

    monkeypatch.setitem(repairs.COMMANDS, "recover", useless)
    stale_lease(conn)
    first = tick(conn)
    assert first["state"] == "hit_snag" and first["repairs"][0]["persisting"]
    second = tick(conn)
    assert second["state"] == "decision_needed"
    assert [d["reason"] for d in second["decisions"]] == ["breaker_open"]
    third = tick(conn)
    assert third["state"] == "decision_needed" and third["repairs"] == []
    assert third["skipped_repairs"][0]["reason"] == "breaker_open"
    assert len(calls) == 2
    row = conn.execute("SELECT repair_failures, last_repair FROM nanny_findings WHERE kind = 'stale_lease'").fetchone()
    assert tuple(row) == (2, "stale-lease-recover")


def test_a_repair_that_raises_is_caught_audited_and_counted(conn, monkeypatch):
    def broken(conn, dry_run):
        raise Refused("disk full")

    monkeypatch.setitem(repairs.COMMANDS, "recover", broken)
    stale_lease(conn)
    report = tick(conn)
    assert report["state"] == "hit_snag" and report["repairs"][0]["error"] == "disk full"
    assert last_event(conn, "repair_failed")["error"] == "disk full"
    assert tick(conn)["state"] == "decision_needed"


def test_the_repair_cap_bounds_a_tick(conn):
    stale_lease(conn)
    fts_drift(conn)
    capped = tick(conn, max_repairs=1)
    assert [r["repair"] for r in capped["repairs"]] == ["fts-rebuild"]
    # the narrow re-check after the rebuild yields the doctor's digest, so "resolved" is exact
    assert capped["repairs"][0]["persisting"] == [] and len(capped["repairs"][0]["resolved"]) == 1
    assert [(s["repair"], s["reason"]) for s in capped["skipped_repairs"]] == [("stale-lease-recover", "max_repairs")]
    assert capped["state"] == "hit_snag"
    assert tick(conn, max_repairs=0)["repairs"] == []
    assert tick(conn, max_repairs=2)["state"] == "working"


def test_an_operator_tier_repair_is_reported_not_run(conn, home):
    write_policy(home, "stale-lease-recover", "finding: stale_lease\ntier: 1\ncommand: recover\n")
    stale_lease(conn)
    report = tick(conn)
    assert report["repairs"] == [] and report["skipped_repairs"][0]["reason"] == "tier_requires_operator"
    assert report["state"] == "hit_snag"


# ---------------------------------------------------------------------------------------
# Dry run and concurrency


def test_nanny_dry_run_changes_nothing(conn, home):
    stale_lease(conn)
    fts_drift(conn)
    parked(conn, "t-b", "blocked")
    before = home_bytes(conn)
    proc = ops(home, "nanny", "--dry-run")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and err == ""
    report = json.loads(out)
    assert report["dry_run"] is True and report["lock"] == "not_taken" and report["state_basis"] == "planned"
    assert sorted(r["repair"] for r in report["repairs"]) == ["fts-rebuild", "stale-lease-recover"]
    assert all(r["dry_run"] for r in report["repairs"])
    assert report["state"] == "hit_snag"  # the blocked task stays a snag even if both repairs work
    assert home_bytes(conn) == before
    assert not os.path.exists(os.path.join(str(home), nanny.LOCK_FILE))


def test_a_tick_that_finds_the_lock_taken_reports_and_repairs_nothing(conn, home):
    stale_lease(conn)
    with nanny.TickLock(str(home)) as held:
        assert held.acquired
        proc = ops(home, "nanny")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and err == ""
    report = json.loads(out)
    assert (report["lock"], report["repairs"], report["state"]) == ("busy", [], "hit_snag")
    assert conn.execute("SELECT lease_owner FROM tasks WHERE id = 't-stale'").fetchone()[0] == "hermes"
    assert last_event(conn, "nanny_tick")["lock"] == "busy"
    assert conn.execute("SELECT count(*) FROM nanny_findings").fetchone()[0] == 0


def test_concurrent_ticks_never_both_repair(conn, home):
    for n in range(6):
        stale_lease(conn, f"t-{n}")
    procs = [ops(home, "nanny") for _ in range(4)]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        reports.append(json.loads(out))
    recovered = [row[0] for row in conn.execute("SELECT entity_id FROM audit_events WHERE action = 'lease_recovered'")]
    assert sorted(recovered) == [f"t-{n}" for n in range(6)]  # each exactly once
    repaired = [r for r in reports if any(run["changed"] for run in r["repairs"])]
    assert len(repaired) == 1
    assert conn.execute("SELECT count(*) FROM audit_events WHERE action = 'nanny_tick'").fetchone()[0] == 4
    assert conn.execute("SELECT count(*) FROM audit_events WHERE action = 'repair_applied'").fetchone()[0] == 1


# ---------------------------------------------------------------------------------------
# Index upkeep


def fragmented_notes(conn, count=40, words=0):
    """A notes index written one note per transaction under FTS5's default merging (a home
    from before migration 11): many segments (``words`` distinct extra words per note make
    its leaf pages many)."""
    from mindos.memory import notes
    from mindos.store import db

    with db.write(conn):
        conn.execute("INSERT INTO notes_fts(notes_fts, rank) VALUES ('crisismerge', 16)")  # FTS5's default
    make_task(conn, "t-notes")
    for n in range(count):
        extra = " ".join(f"w{n}x{m}" for m in range(words))
        notes.add(conn, "t-notes", content=f"deploy runbook step {n} for the payments gateway rollout {extra}")
    assert fts.segments(conn, "notes_fts") > nanny.UPKEEP_SEGMENTS


def ranked(conn):
    from mindos.memory import notes

    return [(row["id"], row["score"]) for row in notes.search(conn, "payments rollout", rank=True)]


def test_a_tick_merges_a_fragmented_index_without_changing_what_it_finds(conn):
    fragmented_notes(conn)
    before, segments = ranked(conn), fts.segments(conn, "notes_fts")
    planned = tick(conn, dry_run=True)
    assert planned["index_upkeep"] == [{"index": "notes_fts", "segments_before": segments}]
    assert fts.segments(conn, "notes_fts") == segments  # a dry run merges nothing

    report = tick(conn)
    assert report["index_upkeep"] == [{"index": "notes_fts", "segments_before": segments, "segments_after": 1}]
    assert report["state"] == "all_clear"  # housekeeping is not progress and not a finding
    assert fts.segments(conn, "notes_fts") == 1
    assert ranked(conn) == before and len(before) == 40
    assert [score for _, score in before] == sorted(score for _, score in before)
    assert last_event(conn, "nanny_tick")["index_upkeep"] == report["index_upkeep"]
    assert tick(conn)["index_upkeep"] == []  # nothing left to merge


def _walked(conn, name):
    return conn.execute(f"SELECT count(DISTINCT segid) FROM {name}_idx").fetchone()[0]


def test_segments_read_from_the_structure_record_match_the_leaf_pages_walked(conn):
    """Upkeep sizes each index from FTS5's structure record (one row), not by walking its
    leaf-page table (which grows with the index): the two agree while segments pile up,
    through every merge step, and on an empty index."""
    assert fts.segments(conn, "facts_fts") == _walked(conn, "facts_fts") == 0
    fragmented_notes(conn)
    seen = [fts.segments(conn, "notes_fts")]
    assert seen[0] == _walked(conn, "notes_fts") > nanny.UPKEEP_SEGMENTS
    while True:
        with db.write(conn):
            worked = fts.merge(conn, "notes_fts", 2)
        seen.append(fts.segments(conn, "notes_fts"))
        assert seen[-1] == _walked(conn, "notes_fts")
        if not worked:
            break
    assert seen[-1] < seen[0]


def test_segments_fall_back_to_the_walk_when_the_structure_record_is_not_one(conn, monkeypatch):
    fragmented_notes(conn)
    walked = _walked(conn, "notes_fts")
    for block in (None, b"", b"\x00\x00\x00\x01\x83", "text"):
        assert fts._structure_segments(block) is None
    # a cookie, then nLevel and nSegment (a two-byte varint), with and without the version-2 marker
    assert fts._structure_segments(b"\x00\x00\x00\x07\x03\x81\x05\x09") == 133
    assert fts._structure_segments(b"\x00\x00\x00\x07\xff\x00\x00\x01\x03\x05\x09") == 5
    monkeypatch.setattr(fts, "_structure_segments", lambda block: None)
    assert fts.segments(conn, "notes_fts") == walked


def test_upkeep_leaves_an_index_of_few_segments_alone(conn, monkeypatch):
    fragmented_notes(conn)
    monkeypatch.setattr(nanny, "UPKEEP_SEGMENTS", fts.segments(conn, "notes_fts"))
    segments = fts.segments(conn, "notes_fts")
    assert tick(conn)["index_upkeep"] == []
    assert fts.segments(conn, "notes_fts") == segments


def test_upkeep_work_per_tick_is_bounded_and_resumes_on_the_next_tick(conn, monkeypatch):
    with db.write(conn):  # small pages: a merge of many of them from a small home
        conn.execute("INSERT INTO notes_fts(notes_fts, rank) VALUES ('pgsz', 128)")
    fragmented_notes(conn, 150, words=30)
    monkeypatch.setattr(nanny, "UPKEEP_SEGMENTS", 0)  # tried until FTS5 finds nothing to merge
    monkeypatch.setattr(nanny, "UPKEEP_PAGES", 2)
    monkeypatch.setattr(nanny, "UPKEEP_STEP", 1)
    steps = []
    merge = fts.merge
    monkeypatch.setattr(fts, "merge", lambda conn, name, pages, **kw: steps.append((name, pages)) or merge(conn, name, pages, **kw))
    before, segments = ranked(conn), fts.segments(conn, "notes_fts")
    ticks = 0
    while True:
        steps.clear()
        upkeep = tick(conn)["index_upkeep"]
        ticks += 1
        notes_steps = [pages for name, pages in steps if name == "notes_fts"]
        assert len(notes_steps) <= 2 and set(notes_steps) <= {1}  # at most UPKEEP_PAGES / UPKEEP_STEP steps
        assert ticks < 200
        if not upkeep:
            break
    assert ticks > 2 and ranked(conn) == before
    assert fts.segments(conn, "notes_fts") < segments
    with db.write(conn):  # raises on a corrupt index
        conn.execute("INSERT INTO notes_fts(notes_fts, rank) VALUES ('integrity-check', 1)")


def _index_pages(conn):
    return (conn.execute("SELECT id, block FROM notes_fts_data ORDER BY id").fetchall(),
            conn.execute("SELECT k, v FROM notes_fts_config ORDER BY k").fetchall())


def test_a_tick_after_no_writes_rewrites_no_index_page(conn, monkeypatch):
    fragmented_notes(conn)
    monkeypatch.setattr(nanny, "UPKEEP_SEGMENTS", 0)  # every index is tried: merged once, then none needs it
    assert tick(conn)["index_upkeep"]
    pages, changes = _index_pages(conn), conn.total_changes
    report = tick(conn)
    assert report["index_upkeep"] == [] and _index_pages(conn) == pages
    merged = conn.total_changes - changes
    assert merged < 40, merged  # the tick's own bookkeeping: no index page
    from mindos.memory import notes
    notes.add(conn, "t-notes", content="a fresh note on the payments rollout")
    notes.add(conn, "t-notes", content="another fresh note on the payments rollout")
    written = ["notes_fts", "notes_trigram_fts"] if fts.has(conn, "notes_trigram_fts") else ["notes_fts"]
    assert [entry["index"] for entry in tick(conn)["index_upkeep"]] == written  # written since: merged
    assert tick(conn)["index_upkeep"] == []


def test_an_index_past_the_ceiling_once_its_levels_are_merged_is_merged_whole(conn, monkeypatch):
    with db.write(conn):  # small pages: segments of many pages, so the levels keep several
        conn.execute("INSERT INTO notes_fts(notes_fts, rank) VALUES ('pgsz', 128)")
    fragmented_notes(conn, 150, words=30)
    monkeypatch.setattr(nanny, "UPKEEP_SEGMENTS", 0)
    for _ in range(20):  # level by level to the end: one segment a level, more than one left
        if not tick(conn)["index_upkeep"]:
            break
    levels = fts.segments(conn, "notes_fts")
    assert levels > 1
    monkeypatch.setattr(nanny, "UPKEEP_CEILING", 1)
    for _ in range(20):
        if not tick(conn)["index_upkeep"]:
            break
    assert fts.segments(conn, "notes_fts") == 1
    with db.write(conn):  # raises on a corrupt index
        conn.execute("INSERT INTO notes_fts(notes_fts, rank) VALUES ('integrity-check', 1)")
    hits = conn.execute("SELECT count(*) FROM notes_fts WHERE notes_fts MATCH 'payments'").fetchone()[0]
    assert hits == 150
    assert tick(conn)["index_upkeep"] == []  # at the ceiling: nothing more to do


def test_a_busy_tick_does_no_upkeep(conn, home):
    fragmented_notes(conn)
    segments = fts.segments(conn, "notes_fts")
    with nanny.TickLock(str(home)) as held:
        assert held.acquired
        report = tick(conn)
    assert report["lock"] == "busy" and report["index_upkeep"] == []
    assert fts.segments(conn, "notes_fts") == segments


def test_cli_nanny_flags(cli, cli_json):
    assert cli_json("ops", "nanny", "--max-repairs", "2")["max_repairs"] == 2
    rc, out, err = cli("ops", "nanny", "--max-repairs", "-1")
    assert (rc, out) == (2, "") and err.count("\n") == 1


def test_a_busy_tick_still_reports_an_open_breaker(conn, home, monkeypatch):
    monkeypatch.setitem(repairs.COMMANDS, "recover", lambda conn, dry_run: {"changed": False, "report": {}})
    stale_lease(conn)
    tick(conn)
    assert tick(conn)["state"] == "decision_needed"
    with nanny.TickLock(str(home)) as held:
        assert held.acquired
        report = tick(conn)
    assert (report["lock"], report["state"], report["repairs"]) == ("busy", "decision_needed", [])
    assert [d["reason"] for d in report["decisions"]] == ["breaker_open"]


def test_the_nanny_can_only_run_registered_repair_commands():
    # the safety boundary as data: no deploy, merge, message or arbitrary command is reachable
    assert sorted(repairs.COMMANDS) == ["escalate-stalled", "fts-rebuild", "receipts-sweep", "recover"]


def test_metrics_count_grants_ticks_and_breakers(conn, cli_json):
    tick(conn)
    snapshot = cli_json("autopilot", "metrics")
    assert (snapshot["nanny_ticks_total"], snapshot["nanny_breakers_open"], snapshot["grants_active"]) == (1, 0, 0)


# ---------------------------------------------------------------------------------------
# Stalled leases: escalated within the caps


def test_a_stalled_lease_is_escalated_once_and_becomes_a_decision(conn):
    from autonomykit import stuck_lease

    stuck_lease(conn)
    stalled, = [item for item in sense.sense(conn)["findings"] if item["kind"] == "stalled_lease"]
    report = tick(conn)
    run, = report["repairs"]
    assert (run["repair"], run["ok"], run["changed"], run["resolved"]) == (
        "stalled-lease-escalate", True, True, [stalled["digest"]])
    assert run["result"]["escalated"][0]["task_id"] == "t-stuck"
    assert report["state"] == "decision_needed"
    decision, = report["decisions"]
    assert (decision["kind"], decision["subjects"], decision["reason"]) == (
        "stalled_lease_escalated", ["t-stuck"], "stalled_lease_escalated")
    assert report["findings"]["by_kind"] == {"stalled_lease_escalated": 1}
    assert last_event(conn, "lease_stall_escalated")["owner"] == "claude"
    again = tick(conn)
    assert (again["state"], again["repairs"], again["findings"]["carried"]) == ("decision_needed", [], 1)
    assert conn.execute("SELECT count(*) FROM audit_events WHERE action = 'lease_stall_escalated'").fetchone()[0] == 1
    leases.heartbeat(conn, "t-stuck", "claude", progress_state="fixing")  # progress moves: nothing to decide
    assert tick(conn)["state"] == "working"


def test_more_stalls_than_the_policy_allows_stay_a_snag(conn, home):
    from autonomykit import stuck_lease

    write_policy(home, "stalled-lease-escalate", "finding: stalled_lease\ntier: 0\ncommand: escalate-stalled\n"
                                                 "max_subjects: 1\nmax_per_day: 48\n")
    make_task(conn, "t-other")
    leases.claim(conn, "t-other", "codex", minutes=240)
    leases.heartbeat(conn, "t-other", "codex", progress_state="editing", stall_deadline=30)
    stuck_lease(conn)
    report = tick(conn)
    assert report["repairs"] == []
    assert {"repair": "stalled-lease-escalate", "reason": "over_subject_cap", "findings": 2} in \
        report["skipped_repairs"]
    assert report["state"] == "hit_snag" and report["findings"]["by_kind"] == {"stalled_lease": 2}
    assert conn.execute("SELECT count(*) FROM audit_events WHERE action = 'lease_stall_escalated'").fetchone()[0] == 0


def test_policies_are_not_parsed_again_while_no_finding_has_a_policy_and_their_files_are_unchanged(
        conn, home, monkeypatch):
    parked(conn, "t-blocked", "blocked", "waiting on a vendor")  # a finding no shipped policy answers
    first = tick(conn)
    assert "blocked_task" in first["findings"]["by_kind"]
    parses = []
    real = repairs.policies
    monkeypatch.setattr(repairs, "policies", lambda home: parses.append(home) or real(home))
    looked = []
    real_dir = repairs.shipped_dir
    monkeypatch.setattr(repairs, "shipped_dir", lambda: looked.append(1) or real_dir())
    second = tick(conn)
    assert parses == [] and second["repairs"] == second["skipped_repairs"] == [] and second["decisions"] == []
    # the directories are the ones the previous tick kept: the repairs module is not consulted
    assert looked == [] and tick(conn)["skipped_repairs"] == [] and looked == []
    # a home policy answering the standing finding: the files changed, so they are read again
    write_policy(home, "blocked-recover", "finding: blocked_task\ntier: 1\ncommand: recover\n")
    third = tick(conn)
    assert len(parses) == 1
    assert [(s["repair"], s["reason"]) for s in third["skipped_repairs"]] == [("blocked-recover",
                                                                             "tier_requires_operator")]
    tick(conn)  # a finding a policy answers: read on every tick
    assert len(parses) == 2


def test_an_invalid_policy_is_reported_on_every_tick(conn, home, monkeypatch):
    parked(conn, "t-blocked", "blocked", "waiting on a vendor")
    write_policy(home, "stale-lease-recover", "finding: stale_lease\ntier: 0\ncommand: recover\ncommand: x\n")
    for _ in range(3):
        report = tick(conn)
        assert report["state"] == "decision_needed"
        assert [d["kind"] for d in report["decisions"]] == ["repair_policy_invalid"]
