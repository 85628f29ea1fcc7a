"""The one ranked search across every memory surface (memory-search) and its optional
semantic layer (memory-embed, memory-status)."""

from mindos.cli import flags, make_parser
from mindos.memory import memory_search


def add_memory_search(sub):
    p = make_parser(sub, "memory-search",
                    'autopilot.py memory-search "how long do login sessions last" --project Auth --limit 5')
    p.add_argument("query", help="words to look for")
    flags.project(p, help="the project asking: its rows plus project-less ones")
    p.add_argument("--scope", choices=("project", "global"),
                   help="project (default with --project) or global (default without)")
    flags.limit(p, default=10, help="at most this many hits (default 10)")
    p.add_argument("--include-history", action="store_true",
                   help="also superseded notes/handoffs, retracted memories and closed fact windows (outdated)")
    p.add_argument("--semantic", action="store_true",
                   help="fuse the lexical ranking with the stored vectors' (reciprocal rank fusion; see memory-embed)")
    p.set_defaults(handler=cmd_memory_search)


def cmd_memory_search(conn, args):
    if args.semantic:
        if args.include_history:
            from mindos.errors import InvalidInput  # lazy: only this refusal needs it

            raise InvalidInput("--semantic cannot be combined with --include-history")
        return memory_search.semantic_search(conn, args.query, project=args.project, scope=args.scope, limit=args.limit)
    return memory_search.memory_search(conn, args.query, project=args.project, scope=args.scope, limit=args.limit,
                                include_history=args.include_history)


def add_memory_embed(sub):
    p = make_parser(sub, "memory-embed", "autopilot.py memory-embed --apply")
    p.add_argument("--apply", action="store_true", help="compute and store the vectors (default: report what lacks one)")
    p.set_defaults(handler=cmd_memory_embed)


def cmd_memory_embed(conn, args):
    from mindos.memory import embed  # lazy: the semantic layer loads only for its commands

    return embed.embed(conn, apply=args.apply)


def add_memory_status(sub):
    p = make_parser(sub, "memory-status", "autopilot.py memory-status")
    p.set_defaults(handler=cmd_memory_status)


def cmd_memory_status(conn, args):
    from mindos.memory import embed  # lazy: the semantic layer loads only for its commands

    return embed.status(conn)


COMMANDS = {
    "memory-search": add_memory_search,
    "memory-embed": add_memory_embed,
    "memory-status": add_memory_status,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "memory-search": "[{created_at id kind project task_id text ?score ...}]",
    "memory-embed": "{applied dims embedded encoder lacking seconds}",
    "memory-status": "{builtin coverage dims embedded encoder other_encoders rows surfaces ?learned}",
}
