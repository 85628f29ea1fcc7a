"""memory-ingest-git: commit messages as project memories (mindos/memory/git_history.py).

Every test builds a real, tiny git repository in tmp with the git on the machine."""

import json
import os
import shutil
import subprocess

import pytest

from conftest import db_state, last_event, script
from mindos.memory import git_history, memories

AWS = "AKIA" + "Z7QW3RTY6UIO2PAS"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo, *args, date="2026-08-20T10:00:00Z"):
    env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "Ada",
                "GIT_AUTHOR_EMAIL": "ada@example.org", "GIT_COMMITTER_NAME": "Ada",
                "GIT_COMMITTER_EMAIL": "ada@example.org", "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env, timeout=30)


def commit(repo, message, date="2026-08-20T10:00:00Z"):
    git(repo, "commit", "-q", "--allow-empty", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD").stdout.decode().strip()


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "gateway"
    path.mkdir()
    git(path, "init", "-q")
    commit(path, "Cap the gateway pool at 60 connections\n\nThe database refuses more under load.",
           date="2026-08-01T09:00:00Z")
    commit(path, "Switch sessions to 30-day expiry", date="2026-08-10T09:00:00Z")
    commit(path, "Rotate the deploy key", date="2026-08-15T09:00:00Z")
    return path


def ingest(cli, *argv):
    rc, out, err = cli("autopilot", "memory-ingest-git", *argv)
    return rc, (json.loads(out) if rc == 0 else out), err


def test_dry_run_then_apply_then_rerun_adds_nothing(conn, cli, repo):
    before = db_state(conn)
    rc, plan, err = ingest(cli, "--repo", str(repo), "--project", "Trove")
    assert (rc, err) == (0, "") and plan["applied"] is False and plan["would_ingest"] == 3
    assert plan["commits_read"] == 3 and plan["more_commits"] is False and plan["secret_skipped"] == []
    assert db_state(conn) == before  # a dry run writes nothing
    rc, done, err = ingest(cli, "--repo", str(repo), "--project", "Trove", "--apply")
    assert (rc, err) == (0, "") and done["ingested"] == 3 and done["ids"] == plan["ids"]
    listed = memories.list_memories(conn, project="Trove", kind="commit")
    assert [m["created_at"] for m in listed] == ["2026-08-15T09:00:00Z", "2026-08-10T09:00:00Z",
                                                 "2026-08-01T09:00:00Z"]
    first = listed[-1]
    assert first["content"].startswith("git commit ") and "The database refuses more under load." in first["content"]
    assert first["source"] == "git" and "git" in first["tags"]
    head = git(repo, "rev-list", "--max-parents=0", "HEAD").stdout.decode().strip()
    assert f"commit:{head}" in first["tags"]
    event = last_event(conn, "memory_git_ingested")
    assert event["commit"] and event["repo"] == str(repo) and event["kind"] == "commit"
    events = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    rc, again, _ = ingest(cli, "--repo", str(repo), "--project", "Trove", "--apply")
    assert rc == 0 and again["ingested"] == 0 and again["already_present"] == 3 and again["ids"] == []
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == events
    # a new commit adds exactly one memory; the same message in another commit is another memory
    commit(repo, "Switch sessions to 30-day expiry", date="2026-08-16T09:00:00Z")
    rc, more, _ = ingest(cli, "--repo", str(repo), "--project", "Trove", "--apply")
    assert more["ingested"] == 1 and more["already_present"] == 3


def test_a_credential_in_a_message_is_skipped_and_reported_by_kind_only(conn, cli, repo):
    leaked = commit(repo, f"Configure the uploader\n\naws key {AWS}")
    rc, out, err = cli("autopilot", "memory-ingest-git", "--repo", str(repo), "--project", "Trove", "--apply")
    assert (rc, err) == (0, "") and AWS not in out
    done = json.loads(out)
    assert done["secret_skipped"] == [{"commit": leaked, "kinds": ["aws_access_key"]}] and done["ingested"] == 3
    assert not any(AWS in line for line in db_state(conn)[0])  # neither stored nor audited


def test_max_commits_and_since_bound_the_read(conn, cli, repo):
    rc, out, _ = ingest(cli, "--repo", str(repo), "--project", "Trove", "--max-commits", "2")
    assert out["commits_read"] == 2 and out["more_commits"] is True and out["would_ingest"] == 2
    rc, out, _ = ingest(cli, "--repo", str(repo), "--project", "Trove", "--since", "2026-08-09")
    assert out["since"] == "2026-08-09T00:00:00Z" and out["would_ingest"] == 2


def test_bytes_are_bounded(conn, cli, repo, monkeypatch):
    commit(repo, "Long story\n\n" + "word " * 4000)
    rc, out, _ = ingest(cli, "--repo", str(repo), "--project", "Trove", "--apply")
    assert out["messages_truncated"] == 1
    longest = max(len(m["content"]) for m in memories.list_memories(conn, kind="commit"))
    assert longest <= git_history.MAX_MESSAGE_CHARS + 200
    monkeypatch.setattr(git_history, "MAX_LOG_BYTES", 300)
    rc, cut, _ = ingest(cli, "--repo", str(repo), "--project", "Other")
    assert rc == 0 and cut["log_truncated"] is True and cut["commits_read"] < 4


def test_symlinks_non_repos_and_subdirectories_are_refused(conn, cli, repo, tmp_path):
    link = tmp_path / "link"
    os.symlink(str(repo), str(link))
    linked_git = tmp_path / "linked-git"
    linked_git.mkdir()
    os.symlink(str(repo / ".git"), str(linked_git / ".git"))
    plain = tmp_path / "plain"
    plain.mkdir()
    inner = repo / "docs"
    inner.mkdir()
    before = db_state(conn)
    for path, rc, words in ((link, 1, "symlink"), (linked_git, 1, ".git is a symlink"),
                            (plain, 1, "not a git repository"), (inner, 1, "not a git repository"),
                            (tmp_path / "missing", 1, "no such directory")):
        code, out, err = cli("autopilot", "memory-ingest-git", "--repo", str(path), "--project", "Trove", "--apply")
        assert (code, out) == (rc, "") and words in err and err.count("\n") == 1, (path, err)
    assert db_state(conn) == before


@pytest.mark.parametrize("argv, flag", [
    (["--since", "last week"], "--since"), (["--since", "2026-02-30"], "--since"),
    (["--max-commits", "0"], "--max-commits"), (["--max-commits", "10001"], "--max-commits"),
    (["--max-commits", "ten"], "--max-commits"), (["--project", "bad project!"], "--project"),
    (["--project", ""], "--project"), (["--repo", ""], "--repo"),
])
def test_bad_input_is_a_usage_error_and_changes_nothing(conn, cli, repo, argv, flag):
    given = {"--repo": str(repo), "--project": "Trove", **dict(zip(argv[::2], argv[1::2]))}
    call = [f"{name}={value}" for name, value in given.items()]
    before = db_state(conn)
    rc, out, err = cli("autopilot", "memory-ingest-git", *call, "--apply")
    assert (rc, out) == (2, "") and flag in err
    assert db_state(conn) == before


def test_missing_git_is_a_clear_error(conn, cli, repo, monkeypatch):
    monkeypatch.setenv("PATH", str(repo))  # no git executable there
    before = db_state(conn)
    rc, out, err = cli("autopilot", "memory-ingest-git", "--repo", str(repo), "--project", "Trove",
                       "--json-errors")
    assert (rc, out) == (1, "") and json.loads(err)["error"]["code"] == "no_git"
    assert "git is not installed" in err and db_state(conn) == before


def test_a_hung_git_times_out(conn, repo, monkeypatch, tmp_path):
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setattr(git_history, "_git_binary", lambda: str(fake))
    monkeypatch.setattr(git_history, "TIMEOUT_SECONDS", 0.3)
    from mindos.errors import Refused

    with pytest.raises(Refused, match="did not answer"):
        git_history.ingest(conn, str(repo), "Trove")


def test_an_empty_repository_has_nothing_to_ingest(conn, cli, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    rc, out, err = ingest(cli, "--repo", str(empty), "--project", "Trove", "--apply")
    assert (rc, err) == (0, "") and out["commits_read"] == 0 and out["ingested"] == 0


def test_a_hostile_environment_and_repo_config_cannot_redirect_or_run_anything(conn, home, repo, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    commit(other, "A commit of some other repository")
    marker = tmp_path / "pwned"
    git(repo, "config", "core.pager", f"touch {marker}")
    git(repo, "config", "core.fsmonitor", f"touch {marker}")
    git(repo, "config", "core.hooksPath", str(tmp_path))
    env = {"GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other), "GIT_PAGER": f"touch {marker}",
           "PAGER": f"touch {marker}", "GIT_CONFIG_PARAMETERS": f"'core.pager'='touch {marker}'",
           "GIT_EXTERNAL_DIFF": f"touch {marker}", "GIT_SSH_COMMAND": f"touch {marker}",
           "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.pager", "GIT_CONFIG_VALUE_0": f"touch {marker}"}
    proc = script("autopilot.py", "memory-ingest-git", "--repo", str(repo), "--project", "Trove", "--apply",
                  home=home, env=env)
    assert proc.returncode == 0 and proc.stderr == ""
    out = json.loads(proc.stdout)
    assert out["ingested"] == 3 and out["repo"] == str(repo)
    contents = [m["content"] for m in memories.list_memories(conn, kind="commit")]
    assert not any("some other repository" in text for text in contents)
    assert not marker.exists()


def test_the_commit_hash_is_the_key_even_when_the_text_would_differ(conn, cli, repo, monkeypatch):
    rc, done, _ = ingest(cli, "--repo", str(repo), "--project", "Trove", "--apply")
    assert done["ingested"] == 3
    forgotten = done["ids"][0]
    memories.forget(conn, forgotten)
    monkeypatch.setattr(git_history, "content", lambda h, a, m: (f"reworded {h} {m}", False))
    rc, again, _ = ingest(cli, "--repo", str(repo), "--project", "Trove", "--apply")
    assert again["ingested"] == 0 and again["already_present"] == 3  # a forgotten commit is not brought back
    assert memories.get(conn, forgotten)["live"] is False
    rc, other, _ = ingest(cli, "--repo", str(repo), "--project", "Billing", "--apply")
    assert other["ingested"] == 3  # another project keeps its own memories of the same commits
