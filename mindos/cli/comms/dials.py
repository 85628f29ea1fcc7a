"""``mood_poller.py set``: the dials, per Mood+agent, Mood, agent or globally."""

from mindos.cli import make_parser
from mindos.comms import dials
from mindos.comms.agents import COMMAND_FORMAT
from mindos.errors import InvalidInput


def add_set(sub):
    p = make_parser(sub, "set",
                    "mood_poller.py set listening mentions --mood infra --agent re --by skyler --note 'busy week'")
    p.add_argument("dial", help="listening, discretion, verbosity, grace, max_wakes_per_hour, consider_after, "
                                "idle_after, catch_up_tokens, full_tools_for, wake_timeout, max_considers_per_hour, "
                                "screen_command, fresh_command, daily_budget_usd")
    p.add_argument("value", nargs="?",
                   help="the value (omit with --clear). screen_command and fresh_command take " + COMMAND_FORMAT
                        + "; anything else that cannot be parsed is refused")
    p.add_argument("--mood")
    p.add_argument("--agent")
    p.add_argument("--by", default="", help="who changed it (shown in the agent's next wake)")
    p.add_argument("--note", default="", help="why (shown in the agent's next wake)")
    p.add_argument("--clear", action="store_true", help="remove the setting at this scope")
    p.set_defaults(handler=cmd_set)


def cmd_set(conn, args):
    if args.clear == (args.value is not None):
        raise InvalidInput("give a value, or --clear without one")
    return dials.set_dial(conn, args.dial, None if args.clear else args.value, mood=args.mood, agent=args.agent,
                          by=args.by, note=args.note)


COMMANDS = {"set": add_set}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "set": "{agent dial effective mood scope value}",
}
