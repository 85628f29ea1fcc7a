"""Stale-lease sweeps: recover, escalate."""


from mindos.cli import flags, make_parser
from mindos.work import sweeps


def add_recover(sub):
    p = make_parser(sub, "recover",
                    "ops.py recover --max-retries 3 --backoff-base 60 --backoff-cap 3600 --dry-run")
    flags.dry_run(p, "report would_recover / would_fail; change nothing")
    p.add_argument("--max-retries", type=flags.integer, default=3, help="retry budget per task (default 3)")
    p.add_argument("--backoff-base", type=flags.integer, default=60, help="cooldown base seconds (default 60; 0 disables)")
    p.add_argument("--backoff-cap", type=flags.integer, default=3600, help="cooldown cap seconds (default 3600)")
    p.set_defaults(handler=cmd_recover)


def cmd_recover(conn, args):
    return sweeps.recover(conn, dry_run=args.dry_run, max_retries=args.max_retries,
                            backoff_base=args.backoff_base, backoff_cap=args.backoff_cap)


def add_escalate(sub):
    p = make_parser(sub, "escalate",
                    "ops.py escalate --dry-run")
    flags.dry_run(p, "preview the bumps; change nothing")
    p.set_defaults(handler=cmd_escalate)


def cmd_escalate(conn, args):
    return sweeps.escalate(conn, dry_run=args.dry_run)


COMMANDS = {
    "recover": add_recover,
    "escalate": add_escalate,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "recover": "{backoff dry_run failed recovered skipped would_fail would_recover}",
    "escalate": "{already_p0 dry_run escalated skipped would_escalate}",
}
