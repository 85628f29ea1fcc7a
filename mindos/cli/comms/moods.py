"""``mood_poller.py mood``: create, change, show and list Moods; add and remove members."""

from mindos.cli import Parser, make_parser
from mindos.comms import moods


def add_mood(sub):
    p = make_parser(sub, "mood",
                    "mood_poller.py mood create infra --title 'Infra room'")
    actions = p.add_subparsers(dest="mood_action", metavar="ACTION", parser_class=Parser, required=True)
    c = actions.add_parser("create", help="create a Mood")
    c.add_argument("slug")
    c.add_argument("--title", required=True)
    c.add_argument("--description", default="")
    c.add_argument("--instructions-page", default="", help="page holding this Mood's instructions")
    c.set_defaults(handler=cmd_create)
    u = actions.add_parser("update", help="change a Mood; --rename keeps the old slug as an alias")
    u.add_argument("slug")
    u.add_argument("--title")
    u.add_argument("--description")
    u.add_argument("--instructions-page")
    u.add_argument("--rename", metavar="NEW_SLUG")
    u.set_defaults(handler=cmd_update)
    s = actions.add_parser("show", help="one Mood with aliases, members and post count")
    s.add_argument("slug")
    s.set_defaults(handler=cmd_show)
    lst = actions.add_parser("list", help="every Mood")
    lst.set_defaults(handler=cmd_list)
    for name, handler, text in (("join", cmd_join, "make an agent a member"),
                                ("leave", cmd_leave, "remove an agent from the Mood")):
        j = actions.add_parser(name, help=text)
        j.add_argument("slug")
        j.add_argument("agent")
        j.set_defaults(handler=handler)


def cmd_create(conn, args):
    return moods.create(conn, args.slug, title=args.title, description=args.description,
                        instructions_page=args.instructions_page)


def cmd_update(conn, args):
    return moods.update(conn, args.slug, title=args.title, description=args.description,
                        instructions_page=args.instructions_page, new_slug=args.rename)


def cmd_show(conn, args):
    return moods.show(conn, args.slug)


def cmd_list(conn, args):
    return {"moods": moods.listing(conn)}


def cmd_join(conn, args):
    return moods.join(conn, args.slug, args.agent)


def cmd_leave(conn, args):
    return moods.leave(conn, args.slug, args.agent)


COMMANDS = {"mood": add_mood}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "mood": {
        "create": "{aliases created_at description instructions_page last_post_at members mood posts title}",
        "update": "{aliases created_at description instructions_page last_post_at members mood posts title}",
        "show": "{aliases created_at description instructions_page last_post_at members mood posts title}",
        "list": "{moods}",
        "join": "{agent member mood}",
        "leave": "{agent member mood}",
    },
}
