"""Archival: archive, archive-check, archive-restore."""

from mindos.cli import flags, make_parser
from mindos.recovery import archive


def add_archive(sub):
    p = make_parser(sub, "archive", 'ops.py archive --before "2026-09-01T00:00:00Z" --dry-run')
    p.add_argument("--before", required=True, help="archive terminal tasks last updated at or before this instant")
    flags.dry_run(p, "report the candidate ids and per-table counts; write and delete nothing")
    p.add_argument("--out", help="new file to write (a streamed tar; default <home>/backups/archive-<time>.tar)")
    flags.force_out(p)
    p.set_defaults(handler=cmd_archive)


def cmd_archive(conn, args):
    return archive.archive(conn, args.before, dry_run=args.dry_run, out=args.out, force=args.force)


def add_archive_check(sub):
    p = make_parser(sub, "archive-check", "ops.py archive-check backups/archive-20260901T000000Z.tar")
    p.add_argument("file", help="the archive file (streamed .tar, or an older sealed .json)")
    p.set_defaults(handler=cmd_archive_check, needs_db=False)


def cmd_archive_check(conn, args):
    return archive.check(args.file, flags.trust_home())


def add_archive_restore(sub):
    p = make_parser(sub, "archive-restore", "ops.py archive-restore backups/archive-20260901T000000Z.tar --force")
    p.add_argument("file", help="the archive file (verified before anything is touched)")
    p.add_argument("--force", action="store_true", help="replace tasks whose ids already exist")
    flags.trust_unsigned(p)
    p.set_defaults(handler=cmd_archive_restore)


def cmd_archive_restore(conn, args):
    return archive.restore(conn, args.file, force=args.force, trust_unsigned=args.trust_unsigned)


COMMANDS = {
    "archive": add_archive,
    "archive-check": add_archive_check,
    "archive-restore": add_archive_restore,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "archive": "{before counts dry_run task_ids ?file_sha256 ?path ?receipt_files_refused}",
    "archive-check": "{before counts created_at format key_id ok path task_ids trust}",
    "archive-restore": "{counts key_id path reattached receipt_files_written replaced restored trust}",
}
