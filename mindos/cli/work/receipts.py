"""The receipt commands: receipt, run-receipt."""

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


def add_run_receipt(sub):
    p = make_parser(sub, "run-receipt",
                    "autopilot.py run-receipt t-1a2b3c4d --harness claude-code --model claude-opus-4-5"
                    " --session s-42 --workspace /src/trove --outcome ok --capability shell")
    p.add_argument("task_id", help="task id")
    p.add_argument("--harness", required=True, help="the agent harness that ran (e.g. claude-code, codex, hermes)")
    p.add_argument("--model", required=True, help="the model it ran with")
    p.add_argument("--session", required=True, help="the harness's session id")
    p.add_argument("--workspace", required=True, help="where it ran (a path or workspace name)")
    p.add_argument("--outcome", required=True, choices=receipts.RUN_OUTCOMES,
                   help="how the run ended; the receipt kind is run for ok, run:<outcome> otherwise")
    p.add_argument("--timeout-seconds", type=flags.integer, help="the run's time limit in seconds")
    p.add_argument("--capability", action="append", default=[], metavar="CAPABILITY",
                   help="a capability the run had, e.g. shell, network (repeatable; a-z 0-9 : _ . / -)")
    flags.request_id(p, actor="session")
    p.set_defaults(handler=cmd_run_receipt)


def cmd_run_receipt(conn, args):
    return receipts.add_run(conn, args.task_id, harness=args.harness, model=args.model, session=args.session,
                            workspace=args.workspace, outcome=args.outcome, timeout_seconds=args.timeout_seconds,
                            capabilities=args.capability)


COMMANDS = {
    "receipt": add_receipt,
    "run-receipt": add_run_receipt,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "receipt": "{bytes created_at file file_hash kind path receipt_id stored_path task_id}",
    "run-receipt": "{bytes created_at deduplicated file file_hash kind path receipt_id run stored_path task_id"
                   " ?replayed}",
}
