"""The MCP server: MindOS's commands as Model Context Protocol tools over stdio.

:mod:`mindos.mcp.tools` derives the tools from the CLI's command table;
:mod:`mindos.mcp.server` speaks newline-delimited JSON-RPC 2.0 on stdin/stdout.
"""
