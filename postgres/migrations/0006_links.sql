-- Custom domains, links and their alias holds. Redirects find a link by
-- (domain, alias): one lookup of the unique index links_alias_key.
CREATE SEQUENCE ids_dom;
CREATE SEQUENCE ids_lnk;

-- Custom domains: a hostname belongs to at most one workspace of the
-- instance (domains_hostname_key), by which FindVerifiedDomain routes
-- requests.
CREATE TABLE domains (
	id                text PRIMARY KEY,
	seq               bigint NOT NULL CONSTRAINT domains_seq_key UNIQUE,
	workspace_id      text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	hostname          text NOT NULL CONSTRAINT domains_hostname_key UNIQUE,
	verified          boolean NOT NULL DEFAULT false,
	verified_at       timestamptz,
	token             text NOT NULL,
	root_redirect_url text NOT NULL DEFAULT '',
	not_found_url     text NOT NULL DEFAULT '',
	created_at        timestamptz NOT NULL,
	updated_at        timestamptz NOT NULL
);
CREATE INDEX domains_workspace ON domains (workspace_id, seq);

-- Links. domain is '' for the primary host. search_text is what a search
-- reads: the alias, the first 512 bytes of the destination and each tag,
-- lower-cased (as Go lower-cases them), one a line. clicks is the number
-- of recorded clicks, kept by the click service: no index holds it and
-- pages keep room (fillfactor), so that adding to it is a heap-only
-- update that writes no index entry. A list sorted by clicks reads the
-- newest links (at most the scan limit) and sorts them, as the bbolt
-- store does.
CREATE TABLE links (
	id                text PRIMARY KEY,
	seq               bigint NOT NULL CONSTRAINT links_seq_key UNIQUE,
	workspace_id      text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	domain            text NOT NULL DEFAULT '',
	alias             text NOT NULL,
	destination_url   text NOT NULL,
	tags              text[] NOT NULL DEFAULT '{}',
	utm_source        text NOT NULL DEFAULT '',
	utm_medium        text NOT NULL DEFAULT '',
	utm_campaign      text NOT NULL DEFAULT '',
	campaign_id       text NOT NULL DEFAULT '',
	redirect_code     integer NOT NULL,
	clicks            bigint NOT NULL DEFAULT 0,
	created_at        timestamptz NOT NULL,
	updated_at        timestamptz NOT NULL,
	-- link controls: password, rules, variants, social card
	password_hash     text NOT NULL DEFAULT '',
	rules             jsonb,
	variants          jsonb,
	og                jsonb,
	-- link controls: expiry and limits
	expires_at        timestamptz,
	max_clicks        bigint NOT NULL DEFAULT 0,
	expired_url       text NOT NULL DEFAULT '',
	archived          boolean NOT NULL DEFAULT false,
	title             text NOT NULL DEFAULT '',
	search_text       text NOT NULL DEFAULT '',
	-- the redirect's lookup, and a domain's links (counted by its prefix)
	CONSTRAINT links_alias_key UNIQUE (domain, alias)
) WITH (fillfactor = 90);
-- Lists, newest first.
CREATE INDEX links_workspace ON links (workspace_id, seq);
-- Lists by tag (any of the tags).
CREATE INDEX links_tags ON links USING gin (tags);
-- A campaign's links (counted, listed, detached), as a campaign ID names
-- one workspace's campaign.
CREATE INDEX links_campaign ON links (campaign_id, seq) WHERE campaign_id <> '';

-- Aliases freed by a deletion or a rename: until "until" only the
-- workspace that freed one may take it again, so that the traffic of old
-- short URLs never reaches another workspace's link. A held alias
-- redirects nowhere.
CREATE TABLE link_alias_holds (
	domain       text NOT NULL,
	alias        text NOT NULL,
	workspace_id text NOT NULL,
	until        timestamptz NOT NULL,
	PRIMARY KEY (domain, alias)
);
CREATE INDEX link_alias_holds_until ON link_alias_holds (until);

-- Search: a trigram index answers substring searches of 3 characters or
-- more. pg_trgm is a trusted extension (PostgreSQL 13+: a database owner
-- may create it); where the role cannot, searches read the workspace's
-- links instead, bounded by the scan limit.
DO $$
BEGIN
	CREATE EXTENSION IF NOT EXISTS pg_trgm;
	CREATE INDEX links_search ON links USING gin (search_text gin_trgm_ops);
EXCEPTION WHEN OTHERS THEN
	RAISE NOTICE 'no trigram index (%): link searches read the links instead', SQLERRM;
END
$$;
