"""Handoff commands: handoff, handoff-current, handoffs, handoff-history, ack, handoff-inbox, search-handoffs, handoff-check."""

from mindos.memory import handoffs
from mindos.cli import flags, make_parser


def add_handoff(sub):
    p = make_parser(
        sub, "handoff",
        'autopilot.py handoff t-1a2b3c4d --from-agent codex --to-agent claude-code --status running'
        ' --objective "implement retry path" --evidence "tests pass locally" --next-action "open PR"',
    )
    p.add_argument("task_id", help="task id")
    p.add_argument("--from-agent", required=True, help="agent handing off (source)")
    p.add_argument("--to-agent", default="", help="agent the work is handed to (omit: unaddressed)")
    p.add_argument("--status", default="", help="work status at handoff time (e.g. running)")
    flags.long_text(p, "objective", default="", help="the goal the next agent resumes")
    p.add_argument("--evidence", action="append", default=[], help="verified evidence (repeatable)")
    p.add_argument("--constraint", action="append", default=[], help="constraint to respect (repeatable)")
    p.add_argument("--decision", action="append", default=[], help="decision taken (repeatable)")
    p.add_argument("--file", action="append", default=[], help="file touched (repeatable)")
    p.add_argument("--commit", default="", help="commit ref the work is at")
    p.add_argument("--next-action", action="append", default=[], help="next concrete step (repeatable)")
    p.add_argument("--risk", action="append", default=[], help="known risk (repeatable)")
    p.add_argument("--recall-digest", default="", help="sha256 of the recall this handoff was written against")
    flags.secret(p, "text")
    flags.request_id(p, actor="from_agent")
    p.set_defaults(handler=cmd_handoff)


def cmd_handoff(conn, args):
    return handoffs.record(
        conn, args.task_id, from_agent=args.from_agent, to_agent=args.to_agent, status=args.status,
        objective=args.objective, evidence=args.evidence, constraints=args.constraint, decisions=args.decision,
        files=args.file, commit=args.commit, next_actions=args.next_action, risks=args.risk,
        recall_digest=args.recall_digest, redact=args.redact, allow_secret=args.allow_secret,
    )


def add_handoff_current(sub):
    p = make_parser(sub, "handoff-current",
                    "autopilot.py handoff-current t-1a2b3c4d")
    p.add_argument("task_id", help="task id")
    p.set_defaults(handler=cmd_handoff_current)


def cmd_handoff_current(conn, args):
    return handoffs.current(conn, args.task_id)


def add_handoffs(sub):
    p = make_parser(sub, "handoffs",
                    "autopilot.py handoffs t-1a2b3c4d --all")
    p.add_argument("task_id", help="task id")
    p.add_argument("--all", action="store_true", help="include superseded handoffs")
    p.set_defaults(handler=cmd_handoffs)


def cmd_handoffs(conn, args):
    return handoffs.list_for_task(conn, args.task_id, include_superseded=args.all)


def add_handoff_history(sub):
    p = make_parser(sub, "handoff-history",
                    "autopilot.py handoff-history 12")
    p.add_argument("handoff_id", help="handoff id (any link of the chain)")
    p.set_defaults(handler=cmd_handoff_history)


def cmd_handoff_history(conn, args):
    return handoffs.history(conn, args.handoff_id)


def add_ack(sub):
    p = make_parser(sub, "ack",
                    "autopilot.py ack t-1a2b3c4d --agent claude-code --recall-digest <sha256>")
    p.add_argument("task_id", help="task id")
    p.add_argument("--agent", required=True, help="the recipient (the live handoff's to_agent)")
    p.add_argument("--recall-digest", default="", help="sha256 of the recall made before accepting")
    p.set_defaults(handler=cmd_ack)


def cmd_ack(conn, args):
    return handoffs.ack(conn, args.task_id, args.agent, recall_digest=args.recall_digest)


def add_handoff_inbox(sub):
    p = make_parser(sub, "handoff-inbox",
                    "autopilot.py handoff-inbox --agent claude-code --project Trove --limit 10 --unacked-only")
    p.add_argument("--agent", required=True, help="the recipient")
    flags.project(p, help="only tasks of this project")
    flags.limit(p, help="at most this many items")
    p.add_argument("--unacked-only", action="store_true", help="only handoffs not yet acknowledged")
    p.set_defaults(handler=cmd_handoff_inbox)


def cmd_handoff_inbox(conn, args):
    return handoffs.inbox(conn, args.agent, project=args.project, limit=args.limit, unacked_only=args.unacked_only)


def add_search_handoffs(sub):
    p = make_parser(sub, "search-handoffs",
                    'autopilot.py search-handoffs "postgres pool" --rank --project Trove')
    p.add_argument("query", help="search text (always plain text, never query syntax)")
    p.add_argument("--task", help="only this task")
    p.add_argument("--from-agent", help="only handoffs from this agent")
    p.add_argument("--to-agent", help="only handoffs to this agent")
    flags.project(p, help="only tasks of this project")
    p.add_argument("--all", action="store_true", help="include superseded handoffs")
    p.add_argument("--rank", action="store_true", help="BM25-ranked via FTS5 (adds score)")
    flags.limit(p, 20, "at most this many (default 20)")
    p.set_defaults(handler=cmd_search_handoffs)


def cmd_search_handoffs(conn, args):
    return handoffs.search(conn, args.query, task=args.task, from_agent=args.from_agent, to_agent=args.to_agent,
                           project=args.project, include_superseded=args.all, rank=args.rank, limit=args.limit)


def add_handoff_check(sub):
    p = make_parser(sub, "handoff-check",
                    "ops.py handoff-check --task t-1a2b3c4d --ack-sla-hours 24")
    p.add_argument("--task", help="only the live handoff of this task")
    p.add_argument("--ack-sla-hours", type=flags.number, default=24.0,
                   help="hours an addressed handoff may stay unacknowledged (default 24)")
    p.set_defaults(handler=cmd_handoff_check)


def cmd_handoff_check(conn, args):
    report = handoffs.check(conn, task=args.task, ack_sla_hours=args.ack_sla_hours)
    return report, (0 if report["ok"] else 1)


COMMANDS = {
    "handoff": add_handoff,
    "handoff-current": add_handoff_current,
    "handoffs": add_handoffs,
    "handoff-history": add_handoff_history,
    "ack": add_ack,
    "handoff-inbox": add_handoff_inbox,
    "search-handoffs": add_search_handoffs,
    "handoff-check": add_handoff_check,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "handoff": "{@handoff deduplicated ?secret_action ?secret_kinds}",
    "handoff-current": "{@handoff task_recap}",
    "handoffs": "[{@handoff}]",
    "handoff-history": "{chain handoff_id length live_id task_id}",
    "ack": "{@handoff already_acked}",
    "handoff-inbox": "{agent count items unacked}",
    "search-handoffs": "[{@handoff project task_title ?score}]",
    "handoff-check": "{ack_sla_hours checked counts ok problems}",
}
