"""The session-start command: prime."""

from mindos.context import prime
from mindos.cli import flags, make_parser


def add_prime(sub):
    p = make_parser(sub, "prime",
                    "autopilot.py prime --agent claude-code --project Trove --budget 4000 --format text")
    p.add_argument("--agent", required=True, help="the agent starting a session")
    flags.project(p, help="only this project (default: the projects of your leases and inbox)")
    p.add_argument("--budget", type=flags.integer, default=prime.DEFAULT_BUDGET,
                   help=f"character budget of the pack; the text form stays within this many bytes"
                        f" (default {prime.DEFAULT_BUDGET}, at least {prime.MIN_BUDGET})")
    p.add_argument("--seconds", type=flags.number, default=prime.DEFAULT_SECONDS,
                   help=f"time budget: past it the pack degrades to the sections built so far"
                        f" (default {prime.DEFAULT_SECONDS:g})")
    p.add_argument("--format", choices=prime.FORMATS, default="text",
                   help="text (what a session-start hook injects; default) or json")
    p.set_defaults(handler=cmd_prime)


def cmd_prime(conn, args):
    return prime.prime(conn, args.agent, project=args.project, budget=args.budget, seconds=args.seconds,
                       fmt=args.format)


COMMANDS = {
    "prime": add_prime,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "prime": "text | --format=json {agent digest pack_format truncated used_chars ?audit_deferred ?budget"
             " ?constraints ?constraints_total ?degraded ?held ?held_recall_digest ?held_task_id ?inbox ?inbox_total"
             " ?leases ?leases_total ?next ?project ?projects ?sections ?sections_skipped}",
}
