-- Background work shared by the instances on one database.
--
-- leases: one row per periodic job (the hourly upkeep's prunings, the
-- recording of ended API keys): the instance that holds it (holder: its
-- server.instance_id and a random part of its process) runs the job, the
-- others skip it until the lease ends (until).
CREATE TABLE leases (
	name   text PRIMARY KEY,
	holder text NOT NULL,
	until  timestamptz NOT NULL
);

-- webhook_claims: the webhooks whose queue an instance is sending, one row
-- each while the run is in flight; deleted once its attempts are recorded.
-- A claim whose holder died ends at until, and another instance sends the
-- queue's head again (same delivery id, same event id).
CREATE TABLE webhook_claims (
	webhook_id text PRIMARY KEY REFERENCES webhooks (id) ON DELETE CASCADE,
	holder     text NOT NULL,
	until      timestamptz NOT NULL
);
