-- UTM templates: saved sets of UTM values a new link can take
-- (link.UTMTemplate). A name is unique in its workspace whatever its case;
-- a workspace has at most link.MaxUTMTemplates (counted under a lock of
-- the workspace's row).
CREATE SEQUENCE ids_utm;

CREATE TABLE utm_templates (
	id           text PRIMARY KEY,
	seq          bigint NOT NULL CONSTRAINT utm_templates_seq_key UNIQUE,
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name         text NOT NULL,
	utm_source   text NOT NULL DEFAULT '',
	utm_medium   text NOT NULL DEFAULT '',
	utm_campaign text NOT NULL DEFAULT '',
	created_at   timestamptz NOT NULL,
	updated_at   timestamptz NOT NULL
);
CREATE UNIQUE INDEX utm_templates_name ON utm_templates (workspace_id, lower(name));
