"""MindOS inside the agent harnesses (Claude Code, Codex, Hermes): what a harness runs and how
it is wired in.

:mod:`mindos.harness.setup` writes (and ``--remove`` takes back out) MindOS's entries in each
harness's own config files, and :mod:`mindos.harness.check` runs what setup wrote the way the
harness would; :mod:`mindos.harness.hooks` reads Claude Code's hook events (``session-start``,
``stop-gate``); :mod:`mindos.harness.hermes` is the Hermes ``pre_llm_call`` gateway hook.
The front doors stay in :mod:`mindos.cli` (``mindos.cli.harness``, ``mindos.cli.hermes_hook``,
``mindos.cli.context_pack``).

This is a top layer beside ``mindos.cli`` and ``mindos.mcp``: it may name their front-door
commands (the command lines it writes into a harness's config) but imports none of their
code, and only ``mindos.cli`` imports it.
"""
