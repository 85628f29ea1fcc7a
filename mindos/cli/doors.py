"""The front doors and their commands: each command is declared here, once.

A door is one script (``autopilot.py``, ``ops.py``, ...) with its installed name, its
description and its commands in help sections, in reading order.  Each command names the
CLI module that builds its parser and handles it (under ``mindos/cli/``, mirroring the core
module it drives) and its one-line summary.  Routing and the grouped ``--help`` read only
this table, so a call imports just the module of the command it runs.
"""

from mindos.core import load_module


class Door:
    """One front door.  script: the checkout script name; installed: the console-script
    name pip installs; sections: ((section title, ((command, cli module, summary), ...)),
    ...) in reading order.  (A plain class: a namedtuple is costly to create on every call,
    typing's NamedTuple costlier to import.)"""

    __slots__ = ("script", "installed", "description", "sections")

    def __init__(self, script, installed, description, sections):
        self.script, self.installed, self.description, self.sections = script, installed, description, sections


AUTOPILOT = Door(
    "autopilot.py", "mindos-autopilot",
    'MindOS autopilot: execution truth and shared memory for AI coding agents.',
    (
        ('Setup and tasks', (
            ('init', 'work.tasks',
             'Create the home and its database (idempotent).'),
            ('create', 'work.tasks',
             'Create a queued task.'),
            ('list', 'work.tasks',
             'List tasks by priority, most recently updated first.'),
            ('show', 'views.show',
             'Show a task with receipts, audit trail, dependencies and dependents.'),
            ('update', 'work.tasks',
             "Change a task's status or correct its fields ('' clears a clearable field)."),
            ('tag', 'work.tags',
             'Attach capability/scope tags to a task (idempotent, audited).'),
            ('untag', 'work.tags',
             'Remove a tag from a task (audited; an absent tag fails).'),
            ('search', 'work.task_search',
             'Search task text fields (substring; --rank for BM25 relevance).'),
            ('similar', 'work.dedup',
             'List open same-project tasks whose title+description restate this task (token Jaccard >= threshold), most similar first.'),
        )),
        ('Dependencies', (
            ('dep', 'work.graph',
             'Add a dependency edge: TASK waits for PREREQ (cycles rejected; missing ids kept).'),
            ('dep-remove', 'work.graph',
             'Remove a mistaken dependency edge (audited dependency_removed).'),
            ('blocked-by', 'work.graph',
             'Transitive prerequisites of a task, depth-tagged, with a blocked flag.'),
            ('impact', 'work.graph',
             'Transitive dependents of a task: what is waiting on it.'),
            ('critical-path', 'work.graph',
             'Longest chain of still-open prerequisite work (minimum serial waves).'),
            ('plan', 'work.graph',
             'Parallel dispatch-wave schedule of the open graph (read-only).'),
        )),
        ('Leases and lifecycle', (
            ('claim', 'work.leases',
             'Take the lease on a task (bumps its fencing epoch).'),
            ('heartbeat', 'work.leases',
             'Report liveness and progress: status running, lease extended to --minutes (default 15), never shortened; --progress-state with --stall-deadline arms stall detection.'),
            ('renew', 'work.leases',
             'Extend a live lease from now, keeping status and epoch.'),
            ('release', 'work.leases',
             'Hand a live lease back to the queue (no retry budget consumed).'),
            ('transfer', 'work.leases',
             'Reassign a live lease to another agent (bumps the epoch, keeps status).'),
            ('leases', 'work.leases',
             'List held leases, soonest expiry first (live ones unless --all).'),
            ('complete', 'work.lifecycle',
             'Complete a task you hold a live lease on, citing evidence.'),
            ('fail', 'work.lifecycle',
             'Record a failed attempt: requeue under backoff, or fail past the retry budget.'),
            ('cancel', 'work.lifecycle',
             'Cancel a task (never over a foreign or expired lease).'),
            ('defer', 'work.lifecycle',
             "Park a task out of dispatch until an instant ('' clears); status unchanged."),
            ('block', 'work.lifecycle',
             'Park a task as blocked with a reason (releases your own live lease).'),
            ('unblock', 'work.lifecycle',
             'Requeue a blocked task and clear its reason.'),
        )),
        ('Dispatch and evidence', (
            ('next', 'work.dispatch',
             'Pick the best ready queued task (priority with inheritance and aging, deadline, age); --claim leases it atomically. Prints {"task": ...} (null when nothing is dispatchable).'),
            ('receipt', 'work.receipts',
             'Attach a sealed evidence receipt (JSON payload) to a task.'),
            ('run-receipt', 'work.receipts',
             'Seal one agent run on a task (harness, model, session, workspace, outcome) as a receipt; kind run when it ended ok, so a definition of done can require it.'),
        )),
        ('Shared memory', (
            ('note', 'memory.notes',
             'Add a provenance-tagged note to a task (exact duplicates return the existing note).'),
            ('notes', 'memory.notes',
             "List a task's live notes, oldest first."),
            ('supersede-note', 'memory.notes',
             'Atomically retire a note in favour of a new one (keeps history).'),
            ('note-history', 'memory.notes',
             "Walk a note's supersession chain, oldest predecessor to newest successor."),
            ('search-notes', 'memory.notes',
             'Keyword search over live notes (substring, or BM25 with --rank).'),
        )),
        ('Handoffs', (
            ('handoff', 'memory.handoffs',
             "Record the task's live handoff (supersedes the previous one; identical payloads dedupe)."),
            ('handoff-current', 'memory.handoffs',
             "Show the task's live handoff, the recovery point (exit 1 when there is none)."),
            ('handoffs', 'memory.handoffs',
             "List the task's live handoff, or with --all its full chain oldest first."),
            ('handoff-history', 'memory.handoffs',
             "Walk a handoff's supersession chain oldest to newest from any link."),
            ('ack', 'memory.handoffs',
             "Acknowledge the task's live handoff as its recipient (idempotent)."),
            ('handoff-inbox', 'memory.handoffs',
             'List live handoffs addressed to an agent across the fleet.'),
            ('search-handoffs', 'memory.handoffs',
             'Keyword search over handoffs (objective/status/agents), live by default.'),
        )),
        ('Semantic memory and facts', (
            ('memory-retain', 'memory.memories',
             'Retain a memory (content-addressed per project: retaining it twice is a no-op); audited.'),
            ('memory-list', 'memory.memories',
             'List memories newest first (live only unless --all).'),
            ('memory-forget', 'memory.memories',
             'Retract a memory so it never packs again (never deleted; audited).'),
            ('memory-import', 'memory.memories',
             'Import a legacy Hindsight bank.jsonl (dry run unless --apply; the file is only read).'),
            ('memory-ingest-git', 'memory.memories',
             "Retain a repository's commit messages as project memories, one per commit (dry run unless --apply; bounded, guarded, re-runs add nothing)."),
            ('memory-search', 'memory.memory_search',
             'One ranked list across live notes, memories, facts and handoffs (stems, prefixes, synonyms, learned associations, recency; outdated rows only with --include-history, always below their replacement; --semantic fuses stored vectors).'),
            ('memory-embed', 'memory.memory_search',
             'Compute and store vectors for the rows lacking one from the configured encoder (MINDOS_EMBEDDER=module:callable, else the built-in learned one); dry run unless --apply.'),
            ('memory-status', 'memory.memory_search',
             "The semantic layer's encoder identity and vector coverage per surface, and the learned associations' size."),
            ('fact-assert', 'memory.facts',
             'Assert a subject-predicate-object fact with provenance and an optional validity window (an identical currently-valid triple is deduplicated).'),
            ('fact-retract', 'memory.facts',
             "Close a currently-valid fact's window now, with a reason (audited)."),
            ('facts', 'memory.facts',
             'List currently-valid facts, newest first (--all: closed windows too, with live).'),
            ('search-facts', 'memory.facts',
             'Search facts by subject/predicate/object/source (--rank: ranked, with stems and synonyms).'),
        )),
        ('Context and recall', (
            ('context', 'context.pack',
             "Pack a task's header, live handoff, unsatisfied deps and live notes (pinned first) within a character budget; --related N adds matching notes of other tasks, and the section flags add neighbouring handoffs, prerequisite evidence, facts and memories."),
            ('recall', 'context.recall',
             'Session bootstrap: the context pack plus lease state and the latest 3 receipts, sealed with digest and core_digest; audited context_recalled.'),
            ('recall-verify', 'context.recall',
             "Recompute a task's recall bundle with the same parameters (no audit write) and report whether a digest is still fresh."),
            ('recall-diff', 'context.recall',
             'Section by section, what moved since the audited recall that produced a digest (recomputed with the recorded parameters; read-only).'),
            ('resume', 'context.recall',
             'Recover a session in one call: claim the task if its lease is free (or keep your live one) and return the sealed recall bundle; audited session_resumed.'),
            ('prime', 'context.prime',
             "Session-start pack for an agent: its live leases, unacked inbox, pinned constraints, next task and the held task's pack; bounded, redacted, digest-sealed, audited."),
        )),
        ('Botmail (bot-to-bot chat)', (
            ('botmail-peer-allow', 'comms.botmail',
             'Allow a peer bot to write to a recipient in one profile with given content classes and a replay budget (changes bump the capability epoch).'),
            ('botmail-peer-revoke', 'comms.botmail',
             'Revoke a peer at a recipient (bumps the epoch; idempotent).'),
            ('botmail-peers', 'comms.botmail',
             'List the botmail peer allowlist.'),
            ('botmail-send', 'comms.botmail',
             'Deliver one botmail envelope (or compose it from flags); prints its receipt: accepted, rejected (with reason), duplicate, expired or failed (exit 1 unless accepted or duplicate).'),
            ('botmail-inbox', 'comms.botmail',
             "List a bot's delivered messages, newest first."),
            ('botmail-ack', 'comms.botmail',
             'Acknowledge a delivered message as its recipient (idempotent).'),
            ('botmail-receipts', 'comms.botmail',
             'List delivery receipts, newest first.'),
            ('botmail-context', 'comms.botmail',
             "Bounded, redacted bot-chat context of one recipient's profile, with a digest."),
        )),
        ('Agent harnesses', (
            ('setup', 'harness.setup',
             'Wire MindOS into Claude Code (session-start hooks, MCP server, CLAUDE.md loop), Codex (MCP server entry + AGENTS.md loop) or Hermes (first-turn gateway hook) with the home pinned; setup check runs each; idempotent, --dry-run, --remove.'),
            ('session-start', 'harness.hooks',
             "Claude Code SessionStart hook: prime for the session's agent (claude-code-<session>) and the project of its working directory, read from the event on stdin; bounded by --seconds."),
            ('stop-gate', 'harness.hooks',
             "Claude Code Stop hook: block the stop once when the session still holds a lease with no handoff or receipt since its claim."),
        )),
        ('Sessions', (
            ('session-scan', 'memory.sessions',
             'Redacted read-only inventory of a transcript store: per-file counts and kind-only secret findings.'),
            ('session-ingest', 'memory.sessions',
             'Index agent transcripts (Claude Code, Codex, generic role/content JSONL) into the session cache; dry run unless --apply.'),
            ('search-sessions', 'memory.sessions',
             'Keyword search over ingested session messages with provenance (substring, or BM25 with --rank).'),
            ('sessions-prune', 'memory.sessions',
             'Bounded retention pass over the session cache (--older-than is mandatory); dry run unless --apply.'),
        )),
        ('Views and the ledger', (
            ('dashboard', 'views.dashboard',
             'Show a compact text overview: counts, leases, overdue and queued work.'),
            ('metrics', 'views.metrics',
             'Print the JSON observability snapshot.'),
            ('events', 'store.ledger',
             'Query the audit ledger, newest first.'),
            ('verify-chain', 'store.ledger',
             'Recompute the audit hash chain and report tampering (exit 1 if broken).'),
        )),
        ('Autonomy grants', (
            ('declare', 'autonomy.grants',
             'Grant a task time-limited, model-bound autonomous continuation (audited; supersedes the live grant).'),
            ('grant-check', 'autonomy.grants',
             'Check whether a model may continue a task at a level now (exit 1 refused: no grant, expired, wrong model, level too low).'),
        )),
        ('Self-description', (
            ('protocol', 'protocol',
             "The sealed, machine-readable catalogue of every door's commands, flags, output keys, error and exit codes, and versions (generated from the declarations)."),
        )),
        ('Tour', (
            ('demo', 'demo.tour',
             'Run the main cycle in a throwaway home and narrate it (never touches your home).'),
        )),
    ),
)

OPS = Door(
    "ops.py", "mindos-ops",
    'MindOS operations: safe, dry-run-first sweeps over the autopilot home.',
    (
        ('Leases and escalation', (
            ('recover', 'work.sweeps',
             'Requeue stale leases under backoff; fail tasks past the retry budget.'),
            ('escalate', 'work.sweeps',
             'Bump every overdue non-terminal task one priority level (SLA sweep).'),
            ('escalate-stalled', 'work.progress',
             'Escalate every stalled lease (live, progress state unchanged past its stall deadline) once: audited, then a decision for a person.'),
        )),
        ('Approvals and policy', (
            ('approval', 'work.approvals',
             'Record a human approval as a hash-sealed approval receipt.'),
            ('unverified-completions', 'work.approvals',
             'List completed tasks without evidence (no_receipts, evidence_receipt_missing); read-only.'),
            ('policy', 'work.policies',
             "Report what a project's policy decides for an action (merge, deploy, dispatch)."),
        )),
        ('Memory hygiene', (
            ('notes-expired', 'memory.notes',
             'List every expired live note fleet-wide with the action it needs (revive / supersede).'),
            ('secret-scan', 'memory.secret_sweep',
             'Read-only sweep of live notes and handoffs for credential-shaped content (kinds and row ids only; exit 1 when anything is found).'),
            ('consolidate', 'memory.consolidate',
             'Merge near-identical live notes per task into one canonical note (history-preserving).'),
        )),
        ('Duplicates, handoffs and recall', (
            ('dup-tasks', 'work.dedup',
             'Cluster open tasks that restate each other, per project (canonical = oldest), with a suggested action; read-only.'),
            ('handoff-check', 'memory.handoffs',
             'Lint live handoffs against the handoff protocol (read-only; exit 1 on problems).'),
            ('recall-stale', 'context.recall',
             'Fleet sweep: for every live handoff citing a recall digest, recompute the bundle with the recorded parameters (read-only; exit 1 when any is not fresh; a large sweep is shared between worker processes, one per CPU).'),
        )),
        ('Health and repair', (
            ('doctor', 'recovery.doctor',
             'Read-only consistency sweep naming every problem by kind and ids (exit 1 when not ok); never mutates.'),
            ('fts-rebuild', 'recovery.reindex',
             'Find drift in every full-text index (fts5vocab) and rebuild the drifted ones, then relearn the'
             ' term associations memory-search expands queries with (--dry-run reports only).'),
            ('receipts-sweep', 'recovery.receipt_sweep',
             'Adopt complete orphan receipt files whose task exists, quarantine the rest (dry run unless --apply).'),
        )),
        ('Snapshots', (
            ('snapshot', 'recovery.snapshot',
             'Stream a signed autopilot-snapshot-v2 tar: a consistent copy of the database, a sealed manifest'
             ' of table digests, and the receipt files (default under backups/).'),
            ('snapshot-check', 'recovery.snapshot',
             "Verify a snapshot's seal and every member's digest, streaming (exit 1 if any byte changed)."),
            ('snapshot-restore', 'recovery.snapshot',
             'Rebuild the database from a verified snapshot in one transaction (--force replaces a non-empty one).'),
        )),
        ('Checkpoints', (
            ('checkpoint', 'recovery.checkpoint',
             'Seal the audit chain head into an autopilot-checkpoint-v1 file (default under backups/).'),
            ('checkpoint-check', 'recovery.checkpoint',
             'Verify a checkpoint seal and its containment in the live chain (exit 1 on truncation).'),
        )),
        ('Archival', (
            ('archive', 'recovery.archive',
             'Seal terminal tasks (with their rows and receipt files) into a streamed autopilot-archive-v2 tar, then remove them.'),
            ('archive-check', 'recovery.archive',
             "Verify an archive's seal (exit 1 if any byte changed)."),
            ('archive-restore', 'recovery.archive',
             'Re-import archived tasks with their children (collisions refused unless --force).'),
        )),
        ('Work orders', (
            ('export-task', 'recovery.workorder',
             "Seal one task's full execution state (rows, receipt files, facts) into autopilot-workorder-v1."),
            ('import-task', 'recovery.workorder',
             'Verify and merge a work order into this home (idempotent; leases sanitized; --dry-run previews).'),
        )),
        ('Home selection', (
            ('home-doctor', 'recovery.homes',
             'Read-only doctor sweep of an explicit home (exit 1 when not ok).'),
            ('home-show', 'recovery.homes',
             'Show which home is active and which rule chose it.'),
            ('home-select', 'recovery.homes',
             'Select a home via the selector file after a clean doctor sweep (refuses the rollback default).'),
            ('home-deselect', 'recovery.homes',
             'Plan (or with --apply do) the one-command rollback to ~/.hermes/autopilot.'),
        )),
        ('Bounded autonomy', (
            ('sense', 'autonomy.sense',
             'Typed, content-hashed findings: the doctor (chain, receipts, FTS drift, ...), leases, overdue, stalled, parked, grants, recall-stale, orphan receipts; read-only.'),
            ('repair-list', 'autonomy.repairs',
             'List the repair policies (policies/repairs/*.yaml): the tier-0 ones eligible to run, and why the rest are not.'),
            ('repair', 'autonomy.repairs',
             'Run one repair policy against its current findings (--dry-run runs its command\'s dry run; audited).'),
            ('nanny', 'autonomy.nanny',
             'One bounded, audited tick: sense, tier-0 repairs within the cap, decisions, one state (all_clear, working, hit_snag, decision_needed).'),
        )),
        ('Operator surfaces', (
            ('processes', 'autonomy.processes',
             'Agents holding leases, with matching OS processes where the process list is readable (read-only).'),
            ('morning', 'autonomy.morning',
             'Human morning brief since the last one: finished, stuck, needs a decision (text; --json for data).'),
            ('github', 'autonomy.integrations',
             "Tasks with PR URLs or branches and their states, plus gh's read-only PR status when gh is configured."),
            ('sentry', 'autonomy.integrations',
             "Tasks carrying Sentry tags or receipts, plus sentry-cli's read-only status when it is configured."),
        )),
        ('Migration and onboarding', (
            ('migrate-inventory', 'migration.inventory',
             'Stage one: read-only discovery under --root, sealed autopilot-migration-inventory-v1 with an ordered plan (exit 1 when fail_closed).'),
            ('migrate-inventory-check', 'migration.inventory',
             'Verify a sealed migration inventory before trusting it (exit 1 on any change).'),
            ('migrate-import', 'migration.importer',
             "Stage two: run one plan step of a sealed inventory into this home -- an Autopilot database's import, or a Hindsight bank's memory-import, a Hermes home's hermes-register, an Obsidian vault's archive-copy (dry run unless --apply; --out seals the rollback journal)."),
            ('migrate-rollback', 'migration.importer',
             'Stage three: undo exactly what one migrate-import --apply added, from its sealed result (dry run unless --apply).'),
            ('onboard', 'migration.onboard',
             "One command from a sealed inventory to a verified home: preflight, init, select, plan, import (the control plane, then the plan's later steps), doctor, probe (stops at the first failure)."),
            ('brain-inventory', 'migration.brain',
             'Seal a read-only mindos-brain-inventory-v1 of the whole installation, every source with its epistemic role (exit 1 when fail_closed).'),
            ('brain-inventory-check', 'migration.brain',
             'Verify a sealed brain inventory before trusting it (exit 1 on any change).'),
            ('brain-import', 'migration.brain',
             'Bring the non-execution brain surfaces of a sealed brain inventory into an absolute new home (plan unless --apply; quarantine, provenance, sealed report).'),
        )),
    ),
)

MOOD_POLLER = Door(
    "mood_poller.py", "mindos-mood-poller",
    'MindOS mood poller: decides when an agent in a Mood should be woken, composes the wake, delivers it and posts the reply.',
    (
        ('The poll cycle', (
            ('tick', 'comms.tick',
             'One bounded poll cycle over every Mood: decide, compose, deliver, record (--dry-run composes only).'),
            ('explain', 'comms.tick',
             'What the next tick would do for one agent in one Mood, and why (writes nothing).'),
        )),
        ('What is said', (
            ('post', 'comms.posts',
             'Post to a Mood; how it was sent (ssh, web, terminal, handoff, agent) decides grace and tools; /announce, /incorporate, /handoff are recorded as commands.'),
            ('react', 'comms.posts',
             "React to a post (the post's agent sees it in its next wake)."),
            ('posts', 'comms.posts',
             "A Mood's newest posts, oldest first (holds and screen marks included)."),
            ('typing', 'comms.posts',
             'Signal that someone is typing (or, with --at-work, working) in a Mood.'),
            ('arrive', 'comms.posts',
             'Record that someone signed in to a Mood (an arrival wake may follow).'),
        )),
        ('Moods and agents', (
            ('mood', 'comms.moods',
             'Manage Moods: create, update (a rename keeps the old slug), show, list, join, leave.'),
            ('agent', 'comms.agents',
             'Manage agents: create, update (a rename keeps the old name for mentions), show, list.'),
        )),
        ('Dials and words', (
            ('set', 'comms.dials',
             'Set a dial (precedence: Mood+agent, Mood, agent, global, default); --clear removes it.'),
            ('page', 'comms.pages',
             'Revisioned pages (wake texts, dial words, instruction layers): set, show, list; trust or untrust an editor.'),
        )),
        ('The record', (
            ('wakes', 'comms.wakes',
             'Wakes newest first: kind, tools, why, outcome (filterable); --duplicates counts the take race.'),
            ('show-wake', 'comms.wakes',
             'One wake with its full text.'),
            ('bundle', 'comms.wakes',
             "A turn's instructions bundle: its layers in order and its text."),
            ('budget', 'comms.wakes',
             "Today's spend on screens and unasked looks against the shared daily budget."),
        )),
    ),
)

DOORS = {"autopilot": AUTOPILOT, "ops": OPS, "mood_poller": MOOD_POLLER}


def commands(door):
    """``{command: (cli module, summary)}`` of a door, in help order."""
    return {name: (module, summary) for _, entries in door.sections for name, module, summary in entries}


class OneCommand:
    """Stands in for the door's subparsers while one command declares itself: the command
    module adds its :class:`mindos.cli.spec.Command` here (``make_parser``), with the prog
    and ``command`` default it has as a subcommand.  Every reader (argparse, the plain reader,
    the MCP tools, ``protocol``) is built from that declaration."""

    def __init__(self, table, prog, script):
        self.mindos_table, self.mindos_prog, self.mindos_script = table, prog, script
        self.parser = None

    def add_parser(self, name, help=None, **kwargs):  # noqa: A002 - argparse's keyword
        from mindos.cli.spec import Command  # lazy: loaded with the first declaration

        kwargs.setdefault("prog", f"{self.mindos_prog} {name}")
        self.parser = Command(name, help, kwargs)
        self.parser.set_defaults(command=name)
        return self.parser


def declare(door, prog, name):
    """Command ``name`` of ``door`` as declared by its CLI module: a :class:`mindos.cli.spec.Command`."""
    table = commands(door)
    sub = OneCommand(table, prog, door.script)
    load_module(f"mindos.cli.{table[name][0]}").COMMANDS[name](sub)
    return sub.parser
