"""Recall commands: recall, recall-verify, recall-diff, resume, ops.py recall-stale; and the
bundle flags that context and next --claim --recall share."""

from mindos.cli import flags, make_parser
from mindos.context import params
from mindos.errors import InvalidInput

BUNDLE_FLAGS = ("budget", "related", "related_scope", "related_handoffs", "dep_context", "related_facts",
                "related_semantic", "rerank", "recency_half_life_hours", "pinned_boost", "related_sessions")


def add_section_flags(p):
    """The opt-in pack section flags (context, recall, recall-verify, resume, next --recall)."""
    p.add_argument("--related-handoffs", type=flags.integer, metavar="N",
                   help="also pack up to N live handoffs of other tasks matching this task's text, newest first")
    p.add_argument("--dep-context", type=flags.integer, metavar="N",
                   help="also pack up to N completed prerequisites with their live handoff, latest receipt and recap")
    p.add_argument("--related-sessions", type=flags.integer, metavar="N",
                   help="also pack up to N snippets of ingested session messages matching this task's text,"
                        " newest first (at, session, seq) with their provenance")
    p.add_argument("--related-facts", type=flags.integer, metavar="N",
                   help="also pack up to N currently-valid facts matching this task's text, newest first")
    p.add_argument("--related-semantic", type=flags.integer, metavar="N",
                   help="also pack up to N live memories in scope matching this task's text (memory-fts-v1)")
    p.add_argument("--rerank", action="store_true", default=None,
                   help="order related notes by normalized BM25 x recency decay + pinned boost (rank_score)")
    p.add_argument("--recency-half-life-hours", type=flags.number, metavar="H",
                   help="rerank recency half-life in hours (default 168)")
    p.add_argument("--pinned-boost", type=flags.number, metavar="B", help="rerank bonus for pinned notes (default 0.5)")


def add_bundle_flags(p, *, budget_default=None):
    """Every bundle parameter: budget, related notes and scope, and the section flags."""
    p.add_argument("--budget", type=flags.integer, default=budget_default,
                   help=f"character budget for the packed items (default {params.DEFAULT_BUDGET})")
    p.add_argument("--related", type=flags.integer, metavar="N",
                   help=f"also pack up to N live notes of other tasks matching this task's text (0-{params.MAX_RELATED})")
    p.add_argument("--related-scope", choices=params.RELATED_SCOPES,
                   help="where related items come from: this task's project (default) or all projects")
    add_section_flags(p)


def _engine():
    """The recall engine, loaded by the commands that run it (``next`` builds these flags on
    every call and needs the engine only with --recall)."""
    from mindos.context import recall  # lazy: see the docstring

    return recall


def unsealed_sections():
    """What the recall commands add to a bundle unsealed, from an upper floor the engine may
    not name: the task's live continuation grant (``grant``, :func:`_grant_section`)."""
    return (_grant_section,)


def _grant_section(conn, task_id):
    """``{"grant": the task's live continuation grant or None}``
    (:func:`mindos.autonomy.grants.recall_section`).  A home that has never granted one has
    no grant row at all: one probe answers for it without loading the grants module."""
    if conn.execute("SELECT 1 FROM grants LIMIT 1").fetchone() is None:
        return {"grant": None}
    from mindos.autonomy import grants  # lazy: only a home with grants reads them

    return grants.recall_section(conn, task_id)


def params_from(args):
    """The validated bundle parameters of parsed ``args``."""
    values = {name: getattr(args, name, None) for name in BUNDLE_FLAGS}
    values["rerank"] = bool(values["rerank"])
    return params.make_params(**values)


def bundle_flags_given(args):
    return [name for name in BUNDLE_FLAGS if getattr(args, name, None) is not None]


def add_recall(sub):
    p = make_parser(sub, "recall",
                    "autopilot.py recall t-1a2b3c4d --agent codex --budget 6000 --related 5 --related-facts 3")
    p.add_argument("task_id", help="task id")
    p.add_argument("--agent", required=True, help="who is recalling (held_by_caller compares the lease owner)")
    add_bundle_flags(p)
    p.set_defaults(handler=cmd_recall)


def cmd_recall(conn, args):
    return _engine().recall(conn, args.task_id, agent=args.agent, params=params_from(args),
                            unsealed=unsealed_sections())


def add_recall_verify(sub):
    p = make_parser(sub, "recall-verify",
                    "autopilot.py recall-verify t-1a2b3c4d --digest <sha256> --agent codex --budget 6000 --related 5")
    p.add_argument("task_id", help="task id")
    p.add_argument("--digest", required=True, help="the digest (or core_digest) of a previous recall")
    p.add_argument("--agent", required=True, help="the agent that recalled")
    add_bundle_flags(p)
    p.set_defaults(handler=cmd_recall_verify)


def cmd_recall_verify(conn, args):
    return _engine().verify(conn, args.task_id, args.digest, agent=args.agent, params=params_from(args))


def add_recall_diff(sub):
    p = make_parser(sub, "recall-diff",
                    "autopilot.py recall-diff t-1a2b3c4d --digest <sha256>")
    p.add_argument("task_id", help="task id")
    p.add_argument("--digest", required=True, help="the digest (or core_digest) of a previous recall")
    p.set_defaults(handler=cmd_recall_diff)


def cmd_recall_diff(conn, args):
    return _engine().diff(conn, args.task_id, args.digest)


def add_resume(sub):
    p = make_parser(sub, "resume",
                    "autopilot.py resume t-1a2b3c4d --agent codex --budget 6000 --related 5")
    p.add_argument("task_id", help="task id")
    p.add_argument("--agent", required=True, help="who resumes (takes the lease when it is free)")
    flags.minutes(p, default=None, help="lease window in minutes when claiming (default 30)")
    p.add_argument("--max-active", type=flags.integer,
                   help="cap on the agent's live leases (default: env AUTOPILOT_MAX_ACTIVE_PER_OWNER; 0 = none)")
    add_bundle_flags(p)
    p.set_defaults(handler=cmd_resume)


def cmd_resume(conn, args):
    return _engine().resume(conn, args.task_id, agent=args.agent, params=params_from(args), minutes=args.minutes,
                         max_active=args.max_active, unsealed=unsealed_sections())


def add_recall_stale(sub):
    p = make_parser(sub, "recall-stale",
                    "ops.py recall-stale --recompute")
    p.add_argument("--recompute", action="store_true",
                   help="rebuild every cited bundle even when the ledger proves nothing changed since its recall")
    p.set_defaults(handler=cmd_recall_stale)


def cmd_recall_stale(conn, args):
    from mindos.cli.context import stale_worker  # lazy: only recall-stale shares a sweep
    from mindos.context import stale_shares

    report = stale_shares.sweep(conn, recompute=args.recompute, worker_command=stale_worker.command)
    return report, (0 if report["ok"] else 1)


def check_recall_flags(args):
    """``next``: bundle flags only make sense with --recall."""
    given = bundle_flags_given(args)
    if given and not args.recall:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise InvalidInput(f"{flags} need --recall")


COMMANDS = {
    "recall": add_recall,
    "recall-verify": add_recall_verify,
    "recall-diff": add_recall_diff,
    "resume": add_resume,
    "recall-stale": add_recall_stale,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "recall": "{core_digest digest pack_format recalled_at task_id truncated used_chars ?budget ?lease ?sections"
              " ?dependencies ?dependencies_packed ?dependencies_total ?grant ?handoff ?handoff_packed ?notes"
              " ?notes_dropped ?notes_expired_excluded ?notes_expired_pinned_packed ?notes_packed"
              " ?notes_pinned_packed ?notes_total_live ?receipts ?task ...}",
    "recall-verify": "{current_core_digest current_digest digest fresh params task_id}",
    "recall-diff": "{agent changes current_core_digest current_digest digest event_id fresh recalled_at"
                   " sections_changed task_id unchanged ?pack_format_changed}",
    "resume": "{action agent lease_epoch lease_expires_at recall recall_digest task_id}",
    "recall-stale": "{checked counts items ok}",
}
