-- Webhooks: the columns of the webhook service beside those 0003 made for
-- a member's removal. Secrets are kept as given: they sign every delivery.
-- deleting marks a webhook whose deletion has begun: it is invisible and
-- subscribed to nothing while its deliveries are deleted in chunks; the
-- row goes last.
ALTER TABLE webhooks
	ADD COLUMN secret                     text NOT NULL DEFAULT '',
	ADD COLUMN previous_secret            text NOT NULL DEFAULT '',
	ADD COLUMN previous_secret_expires_at timestamptz,
	ADD COLUMN failures                   integer NOT NULL DEFAULT 0,
	ADD COLUMN deleting                   boolean NOT NULL DEFAULT false;
CREATE INDEX webhooks_deleting ON webhooks (seq) WHERE deleting;

-- The outbox's events of changes (link.created, link.updated,
-- link.deleted, campaign.updated), kept while a webhook of the workspace
-- was subscribed to their type when they were written; FindEvents pages
-- them by seq. A click's event lives only in its deliveries, and a ping's
-- takes an ID but no row. data is the JSON as the encoder gave it.
CREATE SEQUENCE ids_evt;
CREATE TABLE events (
	seq          bigint PRIMARY KEY,
	id           text NOT NULL CONSTRAINT events_id_key UNIQUE,
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	type         text NOT NULL,
	created_at   timestamptz NOT NULL,
	data         bytea NOT NULL
);
CREATE INDEX events_workspace ON events (workspace_id, seq);
CREATE INDEX events_created ON events (created_at);

-- Deliveries: one event on its way to one webhook, with the body fixed
-- when the event was written, and its log. A pending delivery has a place
-- in its webhook's queue (queue, from deliveries_queue_seq), none once it
-- succeeded or failed; the head of a webhook's queue is its pending
-- delivery of the lowest queue. deliveries_queue is the index
-- DueDeliveries walks: one probe per webhook with a queue, however long
-- the queues.
CREATE SEQUENCE ids_dlv;
CREATE SEQUENCE deliveries_queue_seq;
CREATE TABLE deliveries (
	seq             bigint PRIMARY KEY,
	id              text NOT NULL CONSTRAINT deliveries_id_key UNIQUE,
	webhook_id      text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
	workspace_id    text NOT NULL,
	-- "" for none
	event_id        text NOT NULL DEFAULT '',
	event_type      text NOT NULL,
	payload         bytea NOT NULL,
	status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
	attempts        integer NOT NULL DEFAULT 0,
	response_code   integer NOT NULL DEFAULT 0,
	duration_ns     bigint NOT NULL DEFAULT 0,
	last_error      text NOT NULL DEFAULT '',
	next_attempt_at timestamptz,
	queue           bigint,
	queued_at       timestamptz NOT NULL,
	created_at      timestamptz NOT NULL,
	updated_at      timestamptz NOT NULL,
	CONSTRAINT deliveries_queued_pending CHECK ((status = 'pending') = (queue IS NOT NULL))
);
CREATE UNIQUE INDEX deliveries_queue ON deliveries (webhook_id, queue) WHERE queue IS NOT NULL;
CREATE INDEX deliveries_webhook ON deliveries (webhook_id, seq);
CREATE INDEX deliveries_finished ON deliveries (updated_at) WHERE queue IS NULL;

-- The number of pending deliveries (the outbox's depth, for the metrics),
-- in slots that a transaction queueing or dequeueing deliveries moves, one
-- slot of its choice, as its last statement: writers on many connections
-- seldom wait for one another, and the depth is the slots' sum.
CREATE TABLE outbox_depth (
	slot    smallint PRIMARY KEY,
	pending bigint NOT NULL DEFAULT 0
);
INSERT INTO outbox_depth (slot) SELECT generate_series(0, 15);

-- Campaigns; a link names its campaign (the link service's table).
CREATE SEQUENCE ids_cmp;
CREATE TABLE campaigns (
	id           text PRIMARY KEY,
	seq          bigint NOT NULL CONSTRAINT campaigns_seq_key UNIQUE,
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name         text NOT NULL,
	status       text NOT NULL,
	utm_source   text NOT NULL DEFAULT '',
	utm_medium   text NOT NULL DEFAULT '',
	utm_campaign text NOT NULL DEFAULT '',
	created_at   timestamptz NOT NULL,
	updated_at   timestamptz NOT NULL
);
CREATE INDEX campaigns_workspace ON campaigns (workspace_id, seq);
