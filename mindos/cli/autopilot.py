"""``autopilot.py``: tasks, leases, dependencies, receipts, notes, handoffs, audit."""

from mindos.cli import run

DESCRIPTION = "MindOS autopilot: execution truth and shared memory for AI coding agents."

COMMANDS = {
    **dict.fromkeys(["note", "notes", "supersede-note", "note-history", "search-notes"], "notes_cmds"),
    **dict.fromkeys(["claim", "heartbeat", "renew", "release", "transfer", "leases", "complete", "fail", "cancel", "defer", "block", "unblock"], "lease_cmds"),
    **dict.fromkeys(["demo"], "demo_cmds"),
    **dict.fromkeys(["context", "similar"], "context_cmds"),
    **dict.fromkeys(["handoff", "handoff-current", "handoffs", "handoff-history", "ack", "handoff-inbox", "search-handoffs"], "handoff_cmds"),
    **dict.fromkeys(["dep", "dep-remove", "blocked-by", "impact", "critical-path", "plan"], "graph_cmds"),
    **dict.fromkeys(["search", "tag", "untag", "receipt", "dashboard"], "foundation_cmds"),
    **dict.fromkeys(["next"], "dispatch_cmds"),
    **dict.fromkeys(["init", "create", "list", "show", "update", "events", "verify-chain", "metrics"],
                    "tasks_cmds"),
}


def main(argv=None):
    """Run one autopilot command; return its exit code."""
    return run("autopilot.py", DESCRIPTION, COMMANDS, argv)
