"""``autopilot.py``: tasks, leases, dependencies, receipts, notes, handoffs, audit."""

from mindos.cli import run

DESCRIPTION = "MindOS autopilot: execution truth and shared memory for AI coding agents."

COMMANDS = {
    **dict.fromkeys(["init", "create", "list", "show", "update", "events", "verify-chain", "metrics"],
                    "tasks_cmds"),
}


def main(argv=None):
    """Run one autopilot command; return its exit code."""
    return run("autopilot.py", DESCRIPTION, COMMANDS, argv)
