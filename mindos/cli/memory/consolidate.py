"""Memory consolidation: consolidate."""


from mindos.cli import flags, make_parser
from mindos.memory import consolidate


def add_consolidate(sub):
    p = make_parser(sub, "consolidate",
                    "ops.py consolidate --task t-1a2b3c4d --threshold 0.7 --dry-run")
    p.add_argument("--task", dest="task_id", help="only this task (default: fleet-wide)")
    p.add_argument("--threshold", type=flags.number,
                   help="token-Jaccard similarity to merge at (default AUTOPILOT_NEAR_DUP_THRESHOLD or 0.8)")
    flags.dry_run(p, "show the clusters without changing anything")
    p.set_defaults(handler=cmd_consolidate)


def cmd_consolidate(conn, args):
    return consolidate.consolidate(conn, task_id=args.task_id, threshold=args.threshold, dry_run=args.dry_run)


COMMANDS = {
    "consolidate": add_consolidate,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "consolidate": "{clusters clusters_total dry_run notes_consolidated tasks_scanned threshold}",
}
