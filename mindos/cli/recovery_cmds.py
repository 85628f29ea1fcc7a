"""Operator commands: recover, escalate, approval, unverified-completions, policy."""

from mindos.cli import make_parser


def add_recover(sub):
    p = make_parser(sub, "recover", "Requeue stale leases under backoff; fail tasks past the retry budget.",
                    "ops.py recover --max-retries 3 --backoff-base 60 --backoff-cap 3600 --dry-run")
    p.add_argument("--dry-run", action="store_true", help="report would_recover / would_fail; change nothing")
    p.add_argument("--max-retries", type=int, default=3, help="retry budget per task (default 3)")
    p.add_argument("--backoff-base", type=int, default=60, help="cooldown base seconds (default 60; 0 disables)")
    p.add_argument("--backoff-cap", type=int, default=3600, help="cooldown cap seconds (default 3600)")
    p.set_defaults(handler=cmd_recover)


def cmd_recover(conn, args):
    from mindos import recovery

    return recovery.recover(conn, dry_run=args.dry_run, max_retries=args.max_retries,
                            backoff_base=args.backoff_base, backoff_cap=args.backoff_cap)


def add_escalate(sub):
    p = make_parser(sub, "escalate", "Bump every overdue non-terminal task one priority level (SLA sweep).",
                    "ops.py escalate --dry-run")
    p.add_argument("--dry-run", action="store_true", help="preview the bumps; change nothing")
    p.set_defaults(handler=cmd_escalate)


def cmd_escalate(conn, args):
    from mindos import recovery

    return recovery.escalate(conn, dry_run=args.dry_run)


def add_approval(sub):
    p = make_parser(sub, "approval", "Record a human approval as a hash-sealed approval receipt.",
                    "ops.py approval approve t-1a2b3c4d --by leo")
    p.add_argument("action", choices=["approve"], help="approve")
    p.add_argument("task_id", help="task id")
    p.add_argument("--by", required=True, help="who approves")
    p.add_argument("--note", default="", help="what was approved (stored in the receipt)")
    p.set_defaults(handler=cmd_approval)


def cmd_approval(conn, args):
    from mindos import approvals

    return approvals.approve(conn, args.task_id, args.by, note=args.note)


def add_unverified_completions(sub):
    p = make_parser(sub, "unverified-completions",
                    "List completed tasks without evidence (no_receipts, evidence_receipt_missing); read-only.",
                    "ops.py unverified-completions")
    p.set_defaults(handler=cmd_unverified_completions)


def cmd_unverified_completions(conn, args):
    from mindos import approvals

    return approvals.unverified_completions(conn)


def add_policy(sub):
    p = make_parser(sub, "policy", "Report what a project's policy decides for an action (merge, deploy, dispatch).",
                    "ops.py policy Trove merge")
    p.add_argument("project", help="project name (reads <home>/policies/<project>.yaml)")
    p.add_argument("action", help="merge, deploy or dispatch (other actions require a user)")
    p.set_defaults(handler=cmd_policy, needs_db=False)


def cmd_policy(conn, args):
    from mindos import home, policies

    return policies.check(home.home_dir(), args.project, args.action)


COMMANDS = {
    "recover": add_recover,
    "escalate": add_escalate,
    "approval": add_approval,
    "unverified-completions": add_unverified_completions,
    "policy": add_policy,
}
