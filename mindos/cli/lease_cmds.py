"""Lease and lifecycle commands: claim, heartbeat, renew, release, transfer, leases,
complete, fail, cancel, defer, block, unblock."""

from mindos.cli import make_parser


def _epoch(p):
    p.add_argument("--epoch", type=int, help="fencing epoch you were issued; a stale one is refused")


def add_claim(sub):
    p = make_parser(sub, "claim", "Take the lease on a task (bumps its fencing epoch).",
                    "autopilot.py claim t-1a2b3c4d --owner hermes --minutes 30 --max-active 4")
    p.add_argument("task_id", help="task id")
    p.add_argument("--owner", required=True, help="who takes the lease")
    p.add_argument("--minutes", type=int, default=30, help="lease window in minutes (default 30)")
    p.add_argument("--epoch", type=int, help="claim only if the task's lease_epoch is still this value")
    p.add_argument("--max-active", type=int,
                   help="refuse if the owner already holds this many live leases (default: env"
                        " AUTOPILOT_MAX_ACTIVE_PER_OWNER, else unlimited; 0 = unlimited)")
    p.add_argument("--force", action="store_true",
                   help="override seam conflicts and project dispatch policy (recorded in the audit event)")
    p.set_defaults(handler=cmd_claim)


def cmd_claim(conn, args):
    from mindos import leases

    return leases.claim(conn, args.task_id, args.owner, minutes=args.minutes, epoch=args.epoch,
                        max_active=args.max_active, force=args.force)


def add_heartbeat(sub):
    p = make_parser(sub, "heartbeat", "Report liveness: status running, lease reset to 15 minutes.",
                    'autopilot.py heartbeat t-1a2b3c4d --owner hermes --epoch 1 --note "Running verification"')
    p.add_argument("task_id", help="task id")
    p.add_argument("--owner", required=True, help="the lease holder")
    p.add_argument("--note", default="", help="what is happening now")
    _epoch(p)
    p.set_defaults(handler=cmd_heartbeat)


def cmd_heartbeat(conn, args):
    from mindos import leases

    return leases.heartbeat(conn, args.task_id, args.owner, note=args.note, epoch=args.epoch)


def add_renew(sub):
    p = make_parser(sub, "renew", "Extend a live lease from now, keeping status and epoch.",
                    "autopilot.py renew t-1a2b3c4d --owner hermes --minutes 45 --epoch 1")
    p.add_argument("task_id", help="task id")
    p.add_argument("--owner", required=True, help="the lease holder")
    p.add_argument("--minutes", type=int, default=30, help="new window from now, in minutes (default 30)")
    _epoch(p)
    p.set_defaults(handler=cmd_renew)


def cmd_renew(conn, args):
    from mindos import leases

    return leases.renew(conn, args.task_id, args.owner, minutes=args.minutes, epoch=args.epoch)


def add_release(sub):
    p = make_parser(sub, "release", "Hand a live lease back to the queue (no retry budget consumed).",
                    "autopilot.py release t-1a2b3c4d --owner hermes --epoch 1")
    p.add_argument("task_id", help="task id")
    p.add_argument("--owner", required=True, help="the lease holder")
    _epoch(p)
    p.set_defaults(handler=cmd_release)


def cmd_release(conn, args):
    from mindos import leases

    return leases.release(conn, args.task_id, args.owner, epoch=args.epoch)


def add_transfer(sub):
    p = make_parser(sub, "transfer", "Reassign a live lease to another agent (bumps the epoch, keeps status).",
                    "autopilot.py transfer t-1a2b3c4d --from-owner codex --to-owner claude-code --minutes 45")
    p.add_argument("task_id", help="task id")
    p.add_argument("--from-owner", required=True, help="the current holder")
    p.add_argument("--to-owner", "--to-agent", dest="to_owner", required=True, help="the new holder")
    p.add_argument("--minutes", type=int, help="new window from now (default: keep the current expiry)")
    _epoch(p)
    p.add_argument("--max-active", type=int,
                   help="refuse if the new holder already holds this many live leases (default: env"
                        " AUTOPILOT_MAX_ACTIVE_PER_OWNER, else unlimited; 0 = unlimited)")
    p.add_argument("--force", action="store_true",
                   help="override the project's max_wip_per_owner for the new holder (recorded in the audit event)")
    p.set_defaults(handler=cmd_transfer)


def cmd_transfer(conn, args):
    from mindos import leases

    return leases.transfer(conn, args.task_id, args.from_owner, args.to_owner, minutes=args.minutes,
                           epoch=args.epoch, max_active=args.max_active, force=args.force)


def add_leases(sub):
    p = make_parser(sub, "leases", "List held leases, soonest expiry first (live ones unless --all).",
                    "autopilot.py leases --all --owner hermes")
    p.add_argument("--all", action="store_true", help="include expired-but-held leases (recovery candidates)")
    p.add_argument("--owner", help="only leases held by this owner")
    p.set_defaults(handler=cmd_leases)


def cmd_leases(conn, args):
    from mindos import leases

    return leases.list_leases(conn, include_expired=args.all, owner=args.owner)


def add_complete(sub):
    p = make_parser(sub, "complete", "Complete a task you hold a live lease on, citing evidence.",
                    'autopilot.py complete t-1a2b3c4d --owner hermes --epoch 1 --receipt r-1 --note "tests pass"')
    p.add_argument("task_id", help="task id")
    p.add_argument("--owner", required=True, help="the lease holder")
    p.add_argument("--note", default="", help="completion note (audited)")
    p.add_argument("--receipt", action="append", default=[], metavar="RECEIPT_ID",
                   help="sealed receipt of this task backing the completion (repeatable)")
    p.add_argument("--recall-digest", default="", help="sha256 of the recall the work was done against")
    _epoch(p)
    p.set_defaults(handler=cmd_complete)


def cmd_complete(conn, args):
    from mindos import lifecycle

    return lifecycle.complete(conn, args.task_id, args.owner, epoch=args.epoch, note=args.note,
                              receipts=args.receipt, recall_digest=args.recall_digest)


def add_fail(sub):
    p = make_parser(sub, "fail", "Record a failed attempt: requeue under backoff, or fail past the retry budget.",
                    'autopilot.py fail t-1a2b3c4d --owner codex --reason "tests red after rebase"')
    p.add_argument("task_id", help="task id")
    p.add_argument("--owner", required=True, help="the lease holder")
    p.add_argument("--reason", default="", help="why it failed (kept in blocked_reason when terminal)")
    p.add_argument("--no-retry", action="store_true", help="fail terminally now")
    p.add_argument("--max-retries", type=int, default=3, help="retry budget (default 3)")
    p.add_argument("--backoff-base", type=int, default=60, help="cooldown base seconds (default 60; 0 disables)")
    p.add_argument("--backoff-cap", type=int, default=3600, help="cooldown cap seconds (default 3600)")
    _epoch(p)
    p.set_defaults(handler=cmd_fail)


def cmd_fail(conn, args):
    from mindos import lifecycle

    return lifecycle.fail(conn, args.task_id, args.owner, epoch=args.epoch, reason=args.reason,
                          no_retry=args.no_retry, max_retries=args.max_retries, backoff_base=args.backoff_base,
                          backoff_cap=args.backoff_cap)


def add_cancel(sub):
    p = make_parser(sub, "cancel", "Cancel a task (never over a foreign or expired lease).",
                    'autopilot.py cancel t-1a2b3c4d --owner leo --reason "obsolete"')
    p.add_argument("task_id", help="task id")
    p.add_argument("--owner", required=True, help="who cancels")
    p.add_argument("--reason", default="", help="why (audited)")
    p.set_defaults(handler=cmd_cancel)


def cmd_cancel(conn, args):
    from mindos import lifecycle

    return lifecycle.cancel(conn, args.task_id, args.owner, reason=args.reason)


def add_defer(sub):
    p = make_parser(sub, "defer", "Park a task out of dispatch until an instant ('' clears); status unchanged.",
                    'autopilot.py defer t-1a2b3c4d --owner hermes --until "2026-08-22T09:00:00Z"')
    p.add_argument("task_id", help="task id")
    p.add_argument("--owner", required=True, help="who defers")
    p.add_argument("--until", required=True, help="ISO 8601 instant (naive = UTC); '' clears the deferral")
    p.set_defaults(handler=cmd_defer)


def cmd_defer(conn, args):
    from mindos import lifecycle

    return lifecycle.defer(conn, args.task_id, args.owner, until=args.until)


def add_block(sub):
    p = make_parser(sub, "block", "Park a task as blocked with a reason (releases your own live lease).",
                    'autopilot.py block t-1a2b3c4d --owner leo --reason "waiting on credentials"')
    p.add_argument("task_id", help="task id")
    p.add_argument("--owner", required=True, help="who blocks")
    p.add_argument("--reason", required=True, help="what it is waiting for")
    p.set_defaults(handler=cmd_block)


def cmd_block(conn, args):
    from mindos import lifecycle

    return lifecycle.block(conn, args.task_id, args.owner, reason=args.reason)


def add_unblock(sub):
    p = make_parser(sub, "unblock", "Requeue a blocked task and clear its reason.",
                    "autopilot.py unblock t-1a2b3c4d --owner leo")
    p.add_argument("task_id", help="task id")
    p.add_argument("--owner", required=True, help="who unblocks")
    p.set_defaults(handler=cmd_unblock)


def cmd_unblock(conn, args):
    from mindos import lifecycle

    return lifecycle.unblock(conn, args.task_id, args.owner)


COMMANDS = {
    "claim": add_claim,
    "heartbeat": add_heartbeat,
    "renew": add_renew,
    "release": add_release,
    "transfer": add_transfer,
    "leases": add_leases,
    "complete": add_complete,
    "fail": add_fail,
    "cancel": add_cancel,
    "defer": add_defer,
    "block": add_block,
    "unblock": add_unblock,
}
