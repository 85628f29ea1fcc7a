"""Task duplicate commands: similar, dup-tasks."""

from mindos.work import dedup
from mindos.cli import flags, make_parser


def add_similar(sub):
    p = make_parser(sub, "similar",
                    "autopilot.py similar t-1a2b3c4d --threshold 0.7")
    p.add_argument("task_id", help="task id")
    p.add_argument("--threshold", type=flags.number,
                   help="minimum similarity in (0, 1] (default $AUTOPILOT_NEAR_DUP_THRESHOLD or 0.8)")
    p.set_defaults(handler=cmd_similar)


def cmd_similar(conn, args):
    return dedup.similar(conn, args.task_id, threshold_value=args.threshold)


def add_dup_tasks(sub):
    p = make_parser(sub, "dup-tasks",
                    "ops.py dup-tasks --threshold 0.7")
    p.add_argument("--threshold", type=flags.number,
                   help="minimum similarity in (0, 1] (default $AUTOPILOT_NEAR_DUP_THRESHOLD or 0.8)")
    # deprecated and hidden: the sweep is always read-only, so a dry run would be the same call;
    # still accepted so scripts that pass it keep working
    flags.dry_run(p, None, hidden=True)
    p.set_defaults(handler=cmd_dup_tasks)


def cmd_dup_tasks(conn, args):
    return dedup.dup_tasks(conn, threshold_value=args.threshold, dry_run=args.dry_run)


COMMANDS = {
    "similar": add_similar,
    "dup-tasks": add_dup_tasks,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "similar": "{count project similar task_id threshold title}",
    "dup-tasks": "{clusters clusters_total dry_run duplicate_tasks open_tasks read_only threshold}",
}
