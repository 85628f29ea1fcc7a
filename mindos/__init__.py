"""MindOS: local-first memory and execution truth for AI coding agents.

Subpackages by dimension: ``core`` (leaves), ``store`` (the database), ``work``,
``memory``, ``context``, ``views``, ``recovery``, ``autonomy``, ``comms`` and ``demo``.
Their functions take an open connection from :mod:`mindos.store.db` plus plain values and
return plain data; the front doors in :mod:`mindos.cli` parse, call and print, and
:mod:`mindos.mcp` serves the same commands as MCP tools.
"""

__version__ = "0.5.0"
