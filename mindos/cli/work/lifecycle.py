"""Lifecycle commands past the claim: complete, fail, cancel, defer, block, unblock."""


from mindos.cli import flags, make_parser
from mindos.work import lifecycle


def add_complete(sub):
    p = make_parser(sub, "complete",
                    'autopilot.py complete t-1a2b3c4d --owner hermes --epoch 1 --receipt r-1 --note "tests pass"')
    p.add_argument("task_id", help="task id")
    flags.owner(p, "the lease holder")
    p.add_argument("--note", default="", help="completion note (audited)")
    p.add_argument("--receipt", action="append", default=[], metavar="RECEIPT_ID",
                   help="sealed receipt of this task backing the completion (repeatable)")
    p.add_argument("--recall-digest", default="", help="sha256 of the recall the work was done against")
    flags.long_text(p, "recap", default="",
                    help=f"what was done, in one paragraph (at most {lifecycle.MAX_RECAP} characters; guarded):"
                         " shown by show, handoffs and the packs of dependent tasks")
    flags.epoch(p)
    flags.request_id(p, actor="owner")
    p.set_defaults(handler=cmd_complete)


def cmd_complete(conn, args):
    return lifecycle.complete(conn, args.task_id, args.owner, epoch=args.epoch, note=args.note,
                              receipts=args.receipt, recall_digest=args.recall_digest, recap=args.recap)


def add_fail(sub):
    p = make_parser(sub, "fail",
                    'autopilot.py fail t-1a2b3c4d --owner codex --cause defect --reason "parser drops the last row"')
    p.add_argument("task_id", help="task id")
    flags.owner(p, "the lease holder")
    p.add_argument("--reason", default="", help="why it failed (kept in blocked_reason when terminal)")
    p.add_argument("--cause", choices=lifecycle.CAUSES,
                   help="transient or infra: requeue under backoff (as without --cause); defect: requeue behind one"
                        " correction task (same project, priority and tags) that must be completed first")
    p.add_argument("--receipt", action="append", default=[], metavar="RECEIPT_ID",
                   help="sealed receipt of this task as evidence of the failure (repeatable; a correction task"
                        " cites it)")
    p.add_argument("--no-retry", action="store_true", help="fail terminally now")
    p.add_argument("--max-retries", type=flags.integer, default=3, help="retry budget (default 3)")
    p.add_argument("--backoff-base", type=flags.integer, default=60, help="cooldown base seconds (default 60; 0 disables)")
    p.add_argument("--backoff-cap", type=flags.integer, default=3600, help="cooldown cap seconds (default 3600)")
    flags.epoch(p)
    flags.request_id(p, actor="owner")
    p.set_defaults(handler=cmd_fail)


def cmd_fail(conn, args):
    return lifecycle.fail(conn, args.task_id, args.owner, epoch=args.epoch, reason=args.reason,
                          no_retry=args.no_retry, max_retries=args.max_retries, backoff_base=args.backoff_base,
                          backoff_cap=args.backoff_cap, cause=args.cause, receipts=args.receipt)


def add_cancel(sub):
    p = make_parser(sub, "cancel",
                    'autopilot.py cancel t-1a2b3c4d --owner leo --reason "obsolete"')
    p.add_argument("task_id", help="task id")
    flags.owner(p, "who cancels")
    p.add_argument("--reason", default="", help="why (audited)")
    p.set_defaults(handler=cmd_cancel)


def cmd_cancel(conn, args):
    return lifecycle.cancel(conn, args.task_id, args.owner, reason=args.reason)


def add_defer(sub):
    p = make_parser(sub, "defer",
                    'autopilot.py defer t-1a2b3c4d --owner hermes --until "2026-08-22T09:00:00Z"')
    p.add_argument("task_id", help="task id")
    flags.owner(p, "who defers")
    p.add_argument("--until", required=True, help="ISO 8601 instant (naive = UTC); '' clears the deferral")
    p.set_defaults(handler=cmd_defer)


def cmd_defer(conn, args):
    return lifecycle.defer(conn, args.task_id, args.owner, until=args.until)


def add_block(sub):
    p = make_parser(sub, "block",
                    'autopilot.py block t-1a2b3c4d --owner leo --reason "waiting on credentials"')
    p.add_argument("task_id", help="task id")
    flags.owner(p, "who blocks")
    p.add_argument("--reason", required=True, help="what it is waiting for")
    p.set_defaults(handler=cmd_block)


def cmd_block(conn, args):
    return lifecycle.block(conn, args.task_id, args.owner, reason=args.reason)


def add_unblock(sub):
    p = make_parser(sub, "unblock",
                    "autopilot.py unblock t-1a2b3c4d --owner leo")
    p.add_argument("task_id", help="task id")
    flags.owner(p, "who unblocks")
    p.set_defaults(handler=cmd_unblock)


def cmd_unblock(conn, args):
    return lifecycle.unblock(conn, args.task_id, args.owner)


COMMANDS = {
    "complete": add_complete,
    "fail": add_fail,
    "cancel": add_cancel,
    "defer": add_defer,
    "block": add_block,
    "unblock": add_unblock,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "complete": "{@task newly_unblocked ?receipts}",
    "fail": "{@task retry_scheduled ?backoff_seconds ?dependents_stranded}",
    "cancel": "{@task}",
    "defer": "{@task}",
    "block": "{@task}",
    "unblock": "{@task}",
}
