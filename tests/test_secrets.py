"""The secret guard: detector accuracy on the measured corpus, the three audited outcomes,
and the promise that no secret value ever lands in the database, the ledger or the output."""

import json
import os
import time

import pytest

from conftest import script
from mindos import db, secrets, tasks
from mindos.errors import InvalidInput, Refused
from secret_corpus import CLEAN, SECRETS, secret_texts

AWS = "AKIAQ3EGRT7XMPL2WQ9Z"
GH = "ghp_" + "R8m2Qx7Lw0Pz4Vb6Nc1Hk9Jd3Fs5Ga7Ty2Ue4Io"


def _events(conn, action):
    rows = conn.execute("SELECT entity_type, entity_id, payload_json FROM audit_events WHERE action = ? ORDER BY id",
                        (action,)).fetchall()
    return [(r[0], r[1], json.loads(r[2])) for r in rows]


def _db_bytes(home):
    data = b""
    for suffix in ("", "-wal", "-shm", "-journal"):
        path = os.path.join(str(home), "state.db" + suffix)
        if os.path.exists(path):
            with open(path, "rb") as handle:
                data += handle.read()
    return data


# ---------------------------------------------------------------------------------------
# The measured corpus


def test_corpus_is_big_enough_and_covers_every_kind():
    assert len(SECRETS) >= 100 and len(CLEAN) >= 100
    kinds = {kind for kind, _, _ in SECRETS}
    for required in ("aws_access_key", "github_token", "openai_key", "slack_token", "google_api_key", "private_key",
                     "bearer_token", "password_assignment", "api_key_assignment", "jwt", "stripe_key",
                     "connection_string", "npm_token", "pypi_token"):
        assert required in kinds


def test_every_secret_text_is_detected_and_redacted(capsys):
    missed = []
    for kind, value, text in secret_texts():
        found = secrets.scan(text)
        redacted, kinds = secrets.redact(text)
        if kind not in found or value in redacted or "[REDACTED:" not in redacted or kinds != found:
            missed.append((kind, text[:60]))
    assert missed == []
    assert capsys.readouterr() == ("", "")


def test_every_clean_text_passes_untouched(capsys):
    flagged = [(secrets.scan(text), text) for text in CLEAN if secrets.scan(text)]
    assert flagged == []
    for text in CLEAN:
        assert secrets.redact(text) == (text, [])
    assert capsys.readouterr() == ("", "")


def test_scan_reports_sorted_unique_kinds_never_values():
    text = f"a={AWS} b={AWS} token {GH} password: hunter2x9"
    found = secrets.scan(text)
    assert found == sorted(set(found))
    assert found == ["aws_access_key", "github_token", "password_assignment"]
    for kind in found:
        assert AWS not in kind and "hunter2x9" not in kind


def test_redaction_is_idempotent_and_leaves_prose_around_it():
    for _, value, text in secret_texts():
        once, _ = secrets.redact(text)
        assert secrets.scan(once) == [], once
        assert secrets.redact(once) == (once, [])
    assert secrets.redact(f"key is {AWS}, rotate it") == ("key is [REDACTED:aws_access_key], rotate it",
                                                          ["aws_access_key"])
    assert secrets.redact("DB_PASSWORD=Tr0ub4dor&3 on host db-2") == (
        "DB_PASSWORD=[REDACTED:password_assignment] on host db-2", ["password_assignment"])


def test_overlapping_findings_take_the_specific_label():
    redacted, kinds = secrets.redact(f"api_key={GH}")
    assert redacted == "api_key=[REDACTED:github_token]"
    assert kinds == ["api_key_assignment", "github_token"]


@pytest.mark.parametrize("text", [
    "fencing token: lease_epoch chain",
    "password policy",
    "token budget",
    "password: see vault",          # no digit in the value
    "secret: 3 replicas",           # too short, digits only
    "max_tokens=4096",
    "password_min_length=12",
    "",
])
def test_generic_assignments_need_a_real_value(text):
    assert secrets.scan(text) == []


def test_generic_assignment_with_a_digit_is_caught():
    assert secrets.scan("password: correcthorse9") == ["password_assignment"]
    assert secrets.scan("fencing token: abc123def456") == ["api_key_assignment"]


@pytest.mark.parametrize("text", [
    "A" * 65536, "a-" * 32768, "password=" * 7000, "sk-" * 20000, "eyJ" + "a." * 30000, "://" * 20000,
    "-----BEGIN PRIVATE KEY-----" + "A" * 60000, "x" * 65536, "token: " * 9000,
])
def test_pathological_inputs_stay_fast(text):
    started = time.perf_counter()
    secrets.redact(text)
    assert time.perf_counter() - started < 1.0


def test_non_string_and_missing_input():
    assert secrets.scan(None) == []
    assert secrets.scan("") == []
    assert secrets.redact("") == ("", [])


# ---------------------------------------------------------------------------------------
# guard(): the three audited outcomes


@pytest.fixture
def task(conn):
    return tasks.create(conn, project="Trove", title="secret guard", task_id="t1")["id"]


def test_guard_passes_clean_fields_without_audit(conn, task):
    before = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    fields = {"content": "API rate limit is 60/min", "evidence": ["tests pass", "sha 3f786850e387"]}
    with db.write(conn):
        out, outcome = secrets.guard(conn, "note", task, fields)
    assert out == fields and outcome is None
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == before


def test_guard_blocks_and_the_refusal_survives_the_rollback(conn, task):
    with pytest.raises(Refused) as caught:
        with db.write(conn):
            conn.execute("UPDATE tasks SET title = 'changed' WHERE id = ?", (task,))
            secrets.guard(conn, "note", task, {"content": f"key is {AWS}", "risks": ["fine", f"tok {GH}"]})
    message = str(caught.value)
    assert "aws_access_key" in message and "github_token" in message
    assert "--redact" in message and "--allow-secret" in message
    assert AWS not in message and GH not in message and "\n" not in message
    assert tasks.get(conn, task)["title"] == "secret guard"  # the surrounding write rolled back
    assert _events(conn, "secret_blocked") == [
        ("note", task, {"kinds": ["aws_access_key", "github_token"], "fields": ["content", "risks"]})]


def test_guard_redacts_strings_and_lists(conn, task):
    with db.write(conn):
        out, outcome = secrets.guard(conn, "handoff", task, {"objective": f"use {AWS}", "evidence": [f"t {GH}", "ok"]},
                                     redact=True)
    assert out == {"objective": "use [REDACTED:aws_access_key]", "evidence": ["t [REDACTED:github_token]", "ok"]}
    assert outcome == {"secret_kinds": ["aws_access_key", "github_token"], "secret_action": "redacted"}
    assert _events(conn, "secret_redacted") == [
        ("handoff", task, {"kinds": ["aws_access_key", "github_token"], "fields": ["evidence", "objective"]})]


def test_guard_allow_secret_keeps_the_text_and_audits(conn, task):
    with db.write(conn):
        out, outcome = secrets.guard(conn, "note", task, {"content": f"key is {AWS}"}, allow_secret=True)
    assert out == {"content": f"key is {AWS}"}
    assert outcome == {"secret_kinds": ["aws_access_key"], "secret_action": "allowed"}
    assert _events(conn, "secret_allowed") == [("note", task, {"kinds": ["aws_access_key"], "fields": ["content"]})]
    assert AWS not in json.dumps(_events(conn, "secret_allowed"))


def test_guard_refuses_both_flags_at_once(conn, task):
    with pytest.raises(InvalidInput):
        with db.write(conn):
            secrets.guard(conn, "note", task, {"content": "x"}, redact=True, allow_secret=True)
    assert _events(conn, "secret_blocked") == []


# ---------------------------------------------------------------------------------------
# No value anywhere: database bytes, WAL, ledger, stdout, stderr


def test_refused_and_redacted_notes_leave_no_trace_of_the_value(cli, cli_json, conn, home, task):
    sample = secret_texts()[::6]
    values = [value for _, value, _ in sample]
    for _, value, text in sample:
        rc, out, err = cli("autopilot", "note", task, "--content", text)
        assert rc == 1 and out == ""
        assert value not in err and "secret guard" in err
        note = cli_json("autopilot", "note", task, "--content", text, "--redact")
        assert value not in json.dumps(note) and note["secret_action"] == "redacted"
    raw = _db_bytes(home)
    for value in values:
        for line in value.splitlines():
            assert line.encode() not in raw
    ledger = conn.execute("SELECT group_concat(payload_json, '') FROM audit_events").fetchone()[0]
    for value in values:
        assert value not in ledger
    assert len(_events(conn, "secret_blocked")) == len(values)
    assert len(_events(conn, "secret_redacted")) == len(values)


def test_subprocess_refusal_prints_one_clean_line(home, tmp_path):
    created = script("autopilot.py", "create", "--project", "Trove", "--title", "x", "--id", "t9", home=home)
    assert created.returncode == 0, created.stderr
    proc = script("autopilot.py", "note", "t9", "--content", f"AWS key {AWS}", home=home)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and AWS not in proc.stderr and "aws_access_key" in proc.stderr
    assert AWS.encode() not in _db_bytes(home)


# ---------------------------------------------------------------------------------------
# The fleet sweep and metrics


def _handoff(conn, task, objective, evidence, superseded_by=None):
    with db.write(conn):
        cursor = conn.execute(
            "INSERT INTO handoffs(task_id, from_agent, to_agent, status, objective, evidence, payload_hash,"
            " superseded_by, created_at)"
            " VALUES (?, 'codex', 'claude', 'running', ?, ?, 'h', ?, '2026-08-21T09:00:00Z')",
            (task, objective, json.dumps(evidence), superseded_by),
        )
    return cursor.lastrowid


def test_secret_scan_finds_legacy_rows_by_kind_only(cli, conn, task):
    from mindos import notes

    notes.add(conn, task, content="clean fact about retries")
    leaked = notes.add(conn, task, content=f"legacy key {AWS}", allow_secret=True)
    old = _handoff(conn, task, "old objective", [f"token {GH}"], superseded_by=None)
    with db.write(conn):
        conn.execute("UPDATE handoffs SET superseded_by = 99 WHERE id = ?", (old,))
    live = _handoff(conn, task, "deploy with password: Zq8vLm2x", ["tests pass"])
    rc, out, err = cli("ops", "secret-scan")
    assert rc == 1 and err == ""
    report = json.loads(out)
    assert AWS not in out and GH not in out and "Zq8vLm2x" not in out
    assert report["findings"] == [
        {"table": "notes", "id": leaked["id"], "task_id": task, "kinds": ["aws_access_key"], "fields": ["content"],
         "superseded": False},
        {"table": "handoffs", "id": live, "task_id": task, "kinds": ["password_assignment"], "fields": ["objective"],
         "superseded": False},
    ]
    assert report["notes_scanned"] == 2 and report["handoffs_scanned"] == 1
    assert report["by_kind"] == {"aws_access_key": 1, "password_assignment": 1}
    rc, out, _ = cli("ops", "secret-scan", "--all")
    report = json.loads(out)
    assert [(f["table"], f["id"], f["superseded"]) for f in report["findings"]] == [
        ("notes", leaked["id"], False), ("handoffs", old, True), ("handoffs", live, False)]
    assert report["include_superseded"] is True


def test_secret_scan_is_read_only_and_clean_exit_zero(cli, conn, task):
    from mindos import notes

    notes.add(conn, task, content="nothing to see: token budget 4000")
    before = conn.execute("SELECT count(*), max(hash) FROM audit_events").fetchone()[:]
    rc, out, err = cli("ops", "secret-scan")
    assert rc == 0 and err == "" and json.loads(out)["findings_total"] == 0
    assert conn.execute("SELECT count(*), max(hash) FROM audit_events").fetchone()[:] == before


def test_metrics_count_each_outcome(cli, cli_json, conn, task):
    cli("autopilot", "note", task, "--content", f"k {AWS}")
    cli("autopilot", "note", task, "--content", f"k {AWS}")
    cli_json("autopilot", "note", task, "--content", f"k {AWS}", "--redact")
    cli_json("autopilot", "note", task, "--content", f"g {GH}", "--allow-secret")
    snapshot = cli_json("autopilot", "metrics")
    assert (snapshot["secrets_blocked_total"], snapshot["secrets_redacted_total"],
            snapshot["secrets_allowed_total"]) == (2, 1, 1)
