"""Receipts: sealed evidence files, indexed rows, and refusals that leave nothing behind."""

import json
import os
import stat

import pytest

from mindos.core import atomic, canonical
from mindos.store import db, ledger
from mindos.work import receipts, tasks
from mindos.errors import InvalidInput, NotFound, Refused
from mindos.views import show
from conftest import db_state


@pytest.fixture
def task(conn):
    return tasks.create(conn, project="Trove", title="ship it", task_id="t1")


def test_add_writes_a_sealed_0600_file_indexes_it_and_audits(conn, task):
    record = receipts.add(conn, "t1", "verification", {"tests": "pass", "health": 200})
    assert set(record) >= {"receipt_id", "task_id", "kind", "file_hash", "path", "created_at"}
    assert (record["task_id"], record["kind"], record["created_at"]) == ("t1", "verification", "2026-08-21T09:00:00Z")
    assert record["path"] == os.path.join(conn.home, "receipts", record["receipt_id"] + ".json")
    with open(record["path"], "rb") as handle:
        data = handle.read()
    assert canonical.sha256_hex(data) == record["file_hash"] and record["bytes"] == len(data)
    assert stat.S_IMODE(os.stat(record["path"]).st_mode) == 0o600
    document = json.loads(data)
    assert document["payload"] == {"tests": "pass", "health": 200}
    assert (document["receipt_id"], document["task_id"], document["kind"]) == (record["receipt_id"], "t1",
                                                                                 "verification")
    rows = show.receipts_for(conn, "t1")
    assert [(r["id"], r["file_hash"], r["path"]) for r in rows] == [
        (record["receipt_id"], record["file_hash"], f"receipts/{record['receipt_id']}.json")]
    event = ledger.events(conn, action="receipt_added")["events"][0]
    assert (event["entity_id"], event["payload"]) == ("t1", {"receipt_id": record["receipt_id"],
                                                           "kind": "verification", "file_hash": record["file_hash"]})
    assert [r["id"] for r in show.show(conn, "t1")["receipts"]] == [record["receipt_id"]]
    assert not [name for name in os.listdir(db.receipts_dir(conn.home)) if name.endswith(".tmp")]


@pytest.mark.parametrize("payload", ["just text", 42, 1.5, None, True, [1, "two"], {"ünï": "cödé ✓", "q": "'\""}])
def test_any_json_value_is_a_payload_and_round_trips_exactly(conn, task, payload):
    record = receipts.add(conn, "t1", "ci", payload)
    loaded = receipts.load(conn, record["receipt_id"])
    assert loaded["document"]["payload"] == payload
    assert (loaded["hash_ok"], loaded["file_present"], loaded["actual_hash"]) == (True, True, record["file_hash"])


def test_load_detects_tampering_and_missing_files(conn, task):
    record = receipts.add(conn, "t1", "ci", {"result": "green"})
    with open(record["path"], "r+b") as handle:
        data = handle.read().replace(b"green", b"red!!")
        handle.seek(0)
        handle.write(data)
    tampered = receipts.load(conn, record["receipt_id"])
    assert tampered["hash_ok"] is False and tampered["document"]["payload"] == {"result": "red!!"}
    os.unlink(record["path"])
    missing = receipts.load(conn, record["receipt_id"])
    assert (missing["file_present"], missing["document"], missing["hash_ok"]) == (False, None, False)


def test_unsealed_legacy_rows_are_not_judged(conn, task):
    path = os.path.join(db.receipts_dir(conn.home), "legacy.json")
    with open(path, "w") as handle:
        handle.write('{"old": true}')
    with db.write(conn):
        conn.execute("INSERT INTO receipts(id, task_id, kind, path, file_hash, created_at)"
                     " VALUES ('legacy', 't1', 'ci', 'receipts/legacy.json', '', '2026-01-01T00:00:00Z')")
    loaded = receipts.load(conn, "legacy")
    assert (loaded["hash_ok"], loaded["document"], loaded["file_present"]) == (None, {"old": True}, True)


def test_load_refuses_unknown_and_unsafe_ids(conn):
    with pytest.raises(NotFound, match="unknown receipt 'r-nope'"):
        receipts.load(conn, "r-nope")
    with pytest.raises(InvalidInput):
        receipts.load(conn, "../state")


@pytest.mark.parametrize("text", ["{bad", "", "{'single': 1}", "NaN", '{"x": -Infinity}', "[1,]", "{" * 50000])
def test_malformed_json_is_refused_before_anything_is_written(conn, task, text):
    before = db_state(conn)
    with pytest.raises(InvalidInput, match=r"^invalid --payload: malformed JSON"):
        receipts.add_json(conn, "t1", "ci", text)
    assert db_state(conn) == before


@pytest.mark.parametrize("kind", ["", "UPPER", "has space", "x" * 65, "a;b", "ü"])
def test_invalid_kind_is_refused(conn, task, kind):
    before = db_state(conn)
    with pytest.raises(InvalidInput, match=r"^invalid --kind"):
        receipts.add_json(conn, "t1", kind, '{"ok": true}')
    with pytest.raises(InvalidInput, match=r"^invalid --kind"):
        receipts.add(conn, "t1", kind, {"ok": True})
    assert db_state(conn) == before


def test_unknown_task_and_unsafe_task_ids_are_refused(conn):
    before = db_state(conn)
    with pytest.raises(NotFound, match="unknown task 'ghost'"):
        receipts.add(conn, "ghost", "ci", {})
    for bad in ("../x", "a/b", "a" * 65):
        with pytest.raises(InvalidInput, match="^invalid task id"):
            receipts.add(conn, bad, "ci", {})
    assert db_state(conn) == before


def test_huge_payloads_are_refused(conn, task):
    before = db_state(conn)
    huge_text = json.dumps({"log": "x" * receipts.MAX_PAYLOAD_BYTES})
    with pytest.raises(InvalidInput, match=r"^invalid --payload: .* over the limit"):
        receipts.add_json(conn, "t1", "ci", huge_text)
    with pytest.raises(InvalidInput, match=r"^invalid --payload: .* over the limit"):
        receipts.add(conn, "t1", "ci", {"log": "é" * (receipts.MAX_PAYLOAD_BYTES // 2)})  # 2 bytes each
    assert db_state(conn) == before
    assert receipts.add(conn, "t1", "ci", "x" * (receipts.MAX_PAYLOAD_BYTES - 2))["bytes"] > receipts.MAX_PAYLOAD_BYTES


@pytest.mark.parametrize("payload", [float("nan"), {"x": float("inf")}, {1j: 2}, object(), "bad \udcff"])
def test_values_that_are_not_json_are_refused(conn, task, payload):
    before = db_state(conn)
    with pytest.raises(InvalidInput, match=r"^invalid --payload"):
        receipts.add(conn, "t1", "ci", payload)
    assert db_state(conn) == before


def test_failure_after_the_file_was_written_removes_it(conn, task, monkeypatch):
    before = db_state(conn)
    real_append = ledger.append_event

    def failing_append(conn_, entity_type, entity_id, action, payload=None):
        if action == "receipt_added":
            raise RuntimeError("ledger unavailable")
        return real_append(conn_, entity_type, entity_id, action, payload)

    monkeypatch.setattr(ledger, "append_event", failing_append)
    with pytest.raises(RuntimeError):
        receipts.add(conn, "t1", "ci", {"ok": True})
    assert db_state(conn) == before


def test_cli_receipt(conn, task, cli):
    rc, out, err = cli("autopilot", "receipt", "t1", "--kind", "verification", "--payload",
                       '{"tests":"pass","health":200}')
    assert rc == 0 and err == ""
    record = json.loads(out)
    assert len(record["file_hash"]) == 64 and os.path.exists(record["path"])
    before = db_state(conn)
    rc, out, err = cli("autopilot", "receipt", "t1", "--kind", "ci", "--payload", "{nope")
    assert (rc, out) == (2, "") and err.startswith("invalid --payload: malformed JSON") and err.count("\n") == 1
    rc, out, err = cli("autopilot", "receipt", "ghost", "--kind", "ci", "--payload", "{}")
    assert (rc, out, err) == (1, "", "unknown task 'ghost'\n")
    rc, out, err = cli("autopilot", "receipt", "t1", "--payload", "{}")
    assert rc == 2 and out == "" and "--kind" in err
    assert db_state(conn) == before


def test_a_moved_home_keeps_its_receipt_seals(tmp_path):
    first = tmp_path / "first"
    conn = db.connect(str(first))
    tasks.create(conn, project="P", title="t", task_id="t1")
    record = receipts.add(conn, "t1", "ci", {"ok": True})
    conn.close()
    os.rename(first, tmp_path / "second")
    conn = db.connect(str(tmp_path / "second"))
    try:
        loaded = receipts.load(conn, record["receipt_id"])
    finally:
        conn.close()
    assert loaded["file_present"] is True and loaded["hash_ok"] is True


def test_metrics_count_receipt_files_no_row_indexes(conn):
    tasks.create(conn, project="P", title="t", task_id="t1")
    receipts.add(conn, "t1", "ci", {"ok": True})
    assert receipts.metrics(conn) == {"receipt_files_unindexed": 0}
    atomic.atomic_write(os.path.join(conn.home, "receipts", "r-orphan.json"), b"{}\n")
    with open(os.path.join(conn.home, "receipts", ".r-x.json.1.ab.tmp"), "wb") as handle:
        handle.write(b"{")
    assert receipts.metrics(conn) == {"receipt_files_unindexed": 2}


def _symlinked(home, tmp_path, part):
    outside = tmp_path / "outside"
    outside.mkdir()
    target = os.path.join(str(home), part)
    os.rename(target, outside / "moved")
    os.symlink(outside / "moved", target)
    return outside / "moved"


def test_a_symlinked_receipts_dir_is_refused(conn, tmp_path):
    tasks.create(conn, project="P", title="x", task_id="t1")
    outside = _symlinked(conn.home, tmp_path, "receipts")
    before = db_state(conn)
    with pytest.raises(Refused, match="symlink"):
        receipts.add(conn, "t1", "ci", {"ok": True})
    assert db_state(conn)[0] == before[0] and os.listdir(outside) == []


def test_receipts_are_written_and_read_without_following_symlinks(conn, tmp_path):
    tasks.create(conn, project="P", title="x", task_id="t1")
    record = receipts.add(conn, "t1", "ci", {"ok": True})
    path = record["path"]
    secret = tmp_path / "elsewhere.json"
    secret.write_text(open(path).read())
    os.unlink(path)
    os.symlink(secret, path)  # swap the evidence for a link to a file outside the home
    loaded = receipts.load(conn, record["receipt_id"])
    assert loaded["file_present"] is False and loaded["hash_ok"] is False
