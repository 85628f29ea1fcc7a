"""``python3 -m mindos.mcp``: the MCP server (see :mod:`mindos.mcp.server`)."""

import sys

from mindos.mcp.server import main

if __name__ == "__main__":
    sys.exit(main())
