"""The secret sweep: secret-scan."""


from mindos.cli import make_parser
from mindos.memory import secret_sweep


def add_secret_scan(sub):
    p = make_parser(sub, "secret-scan",
                    "ops.py secret-scan --all")
    p.add_argument("--all", action="store_true", help="include superseded notes and handoffs")
    p.set_defaults(handler=cmd_secret_scan)


def cmd_secret_scan(conn, args):
    report = secret_sweep.sweep(conn, include_all=args.all)
    return report, (1 if report["findings"] else 0)


COMMANDS = {
    "secret-scan": add_secret_scan,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "secret-scan": "{by_kind findings findings_total handoffs_scanned include_superseded notes_scanned"
                   " tasks_scanned}",
}
