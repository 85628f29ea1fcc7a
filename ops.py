#!/usr/bin/env python3
"""MindOS operations front door; the commands live in mindos/cli/ops.py."""
import sys

try:
    from mindos.cli.ops import console
except KeyboardInterrupt:  # Ctrl-C while starting up: the same one line and exit 130 as anywhere else
    sys.stderr.write("interrupted\n")
    sys.exit(130)

if __name__ == "__main__":
    console()
