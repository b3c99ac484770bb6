-- The clicks of links with max_clicks, counted in the database so that
-- every instance on it reserves from one count (postgres/click_reservations.go):
-- a click is reserved by one statement that increments used while it is
-- below the link's max_clicks. A row is started from the link's stored
-- click total (the click backlog's included) the first time a limited
-- link is clicked; it lives while the link has max_clicks (removing the
-- limit deletes it, deleting the link too). Each reservation rewrites the
-- row: its pages keep room (fillfactor) so that the new version goes on
-- the same page without an index entry (a heap-only update).

CREATE TABLE click_reservations (
	link_id text PRIMARY KEY REFERENCES links (id) ON DELETE CASCADE,
	used    bigint NOT NULL CHECK (used >= 0)
) WITH (fillfactor = 50);
