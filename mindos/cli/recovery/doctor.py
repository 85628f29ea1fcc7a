"""Health commands: doctor."""

from mindos.cli import make_parser
from mindos.recovery import doctor


def add_doctor(sub):
    p = make_parser(sub, "doctor", "ops.py doctor")
    p.add_argument("--quick", action="store_true",
                   help="check the database structure only (quick_check), not every index against its table")
    p.add_argument("--since-checkpoint", action="store_true",
                   help="verify the chain from the newest signed checkpoint and check only the receipts, index rows"
                        " and files changed since it (no integrity check); the full sweep without a usable"
                        " checkpoint")
    p.set_defaults(handler=cmd_doctor, needs_db=False)


def cmd_doctor(conn, args):
    report = doctor.run(full=not args.quick, since_checkpoint=args.since_checkpoint)
    return report, (0 if report["ok"] else 1)


COMMANDS = {
    "doctor": add_doctor,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "doctor": "{checks counts home notes ok problems problems_by_kind ?since}",
}
