"""Foundation commands beyond the registry: search, tag, untag, receipt, dashboard."""

from mindos import dashboard, receipts, search, tags
from mindos.cli import make_parser


def add_search(sub):
    p = make_parser(sub, "search", "Search task text fields (substring; --rank for BM25 relevance).",
                    'autopilot.py search "rate limit" --rank --status queued --project Trove --tag infra')
    p.add_argument("query", help="text to find (wildcards and FTS5 syntax are taken literally)")
    p.add_argument("--status", help="only tasks in this status")
    p.add_argument("--project", help="only this project")
    p.add_argument("--priority", help="only this priority (P0..P3)")
    p.add_argument("--tag", help="only tasks carrying this tag")
    p.add_argument("--limit", type=int, default=50, help="at most this many results (default 50)")
    p.add_argument("--rank", action="store_true",
                   help="BM25-ranked full-text search; every hit carries a score (more negative = more relevant)")
    p.set_defaults(handler=cmd_search)


def cmd_search(conn, args):
    return search.search(conn, args.query, status=args.status, project=args.project, priority=args.priority,
                         tag=args.tag, limit=args.limit, rank=args.rank)


def add_tag(sub):
    p = make_parser(sub, "tag", "Attach capability/scope tags to a task (idempotent, audited).",
                    "autopilot.py tag t-1a2b3c4d --tag autopilot-safe --tag client:trove")
    p.add_argument("task_id", help="task id")
    p.add_argument("--tag", action="append", required=True, help="tag to attach (repeatable; a-z 0-9 : _ . / -)")
    p.set_defaults(handler=cmd_tag)


def cmd_tag(conn, args):
    return tags.add(conn, args.task_id, args.tag)


def add_untag(sub):
    p = make_parser(sub, "untag", "Remove a tag from a task (audited; an absent tag fails).",
                    "autopilot.py untag t-1a2b3c4d --tag client:trove")
    p.add_argument("task_id", help="task id")
    p.add_argument("--tag", action="append", required=True, help="tag to remove (repeatable)")
    p.set_defaults(handler=cmd_untag)


def cmd_untag(conn, args):
    return tags.remove(conn, args.task_id, args.tag)


def add_receipt(sub):
    p = make_parser(sub, "receipt", "Attach a sealed evidence receipt (JSON payload) to a task.",
                    """autopilot.py receipt t-1a2b3c4d --kind verification --payload '{"tests":"pass","health":200}'""")
    p.add_argument("task_id", help="task id")
    p.add_argument("--kind", required=True, help="receipt kind, e.g. verification, ci, commit (a-z 0-9 : _ . / -)")
    p.add_argument("--payload", required=True, help="the evidence as a JSON value (at most 1 MiB)")
    p.set_defaults(handler=cmd_receipt)


def cmd_receipt(conn, args):
    return receipts.add_json(conn, args.task_id, args.kind, args.payload)


def add_dashboard(sub):
    p = make_parser(sub, "dashboard", "Show a compact text overview: counts, leases, overdue and queued work.",
                    "autopilot.py dashboard")
    p.set_defaults(handler=cmd_dashboard)


def cmd_dashboard(conn, args):
    return dashboard.render(conn)


COMMANDS = {
    "search": add_search,
    "tag": add_tag,
    "untag": add_untag,
    "receipt": add_receipt,
    "dashboard": add_dashboard,
}
