"""The nanny tick: nanny."""

from mindos.autonomy import nanny
from mindos.cli import flags, make_parser


def add_nanny(sub):
    p = make_parser(sub, "nanny",
                    "ops.py nanny --max-repairs 2")
    flags.dry_run(p, "plan the repairs (each command's own dry run) and report the state; change nothing")
    p.add_argument("--max-repairs", type=flags.integer, default=nanny.DEFAULT_MAX_REPAIRS,
                   help=f"repairs this tick may run (default {nanny.DEFAULT_MAX_REPAIRS}; 0 senses and reports only)")
    p.set_defaults(handler=cmd_nanny)


def cmd_nanny(conn, args):
    return nanny.tick(conn, dry_run=args.dry_run, max_repairs=args.max_repairs)


COMMANDS = {
    "nanny": add_nanny,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "nanny": "{active_leases because decisions dry_run findings index_upkeep lock max_repairs repairs"
             " skipped_repairs state sweep tick_at ?state_basis}",
}
