"""One working call of every command of every front door, against a seeded home.

Shared by the hostile sweep (tests/cli/test_hostile_sweep.py), which pours hostile values
into every argument of these calls, and the guard's coverage test
(tests/cli/test_guard_coverage.py), which pours a credential into every text argument.
``CASES`` must name every command of :mod:`mindos.cli.doors` (and every subcommand of the
commands that have them): both tests fail when a door command has no case here.

Placeholders in a case: ``{home}`` (the seeded home), ``{scratch}`` (a directory outside
it, where inputs and artifacts live), ``{digest}`` (a recall digest of t1 that an audited
recall produced), ``{message}`` / ``{fact}`` / ``{note}`` / ``{handoff}`` / ``{memory}``
(ids the seed made), ``{post}`` (a Mood post's id), ``{source_id}`` (the migration
inventory's first source).
"""

import io
import json
import os
import shutil
from contextlib import redirect_stderr, redirect_stdout

AWS = "AKIA2R29TQLR0VLG5W1H"

CASES = {
    # autopilot.py
    ("autopilot", "init"): ["init"],
    ("autopilot", "create"): ["create", "--project", "P", "--title", "new task", "--description", "d",
                              "--next-action", "n", "--owner", "a", "--tag", "x", "--id", "tnew"],
    ("autopilot", "list"): ["list", "--project", "P", "--status", "queued"],
    ("autopilot", "show"): ["show", "t1"],
    ("autopilot", "update"): ["update", "t1", "--title", "renamed", "--next-action", "n", "--branch", "b",
                              "--worktree", "w", "--description", "d"],
    ("autopilot", "tag"): ["tag", "t1", "--tag", "infra"],
    ("autopilot", "untag"): ["untag", "t1", "--tag", "seeded"],
    ("autopilot", "search"): ["search", "one", "--project", "P"],
    ("autopilot", "similar"): ["similar", "t1"],
    ("autopilot", "dep"): ["dep", "t1", "t4"],
    ("autopilot", "dep-remove"): ["dep-remove", "t6", "t1"],
    ("autopilot", "blocked-by"): ["blocked-by", "t6"],
    ("autopilot", "impact"): ["impact", "t1"],
    ("autopilot", "critical-path"): ["critical-path", "--project", "P"],
    ("autopilot", "plan"): ["plan", "--project", "P"],
    ("autopilot", "claim"): ["claim", "t1", "--owner", "b"],
    ("autopilot", "heartbeat"): ["heartbeat", "t2", "--owner", "a", "--note", "running"],
    ("autopilot", "renew"): ["renew", "t2", "--owner", "a"],
    ("autopilot", "release"): ["release", "t2", "--owner", "a"],
    ("autopilot", "transfer"): ["transfer", "t2", "--from-owner", "a", "--to-owner", "c"],
    ("autopilot", "leases"): ["leases", "--owner", "a"],
    ("autopilot", "complete"): ["complete", "t2", "--owner", "a", "--note", "done", "--receipt", "{receipt}"],
    ("autopilot", "fail"): ["fail", "t2", "--owner", "a", "--reason", "red"],
    ("autopilot", "cancel"): ["cancel", "t4", "--owner", "a", "--reason", "obsolete"],
    ("autopilot", "defer"): ["defer", "t1", "--owner", "a", "--until", "2030-01-01T00:00:00Z"],
    ("autopilot", "block"): ["block", "t1", "--owner", "a", "--reason", "waiting"],
    ("autopilot", "unblock"): ["unblock", "t5", "--owner", "a"],
    ("autopilot", "next"): ["next", "--project", "P", "--claim", "--owner", "d"],
    ("autopilot", "receipt"): ["receipt", "t1", "--kind", "ci", "--payload", '{"tests": "pass"}'],
    ("autopilot", "run-receipt"): ["run-receipt", "t2", "--harness", "codex", "--model", "gpt-x", "--session", "s-1",
                                   "--workspace", "/srv/w", "--outcome", "ok", "--capability", "shell"],
    ("autopilot", "memory-ingest-git"): ["memory-ingest-git", "--repo", "{scratch}/repo", "--project", "P",
                                         "--max-commits", "5"],
    ("autopilot", "protocol"): ["protocol", "--format", "json"],
    ("autopilot", "memory-embed"): ["memory-embed", "--apply"],
    ("autopilot", "memory-status"): ["memory-status"],
    ("autopilot", "session-start"): ["session-start", "--hook", "claude", "--agent", "a", "--project", "P",
                                     "--seconds", "5", "--format", "json"],
    ("autopilot", "stop-gate"): ["stop-gate", "--hook", "claude", "--agent", "a", "--seconds", "5"],
    ("autopilot", "note"): ["note", "t1", "--content", "a fresh note", "--source", "a", "--kind", "fact"],
    ("autopilot", "notes"): ["notes", "t1"],
    ("autopilot", "supersede-note"): ["supersede-note", "{note}", "--content", "newer", "--source", "a"],
    ("autopilot", "note-history"): ["note-history", "{note}"],
    ("autopilot", "search-notes"): ["search-notes", "seeded", "--project", "P"],
    ("autopilot", "handoff"): ["handoff", "t1", "--from-agent", "a", "--to-agent", "b", "--objective", "o",
                               "--evidence", "e", "--constraint", "c", "--decision", "d", "--file", "f.py",
                               "--commit", "abc123", "--next-action", "n", "--risk", "r"],
    ("autopilot", "handoff-current"): ["handoff-current", "t1"],
    ("autopilot", "handoffs"): ["handoffs", "t1"],
    ("autopilot", "handoff-history"): ["handoff-history", "{handoff}"],
    ("autopilot", "ack"): ["ack", "t1", "--agent", "b"],
    ("autopilot", "handoff-inbox"): ["handoff-inbox", "--agent", "b", "--project", "P"],
    ("autopilot", "search-handoffs"): ["search-handoffs", "seeded", "--from-agent", "a", "--to-agent", "b"],
    ("autopilot", "memory-retain"): ["memory-retain", "--text", "a new memory", "--kind", "decision",
                                     "--project", "P", "--tag", "x", "--source", "a"],
    ("autopilot", "memory-list"): ["memory-list", "--project", "P", "--query", "seeded"],
    ("autopilot", "memory-forget"): ["memory-forget", "{memory}"],
    ("autopilot", "memory-import"): ["memory-import", "{scratch}/bank.jsonl"],
    ("autopilot", "memory-search"): ["memory-search", "seeded", "--project", "P"],
    ("autopilot", "fact-assert"): ["fact-assert", "--subject", "svc", "--predicate", "uses", "--object", "pg",
                                   "--source", "a", "--task", "t1"],
    ("autopilot", "fact-retract"): ["fact-retract", "{fact}", "--reason", "migrated"],
    ("autopilot", "facts"): ["facts", "--subject", "auth"],
    ("autopilot", "search-facts"): ["search-facts", "postgres"],
    ("autopilot", "context"): ["context", "t1"],
    ("autopilot", "recall"): ["recall", "t1", "--agent", "a"],
    ("autopilot", "recall-verify"): ["recall-verify", "t1", "--digest", "{digest}", "--agent", "a"],
    ("autopilot", "recall-diff"): ["recall-diff", "t1", "--digest", "{digest}"],
    ("autopilot", "resume"): ["resume", "t1", "--agent", "a"],
    ("autopilot", "prime"): ["prime", "--agent", "a", "--project", "P"],
    ("autopilot", "botmail-peer-allow"): ["botmail-peer-allow", "--recipient", "hermes", "--peer", "claude",
                                          "--profile", "work", "--class", "chat"],
    ("autopilot", "botmail-peer-revoke"): ["botmail-peer-revoke", "--recipient", "hermes", "--peer", "codex"],
    ("autopilot", "botmail-peers"): ["botmail-peers", "--recipient", "hermes"],
    ("autopilot", "botmail-send"): ["botmail-send", "--from", "codex", "--to", "hermes", "--profile", "work",
                                    "--class", "chat", "--body", "hello", "--thread", "t", "--harness", "codex",
                                    "--id", "m-new"],
    ("autopilot", "botmail-inbox"): ["botmail-inbox", "--recipient", "hermes", "--profile", "work"],
    ("autopilot", "botmail-ack"): ["botmail-ack", "{message}", "--recipient", "hermes"],
    ("autopilot", "botmail-receipts"): ["botmail-receipts", "--sender", "codex", "--recipient", "hermes",
                                        "--envelope-id", "m-1"],
    ("autopilot", "botmail-context"): ["botmail-context", "--recipient", "hermes", "--profile", "work"],
    ("autopilot", "setup"): ["setup", "claude", "--project-dir", "{scratch}/project", "--dry-run"],
    ("autopilot", "session-scan"): ["session-scan", "--root", "{scratch}/sessions"],
    ("autopilot", "session-ingest"): ["session-ingest", "--source", "claude-code", "--root", "{scratch}/sessions",
                                      "--project", "P", "--profile", "work", "--apply"],
    ("autopilot", "search-sessions"): ["search-sessions", "redirect", "--project", "P"],
    ("autopilot", "sessions-prune"): ["sessions-prune", "--older-than", "30d", "--source", "claude-code"],
    ("autopilot", "dashboard"): ["dashboard"],
    ("autopilot", "metrics"): ["metrics"],
    ("autopilot", "events"): ["events", "--action", "task_created", "--entity-id", "t1",
                              "--since", "2020-01-01T00:00:00Z"],
    ("autopilot", "verify-chain"): ["verify-chain"],
    ("autopilot", "declare"): ["declare", "t1", "--model", "opencode/x", "--autonomy-level", "L1",
                               "--granted-by", "leo", "--grant-hours", "24"],
    ("autopilot", "grant-check"): ["grant-check", "t1", "--model", "opencode/x"],
    ("autopilot", "demo"): ["demo", "--json"],
    # ops.py
    ("ops", "recover"): ["recover", "--dry-run"],
    ("ops", "escalate"): ["escalate", "--dry-run"],
    ("ops", "escalate-stalled"): ["escalate-stalled", "--dry-run"],
    ("ops", "approval"): ["approval", "approve", "t1", "--by", "leo", "--note", "ok"],
    ("ops", "unverified-completions"): ["unverified-completions"],
    ("ops", "policy"): ["policy", "P", "merge"],
    ("ops", "notes-expired"): ["notes-expired"],
    ("ops", "secret-scan"): ["secret-scan"],
    ("ops", "consolidate"): ["consolidate", "--task", "t1", "--dry-run"],
    ("ops", "dup-tasks"): ["dup-tasks"],
    ("ops", "handoff-check"): ["handoff-check", "--task", "t1"],
    ("ops", "recall-stale"): ["recall-stale"],
    ("ops", "doctor"): ["doctor"],
    ("ops", "fts-rebuild"): ["fts-rebuild", "--dry-run"],
    ("ops", "receipts-sweep"): ["receipts-sweep"],
    ("ops", "snapshot"): ["snapshot", "--out", "{scratch}/out-snapshot.json"],
    ("ops", "snapshot-check"): ["snapshot-check", "{scratch}/snapshot.json"],
    ("ops", "snapshot-restore"): ["snapshot-restore", "{scratch}/snapshot.json", "--force"],
    ("ops", "checkpoint"): ["checkpoint", "--out", "{scratch}/out-checkpoint.json"],
    ("ops", "checkpoint-check"): ["checkpoint-check", "{scratch}/checkpoint.json"],
    ("ops", "archive"): ["archive", "--before", "2030-01-01T00:00:00Z", "--dry-run"],
    ("ops", "archive-check"): ["archive-check", "{scratch}/archive.json"],
    ("ops", "archive-restore"): ["archive-restore", "{scratch}/archive.json"],
    ("ops", "export-task"): ["export-task", "t1", "--out", "{scratch}/out-workorder.json"],
    ("ops", "import-task"): ["import-task", "{scratch}/workorder.json", "--dry-run"],
    ("ops", "home-doctor"): ["home-doctor", "--home", "{home}"],
    ("ops", "home-show"): ["home-show"],
    ("ops", "home-select"): ["home-select", "--home", "{home}"],
    ("ops", "home-deselect"): ["home-deselect"],
    ("ops", "sense"): ["sense"],
    ("ops", "repair-list"): ["repair-list"],
    ("ops", "repair"): ["repair", "stale-lease-recover", "--dry-run"],
    ("ops", "nanny"): ["nanny", "--dry-run"],
    ("ops", "processes"): ["processes", "--no-os"],
    ("ops", "morning"): ["morning", "--json", "--since", "2020-01-01T00:00:00Z"],
    ("ops", "github"): ["github", "--no-tool"],
    ("ops", "sentry"): ["sentry", "--no-tool"],
    ("ops", "migrate-inventory"): ["migrate-inventory", "--root", "{scratch}/old", "--out", "{scratch}/out-inv.json"],
    ("ops", "migrate-inventory-check"): ["migrate-inventory-check", "{scratch}/inventory.json"],
    ("ops", "migrate-import"): ["migrate-import", "--inventory", "{scratch}/inventory.json",
                                "--source-id", "{source_id}"],
    ("ops", "migrate-rollback"): ["migrate-rollback", "{scratch}/result.json"],
    ("ops", "onboard"): ["onboard", "--inventory", "{scratch}/inventory.json"],
    ("ops", "brain-inventory"): ["brain-inventory", "--out", "{scratch}/out-brain.json", "--home", "{home}"],
    ("ops", "brain-inventory-check"): ["brain-inventory-check", "{scratch}/brain.json"],
    ("ops", "brain-import"): ["brain-import", "--inventory", "{scratch}/brain.json", "--target", "{scratch}/newhome"],
    # mood_poller.py
    ("mood_poller", "tick"): ["tick", "--dry-run", "--cycles", "1"],
    ("mood_poller", "explain"): ["explain", "infra", "re"],
    ("mood_poller", "post"): ["post", "infra", "hello @re", "--author", "justin", "--via", "ssh"],
    ("mood_poller", "react"): ["react", "infra", "{post}", "thumbsup", "--who", "justin"],
    ("mood_poller", "posts"): ["posts", "infra"],
    ("mood_poller", "typing"): ["typing", "infra", "justin"],
    ("mood_poller", "arrive"): ["arrive", "infra", "justin", "--via", "ssh"],
    ("mood_poller", "mood create"): ["mood", "create", "ops", "--title", "Ops room", "--description", "d",
                                     "--instructions-page", "Moods/Ops"],
    ("mood_poller", "mood update"): ["mood", "update", "infra", "--title", "Infra", "--description", "d",
                                     "--instructions-page", "Moods/Infra"],
    ("mood_poller", "mood show"): ["mood", "show", "infra"],
    ("mood_poller", "mood list"): ["mood", "list"],
    ("mood_poller", "mood join"): ["mood", "join", "infra", "sky"],
    ("mood_poller", "mood leave"): ["mood", "leave", "infra", "re"],
    ("mood_poller", "agent create"): ["agent", "create", "sky2", "--page", "Agents/sky", "--instructions", "be brief",
                                      "--command", "claude -p", "--alias", "s2"],
    ("mood_poller", "agent update"): ["agent", "update", "re", "--page", "Agents/re", "--instructions", "i",
                                      "--command", "claude -p", "--alias", "r2"],
    ("mood_poller", "agent show"): ["agent", "show", "re"],
    ("mood_poller", "agent list"): ["agent", "list"],
    ("mood_poller", "set"): ["set", "listening", "mentions", "--mood", "infra", "--agent", "re", "--by", "skyler",
                             "--note", "busy week"],
    ("mood_poller", "page set"): ["page", "set", "Moods/Wake", "--editor", "re", "--file", "{scratch}/page.md",
                                  "--note", "n"],
    ("mood_poller", "page show"): ["page", "show", "Moods/Seed"],
    ("mood_poller", "page list"): ["page", "list"],
    ("mood_poller", "page trust"): ["page", "trust", "sky"],
    ("mood_poller", "page untrust"): ["page", "untrust", "re"],
    ("mood_poller", "wakes"): ["wakes", "--mood", "infra", "--agent", "re", "--kind", "mention",
                               "--outcome", "replied", "--since", "2020-01-01T00:00:00Z"],
    ("mood_poller", "show-wake"): ["show-wake", "1"],
    ("mood_poller", "bundle"): ["bundle", "b0123456789abcdef"],
    ("mood_poller", "budget"): ["budget"],
}

# cases whose base call is expected to exit 1 in the seeded home (a check that reports, or
# a lookup of something the seed cannot cheaply make)
EXPECTED_EXIT = {
    ("mood_poller", "show-wake"): 1, ("mood_poller", "bundle"): 1, ("ops", "handoff-check"): 1,
    ("ops", "onboard"): 1,  # stops at its preflight: the seeded home is not a new one
}


def door_commands():
    """Every command of every door as ``(door, "command")`` or ``(door, "command subcommand")``."""
    from mindos.cli import doors

    found = []
    for door_name, door in doors.DOORS.items():
        for name in doors.commands(door):
            nested = doors.declare(door, door.script, name).subcommands
            if nested is not None:
                found.extend((door_name, f"{name} {sub}") for sub in nested.choices)
            else:
                found.append((door_name, name))
    return found


def parser_of(door_name, command):
    """The argparse parser that reads the arguments of ``command`` (a subcommand's own)."""
    from mindos.cli import doors, parsers

    door = doors.DOORS[door_name]
    name, _, sub = command.partition(" ")
    parser = parsers.command_parser(door, door.script, name)
    return parser.mindos_commands[sub] if sub else parser


def command_of(door_name, command):
    """The declaration (:class:`mindos.cli.spec.Command`) of ``command`` (a subcommand's own)."""
    return parser_of(door_name, command).mindos_command


def call(door, argv):
    """Run a front door in-process: ``(rc, out, err, traceback or None)``."""
    import traceback

    from mindos.cli import run

    out, err = io.StringIO(), io.StringIO()
    crashed = None
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = run(door, list(argv))
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # noqa: BLE001 - anything else is a traceback a user would see
            rc, crashed = None, traceback.format_exc()
    return rc, out.getvalue(), err.getvalue(), crashed


def _ok(door, *argv):
    rc, out, err, crashed = call(door, argv)
    assert rc == 0 and crashed is None, (door, argv, rc, err, crashed)
    return json.loads(out) if out.strip().startswith(("{", "[")) else out


def seed(home, scratch):
    """Build the seeded home the cases run against; return the placeholder values."""
    os.makedirs(scratch, exist_ok=True)
    os.environ["HERMES_AUTOPILOT_HOME"] = home
    _ok("autopilot", "init")
    for task_id, title in (("t1", "one seeded task"), ("t2", "two"), ("t3", "three"), ("t4", "four"),
                           ("t5", "five"), ("t6", "six"), ("t7", "seven done")):
        _ok("autopilot", "create", "--project", "P", "--title", title, "--id", task_id, "--tag", "seeded")
    _ok("autopilot", "claim", "t2", "--owner", "a")
    _ok("autopilot", "claim", "t5", "--owner", "a")
    _ok("autopilot", "block", "t5", "--owner", "a", "--reason", "seeded block")
    _ok("autopilot", "dep", "t6", "t1")
    _ok("autopilot", "claim", "t7", "--owner", "a")
    _ok("autopilot", "complete", "t7", "--owner", "a", "--note", "seeded done")
    receipt = _ok("autopilot", "receipt", "t2", "--kind", "ci", "--payload", '{"tests": "pass"}')
    _ok("autopilot", "declare", "t1", "--model", "opencode/x", "--autonomy-level", "L1", "--granted-by", "leo",
        "--grant-hours", "24")
    note = _ok("autopilot", "note", "t1", "--content", "seeded note about postgres", "--source", "a")
    handoff = _ok("autopilot", "handoff", "t1", "--from-agent", "a", "--to-agent", "b", "--objective",
                  "seeded objective")
    memory = _ok("autopilot", "memory-retain", "--text", "seeded memory", "--project", "P")
    fact = _ok("autopilot", "fact-assert", "--subject", "auth", "--predicate", "uses", "--object", "postgres",
               "--source", "a")
    recalled = _ok("autopilot", "recall", "t1", "--agent", "a")
    _ok("autopilot", "botmail-peer-allow", "--recipient", "hermes", "--peer", "codex", "--profile", "work")
    sent = _ok("autopilot", "botmail-send", "--from", "codex", "--to", "hermes", "--profile", "work",
               "--body", "seeded mail", "--id", "m-1")
    _ok("mood_poller", "mood", "create", "infra", "--title", "Infra room")
    for agent in ("re", "sky"):
        _ok("mood_poller", "agent", "create", agent, "--command", "true")
    _ok("mood_poller", "mood", "join", "infra", "re")
    _ok("mood_poller", "page", "trust", "re")
    _ok("mood_poller", "page", "set", "Moods/Seed", "--editor", "re", "--text", "seeded page")
    post = _ok("mood_poller", "post", "infra", "seeded post", "--author", "justin", "--via", "ssh")
    _git_repo(os.path.join(scratch, "repo"))
    with open(os.path.join(scratch, "page.md"), "w", encoding="utf-8") as handle:
        handle.write("# Wake\nplease look\n")
    with open(os.path.join(scratch, "bank.jsonl"), "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"text": "imported memory", "kind": "fact"}) + "\n")
    sessions = os.path.join(scratch, "sessions")
    os.makedirs(sessions, exist_ok=True)
    with open(os.path.join(sessions, "s1.jsonl"), "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "user", "message": {"role": "user", "content": "redirect cookie"}}) + "\n")
    os.makedirs(os.path.join(scratch, "project"), exist_ok=True)
    os.makedirs(os.path.join(scratch, "old", "hindsight"), exist_ok=True)
    shutil.copyfile(os.path.join(scratch, "bank.jsonl"), os.path.join(scratch, "old", "hindsight", "bank.jsonl"))
    _ok("ops", "snapshot", "--out", os.path.join(scratch, "snapshot.json"))
    _ok("ops", "checkpoint", "--out", os.path.join(scratch, "checkpoint.json"))
    _ok("ops", "export-task", "t1", "--out", os.path.join(scratch, "workorder.json"))
    _ok("ops", "archive", "--before", "2030-01-01T00:00:00Z", "--out", os.path.join(scratch, "archive.json"))
    _ok("ops", "migrate-inventory", "--root", os.path.join(scratch, "old"), "--out",
        os.path.join(scratch, "inventory.json"))
    _ok("ops", "brain-inventory", "--out", os.path.join(scratch, "brain.json"), "--home", home)
    with open(os.path.join(scratch, "inventory.json"), encoding="utf-8") as handle:
        inventory = json.load(handle)
    sources = inventory.get("sources") or inventory.get("body", {}).get("sources") or []
    source_id = sources[0]["source_id"] if sources else "src-0000000000000000"
    _ok("ops", "migrate-import", "--inventory", os.path.join(scratch, "inventory.json"), "--source-id", source_id,
        "--apply", "--out", os.path.join(scratch, "result.json"))
    return {"home": home, "scratch": scratch, "digest": recalled["digest"], "note": str(note["id"]),
            "handoff": str(handoff["id"]), "memory": memory["id"], "fact": str(fact["id"]),
            "message": str(sent["message_id"]), "source_id": source_id, "receipt": receipt["receipt_id"],
            "post": str(post["id"])}


def _git_repo(path):
    """A one-commit git repository for memory-ingest-git (git run without a shell)."""
    import subprocess

    os.makedirs(path, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": path, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", "init", "-q", path], check=True, env=env)
    subprocess.run(["git", "-C", path, "commit", "-q", "--allow-empty", "-m", "Seed the repository"],
                   check=True, env=env)


def argv_of(key, values):
    """The case's argv with its placeholders filled from ``values``."""
    return [arg.format(**values) if "{" in arg and not arg.startswith("{\"") else arg for arg in CASES[key]]
