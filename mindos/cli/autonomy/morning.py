"""Operator surface: morning."""

from mindos.autonomy import morning
from mindos.cli import make_parser


def add_morning(sub):
    p = make_parser(sub, "morning",
                    "ops.py morning --mark")
    p.add_argument("--since", help="window start (ISO 8601; default: the last marked brief, else 24 hours ago)")
    p.add_argument("--mark", action="store_true",
                   help="record this brief (audited morning_brief) so the next one starts here")
    p.add_argument("--json", action="store_true", help="print the brief's data as JSON instead of text")
    p.set_defaults(handler=cmd_morning)


def cmd_morning(conn, args):
    data = morning.brief(conn, since=args.since, mark=args.mark)
    return data if args.json else morning.render(data)


COMMANDS = {
    "morning": add_morning,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "morning": "text | --json {counts decisions failed finished nanny now since since_rule stuck ?marked}",
}
