"""The show command: show."""

from mindos.views import show
from mindos.cli import flags, make_parser


def add_show(sub):
    p = make_parser(sub, "show",
                    "autopilot.py show t-1a2b3c4d --limit 20")
    p.add_argument("task_id", help="task id")
    flags.limit(p, show.SHOW_AUDIT_LIMIT,
                f"at most this many audit entries, the newest (default {show.SHOW_AUDIT_LIMIT})")
    p.set_defaults(handler=cmd_show)


def cmd_show(conn, args):
    from mindos.autonomy import grants  # lazy: the continuation grant's section, passed down

    return show.show(conn, args.task_id, limit=args.limit, sections=(grants.show_section,))


COMMANDS = {
    "show": add_show,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "show": "{audit audit_total audit_truncated corrections dependencies dependents grant handoff progress receipts task}",
}
