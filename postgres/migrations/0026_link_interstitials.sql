-- A link may serve a page before its redirect: bit 1 sends visitors in a
-- social app's in-app browser on to their system browser, bit 2 fires the
-- workspace's retargeting pixels (link.Link.EscapeInApp, Retargeting).
-- 0, the default, serves none, as every link did before.
ALTER TABLE links ADD COLUMN IF NOT EXISTS interstitial smallint NOT NULL DEFAULT 0;

-- A workspace's retargeting pixels (link.Workspace.Pixels); '' is a
-- network not used.
ALTER TABLE workspaces ADD COLUMN IF NOT EXISTS pixel_meta text NOT NULL DEFAULT '',
	ADD COLUMN IF NOT EXISTS pixel_google text NOT NULL DEFAULT '',
	ADD COLUMN IF NOT EXISTS pixel_linkedin text NOT NULL DEFAULT '';
