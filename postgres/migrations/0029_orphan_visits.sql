-- Orphan visits: requests to a short-link host that found no link
-- (link.OrphanVisit). Every visit is counted per domain, hour and type;
-- at most analytics.orphan_visits_per_hour visits per domain and hour are
-- kept as rows.
CREATE TABLE orphan_visit_counts (
	domain text NOT NULL,
	hour   timestamptz NOT NULL,
	type   text NOT NULL,
	count  bigint NOT NULL,
	PRIMARY KEY (domain, hour, type)
);

CREATE TABLE orphan_visits (
	id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	domain   text NOT NULL,
	time     timestamptz NOT NULL,
	type     text NOT NULL,
	path     text NOT NULL,
	referrer text NOT NULL DEFAULT '',
	country  text NOT NULL DEFAULT '',
	device   text NOT NULL DEFAULT '',
	browser  text NOT NULL DEFAULT '',
	os       text NOT NULL DEFAULT '',
	bot      boolean NOT NULL DEFAULT false
);
CREATE INDEX orphan_visits_domain_time ON orphan_visits (domain, time DESC, id DESC);
CREATE INDEX orphan_visits_time ON orphan_visits (time);
