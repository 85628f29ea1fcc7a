"""Shared-memory operator commands: notes-expired, secret-scan, consolidate."""

from mindos.cli import make_parser


def add_notes_expired(sub):
    p = make_parser(sub, "notes-expired",
                    "List every expired live note fleet-wide with the action it needs (revive / supersede).",
                    "ops.py notes-expired")
    p.set_defaults(handler=cmd_notes_expired)


def cmd_notes_expired(conn, args):
    from mindos import notes

    return notes.expired(conn)


def add_secret_scan(sub):
    p = make_parser(sub, "secret-scan",
                    "Read-only sweep of live notes and handoffs for credential-shaped content "
                    "(kinds and row ids only; exit 1 when anything is found).",
                    "ops.py secret-scan --all")
    p.add_argument("--all", action="store_true", help="include superseded notes and handoffs")
    p.set_defaults(handler=cmd_secret_scan)


def cmd_secret_scan(conn, args):
    from mindos import secrets

    report = secrets.sweep(conn, include_all=args.all)
    return report, (1 if report["findings"] else 0)


def add_consolidate(sub):
    p = make_parser(sub, "consolidate",
                    "Merge near-identical live notes per task into one canonical note (history-preserving).",
                    "ops.py consolidate --task t-1a2b3c4d --threshold 0.7 --dry-run")
    p.add_argument("--task", dest="task_id", help="only this task (default: fleet-wide)")
    p.add_argument("--threshold", type=float,
                   help="token-Jaccard similarity to merge at (default AUTOPILOT_NEAR_DUP_THRESHOLD or 0.8)")
    p.add_argument("--dry-run", action="store_true", help="show the clusters without changing anything")
    p.set_defaults(handler=cmd_consolidate)


def cmd_consolidate(conn, args):
    from mindos import consolidate

    return consolidate.consolidate(conn, task_id=args.task_id, threshold=args.threshold, dry_run=args.dry_run)


COMMANDS = {
    "notes-expired": add_notes_expired,
    "secret-scan": add_secret_scan,
    "consolidate": add_consolidate,
}
