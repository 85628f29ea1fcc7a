"""ops.py processes: leases from the table, matching OS processes where readable; read-only."""

import os

from autonomykit import home_bytes
from conftest import make_task
from mindos.autonomy import processes
from mindos.core import clock
from mindos.work import leases


def fake_proc(tmp_path, entries):
    root = tmp_path / "proc"
    for pid, argv in entries.items():
        (root / str(pid)).mkdir(parents=True)
        (root / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
    (root / "self").mkdir(parents=True, exist_ok=True)
    return str(root)


def test_leases_live_then_stale_with_owner_summary(conn):
    for task_id in ("t1", "t2", "t3"):
        make_task(conn, task_id)
    leases.claim(conn, "t1", "hermes", minutes=5)
    leases.claim(conn, "t2", "codex", minutes=60)
    leases.heartbeat(conn, "t2", "codex", note="tests running")
    clock.advance(minutes=10)
    report = processes.report(conn, with_os=False)
    assert [(e["task_id"], e["owner"], e["live"]) for e in report["leases"]] == [("t2", "codex", True),
                                                                                 ("t1", "hermes", False)]
    assert report["leases"][0]["heartbeat_note"] == "tests running"
    assert report["owners"] == [{"owner": "codex", "live": 1, "stale": 0, "tasks": ["t2"]},
                                {"owner": "hermes", "live": 0, "stale": 1, "tasks": ["t1"]}]
    assert "os_processes" not in report


def test_os_processes_match_owners_and_harnesses_and_redact_secrets(tmp_path):
    root = fake_proc(tmp_path, {
        101: ["python3", "agent.py", "--name", "hermes"],
        102: ["/usr/bin/codex", "exec", "--api-key", "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 3],
        103: ["bash"],
    })
    found = processes.os_processes(["hermes"], proc_root=root)
    assert found["available"] is True and found["scanned"] == 3
    assert [(p["pid"], p["matches"], p["owners"]) for p in found["matched"]] == [
        (101, ["hermes"], ["hermes"]), (102, ["codex"], [])]
    assert "a1B2c3D4" not in found["matched"][1]["command"] and "REDACTED" in found["matched"][1]["command"]


def test_no_process_list_is_a_report_not_an_error(tmp_path):
    found = processes.os_processes(["hermes"], proc_root=str(tmp_path / "none"))
    assert found == {"available": False, "reason": "no readable process list on this system", "matched": [],
                     "scanned": 0}


def test_cli_processes_reads_only(cli_json, conn):
    make_task(conn, "t1")
    leases.claim(conn, "t1", "hermes", minutes=30)
    before = home_bytes(conn)
    report = cli_json("ops", "processes")
    assert report["leases"][0]["owner"] == "hermes"
    assert report["os_processes"]["available"] is os.path.isdir("/proc")
    assert home_bytes(conn) == before
