"""Operator surface: processes."""

from mindos.autonomy import processes
from mindos.cli import make_parser


def add_processes(sub):
    p = make_parser(sub, "processes",
                    "ops.py processes")
    p.add_argument("--no-os", action="store_true", help="leave out the OS process list (lease table only)")
    p.set_defaults(handler=cmd_processes)


def cmd_processes(conn, args):
    return processes.report(conn, with_os=not args.no_os)


COMMANDS = {
    "processes": add_processes,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "processes": "{leases now os_processes owners}",
}
