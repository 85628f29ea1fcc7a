"""The secret guard on writes: the three audited outcomes, and the promise that no secret value
ever lands in the database, the ledger or the output."""

import json
import os

import pytest

from conftest import script
from mindos.store import db
from mindos.work import rows, tasks
from mindos.errors import InvalidInput, Refused
from mindos.memory import guard as sweeper
from mindos.store import guard
from secret_corpus import secret_texts

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


@pytest.fixture
def task(conn):
    return tasks.create(conn, project="Trove", title="secret guard", task_id="t1")["id"]


def test_guard_passes_clean_fields_without_audit(conn, task):
    before = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    fields = {"content": "API rate limit is 60/min", "evidence": ["tests pass", "sha 3f786850e387"]}
    with db.write(conn):
        out, outcome = guard.guard(conn, "note", task, fields)
    assert out == fields and outcome is None
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == before


def test_guard_blocks_and_the_refusal_survives_the_rollback(conn, task):
    with pytest.raises(Refused) as caught:
        with db.write(conn):
            conn.execute("UPDATE tasks SET title = 'changed' WHERE id = ?", (task,))
            guard.guard(conn, "note", task, {"content": f"key is {AWS}", "risks": ["fine", f"tok {GH}"]})
    message = str(caught.value)
    assert "aws_access_key" in message and "github_token" in message
    assert "--redact" in message and "--allow-secret" in message
    assert AWS not in message and GH not in message and "\n" not in message
    assert rows.get(conn, task)["title"] == "secret guard"  # the surrounding write rolled back
    assert _events(conn, "secret_blocked") == [
        ("note", task, {"kinds": ["aws_access_key", "github_token"], "fields": ["content", "risks"]})]


def test_guard_redacts_strings_and_lists(conn, task):
    with db.write(conn):
        out, outcome = guard.guard(conn, "handoff", task, {"objective": f"use {AWS}", "evidence": [f"t {GH}", "ok"]},
                                     redact=True)
    assert out == {"objective": "use [REDACTED:aws_access_key]", "evidence": ["t [REDACTED:github_token]", "ok"]}
    assert outcome == {"secret_kinds": ["aws_access_key", "github_token"], "secret_action": "redacted"}
    assert _events(conn, "secret_redacted") == [
        ("handoff", task, {"kinds": ["aws_access_key", "github_token"], "fields": ["evidence", "objective"]})]


def test_guard_allow_secret_keeps_the_text_and_audits(conn, task):
    with db.write(conn):
        out, outcome = guard.guard(conn, "note", task, {"content": f"key is {AWS}"}, allow_secret=True)
    assert out == {"content": f"key is {AWS}"}
    assert outcome == {"secret_kinds": ["aws_access_key"], "secret_action": "allowed"}
    assert _events(conn, "secret_allowed") == [("note", task, {"kinds": ["aws_access_key"], "fields": ["content"]})]
    assert AWS not in json.dumps(_events(conn, "secret_allowed"))


def test_guard_refuses_both_flags_at_once(conn, task):
    with pytest.raises(InvalidInput):
        with db.write(conn):
            guard.guard(conn, "note", task, {"content": "x"}, redact=True, allow_secret=True)
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


# Each write surface that stores agent text: (name, argv builder).  ``nid`` is a live note.
WRITE_SURFACES = [
    ("note", lambda task, nid, text: ["note", task, "--content", text]),
    ("supersede-note", lambda task, nid, text: ["supersede-note", str(nid), "--content", text]),
    ("handoff-list", lambda task, nid, text: ["handoff", task, "--from-agent", "codex", "--evidence", "tests pass",
                                             "--risk", text]),
    ("handoff-commit", lambda task, nid, text: ["handoff", task, "--from-agent", "codex", "--commit", text[:200]]),
]


def _assert_value_nowhere(conn, home, values, outputs):
    """No value in the database files (main, WAL, SHM), the ledger, or any stdout/stderr."""
    raw = _db_bytes(home)
    ledger = conn.execute("SELECT coalesce(group_concat(payload_json, ''), '') FROM audit_events").fetchone()[0]
    for value in values:
        for line in value.splitlines():
            assert line.encode() not in raw
        assert value not in ledger
        for text in outputs:
            assert value not in text


@pytest.mark.parametrize("surface", [name for name, _ in WRITE_SURFACES])
def test_every_write_surface_refuses_and_redacts_without_a_trace(cli, cli_json, conn, home, task, surface):
    from mindos.memory import notes

    argv = dict(WRITE_SURFACES)[surface]
    sample = [item for item in secret_texts()[::9] if len(item[2]) <= 200 or surface != "handoff-commit"]
    values, outputs = [], []
    for number, (_, value, text) in enumerate(sample):
        nid = notes.add(conn, task, content=f"fact number {number}")["id"]
        values.append(value)
        before = conn.execute("SELECT count(*) FROM notes").fetchone()[0], conn.execute(
            "SELECT count(*) FROM handoffs").fetchone()[0]
        rc, out, err = cli("autopilot", *argv(task, nid, text))
        assert rc == 1 and out == "" and "secret guard" in err and err.count("\n") == 1
        assert (conn.execute("SELECT count(*) FROM notes").fetchone()[0],
                conn.execute("SELECT count(*) FROM handoffs").fetchone()[0]) == before
        stored = cli_json("autopilot", *argv(task, nid, text), "--redact")
        assert stored["secret_action"] == "redacted"
        outputs.extend([err, json.dumps(stored)])
    _assert_value_nowhere(conn, home, values, outputs)
    assert len(_events(conn, "secret_blocked")) == len(sample)
    assert len(_events(conn, "secret_redacted")) == len(sample)


# Credential-shaped agent names: every one passes validate.agent's charset.
IDENTITY_VALUES = [AWS, GH, "glpat-qXhvVCRE-HLO5beXBpvn", "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
                   "sk-" + "3TH65u7g83G6J7jKhG6LqG72wXNxNFWJE6Id1RPXZbxFK5wY"]
IDENTITY_SURFACES = [
    ("note --source", "source", lambda task, nid, value: ["note", task, "--content", "clean fact", "--source", value]),
    ("supersede-note --source", "source",
     lambda task, nid, value: ["supersede-note", str(nid), "--content", "clean replacement", "--source", value]),
    ("handoff --from-agent", "from_agent",
     lambda task, nid, value: ["handoff", task, "--from-agent", value, "--objective", "resume"]),
    ("handoff --to-agent", "to_agent",
     lambda task, nid, value: ["handoff", task, "--from-agent", "codex", "--to-agent", value, "--objective", "go"]),
]


@pytest.mark.parametrize("surface", [name for name, _, _ in IDENTITY_SURFACES])
def test_credential_shaped_agent_names_are_refused_under_every_flag(cli, conn, home, task, surface):
    from mindos.core import validate
    from mindos.memory import notes

    field, argv = {name: (f, a) for name, f, a in IDENTITY_SURFACES}[surface]
    nid = notes.add(conn, task, content="the original fact")["id"]
    outputs = []
    for value in IDENTITY_VALUES:
        assert validate.agent(value, secret_check=False) == value  # the charset alone would let it through
        for flags in ((), ("--redact",), ("--allow-secret",)):
            before = [conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("notes", "handoffs")]
            rc, out, err = cli("autopilot", *argv(task, nid, value), *flags)
            assert rc == 1 and out == "", (value, flags, err)
            assert "secret guard" in err and field in err and err.count("\n") == 1
            assert [conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("notes", "handoffs")] == before
            outputs.append(err)
    blocked = _events(conn, "secret_blocked")
    assert len(blocked) == 3 * len(IDENTITY_VALUES)
    assert all(payload["fields"] == [field] and set(payload) == {"kinds", "fields"} for _, _, payload in blocked)
    assert _events(conn, "secret_redacted") == [] and _events(conn, "secret_allowed") == []
    _assert_value_nowhere(conn, home, IDENTITY_VALUES, outputs)


def test_a_secret_agent_name_and_secret_content_are_blocked_together(conn, task):
    from mindos.memory import notes

    with pytest.raises(Refused) as caught:
        notes.add(conn, task, content=f"key {AWS}", source=GH, redact=True)
    assert "source" in str(caught.value) and GH not in str(caught.value) and AWS not in str(caught.value)
    assert _events(conn, "secret_blocked") == [
        ("note", task, {"kinds": ["aws_access_key", "github_token"], "fields": ["content", "source"]})]
    assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 0


def test_subprocess_refusal_prints_one_clean_line(home, tmp_path):
    created = script("autopilot.py", "create", "--project", "Trove", "--title", "x", "--id", "t9", home=home)
    assert created.returncode == 0, created.stderr
    proc = script("autopilot.py", "note", "t9", "--content", f"AWS key {AWS}", home=home)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and AWS not in proc.stderr and "aws_access_key" in proc.stderr
    assert AWS.encode() not in _db_bytes(home)


# ---------------------------------------------------------------------------------------
# Rejected flag values: a credential-shaped one is never echoed back


@pytest.mark.parametrize("argv", [
    ["note", "t1", "--content", "x", "--kind", "password=Hunter2x9"],
    ["note", "t1", "--content", "x", "--source", f"{AWS}!"],
    ["supersede-note", f"{GH}x", "--content", "x"],
    ["handoff", "t1", "--from-agent", "codex", "--to-agent", f"password={GH}"],
    ["handoff-history", "api_key=Zq8vLm2x1Tq9"],
    ["search-notes", "pool", "--kind", "secret: Zq8vLm2x1Tq9"],
    ["search-notes", "pool", "--status", "password=Hunter2x9"],
    ["search-notes", "pool", "--project", f"key {AWS}"],
    ["create", "--project", "Trove", "--title", "x", "--priority", "password=Hunter2x9"],
    ["list", "--status", "password=Hunter2x9"],
])
def test_bad_flag_values_that_look_like_secrets_are_redacted_in_errors(cli, conn, task, argv):
    before = conn.execute("SELECT count(*), coalesce(max(id), 0) FROM audit_events").fetchone()[:]
    rc, out, err = cli("autopilot", *argv)
    assert rc == 2 and out == ""
    assert "invalid" in err and "<redacted>" in err and err.count("\n") == 1
    for secret in ("Hunter2x9", AWS, GH, "Zq8vLm2x1Tq9"):
        assert secret not in err
    assert conn.execute("SELECT count(*), coalesce(max(id), 0) FROM audit_events").fetchone()[:] == before


def test_ordinary_bad_values_are_still_shown(cli, conn, task):
    from mindos.core import validate

    rc, _, err = cli("autopilot", "note", task, "--content", "x", "--kind", "opinion")
    assert rc == 2 and "invalid --kind: 'opinion' (choose from" in err
    assert validate.shown("bad id!") == "'bad id!'" and validate.shown("x" * 100, 10) == "'xxxxxxxxx"
    assert validate.shown(None) == "None" and validate.shown(f"id {AWS}") == "<redacted>"
    with pytest.raises(InvalidInput, match="<redacted>"):
        validate.identifier(f"{GH}!")
    with pytest.raises(InvalidInput, match="<redacted>"):
        validate.tag("API_KEY=Zq8vLm2x1Tq9")
    from mindos.context import pack as context

    with pytest.raises(InvalidInput, match="invalid --related-scope: <redacted>"):  # the core check argparse fronts
        context.pack_context(conn, task, related=1, related_scope=f"token={GH}")


def test_ack_refusal_never_echoes_a_credential_shaped_agent(cli, cli_json, task):
    cli_json("autopilot", "handoff", task, "--from-agent", "codex", "--to-agent", "claude", "--objective", "go")
    rc, out, err = cli("autopilot", "ack", task, "--agent", AWS)
    assert rc == 1 and out == "" and AWS not in err and "secret guard" in err


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
    from mindos.memory import notes

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


def test_secret_scan_sweeps_agent_name_columns(cli, conn, task):
    from mindos.memory import notes

    legacy = notes.add(conn, task, content="clean legacy fact")
    handoff = _handoff(conn, task, "clean objective", ["tests pass"])
    with db.write(conn):  # rows written before the identity guard existed
        conn.execute("UPDATE notes SET source = ? WHERE id = ?", (AWS, legacy["id"]))
        conn.execute("UPDATE handoffs SET from_agent = ?, acked_by = ? WHERE id = ?", (GH, GH, handoff))
    rc, out, err = cli("ops", "secret-scan")
    assert rc == 1 and err == "" and AWS not in out and GH not in out
    assert [(f["table"], f["id"], f["kinds"], f["fields"]) for f in json.loads(out)["findings"]] == [
        ("notes", legacy["id"], ["aws_access_key"], ["source"]),
        ("handoffs", handoff, ["github_token"], ["acked_by", "from_agent"]),
    ]
    assert sweeper.sweep(conn)["by_kind"] == {"aws_access_key": 1, "github_token": 1}


def test_secret_scan_is_read_only_and_clean_exit_zero(cli, conn, task):
    from mindos.memory import notes

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
