"""Numbered schema migrations.

``MIGRATIONS[n-1]`` returns the SQL that takes a database from version n-1 to n.  Each
runs inside one write transaction together with its ``PRAGMA user_version`` bump (see
``db._bring_current``), so a crash leaves a database at a whole version, never between.
A fresh database is built from ``schema.sql`` instead and stamped with the latest number;
``tests/test_db.py`` checks that both roads lead to the same tables, columns and indexes.

These texts are history: once released, a migration is never edited, only followed.
"""


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


def m008_request_replays():
    """Idempotent retries: the first result of each (actor, --request-id) (issue 8; numbers 5-7 are
    reserved for the recall, recovery and mood-poller migrations landing in parallel).  IF NOT
    EXISTS: a home stamped while this was the fifth entry of the list meets it again, harmlessly,
    once 5-7 land."""
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


MIGRATIONS = [m001_foundation, m002_execution_truth, m003_shared_memory, m004_tag_index, m008_request_replays]
