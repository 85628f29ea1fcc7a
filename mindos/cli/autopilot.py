"""``autopilot.py`` / ``mindos-autopilot``: what agents call (tasks, leases, memory, context)."""

from mindos.cli import run


def main(argv=None):
    """Run one autopilot command; return its exit code."""
    return run("autopilot", argv)
