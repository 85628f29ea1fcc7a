"""Harness hook commands: stop-gate (prime --hook lives with prime)."""

from mindos.cli import make_parser
from mindos.mcp import hooks


def read_hook_input():
    """The harness's event JSON from stdin (at most MAX_INPUT_BYTES), parsed."""
    import sys  # lazy: only hook calls read stdin

    stream = getattr(sys.stdin, "buffer", sys.stdin) if sys.stdin is not None else None
    raw = stream.read(hooks.MAX_INPUT_BYTES + 1) if stream is not None else ""
    return hooks.parse_input(raw)


def add_stop_gate(sub):
    p = make_parser(sub, "stop-gate", "autopilot.py stop-gate --hook claude < stop-event.json")
    p.add_argument("--hook", required=True, choices=sorted(hooks.HARNESS_AGENTS),
                   help="the harness whose Stop event arrives on stdin (JSON: session_id, stop_hook_active)")
    p.add_argument("--agent", help="the agent the session speaks as (default: claude-code-<session>)")
    p.add_argument("--seconds", type=float, default=hooks.STOP_SECONDS,
                   help=f"longest wait for the write lock to audit a block (default {hooks.STOP_SECONDS:g});"
                        " past it the event is deferred to the next write")
    p.set_defaults(handler=cmd_stop_gate)


def cmd_stop_gate(conn, args):
    hooks.session_agent({}, args.hook, args.agent)  # a bad --agent is refused before stdin is read
    return hooks.stop_gate(conn, read_hook_input(), args.hook, agent=args.agent, seconds=args.seconds)


COMMANDS = {
    "stop-gate": add_stop_gate,
}
