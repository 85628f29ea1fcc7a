"""Handoff operator command: handoff-check (the read-only protocol lint)."""

from mindos import handoffs
from mindos.cli import make_parser


def add_handoff_check(sub):
    p = make_parser(sub, "handoff-check",
                    "Lint live handoffs against the handoff protocol (read-only; exit 1 on problems).",
                    "ops.py handoff-check --task t-1a2b3c4d --ack-sla-hours 24")
    p.add_argument("--task", help="only the live handoff of this task")
    p.add_argument("--ack-sla-hours", type=float, default=24.0,
                   help="hours an addressed handoff may stay unacknowledged (default 24)")
    p.set_defaults(handler=cmd_handoff_check)


def cmd_handoff_check(conn, args):
    report = handoffs.check(conn, task=args.task, ack_sla_hours=args.ack_sla_hours)
    return report, (0 if report["ok"] else 1)


COMMANDS = {
    "handoff-check": add_handoff_check,
}
