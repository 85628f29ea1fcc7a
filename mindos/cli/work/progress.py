"""Stalled-lease escalation: escalate-stalled."""


from mindos.cli import flags, make_parser
from mindos.work import progress


def add_escalate_stalled(sub):
    p = make_parser(sub, "escalate-stalled",
                    "ops.py escalate-stalled --dry-run")
    flags.dry_run(p, "list would_escalate; change nothing")
    p.set_defaults(handler=cmd_escalate_stalled)


def cmd_escalate_stalled(conn, args):
    return progress.escalate(conn, dry_run=args.dry_run)


COMMANDS = {
    "escalate-stalled": add_escalate_stalled,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "escalate-stalled": "{already_escalated dry_run escalated skipped would_escalate}",
}
