"""The show command: show."""

from mindos.views import show
from mindos.cli import make_parser


def add_show(sub):
    p = make_parser(sub, "show",
                    "autopilot.py show t-1a2b3c4d")
    p.add_argument("task_id", help="task id")
    p.set_defaults(handler=cmd_show)


def cmd_show(conn, args):
    return show.show(conn, args.task_id)


COMMANDS = {
    "show": add_show,
}
