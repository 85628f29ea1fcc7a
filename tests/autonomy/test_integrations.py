"""ops.py github / sentry: the registry's view, plus read-only tool status when configured."""

import json
import os
import stat

from autonomykit import home_bytes
from conftest import make_task
from mindos.work import receipts, tags


def fake_tool(folder, name, script):
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def with_pr(conn):
    make_task(conn, "t-pr")
    make_task(conn, "t-br")
    make_task(conn, "t-none")
    conn.execute("UPDATE tasks SET pr_url = 'https://github.com/o/r/pull/7', branch = 'fix-7' WHERE id = 't-pr'")
    conn.execute("UPDATE tasks SET branch = 'wip', status = 'blocked' WHERE id = 't-br'")


def test_github_without_gh_is_not_configured_never_an_error(cli_json, conn, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with_pr(conn)
    report = cli_json("ops", "github")
    assert report["registry"]["total"] == 2 and report["registry"]["by_status"] == {"blocked": 1, "queued": 1}
    assert {t["id"] for t in report["registry"]["tasks"]} == {"t-pr", "t-br"}
    assert report["tool"] == {"name": "gh", "installed": False, "configured": False,
                              "reason": "not configured: gh is not installed"}


def test_github_with_an_unauthenticated_gh(cli_json, conn, monkeypatch, tmp_path):
    fake_tool(tmp_path / "bin", "gh", 'echo "You are not logged in" >&2; exit 1\n')
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    report = cli_json("ops", "github")
    assert report["tool"]["installed"] is True and report["tool"]["configured"] is False
    assert "gh auth login" in report["tool"]["reason"]


def test_github_asks_gh_read_only_about_each_pr(cli_json, conn, monkeypatch, tmp_path):
    log = tmp_path / "calls"
    fake_tool(tmp_path / "bin", "gh", f'echo "$@" >> {log}\n'
              'if [ "$1" = "pr" ]; then echo \'{"number": 7, "state": "OPEN"}\'; fi\nexit 0\n')
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with_pr(conn)
    before = home_bytes(conn)
    report = cli_json("ops", "github")
    assert report["tool"]["configured"] is True
    assert report["tool"]["pull_requests"] == [{"task_id": "t-pr", "pr_url": "https://github.com/o/r/pull/7",
                                                "pr": {"number": 7, "state": "OPEN"}}]
    calls = log.read_text().splitlines()
    assert calls[0] == "auth status" and calls[1].startswith("pr view https://github.com/o/r/pull/7 --json")
    assert home_bytes(conn) == before


def test_sentry_registry_and_tool_states(cli_json, conn, monkeypatch, tmp_path):
    make_task(conn, "t-s1")
    make_task(conn, "t-s2")
    make_task(conn, "t-other")
    tags.add(conn, "t-s1", ["sentry:proj-123"])
    receipts.add(conn, "t-s2", "sentry-issue", {"issue": "PROJ-9"})
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    report = cli_json("ops", "sentry")
    assert sorted(t["id"] for t in report["registry"]["tasks"]) == ["t-s1", "t-s2"]
    assert [t["sentry_tags"] for t in report["registry"]["tasks"] if t["id"] == "t-s1"] == [["sentry:proj-123"]]
    assert report["tool"]["reason"] == "not configured: sentry-cli is not installed"
    fake_tool(tmp_path / "bin", "sentry-cli", 'if [ "$1" = "info" ]; then exit 0; fi\necho "PROJ-9 unresolved"\n')
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    report = cli_json("ops", "sentry", "--limit", "1")
    assert report["tool"]["configured"] is True and report["tool"]["issues"] == "PROJ-9 unresolved"
    assert report["registry"]["truncated"] is True and len(report["registry"]["tasks"]) == 1
    assert cli_json("ops", "sentry", "--no-tool")["tool"]["configured"] is False
