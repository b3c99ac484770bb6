package storage

import (
	"context"
	"errors"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// bucketACME holds what automatic HTTPS (server.tls: acme) keeps: the ACME
// account key and each host's certificate and private key, under the
// names the ACME client gives them. In the data file, a backup carries
// them and a restored server serves HTTPS at once, with no new order.
var bucketACME = []byte("acme") // name → data

// CertCache stores the ACME account and the certificates of automatic
// HTTPS in the data file.
type CertCache struct {
	db *DB
}

// NewCertCache returns the certificate store of db.
func NewCertCache(db *DB) *CertCache { return &CertCache{db: db} }

// errNoCert answers a name that is not stored.
var errNoCert = link.Errorf(link.ENOTFOUND, "no such certificate data")

// Get returns the data stored under name. ENOTFOUND.
func (c *CertCache) Get(_ context.Context, name string) ([]byte, error) {
	var out []byte
	err := c.db.CatchDamage(func() error {
		return c.db.db.View(func(tx *bolt.Tx) error {
			out = cloneBytes(tx.Bucket(bucketACME).Get([]byte(name)))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, errNoCert
	}
	return out, nil
}

// Put stores data under name, replacing what was there.
func (c *CertCache) Put(_ context.Context, name string, data []byte) error {
	if name == "" {
		return errors.New("storage: empty certificate name")
	}
	return c.db.CatchDamage(func() error {
		return c.db.update(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketACME).Put([]byte(name), cloneBytes(data))
		})
	})
}

// Delete removes name; a name not stored is no error.
func (c *CertCache) Delete(_ context.Context, name string) error {
	return c.db.CatchDamage(func() error {
		return c.db.update(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketACME).Delete([]byte(name))
		})
	})
}
