"""``ops.py`` / ``mindos-ops``: what operators and cron call (sweeps, lints, repairs)."""

from mindos.cli import run


def main(argv=None):
    """Run one ops command; return its exit code."""
    return run("ops", argv)
