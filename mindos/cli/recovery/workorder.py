"""Portable work orders: export-task, import-task."""

from mindos.cli import flags, make_parser
from mindos.recovery import workorder


def add_export_task(sub):
    p = make_parser(sub, "export-task", "ops.py export-task t1 --out /tmp/t1.json")
    p.add_argument("task_id", help="the task to export")
    p.add_argument("--out", required=True, help="new file to write (sealed autopilot-workorder-v1, mode 0600)")
    flags.force_out(p)
    flags.secret(p, "text in the work order")
    p.set_defaults(handler=cmd_export_task)


def cmd_export_task(conn, args):
    return workorder.export_task(conn, args.task_id, out=args.out, redact=args.redact,
                                 allow_secret=args.allow_secret, force=args.force)


def add_import_task(sub):
    p = make_parser(sub, "import-task", "ops.py import-task /tmp/t1.json --dry-run")
    p.add_argument("file", help="the work order (its seal is verified before anything is touched)")
    flags.dry_run(p, "verify the seal and preview the merge; change nothing")
    p.add_argument("--force", action="store_true",
                   help="merge a changed export into an existing task (local rows kept; never bypasses the seal)")
    flags.secret(p, "text in the work order")
    flags.trust_unsigned(p)
    p.set_defaults(handler=cmd_import_task)


def cmd_import_task(conn, args):
    return workorder.import_task(conn, args.file, dry_run=args.dry_run, force=args.force, redact=args.redact,
                                 allow_secret=args.allow_secret, trust_unsigned=args.trust_unsigned)


COMMANDS = {
    "export-task": add_export_task,
    "import-task": add_import_task,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "export-task": "{content_digest counts file_sha256 path task_id ?receipt_files_refused ?secret_action"
                   " ?secret_kinds}",
    "import-task": "{content_digest created deduplicated dry_run inserted key_id lease_sanitized"
                   " receipt_files_written skipped_deps task_id trust}",
}
