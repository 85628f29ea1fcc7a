"""The context command: context."""

from mindos.context import pack, params
from mindos.cli import flags, make_parser


def add_context(sub):
    p = make_parser(sub, "context",
                    "autopilot.py context t-1a2b3c4d --budget 4000 --related 5 --related-scope project")
    p.add_argument("task_id", help="task id")
    p.add_argument("--budget", type=flags.integer, default=params.DEFAULT_BUDGET,
                   help=f"character budget for the packed items (default {params.DEFAULT_BUDGET})")
    p.add_argument("--related", type=flags.integer, metavar="N",
                   help=f"also pack up to N live notes of other tasks matching this task's text (0-{params.MAX_RELATED})")
    p.add_argument("--related-scope", choices=params.RELATED_SCOPES, default="project",
                   help="where related notes come from: this task's project (default) or all projects")
    from mindos.cli.context import recall as recall_cli  # lazy: the opt-in section flags

    recall_cli.add_section_flags(p)
    p.set_defaults(handler=cmd_context)


def cmd_context(conn, args):
    from mindos.cli.context import recall as recall_cli  # lazy: shared flag plumbing

    values = recall_cli.params_from(args)
    if not params.uses_extra_sections(values):  # the legacy pack: the sections' engine stays unloaded
        return pack.pack_context(conn, args.task_id, budget=values["budget"], related=values["related"],
                                 related_scope=values["related_scope"])
    from mindos.context import recall  # lazy: the opt-in sections live with recall

    return recall.pack(conn, args.task_id, values)


COMMANDS = {
    "context": add_context,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "context": "{pack_format task_id truncated used_chars ?budget ?dependencies ?dependencies_packed ?sections"
               " ?dependencies_total ?handoff ?handoff_packed ?notes ?notes_dropped ?notes_expired_excluded"
               " ?notes_expired_pinned_packed ?notes_packed ?notes_pinned_packed ?notes_total_live ?task ...}",
}
