"""The read-only sense sweep: sense."""

from mindos.autonomy import sense
from mindos.cli import flags, make_parser


def add_sense(sub):
    p = make_parser(sub, "sense",
                    "ops.py sense")
    flags.limit(p, default=sense.LIMIT, help=f"findings listed per kind (default {sense.LIMIT}; totals stay exact)")
    p.add_argument("--since-last-tick", action="store_true",
                   help="check only what changed since the newest nanny tick (chain, receipts, index rows); the"
                        " slower whole-home checks are left to the nanny's rotation")
    p.set_defaults(handler=cmd_sense)


def cmd_sense(conn, args):
    if args.since_last_tick:
        return sense.sense_since_last_tick(conn, limit=args.limit)
    return sense.sense(conn, limit=args.limit)


COMMANDS = {
    "sense": add_sense,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "sense": "{by_kind by_severity digest findings sensed_at sources total truncated ?sweep}",
}
