package postgres

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkbolt/linkbolt/link"
)

// Wire IDs have the bbolt store's form (link.IDCodec): a record's
// sequence, drawn from the PostgreSQL sequence of its kind (ids_usr,
// ids_ws, …), encrypted under the store's ID key. The key is made by the
// first instance that opens the database and kept in settings, with the
// legacy maxima of data brought over from a data file that had them.

// Settings rows of the ID codec.
const (
	settingIDKey       = "id_key"
	settingIDLegacyMax = "id_legacy_max" // JSON: prefix → highest legacy sequence
)

// loadIDCodec returns the database's ID codec, storing a new random key
// when there is none (any instance's first start).
func loadIDCodec(ctx context.Context, pool *pgxpool.Pool) (*link.IDCodec, error) {
	fresh := make([]byte, link.IDKeySize)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("generate ID key: %w", err)
	}
	var key, legacyJSON []byte
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, settingIDKey, fresh); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1`, settingIDKey).Scan(&key); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1`, settingIDLegacyMax).Scan(&legacyJSON)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ID key: %w", err)
	}
	if len(key) != link.IDKeySize {
		return nil, fmt.Errorf("ID key: %d bytes, want %d", len(key), link.IDKeySize)
	}
	legacy := map[string]uint64{}
	if legacyJSON != nil {
		if err := json.Unmarshal(legacyJSON, &legacy); err != nil {
			return nil, fmt.Errorf("decode legacy ID maxima: %w", err)
		}
	}
	return link.NewIDCodec(key, legacy)
}

// newID draws the next sequence of prefix's kind in tx and returns the
// record's wire ID and sequence.
func (db *DB) newID(ctx context.Context, tx pgx.Tx, prefix string) (string, int64, error) {
	var seq int64
	if err := tx.QueryRow(ctx, `SELECT nextval($1::regclass)`, "ids_"+strings.TrimSuffix(prefix, "_")).Scan(&seq); err != nil {
		return "", 0, fmt.Errorf("new %sID: %w", prefix, err)
	}
	return db.ids.FormatID(prefix, uint64(seq)), seq, nil
}

// validID reports whether id is a wire ID the store could have given out
// as prefix's kind: anything else is "not found" before any query, as in
// the bbolt store.
func (db *DB) validID(prefix, id string) bool {
	_, ok := db.ids.ParseID(prefix, id)
	return ok
}
