"""Context pack and task similarity commands: context, similar."""

from mindos import context
from mindos.cli import make_parser


def add_context(sub):
    p = make_parser(sub, "context",
                    "Pack a task's header, live handoff, unsatisfied deps and live notes (pinned first)"
                    " within a character budget; --related N adds matching notes of other tasks.",
                    "autopilot.py context t-1a2b3c4d --budget 4000 --related 5 --related-scope project")
    p.add_argument("task_id", help="task id")
    p.add_argument("--budget", type=int, default=context.DEFAULT_BUDGET,
                   help=f"character budget for the packed items (default {context.DEFAULT_BUDGET})")
    p.add_argument("--related", type=int, metavar="N",
                   help=f"also pack up to N live notes of other tasks matching this task's text (0-{context.MAX_RELATED})")
    p.add_argument("--related-scope", choices=context.RELATED_SCOPES, default="project",
                   help="where related notes come from: this task's project (default) or all projects")
    p.set_defaults(handler=cmd_context)


def cmd_context(conn, args):
    return context.pack_context(conn, args.task_id, budget=args.budget, related=args.related,
                                related_scope=args.related_scope)


def add_similar(sub):
    p = make_parser(sub, "similar",
                    "List open same-project tasks whose title+description restate this task"
                    " (token Jaccard >= threshold), most similar first.",
                    "autopilot.py similar t-1a2b3c4d --threshold 0.7")
    p.add_argument("task_id", help="task id")
    p.add_argument("--threshold", type=float,
                   help="minimum similarity in (0, 1] (default $AUTOPILOT_NEAR_DUP_THRESHOLD or 0.8)")
    p.set_defaults(handler=cmd_similar)


def cmd_similar(conn, args):
    from mindos import dedup  # only `similar` pays for it

    return dedup.similar(conn, args.task_id, threshold_value=args.threshold)


COMMANDS = {
    "context": add_context,
    "similar": add_similar,
}
