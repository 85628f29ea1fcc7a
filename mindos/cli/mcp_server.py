"""``mindos-mcp`` / ``python3 -m mindos.mcp``: the MCP server's front door.

Parses the flags, sets up stderr logging, opens the home and hands stdin/stdout to
:func:`mindos.mcp.server.serve`.  While it serves, ``sys.stdout`` points at stderr, so only
the protocol ever reaches the real stdout.
"""

import argparse
import logging
import sys

from mindos.cli import safe_line
from mindos.errors import MindosError
from mindos.mcp import tools
from mindos.mcp.server import log, serve
from mindos.store import db


def parser():
    p = argparse.ArgumentParser(
        prog="mindos-mcp", allow_abbrev=False,
        description="MindOS MCP server: stdio, newline-delimited JSON-RPC 2.0; tools generated from the CLI.",
        epilog="Example:\n  mindos-mcp --allow cancel --log-level info",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--home", help="the MindOS home (default: the usual home resolution)")
    p.add_argument("--allow", action="append", default=[], metavar="COMMAND",
                   help="also expose this operator command (repeatable; not exposed by default)")
    p.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"),
                   help="stderr log level (default warning)")
    return p


def main(argv=None):
    """Run the server until stdin closes; return the exit code."""
    args = parser().parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(),
                        format="mindos-mcp: %(levelname)s %(name)s: %(message)s")
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # guarded: only the protocol ever reaches the real stdout
    try:
        exposed = tools.exposed(args.allow)
        conn = db.connect(args.home)
    except MindosError as exc:
        print(f"mindos-mcp: error: {safe_line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    log.info("serving %d tools from %s", len(exposed), conn.path)
    try:
        serve(conn, exposed, sys.stdin.buffer, stdout)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    finally:
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
