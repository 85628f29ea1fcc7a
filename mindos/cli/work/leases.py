"""Lease commands: claim, heartbeat, renew, release, transfer, leases."""


from mindos.cli import flags, make_parser
from mindos.work import leases


def add_claim(sub):
    p = make_parser(sub, "claim",
                    "autopilot.py claim t-1a2b3c4d --owner hermes --minutes 30 --max-active 4")
    p.add_argument("task_id", help="task id")
    flags.owner(p, "who takes the lease")
    flags.minutes(p, default=30, help="lease window in minutes (default 30)")
    flags.epoch(p, "claim only if the task's lease_epoch is still this value")
    p.add_argument("--max-active", type=flags.integer,
                   help="refuse if the owner already holds this many live leases (default: env"
                        " AUTOPILOT_MAX_ACTIVE_PER_OWNER, else unlimited; 0 = unlimited)")
    p.add_argument("--force", action="store_true",
                   help="override seam conflicts and project dispatch policy (recorded in the audit event)")
    flags.request_id(p, actor="owner")
    p.set_defaults(handler=cmd_claim)


def cmd_claim(conn, args):
    return leases.claim(conn, args.task_id, args.owner, minutes=args.minutes, epoch=args.epoch,
                        max_active=args.max_active, force=args.force)


def add_heartbeat(sub):
    p = make_parser(sub, "heartbeat",
                    'autopilot.py heartbeat t-1a2b3c4d --owner hermes --epoch 1 --action "pytest tests/work"'
                    ' --progress-state tests-running --stall-deadline 45')
    p.add_argument("task_id", help="task id")
    flags.owner(p, "the lease holder")
    p.add_argument("--note", default="", help="what is happening now")
    flags.minutes(p, default=leases.HEARTBEAT_MINUTES,
                  help=f"extend the lease to this many minutes from now (default {leases.HEARTBEAT_MINUTES});"
                       " a longer live lease is never shortened")
    flags.epoch(p)
    p.add_argument("--action", help="what the holder is doing now (one line; kept until the next --action)")
    p.add_argument("--intent", help="what the holder is trying to achieve (one line; kept until the next --intent)")
    p.add_argument("--progress-state", metavar="STATE",
                   help="how far the work is, a token of a-z 0-9 : _ . / - (e.g. tests-running); progress changes"
                        " only when the state does")
    p.add_argument("--stall-deadline", type=flags.integer, metavar="MINUTES",
                   help="the lease is stalled when its progress state has not changed for this many minutes"
                        " (kept for the lease until given again)")
    p.add_argument("--evidence", metavar="RECEIPT", help="a receipt id of this task backing the progress")
    p.set_defaults(handler=cmd_heartbeat)


def cmd_heartbeat(conn, args):
    return leases.heartbeat(conn, args.task_id, args.owner, note=args.note, epoch=args.epoch, minutes=args.minutes,
                            action=args.action, intent=args.intent, progress_state=args.progress_state,
                            stall_deadline=args.stall_deadline, evidence=args.evidence)


def add_renew(sub):
    p = make_parser(sub, "renew",
                    "autopilot.py renew t-1a2b3c4d --owner hermes --minutes 45 --epoch 1")
    p.add_argument("task_id", help="task id")
    flags.owner(p, "the lease holder")
    flags.minutes(p, default=30, help="new window from now, in minutes (default 30)")
    flags.epoch(p)
    p.set_defaults(handler=cmd_renew)


def cmd_renew(conn, args):
    return leases.renew(conn, args.task_id, args.owner, minutes=args.minutes, epoch=args.epoch)


def add_release(sub):
    p = make_parser(sub, "release",
                    "autopilot.py release t-1a2b3c4d --owner hermes --epoch 1")
    p.add_argument("task_id", help="task id")
    flags.owner(p, "the lease holder")
    flags.epoch(p)
    p.set_defaults(handler=cmd_release)


def cmd_release(conn, args):
    return leases.release(conn, args.task_id, args.owner, epoch=args.epoch)


def add_transfer(sub):
    p = make_parser(sub, "transfer",
                    "autopilot.py transfer t-1a2b3c4d --from-owner codex --to-owner claude-code --minutes 45")
    p.add_argument("task_id", help="task id")
    p.add_argument("--from-owner", required=True, help="the current holder")
    p.add_argument("--to-owner", "--to-agent", dest="to_owner", required=True, help="the new holder")
    flags.minutes(p, default=None, help="new window from now (default: keep the current expiry)")
    flags.epoch(p)
    p.add_argument("--max-active", type=flags.integer,
                   help="refuse if the new holder already holds this many live leases (default: env"
                        " AUTOPILOT_MAX_ACTIVE_PER_OWNER, else unlimited; 0 = unlimited)")
    p.add_argument("--force", action="store_true",
                   help="override the project's max_wip_per_owner for the new holder (recorded in the audit event)")
    p.set_defaults(handler=cmd_transfer)


def cmd_transfer(conn, args):
    return leases.transfer(conn, args.task_id, args.from_owner, args.to_owner, minutes=args.minutes,
                           epoch=args.epoch, max_active=args.max_active, force=args.force)


def add_leases(sub):
    p = make_parser(sub, "leases",
                    "autopilot.py leases --all --owner hermes --stalled")
    p.add_argument("--all", action="store_true", help="include expired-but-held leases (recovery candidates)")
    flags.owner(p, "only leases held by this owner", required=False)
    p.add_argument("--stalled", action="store_true",
                   help="only stalled leases (live, progress state unchanged past the stall deadline)")
    p.set_defaults(handler=cmd_leases)


def cmd_leases(conn, args):
    return leases.list_leases(conn, include_expired=args.all, owner=args.owner, stalled=args.stalled)


COMMANDS = {
    "claim": add_claim,
    "heartbeat": add_heartbeat,
    "renew": add_renew,
    "release": add_release,
    "transfer": add_transfer,
    "leases": add_leases,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "claim": "{@task ?policy_overrides ?seam_overrides}",
    "heartbeat": "{@task heartbeat progress}",
    "renew": "{@task}",
    "release": "{@task}",
    "transfer": "{@task from_epoch from_owner ?policy_overrides ?seam_overrides}",
    "leases": "[{lease_epoch lease_expires_at live owner priority progress project seconds_remaining stalled status task_id"
              " title}]",
}
