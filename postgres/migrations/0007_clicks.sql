-- Clicks: raw clicks (pruned after the retention period), aggregates
-- kept for good (per scope, per hour and per UTC day, a totals row of
-- dim 0 and a row per value of each dimension), the visitors seen per
-- scope and day (pruned; their counts stay in the daily totals), the
-- daily salts, and the backlog of clicks waiting for the aggregates.
-- A link's rows go with the link, a campaign's with the campaign, every
-- scope's with its workspace.

CREATE TABLE clicks (
	id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	workspace_id text NOT NULL,
	link_id      text NOT NULL REFERENCES links (id) ON DELETE CASCADE,
	campaign_id  text NOT NULL,
	at_ns        bigint NOT NULL, -- Unix nanoseconds
	referrer     text NOT NULL,
	country      text NOT NULL,
	device       text NOT NULL,
	browser      text NOT NULL,
	os           text NOT NULL,
	bot          boolean NOT NULL,
	visitor      bigint NOT NULL,
	variant      smallint NOT NULL
);
-- ExportClicks: a workspace's clicks in time order.
CREATE INDEX clicks_workspace_at ON clicks (workspace_id, at_ns, id);
-- PruneClicks: the oldest clicks of every workspace.
CREATE INDEX clicks_at ON clicks (at_ns);
-- DeleteLink's cascade.
CREATE INDEX clicks_link ON clicks (link_id);

-- scope is 'w:' workspace ID, 'l:' link ID or 'c:' workspace ID '/'
-- campaign ID; link_id is set for a link's scope only, campaign_id for a
-- campaign's.
CREATE TABLE click_hours (
	scope        text NOT NULL,
	hour         integer NOT NULL, -- whole hours since the epoch
	dim          smallint NOT NULL, -- 0: the totals; then link.Dimensions' order, 7 variants
	value        text NOT NULL,
	clicks       bigint NOT NULL,
	bots         bigint NOT NULL,
	-- the estimate a value took its place in a bounded top list with
	-- (see boundSections); 0 in totals rows
	inherited    bigint NOT NULL DEFAULT 0,
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	campaign_id  text REFERENCES campaigns (id) ON DELETE CASCADE,
	link_id      text REFERENCES links (id) ON DELETE CASCADE,
	PRIMARY KEY (scope, hour, dim, value)
);
CREATE INDEX click_hours_campaign ON click_hours (campaign_id) WHERE campaign_id IS NOT NULL;
CREATE INDEX click_hours_link ON click_hours (link_id) WHERE link_id IS NOT NULL;
CREATE INDEX click_hours_workspace ON click_hours (workspace_id);
-- RollUpLinkHours: the link scopes' oldest hours.
CREATE INDEX click_hours_link_hour ON click_hours (hour) WHERE link_id IS NOT NULL;

CREATE TABLE click_days (
	scope        text NOT NULL,
	day          integer NOT NULL, -- whole UTC days since the epoch
	dim          smallint NOT NULL,
	value        text NOT NULL,
	clicks       bigint NOT NULL,
	bots         bigint NOT NULL,
	visitors     bigint NOT NULL DEFAULT 0, -- totals only
	bot_visitors bigint NOT NULL DEFAULT 0,
	inherited    bigint NOT NULL DEFAULT 0,
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	campaign_id  text REFERENCES campaigns (id) ON DELETE CASCADE,
	link_id      text REFERENCES links (id) ON DELETE CASCADE,
	PRIMARY KEY (scope, day, dim, value)
);
CREATE INDEX click_days_campaign ON click_days (campaign_id) WHERE campaign_id IS NOT NULL;
CREATE INDEX click_days_link ON click_days (link_id) WHERE link_id IS NOT NULL;
CREATE INDEX click_days_workspace ON click_days (workspace_id);

CREATE TABLE click_visitors (
	scope        text NOT NULL,
	day          integer NOT NULL,
	visitor      bigint NOT NULL,
	-- whether the visitor's first click of the day in the workspace was
	-- a bot's: every scope counts the visitor so
	bot          boolean NOT NULL,
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	campaign_id  text REFERENCES campaigns (id) ON DELETE CASCADE,
	link_id      text REFERENCES links (id) ON DELETE CASCADE,
	PRIMARY KEY (day, scope, visitor)
);
CREATE INDEX click_visitors_campaign ON click_visitors (campaign_id) WHERE campaign_id IS NOT NULL;
CREATE INDEX click_visitors_link ON click_visitors (link_id) WHERE link_id IS NOT NULL;
CREATE INDEX click_visitors_workspace ON click_visitors (workspace_id);

CREATE TABLE click_salts (
	day  integer PRIMARY KEY,
	salt bytea NOT NULL
);

CREATE TABLE click_backlog (
	id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	link_id text NOT NULL,
	click   bytea NOT NULL
);
-- LinkClicks: a link's waiting clicks.
CREATE INDEX click_backlog_link ON click_backlog (link_id);

-- The backlog's size, one row: a spill reads and raises it under its row
-- lock, a drain lowers it, so neither reads the whole backlog.
CREATE TABLE click_backlog_size (
	one    boolean PRIMARY KEY DEFAULT true CHECK (one),
	clicks bigint NOT NULL,
	bytes  bigint NOT NULL
);
INSERT INTO click_backlog_size (clicks, bytes) VALUES (0, 0);
