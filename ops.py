#!/usr/bin/env python3
"""MindOS operations front door; the commands live in mindos/cli/ops.py."""
import sys

from mindos.cli.ops import main

if __name__ == "__main__":
    sys.exit(main())
