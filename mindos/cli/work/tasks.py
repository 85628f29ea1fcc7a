"""Task registry commands: init, create, list, update."""

from mindos.work import tasks
from mindos.cli import flags, make_parser


def add_init(sub):
    p = make_parser(sub, "init", "autopilot.py init")
    p.set_defaults(handler=cmd_init, creates_home=True)


def cmd_init(conn, args):
    return tasks.init(conn)


def add_create(sub):
    p = make_parser(sub, "create",
                    'autopilot.py create --project Trove --title "Renew cert" --priority P1 --tag infra')
    flags.project(p, help="project the task belongs to", required=True)
    p.add_argument("--title", required=True, help="short title (non-empty)")
    p.add_argument("--description", default="", help="longer description")
    p.add_argument("--priority", default="P2", help="P0 (most urgent) .. P3; default P2")
    p.add_argument("--next-action", default="", help="the next concrete step")
    p.add_argument("--id", dest="task_id", help="explicit task id (default: generated t-xxxxxxxx)")
    p.add_argument("--depends-on", action="append", default=[], metavar="TASK", help="prerequisite (repeatable)")
    p.add_argument("--tag", action="append", default=[], help="capability/scope tag (repeatable)")
    p.add_argument("--due-at", help="deadline, any ISO 8601 form (naive = UTC)")
    p.add_argument("--not-before", help="keep out of dispatch until this ISO 8601 instant")
    p.add_argument("--requires-receipt", action="append", default=[], metavar="KIND",
                   help="receipt kind required before completion (repeatable)")
    flags.owner(p, "who owns the task (not a lease)", required=False, default="")
    flags.request_id(p, actor="owner")
    p.set_defaults(handler=cmd_create)


def cmd_create(conn, args):
    return tasks.create(
        conn, project=args.project, title=args.title, description=args.description, priority=args.priority,
        next_action=args.next_action, task_id=args.task_id, depends_on=args.depends_on, tags=args.tag,
        due_at=args.due_at, owner=args.owner, not_before=args.not_before, requires_receipts=args.requires_receipt,
    )


def add_list(sub):
    p = make_parser(sub, "list",
                    "autopilot.py list --status queued --project Trove --tag infra --limit 20")
    p.add_argument("--status", help="only tasks in this status")
    flags.project(p, help="only this project")
    p.add_argument("--tag", help="only tasks carrying this tag")
    p.add_argument("--overdue", action="store_true", help="only open tasks past their due_at")
    flags.limit(p, help="at most this many")
    p.set_defaults(handler=cmd_list)


def cmd_list(conn, args):
    return tasks.list_tasks(conn, status=args.status, project=args.project, tag=args.tag,
                            overdue=args.overdue, limit=args.limit)


def add_update(sub):
    p = make_parser(sub, "update",
                    'autopilot.py update t-1a2b3c4d --status waiting_for_user --next-action "Leo review"')
    p.add_argument("task_id", help="task id")
    p.add_argument("--status", help="new lifecycle status")
    p.add_argument("--title")
    p.add_argument("--description")
    flags.project(p, help=None)
    p.add_argument("--priority", help="P0..P3")
    p.add_argument("--next-action")
    p.add_argument("--due-at", help="ISO 8601 deadline; '' clears")
    p.add_argument("--not-before", help="ISO 8601 deferral; '' clears")
    p.add_argument("--worktree", help="worktree path (a seam); '' clears")
    p.add_argument("--branch", help="branch name (a seam); '' clears")
    p.add_argument("--pr-url", help="pull request URL; '' clears")
    p.add_argument("--requires-receipt", action="append", metavar="KIND",
                   help="set the required receipt kinds (repeatable; a single '' clears)")
    p.add_argument("--approved-by", help="who approved a ready_to_merge / ready_to_deploy promise")
    p.set_defaults(handler=cmd_update)


def cmd_update(conn, args):
    return tasks.update(
        conn, args.task_id, status=args.status, approved_by=args.approved_by, title=args.title,
        description=args.description, project=args.project, priority=args.priority, next_action=args.next_action,
        due_at=args.due_at, not_before=args.not_before, worktree=args.worktree, branch=args.branch,
        pr_url=args.pr_url, requires_receipts=args.requires_receipt,
    )


COMMANDS = {
    "init": add_init,
    "create": add_create,
    "list": add_list,
    "update": add_update,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "init": "{database fts5 home home_rule receipts_dir schema_version}",
    "create": "{@task depends_on ?similar_open_tasks}",
    "list": "[{@task}]",
    "update": "{@task}",
}
