"""MindOS: local-first memory and execution truth for AI coding agents.

The package is plain modules, one per domain (tasks, graph, leases, notes, ...).  Core
functions take an open connection from :mod:`mindos.db` plus plain values and return plain
data; the command-line front doors in :mod:`mindos.cli` parse, call and print.
"""

__version__ = "0.5.0"
