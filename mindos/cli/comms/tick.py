"""``mood_poller.py tick / explain``: one poll cycle, and what the next one would do."""

import time

from mindos.cli import flags, make_parser
from mindos.comms import tick
from mindos.comms.words import Words
from mindos.errors import InvalidInput


def add_tick(sub):
    p = make_parser(sub, "tick",
                    "mood_poller.py tick --dry-run")
    flags.dry_run(p, "compose the wakes without delivering or writing anything")
    p.add_argument("--seconds", type=flags.number, default=50.0,
                   help="start no new wake after this many seconds (default 50: one cron minute)")
    p.add_argument("--cycles", type=flags.integer, default=1,
                   help="run this many cycles in a loop (default 1: one cycle, for cron); prints a list")
    p.add_argument("--every", type=flags.number, default=60.0,
                   help="seconds between the starts of looped cycles (default 60)")
    p.set_defaults(handler=cmd_tick)


def cmd_tick(conn, args):
    if not 0 < args.seconds <= 3600:
        raise InvalidInput("invalid --seconds: expected a number from 0 to 3600")
    if not 1 <= args.cycles <= 100000:
        raise InvalidInput("invalid --cycles: expected an integer from 1 to 100000")
    if not 0 <= args.every <= 86400:
        raise InvalidInput("invalid --every: expected a number of seconds from 0 to 86400")
    if args.cycles == 1:
        return tick.run(conn, dry_run=args.dry_run, seconds=args.seconds)
    # a loop shares one Words: page words are re-read at most five minutes stale
    words = Words()
    reports = []
    for cycle in range(args.cycles):
        started = time.monotonic()
        reports.append(tick.run(conn, dry_run=args.dry_run, seconds=args.seconds, words=words))
        if cycle + 1 < args.cycles:
            time.sleep(max(0.0, args.every - (time.monotonic() - started)))
    return reports


def add_explain(sub):
    p = make_parser(sub, "explain",
                    "mood_poller.py explain infra re")
    p.add_argument("mood")
    p.add_argument("agent")
    p.set_defaults(handler=cmd_explain)


def cmd_explain(conn, args):
    return tick.explain(conn, args.mood, args.agent)


COMMANDS = {"tick": add_tick, "explain": add_explain}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "tick": "{agents_in_moods budget deferred dry_run holds moods now raced screens waiting wakes}"
            " | --cycles [{agents_in_moods budget deferred dry_run holds moods now raced screens waiting wakes}]",
    "explain": "{action agent budget considers_last_hour_in_mood cursors dials mood now posts wakes_last_hour why ?due"
               " ?screen ?screen_verdict_builtin ?tools ?wake}",
}
