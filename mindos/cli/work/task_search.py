"""Task search: search."""

from mindos.work import task_search
from mindos.cli import flags, make_parser


def add_search(sub):
    p = make_parser(sub, "search",
                    'autopilot.py search "rate limit" --rank --status queued --project Trove --tag infra')
    p.add_argument("query", help="text to find (wildcards and FTS5 syntax are taken literally)")
    p.add_argument("--status", help="only tasks in this status")
    flags.project(p, help="only this project")
    p.add_argument("--priority", help="only this priority (P0..P3)")
    p.add_argument("--tag", help="only tasks carrying this tag")
    flags.limit(p, 50, "at most this many results (default 50)")
    p.add_argument("--rank", action="store_true",
                   help="BM25-ranked full-text search; every hit carries a score (more negative = more relevant)")
    p.set_defaults(handler=cmd_search)


def cmd_search(conn, args):
    return task_search.search(conn, args.query, status=args.status, project=args.project, priority=args.priority,
                         tag=args.tag, limit=args.limit, rank=args.rank)


COMMANDS = {
    "search": add_search,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "search": "[{@task ?score}]",
}
