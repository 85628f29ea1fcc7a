"""The receipt command: receipt."""

from mindos.work import receipts
from mindos.cli import flags, make_parser


def add_receipt(sub):
    p = make_parser(sub, "receipt",
                    """autopilot.py receipt t-1a2b3c4d --kind verification --payload '{"tests":"pass","health":200}'""")
    p.add_argument("task_id", help="task id")
    p.add_argument("--kind", required=True, help="receipt kind, e.g. verification, ci, commit (a-z 0-9 : _ . / -)")
    flags.long_text(p, "payload", required=True, help="the evidence as a JSON value (at most 1 MiB)")
    flags.request_id(p)
    p.set_defaults(handler=cmd_receipt)


def cmd_receipt(conn, args):
    return receipts.add_json(conn, args.task_id, args.kind, args.payload)


COMMANDS = {
    "receipt": add_receipt,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "receipt": "{bytes created_at file file_hash kind path receipt_id stored_path task_id}",
}
