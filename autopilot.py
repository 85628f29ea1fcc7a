#!/usr/bin/env python3
"""MindOS autopilot front door; the commands live in mindos/cli/autopilot.py."""
import sys

try:
    from mindos.cli.autopilot import console
except KeyboardInterrupt:  # Ctrl-C while starting up: the same one line and exit 130 as anywhere else
    sys.stderr.write("interrupted\n")
    sys.exit(130)

if __name__ == "__main__":
    console()
