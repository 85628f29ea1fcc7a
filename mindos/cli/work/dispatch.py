"""Dispatch: next."""

from mindos.work import dispatch
from mindos.cli import flags, make_parser


def add_next(sub):
    p = make_parser(
        sub, "next",
        "autopilot.py next --project Trove --claim --owner codex --tag autopilot-safe --minutes 30",
    )
    flags.project(p, help="only this project's tasks")
    p.add_argument("--tag", action="append", default=[],
                   help="hard filter: only tasks carrying this tag (repeatable: all are required)")
    p.add_argument("--claim", action="store_true", help="lease the pick to --owner in the same transaction")
    flags.owner(p, "who takes the lease (required with --claim)", required=False)
    flags.minutes(p, default=None, help="lease window in minutes (default 30)")
    p.add_argument("--max-active", type=flags.integer,
                   help="cap on the owner's live leases (default: env AUTOPILOT_MAX_ACTIVE_PER_OWNER; 0 = none)")
    p.add_argument("--explain", action="store_true",
                   help="report considered, every skipped candidate with its reason, and the pick's effective priority")
    p.add_argument("--prefer-unblocking", action="store_true",
                   help="within a priority tier and deadline, prefer tasks with more queued direct dependents")
    p.add_argument("--aging-minutes", type=flags.integer, default=dispatch.DEFAULT_AGING_MINUTES,
                   help="minutes waited per one-level priority boost (default 360; 0 disables aging)")
    p.add_argument("--aging-boost", type=flags.integer, default=dispatch.DEFAULT_AGING_BOOST,
                   help="most levels aging may promote a task (default 2)")
    p.add_argument("--recall", action="store_true",
                   help="with --claim: embed the claimed task's sealed recall bundle (recall, recall_digest);"
                        " audited context_recalled for the owner")
    from mindos.cli.context import recall as recall_cli  # lazy: the bundle flags

    recall_cli.add_bundle_flags(p)
    flags.request_id(p, actor="owner")
    p.set_defaults(handler=cmd_next)


def cmd_next(conn, args):
    from mindos.cli.context import recall as recall_cli  # lazy: the bundle flags

    recall_cli.check_recall_flags(args)
    options = dict(
        project=args.project, tags=args.tag, claim=args.claim, owner=args.owner, minutes=args.minutes,
        max_active=args.max_active, explain=args.explain, prefer_unblocking=args.prefer_unblocking,
        aging_minutes=args.aging_minutes, aging_boost=args.aging_boost,
    )
    if not args.recall:
        return dispatch.next_task(conn, **options)
    from mindos.context import recall  # lazy: only next --recall pays for the bundle

    return recall.next_and_recall(conn, params=recall_cli.params_from(args), unsealed=recall_cli.unsealed_sections(),
                                  **options)


COMMANDS = {
    "next": add_next,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "next": "{task ?considered ?recall ?recall_digest ?skipped}",
}
