"""``mood_poller.py tick / explain``: one poll cycle, and what the next one would do."""

from mindos.cli import make_parser
from mindos.comms import tick
from mindos.errors import InvalidInput


def add_tick(sub):
    p = make_parser(sub, "tick",
                    "mood_poller.py tick --dry-run")
    p.add_argument("--dry-run", action="store_true", help="compose the wakes without delivering or writing anything")
    p.add_argument("--seconds", type=float, default=50.0,
                   help="start no new wake after this many seconds (default 50: one cron minute)")
    p.set_defaults(handler=cmd_tick)


def cmd_tick(conn, args):
    if not 0 < args.seconds <= 3600:
        raise InvalidInput("invalid --seconds: expected a number from 0 to 3600")
    return tick.run(conn, dry_run=args.dry_run, seconds=args.seconds)


def add_explain(sub):
    p = make_parser(sub, "explain",
                    "mood_poller.py explain infra re")
    p.add_argument("mood")
    p.add_argument("agent")
    p.set_defaults(handler=cmd_explain)


def cmd_explain(conn, args):
    return tick.explain(conn, args.mood, args.agent)


COMMANDS = {"tick": add_tick, "explain": add_explain}
