#!/usr/bin/env python3
"""Hermes ``pre_llm_call`` hook: one bounded MindOS pack on a new session's first turn.

Install by linking (or copying) this file to ``$HOME/.hermes/mindos/mindos_gateway_hook.py``
and listing it under ``hooks: pre_llm_call`` in the Hermes config; ``sentinel [--json]``
proves the path in a disposable home.  The logic lives in mindos/harness/hermes.py,
the front door in mindos/cli/hermes_hook.py.
"""
import os
import sys

# the checkout holding the mindos package (this file may be reached through a symlink)
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

from mindos.cli.hermes_hook import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
