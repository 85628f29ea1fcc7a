"""``mindos-mcp`` / ``python3 -m mindos.mcp``: the MCP server's front door.

Parses the flags, sets up stderr logging and serves MCP over stdio
(:func:`mindos.mcp.server.serve`) or, with ``--http HOST:PORT``, over Streamable HTTP
(:func:`mindos.mcp.http_transport.serve`).  The home is resolved with the CLI's rules and is
never created: without a database every tool call answers ``no_database``.  While it serves
stdio, ``sys.stdout`` points at stderr, so only the protocol ever reaches the real stdout.
"""

import argparse
import logging
import os
import sys

from mindos.cli import flags, safe_line
from mindos.errors import MindosError
from mindos.mcp import tools
from mindos.mcp.server import log, serve


def parser():
    from mindos import __version__  # lazy: read only when the parser is built

    p = argparse.ArgumentParser(
        prog="mindos-mcp", allow_abbrev=False,
        description="MindOS MCP server: stdio (newline-delimited JSON-RPC 2.0) or Streamable HTTP;"
                    " tools generated from the CLI.",
        epilog="Examples:\n  mindos-mcp --tools all --allow cancel --log-level info\n"
               "  mindos-mcp --http 127.0.0.1:8765\n"
               "  mindos-mcp --http 10.0.0.5:8765 --token-file ~/.config/mindos/mcp-token",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("--home", help="the MindOS home (default: the CLI's home resolution); never created")
    p.add_argument("--tools", default=tools.DEFAULT_PROFILE, choices=(*tools.PROFILES, tools.ALL),
                   help="the tool set: agent (the lean default, about 10 KB of definitions) or all")
    p.add_argument("--allow", action="append", default=[], metavar="COMMAND",
                   help="also expose this operator command (repeatable; not exposed by default)")
    p.add_argument("--allow-secret-override", action="store_true",
                   help="honour allow_secret (store credential-shaped text as is); refused otherwise")
    p.add_argument("--allow-force", action="store_true",
                   help="honour force (claim past seam conflicts and dispatch policy); refused otherwise")
    p.add_argument("--http", metavar="HOST:PORT",
                   help="serve MCP Streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0: any free one)")
    p.add_argument("--token-file", metavar="PATH",
                   help="bearer token clients must send (a mode 0600 file; required for a non-loopback --http)")
    p.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="a browser Origin to accept besides loopback ones (repeatable, e.g. https://app.example)")
    p.add_argument("--max-sessions", type=flags.integer, default=64, metavar="N",
                   help="--http: live sessions at most (default 64)")
    p.add_argument("--max-body", type=flags.integer, default=None, metavar="BYTES",
                   help="--http: request body limit in bytes (default 4 MiB)")
    p.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"),
                   help="stderr log level (default warning)")
    return p


def main(argv=None):
    """Run the server until stdin closes (or until interrupted, over HTTP); return the exit code."""
    p = parser()
    args = p.parse_args(argv)
    if args.http is None and (args.token_file or args.allow_origin):
        p.error("--token-file and --allow-origin go with --http")
    if args.max_sessions < 1 or (args.max_body is not None and args.max_body < 1024):
        p.error("--max-sessions must be at least 1 and --max-body at least 1024")
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(),
                        format="mindos-mcp: %(levelname)s %(name)s: %(message)s")
    overrides = [name for name, wanted in (("allow_secret", args.allow_secret_override), ("force", args.allow_force))
                 if wanted]
    home = os.path.abspath(os.path.expanduser(args.home)) if args.home else None
    try:
        exposed = tools.exposed(args.allow, args.tools, overrides)
        _say_where(home)
        if args.http is not None:
            return _serve_http(args, exposed, home)
    except MindosError as exc:
        print(f"mindos-mcp: error: {safe_line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # guarded: only the protocol ever reaches the real stdout
    log.info("serving %d tools over stdio", len(exposed))
    try:
        serve(None, exposed, sys.stdin.buffer, stdout, home=home)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    return 0


def _say_where(home):
    """Log the home in use; warn (never create) when it has no database."""
    from mindos.store import db  # lazy: the path rules only

    if home is None:
        from mindos.core.home import resolve  # lazy: only when no --home is given

        home, rule = resolve()
    else:
        rule = "given"
    if os.path.exists(db.database_path(home)):
        log.info("home %s (chosen by %s)", home, db.describe_rule(rule))
    else:
        log.warning("no MindOS database in home %s (chosen by %s): every tool call answers no_database until"
                    " 'autopilot.py init' creates it", home, db.describe_rule(rule))


def _serve_http(args, exposed, home):
    from mindos.mcp import http_transport  # lazy: stdio never loads http.server

    address = http_transport.parse_address(args.http)
    token = http_transport.read_token(os.path.expanduser(args.token_file)) if args.token_file else None
    limits = {"max_sessions": args.max_sessions}
    if args.max_body is not None:
        limits["max_body"] = args.max_body

    def ready(url):
        print(f"mindos-mcp: serving MCP over Streamable HTTP at {url}", file=sys.stderr, flush=True)

    def stop(signum, frame):
        raise KeyboardInterrupt  # SIGTERM ends the server the way Ctrl-C does: connections closed

    import signal  # lazy: the HTTP transport only

    signal.signal(signal.SIGTERM, stop)

    try:
        http_transport.serve(address, exposed, home=home, token=token, origins=args.allow_origin, ready=ready,
                             **limits)
    except OSError as exc:
        print(f"mindos-mcp: error: cannot listen on {safe_line(args.http)}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
