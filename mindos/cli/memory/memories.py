"""Semantic memory commands: memory-retain, memory-list, memory-forget, memory-import."""

from mindos.cli import flags, make_parser
from mindos.memory import memories


def add_memory_retain(sub):
    p = make_parser(sub, "memory-retain",
                    'autopilot.py memory-retain --text "auth sessions expire after 30 days" --kind decision'
                    " --project Auth --tag auth")
    p.add_argument("--text", required=True, help="the memory (non-empty; stored trimmed)")
    p.add_argument("--kind", default=memories.DEFAULT_KIND, help="a lowercase kind token (default fact)")
    flags.project(p, help="the project it belongs to (default: fleet-wide, visible to every project)")
    p.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")
    p.add_argument("--source", help=f"agent/operator that retained it (default {memories.DEFAULT_SOURCE})")
    flags.secret(p, "text")
    p.set_defaults(handler=cmd_memory_retain)


def cmd_memory_retain(conn, args):
    return memories.retain(conn, args.text, kind=args.kind, project=args.project, tags=args.tag,
                           source=args.source, redact=args.redact, allow_secret=args.allow_secret)


def add_memory_list(sub):
    p = make_parser(sub, "memory-list",
                    "autopilot.py memory-list --project Auth --kind decision --since 2026-08-01T00:00:00Z")
    flags.project(p, help="only this project's memories")
    p.add_argument("--query", help="only memories whose text contains this substring")
    p.add_argument("--kind", help="only memories of this kind (decision, fact, commit, ...)")
    p.add_argument("--since", help="only memories created at or after this ISO 8601 instant")
    p.add_argument("--all", action="store_true", help="include retracted memories")
    flags.limit(p, default=100, help="at most this many (default 100)")
    p.set_defaults(handler=cmd_memory_list)


def cmd_memory_list(conn, args):
    return memories.list_memories(conn, project=args.project, query=args.query, kind=args.kind, since=args.since,
                                  include_all=args.all, limit=args.limit)


def add_memory_forget(sub):
    p = make_parser(sub, "memory-forget",
                    "autopilot.py memory-forget mem-18da4972e0ff92c8 --superseded-by mem-0a1b2c3d4e5f6071")
    p.add_argument("memory_id", help="id of the live memory to retract")
    p.add_argument("--superseded-by", help="the live memory that replaced it")
    p.set_defaults(handler=cmd_memory_forget)


def cmd_memory_forget(conn, args):
    return memories.forget(conn, args.memory_id, superseded_by=args.superseded_by)


def add_memory_import(sub):
    p = make_parser(sub, "memory-import",
                    "autopilot.py memory-import ~/.hermes/hindsight/bank.jsonl --apply")
    p.add_argument("bank", help="path of the bank.jsonl file")
    p.add_argument("--apply", action="store_true", help="write the new memories (default: report only)")
    p.set_defaults(handler=cmd_memory_import)


def cmd_memory_import(conn, args):
    return memories.import_bank(conn, args.bank, apply=args.apply)


def add_memory_ingest_git(sub):
    from mindos.memory import git_history  # lazy: only this declaration reads its bounds

    p = make_parser(sub, "memory-ingest-git",
                    "autopilot.py memory-ingest-git --repo ~/src/gateway --project Trove --since 2026-06-01 --apply")
    p.add_argument("--repo", required=True,
                   help="the repository's top directory (read-only; a symlink, or a symlinked .git, is refused)")
    flags.project(p, help="the project the commit memories belong to", required=True)
    p.add_argument("--since", help="only commits made at or after this ISO 8601 date or instant")
    p.add_argument("--max-commits", type=flags.integer, default=git_history.DEFAULT_MAX_COMMITS,
                   help=f"read at most this many commits, newest first (default {git_history.DEFAULT_MAX_COMMITS},"
                        f" at most {git_history.MAX_COMMITS}); more_commits says when older ones were left")
    p.add_argument("--apply", action="store_true", help="write the new memories (default: report only)")
    p.set_defaults(handler=cmd_memory_ingest_git)


def cmd_memory_ingest_git(conn, args):
    from mindos.memory import git_history  # lazy: only this command loads the git reader

    return git_history.ingest(conn, args.repo, args.project, since=args.since, max_commits=args.max_commits,
                              apply=args.apply)


COMMANDS = {
    "memory-retain": add_memory_retain,
    "memory-list": add_memory_list,
    "memory-forget": add_memory_forget,
    "memory-import": add_memory_import,
    "memory-ingest-git": add_memory_ingest_git,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "memory-retain": "{@memory deduplicated ?secret_action ?secret_kinds}",
    "memory-list": "[{@memory}]",
    "memory-forget": "{@memory}",
    "memory-import": "{already_present applied ids lines malformed secret_blocked source ?imported ?would_import}",
    "memory-ingest-git": "{already_present applied commits_read empty ids log_truncated max_commits"
                         " messages_truncated more_commits project repo secret_skipped since ?ingested ?would_ingest}",
}
