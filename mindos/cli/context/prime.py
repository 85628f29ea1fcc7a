"""The session-start command: prime."""

from mindos.context import prime
from mindos.cli import make_parser
from mindos.errors import InvalidInput


def add_prime(sub):
    p = make_parser(sub, "prime",
                    "autopilot.py prime --agent claude-code --project Trove --budget 4000 --format text")
    p.add_argument("--agent", help="the agent starting a session (required unless --hook names the harness,"
                                   " which then derives it from the session: claude-code-<session>)")
    p.add_argument("--project", help="only this project (default: the projects of your leases and inbox)")
    p.add_argument("--budget", type=int, default=prime.DEFAULT_BUDGET,
                   help=f"character budget of the pack; the text form stays within this many bytes"
                        f" (default {prime.DEFAULT_BUDGET}, at least {prime.MIN_BUDGET})")
    p.add_argument("--seconds", type=float, default=prime.DEFAULT_SECONDS,
                   help=f"time budget: past it the pack degrades to the sections built so far"
                        f" (default {prime.DEFAULT_SECONDS:g})")
    p.add_argument("--format", choices=prime.FORMATS, default="text",
                   help="text (what a session-start hook injects; default) or json")
    p.add_argument("--hook", choices=("claude",),
                   help="run as the harness's session-start hook: read its event JSON on stdin (session_id, cwd,"
                        " source) for the agent and, without --project, the project (.mindos-project file, else"
                        " the repository's name)")
    p.set_defaults(handler=cmd_prime)


def cmd_prime(conn, args):
    if args.hook:
        from mindos.cli.mcp.hooks import read_hook_input  # lazy: only hook calls read stdin
        from mindos.mcp import hooks  # lazy: as above

        hooks.session_agent({}, args.hook, args.agent)  # a bad --agent is refused before stdin is read
        return hooks.session_start(conn, read_hook_input(), args.hook, agent=args.agent, project=args.project,
                                   budget=args.budget, seconds=args.seconds, fmt=args.format)
    if not args.agent:
        raise InvalidInput("prime needs --agent (or --hook claude, which reads the session from stdin)")
    return prime.prime(conn, args.agent, project=args.project, budget=args.budget, seconds=args.seconds,
                       fmt=args.format)


COMMANDS = {
    "prime": add_prime,
}
