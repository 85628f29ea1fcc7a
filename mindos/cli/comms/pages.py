"""``mood_poller.py page``: revisioned pages (wake texts, dials words, instruction layers) and trusted editors."""

from mindos.cli import Parser, flags, make_parser
from mindos.comms import pages


def add_page(sub):
    p = make_parser(sub, "page",
                    "mood_poller.py page set 'Moods/Wake texts' --editor re --file wake_texts_page.md")
    actions = p.add_subparsers(dest="page_action", metavar="ACTION", parser_class=Parser, required=True)
    s = actions.add_parser("set", help="save a new revision")
    s.add_argument("name")
    s.add_argument("--editor", required=True)
    source = s.add_mutually_exclusive_group(required=True)
    source.add_argument("--text")
    source.add_argument("--file", help="read the revision from a file")
    s.add_argument("--note", default="")
    s.set_defaults(handler=cmd_set)
    show = actions.add_parser("show", help="the revision in use (newest by a trusted editor), or --revision N")
    show.add_argument("name")
    show.add_argument("--revision", type=flags.integer)
    show.add_argument("--history", action="store_true", help="list every revision (without bodies)")
    show.set_defaults(handler=cmd_show)
    lst = actions.add_parser("list", help="every page and the editor list")
    lst.set_defaults(handler=cmd_list)
    for name, handler, text in (("trust", cmd_trust, "put an editor on the trusted list"),
                                ("untrust", cmd_untrust, "take an editor off the trusted list")):
        t = actions.add_parser(name, help=text)
        t.add_argument("editor")
        t.set_defaults(handler=handler)


def cmd_set(conn, args):
    text = args.text
    if args.file is not None:
        text = flags.read_text_file(args.file, "--file")
    return pages.save(conn, args.name, text, editor=args.editor, note=args.note)


def cmd_show(conn, args):
    return pages.show(conn, args.name, revision=args.revision, history=args.history)


def cmd_list(conn, args):
    return pages.listing(conn)


def cmd_trust(conn, args):
    return pages.set_trust(conn, args.editor, True)


def cmd_untrust(conn, args):
    return pages.set_trust(conn, args.editor, False)


COMMANDS = {"page": add_page}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "page": {
        "set": "{created_at editor page revision trusted}",
        "show": "{in_use page revision revisions ?history}",
        "list": "{editors pages}",
        "trust": "{editor trusted updated_at}",
        "untrust": "{editor trusted updated_at}",
    },
}
