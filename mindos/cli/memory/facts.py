"""Temporal fact graph commands: fact-assert, fact-retract, facts, search-facts."""

from mindos.cli import flags, make_parser
from mindos.memory import facts


def add_fact_assert(sub):
    p = make_parser(sub, "fact-assert",
                    "autopilot.py fact-assert --subject service-auth --predicate uses --object postgres-14"
                    " --source codex --task t1 --valid-hours 48")
    p.add_argument("--subject", required=True, help="subject token ([a-z0-9:_./-])")
    p.add_argument("--predicate", required=True, help="predicate token ([a-z0-9:_./-])")
    p.add_argument("--object", required=True, help="object token ([a-z0-9:_./-])")
    p.add_argument("--source", required=True, help="the asserting agent")
    p.add_argument("--task", help="originating task (must exist; a soft link)")
    p.add_argument("--valid-hours", type=flags.number, help="validity window in hours (default: open-ended)")
    p.set_defaults(handler=cmd_fact_assert)


def cmd_fact_assert(conn, args):
    return facts.assert_fact(conn, subject=args.subject, predicate=args.predicate, obj=args.object,
                             source=args.source, task=args.task, valid_hours=args.valid_hours)


def add_fact_retract(sub):
    p = make_parser(sub, "fact-retract",
                    'autopilot.py fact-retract 7 --reason "migrated to postgres-16"')
    p.add_argument("fact_id", help="id of the currently-valid fact")
    p.add_argument("--reason", required=True, help="why it stopped being true")
    p.set_defaults(handler=cmd_fact_retract)


def cmd_fact_retract(conn, args):
    return facts.retract(conn, args.fact_id, reason=args.reason)


def add_facts(sub):
    p = make_parser(sub, "facts",
                    "autopilot.py facts --subject service-auth --all")
    p.add_argument("--subject", help="only this subject")
    p.add_argument("--predicate", help="only this predicate")
    p.add_argument("--object", help="only this object")
    p.add_argument("--all", action="store_true", help="include retracted and expired facts (adds live)")
    flags.limit(p, default=100, help="at most this many (default 100)")
    p.set_defaults(handler=cmd_facts)


def cmd_facts(conn, args):
    return facts.list_facts(conn, subject=args.subject, predicate=args.predicate, obj=args.object,
                            include_all=args.all, limit=args.limit)


def add_search_facts(sub):
    p = make_parser(sub, "search-facts",
                    "autopilot.py search-facts postgres --rank")
    p.add_argument("query", help="words to look for")
    p.add_argument("--rank", action="store_true", help="ranked retrieval with a score (higher = better)")
    p.add_argument("--all", action="store_true", help="include closed windows (adds live)")
    flags.limit(p, default=50, help="at most this many (default 50)")
    p.set_defaults(handler=cmd_search_facts)


def cmd_search_facts(conn, args):
    return facts.search(conn, args.query, rank=args.rank, include_all=args.all, limit=args.limit)


COMMANDS = {
    "fact-assert": add_fact_assert,
    "fact-retract": add_fact_retract,
    "facts": add_facts,
    "search-facts": add_search_facts,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "fact-assert": "{@fact deduplicated ?secret_action ?secret_kinds}",
    "fact-retract": "{@fact live}",
    "facts": "[{@fact ?live}]",
    "search-facts": "[{@fact ?score}]",
}
