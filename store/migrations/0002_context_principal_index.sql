-- A conversation's principal is read on every send that names a conversation
-- (`context_principal`: its most recent tasks, newest first). With the principal in
-- the index, that read scans a few index pages instead of fetching each task's row.
-- The new index serves every query the old one did (same leading columns).
CREATE INDEX tasks_by_context_principal ON tasks (context_id, created, principal);
DROP INDEX tasks_by_context;
