"""Work orders: sealed task transfer between homes, idempotent, lease-sanitized, secret-guarded."""

import json
import os

import pytest

from conftest import db_state, overwrite
from recovery_helpers import populate
from mindos.errors import IntegrityError, NotFound, Refused
from mindos.memory import facts, notes
from mindos.recovery import artifacts, doctor, workorder
from mindos.store import db, ledger

SECRET = "ghp_" + "a1B2" * 9


@pytest.fixture
def other(tmp_path, home):
    """A second home that trusts the test home's signing key (its seal.key copied into
    trusted-keys/), as an operator moving work between their own homes sets it up."""
    from mindos.recovery import keys

    connection = db.connect(str(tmp_path / "other"))
    os.makedirs(keys.trusted_dir(connection.home), mode=0o700)
    with open(os.path.join(keys.trusted_dir(connection.home), "source.key"), "w") as handle:
        handle.write(keys.home_key(str(home), create=True).hex() + "\n")
    yield connection
    connection.close()


def _actions(conn, action):
    return conn.execute("SELECT count(*) FROM audit_events WHERE action = ?", (action,)).fetchone()[0]


def test_export_import_carries_everything_and_sanitizes_the_lease(conn, home, other, tmp_path, cli):
    populate(conn)
    out = str(tmp_path / "t2.json")
    rc, stdout, err = cli("ops", "export-task", "t2", "--out", out)
    made = json.loads(stdout)
    assert (rc, err) == (0, "") and os.stat(out).st_mode & 0o777 == 0o600
    assert made["counts"]["dependencies"] == 1 and made["counts"]["notes"] == 1
    report = workorder.import_task(other, out)
    assert report["created"] and report["lease_sanitized"]
    assert report["skipped_deps"] == [{"task_id": "t2", "depends_on": "t1", "missing": ["t1"]}]
    row = other.execute("SELECT status, lease_owner, lease_expires_at FROM tasks WHERE id = 't2'").fetchone()
    assert tuple(row) == ("queued", "", None)
    assert [n["content"] for n in notes.list_notes(other, "t2")] == ["blocked on t1"]
    assert doctor.run(other.home)["ok"] and ledger.verify_chain(other)["ok"]


def test_prerequisites_first_carries_the_graph(conn, other, tmp_path):
    populate(conn)
    for task in ("t1", "t2"):
        workorder.export_task(conn, task, out=str(tmp_path / f"{task}.json"))
    workorder.import_task(other, str(tmp_path / "t1.json"))
    report = workorder.import_task(other, str(tmp_path / "t2.json"))
    assert report["skipped_deps"] == [] and report["inserted"]["dependencies"] == 1


def test_receipts_notes_and_handoffs_arrive_intact_and_reimport_dedupes(conn, other, tmp_path):
    populate(conn)
    path = str(tmp_path / "t1.json")
    workorder.export_task(conn, "t1", out=path)
    report = workorder.import_task(other, path)
    assert report["inserted"]["receipts"] == 1 and report["receipt_files_written"] == 1
    assert report["inserted"]["notes"] == 2 and report["inserted"]["handoffs"] == 2
    rid, stored, file_hash = other.execute("SELECT id, path, file_hash FROM receipts").fetchone()
    target = os.path.join(other.home, stored)
    assert os.stat(target).st_mode & 0o777 == 0o600
    live = other.execute("SELECT count(*) FROM handoffs WHERE superseded_by IS NULL").fetchone()[0]
    assert live == 1
    links = other.execute("SELECT a.id, a.superseded_by, b.supersedes FROM notes a JOIN notes b"
                          " ON b.id = a.superseded_by").fetchall()
    assert len(links) == 1 and links[0][0] == links[0][2]
    assert doctor.run(other.home)["ok"]
    state = db_state(other)
    again = workorder.import_task(other, path)
    assert again["deduplicated"] is True and _actions(other, "workorder_deduplicated") == 1
    assert [line for line in db_state(other)[0] if "audit_events" not in line] == \
           [line for line in state[0] if "audit_events" not in line]


def test_changed_export_needs_force_which_merges(conn, other, tmp_path):
    populate(conn)
    path = str(tmp_path / "t1.json")
    workorder.export_task(conn, "t1", out=path)
    workorder.import_task(other, path)
    notes.add(other, "t1", content="a local note stays")
    notes.add(conn, "t1", content="a new note at the source")
    workorder.export_task(conn, "t1", out=path, force=True)
    state = db_state(other)
    with pytest.raises(Refused, match="already exists here with different content; pass --force"):
        workorder.import_task(other, path)
    assert db_state(other) == state
    report = workorder.import_task(other, path, force=True)
    assert report["inserted"]["notes"] == 1
    contents = {r[0] for r in other.execute("SELECT content FROM notes WHERE task_id = 't1'")}
    assert {"a local note stays", "a new note at the source"} <= contents


def test_dry_run_previews_without_writing(conn, other, tmp_path):
    populate(conn)
    path = str(tmp_path / "t1.json")
    workorder.export_task(conn, "t1", out=path)
    state = db_state(other)
    report = workorder.import_task(other, path, dry_run=True)
    assert report["dry_run"] and report["created"] and report["inserted"]["notes"] == 2
    assert report["would_write_receipt_files"] == 1
    assert db_state(other) == state


def test_tampered_work_order_is_refused_even_with_force(conn, other, tmp_path, cli):
    populate(conn)
    path = str(tmp_path / "t1.json")
    workorder.export_task(conn, "t1", out=path)
    data = open(path, "rb").read()
    state = db_state(other)  # each refusal below must leave it exactly as it is here
    for i in range(0, len(data), max(1, len(data) // 300)):
        overwrite(path, data[:i] + bytes([(data[i] + 7) % 256]) + data[i + 1:])
        with pytest.raises(IntegrityError):
            workorder.import_task(other, path, force=True)
        assert db_state(other) == state
    rc, out, err = cli("ops", "import-task", path, "--force")
    assert rc == 1 and out == "" and err.count("\n") == 1


def _fact_rows(conn, where="1"):
    return [tuple(r)[1:] for r in conn.execute(f"SELECT * FROM facts WHERE {where} ORDER BY id")]


def test_facts_travel_with_windows_intact_and_dedupe_on_reimport(conn, other, tmp_path):
    populate(conn)
    facts.assert_fact(conn, subject="auth", predicate="uses", obj="pg14", source="codex", task="t1", valid_hours=48)
    closed = facts.assert_fact(conn, subject="auth", predicate="uses", obj="pg13", source="codex", task="t1")
    facts.retract(conn, closed["id"], reason="migrated")
    facts.assert_fact(conn, subject="x", predicate="y", obj="z", source="codex", task="t3")
    path = str(tmp_path / "t1.json")
    assert workorder.export_task(conn, "t1", out=path)["counts"]["facts"] == 3  # populate's + these two
    workorder.import_task(other, path)
    # every column but the home-local integer id arrives byte-intact: windows, retraction, provenance
    assert _fact_rows(other) == _fact_rows(conn, "task_id = 't1'")
    assert workorder.import_task(other, path)["deduplicated"]
    assert other.execute("SELECT count(*) FROM facts").fetchone()[0] == 3


def test_work_orders_without_facts_import_unchanged(conn, other, tmp_path):
    populate(conn)
    path = str(tmp_path / "t1.json")
    workorder.export_task(conn, "t1", out=path)
    doc = json.load(open(path))
    doc.pop("seal")
    fmt = doc.pop("format")
    doc.pop("facts")  # a work order sealed before the fact graph existed
    artifacts.write(path, artifacts.seal_doc(fmt, doc))
    with pytest.raises(Refused, match="is unsigned"):  # resealed without the key: no longer signed
        workorder.import_task(other, path)
    report = workorder.import_task(other, path, trust_unsigned=True)
    assert report["created"] and "facts_skipped" not in report and report["trust"] == "unsigned"


def test_secret_guard_at_both_ends(conn, other, tmp_path):
    populate(conn)
    notes.add(conn, "t3", content=f"token {SECRET}", allow_secret=True)
    path = str(tmp_path / "t3.json")
    with pytest.raises(Refused, match="secret guard"):
        workorder.export_task(conn, "t3", out=path)
    assert not os.path.exists(path) and _actions(conn, "secret_blocked") == 1
    workorder.export_task(conn, "t3", out=path, allow_secret=True)
    state = db_state(other)
    with pytest.raises(Refused, match="secret guard"):
        workorder.import_task(other, path)
    assert [l for l in db_state(other)[0] if "audit_events" not in l] == [l for l in state[0] if "audit_events" not in l]
    payload = json.loads(other.execute("SELECT payload_json FROM audit_events WHERE action = 'secret_blocked'").fetchone()[0])
    assert payload["kinds"] == ["github_token"] and SECRET not in json.dumps(payload)
    report = workorder.import_task(other, path, redact=True)
    assert report["secret_action"] == "redacted"
    assert [n["content"] for n in notes.list_notes(other, "t3")] == ["token [REDACTED:github_token]"]


def test_bad_inputs(conn, home, cli, tmp_path):
    populate(conn)
    with pytest.raises(NotFound, match="unknown task 'nope'"):
        workorder.export_task(conn, "nope", out=str(tmp_path / "x.json"))
    rc, out, err = cli("ops", "export-task", "nope", "--out", str(tmp_path / "x.json"))
    assert rc == 1 and out == "" and err.strip() == "unknown task 'nope'"
    rc, out, err = cli("ops", "export-task", "t1")
    assert rc == 2 and out == "" and err.count("\n") == 1
    rc, out, err = cli("ops", "import-task", str(tmp_path / "missing.json"))
    assert rc == 1 and out == "" and err.count("\n") == 1


def test_receipt_paths_outside_the_home_are_refused(conn, other, tmp_path):
    populate(conn)
    path = str(tmp_path / "t1.json")
    workorder.export_task(conn, "t1", out=path)
    doc = json.load(open(path))
    doc.pop("seal")
    fmt = doc.pop("format")
    (stored, entry), = doc["receipt_files"].items()
    doc["receipt_files"] = {"/etc/cron.d/x": entry}
    artifacts.write(path, artifacts.seal_doc(fmt, doc))
    state = db_state(other)
    with pytest.raises(Refused, match="outside the home's receipts directory"):
        workorder.import_task(other, path, trust_unsigned=True)
    assert db_state(other) == state


def test_export_redact_seals_a_redacted_copy(conn, other, tmp_path, cli):
    populate(conn)
    notes.add(conn, "t3", content=f"token {SECRET}", allow_secret=True)
    path = str(tmp_path / "t3.json")
    rc, out, err = cli("ops", "export-task", "t3", "--out", path, "--redact")
    report = json.loads(out)
    assert (rc, err) == (0, "") and report["secret_action"] == "redacted"
    assert SECRET.encode() not in open(path, "rb").read()
    assert workorder.import_task(other, path)["created"]  # nothing left for the import-side guard
    assert [n["content"] for n in notes.list_notes(other, "t3")] == ["token [REDACTED:github_token]"]
    rc, out, err = cli("ops", "export-task", "t3", "--out", path, "--redact", "--allow-secret")
    assert rc == 2 and out == "" and err.count("\n") == 1


def test_both_overrides_at_once_is_a_usage_error(conn, cli, tmp_path):
    populate(conn)
    path = str(tmp_path / "t1.json")
    workorder.export_task(conn, "t1", out=path)
    for argv in (("export-task", "t1", "--out", path), ("import-task", path)):
        rc, out, err = cli("ops", *argv, "--redact", "--allow-secret")
        assert rc == 2 and out == "" and "at most one" in err
