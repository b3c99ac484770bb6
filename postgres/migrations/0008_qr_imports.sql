-- Saved QR code designs, and the links imports brought in.
CREATE SEQUENCE ids_qr;

-- QR code designs. link_id names a link of the workspace when the design
-- is saved; as in the bbolt store, a design outlives its link's deletion
-- (no foreign key to links).
CREATE TABLE qr_codes (
	id           text PRIMARY KEY,
	seq          bigint NOT NULL CONSTRAINT qr_codes_seq_key UNIQUE,
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	link_id      text NOT NULL,
	name         text NOT NULL,
	format       text NOT NULL,
	size         integer NOT NULL,
	margin       integer NOT NULL,
	level        text NOT NULL,
	foreground   text NOT NULL,
	background   text NOT NULL,
	created_at   timestamptz NOT NULL,
	updated_at   timestamptz NOT NULL
);
-- Lists, newest first, of the workspace or of one of its links.
CREATE INDEX qr_codes_workspace ON qr_codes (workspace_id, seq);
CREATE INDEX qr_codes_link ON qr_codes (workspace_id, link_id, seq);

-- The links imports created (or found made by hand), by source and the
-- link's key at its source: a link imported before is never imported
-- again. link_id stays when the link is deleted, so a rerun does not
-- bring a deleted link back.
CREATE TABLE imports (
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	source       text NOT NULL,
	source_key   text NOT NULL,
	link_id      text NOT NULL,
	PRIMARY KEY (workspace_id, source, source_key)
);
