"""The smaller compatibility flags scripts lean on: events --entity-type, memory-list --kind
--since, show --limit, ops.py repair --finding-hash, ops.py approval --reason,
home-select/home-deselect --selector, session-ingest --since.  Each through its front door,
with retries and bad input (a clear error, the database unchanged)."""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "autonomy"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "memory"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "recovery"))

import sessionkit  # noqa: E402
from autonomykit import stale_lease  # noqa: E402
from conftest import db_state, last_event, make_task  # noqa: E402
from mindos.autonomy import sense  # noqa: E402
from mindos.core import clock  # noqa: E402
from mindos.memory import memories  # noqa: E402
from mindos.store import db  # noqa: E402

AWS = "AKIA" + "Z7QW3RTY6UIO2PAS"


def refused(cli, conn, door, *argv, rc=2, match=None):
    """Run a call that must fail with ``rc``, one stderr line, no stdout, database unchanged."""
    before = db_state(conn)
    code, out, err = cli(door, *argv)
    assert code == rc, (code, out, err)
    assert out == "" and err.count("\n") == 1
    if match:
        assert match in err, err
    assert db_state(conn) == before
    return err


# --- events --entity-type -------------------------------------------------------------


def test_events_entity_type_filters_and_counts(conn, cli_json):
    make_task(conn, "t1")
    memories.retain(conn, "the pool is capped at 60", project="Trove")
    out = cli_json("autopilot", "events", "--entity-type", "memory")
    assert [e["entity_type"] for e in out["events"]] == ["memory"] and out["total_matching"] == 1
    tasks_only = cli_json("autopilot", "events", "--entity-type", "task", "--action", "created")
    assert [e["entity_id"] for e in tasks_only["events"]] == ["t1"]
    assert cli_json("autopilot", "events", "--entity-type", "nothing")["events"] == []
    assert cli_json("autopilot", "events", "--entity-type", "memory") == out  # a read: same answer twice


@pytest.mark.parametrize("value", ["", "Task", "x" * 65, "task'; DROP TABLE tasks;--", "t\u00e4sk"])
def test_events_entity_type_bad_input(conn, cli, value):
    make_task(conn, "t1")
    refused(cli, conn, "autopilot", "events", f"--entity-type={value}", match="--entity-type")


# --- memory-list --kind --since -------------------------------------------------------


def test_memory_list_kind_and_since(conn, cli_json):
    memories.retain(conn, "old decision", kind="decision", project="Auth")
    clock.advance(hours=1)
    cut = clock.now_iso()
    memories.retain(conn, "new decision", kind="decision", project="Auth")
    memories.retain(conn, "new fact", kind="fact", project="Auth")
    kinds = cli_json("autopilot", "memory-list", "--kind", "decision")
    assert [m["content"] for m in kinds] == ["new decision", "old decision"]
    since = cli_json("autopilot", "memory-list", "--since", cut)
    assert sorted(m["content"] for m in since) == ["new decision", "new fact"]
    both = cli_json("autopilot", "memory-list", "--kind", "decision", "--since", cut, "--project", "Auth")
    assert [m["content"] for m in both] == ["new decision"]
    assert cli_json("autopilot", "memory-list", "--kind", "decision", "--since", cut, "--project", "Auth") == both


@pytest.mark.parametrize("argv, flag", [
    (["--kind", "Decision"], "--kind"), (["--kind=" + "k" * 70], "--kind"),
    (["--since", "yesterday"], "--since"), (["--since", "2026-13-01T00:00:00Z"], "--since"),
    (["--since="], "--since"),
])
def test_memory_list_bad_input(conn, cli, argv, flag):
    memories.retain(conn, "something", project="Auth")
    refused(cli, conn, "autopilot", "memory-list", *argv, match=flag)


# --- show --limit ---------------------------------------------------------------------


def test_show_limit_keeps_the_newest_entries(conn, cli_json):
    make_task(conn, "t1")
    for n in range(4):
        from mindos.work import tasks
        tasks.update(conn, "t1", title=f"title {n}")
    full = cli_json("autopilot", "show", "t1")
    assert full["audit_total"] == 5 and full["audit_truncated"] is False and len(full["audit"]) == 5
    two = cli_json("autopilot", "show", "t1", "--limit", "2")
    assert [e["id"] for e in two["audit"]] == [e["id"] for e in full["audit"][-2:]]
    assert two["audit_total"] == 5 and two["audit_truncated"] is True
    assert cli_json("autopilot", "show", "t1", "--limit", "2") == two


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5", "100001", "１"])
def test_show_limit_bad_input(conn, cli, value):
    make_task(conn, "t1")
    refused(cli, conn, "autopilot", "show", "t1", f"--limit={value}", match="--limit")


# --- ops.py repair --finding-hash -----------------------------------------------------


def test_repair_one_finding_by_hash(conn, cli, cli_json):
    stale_lease(conn, "t-a")
    make_task(conn, "t-b")
    from mindos.work import leases
    leases.claim(conn, "t-b", "codex", minutes=1)
    clock.advance(minutes=2)
    findings = {f["subjects"][0]: f["digest"] for f in sense.sense(conn)["findings"] if f["kind"] == "stale_lease"}
    assert set(findings) == {"t-a", "t-b"}
    dry = cli_json("ops", "repair", "stale-lease-recover", "--finding-hash", findings["t-b"], "--dry-run")
    assert dry["result"]["would_recover"] == ["t-b"] and dry["findings"] == [findings["t-b"]]
    record = cli_json("ops", "repair", "stale-lease-recover", "--finding-hash", findings["t-b"])
    assert record["ok"] and record["result"]["recovered"] == ["t-b"] and record["findings"] == [findings["t-b"]]
    assert last_event(conn, "repair_applied")["findings"] == [findings["t-b"]]
    statuses = dict(conn.execute("SELECT id, lease_owner FROM tasks WHERE id IN ('t-a', 't-b')").fetchall())
    assert statuses == {"t-a": "hermes", "t-b": ""}  # only the named finding was repaired
    # a retry: the finding is gone, so nothing runs and nothing changes
    err = refused(cli, conn, "ops", "repair", "stale-lease-recover", "--finding-hash", findings["t-b"], rc=1,
                  match="no current stale_lease finding")
    assert findings["t-b"] in err


@pytest.mark.parametrize("value", ["", "abc", "G" * 64, "A" * 64, "a" * 63, "a" * 65, "'; DROP TABLE tasks;--"])
def test_repair_finding_hash_bad_input(conn, cli, value):
    stale_lease(conn)
    refused(cli, conn, "ops", "repair", "stale-lease-recover", f"--finding-hash={value}", match="--finding-hash")


def test_repair_finding_hash_of_another_kind_is_not_found(conn, cli):
    stale_lease(conn)
    digest = next(f["digest"] for f in sense.sense(conn)["findings"] if f["kind"] == "stale_lease")
    refused(cli, conn, "ops", "repair", "fts-rebuild", "--finding-hash", digest, rc=1, match="no current")


# --- ops.py approval --reason ---------------------------------------------------------


def test_approval_reason_is_sealed_audited_and_printed(conn, cli_json):
    make_task(conn, "t1")
    out = cli_json("ops", "approval", "approve", "t1", "--by", "leo", "--reason", "staging soak passed")
    assert out["reason"] == "staging soak passed"
    with open(os.path.join(conn.home, "receipts", f"{out['receipt_id']}.json"), encoding="utf-8") as handle:
        assert json.load(handle)["payload"]["reason"] == "staging soak passed"
    assert last_event(conn, "approval_granted")["reason"] == "staging soak passed"
    plain = cli_json("ops", "approval", "approve", "t1", "--by", "leo")
    assert "reason" not in plain  # the key appears only under the flag


@pytest.mark.parametrize("value, rc, match", [
    ("", 2, "--reason"), ("   ", 2, "--reason"), ("x" * 5000, 2, "--reason"), ("a\x00b", 2, "--reason"),
    (f"approved with key {AWS}", 1, "secret"),
])
def test_approval_reason_bad_input_and_guard(conn, cli, value, rc, match):
    make_task(conn, "t1")
    receipts_before = sorted(os.listdir(os.path.join(conn.home, "receipts")))
    before = [line for line in db_state(conn)[0] if "audit_events" not in line]
    code, out, err = cli("ops", "approval", "approve", "t1", "--by", "leo", f"--reason={value}")
    assert (code, out) == (rc, "") and match in err
    assert AWS not in err
    assert [line for line in db_state(conn)[0] if "audit_events" not in line] == before
    assert sorted(os.listdir(os.path.join(conn.home, "receipts"))) == receipts_before


# --- home-select / home-deselect --selector -------------------------------------------


@pytest.fixture
def target(tmp_path):
    path = tmp_path / "other-home"
    db.connect(str(path)).close()
    return str(path)


def test_select_and_deselect_a_named_selector(tmp_path, cli, cli_json, target):
    selector = str(tmp_path / "fleet" / "selector.json")
    os.makedirs(os.path.dirname(selector))
    out = cli_json("ops", "home-select", "--home", target, "--selector", selector)
    assert out["selector_path"] == selector and out["selected"] == target
    with open(selector, encoding="utf-8") as handle:
        assert json.load(handle)["home"] == target
    assert not os.path.exists(os.environ["AUTOPILOT_HOME_SELECTOR"])  # the one in force is untouched
    again = cli_json("ops", "home-select", "--home", target, "--selector", selector)
    assert again["previous"] == target  # a retry rewrites the same choice
    plan = cli_json("ops", "home-deselect", "--selector", selector)
    assert plan["present"] is True and plan["selected_home"] == target and plan["removed"] is False
    assert os.path.exists(selector)
    done = cli_json("ops", "home-deselect", "--selector", selector, "--apply")
    assert done["removed"] is True and not os.path.exists(selector)
    retry = cli_json("ops", "home-deselect", "--selector", selector, "--apply")
    assert retry["present"] is False and retry["removed"] is False


def test_selector_refuses_symlinks_foreign_files_and_bad_paths(tmp_path, cli, target):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    link = tmp_path / "link.json"
    os.symlink(str(precious), str(link))
    fifo = tmp_path / "fifo.json"
    os.mkfifo(str(fifo))  # a plain open would wait for a writer forever
    for argv, rc, match in (
        (["home-deselect", "--selector", str(fifo), "--apply"], 1, "not a home selector"),
        (["home-deselect", "--selector", str(precious), "--apply"], 1, "not a home selector"),
        (["home-select", "--home", target, "--selector", str(precious)], 1, "not a home selector"),
        (["home-deselect", "--selector", str(link), "--apply"], 1, "symlink"),
        (["home-select", "--home", target, "--selector", str(link)], 1, "symlink"),
        (["home-deselect", "--selector", str(tmp_path), "--apply"], 2, "directory"),
        (["home-deselect", "--selector=", "--apply"], 2, "--selector"),
    ):
        code, out, err = cli("ops", *argv)
        assert (code, out) == (rc, "") and match in err, (argv, code, err)
    assert precious.read_text() == "keep me\n" and os.path.islink(str(link))


# --- session-ingest --since -----------------------------------------------------------


@pytest.fixture
def store(tmp_path):
    root = tmp_path / "store"
    old = str(root / "old.jsonl")
    new = str(root / "new.jsonl")
    sessionkit.write(old, sessionkit.generic_lines([("user", "an old conversation")]))
    sessionkit.write(new, sessionkit.generic_lines([("user", "a fresh conversation")]))
    now = clock.now().timestamp()
    os.utime(old, (now - 10 * 86400, now - 10 * 86400))
    os.utime(new, (now - 3600, now - 3600))
    return str(root)


def test_session_ingest_since_skips_older_files(conn, cli_json, store):
    dry = cli_json("autopilot", "session-ingest", "--source", "generic", "--root", store, "--since", "7d")
    assert dry["new"] == 1 and dry["skipped"]["before_since"] == 1 and dry["since"] == clock.shift(
        clock.now_iso(), -7 * 86400)
    done = cli_json("autopilot", "session-ingest", "--source", "generic", "--root", store, "--since", "7d", "--apply")
    assert done["new"] == 1 and done["messages_written"] == 1
    assert [f["path"] for f in done["files"]] == ["new.jsonl"]
    again = cli_json("autopilot", "session-ingest", "--source", "generic", "--root", store, "--since", "7d", "--apply")
    assert again["unchanged"] == 1 and again["messages_written"] == 0
    everything = cli_json("autopilot", "session-ingest", "--source", "generic", "--root", store, "--apply")
    assert everything["new"] == 1 and everything["unchanged"] == 1 and "since" not in everything
    assert "before_since" not in everything["skipped"]
    iso = cli_json("autopilot", "session-ingest", "--source", "generic", "--root", store,
                   "--since", "2000-01-01T00:00:00Z")
    assert iso["skipped"]["before_since"] == 0


@pytest.mark.parametrize("value", ["", "soon", "7w", "-3d", "2026-02-30T00:00:00Z", "9" * 80])
def test_session_ingest_since_bad_input(conn, cli, store, value):
    refused(cli, conn, "autopilot", "session-ingest", "--source", "generic", "--root", store, f"--since={value}",
            "--apply", match="--since")


def test_repair_finds_a_named_finding_past_the_listing_limit(conn, cli_json, monkeypatch):
    from mindos.work import leases

    for n in range(3):
        make_task(conn, f"t-{n}")
        leases.claim(conn, f"t-{n}", "codex", minutes=1)
    clock.advance(minutes=2)
    monkeypatch.setattr(sense, "LIMIT", 1)  # a repair's own listing: one stale lease per kind
    listed = sense.sense(conn, limit=3)["findings"]
    last = [f for f in listed if f["kind"] == "stale_lease"][-1]
    assert last["digest"] not in [f["digest"] for f in sense.sense(conn, limit=1)["findings"]]
    record = cli_json("ops", "repair", "stale-lease-recover", "--finding-hash", last["digest"])
    assert record["result"]["recovered"] == last["subjects"]


def test_a_command_that_cannot_narrow_is_refused_not_run(conn, cli, monkeypatch):
    from mindos.autonomy import repairs

    calls = []
    monkeypatch.setitem(repairs.COMMANDS, "recover", lambda conn, dry_run: calls.append(1))
    monkeypatch.setattr(repairs, "NARROWS", repairs.NARROWS - {"recover"})  # declared as not taking subjects
    stale_lease(conn)
    digest = next(f["digest"] for f in sense.sense(conn)["findings"] if f["kind"] == "stale_lease")
    refused(cli, conn, "ops", "repair", "stale-lease-recover", "--finding-hash", digest, rc=1,
            match="cannot be narrowed")
    assert calls == []


SLACK = "xoxb-" + "1234567890-1234567890-abcdefghijklmnopqrstuvwx"


@pytest.mark.parametrize("argv", [["events", "--entity-type", SLACK], ["memory-list", "--kind", SLACK]])
def test_a_credential_typed_into_a_filter_is_refused_and_never_echoed(conn, cli, argv):
    before = [line for line in db_state(conn)[0] if "audit_events" not in line]
    rc, out, err = cli("autopilot", *argv, "--json-errors")
    assert (rc, out) == (1, "") and json.loads(err)["error"]["code"] == "secret_blocked"
    assert SLACK not in err
    assert [line for line in db_state(conn)[0] if "audit_events" not in line] == before
