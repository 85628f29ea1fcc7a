"""The MCP server: MindOS's commands as Model Context Protocol tools.

:mod:`mindos.mcp.tools` derives the tools from the CLI's command table;
:mod:`mindos.mcp.server` is the protocol and the stdio transport (newline-delimited
JSON-RPC 2.0); :mod:`mindos.mcp.http_transport` is the Streamable HTTP transport.
"""
