#!/usr/bin/env python3
"""MindOS session-start context pack: ``python3 mindos_context_pack.py sentinel --json``
exercises the Hermes first-turn pack's disposable proof path without touching live homes.

The logic lives in mindos/harness/hermes.py (the pack in mindos/context/prime.py and
mindos/context/first_turn.py), the front door in mindos/cli/context_pack.py.
"""
import os
import sys

# the checkout holding the mindos package (this file may be reached through a symlink)
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

from mindos.cli.context_pack import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
