"""Crash leftovers: receipts-sweep."""

from mindos.cli import make_parser
from mindos.recovery import receipt_sweep


def add_receipts_sweep(sub):
    p = make_parser(sub, "receipts-sweep", "ops.py receipts-sweep --apply")
    p.add_argument("--apply", action="store_true",
                   help="adopt complete orphans whose task exists, quarantine the rest (default: dry run)")
    p.set_defaults(handler=cmd_receipts_sweep)


def cmd_receipts_sweep(conn, args):
    return receipt_sweep.sweep(conn, apply=args.apply)


COMMANDS = {
    "receipts-sweep": add_receipts_sweep,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "receipts-sweep": "{adopt adopted apply quarantine quarantined}",
}
