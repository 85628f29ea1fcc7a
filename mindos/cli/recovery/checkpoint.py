"""Audit checkpoints: checkpoint, checkpoint-check."""

from mindos.cli import flags, make_parser
from mindos.recovery import checkpoint


def add_checkpoint(sub):
    p = make_parser(sub, "checkpoint", "ops.py checkpoint --out backups/checkpoint-manual.json")
    p.add_argument("--out", help="new file to write (default <home>/backups/checkpoint-<time>-<event id>.json)")
    flags.force_out(p)
    p.set_defaults(handler=cmd_checkpoint)


def cmd_checkpoint(conn, args):
    return checkpoint.create(conn, out=args.out, force=args.force)


def add_checkpoint_check(sub):
    p = make_parser(sub, "checkpoint-check", "ops.py checkpoint-check backups/checkpoint-20260821T090000Z-42.json")
    p.add_argument("file", help="the checkpoint file")
    p.set_defaults(handler=cmd_checkpoint_check)


def cmd_checkpoint_check(conn, args):
    report = checkpoint.check(conn, args.file)
    return report, (0 if report["ok"] else 1)


COMMANDS = {
    "checkpoint": add_checkpoint,
    "checkpoint-check": add_checkpoint_check,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "checkpoint": "{created_at event_count file_sha256 head_hash last_event_id path}",
    "checkpoint-check": "{checkpoint live ok path problems}",
}
