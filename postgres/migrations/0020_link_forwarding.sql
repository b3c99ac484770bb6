-- A link may pass what a visitor adds to its short URL on to its
-- destination: bit 1 the path after the code, bit 2 the query
-- (link.Link.ForwardPath, ForwardQuery). 0, the default, forwards nothing,
-- as every link did before.
ALTER TABLE links ADD COLUMN IF NOT EXISTS forward smallint NOT NULL DEFAULT 0;

-- A workspace's defaults for the links created in it that do not say
-- (link.Workspace.ForwardPath, ForwardQuery), the same bits.
ALTER TABLE workspaces ADD COLUMN IF NOT EXISTS link_forward smallint NOT NULL DEFAULT 0;
