"""Session cache commands: session-scan, session-ingest, search-sessions, sessions-prune."""

from mindos.memory import sessions, transcripts
from mindos.cli import flags, make_parser


def add_session_scan(sub):
    p = make_parser(sub, "session-scan", "autopilot.py session-scan --root ~/.claude/projects/-home-me-proj-a",
                    )
    p.add_argument("--root", required=True, help="transcript store to inventory (read-only; symlinks never followed)")
    p.set_defaults(handler=cmd_session_scan, needs_db=False)


def cmd_session_scan(conn, args):
    return sessions.scan(args.root)


def add_session_ingest(sub):
    p = make_parser(sub, "session-ingest",
                    "autopilot.py session-ingest --source claude-code --root ~/.claude/projects/-home-me-proj-a"
                    " --project Auth --since 7d --apply --redact")
    p.add_argument("--source", required=True, help="source label stored with every message (e.g. claude-code, codex)")
    p.add_argument("--root", required=True, help="transcript store to index (read-only; symlinks never followed)")
    flags.project(p, help="project label stored with every session")
    p.add_argument("--profile", help="profile label stored with every session")
    p.add_argument("--since", help="only transcript files modified at or after this: a relative age (7d, 12h, 90m)"
                                   " or an ISO timestamp; older files are counted in skipped.before_since")
    p.add_argument("--apply", action="store_true", help="write the index (default: a dry-run report, nothing written)")
    flags.secret(p, "messages")
    p.set_defaults(handler=cmd_session_ingest)


def cmd_session_ingest(conn, args):
    return sessions.ingest(conn, args.source, args.root, project=args.project, profile=args.profile, since=args.since,
                           apply=args.apply,
                           redact=args.redact, allow_secret=args.allow_secret)


def add_search_sessions(sub):
    p = make_parser(sub, "search-sessions", 'autopilot.py search-sessions "redirect cookie" --role assistant --rank')
    p.add_argument("query", help="text to look for (taken literally)")
    p.add_argument("--role", choices=transcripts.ROLES, help="only messages of this role")
    p.add_argument("--rank", action="store_true", help="BM25-ranked, all tokens required; hits carry score")
    p.add_argument("--source", help="only sessions ingested under this source")
    flags.project(p, help="only sessions of this project")
    p.add_argument("--profile", help="only sessions of this profile")
    flags.limit(p, 50, "at most this many (default 50)")
    p.set_defaults(handler=cmd_search_sessions)


def cmd_search_sessions(conn, args):
    return sessions.search(conn, args.query, role=args.role, rank=args.rank, source=args.source,
                           project=args.project, profile=args.profile, limit=args.limit)


def add_sessions_prune(sub):
    p = make_parser(sub, "sessions-prune", "autopilot.py sessions-prune --older-than 30d --source claude-code --apply")
    p.add_argument("--older-than", required=True,
                   help="mandatory bound: a relative age (30d, 12h, 90m) or an ISO timestamp")
    p.add_argument("--source", help="only sessions of this source")
    p.add_argument("--profile", help="only sessions of this profile")
    flags.project(p, help="only sessions of this project")
    p.add_argument("--apply", action="store_true", help="delete the candidates (default: a dry-run plan)")
    p.set_defaults(handler=cmd_sessions_prune)


def cmd_sessions_prune(conn, args):
    return sessions.prune(conn, args.older_than, source=args.source, profile=args.profile, project=args.project,
                          apply=args.apply)


COMMANDS = {
    "session-scan": add_session_scan,
    "session-ingest": add_session_ingest,
    "search-sessions": add_search_sessions,
    "sessions-prune": add_sessions_prune,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "session-scan": "{files root secret_kinds skipped totals}",
    "session-ingest": "{applied changed files messages_written new profile project root secret_kinds skipped source"
                      " totals unchanged unreadable unsupported ?secret_action ?since}",
    "search-sessions": "[{at content message_id profile project role seq session_id source ?score}]",
    "sessions-prune": "{applied by_source bytes candidates cutoff filters messages older_than sessions}",
}
