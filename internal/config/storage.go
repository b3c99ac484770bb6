package config

import (
	"errors"
	"net/url"
)

// Postgres reports whether the store is PostgreSQL (storage.postgres_url
// is set) rather than the bbolt file at storage.path.
func (c *Config) Postgres() bool { return c.Storage.PostgresURL != "" }

// checkPostgresURL checks storage.postgres_url's shape; the rest (host,
// credentials, the database) is checked by connecting. Its errors never
// quote the URL: it may hold a password.
func checkPostgresURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Opaque != "" {
		return errors.New("must be a libpq URL such as postgres://linkbolt:PASSWORD@localhost:5432/linkbolt")
	}
	if u.Host == "" && u.Query().Get("host") == "" {
		return errors.New("names no host: postgres://USER:PASSWORD@HOST:5432/DATABASE")
	}
	return nil
}
