-- The app files a custom domain serves (link.Domain): its
-- /.well-known/apple-app-site-association and assetlinks.json, compact
-- JSON; '' for none.
ALTER TABLE domains ADD COLUMN aasa text NOT NULL DEFAULT '',
	ADD COLUMN asset_links text NOT NULL DEFAULT '';
