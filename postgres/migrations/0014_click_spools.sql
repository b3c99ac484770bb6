-- Each instance on PostgreSQL keeps the clicks it cannot write at once in
-- a spool file on its own disk (internal/clickspool), under increasing
-- sequence numbers, and replays them here. A spool's row says the last
-- sequence number written: the transaction that writes a replayed batch
-- reads the row FOR UPDATE and raises it, so that a batch replayed again
-- (the instance stopped between this commit and deleting the batch from
-- its file) is skipped, never counted twice. (IF NOT EXISTS: the test of
-- migration 0010 runs the migrations after it again.)
CREATE TABLE IF NOT EXISTS click_spools (
	id         text PRIMARY KEY,
	applied    bigint NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT now()
);
