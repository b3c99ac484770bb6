-- The request budgets of workspaces (and of users outside any workspace),
-- shared by every process on the database (see postgres/rate_budget.go):
-- one row per key ("ws:<id>", "user:<id>") with its rate and the time at
-- which its bucket is full again, in Unix nanoseconds. A row whose
-- full_ns is past is a full bucket, as good as no row: the hourly upkeep
-- deletes those, so the table holds about the keys used in the last hour.
-- Each allowed API request rewrites its key's row: the pages keep room
-- (fillfactor) so that the new version stays on its page (full_ns is in
-- no index: a heap-only update). The table is unlogged: a budget is worth
-- no WAL write and no fsync per request, and the table coming back empty
-- after a crash of the database server (or on a promoted standby) only
-- fills every bucket once.

CREATE UNLOGGED TABLE rate_budgets (
	key        text PRIMARY KEY,
	per_minute integer NOT NULL CHECK (per_minute > 0),
	full_ns    bigint NOT NULL
) WITH (fillfactor = 50);
