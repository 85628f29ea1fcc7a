"""Repair policies: repair-list, repair."""

from mindos.autonomy import repairs
from mindos.cli import flags, make_parser


def add_repair_list(sub):
    p = make_parser(sub, "repair-list",
                    "ops.py repair-list")
    p.set_defaults(handler=cmd_repair_list)


def cmd_repair_list(conn, args):
    return repairs.listing(conn)


def add_repair(sub):
    p = make_parser(sub, "repair",
                    "ops.py repair stale-lease-recover --dry-run")
    p.add_argument("name", help="repair policy name (see repair-list)")
    flags.dry_run(p, "run the command's own dry run; change nothing")
    p.add_argument("--finding-hash", metavar="H",
                   help="repair only the finding with this digest (from ops.py sense); exit 1 when no current"
                        " finding of the policy's kind has it")
    p.set_defaults(handler=cmd_repair)


def cmd_repair(conn, args):
    record = repairs.run(conn, args.name, dry_run=args.dry_run, finding_hash=args.finding_hash)
    return record if record["ok"] else (record, 1)


COMMANDS = {
    "repair-list": add_repair_list,
    "repair": add_repair,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "repair-list": "{eligible home_dir ineligible shipped_dir}",
    "repair": "{changed command dry_run error findings ok repair result skipped tier}",
}
