-- Destination checks (link.LinkCheckService). A workspace turns them on
-- with destination_checks; link_checks_enrolled is the highest links.seq
-- of it enrolled so far: each claim enrolls the links after it, so that a
-- new link is enrolled without a scan of the others.
ALTER TABLE workspaces ADD COLUMN IF NOT EXISTS destination_checks boolean NOT NULL DEFAULT false;
ALTER TABLE workspaces ADD COLUMN IF NOT EXISTS link_checks_enrolled bigint NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS workspaces_destination_checks ON workspaces (id) WHERE destination_checks;

-- The last check of each enrolled link and when the next is due: a claim
-- reads link_checks_due from its start, a list of broken links
-- link_checks_broken. Redirects never read this table.
CREATE TABLE IF NOT EXISTS link_checks (
	link_id         text PRIMARY KEY REFERENCES links (id) ON DELETE CASCADE,
	workspace_id    text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	status          text NOT NULL DEFAULT 'unchecked',
	http_status     integer NOT NULL DEFAULT 0,
	error           text NOT NULL DEFAULT '',
	checked_at      timestamptz,
	failures        integer NOT NULL DEFAULT 0,
	destination_url text NOT NULL DEFAULT '',
	next_check_at   timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS link_checks_due ON link_checks (next_check_at);
CREATE INDEX IF NOT EXISTS link_checks_broken ON link_checks (workspace_id, link_id) WHERE status = 'broken';
CREATE INDEX IF NOT EXISTS link_checks_workspace ON link_checks (workspace_id);
