"""Snapshots: snapshot, snapshot-check, snapshot-restore."""

from mindos.cli import flags, make_parser
from mindos.recovery import snapshot


def add_snapshot(sub):
    p = make_parser(sub, "snapshot", "ops.py snapshot --out /backups/mindos-snapshot.tar")
    p.add_argument("--out", help="new file to write (default <home>/backups/snapshot-<time>.tar)")
    flags.force_out(p)
    p.set_defaults(handler=cmd_snapshot)


def cmd_snapshot(conn, args):
    return snapshot.create(conn, out=args.out, force=args.force)


def add_snapshot_check(sub):
    p = make_parser(sub, "snapshot-check", "ops.py snapshot-check backups/snapshot-20260821T090000Z.tar")
    p.add_argument("file", help="the snapshot file")
    p.set_defaults(handler=cmd_snapshot_check, needs_db=False)


def cmd_snapshot_check(conn, args):
    return snapshot.check(args.file, flags.trust_home())


def add_snapshot_restore(sub):
    p = make_parser(sub, "snapshot-restore", "ops.py snapshot-restore backups/snapshot-20260821T090000Z.tar --force")
    p.add_argument("file", help="the snapshot file, either format (verified before anything is touched)")
    p.add_argument("--force", action="store_true", help="replace a non-empty database")
    flags.trust_unsigned(p)
    p.set_defaults(handler=cmd_snapshot_restore)


def cmd_snapshot_restore(conn, args):
    return snapshot.restore(conn, args.file, force=args.force, trust_unsigned=args.trust_unsigned)


COMMANDS = {
    "snapshot": add_snapshot,
    "snapshot-check": add_snapshot_check,
    "snapshot-restore": add_snapshot_restore,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "snapshot": "{audit checkpoint_pin counts created_at file_sha256 path receipt_files schema_version"
                " ?receipt_files_refused}",
    "snapshot-check": "{audit counts created_at format key_id ok path receipt_files schema_version trust}",
    "snapshot-restore": "{audit foreign_keys key_id path receipt_files_written replaced restored tables trust}",
}
