-- The totals rows (dim 0) of the click aggregates by scope and period,
-- with their counts: analytics reads a range's series and unique visitors
-- from them alone. The primary key (scope, period, dim, value) puts the
-- period before dim, so those reads went through every dimension's rows
-- of the range (a workspace's 90 days: about 1,000 rows a day) or scanned
-- the table.
CREATE INDEX click_hours_totals ON click_hours (scope, hour) INCLUDE (clicks, bots) WHERE dim = 0;
CREATE INDEX click_days_totals ON click_days (scope, day) INCLUDE (clicks, bots, visitors, bot_visitors) WHERE dim = 0;
