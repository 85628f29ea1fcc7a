"""Tag commands: tag, untag."""

from mindos.work import tags
from mindos.cli import make_parser


def add_tag(sub):
    p = make_parser(sub, "tag",
                    "autopilot.py tag t-1a2b3c4d --tag autopilot-safe --tag client:trove")
    p.add_argument("task_id", help="task id")
    p.add_argument("--tag", action="append", required=True, help="tag to attach (repeatable; a-z 0-9 : _ . / -)")
    p.set_defaults(handler=cmd_tag)


def cmd_tag(conn, args):
    return tags.add(conn, args.task_id, args.tag)


def add_untag(sub):
    p = make_parser(sub, "untag",
                    "autopilot.py untag t-1a2b3c4d --tag client:trove")
    p.add_argument("task_id", help="task id")
    p.add_argument("--tag", action="append", required=True, help="tag to remove (repeatable)")
    p.set_defaults(handler=cmd_untag)


def cmd_untag(conn, args):
    return tags.remove(conn, args.task_id, args.tag)


COMMANDS = {
    "tag": add_tag,
    "untag": add_untag,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "tag": "{added already_present tags task_id}",
    "untag": "{removed tags task_id}",
}
