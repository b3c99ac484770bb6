package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// CertStore keeps automatic HTTPS's certificates and ACME account.
type CertStore struct{ db *DB }

var _ link.CertStore = (*CertStore)(nil)

// Get returns the data stored under name. ENOTFOUND.
func (c *CertStore) Get(ctx context.Context, name string) ([]byte, error) {
	var data []byte
	err := c.db.pool.QueryRow(ctx, `SELECT data FROM certs WHERE name = $1`, name).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "certificate %q not found", name)
	}
	return data, err
}

// Put stores data under name, replacing what was there.
func (c *CertStore) Put(ctx context.Context, name string, data []byte) error {
	return c.db.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO certs (name, data) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET data = excluded.data`, name, data)
		return err
	})
}

// Delete removes name; a missing name is no error.
func (c *CertStore) Delete(ctx context.Context, name string) error {
	return c.db.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM certs WHERE name = $1`, name)
		return err
	})
}
