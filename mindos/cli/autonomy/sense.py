"""The read-only sense sweep: sense."""

from mindos.autonomy import sense
from mindos.cli import flags, make_parser


def add_sense(sub):
    p = make_parser(sub, "sense",
                    "ops.py sense")
    flags.limit(p, default=sense.LIMIT, help=f"findings listed per kind (default {sense.LIMIT}; totals stay exact)")
    p.set_defaults(handler=cmd_sense)


def cmd_sense(conn, args):
    return sense.sense(conn, limit=args.limit)


COMMANDS = {
    "sense": add_sense,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "sense": "{by_kind by_severity digest findings sensed_at sources total truncated}",
}
