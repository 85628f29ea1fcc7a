"""``mood_poller.py wakes / show-wake / bundle / budget``: the record of what was composed and why."""

from mindos.cli import flags, make_parser
from mindos.comms import budget, dials, wakes


def add_wakes(sub):
    p = make_parser(sub, "wakes",
                    "mood_poller.py wakes --mood infra --agent re --kind mention")
    p.add_argument("--mood")
    p.add_argument("--agent")
    p.add_argument("--kind", help="mention, consider, quiet, arrival, crosstalk")
    p.add_argument("--outcome", help="running, replied, silent, took, empty, failed, timeout, undeliverable, abandoned")
    p.add_argument("--since", help="ISO 8601 instant")
    flags.limit(p, default=50, help=None)
    p.add_argument("--duplicates", action="store_true",
                   help="instead: replies to a post another agent had taken, from wakes that began before the take")
    p.set_defaults(handler=cmd_wakes)


def cmd_wakes(conn, args):
    if args.duplicates:
        return wakes.duplicates(conn)
    return wakes.listing(conn, mood=args.mood, agent=args.agent, kind=args.kind, outcome=args.outcome,
                         since=args.since, limit=args.limit)


def add_show_wake(sub):
    p = make_parser(sub, "show-wake", "mood_poller.py show-wake 12")
    p.add_argument("wake_id", type=flags.integer)
    p.add_argument("--text", action="store_true", help="print only the wake's text")
    p.set_defaults(handler=cmd_show_wake)


def cmd_show_wake(conn, args):
    wake = wakes.show(conn, args.wake_id)
    return wake["text"] if args.text else wake


def add_bundle(sub):
    p = make_parser(sub, "bundle",
                    "mood_poller.py bundle b0123456789abcdef")
    p.add_argument("bundle_id")
    p.add_argument("--text", action="store_true", help="print only the bundle's text")
    p.set_defaults(handler=cmd_bundle)


def cmd_bundle(conn, args):
    found = wakes.bundle(conn, args.bundle_id)
    return found["text"] if args.text else found


def add_budget(sub):
    p = make_parser(sub, "budget",
                    "mood_poller.py budget")
    p.set_defaults(handler=cmd_budget)


def cmd_budget(conn, args):
    result = budget.summary(conn)
    result["daily_budget_usd"] = dials.Table(dials.load(conn)).get("daily_budget_usd", 0)
    return result


COMMANDS = {"wakes": add_wakes, "show-wake": add_show_wake, "bundle": add_bundle, "budget": add_budget}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "wakes": "{total_matching truncated wakes} | --duplicates {count duplicates within_seconds}",
    "show-wake": "{agent block bundle created_at detail finished_at fresh_failed id kind loop_guard mood outcome posts"
                 " reply_post text tokens tools usd warm why} | --text text",
    "bundle": "{agent bundle created_at layers text} | --text text",
    "budget": "{by_kind daily_budget_usd day exempt_usd spent_usd}",
}
