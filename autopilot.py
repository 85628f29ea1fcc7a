#!/usr/bin/env python3
"""MindOS autopilot front door; the commands live in mindos/cli/autopilot.py."""
import sys

from mindos.cli.autopilot import main

if __name__ == "__main__":
    sys.exit(main())
