"""Approvals and unverified completions: approval, unverified-completions."""


from mindos.cli import make_parser
from mindos.work import approvals


def add_approval(sub):
    p = make_parser(sub, "approval",
                    'ops.py approval approve t-1a2b3c4d --by leo --reason "staging soak passed"')
    p.add_argument("action", choices=["approve"], help="approve")
    p.add_argument("task_id", help="task id")
    p.add_argument("--by", required=True, help="who approves")
    p.add_argument("--note", default="", help="what was approved (stored in the receipt)")
    p.add_argument("--reason", help="why it was approved (sealed in the receipt, carried by the audit event; guarded)")
    p.set_defaults(handler=cmd_approval)


def cmd_approval(conn, args):
    return approvals.approve(conn, args.task_id, args.by, note=args.note, reason=args.reason)


def add_unverified_completions(sub):
    p = make_parser(sub, "unverified-completions",
                    "ops.py unverified-completions")
    p.set_defaults(handler=cmd_unverified_completions)


def cmd_unverified_completions(conn, args):
    return approvals.unverified_completions(conn)


COMMANDS = {
    "approval": add_approval,
    "unverified-completions": add_unverified_completions,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "approval": "{approved_at approved_by file_hash receipt receipt_id task_id ?reason}",
    "unverified-completions": "{checked evidence_receipt_missing findings no_receipts}",
}
