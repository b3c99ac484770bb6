-- The store's own settings: the JWT secret, the setup token.
CREATE TABLE settings (
	name  text PRIMARY KEY,
	value bytea NOT NULL
);
