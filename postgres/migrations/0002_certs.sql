-- Automatic HTTPS: certificates, their keys and the ACME account, by the
-- name autocert gives them.
CREATE TABLE certs (
	name text PRIMARY KEY,
	data bytea NOT NULL
);
