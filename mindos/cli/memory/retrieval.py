"""The one ranked search across every memory surface: memory-search."""

from mindos.cli import flags, make_parser
from mindos.memory import search


def add_memory_search(sub):
    p = make_parser(sub, "memory-search",
                    'autopilot.py memory-search "how long do login sessions last" --project Auth --limit 5')
    p.add_argument("query", help="words to look for")
    p.add_argument("--project", help="the project asking: its rows plus project-less ones")
    p.add_argument("--scope", choices=("project", "global"),
                   help="project (default with --project) or global (default without)")
    p.add_argument("--limit", type=flags.integer, default=10, help="at most this many hits (default 10)")
    p.add_argument("--include-history", action="store_true",
                   help="also superseded notes/handoffs, retracted memories and closed fact windows (outdated)")
    p.set_defaults(handler=cmd_memory_search)


def cmd_memory_search(conn, args):
    return search.memory_search(conn, args.query, project=args.project, scope=args.scope, limit=args.limit,
                                include_history=args.include_history)


COMMANDS = {
    "memory-search": add_memory_search,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "memory-search": "[{created_at id kind project task_id text ?score ...}]",
}
