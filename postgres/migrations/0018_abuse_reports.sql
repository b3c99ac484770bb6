-- Abuse reports: visitors' reports of short links to the instance admin
-- (link.AbuseReport). The open reports of a link for one reason are one
-- row, counted; link_id stays when the link is deleted.
CREATE SEQUENCE ids_rpt;

CREATE TABLE abuse_reports (
	id           text PRIMARY KEY,
	seq          bigint NOT NULL CONSTRAINT abuse_reports_seq_key UNIQUE,
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	link_id      text NOT NULL,
	domain       text NOT NULL DEFAULT '',
	alias        text NOT NULL,
	destination  text NOT NULL,
	reason       text NOT NULL,
	details      text NOT NULL DEFAULT '',
	contact      text NOT NULL DEFAULT '',
	count        bigint NOT NULL DEFAULT 1,
	status       text NOT NULL,
	created_at   timestamptz NOT NULL,
	updated_at   timestamptz NOT NULL
);
CREATE UNIQUE INDEX abuse_reports_open ON abuse_reports (link_id, reason) WHERE status = 'open';
CREATE INDEX abuse_reports_updated ON abuse_reports (updated_at DESC, seq DESC);
