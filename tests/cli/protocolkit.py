"""A scripted session touching (nearly) every command of every door, in one throwaway home,
for the protocol tests: each step's real output is checked against the shape its command
declares (``OUTPUTS``).

A step is ``(door, argv)``; ``{name}`` in an argument is filled from the values earlier
steps captured (``CAPTURE``: a step's index -> ``{name: function of its output}``).
"""

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout

AWS_FREE = "nothing secret here"


def steps(tmp):
    """The session, in order (``tmp``: a scratch directory for files)."""
    bank = os.path.join(tmp, "bank.jsonl")
    with open(bank, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"text": "legacy memory", "created_at": "2026-08-01T00:00:00Z"}) + "\n")
    transcripts = os.path.join(tmp, "transcripts")
    os.makedirs(transcripts, exist_ok=True)
    with open(os.path.join(transcripts, "s.jsonl"), "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"role": "user", "content": "deploy the cookie patch"}) + "\n")
    page = os.path.join(tmp, "page.md")
    with open(page, "w", encoding="utf-8") as handle:
        handle.write("hello {agent}\n")
    other = os.path.join(tmp, "other-home")
    legacy = os.path.join(tmp, "legacy")
    a, o, m = "autopilot", "ops", "mood_poller"
    return [
        (a, ["init"]),
        (a, ["create", "--project", "Trove", "--title", "Build the gateway image", "--id", "t-build"]),
        (a, ["create", "--project", "Trove", "--title", "Rotate TLS cert", "--priority", "P1", "--tag", "infra",
             "--id", "t-cert"]),
        (a, ["create", "--project", "Trove", "--title", "Deploy gateway", "--depends-on", "t-cert", "--id",
             "t-deploy"]),
        (a, ["create", "--project", "Trove", "--title", "Deploy the gateway", "--id", "t-dup"]),
        (a, ["list", "--limit", "5"]),
        (a, ["update", "t-dup", "--next-action", "check"]),
        (a, ["tag", "t-build", "--tag", "autopilot-safe"]),
        (a, ["untag", "t-build", "--tag", "autopilot-safe"]),
        (a, ["search", "gateway"]),
        (a, ["similar", "t-deploy", "--threshold", "0.1"]),
        (a, ["dep", "t-deploy", "t-build"]),
        (a, ["blocked-by", "t-deploy"]),
        (a, ["impact", "t-cert"]),
        (a, ["critical-path", "--project", "Trove"]),
        (a, ["plan", "--project", "Trove"]),
        (a, ["dep-remove", "t-deploy", "t-build"]),
        (a, ["claim", "t-cert", "--owner", "hermes", "--minutes", "30"]),
        (a, ["heartbeat", "t-cert", "--owner", "hermes", "--note", "running checks"]),
        (a, ["renew", "t-cert", "--owner", "hermes", "--minutes", "45"]),
        (a, ["release", "t-cert", "--owner", "hermes"]),
        (a, ["claim", "t-cert", "--owner", "hermes"]),
        (a, ["transfer", "t-cert", "--from-owner", "hermes", "--to-owner", "codex"]),
        (a, ["leases", "--all"]),
        (a, ["receipt", "t-cert", "--kind", "verification", "--payload", '{"tests":"pass"}']),
        (a, ["run-receipt", "t-cert", "--harness", "codex", "--model", "gpt-x", "--session", "s-1", "--workspace",
             "/srv/trove", "--outcome", "ok"]),
        (a, ["note", "t-deploy", "--kind", "fact", "--content", "The gateway pool is capped at 60",
             "--source", "hermes"]),
        (a, ["notes", "t-deploy"]),
        (a, ["supersede-note", "{note_id}", "--content", "The gateway pool is capped at 80"]),
        (a, ["note-history", "{note_id}"]),
        (a, ["search-notes", "gateway pool", "--rank"]),
        (a, ["handoff", "t-deploy", "--from-agent", "codex", "--to-agent", "claude-code", "--objective",
             "finish the rollout", "--evidence", "staging is green", "--next-action", "promote"]),
        (a, ["handoff-current", "t-deploy"]),
        (a, ["handoffs", "t-deploy", "--all"]),
        (a, ["handoff-history", "{handoff_id}"]),
        (a, ["ack", "t-deploy", "--agent", "claude-code"]),
        (a, ["handoff-inbox", "--agent", "claude-code"]),
        (a, ["search-handoffs", "rollout"]),
        (a, ["complete", "t-cert", "--owner", "codex", "--note", "tests pass"]),
        (a, ["claim", "t-build", "--owner", "codex"]),
        (a, ["fail", "t-build", "--owner", "codex", "--reason", "tests red"]),
        (a, ["defer", "t-dup", "--owner", "hermes", "--until", "2026-08-22T09:00:00Z"]),
        (a, ["defer", "t-dup", "--owner", "hermes", "--until", ""]),
        (a, ["block", "t-dup", "--owner", "leo", "--reason", "waiting on credentials"]),
        (a, ["unblock", "t-dup", "--owner", "leo"]),
        (a, ["next", "--project", "Trove"]),
        (a, ["show", "t-deploy", "--limit", "5"]),
        (a, ["memory-retain", "--text", "auth sessions expire after 30 days", "--kind", "decision",
             "--project", "Auth"]),
        (a, ["memory-retain", "--text", "sessions last a month", "--project", "Auth"]),
        (a, ["memory-list", "--project", "Auth"]),
        (a, ["memory-forget", "{memory_id}"]),
        (a, ["memory-import", bank]),
        (a, ["memory-search", "sessions", "--project", "Auth"]),
        (a, ["memory-embed", "--apply"]),
        (a, ["memory-status"]),
        (a, ["memory-search", "sessions", "--project", "Auth", "--semantic"]),
        (a, ["memory-ingest-git", "--repo", os.path.join(tmp, "repo"), "--project", "Trove"]),
        (a, ["fact-assert", "--subject", "gateway", "--predicate", "uses", "--object", "postgres",
             "--source", "codex"]),
        (a, ["facts"]),
        (a, ["search-facts", "postgres"]),
        (a, ["fact-retract", "{fact_id}", "--reason", "migrated"]),
        (a, ["context", "t-deploy", "--budget", "4000"]),
        (a, ["recall", "t-deploy", "--agent", "codex"]),
        (a, ["recall-verify", "t-deploy", "--digest", "{recall_digest}", "--agent", "codex"]),
        (a, ["recall-diff", "t-deploy", "--digest", "{recall_digest}"]),
        (a, ["resume", "t-deploy", "--agent", "codex"]),
        (a, ["prime", "--agent", "codex"]),
        (a, ["session-start", "--hook", "claude", "--agent", "hermes", "--format", "json"]),
        (a, ["stop-gate", "--hook", "claude", "--agent", "hermes"]),
        (a, ["botmail-peer-allow", "--recipient", "hermes", "--peer", "codex", "--profile", "work",
             "--class", "status"]),
        (a, ["botmail-peers"]),
        (a, ["botmail-send", "--from", "codex", "--to", "hermes", "--profile", "work", "--class", "status",
             "--body", "tests green"]),
        (a, ["botmail-inbox", "--recipient", "hermes"]),
        (a, ["botmail-ack", "{botmail_id}", "--recipient", "hermes"]),
        (a, ["botmail-receipts"]),
        (a, ["botmail-context", "--recipient", "hermes", "--profile", "work"]),
        (a, ["botmail-peer-revoke", "--recipient", "hermes", "--peer", "codex"]),
        (a, ["session-scan", "--root", transcripts]),
        (a, ["session-ingest", "--source", "generic", "--root", transcripts, "--apply"]),
        (a, ["search-sessions", "cookie"]),
        (a, ["sessions-prune", "--older-than", "30d"]),
        (a, ["metrics"]),
        (a, ["dashboard"]),
        (a, ["events", "--limit", "2"]),
        (a, ["verify-chain"]),
        (a, ["declare", "t-deploy", "--model", "opencode/x", "--autonomy-level", "L1", "--granted-by", "leo",
             "--grant-hours", "24"]),
        (a, ["grant-check", "t-deploy", "--model", "opencode/x", "--level", "L1"]),
        (a, ["protocol"]),
        (a, ["setup", "codex", "--project-dir", tmp, "--dry-run"]),
        (a, ["demo", "--json"]),
        (a, ["demo"]),
        (o, ["recover", "--dry-run"]),
        (o, ["escalate", "--dry-run"]),
        (o, ["escalate-stalled", "--dry-run"]),
        (o, ["approval", "approve", "t-cert", "--by", "leo"]),
        (o, ["unverified-completions"]),
        (o, ["policy", "Trove", "merge"]),
        (o, ["notes-expired"]),
        (o, ["secret-scan"]),
        (o, ["consolidate", "--dry-run"]),
        (o, ["dup-tasks", "--threshold", "0.1"]),
        (o, ["handoff-check"]),
        (o, ["recall-stale"]),
        (o, ["doctor"]),
        (o, ["fts-rebuild", "--dry-run"]),
        (o, ["receipts-sweep"]),
        (o, ["snapshot", "--out", os.path.join(tmp, "snap.json")]),
        (o, ["snapshot-check", os.path.join(tmp, "snap.json")]),
        (o, ["checkpoint", "--out", os.path.join(tmp, "check.json")]),
        (o, ["checkpoint-check", os.path.join(tmp, "check.json")]),
        (o, ["export-task", "t-cert", "--out", os.path.join(tmp, "t-cert.json")]),
        (o, ["import-task", os.path.join(tmp, "t-cert.json"), "--dry-run"]),
        (a, ["cancel", "t-deploy", "--owner", "codex", "--reason", "obsolete"]),
        (a, ["cancel", "t-build", "--owner", "leo", "--reason", "obsolete"]),
        (a, ["cancel", "t-dup", "--owner", "leo", "--reason", "obsolete"]),
        (o, ["archive", "--before", "2027-01-01T00:00:00Z", "--dry-run"]),
        (o, ["archive", "--before", "2027-01-01T00:00:00Z", "--out", os.path.join(tmp, "arch.json")]),
        (o, ["archive-check", os.path.join(tmp, "arch.json")]),
        (o, ["archive-restore", os.path.join(tmp, "arch.json")]),
        (o, ["home-doctor", "--home", other]),
        (o, ["home-show"]),
        (o, ["home-select", "--home", other]),
        (o, ["home-deselect"]),
        (o, ["sense"]),
        (o, ["repair-list"]),
        (o, ["repair", "stale-lease-recover", "--dry-run"]),
        (o, ["nanny", "--dry-run"]),
        (o, ["processes"]),
        (o, ["morning", "--json"]),
        (o, ["github"]),
        (o, ["sentry"]),
        (o, ["migrate-inventory", "--root", transcripts, "--out", os.path.join(tmp, "inv.json")]),
        (o, ["migrate-inventory-check", os.path.join(tmp, "inv.json")]),
        (o, ["brain-inventory", "--out", os.path.join(tmp, "brain.json")]),
        (o, ["brain-inventory-check", os.path.join(tmp, "brain.json")]),
        (o, ["brain-import", "--inventory", os.path.join(tmp, "brain.json"), "--target", os.path.join(tmp, "brain")]),
        (o, ["migrate-inventory", "--root", legacy, "--out", os.path.join(tmp, "legacy.json")]),
        (o, ["migrate-import", "--inventory", os.path.join(tmp, "legacy.json"), "--source-id", "{source_id}"]),
        (o, ["onboard", "--inventory", os.path.join(tmp, "legacy.json")]),
        (o, ["migrate-import", "--inventory", os.path.join(tmp, "legacy.json"), "--source-id", "{source_id}",
             "--apply", "--relink-audit", "--out", os.path.join(tmp, "legacy-result.json")]),
        (o, ["migrate-rollback", os.path.join(tmp, "legacy-result.json")]),
        (o, ["snapshot-restore", os.path.join(tmp, "snap.json"), "--force"]),
        (m, ["agent", "create", "re", "--command", "cat"]),
        (m, ["agent", "show", "re"]),
        (m, ["agent", "list"]),
        (m, ["agent", "update", "re", "--instructions", "be brief"]),
        (m, ["mood", "create", "infra", "--title", "Infra room"]),
        (m, ["mood", "join", "infra", "re"]),
        (m, ["mood", "show", "infra"]),
        (m, ["mood", "list"]),
        (m, ["mood", "update", "infra", "--title", "Infra"]),
        (m, ["post", "infra", "--author", "justin", "--via", "ssh", "@re can you check step 4?"]),
        (m, ["posts", "infra"]),
        (m, ["react", "infra", "{post_id}", "thumbsup", "--who", "justin"]),
        (m, ["typing", "infra", "justin"]),
        (m, ["arrive", "infra", "justin", "--via", "ssh"]),
        (m, ["set", "listening", "mentions", "--mood", "infra", "--agent", "re", "--by", "skyler"]),
        (m, ["set", "grace", "0", "--mood", "infra", "--by", "skyler"]),
        (m, ["page", "set", "Moods/Test", "--editor", "re", "--file", page]),
        (m, ["page", "show", "Moods/Test"]),
        (m, ["page", "list"]),
        (m, ["page", "trust", "re"]),
        (m, ["page", "untrust", "re"]),
        (m, ["explain", "infra", "re"]),
        (m, ["tick", "--dry-run"]),
        (m, ["tick"]),
        (m, ["wakes"]),
        (m, ["show-wake", "{wake_id}"]),
        (m, ["bundle", "{bundle_id}"]),
        (m, ["budget"]),
        (m, ["mood", "leave", "infra", "re"]),
    ]


def _git_repo(path):
    """A one-commit repository at ``path`` (nothing when git is missing: that step then fails
    with exit 1, which the test reports)."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        return
    os.makedirs(path, exist_ok=True)
    env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "Ada",
                "GIT_AUTHOR_EMAIL": "ada@example.org", "GIT_COMMITTER_NAME": "Ada",
                "GIT_COMMITTER_EMAIL": "ada@example.org"})
    for argv in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "Cap the pool at 60"]):
        subprocess.run(["git", "-C", path, *argv], check=True, capture_output=True, env=env, timeout=30)


def _first(items, key):
    return items[0][key] if items else None


# captured values: command -> {placeholder: function of the parsed output}
CAPTURE = {
    "post": {"post_id": lambda out: out["id"]},
    "note": {"note_id": lambda out: out["note"]["id"] if "note" in out else out["id"]},
    "handoff": {"handoff_id": lambda out: out.get("handoff", out).get("id")},
    "memory-retain": {"memory_id": lambda out: out["id"]},
    "fact-assert": {"fact_id": lambda out: out.get("fact", out).get("id")},
    "recall": {"recall_digest": lambda out: out["digest"]},
    "migrate-inventory": {"source_id": lambda out: out["plan"][0]["source_id"]},
    "botmail-send": {"botmail_id": lambda out: out.get("message_id") or out.get("id")},
    "wakes": {"wake_id": lambda out: _first(out.get("wakes", []) if isinstance(out, dict) else out, "id"),
              "bundle_id": lambda out: _first(out.get("wakes", []) if isinstance(out, dict) else out, "bundle")},
}


class _stdin:
    """``sys.stdin`` is ``stream`` inside (the hook commands read the harness's event there)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        import sys

        self.saved, sys.stdin = sys.stdin, self.stream

    def __exit__(self, *exc):
        import sys

        sys.stdin = self.saved


def run(door, argv):
    """``(rc, stdout, stderr)`` of one in-process call."""
    from mindos.cli import run as run_door

    out, err = io.StringIO(), io.StringIO()
    event = io.StringIO('{"session_id": "s-proto-1", "cwd": "/nonexistent", "source": "startup"}')
    with redirect_stdout(out), redirect_stderr(err), _stdin(event):
        try:
            rc = run_door(door, argv)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
    return rc, out.getvalue(), err.getvalue()


def session(tmp):
    """Run every step; yield ``(door, argv, rc, parsed output or text, stderr)``."""
    values = {}
    os.makedirs(os.path.join(tmp, "other-home"), exist_ok=True)
    from mindos.store import db

    db.connect(os.path.join(tmp, "other-home")).close()
    legacy = db.connect(os.path.join(tmp, "legacy", "autopilot"))
    from mindos.work import tasks

    tasks.create(legacy, project="Old", title="an old task", task_id="t-old")
    legacy.close()
    _git_repo(os.path.join(tmp, "repo"))
    for door, argv in steps(tmp):
        try:
            argv = [arg.format(**values) if "{" in arg and "}" in arg and not arg.startswith("{\"") else arg
                    for arg in argv]
        except KeyError:
            continue  # an earlier step did not yield the value this one needs
        if any(arg == "None" for arg in argv):
            continue
        rc, out, err = run(door, argv)
        try:
            parsed = json.loads(out)
        except ValueError:
            parsed = out
        for name, pick in CAPTURE.get(argv[0], {}).items():
            if rc == 0 and isinstance(parsed, (dict, list)):
                try:
                    value = pick(parsed)
                except (KeyError, IndexError, TypeError, AttributeError):
                    value = None
                if value is not None:
                    values[name] = str(value)
        yield door, argv, rc, parsed, err
