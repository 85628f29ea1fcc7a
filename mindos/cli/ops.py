"""``ops.py``: operator commands (recovery, sweeps, policy, approvals, hygiene)."""

from mindos.cli import run

DESCRIPTION = "MindOS operations: safe, dry-run-first sweeps over the autopilot home."

COMMANDS = {
}


def main(argv=None):
    """Run one ops command; return its exit code."""
    return run("ops.py", DESCRIPTION, COMMANDS, argv)
