"""CLI modules of mindos.harness: setup (and setup check), session-start and stop-gate."""
