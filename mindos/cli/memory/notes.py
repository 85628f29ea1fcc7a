"""Shared-memory note commands: note, notes, supersede-note, note-history, search-notes, notes-expired."""

from mindos.memory import notes
from mindos.cli import flags, make_parser


def add_note(sub):
    p = make_parser(sub, "note",
                    'autopilot.py note t-1a2b3c4d --kind fact --content "API rate limit is 60/min" --source hermes')
    p.add_argument("task_id", help="task id")
    p.add_argument("--kind", default=notes.DEFAULT_KIND, help=f"one of {', '.join(notes.KINDS)} (default fact)")
    flags.long_text(p, "content", required=True, help="the note text (non-empty; stored trimmed)")
    p.add_argument("--source", help=f"agent/operator that wrote it (default {notes.DEFAULT_SOURCE})")
    p.add_argument("--pinned", action="store_true", help="critical: packs first and survives tight budgets")
    p.add_argument("--ttl-hours", type=flags.number, help="lifetime in hours; past it an unpinned note retires")
    flags.secret(p)
    flags.request_id(p, actor="source")
    p.set_defaults(handler=cmd_note)


def cmd_note(conn, args):
    return notes.add(conn, args.task_id, content=args.content, kind=args.kind, source=args.source,
                     pinned=args.pinned, ttl_hours=args.ttl_hours, redact=args.redact,
                     allow_secret=args.allow_secret)


def add_notes(sub):
    p = make_parser(sub, "notes", "autopilot.py notes t-1a2b3c4d --all")
    p.add_argument("task_id", help="task id")
    p.add_argument("--all", action="store_true", help="include superseded history")
    p.set_defaults(handler=cmd_notes)


def cmd_notes(conn, args):
    return notes.list_notes(conn, args.task_id, include_all=args.all)


def add_supersede_note(sub):
    p = make_parser(sub, "supersede-note",
                    'autopilot.py supersede-note 12 --content "rate limit raised to 120/min"')
    p.add_argument("note_id", help="id of the live note to supersede")
    flags.long_text(p, "content", required=True, help="the replacement text")
    p.add_argument("--kind", help="kind of the new note (default: the old note's kind)")
    p.add_argument("--source", help="who wrote the replacement (default: the old note's source)")
    p.add_argument("--ttl-hours", type=flags.number, help="lifetime of the new note (default: none, immortal)")
    flags.secret(p)
    p.set_defaults(handler=cmd_supersede_note)


def cmd_supersede_note(conn, args):
    return notes.supersede(conn, args.note_id, content=args.content, kind=args.kind, source=args.source,
                           ttl_hours=args.ttl_hours, redact=args.redact, allow_secret=args.allow_secret)


def add_note_history(sub):
    p = make_parser(sub, "note-history",
                    "autopilot.py note-history 12")
    p.add_argument("note_id", help="any note id in the chain")
    p.set_defaults(handler=cmd_note_history)


def cmd_note_history(conn, args):
    return notes.history(conn, args.note_id)


def add_search_notes(sub):
    p = make_parser(sub, "search-notes",
                    'autopilot.py search-notes "postgres pool" --rank --rerank --recency-half-life-hours 24')
    p.add_argument("query", help="text to look for (taken literally)")
    p.add_argument("--kind", help="only notes of this kind")
    flags.project(p, help="only notes on tasks of this project")
    p.add_argument("--status", help="only notes on tasks in this status")
    p.add_argument("--rank", action="store_true", help="BM25-ranked, all tokens required; hits carry score")
    p.add_argument("--include-expired", action="store_true", help="also surface retired (expired unpinned) notes")
    p.add_argument("--rerank", action="store_true",
                   help="order by normalized BM25 x recency decay + pinned boost (rank_score); without --rank"
                        " every substring hit counts as a full match")
    p.add_argument("--recency-half-life-hours", type=flags.number, metavar="H",
                   help="rerank recency half-life in hours (default 168)")
    p.add_argument("--pinned-boost", type=flags.number, metavar="B", help="rerank bonus for pinned notes (default 0.5)")
    flags.limit(p, 50, "at most this many (default 50)")
    p.set_defaults(handler=cmd_search_notes)


def cmd_search_notes(conn, args):
    return notes.search(conn, args.query, kind=args.kind, project=args.project, status=args.status,
                        rank=args.rank, include_expired=args.include_expired, limit=args.limit, rerank=args.rerank,
                        recency_half_life_hours=args.recency_half_life_hours, pinned_boost=args.pinned_boost)


def add_notes_expired(sub):
    p = make_parser(sub, "notes-expired",
                    "ops.py notes-expired")
    p.set_defaults(handler=cmd_notes_expired)


def cmd_notes_expired(conn, args):
    return notes.expired(conn)


COMMANDS = {
    "note": add_note,
    "notes": add_notes,
    "supersede-note": add_supersede_note,
    "note-history": add_note_history,
    "search-notes": add_search_notes,
    "notes-expired": add_notes_expired,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "note": "{@note deduplicated similar_to ?promoted_to_pinned ?revived ?secret_action ?secret_kinds}",
    "notes": "[{@note}]",
    "supersede-note": "{note superseded ?secret_action ?secret_kinds}",
    "note-history": "{chain head_id length note_id}",
    "search-notes": "[{@note project task_status task_title ?rank_score ?score}]",
    "notes-expired": "{notes revive supersede total}",
}
