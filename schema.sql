-- MindOS schema: the single source of truth for a fresh database.
--
-- A new database is built from this file and stamped with the latest migration number
-- (PRAGMA user_version).  Older databases are brought forward by the numbered migrations
-- in mindos/store/migrations.py; tests/store/test_db.py checks that both paths produce the same tables.
--
-- Conventions
--   * timestamps are ISO 8601 UTC text, 'YYYY-MM-DDTHH:MM:SSZ', so text order is time order;
--     NULL means "not set" (no deadline, no deferral, no lease).
--   * list-valued columns (tags, requires_receipts, handoff lists) hold canonical JSON arrays.
--   * tables with a full-text index have an INTEGER PRIMARY KEY so the external-content FTS5
--     index keeps stable rowids across VACUUM and restores.
--   * statements between '-- @fts5' and '-- @end' are skipped on SQLite builds without FTS5.

-- Tasks: the unit of work.  Lease fields live on the row so claim is one guarded UPDATE.
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
    updated_at        TEXT NOT NULL,
    -- added by migration 2 (execution truth)
    lease_epoch       INTEGER NOT NULL DEFAULT 0,
    retry_count       INTEGER NOT NULL DEFAULT 0,
    recover_after     TEXT,
    not_before        TEXT,
    requires_receipts TEXT NOT NULL DEFAULT '[]',
    recall_digest     TEXT NOT NULL DEFAULT '',
    -- added by migration 13 (recaps and correction tasks)
    recap             TEXT NOT NULL DEFAULT '',
    correction_of     TEXT NOT NULL DEFAULT '',
    -- added by migration 20 (readiness): prerequisites not completed, kept by triggers below
    unmet_deps        INTEGER NOT NULL DEFAULT 0,
    -- added by migration 22 (inherited urgency): the best priority among open dependents, kept by triggers below
    dependent_rank    INTEGER NOT NULL DEFAULT 4
);
CREATE INDEX idx_tasks_status_priority ON tasks(status, priority, created_at);
CREATE INDEX idx_tasks_project_status ON tasks(project, status);
CREATE INDEX idx_tasks_priority_updated ON tasks(priority, updated_at DESC, id);
CREATE INDEX idx_tasks_due_at ON tasks(due_at) WHERE due_at IS NOT NULL;
CREATE INDEX idx_tasks_overdue_open ON tasks(due_at, id, priority)
    WHERE due_at IS NOT NULL AND status NOT IN ('completed', 'failed', 'cancelled');
CREATE INDEX idx_tasks_queued_due ON tasks(due_at, created_at, seq, priority, id)
    WHERE status = 'queued' AND due_at IS NOT NULL;
CREATE INDEX idx_tasks_id_status ON tasks(id, status, priority);
CREATE INDEX idx_tasks_lease_owner ON tasks(lease_owner, lease_expires_at) WHERE lease_owner <> '';
CREATE INDEX idx_tasks_correction_of ON tasks(correction_of) WHERE correction_of <> '';
-- The queued tasks with no prerequisite left to wait for (migration 20), in the orders next reads them.
CREATE INDEX idx_tasks_ready_due ON tasks(due_at, created_at, seq, priority, id, dependent_rank)
    WHERE status = 'queued' AND due_at IS NOT NULL AND unmet_deps = 0;
CREATE INDEX idx_tasks_ready ON tasks(priority, created_at)
    WHERE status = 'queued' AND unmet_deps = 0;

-- Dependency edges: task_id waits for depends_on.  depends_on carries no foreign key on
-- purpose: an edge may name a task that does not exist (yet), which graph queries report
-- as a 'missing' node instead of losing the edge.
CREATE TABLE dependencies (
    task_id    TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    depends_on TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (task_id, depends_on)
) WITHOUT ROWID;
CREATE INDEX idx_dependencies_depends_on ON dependencies(depends_on, task_id);

-- tasks.unmet_deps (migration 20): each task's prerequisites that are not completed (a missing
-- one counts), moved by these triggers whenever an edge or a prerequisite's state changes (a
-- task inserted with edges or a count of its own is recounted).
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
    UPDATE tasks SET unmet_deps = (SELECT count(*) FROM dependencies d LEFT JOIN tasks p ON p.id = d.depends_on WHERE d.task_id = tasks.id AND p.status IS NOT 'completed')
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

-- tasks.dependent_rank (migration 22): the best priority (0..3, 4 for none) among each open task's
-- open dependents, directly or through open ones; these triggers mark (-1, or -10 - floor to
-- spread) the open tasks below a change, down the edges through open tasks as far as the change can
-- reach, and count each marked one; a new edge lifts the worse ranks below it.
CREATE TRIGGER tasks_rank_count AFTER UPDATE OF dependent_rank ON tasks WHEN new.dependent_rank < 0 BEGIN
    UPDATE tasks SET dependent_rank = (WITH RECURSIVE up(id, r) AS (SELECT tasks.id, 4 UNION SELECT d.task_id, substr(m.priority, 2) + 0 FROM up JOIN dependencies d ON d.depends_on = up.id JOIN tasks m INDEXED BY idx_tasks_id_status ON m.id = d.task_id WHERE +m.status NOT IN ('completed', 'failed', 'cancelled')) SELECT min(r) FROM up) WHERE seq = new.seq;
END;
CREATE TRIGGER tasks_rank_spread AFTER UPDATE OF dependent_rank ON tasks WHEN new.dependent_rank <= -10 BEGIN
    UPDATE tasks SET dependent_rank = -1 WHERE id IN (WITH RECURSIVE down(id) AS (SELECT new.id UNION
        SELECT d.depends_on FROM down JOIN tasks p ON p.id = down.id JOIN dependencies d ON d.task_id = down.id
        WHERE p.status NOT IN ('completed', 'failed', 'cancelled') AND (p.dependent_rank < 0 OR p.dependent_rank >= -10 - new.dependent_rank))
        SELECT id FROM down) AND status NOT IN ('completed', 'failed', 'cancelled');
END;
CREATE TRIGGER dependencies_rank_ai AFTER INSERT ON dependencies BEGIN
    UPDATE tasks SET dependent_rank = (SELECT CASE WHEN status NOT IN ('completed', 'failed', 'cancelled') THEN min(substr(priority, 2) + 0, dependent_rank) ELSE 4 END FROM tasks WHERE id = new.task_id) WHERE id IN (WITH RECURSIVE down(id) AS (SELECT new.depends_on UNION SELECT d.depends_on FROM down JOIN tasks p ON p.id = down.id JOIN dependencies d ON d.task_id = down.id WHERE p.status NOT IN ('completed', 'failed', 'cancelled') AND p.dependent_rank > (SELECT CASE WHEN status NOT IN ('completed', 'failed', 'cancelled') THEN min(substr(priority, 2) + 0, dependent_rank) ELSE 4 END FROM tasks WHERE id = new.task_id)) SELECT id FROM down) AND status NOT IN ('completed', 'failed', 'cancelled') AND dependent_rank > (SELECT CASE WHEN status NOT IN ('completed', 'failed', 'cancelled') THEN min(substr(priority, 2) + 0, dependent_rank) ELSE 4 END FROM tasks WHERE id = new.task_id);
END;
CREATE TRIGGER dependencies_rank_ad AFTER DELETE ON dependencies BEGIN
    UPDATE tasks SET dependent_rank = -10 - coalesce((SELECT CASE WHEN status NOT IN ('completed', 'failed', 'cancelled') THEN min(substr(priority, 2) + 0, dependent_rank) ELSE 4 END FROM tasks WHERE id = old.task_id), 0) WHERE id = old.depends_on AND status NOT IN ('completed', 'failed', 'cancelled');
END;
CREATE TRIGGER dependencies_rank_au AFTER UPDATE ON dependencies BEGIN
    UPDATE tasks SET dependent_rank = -10 - 0 WHERE id IN (old.depends_on, new.depends_on) AND status NOT IN ('completed', 'failed', 'cancelled');
END;
CREATE TRIGGER tasks_rank_ai AFTER INSERT ON tasks
    WHEN new.dependent_rank <> 4 OR EXISTS (SELECT 1 FROM dependencies WHERE depends_on = new.id) BEGIN
    UPDATE tasks SET dependent_rank = CASE WHEN status NOT IN ('completed', 'failed', 'cancelled') THEN -1 ELSE 4 END WHERE seq = new.seq;
END;
CREATE TRIGGER tasks_rank_au AFTER UPDATE OF id, status, priority ON tasks
    WHEN old.id IS NOT new.id OR (old.status NOT IN ('completed', 'failed', 'cancelled')) <> (new.status NOT IN ('completed', 'failed', 'cancelled'))
        OR (new.status NOT IN ('completed', 'failed', 'cancelled') AND old.priority IS NOT new.priority) BEGIN
    UPDATE tasks SET dependent_rank = CASE WHEN status NOT IN ('completed', 'failed', 'cancelled') THEN -1 ELSE 4 END WHERE seq = new.seq AND (old.id IS NOT new.id OR (old.status NOT IN ('completed', 'failed', 'cancelled')) <> (new.status NOT IN ('completed', 'failed', 'cancelled')));
    UPDATE tasks SET dependent_rank = -10 - min(CASE WHEN old.status NOT IN ('completed', 'failed', 'cancelled') THEN min(substr(old.priority, 2) + 0, old.dependent_rank) ELSE 4 END, (SELECT CASE WHEN status NOT IN ('completed', 'failed', 'cancelled') THEN min(substr(priority, 2) + 0, dependent_rank) ELSE 4 END FROM tasks WHERE seq = new.seq)) WHERE id IN (SELECT depends_on FROM dependencies WHERE task_id IN (old.id, new.id)) AND status NOT IN ('completed', 'failed', 'cancelled');
END;

-- Receipts: evidence files under <home>/receipts/<id>.json, sealed by file_hash.
CREATE TABLE receipts (
    id         TEXT PRIMARY KEY,
    task_id    TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    path       TEXT NOT NULL,
    file_hash  TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX idx_receipts_task ON receipts(task_id, created_at);

-- The hash-chained audit ledger.  Only mindos/db.py appends to it.
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

-- Last heartbeat per task (liveness cache; migration 2).
CREATE TABLE heartbeats (
    task_id TEXT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    owner   TEXT NOT NULL,
    note    TEXT NOT NULL DEFAULT '',
    at      TEXT NOT NULL,
    -- progress on the lease (migration 14): bound to the lease epoch it was written under
    lease_epoch         INTEGER NOT NULL DEFAULT 0,
    action              TEXT NOT NULL DEFAULT '',
    intent              TEXT NOT NULL DEFAULT '',
    evidence            TEXT NOT NULL DEFAULT '',
    progress_state      TEXT NOT NULL DEFAULT '',
    progress_changed_at TEXT,
    stall_minutes       INTEGER,
    stall_at            TEXT,
    escalated_at        TEXT
);

-- Tag index: one row per (tag, task), kept in step with tasks.tags by triggers (migration 4),
-- so tag-scoped dispatch can start from the few tasks carrying a rare tag.
CREATE TABLE task_tags (
    tag     TEXT NOT NULL,
    task_id TEXT NOT NULL,
    PRIMARY KEY (tag, task_id)
) WITHOUT ROWID;
CREATE INDEX idx_task_tags_task ON task_tags(task_id);
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

-- Idempotent retries (migration 8): the first result of each (actor, --request-id), so a
-- caller that died after the commit but before reading the answer can ask again and get
-- the same answer instead of a second effect.
CREATE TABLE request_replays (
    actor        TEXT NOT NULL,
    request_id   TEXT NOT NULL,
    command      TEXT NOT NULL,
    args_digest  TEXT NOT NULL,
    result_json  TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (actor, request_id)
) WITHOUT ROWID;

-- Shared memory: provenance-tagged task notes (migration 3).  A live note has
-- superseded_by IS NULL; supersession links old -> new in both directions.
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
CREATE INDEX idx_notes_pinned_constraints ON notes(created_at)
    WHERE pinned = 1 AND kind = 'constraint' AND superseded_by IS NULL;
CREATE INDEX idx_notes_live_newest ON notes(created_at) WHERE superseded_by IS NULL;
CREATE INDEX idx_notes_expiring ON notes(expires_at) WHERE expires_at IS NOT NULL;

-- Agent handoffs (migration 3).  At most one live (superseded_by IS NULL) row per task.
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
CREATE INDEX idx_handoffs_cited_live ON handoffs(task_id) WHERE superseded_by IS NULL AND recall_digest <> '';

-- Botmail (migration 9): peer allowlist, delivered bot-to-bot messages, delivery receipts.
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

-- Bounded autonomy (migration 9).  A grant binds a task's unattended continuation to one
-- exact model/provider, an autonomy level (L0..L3), who granted it, and an expiry; at most
-- one live (superseded_by IS NULL) grant per task, older ones kept as history.
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

-- The nanny's memory of open findings, keyed by finding digest (migration 9): a finding
-- seen before is carried forward (counted, never narrated again); repair_failures feeds the
-- circuit breaker.  A finding that disappears is deleted.
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

-- Session cache (migration 10): agents' transcripts indexed read-only.  One row per ingested
-- file, keyed by (source, path) and sealed by the file's sha256, so an unchanged transcript
-- costs one hash read; messages cascade with their file.  Derived, disposable data.
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
CREATE VIRTUAL TABLE notes_fts USING fts5(content, content='notes', content_rowid='id');
CREATE TRIGGER notes_fts_ai AFTER INSERT ON notes BEGIN
    INSERT INTO notes_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER notes_fts_ad AFTER DELETE ON notes BEGIN
    INSERT INTO notes_fts(notes_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER notes_fts_au AFTER UPDATE OF content ON notes BEGIN
    INSERT INTO notes_fts(notes_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO notes_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE VIRTUAL TABLE handoffs_fts USING fts5(
    objective, status, from_agent, to_agent, content='handoffs', content_rowid='id'
);
CREATE TRIGGER handoffs_fts_ai AFTER INSERT ON handoffs BEGIN
    INSERT INTO handoffs_fts(rowid, objective, status, from_agent, to_agent)
    VALUES (new.id, new.objective, new.status, new.from_agent, new.to_agent);
END;
CREATE TRIGGER handoffs_fts_ad AFTER DELETE ON handoffs BEGIN
    INSERT INTO handoffs_fts(handoffs_fts, rowid, objective, status, from_agent, to_agent)
    VALUES ('delete', old.id, old.objective, old.status, old.from_agent, old.to_agent);
END;
CREATE TRIGGER handoffs_fts_au AFTER UPDATE OF objective, status, from_agent, to_agent ON handoffs BEGIN
    INSERT INTO handoffs_fts(handoffs_fts, rowid, objective, status, from_agent, to_agent)
    VALUES ('delete', old.id, old.objective, old.status, old.from_agent, old.to_agent);
    INSERT INTO handoffs_fts(rowid, objective, status, from_agent, to_agent)
    VALUES (new.id, new.objective, new.status, new.from_agent, new.to_agent);
END;
CREATE VIRTUAL TABLE session_messages_fts USING fts5(content, content='session_messages', content_rowid='id');
CREATE TRIGGER session_messages_fts_ai AFTER INSERT ON session_messages BEGIN
    INSERT INTO session_messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER session_messages_fts_ad AFTER DELETE ON session_messages BEGIN
    INSERT INTO session_messages_fts(session_messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER session_messages_fts_au AFTER UPDATE OF content ON session_messages BEGIN
    INSERT INTO session_messages_fts(session_messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO session_messages_fts(rowid, content) VALUES (new.id, new.content);
END;
-- @end

-- Substring search's indexes (migration 20): every three characters of the task text search
-- matches and of the note content search-notes matches, case folded, so LIKE '%text%' reads
-- only the rows holding the text.  Need the trigram tokenizer (SQLite 3.34+); skipped without it.
-- @fts5 trigram
CREATE VIRTUAL TABLE tasks_trigram_fts USING fts5(
    id, project, title, description, next_action, blocked_reason,
    content='tasks', content_rowid='seq', tokenize='trigram'
);
CREATE TRIGGER tasks_trigram_fts_ai AFTER INSERT ON tasks BEGIN
    INSERT INTO tasks_trigram_fts(rowid, id, project, title, description, next_action, blocked_reason)
    VALUES (new.seq, new.id, new.project, new.title, new.description, new.next_action, new.blocked_reason);
END;
CREATE TRIGGER tasks_trigram_fts_ad AFTER DELETE ON tasks BEGIN
    INSERT INTO tasks_trigram_fts(tasks_trigram_fts, rowid, id, project, title, description, next_action, blocked_reason)
    VALUES ('delete', old.seq, old.id, old.project, old.title, old.description, old.next_action, old.blocked_reason);
END;
CREATE TRIGGER tasks_trigram_fts_au AFTER UPDATE OF id, project, title, description, next_action, blocked_reason ON tasks BEGIN
    INSERT INTO tasks_trigram_fts(tasks_trigram_fts, rowid, id, project, title, description, next_action, blocked_reason)
    VALUES ('delete', old.seq, old.id, old.project, old.title, old.description, old.next_action, old.blocked_reason);
    INSERT INTO tasks_trigram_fts(rowid, id, project, title, description, next_action, blocked_reason)
    VALUES (new.seq, new.id, new.project, new.title, new.description, new.next_action, new.blocked_reason);
END;
CREATE VIRTUAL TABLE notes_trigram_fts USING fts5(content, content='notes', content_rowid='id', tokenize='trigram');
CREATE TRIGGER notes_trigram_fts_ai AFTER INSERT ON notes BEGIN
    INSERT INTO notes_trigram_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER notes_trigram_fts_ad AFTER DELETE ON notes BEGIN
    INSERT INTO notes_trigram_fts(notes_trigram_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER notes_trigram_fts_au AFTER UPDATE OF content ON notes BEGIN
    INSERT INTO notes_trigram_fts(notes_trigram_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO notes_trigram_fts(rowid, content) VALUES (new.id, new.content);
END;
INSERT INTO tasks_trigram_fts(tasks_trigram_fts, rank) VALUES ('crisismerge', 4);
INSERT INTO notes_trigram_fts(notes_trigram_fts, rank) VALUES ('crisismerge', 4);
-- @end

-- Substring search's pair index (migration 24): per space of the task text search matches, the
-- three characters either side of it (hex-encoded, ASCII case folded), so a text with an inner
-- space reads only the tasks holding that run of seven characters, however common its words.
-- @fts5
CREATE VIEW tasks_pairs(seq, pairs) AS SELECT seq,
    coalesce((WITH RECURSIVE t(x) AS (SELECT coalesce(id, '') || char(10) || coalesce(project, '') || char(10) || coalesce(title, '') || char(10) || coalesce(description, '') || char(10) || coalesce(next_action, '') || char(10) || coalesce(blocked_reason, '')), c(k, n, chunk) AS (SELECT 0, length(x), substr(x, 1, 259) FROM t UNION ALL SELECT k + 1, n, substr(x, (k + 1) * 256 - 2, 262) FROM c, t WHERE (k + 1) * 256 < n), s(k, chunk, at, rest) AS (SELECT k, chunk, instr(chunk, ' '), substr(chunk, instr(chunk, ' ') + 1) FROM c UNION ALL SELECT k, chunk, at + instr(rest, ' '), substr(rest, instr(rest, ' ') + 1) FROM s WHERE instr(rest, ' ') > 0) SELECT group_concat(hex(lower(substr(chunk, max(at - 3, 1), min(at - 1, 3)) || ' ' || substr(chunk, at + 1, 3))), ' ') FROM s WHERE at > 0 AND CASE k WHEN 0 THEN at <= 256 ELSE at > 3 AND at <= 259 END), '')
FROM tasks;
CREATE VIRTUAL TABLE tasks_pairs_fts USING fts5(pairs, content='tasks_pairs', content_rowid='seq', detail=none);
CREATE TRIGGER tasks_pairs_fts_ai AFTER INSERT ON tasks BEGIN
    INSERT INTO tasks_pairs_fts(rowid, pairs) SELECT seq, pairs FROM tasks_pairs WHERE seq = new.seq;
END;
CREATE TRIGGER tasks_pairs_fts_ad AFTER DELETE ON tasks BEGIN
    INSERT INTO tasks_pairs_fts(tasks_pairs_fts, rowid, pairs)
    VALUES ('delete', old.seq, coalesce((SELECT group_concat(hex(lower(b || ' ' || a)), ' ') FROM (SELECT substr(coalesce(lag(value, 3) OVER w || ' ', '') || coalesce(lag(value, 2) OVER w || ' ', '') || coalesce(lag(value, 1) OVER w || ' ', '') || value, -3) AS b, substr(lead(value, 1) OVER w || coalesce(' ' || lead(value, 2) OVER w, '') || coalesce(' ' || lead(value, 3) OVER w, '') || coalesce(' ' || lead(value, 4) OVER w, ''), 1, 3) AS a, lead(key) OVER w AS later FROM json_each('[' || replace(json_quote(coalesce(old.id, '') || char(10) || coalesce(old.project, '') || char(10) || coalesce(old.title, '') || char(10) || coalesce(old.description, '') || char(10) || coalesce(old.next_action, '') || char(10) || coalesce(old.blocked_reason, '')), ' ', '","') || ']') WINDOW w AS (ORDER BY key)) WHERE later IS NOT NULL), ''));
END;
CREATE TRIGGER tasks_pairs_fts_au AFTER UPDATE OF id, project, title, description, next_action, blocked_reason ON tasks BEGIN
    INSERT INTO tasks_pairs_fts(tasks_pairs_fts, rowid, pairs)
    VALUES ('delete', old.seq, coalesce((SELECT group_concat(hex(lower(b || ' ' || a)), ' ') FROM (SELECT substr(coalesce(lag(value, 3) OVER w || ' ', '') || coalesce(lag(value, 2) OVER w || ' ', '') || coalesce(lag(value, 1) OVER w || ' ', '') || value, -3) AS b, substr(lead(value, 1) OVER w || coalesce(' ' || lead(value, 2) OVER w, '') || coalesce(' ' || lead(value, 3) OVER w, '') || coalesce(' ' || lead(value, 4) OVER w, ''), 1, 3) AS a, lead(key) OVER w AS later FROM json_each('[' || replace(json_quote(coalesce(old.id, '') || char(10) || coalesce(old.project, '') || char(10) || coalesce(old.title, '') || char(10) || coalesce(old.description, '') || char(10) || coalesce(old.next_action, '') || char(10) || coalesce(old.blocked_reason, '')), ' ', '","') || ']') WINDOW w AS (ORDER BY key)) WHERE later IS NOT NULL), ''));
    INSERT INTO tasks_pairs_fts(rowid, pairs) SELECT seq, pairs FROM tasks_pairs WHERE seq = new.seq;
END;
INSERT INTO tasks_pairs_fts(tasks_pairs_fts, rank) VALUES ('crisismerge', 4);
-- @end

-- semantic memories and the temporal fact graph (migration 5)
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
CREATE INDEX idx_facts_ending ON facts(valid_until) WHERE valid_until IS NOT NULL;
-- @fts5
CREATE VIRTUAL TABLE memories_fts USING fts5(content, tags, content='memories', content_rowid='seq');
CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content, tags) VALUES (new.seq, new.content, new.tags);
END;
CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content, tags) VALUES ('delete', old.seq, old.content, old.tags);
END;
CREATE TRIGGER memories_fts_au AFTER UPDATE OF content, tags ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content, tags) VALUES ('delete', old.seq, old.content, old.tags);
    INSERT INTO memories_fts(rowid, content, tags) VALUES (new.seq, new.content, new.tags);
END;
CREATE VIRTUAL TABLE facts_fts USING fts5(subject, predicate, object, source, content='facts', content_rowid='id');
CREATE TRIGGER facts_fts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, subject, predicate, object, source)
    VALUES (new.id, new.subject, new.predicate, new.object, new.source);
END;
CREATE TRIGGER facts_fts_ad AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, subject, predicate, object, source)
    VALUES ('delete', old.id, old.subject, old.predicate, old.object, old.source);
END;
CREATE TRIGGER facts_fts_au AFTER UPDATE OF subject, predicate, object, source ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, subject, predicate, object, source)
    VALUES ('delete', old.id, old.subject, old.predicate, old.object, old.source);
    INSERT INTO facts_fts(rowid, subject, predicate, object, source)
    VALUES (new.id, new.subject, new.predicate, new.object, new.source);
END;
-- @end

-- The mood poller (migration 6)
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
    created_at  TEXT NOT NULL,
    reply_to    INTEGER,
    to_agent    TEXT NOT NULL DEFAULT ''
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
    finished_at  TEXT,
    loop_guard   TEXT NOT NULL DEFAULT '',
    fresh_failed INTEGER NOT NULL DEFAULT 0
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
-- Slash commands said in a Mood (/announce, /incorporate, /handoff) and the context a handoff
-- carried into another Mood (handed), and reactions to posts (migration 12).
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

-- Learned term associations (migration 15, mindos.memory.learned): term row counts, counts of
-- rows holding two terms near each other, and the highest row id learned per surface; and
-- the semantic layer's vectors (mindos.memory.embed), one per row, tagged with their encoder.
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

-- Full-text indexes merge a level's small segments as soon as 4 exist (migration 11): an
-- index written one row per transaction otherwise keeps up to 22, each read by every query.
-- @fts5
INSERT INTO tasks_fts(tasks_fts, rank) VALUES ('crisismerge', 4);
INSERT INTO notes_fts(notes_fts, rank) VALUES ('crisismerge', 4);
INSERT INTO handoffs_fts(handoffs_fts, rank) VALUES ('crisismerge', 4);
INSERT INTO memories_fts(memories_fts, rank) VALUES ('crisismerge', 4);
INSERT INTO facts_fts(facts_fts, rank) VALUES ('crisismerge', 4);
INSERT INTO session_messages_fts(session_messages_fts, rank) VALUES ('crisismerge', 4);
-- @end
