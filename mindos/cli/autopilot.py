"""``autopilot.py`` / ``mindos-autopilot``: what agents call (tasks, leases, memory, context)."""

from mindos.cli import exit_process, own_process, run


def main(argv=None):
    """Run one autopilot command; return its exit code."""
    return run("autopilot", argv)


def console():
    """The installed console script: run the command named on the command line, then end the
    process at once (see :func:`mindos.cli.exit_process`); the process-wide settings are
    made here, never on import (see :func:`mindos.cli.own_process`)."""
    own_process()
    exit_process(main())
