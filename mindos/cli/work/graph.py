"""Dependency graph commands: dep, dep-remove, blocked-by, impact, critical-path, plan."""

from mindos.work import graph
from mindos.cli import flags, make_parser


def add_dep(sub):
    p = make_parser(sub, "dep",
                    "autopilot.py dep t-deploy t-build")
    p.add_argument("task_id", metavar="task", help="the dependent task (must exist)")
    p.add_argument("prereq", metavar="prereq", help="the prerequisite (may not exist yet: reported under missing)")
    p.set_defaults(handler=cmd_dep)


def cmd_dep(conn, args):
    return graph.add_dependency(conn, args.task_id, args.prereq)


def add_dep_remove(sub):
    p = make_parser(sub, "dep-remove",
                    "autopilot.py dep-remove t-deploy t-build")
    p.add_argument("task_id", metavar="task", help="the dependent task")
    p.add_argument("prereq", metavar="prereq", help="the prerequisite to drop")
    p.set_defaults(handler=cmd_dep_remove)


def cmd_dep_remove(conn, args):
    return graph.remove_dependency(conn, args.task_id, args.prereq)


def add_blocked_by(sub):
    p = make_parser(sub, "blocked-by",
                    "autopilot.py blocked-by t-deploy")
    p.add_argument("task_id", metavar="task", help="task id")
    p.set_defaults(handler=cmd_blocked_by)


def cmd_blocked_by(conn, args):
    return graph.blocked_by(conn, args.task_id)


def add_impact(sub):
    p = make_parser(sub, "impact",
                    "autopilot.py impact t-build")
    p.add_argument("task_id", metavar="task", help="task id (or a missing prerequisite id)")
    p.set_defaults(handler=cmd_impact)


def cmd_impact(conn, args):
    return graph.impact(conn, args.task_id)


def add_critical_path(sub):
    p = make_parser(sub, "critical-path",
                    "autopilot.py critical-path --project Trove")
    flags.project(p, help="only this project's open tasks (other prerequisites count as blockers)")
    p.add_argument("--tag", help="only open tasks carrying this tag")
    p.set_defaults(handler=cmd_critical_path)


def cmd_critical_path(conn, args):
    return graph.critical_path(conn, project=args.project, tag=args.tag)


def add_plan(sub):
    p = make_parser(sub, "plan",
                    "autopilot.py plan --project Trove --tag autopilot-safe")
    flags.project(p, help="only this project's open tasks (other prerequisites are unschedulable here)")
    p.add_argument("--tag", help="only open tasks carrying this tag")
    p.set_defaults(handler=cmd_plan)


def cmd_plan(conn, args):
    return graph.plan(conn, project=args.project, tag=args.tag)


COMMANDS = {
    "dep": add_dep,
    "dep-remove": add_dep_remove,
    "blocked-by": add_blocked_by,
    "impact": add_impact,
    "critical-path": add_critical_path,
    "plan": add_plan,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "dep": "{added already_present blockers depends_on missing missing_dependencies task_id}",
    "dep-remove": "{blockers depends_on removed task_id}",
    "blocked-by": "{blocked blockers status task_id unsatisfied}",
    "impact": "{by_status dependents impacted open status task_id}",
    "critical-path": "{by_status length open_tasks path}",
    "plan": "{open_tasks scheduled_tasks unschedulable waves waves_total}",
}
