-- The colours and descriptions of a workspace's tags (link.Tag): a row
-- only for a tag with one or the other; links carry their tags as names
-- in links.tags, which the Tags section counts (links_tags).
CREATE TABLE IF NOT EXISTS tags (
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name         text NOT NULL,
	color        text NOT NULL DEFAULT '',
	description  text NOT NULL DEFAULT '',
	updated_at   timestamptz NOT NULL,
	PRIMARY KEY (workspace_id, name)
);
