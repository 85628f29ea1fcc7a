"""Operator surfaces over external tools: github, sentry."""

from mindos.autonomy import integrations
from mindos.cli import flags, make_parser


def add_github(sub):
    p = make_parser(sub, "github",
                    "ops.py github --limit 20")
    flags.limit(p, default=50, help="tasks listed (default 50; the total stays exact)")
    p.add_argument("--no-tool", action="store_true", help="registry only: do not ask gh")
    p.set_defaults(handler=cmd_github)


def cmd_github(conn, args):
    return integrations.github(conn, limit=args.limit, use_tool=not args.no_tool)


def add_sentry(sub):
    p = make_parser(sub, "sentry",
                    "ops.py sentry")
    flags.limit(p, default=50, help="tasks listed (default 50; the total stays exact)")
    p.add_argument("--no-tool", action="store_true", help="registry only: do not ask sentry-cli")
    p.set_defaults(handler=cmd_sentry)


def cmd_sentry(conn, args):
    return integrations.sentry(conn, limit=args.limit, use_tool=not args.no_tool)


COMMANDS = {
    "github": add_github,
    "sentry": add_sentry,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "github": "{registry tool}",
    "sentry": "{registry tool}",
}
