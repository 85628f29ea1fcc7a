"""``ops.py``: operator commands (recovery, sweeps, policy, approvals, hygiene)."""

from mindos.cli import run

DESCRIPTION = "MindOS operations: safe, dry-run-first sweeps over the autopilot home."

COMMANDS = {
    **dict.fromkeys(["notes-expired", "secret-scan", "consolidate"], "notes_ops_cmds"),
    **dict.fromkeys(["recover", "escalate", "approval", "unverified-completions", "policy"], "recovery_cmds"),
    **dict.fromkeys(["dup-tasks"], "dedup_ops_cmds"),
    **dict.fromkeys(["handoff-check"], "handoff_ops_cmds"),
}


def main(argv=None):
    """Run one ops command; return its exit code."""
    return run("ops.py", DESCRIPTION, COMMANDS, argv)
