-- The click aggregates as one row per scope and period (hour or UTC
-- day) instead of one row per dimension value: the totals in columns and
-- the top lists in one bytea (see postgres/click_sums.go for its form).
-- A click of a link new in the hour wrote about 14 rows of the old
-- tables and now writes 2. Exactly one of workspace_id, campaign_id and
-- link_id is set: the scope's owner, whose deletion deletes the row.
-- A busy period's row is rewritten by every batch: its pages keep room
-- (fillfactor) so that the new version goes on the same page and no index
-- entry is written (a heap-only update).

CREATE TABLE click_hour_sums (
	scope        text NOT NULL,
	hour         integer NOT NULL, -- whole hours since the epoch
	clicks       bigint NOT NULL,
	bots         bigint NOT NULL,
	tops         bytea NOT NULL,
	workspace_id text REFERENCES workspaces (id) ON DELETE CASCADE,
	campaign_id  text REFERENCES campaigns (id) ON DELETE CASCADE,
	link_id      text REFERENCES links (id) ON DELETE CASCADE,
	PRIMARY KEY (scope, hour),
	CHECK (num_nonnulls(workspace_id, campaign_id, link_id) = 1)
) WITH (fillfactor = 80);
CREATE INDEX click_hour_sums_workspace ON click_hour_sums (workspace_id) WHERE workspace_id IS NOT NULL;
CREATE INDEX click_hour_sums_campaign ON click_hour_sums (campaign_id) WHERE campaign_id IS NOT NULL;
CREATE INDEX click_hour_sums_link ON click_hour_sums (link_id) WHERE link_id IS NOT NULL;
-- RollUpLinkHours: the link scopes' oldest hours.
CREATE INDEX click_hour_sums_link_hour ON click_hour_sums (hour) WHERE link_id IS NOT NULL;

CREATE TABLE click_day_sums (
	scope        text NOT NULL,
	day          integer NOT NULL, -- whole UTC days since the epoch
	clicks       bigint NOT NULL,
	bots         bigint NOT NULL,
	visitors     bigint NOT NULL,
	bot_visitors bigint NOT NULL,
	tops         bytea NOT NULL,
	workspace_id text REFERENCES workspaces (id) ON DELETE CASCADE,
	campaign_id  text REFERENCES campaigns (id) ON DELETE CASCADE,
	link_id      text REFERENCES links (id) ON DELETE CASCADE,
	PRIMARY KEY (scope, day),
	CHECK (num_nonnulls(workspace_id, campaign_id, link_id) = 1)
) WITH (fillfactor = 80);
CREATE INDEX click_day_sums_workspace ON click_day_sums (workspace_id) WHERE workspace_id IS NOT NULL;
CREATE INDEX click_day_sums_campaign ON click_day_sums (campaign_id) WHERE campaign_id IS NOT NULL;
CREATE INDEX click_day_sums_link ON click_day_sums (link_id) WHERE link_id IS NOT NULL;

-- The rows of the old tables, each scope's period gathered into one.
INSERT INTO click_hour_sums (scope, hour, clicks, bots, tops, workspace_id, campaign_id, link_id)
SELECT scope, hour,
	coalesce(sum(clicks) FILTER (WHERE dim = 0), 0), coalesce(sum(bots) FILTER (WHERE dim = 0), 0),
	coalesce(string_agg(int2send(dim) || int2send(octet_length(convert_to(value, 'UTF8'))::smallint) || convert_to(value, 'UTF8')
		|| int8send(clicks) || int8send(bots) || int8send(inherited), ''::bytea ORDER BY dim, convert_to(value, 'UTF8')) FILTER (WHERE dim > 0), ''::bytea),
	CASE WHEN min(link_id) IS NULL AND min(campaign_id) IS NULL THEN min(workspace_id) END, min(campaign_id), min(link_id)
FROM click_hours GROUP BY scope, hour;

INSERT INTO click_day_sums (scope, day, clicks, bots, visitors, bot_visitors, tops, workspace_id, campaign_id, link_id)
SELECT scope, day,
	coalesce(sum(clicks) FILTER (WHERE dim = 0), 0), coalesce(sum(bots) FILTER (WHERE dim = 0), 0),
	coalesce(sum(visitors) FILTER (WHERE dim = 0), 0), coalesce(sum(bot_visitors) FILTER (WHERE dim = 0), 0),
	coalesce(string_agg(int2send(dim) || int2send(octet_length(convert_to(value, 'UTF8'))::smallint) || convert_to(value, 'UTF8')
		|| int8send(clicks) || int8send(bots) || int8send(inherited), ''::bytea ORDER BY dim, convert_to(value, 'UTF8')) FILTER (WHERE dim > 0), ''::bytea),
	CASE WHEN min(link_id) IS NULL AND min(campaign_id) IS NULL THEN min(workspace_id) END, min(campaign_id), min(link_id)
FROM click_days GROUP BY scope, day;

DROP TABLE click_hours;
DROP TABLE click_days;
