"""Numbered schema migrations.

``MIGRATIONS[n-1]`` returns the SQL that takes a database from version n-1 to n.  Each
runs inside one write transaction together with its ``PRAGMA user_version`` bump (see
``db._bring_current``), so a crash leaves a database at a whole version, never between.
A fresh database is built from ``schema.sql`` instead and stamped with the latest number;
``tests/store/test_db.py`` checks that both roads lead to the same tables, columns and indexes.

These texts are history: once released, a migration is never edited, only followed.
"""


def fts_triggers(name, table, rowid, columns):
    """The three triggers that keep the external-content FTS5 index ``name`` in step with
    ``table`` (insert, delete, and update of the indexed ``columns``), written once for
    every index a migration creates."""
    listed = ", ".join(columns)
    new = f"    INSERT INTO {name}(rowid, {listed})\n    VALUES (new.{rowid}, {', '.join('new.' + c for c in columns)});\n"
    old = (f"    INSERT INTO {name}({name}, rowid, {listed})\n"
           f"    VALUES ('delete', old.{rowid}, {', '.join('old.' + c for c in columns)});\n")
    return (f"CREATE TRIGGER {name}_ai AFTER INSERT ON {table} BEGIN\n{new}END;\n"
            f"CREATE TRIGGER {name}_ad AFTER DELETE ON {table} BEGIN\n{old}END;\n"
            f"CREATE TRIGGER {name}_au AFTER UPDATE OF {listed} ON {table} BEGIN\n{old}{new}END;\n")


# The pair index's chunks (:func:`phrase_pairs`): the spaces of a column are found a chunk of
# this many characters at a time, each chunk read with the three characters either side of it.
PAIR_CHUNK = 256


def _pair_tokens(text):
    """SQL: the pair tokens of ``text`` (NULL when it has no space): for each space, the (up
    to) three characters before it, the space and the (up to) three after it, folded as
    ``lower()`` folds (ASCII only, as LIKE does) and hex-encoded, so a token is one word to
    the index whatever characters it holds.  The spaces are found a chunk at a time (each
    chunk with the three characters either side, so a token across its edges is whole), so
    a long text costs in proportion to its length, not its square."""
    size = PAIR_CHUNK
    return (f"(WITH RECURSIVE t(x) AS (SELECT {text}),"
            f" c(k, n, chunk) AS (SELECT 0, length(x), substr(x, 1, {size + 3}) FROM t"
            f" UNION ALL SELECT k + 1, n, substr(x, (k + 1) * {size} - 2, {size + 6}) FROM c, t WHERE (k + 1) * {size} < n),"
            " s(k, chunk, at, rest) AS (SELECT k, chunk, instr(chunk, ' '), substr(chunk, instr(chunk, ' ') + 1) FROM c"
            " UNION ALL SELECT k, chunk, at + instr(rest, ' '), substr(rest, instr(rest, ' ') + 1) FROM s"
            " WHERE instr(rest, ' ') > 0)"
            " SELECT group_concat(hex(lower(substr(chunk, max(at - 3, 1), min(at - 1, 3)) || ' ' || substr(chunk, at + 1, 3))), ' ')"
            f" FROM s WHERE at > 0 AND CASE k WHEN 0 THEN at <= {size} ELSE at > 3 AND at <= {size + 3} END)")


def _pair_tokens_of_words(text):
    """SQL: :func:`_pair_tokens` of ``text`` spelled without a recursive query, which a
    trigger cannot hold: ``text`` split at each space into a JSON array (``json_quote``
    escapes everything else), and for each space the last three characters of the words
    before it joined by spaces (three words back reach three characters, even empty ones),
    the space, and the first three of the words after it.  The same tokens, in another
    order (a test compares the two on random texts); FTS5 reads the view's spelling when it
    rebuilds the index, the triggers this one when a row is written or goes."""
    w = "OVER w"
    return ("(SELECT group_concat(hex(lower(b || ' ' || a)), ' ') FROM (SELECT"
            f" substr(coalesce(lag(value, 3) {w} || ' ', '') || coalesce(lag(value, 2) {w} || ' ', '')"
            f" || coalesce(lag(value, 1) {w} || ' ', '') || value, -3) AS b,"
            f" substr(lead(value, 1) {w} || coalesce(' ' || lead(value, 2) {w}, '') || coalesce(' ' || lead(value, 3) {w}, '')"
            f" || coalesce(' ' || lead(value, 4) {w}, ''), 1, 3) AS a, lead(key) {w} AS later"
            f" FROM json_each('[' || replace(json_quote({text}), ' ', '\",\"') || ']') WINDOW w AS (ORDER BY key))"
            " WHERE later IS NOT NULL)")


PAIR_COLUMNS = ("id", "project", "title", "description", "next_action", "blocked_reason")


def pair_text(prefix=""):
    """SQL: the task text the pair index reads, the six columns of ``tasks_fts`` (of row
    ``prefix``: ``new.``, ``old.`` or none) joined by line feeds (a token across two of them
    is one more candidate, never one fewer)."""
    return " || char(10) || ".join(f"coalesce({prefix}{column}, '')" for column in PAIR_COLUMNS)


def phrase_pairs():
    """The task text's pair index (``tasks_pairs_fts``, ``detail=none``) over the view
    ``tasks_pairs`` that spells each task's pair tokens (:func:`_pair_tokens` of
    :func:`pair_text`), and its triggers, which fire after a row is written or goes, as the
    other indexes' triggers do: a written row's tokens are read through the view, a changed
    or deleted row's old ones spelled from its old values (:func:`_pair_tokens_of_words`:
    the row no longer holds them).  (A trigger that read the view before the change would
    run even when UPDATE OR IGNORE then skips the row.)"""
    listed = ", ".join(PAIR_COLUMNS)
    old = ("    INSERT INTO tasks_pairs_fts(tasks_pairs_fts, rowid, pairs)\n"
           f"    VALUES ('delete', old.seq, coalesce({_pair_tokens_of_words(pair_text('old.'))}, ''));\n")
    new = "    INSERT INTO tasks_pairs_fts(rowid, pairs) SELECT seq, pairs FROM tasks_pairs WHERE seq = new.seq;\n"
    return (f"CREATE VIEW tasks_pairs(seq, pairs) AS SELECT seq,\n    coalesce({_pair_tokens(pair_text())}, '')\nFROM tasks;\n"
            "CREATE VIRTUAL TABLE tasks_pairs_fts USING fts5(pairs, content='tasks_pairs', content_rowid='seq', detail=none);\n"
            f"CREATE TRIGGER tasks_pairs_fts_ai AFTER INSERT ON tasks BEGIN\n{new}END;\n"
            f"CREATE TRIGGER tasks_pairs_fts_ad AFTER DELETE ON tasks BEGIN\n{old}END;\n"
            f"CREATE TRIGGER tasks_pairs_fts_au AFTER UPDATE OF {listed} ON tasks BEGIN\n{old}{new}END;\n")


def m001_foundation():
    """Tasks, dependency edges, receipts, the audit ledger and the task search index."""
    return """
CREATE TABLE tasks (
    seq               INTEGER PRIMARY KEY,
    id                TEXT NOT NULL UNIQUE,
    project           TEXT NOT NULL,
    title             TEXT NOT NULL,
    description       TEXT NOT NULL DEFAULT '',
    status            TEXT NOT NULL DEFAULT 'queued',
    priority          TEXT NOT NULL DEFAULT 'P2',
    next_action       TEXT NOT NULL DEFAULT '',
    blocked_reason    TEXT NOT NULL DEFAULT '',
    owner             TEXT NOT NULL DEFAULT '',
    tags              TEXT NOT NULL DEFAULT '[]',
    due_at            TEXT,
    worktree          TEXT NOT NULL DEFAULT '',
    branch            TEXT NOT NULL DEFAULT '',
    pr_url            TEXT NOT NULL DEFAULT '',
    lease_owner       TEXT NOT NULL DEFAULT '',
    lease_expires_at  TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);
CREATE INDEX idx_tasks_status_priority ON tasks(status, priority, created_at);
CREATE INDEX idx_tasks_project_status ON tasks(project, status);
CREATE INDEX idx_tasks_priority_updated ON tasks(priority, updated_at DESC, id);
CREATE INDEX idx_tasks_due_at ON tasks(due_at) WHERE due_at IS NOT NULL;
CREATE TABLE dependencies (
    task_id    TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    depends_on TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (task_id, depends_on)
) WITHOUT ROWID;
CREATE INDEX idx_dependencies_depends_on ON dependencies(depends_on, task_id);
CREATE TABLE receipts (
    id         TEXT PRIMARY KEY,
    task_id    TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    path       TEXT NOT NULL,
    file_hash  TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX idx_receipts_task ON receipts(task_id, created_at);
CREATE TABLE audit_events (
    id           INTEGER PRIMARY KEY,
    entity_type  TEXT NOT NULL,
    entity_id    TEXT NOT NULL,
    action       TEXT NOT NULL,
    payload_json TEXT NOT NULL DEFAULT '{}',
    created_at   TEXT NOT NULL,
    prev_hash    TEXT NOT NULL,
    hash         TEXT NOT NULL
);
CREATE INDEX idx_audit_entity ON audit_events(entity_id, id);
CREATE INDEX idx_audit_action ON audit_events(action, id);
CREATE INDEX idx_audit_created ON audit_events(created_at);
-- @fts5
CREATE VIRTUAL TABLE tasks_fts USING fts5(
    id, project, title, description, next_action, blocked_reason,
    content='tasks', content_rowid='seq'
);
CREATE TRIGGER tasks_fts_ai AFTER INSERT ON tasks BEGIN
    INSERT INTO tasks_fts(rowid, id, project, title, description, next_action, blocked_reason)
    VALUES (new.seq, new.id, new.project, new.title, new.description, new.next_action, new.blocked_reason);
END;
CREATE TRIGGER tasks_fts_ad AFTER DELETE ON tasks BEGIN
    INSERT INTO tasks_fts(tasks_fts, rowid, id, project, title, description, next_action, blocked_reason)
    VALUES ('delete', old.seq, old.id, old.project, old.title, old.description, old.next_action, old.blocked_reason);
END;
CREATE TRIGGER tasks_fts_au AFTER UPDATE OF id, project, title, description, next_action, blocked_reason ON tasks BEGIN
    INSERT INTO tasks_fts(tasks_fts, rowid, id, project, title, description, next_action, blocked_reason)
    VALUES ('delete', old.seq, old.id, old.project, old.title, old.description, old.next_action, old.blocked_reason);
    INSERT INTO tasks_fts(rowid, id, project, title, description, next_action, blocked_reason)
    VALUES (new.seq, new.id, new.project, new.title, new.description, new.next_action, new.blocked_reason);
END;
-- @end
"""


def m002_execution_truth():
    """Lease fencing epochs, retry budget and backoff, deferral, definition of done, heartbeats."""
    return """
ALTER TABLE tasks ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN retry_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN recover_after TEXT;
ALTER TABLE tasks ADD COLUMN not_before TEXT;
ALTER TABLE tasks ADD COLUMN requires_receipts TEXT NOT NULL DEFAULT '[]';
ALTER TABLE tasks ADD COLUMN recall_digest TEXT NOT NULL DEFAULT '';
CREATE INDEX idx_tasks_lease_owner ON tasks(lease_owner, lease_expires_at) WHERE lease_owner <> '';
CREATE TABLE heartbeats (
    task_id TEXT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    owner   TEXT NOT NULL,
    note    TEXT NOT NULL DEFAULT '',
    at      TEXT NOT NULL
);
"""


def m003_shared_memory():
    """Task notes and agent handoffs, with their search indexes."""
    return """
CREATE TABLE notes (
    id            INTEGER PRIMARY KEY,
    task_id       TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    kind          TEXT NOT NULL,
    content       TEXT NOT NULL,
    source        TEXT NOT NULL DEFAULT '',
    pinned        INTEGER NOT NULL DEFAULT 0,
    expires_at    TEXT,
    supersedes    INTEGER,
    superseded_by INTEGER,
    superseded_at TEXT,
    created_at    TEXT NOT NULL
);
CREATE INDEX idx_notes_task_live ON notes(task_id, superseded_by, id);
CREATE INDEX idx_notes_superseded_by ON notes(superseded_by);
CREATE TABLE handoffs (
    id                INTEGER PRIMARY KEY,
    task_id           TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    from_agent        TEXT NOT NULL DEFAULT '',
    to_agent          TEXT NOT NULL DEFAULT '',
    status            TEXT NOT NULL DEFAULT '',
    objective         TEXT NOT NULL DEFAULT '',
    evidence          TEXT NOT NULL DEFAULT '[]',
    constraints       TEXT NOT NULL DEFAULT '[]',
    decisions         TEXT NOT NULL DEFAULT '[]',
    files             TEXT NOT NULL DEFAULT '[]',
    commit_ref        TEXT NOT NULL DEFAULT '',
    next_actions      TEXT NOT NULL DEFAULT '[]',
    risks             TEXT NOT NULL DEFAULT '[]',
    recall_digest     TEXT NOT NULL DEFAULT '',
    payload_hash      TEXT NOT NULL,
    supersedes        INTEGER,
    superseded_by     INTEGER,
    superseded_at     TEXT,
    acked_by          TEXT NOT NULL DEFAULT '',
    acked_at          TEXT,
    ack_recall_digest TEXT NOT NULL DEFAULT '',
    created_at        TEXT NOT NULL
);
CREATE UNIQUE INDEX idx_handoffs_one_live ON handoffs(task_id) WHERE superseded_by IS NULL;
CREATE INDEX idx_handoffs_to_agent ON handoffs(to_agent, superseded_by);
-- @fts5
CREATE VIRTUAL TABLE notes_fts USING fts5(content, content='notes', content_rowid='id');
""" + fts_triggers("notes_fts", "notes", "id", ("content",)) + """
CREATE VIRTUAL TABLE handoffs_fts USING fts5(
    objective, status, from_agent, to_agent, content='handoffs', content_rowid='id'
);
""" + fts_triggers("handoffs_fts", "handoffs", "id", ("objective", "status", "from_agent", "to_agent")) + """
-- @end
"""


def m004_tag_index():
    """The task_tags index behind tag-scoped dispatch, backfilled from tasks.tags."""
    return """
CREATE TABLE task_tags (
    tag     TEXT NOT NULL,
    task_id TEXT NOT NULL,
    PRIMARY KEY (tag, task_id)
) WITHOUT ROWID;
CREATE INDEX idx_task_tags_task ON task_tags(task_id);
INSERT OR IGNORE INTO task_tags(tag, task_id) SELECT j.value, t.id FROM tasks t, json_each(t.tags) j;
CREATE TRIGGER task_tags_ai AFTER INSERT ON tasks BEGIN
    INSERT OR IGNORE INTO task_tags(tag, task_id) SELECT value, new.id FROM json_each(new.tags);
END;
CREATE TRIGGER task_tags_au AFTER UPDATE OF id, tags ON tasks BEGIN
    DELETE FROM task_tags WHERE task_id = old.id;
    INSERT OR IGNORE INTO task_tags(tag, task_id) SELECT value, new.id FROM json_each(new.tags);
END;
CREATE TRIGGER task_tags_ad AFTER DELETE ON tasks BEGIN
    DELETE FROM task_tags WHERE task_id = old.id;
END;
"""


def m005_recall_memory_facts():
    """Semantic memories and the temporal fact graph, with their search indexes."""
    return """
CREATE TABLE memories (
    seq           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    project       TEXT NOT NULL DEFAULT '',
    kind          TEXT NOT NULL DEFAULT 'fact',
    content       TEXT NOT NULL,
    tags          TEXT NOT NULL DEFAULT '[]',
    source        TEXT NOT NULL DEFAULT '',
    engine        TEXT NOT NULL DEFAULT 'memory-fts-v1',
    retracted_at  TEXT,
    superseded_by TEXT,
    created_at    TEXT NOT NULL
);
CREATE INDEX idx_memories_project_live ON memories(project, retracted_at, created_at);
CREATE TABLE facts (
    id             INTEGER PRIMARY KEY,
    subject        TEXT NOT NULL,
    predicate      TEXT NOT NULL,
    object         TEXT NOT NULL,
    source         TEXT NOT NULL,
    task_id        TEXT,
    valid_from     TEXT NOT NULL,
    valid_until    TEXT,
    retracted_at   TEXT,
    retract_reason TEXT NOT NULL DEFAULT '',
    created_at     TEXT NOT NULL
);
CREATE INDEX idx_facts_triple ON facts(subject, predicate, object, valid_from);
CREATE INDEX idx_facts_valid_from ON facts(valid_from DESC, id);
-- @fts5
CREATE VIRTUAL TABLE memories_fts USING fts5(content, tags, content='memories', content_rowid='seq');
""" + fts_triggers("memories_fts", "memories", "seq", ("content", "tags")) + """
CREATE VIRTUAL TABLE facts_fts USING fts5(subject, predicate, object, source, content='facts', content_rowid='id');
""" + fts_triggers("facts_fts", "facts", "id", ("subject", "predicate", "object", "source")) + """
-- @end
"""


def m006_mood_poller():
    """The mood poller: Moods, agents, posts, signals, dials, pages, wakes, bundles, budget."""
    return """
CREATE TABLE moods (
    id                INTEGER PRIMARY KEY,
    slug              TEXT NOT NULL UNIQUE,
    title             TEXT NOT NULL,
    description       TEXT NOT NULL DEFAULT '',
    instructions_page TEXT NOT NULL DEFAULT '',
    last_post_id      INTEGER NOT NULL DEFAULT 0,
    last_post_at      TEXT,
    last_post_author  TEXT NOT NULL DEFAULT '',
    last_post_person  INTEGER NOT NULL DEFAULT 0,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);
CREATE TABLE mood_aliases (
    alias      TEXT PRIMARY KEY,
    mood_id    INTEGER NOT NULL REFERENCES moods(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE mood_agents (
    name         TEXT PRIMARY KEY,
    page         TEXT NOT NULL DEFAULT '',
    instructions TEXT NOT NULL DEFAULT '',
    command      TEXT NOT NULL DEFAULT '[]',
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE mood_agent_aliases (
    alias      TEXT PRIMARY KEY,
    agent      TEXT NOT NULL REFERENCES mood_agents(name) ON DELETE CASCADE ON UPDATE CASCADE,
    created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX idx_mood_agent_aliases_agent ON mood_agent_aliases(agent);
CREATE TABLE mood_members (
    mood_id    INTEGER NOT NULL REFERENCES moods(id) ON DELETE CASCADE,
    agent      TEXT NOT NULL REFERENCES mood_agents(name) ON DELETE CASCADE ON UPDATE CASCADE,
    joined_at  TEXT NOT NULL,
    PRIMARY KEY (mood_id, agent)
) WITHOUT ROWID;
CREATE INDEX idx_mood_members_agent ON mood_members(agent);
CREATE TABLE mood_posts (
    id          INTEGER PRIMARY KEY,
    mood_id     INTEGER NOT NULL REFERENCES moods(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL DEFAULT 'post',
    author      TEXT NOT NULL,
    is_agent    INTEGER NOT NULL DEFAULT 0,
    via         TEXT NOT NULL,
    full_tools  INTEGER NOT NULL DEFAULT 0,
    body        TEXT NOT NULL,
    about_agent TEXT NOT NULL DEFAULT '',
    wake_id     INTEGER,
    created_at  TEXT NOT NULL
);
CREATE INDEX idx_mood_posts_mood ON mood_posts(mood_id, id);
CREATE TRIGGER mood_posts_pulse AFTER INSERT ON mood_posts WHEN new.kind = 'post' BEGIN
    UPDATE moods SET last_post_id = new.id, last_post_at = new.created_at, last_post_author = new.author,
        last_post_person = CASE WHEN new.is_agent THEN 0 ELSE 1 END
    WHERE id = new.mood_id AND last_post_id < new.id;
END;
CREATE TABLE mood_signals (
    mood_id INTEGER NOT NULL REFERENCES moods(id) ON DELETE CASCADE,
    who     TEXT NOT NULL,
    kind    TEXT NOT NULL,
    until   TEXT NOT NULL,
    PRIMARY KEY (mood_id, who, kind)
) WITHOUT ROWID;
CREATE INDEX idx_mood_signals_until ON mood_signals(until);
CREATE TABLE mood_arrivals (
    id         INTEGER PRIMARY KEY,
    mood_id    INTEGER NOT NULL REFERENCES moods(id) ON DELETE CASCADE,
    who        TEXT NOT NULL,
    via        TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_mood_arrivals_mood ON mood_arrivals(mood_id, id);
CREATE TABLE mood_settings (
    mood_id    INTEGER NOT NULL DEFAULT 0,
    agent      TEXT NOT NULL DEFAULT '',
    name       TEXT NOT NULL,
    value      TEXT NOT NULL,
    set_by     TEXT NOT NULL DEFAULT '',
    note       TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL,
    PRIMARY KEY (mood_id, agent, name)
) WITHOUT ROWID;
CREATE TABLE mood_pages (
    name       TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE mood_page_revisions (
    id         INTEGER PRIMARY KEY,
    page       TEXT NOT NULL REFERENCES mood_pages(name) ON DELETE CASCADE,
    editor     TEXT NOT NULL,
    body       TEXT NOT NULL,
    note       TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX idx_mood_page_revisions_page ON mood_page_revisions(page, id);
CREATE TABLE mood_editors (
    name       TEXT PRIMARY KEY,
    trusted    INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE mood_agent_state (
    mood_id        INTEGER NOT NULL REFERENCES moods(id) ON DELETE CASCADE,
    agent          TEXT NOT NULL,
    seen_id        INTEGER NOT NULL DEFAULT 0,
    mention_id     INTEGER NOT NULL DEFAULT 0,
    considered_id  INTEGER NOT NULL DEFAULT 0,
    held_id        INTEGER NOT NULL DEFAULT 0,
    arrival_id     INTEGER NOT NULL DEFAULT 0,
    quiet_post_id  INTEGER NOT NULL DEFAULT 0,
    quiet_looks    INTEGER NOT NULL DEFAULT 0,
    quiet_last_at  TEXT,
    spoke_at       TEXT,
    last_wake_at   TEXT,
    PRIMARY KEY (mood_id, agent)
) WITHOUT ROWID;
CREATE TABLE mood_bundles (
    id         TEXT PRIMARY KEY,
    agent      TEXT NOT NULL,
    mood_id    INTEGER NOT NULL,
    layers     TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE mood_wakes (
    id           INTEGER PRIMARY KEY,
    mood_id      INTEGER NOT NULL REFERENCES moods(id) ON DELETE CASCADE,
    agent        TEXT NOT NULL,
    kind         TEXT NOT NULL,
    tools        TEXT NOT NULL,
    why          TEXT NOT NULL,
    post_ids     TEXT NOT NULL DEFAULT '[]',
    last_post_id INTEGER NOT NULL DEFAULT 0,
    block        INTEGER NOT NULL,
    bundle_id    TEXT NOT NULL,
    body         TEXT NOT NULL,
    tokens       INTEGER NOT NULL DEFAULT 0,
    cost_usd     REAL NOT NULL DEFAULT 0,
    warm         INTEGER NOT NULL DEFAULT 0,
    outcome      TEXT NOT NULL DEFAULT 'running',
    detail       TEXT NOT NULL DEFAULT '',
    reply_post_id INTEGER,
    created_at   TEXT NOT NULL,
    finished_at  TEXT
);
CREATE INDEX idx_mood_wakes_agent ON mood_wakes(mood_id, agent, id);
CREATE INDEX idx_mood_wakes_created ON mood_wakes(created_at);
CREATE INDEX idx_mood_wakes_running ON mood_wakes(outcome) WHERE outcome = 'running';
CREATE TABLE mood_takes (
    post_id    INTEGER NOT NULL REFERENCES mood_posts(id) ON DELETE CASCADE,
    agent      TEXT NOT NULL,
    words      TEXT NOT NULL DEFAULT '',
    wake_id    INTEGER,
    created_at TEXT NOT NULL,
    PRIMARY KEY (post_id, agent)
) WITHOUT ROWID;
CREATE TABLE mood_budget (
    id         INTEGER PRIMARY KEY,
    day        TEXT NOT NULL,
    kind       TEXT NOT NULL,
    mood_id    INTEGER NOT NULL,
    agent      TEXT NOT NULL DEFAULT '',
    wake_id    INTEGER,
    tokens     INTEGER NOT NULL DEFAULT 0,
    warm       INTEGER NOT NULL DEFAULT 0,
    usd        REAL NOT NULL DEFAULT 0,
    exempt     INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_mood_budget_day ON mood_budget(day, exempt);
"""


def m007_request_replays():
    """Idempotent retries: the first result of each (actor, --request-id)."""
    return """
CREATE TABLE IF NOT EXISTS request_replays (
    actor        TEXT NOT NULL,
    request_id   TEXT NOT NULL,
    command      TEXT NOT NULL,
    args_digest  TEXT NOT NULL,
    result_json  TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (actor, request_id)
) WITHOUT ROWID;
"""


def m008_botmail():
    """Botmail: the peer allowlist, delivered bot-to-bot messages and every delivery receipt."""
    return """
CREATE TABLE botmail_peers (
    recipient        TEXT NOT NULL,
    peer             TEXT NOT NULL,
    profile          TEXT NOT NULL,
    classes          TEXT NOT NULL DEFAULT '[]',
    epoch            INTEGER NOT NULL DEFAULT 1,
    replay_budget    INTEGER NOT NULL DEFAULT 60,
    replay_window_seconds INTEGER NOT NULL DEFAULT 3600,
    revoked_at       TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    PRIMARY KEY (recipient, peer)
) WITHOUT ROWID;
CREATE TABLE botmail (
    id            INTEGER PRIMARY KEY,
    envelope_id   TEXT NOT NULL,
    sender        TEXT NOT NULL,
    recipient     TEXT NOT NULL,
    profile       TEXT NOT NULL,
    class         TEXT NOT NULL,
    body          TEXT NOT NULL,
    thread        TEXT NOT NULL DEFAULT '',
    epoch         INTEGER NOT NULL,
    harness       TEXT NOT NULL,
    provenance    TEXT NOT NULL DEFAULT '{}',
    envelope_hash TEXT NOT NULL,
    sent_at       TEXT NOT NULL,
    expires_at    TEXT,
    delivered_at  TEXT NOT NULL,
    acked_at      TEXT,
    UNIQUE (sender, envelope_id)
);
CREATE INDEX idx_botmail_inbox ON botmail(recipient, profile, id);
CREATE INDEX idx_botmail_replay ON botmail(recipient, sender, delivered_at);
CREATE TABLE botmail_receipts (
    id            INTEGER PRIMARY KEY,
    envelope_id   TEXT NOT NULL,
    sender        TEXT NOT NULL,
    recipient     TEXT NOT NULL,
    outcome       TEXT NOT NULL CHECK (outcome IN ('accepted', 'rejected', 'duplicate', 'expired', 'failed')),
    reason        TEXT NOT NULL DEFAULT '',
    detail        TEXT NOT NULL DEFAULT '',
    message_id    INTEGER REFERENCES botmail(id),
    envelope_hash TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL
);
CREATE INDEX idx_botmail_receipts_envelope ON botmail_receipts(sender, envelope_id, id);
CREATE INDEX idx_botmail_receipts_outcome ON botmail_receipts(outcome, id);
"""


def m009_autonomy():
    """Bounded autonomy: model-bound continuation grants and the nanny's finding memory."""
    return """
CREATE TABLE grants (
    id             INTEGER PRIMARY KEY,
    task_id        TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    model          TEXT NOT NULL,
    autonomy_level TEXT NOT NULL,
    granted_by     TEXT NOT NULL,
    granted_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL,
    superseded_by  INTEGER,
    superseded_at  TEXT
);
CREATE UNIQUE INDEX idx_grants_one_live ON grants(task_id) WHERE superseded_by IS NULL;
CREATE INDEX idx_grants_live_expiry ON grants(expires_at) WHERE superseded_by IS NULL;
CREATE TABLE nanny_findings (
    digest          TEXT PRIMARY KEY,
    kind            TEXT NOT NULL,
    subjects        TEXT NOT NULL DEFAULT '[]',
    severity        TEXT NOT NULL,
    first_seen_at   TEXT NOT NULL,
    last_seen_at    TEXT NOT NULL,
    ticks           INTEGER NOT NULL DEFAULT 1,
    repair_failures INTEGER NOT NULL DEFAULT 0,
    last_repair     TEXT NOT NULL DEFAULT '',
    last_error      TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
"""


def m010_sessions():
    """The session cache: ingested transcript files (keyed by path, sealed by sha256) and their
    messages, with a search index.  Derived data: rebuildable from the transcripts."""
    return """
CREATE TABLE session_files (
    id          INTEGER PRIMARY KEY,
    source      TEXT NOT NULL,
    path        TEXT NOT NULL,
    file_hash   TEXT NOT NULL,
    size        INTEGER NOT NULL,
    session_id  TEXT NOT NULL,
    profile     TEXT NOT NULL DEFAULT '',
    project     TEXT NOT NULL DEFAULT '',
    format      TEXT NOT NULL,
    messages    INTEGER NOT NULL DEFAULT 0,
    first_at    TEXT,
    last_at     TEXT,
    ingested_at TEXT NOT NULL,
    UNIQUE (source, path)
);
CREATE INDEX idx_session_files_scope ON session_files(source, project, profile);
CREATE TABLE session_messages (
    id      INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES session_files(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    role    TEXT NOT NULL,
    content TEXT NOT NULL,
    at      TEXT,
    UNIQUE (file_id, seq)
);
CREATE INDEX idx_session_messages_at ON session_messages(at);
-- @fts5
CREATE VIRTUAL TABLE session_messages_fts USING fts5(content, content='session_messages', content_rowid='id');
""" + fts_triggers("session_messages_fts", "session_messages", "id", ("content",)) + """
-- @end
"""


def m011_fts_merging():
    """Full-text indexes merge their small segments sooner.  Every committed write adds a
    segment and FTS5's automatic merging works in 64-page units, so an index written one row
    per transaction (as agents write) kept many, and every term a query reads is looked up
    in each.  With ``crisismerge`` at 4 a level's segments are merged as soon as 4 of them
    exist: about half as many segments, for slightly slower writes; 2 would be slower still
    (``bench/fts_merging.py``; figures in bench/NOTES.md)."""
    names = ("tasks_fts", "notes_fts", "handoffs_fts", "memories_fts", "facts_fts", "session_messages_fts")
    return "-- @fts5\n" + "".join(f"INSERT INTO {name}({name}, rank) VALUES ('crisismerge', 4);\n" for name in names) \
        + "-- @end\n"


def m012_mood_wake_lines():
    """The wake lines the poller could not compose: explicit replies (the only way a person's
    post answers a mention), handoffs addressed to an agent, the slash commands of a Mood
    (/announce, /incorporate, /handoff and the context a handoff carried over), reactions to
    posts, and, per wake, the tool-loop guard's words and a failed refresh of the read-only
    repository copies."""
    return """
ALTER TABLE mood_posts ADD COLUMN reply_to INTEGER;
ALTER TABLE mood_posts ADD COLUMN to_agent TEXT NOT NULL DEFAULT '';
ALTER TABLE mood_wakes ADD COLUMN loop_guard TEXT NOT NULL DEFAULT '';
ALTER TABLE mood_wakes ADD COLUMN fresh_failed INTEGER NOT NULL DEFAULT 0;
CREATE TABLE mood_commands (
    post_id        INTEGER PRIMARY KEY REFERENCES mood_posts(id) ON DELETE CASCADE,
    mood_id        INTEGER NOT NULL REFERENCES moods(id) ON DELETE CASCADE,
    kind           TEXT NOT NULL,
    target         TEXT NOT NULL DEFAULT '',
    about          TEXT NOT NULL DEFAULT '',
    source_post_id INTEGER,
    created_at     TEXT NOT NULL
);
CREATE INDEX idx_mood_commands_kind ON mood_commands(kind, created_at);
CREATE TABLE mood_reactions (
    id         INTEGER PRIMARY KEY,
    mood_id    INTEGER NOT NULL REFERENCES moods(id) ON DELETE CASCADE,
    post_id    INTEGER NOT NULL REFERENCES mood_posts(id) ON DELETE CASCADE,
    who        TEXT NOT NULL,
    reaction   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (post_id, who, reaction)
);
CREATE INDEX idx_mood_reactions_mood ON mood_reactions(mood_id, created_at);
"""


def m013_recaps_corrections():
    """A completed task's recap (what was done, in one paragraph, for whoever depends on it)
    and a correction task's link to the task whose defect it fixes (a soft link, like a
    dependency edge: no foreign key, so archiving either side never breaks the other)."""
    return """
ALTER TABLE tasks ADD COLUMN recap TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN correction_of TEXT NOT NULL DEFAULT '';
CREATE INDEX idx_tasks_correction_of ON tasks(correction_of) WHERE correction_of <> '';
"""


def m014_lease_progress():
    """Progress on a lease: each heartbeat may say what the holder is doing (action, intent,
    a cited receipt) and how far it is (a progress state).  The heartbeat row keeps the last
    state, when it last changed and the stall deadline armed for it, bound to the lease
    epoch it was written under, plus when a stall was escalated.  The stall query starts
    from the held leases (``idx_tasks_lease_owner``) and reads this row by its key, so it
    needs no index of its own."""
    return """
ALTER TABLE heartbeats ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE heartbeats ADD COLUMN action TEXT NOT NULL DEFAULT '';
ALTER TABLE heartbeats ADD COLUMN intent TEXT NOT NULL DEFAULT '';
ALTER TABLE heartbeats ADD COLUMN evidence TEXT NOT NULL DEFAULT '';
ALTER TABLE heartbeats ADD COLUMN progress_state TEXT NOT NULL DEFAULT '';
ALTER TABLE heartbeats ADD COLUMN progress_changed_at TEXT;
ALTER TABLE heartbeats ADD COLUMN stall_minutes INTEGER;
ALTER TABLE heartbeats ADD COLUMN stall_at TEXT;
ALTER TABLE heartbeats ADD COLUMN escalated_at TEXT;
"""


def m015_learned_terms():
    """Learned term associations (:mod:`mindos.memory.learned`): how many rows each term
    occurs in, how many rows hold two terms near each other, and per surface the highest
    row id learned.  Rows already in the home are learned a few at a time by later writes,
    or all at once by ``fts-rebuild``.  And the optional semantic layer's vectors
    (:mod:`mindos.memory.embed`), one per row, tagged with the encoder that made it."""
    return """
CREATE TABLE term_df (
    id   INTEGER PRIMARY KEY,
    term TEXT NOT NULL UNIQUE,
    df   INTEGER NOT NULL
);
CREATE TABLE term_pairs (
    term  INTEGER NOT NULL,
    other INTEGER NOT NULL,
    n     INTEGER NOT NULL,
    PRIMARY KEY (term, other)
) WITHOUT ROWID;
CREATE TABLE learned_upto (
    surface TEXT PRIMARY KEY,
    upto    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE embeddings (
    surface TEXT NOT NULL,
    row_id  INTEGER NOT NULL,
    encoder TEXT NOT NULL,
    vector  BLOB NOT NULL,
    PRIMARY KEY (surface, row_id)
) WITHOUT ROWID;
"""


def m016_pinned_constraints():
    """The live pinned constraints in the order ``prime`` lists them (oldest first): its
    constraints section walks this small index until it has enough of a project's, instead
    of every live note of the home."""
    return """
CREATE INDEX idx_notes_pinned_constraints ON notes(created_at)
    WHERE pinned = 1 AND kind = 'constraint' AND superseded_by IS NULL;
"""


def m017_overdue_index():
    """Open tasks past their deadline, read from their own small index: the nanny's overdue
    sweep counts and lists them on every tick without visiting the task rows (the index
    holds the id and priority it reports).  Its condition is written exactly as
    :func:`mindos.store.sql.open_condition` writes it, so queries using that helper match it.
    And the live handoffs that cite a recall, so the tick's recall-stale check learns that
    there are none without reading every handoff."""
    return """
CREATE INDEX idx_tasks_overdue_open ON tasks(due_at, id, priority)
    WHERE due_at IS NOT NULL AND status NOT IN ('completed', 'failed', 'cancelled');
CREATE INDEX idx_handoffs_cited_live ON handoffs(task_id) WHERE superseded_by IS NULL AND recall_digest <> '';
"""


def m018_queued_deadline_index():
    """The queued tasks that carry a deadline, in the order ``next`` drains them (deadline,
    then age, then insertion order), with the priority its aging tiers filter on.  The dated
    stream walks this index instead of every deadline in the home: claimed and finished
    tasks, whose early deadlines crowd the front of ``idx_tasks_due_at``, are not in it, and
    a row's tier is decided from the entry before its table row is read.  The condition is
    the one the dispatch query states, so the planner may use it."""
    return """
CREATE INDEX idx_tasks_queued_due ON tasks(due_at, created_at, seq, priority)
    WHERE status = 'queued' AND due_at IS NOT NULL;
"""


def m019_task_status_lookup():
    """A task's status and priority by its id, from the index alone.  ``next`` asks this of
    every prerequisite of the candidates it passes (is it completed?) and of every dependent
    its inheritance probes walk (is it open, and how urgent?): through the id's own unique
    index each answer costs that index's page and then the row's table page; this index
    answers in one.  And the queued deadline index (m018) also holds the task's id, so the
    deadline stream asks whether an entry's prerequisites are done from the entry itself and
    reads the table row only of an entry that is ready: the front of that stream is mostly
    tasks still waiting on prerequisites.  A long-lived server whose cached pages another
    writer's commit has just dropped reads about a third fewer pages per ``next``."""
    return """
CREATE INDEX idx_tasks_id_status ON tasks(id, status, priority);
DROP INDEX idx_tasks_queued_due;
CREATE INDEX idx_tasks_queued_due ON tasks(due_at, created_at, seq, priority, id)
    WHERE status = 'queued' AND due_at IS NOT NULL;
"""


def m020_task_readiness():
    """Readiness stored on the task row: ``unmet_deps`` counts a task's prerequisites that are
    not completed (an edge to a task that does not exist counts too), which is exactly what
    ``next`` asks before it may hand a queued task out.  Triggers move it by one: an edge
    added or removed (or edited) whose prerequisite is not completed; a task whose status
    moves to or from ``completed``, whose id changes, or that is added or removed while
    completed moves the count of every task that depends on it.  A task added with edges or
    a count of its own (a row restored or imported with a stale count) is recounted.  The
    triggers are parsed whenever a connection opens, so their text is kept short.  Two
    partial indexes hold only the queued tasks with nothing left to wait for, in the orders
    ``next`` reads the queue (by deadline; by priority and age), so the tasks still waiting
    on prerequisites at the front of the queue cost ``next`` nothing.  The existing rows are
    counted once here."""
    count = ("(SELECT count(*) FROM dependencies d LEFT JOIN tasks p ON p.id = d.depends_on"
             " WHERE d.task_id = {task} AND p.status IS NOT 'completed')")
    mine = count.format(task="tasks.id")
    return f"""
ALTER TABLE tasks ADD COLUMN unmet_deps INTEGER NOT NULL DEFAULT 0;
UPDATE tasks SET unmet_deps = {mine} WHERE id IN (SELECT task_id FROM dependencies);
CREATE INDEX idx_tasks_ready_due ON tasks(due_at, created_at, seq, priority, id)
    WHERE status = 'queued' AND due_at IS NOT NULL AND unmet_deps = 0;
CREATE INDEX idx_tasks_ready ON tasks(priority, created_at)
    WHERE status = 'queued' AND unmet_deps = 0;
CREATE TRIGGER dependencies_unmet_ai AFTER INSERT ON dependencies BEGIN
    UPDATE tasks SET unmet_deps = unmet_deps + 1 WHERE id = new.task_id AND NOT EXISTS (SELECT 1 FROM tasks WHERE id = new.depends_on AND status = 'completed');
END;
CREATE TRIGGER dependencies_unmet_ad AFTER DELETE ON dependencies BEGIN
    UPDATE tasks SET unmet_deps = unmet_deps - 1 WHERE id = old.task_id AND NOT EXISTS (SELECT 1 FROM tasks WHERE id = old.depends_on AND status = 'completed');
END;
CREATE TRIGGER dependencies_unmet_au AFTER UPDATE ON dependencies BEGIN
    UPDATE tasks SET unmet_deps = unmet_deps - 1 WHERE id = old.task_id AND NOT EXISTS (SELECT 1 FROM tasks WHERE id = old.depends_on AND status = 'completed');
    UPDATE tasks SET unmet_deps = unmet_deps + 1 WHERE id = new.task_id AND NOT EXISTS (SELECT 1 FROM tasks WHERE id = new.depends_on AND status = 'completed');
END;
CREATE TRIGGER tasks_unmet_ai AFTER INSERT ON tasks BEGIN
    UPDATE tasks SET unmet_deps = unmet_deps - 1 WHERE new.status = 'completed' AND id IN (SELECT task_id FROM dependencies WHERE depends_on = new.id);
    UPDATE tasks SET unmet_deps = {mine}
        WHERE seq = new.seq AND (new.unmet_deps <> 0 OR EXISTS (SELECT 1 FROM dependencies WHERE task_id = new.id));
END;
CREATE TRIGGER tasks_unmet_au AFTER UPDATE OF id, status ON tasks
    WHEN old.id IS NOT new.id OR (old.status = 'completed') <> (new.status = 'completed') BEGIN
    UPDATE tasks SET unmet_deps = unmet_deps + 1 WHERE old.status = 'completed' AND id IN (SELECT task_id FROM dependencies WHERE depends_on = old.id);
    UPDATE tasks SET unmet_deps = unmet_deps - 1 WHERE new.status = 'completed' AND id IN (SELECT task_id FROM dependencies WHERE depends_on = new.id);
END;
CREATE TRIGGER tasks_unmet_ad AFTER DELETE ON tasks WHEN old.status = 'completed' BEGIN
    UPDATE tasks SET unmet_deps = unmet_deps + 1 WHERE id IN (SELECT task_id FROM dependencies WHERE depends_on = old.id);
END;
"""


def m021_substring_index():
    """Trigram indexes over the text substring search matches: the task text ``search``
    reads (the six columns of ``tasks_fts``) and the note content ``search-notes`` reads,
    filled from the rows already there.  Every run of three characters of each column is
    indexed, case folded, so a substring search reads only the rows holding its text,
    whatever its words, instead of every row; the LIKE still decides each one.  Homes whose
    SQLite has no FTS5, or an FTS5 without the trigram tokenizer (before 3.34), go without
    them and search as before.  Each is optimized once filled (see :func:`mindos.store.fts.rebuild`)."""
    columns = ("id", "project", "title", "description", "next_action", "blocked_reason")
    return """
-- @fts5 trigram
CREATE VIRTUAL TABLE tasks_trigram_fts USING fts5(
    id, project, title, description, next_action, blocked_reason,
    content='tasks', content_rowid='seq', tokenize='trigram'
);
""" + fts_triggers("tasks_trigram_fts", "tasks", "seq", columns) + """
CREATE VIRTUAL TABLE notes_trigram_fts USING fts5(content, content='notes', content_rowid='id', tokenize='trigram');
""" + fts_triggers("notes_trigram_fts", "notes", "id", ("content",)) + """
INSERT INTO tasks_trigram_fts(tasks_trigram_fts) VALUES ('rebuild');
INSERT INTO notes_trigram_fts(notes_trigram_fts) VALUES ('rebuild');
INSERT INTO tasks_trigram_fts(tasks_trigram_fts) VALUES ('optimize');
INSERT INTO notes_trigram_fts(notes_trigram_fts) VALUES ('optimize');
INSERT INTO tasks_trigram_fts(tasks_trigram_fts, rank) VALUES ('crisismerge', 4);
INSERT INTO notes_trigram_fts(notes_trigram_fts, rank) VALUES ('crisismerge', 4);
-- @end
"""


def m022_newest_notes_index():
    """The live notes, newest first: the order ``search-notes`` answers a substring search
    in.  A text many notes hold is then found by walking the newest notes until the limit is
    filled, instead of reading every note holding it and sorting them all."""
    return """
CREATE INDEX idx_notes_live_newest ON notes(created_at) WHERE superseded_by IS NULL;
"""


def m023_dependent_rank():
    """Inherited urgency stored on the task row: ``dependent_rank`` is the best priority (0 for
    P0 .. 3 for P3; 4 when there is none) among a task's open dependents, reached directly or
    through open ones: exactly what ``next`` asks when it decides whether a queued task
    inherits a better tier from the work waiting on it.  It is kept for open tasks; a finished
    task holds 4 (it is counted again when it reopens).  Triggers keep it: a
    change at one task (whether it is open, its priority while open, its id; an edge added,
    removed or edited) recounts the open tasks below it, walking down the edges through open
    tasks, and stops at a task whose stored rank is better than what the change passes down
    or took away (its urgency comes from elsewhere, and so does that of what lies below it
    through it); a new edge only lifts the ranks below it that were worse than what it passes
    down, without counting.  Completing a ready task (its prerequisites are done) recounts
    nothing, nor does a claim.  The ready queue's deadline index carries the column, so ``next`` reads a
    worse-tier row's inherited urgency from the index entry.  Existing rows are counted here."""
    open_sql = "NOT IN ('completed', 'failed', 'cancelled')"
    # the best priority reachable from the row ``tasks`` up the edges through open dependents
    rank = ("(WITH RECURSIVE up(id, r) AS (SELECT tasks.id, 4 UNION SELECT d.task_id, substr(m.priority, 2) + 0"
            " FROM up JOIN dependencies d ON d.depends_on = up.id JOIN tasks m INDEXED BY idx_tasks_id_status"
            f" ON m.id = d.task_id WHERE +m.status {open_sql}) SELECT min(r) FROM up)")
    # what a task passes down to its prerequisites: the better of its priority and its rank
    # while it is open, 4 (nothing) otherwise
    passed = (f"CASE WHEN {{row}}status {open_sql} THEN min(substr({{row}}priority, 2) + 0, {{row}}dependent_rank)"
              " ELSE 4 END")
    dependent = "(SELECT " + passed.format(row="") + " FROM tasks WHERE {key})"
    # a rank set to -1 is counted again at once (tasks_rank_count), so the count is written once;
    # one set to -10 - f (f: the floor, 0..4) is counted and so is every open task below it,
    # reached down the edges through open tasks whose stored rank is no better than the floor
    # (one better than it has its urgency from elsewhere, and so has what lies below it through
    # it), so that walk is written once too (tasks_rank_spread)
    # the changed task itself: counted while open, 4 once finished (a finished task's rank is
    # never read, and holding 4 keeps its row the same as one restored from a document)
    itself = f"UPDATE tasks SET dependent_rank = CASE WHEN status {open_sql} THEN -1 ELSE 4 END WHERE seq = new.seq"
    spread = "UPDATE tasks SET dependent_rank = -10 - {floor} WHERE {which} AND status " + open_sql
    floor = "min(" + passed.format(row="old.") + ", " + dependent.format(key="seq = new.seq") + ")"
    # a new edge only adds urgency: what its dependent passes down ({passes}) is the rank of every
    # open task below it that had a worse one, reached through such tasks (no count needed)
    passes = dependent.format(key="id = new.task_id")
    lift = (f"UPDATE tasks SET dependent_rank = {passes} WHERE id IN (WITH RECURSIVE down(id) AS (SELECT new.depends_on"
            " UNION SELECT d.depends_on FROM down JOIN tasks p ON p.id = down.id JOIN dependencies d"
            f" ON d.task_id = down.id WHERE p.status {open_sql} AND p.dependent_rank > {passes}) SELECT id FROM down)"
            f" AND status {open_sql} AND dependent_rank > {passes}")
    return f"""
ALTER TABLE tasks ADD COLUMN dependent_rank INTEGER NOT NULL DEFAULT 4;
UPDATE tasks SET dependent_rank = {rank} WHERE status {open_sql} AND id IN (SELECT depends_on FROM dependencies);
DROP INDEX idx_tasks_ready_due;
CREATE INDEX idx_tasks_ready_due ON tasks(due_at, created_at, seq, priority, id, dependent_rank)
    WHERE status = 'queued' AND due_at IS NOT NULL AND unmet_deps = 0;
CREATE TRIGGER tasks_rank_count AFTER UPDATE OF dependent_rank ON tasks WHEN new.dependent_rank < 0 BEGIN
    UPDATE tasks SET dependent_rank = {rank} WHERE seq = new.seq;
END;
CREATE TRIGGER tasks_rank_spread AFTER UPDATE OF dependent_rank ON tasks WHEN new.dependent_rank <= -10 BEGIN
    UPDATE tasks SET dependent_rank = -1 WHERE id IN (WITH RECURSIVE down(id) AS (SELECT new.id UNION
        SELECT d.depends_on FROM down JOIN tasks p ON p.id = down.id JOIN dependencies d ON d.task_id = down.id
        WHERE p.status {open_sql} AND (p.dependent_rank < 0 OR p.dependent_rank >= -10 - new.dependent_rank))
        SELECT id FROM down) AND status {open_sql};
END;
CREATE TRIGGER dependencies_rank_ai AFTER INSERT ON dependencies BEGIN
    {lift};
END;
CREATE TRIGGER dependencies_rank_ad AFTER DELETE ON dependencies BEGIN
    {spread.format(floor="coalesce(" + dependent.format(key="id = old.task_id") + ", 0)", which="id = old.depends_on")};
END;
CREATE TRIGGER dependencies_rank_au AFTER UPDATE ON dependencies BEGIN
    {spread.format(floor="0", which="id IN (old.depends_on, new.depends_on)")};
END;
CREATE TRIGGER tasks_rank_ai AFTER INSERT ON tasks
    WHEN new.dependent_rank <> 4 OR EXISTS (SELECT 1 FROM dependencies WHERE depends_on = new.id) BEGIN
    {itself};
END;
CREATE TRIGGER tasks_rank_au AFTER UPDATE OF id, status, priority ON tasks
    WHEN old.id IS NOT new.id OR (old.status {open_sql}) <> (new.status {open_sql})
        OR (new.status {open_sql} AND old.priority IS NOT new.priority) BEGIN
    {itself} AND (old.id IS NOT new.id OR (old.status {open_sql}) <> (new.status {open_sql}));
    {spread.format(floor=floor, which="id IN (SELECT depends_on FROM dependencies WHERE task_id IN (old.id, new.id))")};
END;
"""


def m024_phrase_pairs():
    """The task text's pair index: one token per space of each column ``search`` reads, the
    three characters either side of it (:func:`phrase_pairs`), filled from the rows already
    there.  A substring search whose text has a space with three characters on each side
    reads the tasks holding that run of seven characters: a rare phrase of common words
    ("cache api") is a rare token, where each of its trigrams is common.  Homes whose SQLite
    has no FTS5 go without it.  Optimized once filled (see :func:`mindos.store.fts.rebuild`)."""
    return """
-- @fts5
""" + phrase_pairs() + """INSERT INTO tasks_pairs_fts(tasks_pairs_fts) VALUES ('rebuild');
INSERT INTO tasks_pairs_fts(tasks_pairs_fts) VALUES ('optimize');
INSERT INTO tasks_pairs_fts(tasks_pairs_fts, rank) VALUES ('crisismerge', 4);
-- @end
"""


def m025_lifetime_end_indexes():
    """The ends of note lifetimes and fact windows, each in an index of the rows that have
    one.  The next lifetime end after an instant, and the ends between two instants, are
    then read from those few entries (leases from ``idx_tasks_lease_owner``), where they
    read every note and fact: a recall-stale check pays per lifetime, not per row."""
    return """
CREATE INDEX idx_notes_expiring ON notes(expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX idx_facts_ending ON facts(valid_until) WHERE valid_until IS NOT NULL;
"""


MIGRATIONS = [m001_foundation, m002_execution_truth, m003_shared_memory, m004_tag_index, m005_recall_memory_facts,
              m006_mood_poller, m007_request_replays, m008_botmail, m009_autonomy, m010_sessions, m011_fts_merging,
              m012_mood_wake_lines, m013_recaps_corrections, m014_lease_progress,
              m015_learned_terms, m016_pinned_constraints, m017_overdue_index,
              m018_queued_deadline_index, m019_task_status_lookup, m020_task_readiness,
              m021_substring_index, m022_newest_notes_index, m023_dependent_rank,
              m024_phrase_pairs, m025_lifetime_end_indexes]
