"""Audit ledger commands: events, verify-chain."""

from mindos.store import ledger
from mindos.cli import flags, make_parser


def add_events(sub):
    p = make_parser(sub, "events",
                    "autopilot.py events --action claimed --since 2026-08-21T00:00:00Z --limit 20 --verify")
    p.add_argument("--action", help="only this action")
    p.add_argument("--entity-id", help="only events about this entity")
    p.add_argument("--entity-type", help="only events about this kind of entity (task, memory, note, handoff, ...)")
    p.add_argument("--since", help="ISO 8601 lower bound (inclusive)")
    p.add_argument("--until", help="ISO 8601 upper bound (inclusive)")
    flags.limit(p, 50, "at most this many (default 50)")
    p.add_argument("--verify", action="store_true", help="also recompute the hash chain")
    p.set_defaults(handler=cmd_events)


def cmd_events(conn, args):
    result = ledger.events(conn, action=args.action, entity_id=args.entity_id, entity_type=args.entity_type,
                          since=args.since, until=args.until,
                          limit=args.limit, verify=args.verify)
    broken = args.verify and not result["verify"]["ok"]
    return result, (1 if broken else 0)


def add_verify_chain(sub):
    p = make_parser(sub, "verify-chain",
                    "autopilot.py verify-chain --checkpoint backups/checkpoint-20260821T090000Z-42.json")
    p.add_argument("--checkpoint", metavar="FILE",
                   help="also check the chain against this sealed checkpoint (truncation detection)")
    p.set_defaults(handler=cmd_verify_chain)


def cmd_verify_chain(conn, args):
    report = ledger.verify_chain(conn)
    if args.checkpoint:
        from mindos.recovery import checkpoint  # lazy: only checkpoint pins pay for it

        pinned = checkpoint.check(conn, args.checkpoint)
        report["checkpoint"] = {key: pinned[key] for key in ("path", "checkpoint", "live", "problems", "ok")}
        report["ok"] = report["ok"] and pinned["ok"]
    return report, (0 if report["ok"] else 1)


COMMANDS = {
    "events": add_events,
    "verify-chain": add_verify_chain,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "events": "{events total_matching truncated ?verify}",
    "verify-chain": "{events ok problems ?checkpoint}",
}
