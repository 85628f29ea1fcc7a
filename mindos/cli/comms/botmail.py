"""Botmail commands: botmail-peer-allow, botmail-peer-revoke, botmail-peers, botmail-send,
botmail-inbox, botmail-ack, botmail-receipts, botmail-context."""

from mindos.cli import flags, make_parser
from mindos.comms import botmail
from mindos.errors import InvalidInput

MAX_STDIN = 1 << 20


def add_peer_allow(sub):
    p = make_parser(sub, "botmail-peer-allow",
                    "autopilot.py botmail-peer-allow --recipient hermes --peer codex --profile work --class chat"
                    " --class status --replay-budget 60 --window-seconds 3600")
    p.add_argument("--recipient", required=True, help="the bot receiving")
    p.add_argument("--peer", required=True, help="the bot allowed to send to it")
    p.add_argument("--profile", required=True, help="the one profile scope this peer may write in")
    p.add_argument("--class", dest="classes", action="append", default=[],
                   help=f"an allowed content class (repeatable; default chat): {', '.join(botmail.CONTENT_CLASSES)}")
    p.add_argument("--replay-budget", type=flags.integer, default=botmail.DEFAULT_REPLAY_BUDGET,
                   help=f"most accepted messages per window (default {botmail.DEFAULT_REPLAY_BUDGET})")
    p.add_argument("--window-seconds", type=flags.integer, default=botmail.DEFAULT_WINDOW_SECONDS,
                   help=f"the replay window (default {botmail.DEFAULT_WINDOW_SECONDS})")
    p.set_defaults(handler=cmd_peer_allow)


def cmd_peer_allow(conn, args):
    return botmail.allow_peer(conn, args.recipient, args.peer, profile=args.profile, classes=args.classes or ["chat"],
                              replay_budget=args.replay_budget, window_seconds=args.window_seconds)


def add_peer_revoke(sub):
    p = make_parser(sub, "botmail-peer-revoke", "autopilot.py botmail-peer-revoke --recipient hermes --peer codex")
    p.add_argument("--recipient", required=True, help="the bot receiving")
    p.add_argument("--peer", required=True, help="the peer to revoke")
    p.set_defaults(handler=cmd_peer_revoke)


def cmd_peer_revoke(conn, args):
    return botmail.revoke_peer(conn, args.recipient, args.peer)


def add_peers(sub):
    p = make_parser(sub, "botmail-peers", "autopilot.py botmail-peers --recipient hermes")
    p.add_argument("--recipient", help="only this recipient's peers")
    p.set_defaults(handler=cmd_peers)


def cmd_peers(conn, args):
    return botmail.peers(conn, args.recipient)


def add_send(sub):
    p = make_parser(sub, "botmail-send",
                    'autopilot.py botmail-send --from codex --to hermes --profile work --class status'
                    ' --body "tests green on t-1a2b3c4d" --harness codex')
    p.add_argument("--envelope", help="a complete envelope as JSON (what a gateway relays), or '-' to read it from"
                                      " stdin (at most 1 MiB); excludes the flags below")
    p.add_argument("--from", dest="sender", help="the sending bot")
    p.add_argument("--to", dest="recipient", help="the receiving bot")
    p.add_argument("--profile", help="the profile scope")
    p.add_argument("--class", dest="klass", default="chat", help="content class (default chat)")
    p.add_argument("--body", help="the message text")
    p.add_argument("--thread", default="", help="a thread name")
    p.add_argument("--harness", default="other", help=f"provenance harness: {', '.join(botmail.HARNESSES)}")
    p.add_argument("--id", dest="envelope_id", help="idempotency key (reuse it to retry; default random)")
    p.add_argument("--ttl-seconds", type=flags.integer, help="expire undelivered after this many seconds")
    flags.epoch(p, help="capability epoch (default: the peer entry's current one)")
    p.set_defaults(handler=cmd_send)


def cmd_send(conn, args):
    composed = [args.sender, args.recipient, args.profile, args.body]
    if args.envelope is not None:
        if any(value is not None for value in composed):
            raise InvalidInput("--envelope excludes --from/--to/--profile/--body")
        envelope = args.envelope
        if envelope == "-":
            import sys  # lazy: only a piped envelope reads stdin

            envelope = sys.stdin.read(MAX_STDIN + 1)
            if len(envelope) > MAX_STDIN:
                raise InvalidInput(f"--envelope -: stdin is over {MAX_STDIN} characters")
        return _exit_by_outcome(botmail.deliver(conn, envelope))
    if any(value is None for value in composed):
        raise InvalidInput("botmail-send needs --envelope, or --from, --to, --profile and --body")
    epoch = args.epoch if args.epoch is not None else botmail.current_epoch(conn, args.recipient, args.sender)
    envelope = botmail.compose(args.sender, args.recipient, args.profile, args.body, klass=args.klass, epoch=epoch,
                               harness=args.harness, thread=args.thread, envelope_id=args.envelope_id,
                               ttl_seconds=args.ttl_seconds)
    return _exit_by_outcome(botmail.deliver(conn, envelope))


def _exit_by_outcome(receipt):
    """The receipt, with exit 1 unless the envelope was delivered (accepted, or a duplicate of
    one that was): a rejected, expired or failed delivery is printed and fails the call."""
    return receipt, 0 if receipt["outcome"] in ("accepted", "duplicate") else 1


def add_inbox(sub):
    p = make_parser(sub, "botmail-inbox", "autopilot.py botmail-inbox --recipient hermes --profile work --unacked-only")
    p.add_argument("--recipient", required=True, help="the receiving bot")
    p.add_argument("--profile", help="only this profile")
    p.add_argument("--unacked-only", action="store_true", help="only messages not yet acknowledged")
    flags.limit(p, default=50)
    p.set_defaults(handler=cmd_inbox)


def cmd_inbox(conn, args):
    return botmail.inbox(conn, args.recipient, profile=args.profile, unacked_only=args.unacked_only, limit=args.limit)


def add_ack(sub):
    p = make_parser(sub, "botmail-ack", "autopilot.py botmail-ack 12 --recipient hermes")
    p.add_argument("message_id", help="the delivered message's id")
    p.add_argument("--recipient", required=True, help="the bot it was delivered to")
    p.set_defaults(handler=cmd_ack)


def cmd_ack(conn, args):
    return botmail.ack(conn, args.message_id, args.recipient)


def add_receipts(sub):
    p = make_parser(sub, "botmail-receipts", "autopilot.py botmail-receipts --sender codex --outcome rejected")
    p.add_argument("--sender", help="only envelopes from this bot")
    p.add_argument("--recipient", help="only envelopes to this bot")
    p.add_argument("--outcome", choices=botmail.OUTCOMES, help="only this outcome")
    p.add_argument("--envelope-id", help="only this envelope id")
    flags.limit(p, default=50)
    p.set_defaults(handler=cmd_receipts)


def cmd_receipts(conn, args):
    return botmail.receipts(conn, sender=args.sender, recipient=args.recipient, outcome=args.outcome,
                            envelope_id=args.envelope_id, limit=args.limit)


def add_context(sub):
    p = make_parser(sub, "botmail-context", "autopilot.py botmail-context --recipient hermes --profile work --budget 2000")
    p.add_argument("--recipient", required=True, help="the receiving bot")
    p.add_argument("--profile", required=True, help="the profile whose bot chat to pack")
    p.add_argument("--budget", type=flags.integer, default=botmail.DEFAULT_CONTEXT_BUDGET,
                   help=f"character budget (default {botmail.DEFAULT_CONTEXT_BUDGET})")
    p.set_defaults(handler=cmd_context)


def cmd_context(conn, args):
    return botmail.context(conn, args.recipient, args.profile, budget=args.budget)


COMMANDS = {
    "botmail-peer-allow": add_peer_allow,
    "botmail-peer-revoke": add_peer_revoke,
    "botmail-peers": add_peers,
    "botmail-send": add_send,
    "botmail-inbox": add_inbox,
    "botmail-ack": add_ack,
    "botmail-receipts": add_receipts,
    "botmail-context": add_context,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "botmail-peer-allow": "{changed classes created_at epoch peer profile recipient replay_budget"
                          " replay_window_seconds revoked revoked_at updated_at}",
    "botmail-peer-revoke": "{changed classes created_at epoch peer profile recipient replay_budget"
                           " replay_window_seconds revoked revoked_at updated_at}",
    "botmail-peers": "[{classes created_at epoch peer profile recipient replay_budget replay_window_seconds revoked"
                     " revoked_at updated_at}]",
    "botmail-send": "{created_at detail envelope_hash envelope_id message_id outcome reason receipt_id recipient"
                    " sender}",
    "botmail-inbox": "{count messages recipient unacked}",
    "botmail-ack": "{acked acked_at already_acked body class delivered_at envelope_hash envelope_id epoch expires_at"
                   " harness id profile provenance recipient sender sent_at thread}",
    "botmail-receipts": "[{created_at detail envelope_hash envelope_id id message_id outcome reason recipient"
                        " sender}]",
    "botmail-context": "{budget digest messages profile recipient truncated used_chars}",
}
