"""``python3 -m mindos.mcp``: the MCP server (see :mod:`mindos.cli.mcp_server`)."""

import sys

from mindos.cli.mcp_server import main

if __name__ == "__main__":
    sys.exit(main())
