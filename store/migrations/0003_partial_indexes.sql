-- Indexes that hold only the rows their queries look for. A commit writes every page
-- it changed to disk, and with full indexes each send changed pages in two places of
-- the same index: where a live task's NULL `ended_seq` (or `terminal = 0`) entry sat,
-- and at the index's end where its final entry went. With partial indexes an entry
-- is written once, where it stays.

-- A conversation's tasks, newest last (its history and, below, its principal).
CREATE INDEX tasks_by_context ON tasks (context_id, created);

-- A conversation's principal (`context_principal`, read on every send that names a
-- conversation): only tasks created by an authenticated caller. Before, the read of an
-- unauthenticated conversation scanned up to its 256 newest tasks to find none; now it
-- finds none at once, and the most recent task that has one, however old, is found
-- without a bound.
CREATE INDEX tasks_principal_by_context ON tasks (context_id, created, principal)
    WHERE principal IS NOT NULL;
DROP INDEX tasks_by_context_principal;

-- Live tasks (`unfinished`, after a restart), oldest first.
DROP INDEX tasks_live;
CREATE INDEX tasks_live ON tasks (created) WHERE terminal = 0;

-- Ended tasks, for retention by count and by age.
DROP INDEX tasks_by_end;
CREATE INDEX tasks_by_end ON tasks (ended_seq) WHERE ended_seq IS NOT NULL;
DROP INDEX tasks_by_age;
CREATE INDEX tasks_by_age ON tasks (ended_at) WHERE ended_at IS NOT NULL;
