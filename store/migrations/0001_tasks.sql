-- The first schema of the durable task stores, the same for SQLite and PostgreSQL.
-- Numbers are BIGINT, flags 0/1, documents JSON in TEXT: types both databases share.

-- One row per task. `body` is the task as the A2A 0.3 wire writes it; `version` goes
-- up at each write, and an update names the version it read, so two processes never
-- lose each other's write. `changed` orders tasks by status change (tasks/list),
-- `created` orders a conversation's tasks, `ended_seq`/`ended_at` drive retention.
CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    context_id TEXT NOT NULL,
    agent TEXT,
    principal TEXT,
    body TEXT NOT NULL,
    state TEXT NOT NULL,
    terminal BIGINT NOT NULL,
    changed BIGINT NOT NULL,
    created BIGINT NOT NULL,
    ended_seq BIGINT,
    ended_at BIGINT,
    version BIGINT NOT NULL
);
CREATE INDEX tasks_by_context ON tasks (context_id, created);
CREATE INDEX tasks_by_change ON tasks (changed);
CREATE INDEX tasks_by_end ON tasks (ended_seq);
CREATE INDEX tasks_by_age ON tasks (ended_at);
CREATE INDEX tasks_live ON tasks (terminal);

-- Each task's event log: the SSE ids a stream resumes from.
CREATE TABLE task_events (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
);

-- Idempotency keys (scoped to their caller) and the task each answered. No foreign
-- key: retention keeps a task while a key names it.
CREATE TABLE idempotency_keys (
    key TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX idempotency_keys_by_task ON idempotency_keys (task_id);

CREATE TABLE push_configs (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    config_id TEXT NOT NULL,
    position BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (task_id, config_id)
);

-- Versioned records of the crates above (workflow definitions and runs).
CREATE TABLE records (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    version BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (namespace, key)
);

-- Counters shared by every process on the database: taking a number is an UPDATE,
-- which PostgreSQL serializes on the row.
CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO counters (name, value) VALUES ('changed', 0), ('created', 0), ('ended', 0), ('position', 0);
