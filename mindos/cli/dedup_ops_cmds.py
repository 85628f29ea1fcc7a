"""Fleet task-deduplication sweep: dup-tasks."""

from mindos import dedup
from mindos.cli import make_parser


def add_dup_tasks(sub):
    p = make_parser(sub, "dup-tasks",
                    "Cluster open tasks that restate each other, per project (canonical = oldest),"
                    " with a suggested action; read-only.",
                    "ops.py dup-tasks --threshold 0.7 --dry-run")
    p.add_argument("--threshold", type=float,
                   help="minimum similarity in (0, 1] (default $AUTOPILOT_NEAR_DUP_THRESHOLD or 0.8)")
    p.add_argument("--dry-run", action="store_true", help="accepted for symmetry: the sweep never mutates")
    p.set_defaults(handler=cmd_dup_tasks)


def cmd_dup_tasks(conn, args):
    return dedup.dup_tasks(conn, threshold_value=args.threshold, dry_run=args.dry_run)


COMMANDS = {
    "dup-tasks": add_dup_tasks,
}
