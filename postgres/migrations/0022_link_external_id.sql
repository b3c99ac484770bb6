-- A link may carry another system's ID (link.Link.ExternalID), unique in
-- its workspace; NULL, the default, is none.
ALTER TABLE links ADD COLUMN IF NOT EXISTS external_id text;
CREATE UNIQUE INDEX IF NOT EXISTS links_external_key ON links (workspace_id, external_id) WHERE external_id IS NOT NULL;
