"""Harness hook commands: session-start and stop-gate, which read the harness's event on stdin.

Neither is an MCP tool (``mindos.mcp.tools.NEVER``): over MCP, stdin is the protocol stream.
"""

from mindos.cli import flags, make_parser
from mindos.harness import hooks


def read_hook_input():
    """The harness's event JSON from stdin (at most MAX_INPUT_BYTES), parsed."""
    import sys  # lazy: only hook calls read stdin

    stream = getattr(sys.stdin, "buffer", sys.stdin) if sys.stdin is not None else None
    try:
        raw = stream.read(hooks.MAX_INPUT_BYTES + 1) if stream is not None else ""
    except OSError as exc:  # a closed or unreadable stdin: say so, not "cannot write"
        from mindos.errors import InvalidInput  # lazy: the refusal only

        raise InvalidInput(f"cannot read the harness's event on stdin ({exc.strerror or exc})") from None
    return hooks.parse_input(raw)


def add_session_start(sub):
    from mindos.context import prime  # lazy: the defaults only

    p = make_parser(sub, "session-start", "autopilot.py session-start --hook claude < session-start-event.json")
    p.add_argument("--hook", required=True, choices=sorted(hooks.HARNESS_AGENTS),
                   help="the harness whose SessionStart event arrives on stdin (JSON: session_id, cwd, source)")
    p.add_argument("--agent", help="the agent the session speaks as (default: claude-code-<first 8 of the session id>)")
    flags.project(p, help="only this project (default: the nearest .mindos-project file above cwd, else"
                                     " the repository's directory name when the ledger has that project)")
    p.add_argument("--budget", type=flags.integer, default=prime.DEFAULT_BUDGET,
                   help=f"character budget of the pack (default {prime.DEFAULT_BUDGET}, at least {prime.MIN_BUDGET})")
    p.add_argument("--seconds", type=flags.number, default=prime.DEFAULT_SECONDS,
                   help="the whole call's time bound, even while another process holds the write lock (the audit"
                        f" event is then deferred to the next write; default {prime.DEFAULT_SECONDS:g})")
    p.add_argument("--format", choices=prime.FORMATS, default="text",
                   help="text (what the hook injects; default) or json (adds scope: agent, project and their sources)")
    p.set_defaults(handler=cmd_session_start)


def cmd_session_start(conn, args):
    hooks.session_agent({}, args.hook, args.agent)  # a bad --agent is refused before stdin is read
    return hooks.session_start(conn, read_hook_input(), args.hook, agent=args.agent, project=args.project,
                               budget=args.budget, seconds=args.seconds, fmt=args.format)


def add_stop_gate(sub):
    p = make_parser(sub, "stop-gate", "autopilot.py stop-gate --hook claude < stop-event.json")
    p.add_argument("--hook", required=True, choices=sorted(hooks.HARNESS_AGENTS),
                   help="the harness whose Stop event arrives on stdin (JSON: session_id, stop_hook_active)")
    p.add_argument("--agent", help="the agent the session speaks as (default: claude-code-<session>)")
    p.add_argument("--seconds", type=flags.number, default=hooks.STOP_SECONDS,
                   help=f"longest wait for the write lock to audit a block (default {hooks.STOP_SECONDS:g});"
                        " past it the event is deferred to the next write")
    p.set_defaults(handler=cmd_stop_gate)


def cmd_stop_gate(conn, args):
    hooks.session_agent({}, args.hook, args.agent)  # a bad --agent is refused before stdin is read
    return hooks.stop_gate(conn, read_hook_input(), args.hook, agent=args.agent, seconds=args.seconds)


COMMANDS = {
    "session-start": add_session_start,
    "stop-gate": add_stop_gate,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "session-start": "text | --format=json {agent digest pack_format scope truncated used_chars"
                     " ?audit_deferred ?budget ?constraints ?constraints_total ?degraded ?held ?held_recall_digest"
                     " ?held_task_id ?inbox ?inbox_total ?leases ?leases_total ?next ?project ?projects"
                     " ?sections ?sections_skipped}",
    "stop-gate": "{?decision ?reason}",
}
