"""CLI modules of mindos.mcp (harness setup)."""
