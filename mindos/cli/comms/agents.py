"""``mood_poller.py agent``: register and change the agents the poller wakes."""

from mindos.cli import Parser, make_parser
from mindos.comms import agents


def add_agent(sub):
    p = make_parser(sub, "agent",
                    "mood_poller.py agent create re --command 'claude -p' --alias magent-re")
    actions = p.add_subparsers(dest="agent_action", metavar="ACTION", parser_class=Parser, required=True)
    for name, handler, text in (("create", cmd_create, "register an agent"),
                                ("update", cmd_update, "change an agent; --rename keeps the old name as an alias")):
        a = actions.add_parser(name, help=text)
        a.add_argument("name")
        a.add_argument("--page", default=None if name == "update" else "", help="the agent page (a page name)")
        a.add_argument("--instructions", default=None if name == "update" else "", help="its own instructions")
        a.add_argument("--command", default=None if name == "update" else "",
                       help="delivery command line (run without a shell; the wake arrives on stdin)")
        a.add_argument("--alias", action="append", default=[], help="another name @mentions may use (repeatable)")
        if name == "update":
            a.add_argument("--rename", metavar="NEW_NAME")
        a.set_defaults(handler=handler)
    s = actions.add_parser("show", help="one agent")
    s.add_argument("name")
    s.set_defaults(handler=cmd_show)
    lst = actions.add_parser("list", help="every agent")
    lst.set_defaults(handler=cmd_list)


def cmd_create(conn, args):
    return agents.create(conn, args.name, page=args.page, instructions=args.instructions, command=args.command,
                         aliases=args.alias)


def cmd_update(conn, args):
    return agents.update(conn, args.name, page=args.page, instructions=args.instructions, command=args.command,
                         add_aliases=args.alias, new_name=args.rename)


def cmd_show(conn, args):
    return agents.show(conn, args.name)


def cmd_list(conn, args):
    return {"agents": agents.listing(conn)}


COMMANDS = {"agent": add_agent}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "agent": {
        "create": "{agent aliases command created_at instructions moods page updated_at}",
        "update": "{agent aliases command created_at instructions moods page updated_at}",
        "show": "{agent aliases command created_at instructions moods page updated_at}",
        "list": "{agents}",
    },
}
