package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

var _ link.KeyService = (*KeyService)(nil)

// KeyService keeps API keys in bbolt. Key usage (TouchKey) is counted in
// memory and written in batches by the DB; every read merges what is not
// written yet, so counts are exact.
type KeyService struct{ db *DB }

// NewKeyService returns the key service of db.
func NewKeyService(db *DB) *KeyService { return &KeyService{db: db} }

type keyRecord struct {
	Workspace   uint64     `json:"ws"`
	Name        string     `json:"name"`
	Scope       link.Scope `json:"scope"`
	Hash        []byte     `json:"hash"`
	Start       string     `json:"start"`
	CreatedAt   time.Time  `json:"created_at"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
	GraceEndsAt *time.Time `json:"grace_ends_at,omitempty"`
	ReplacedBy  uint64     `json:"replaced_by,omitempty"`
	// CreatorType and CreatorID name the user or key that made the key.
	CreatorType string `json:"creator_type,omitempty"`
	CreatorID   string `json:"creator_id,omitempty"`
	// Keep keeps the key working when its creator is disabled.
	Keep bool `json:"keep_when_creator_disabled,omitempty"`
	// Resources limits the key (link.APIKey.Resources); none: every one.
	Resources []string `json:"resources,omitempty"`
}

func (r *keyRecord) apiKey(ids *idCodec, id uint64, u keyUsage) *link.APIKey {
	k := &link.APIKey{
		ID:           ids.formatID(prefixKey, id),
		WorkspaceID:  ids.formatID(prefixWorkspace, r.Workspace),
		Name:         r.Name,
		Scope:        r.Scope,
		Hash:         cloneBytes(r.Hash),
		Start:        r.Start,
		CreatedAt:    r.CreatedAt,
		ExpiresAt:    cloneTime(r.ExpiresAt),
		RevokedAt:    cloneTime(r.RevokedAt),
		GraceEndsAt:  cloneTime(r.GraceEndsAt),
		RequestCount: u.count,
		CreatedBy:    link.KeyCreator{Type: r.CreatorType, ID: r.CreatorID},

		KeepWhenCreatorDisabled: r.Keep,
		Resources:               slices.Clone(r.Resources),
	}
	if r.ReplacedBy != 0 {
		k.ReplacedBy = ids.formatID(prefixKey, r.ReplacedBy)
	}
	if !u.last.IsZero() {
		last := u.last
		k.LastUsedAt = &last
	}
	return k
}

func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := t.UTC()
	return &c
}

// keyUsage is a number of uses and the latest of them.
type keyUsage struct {
	count int64
	last  time.Time
}

func (u keyUsage) add(v keyUsage) keyUsage {
	u.count += v.count
	if v.last.After(u.last) {
		u.last = v.last
	}
	return u
}

// Usage records are 16 bytes: the count and the last use in Unix
// nanoseconds (0 for never), both big-endian.
func encodeUsage(u keyUsage) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, uint64(u.count))
	if !u.last.IsZero() {
		binary.BigEndian.PutUint64(b[8:], uint64(u.last.UnixNano()))
	}
	return b
}

func decodeUsage(b []byte) (keyUsage, error) {
	if b == nil {
		return keyUsage{}, nil
	}
	if len(b) != 16 {
		return keyUsage{}, fmt.Errorf("key usage record: %d bytes, want 16", len(b))
	}
	u := keyUsage{count: int64(binary.BigEndian.Uint64(b))}
	if ns := int64(binary.BigEndian.Uint64(b[8:])); ns != 0 {
		u.last = time.Unix(0, ns).UTC()
	}
	return u, nil
}

// usageSnapshot is the key usage in memory that a read transaction's
// snapshot does not contain.
type usageSnapshot struct {
	pending  map[uint64]keyUsage
	flushing map[uint64]keyUsage // nil when the snapshot holds the flush
}

func (s usageSnapshot) usage(tx *bolt.Tx, id uint64) (keyUsage, error) {
	u, err := decodeUsage(tx.Bucket(bucketKeysUsage).Get(itob(id)))
	if err != nil {
		return u, err
	}
	return u.add(s.pending[id]).add(s.flushing[id]), nil
}

// viewWithUsage runs fn in a read transaction together with the key usage
// in memory that the transaction does not see. The transaction begins
// under usageMu, so a running flush is either in the snapshot (its
// transaction id is known and not above the snapshot's) or still in
// flushing, never both and never neither.
//
// For a list (many keys) the pending uses are copied and usageMu released
// at once; for a single key (the per-request FindKeyByHash) copying every
// pending key would cost more than holding usageMu for the few point reads
// of fn, so then usageMu is held until fn returns.
func (db *DB) viewWithUsage(list bool, fn func(*bolt.Tx, usageSnapshot) error) error {
	db.usageMu.Lock()
	locked := true
	defer func() {
		if locked {
			db.usageMu.Unlock()
		}
	}()
	tx, err := db.db.Begin(false)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a read transaction has nothing to lose
	snap := usageSnapshot{pending: db.pending}
	if db.flushing != nil {
		if id := db.flushTxID.Load(); id == 0 || uint64(tx.ID()) < id {
			snap.flushing = db.flushing
		}
	}
	if list {
		snap.pending = maps.Clone(db.pending)
		db.usageMu.Unlock()
		locked = false
	}
	return fn(tx, snap)
}

// TouchKey counts one use of the key at the given time, in memory only.
// Unknown or malformed IDs are ignored when written.
func (s *KeyService) TouchKey(id string, at time.Time) {
	kid, ok := s.db.ids.parseID(prefixKey, id)
	if !ok {
		return
	}
	db := s.db
	db.usageMu.Lock()
	if db.pending == nil {
		db.pending = make(map[uint64]keyUsage)
	}
	db.pending[kid] = db.pending[kid].add(keyUsage{count: 1, last: at.UTC()})
	db.usageMu.Unlock()
}

// FlushKeyUsage writes the key usage counted in memory in one transaction.
// The uses being written stay visible to readers until the write commits;
// if it fails they are put back for the next flush.
func (db *DB) FlushKeyUsage() error {
	if db.db == nil {
		return errors.New("storage: data file not open")
	}
	db.flushMu.Lock()
	defer db.flushMu.Unlock()

	db.usageMu.Lock()
	batch := db.pending
	if len(batch) == 0 {
		db.usageMu.Unlock()
		return nil
	}
	db.pending = make(map[uint64]keyUsage)
	db.flushing = batch
	db.flushTxID.Store(0)
	db.usageMu.Unlock()

	err := db.update(func(tx *bolt.Tx) error {
		// Known before commit: a reader whose snapshot is at least this
		// transaction sees the batch on disk.
		db.flushTxID.Store(uint64(tx.ID()))
		if db.failUsageWrite != nil {
			if err := db.failUsageWrite(); err != nil {
				return err
			}
		}
		return writeKeyUsage(tx, batch)
	})

	db.usageMu.Lock()
	if err != nil {
		for id, u := range batch {
			db.pending[id] = db.pending[id].add(u)
		}
	}
	db.flushing = nil
	db.flushTxID.Store(0)
	db.usageMu.Unlock()
	return err
}

func writeKeyUsage(tx *bolt.Tx, batch map[uint64]keyUsage) error {
	keys, usage := tx.Bucket(bucketKeys), tx.Bucket(bucketKeysUsage)
	for id, u := range batch {
		k := itob(id)
		if keys.Get(k) == nil {
			continue // a use of a key that does not exist: nothing to count
		}
		cur, err := decodeUsage(usage.Get(k))
		if err != nil {
			return err
		}
		if err := usage.Put(k, encodeUsage(cur.add(u))); err != nil {
			return fmt.Errorf("put key usage: %w", err)
		}
	}
	return nil
}

// CreateKey stores a validated key; sets ID and, when zero, CreatedAt.
// ENOTFOUND if the workspace does not exist; ECONFLICT if a key with the
// same hash exists, or if the workspace has max keys active or in grace
// (max <= 0: no cap). The count is taken in the transaction that stores
// the key, so concurrent creations cannot pass the cap.
func (s *KeyService) CreateKey(ctx context.Context, k *link.APIKey, max int) error {
	wid, ok := s.db.ids.parseID(prefixWorkspace, k.WorkspaceID)
	if !ok {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", k.WorkspaceID)
	}
	created := k.CreatedAt.UTC()
	if k.CreatedAt.IsZero() {
		created = s.db.now()
	}
	rec := &keyRecord{
		Workspace:   wid,
		Name:        k.Name,
		Scope:       k.Scope,
		Hash:        cloneBytes(k.Hash),
		Start:       k.Start,
		CreatedAt:   created,
		ExpiresAt:   cloneTime(k.ExpiresAt),
		RevokedAt:   cloneTime(k.RevokedAt),
		CreatorType: k.CreatedBy.Type,
		CreatorID:   k.CreatedBy.ID,
		Resources:   slices.Clone(k.Resources),
	}
	var id uint64
	err := s.db.update(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		if err := checkActor(ctx, tx, s.db.ids, wid, s.db.now()); err != nil {
			return err
		}
		if max > 0 {
			n, err := countLiveKeys(tx, wid, s.db.now())
			if err != nil {
				return err
			}
			if n >= max {
				return link.Errorf(link.ECONFLICT, "the workspace has %d keys active or in grace, the most allowed (keys.max_per_workspace); revoke keys it no longer needs, or rotate one instead", n)
			}
		}
		var err error
		if id, err = createKey(tx, rec); err != nil {
			return err
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditKeyCreated, keyTarget(s.db.ids, id),
			link.AuditChanges("name", nil, rec.Name, "scope", nil, string(rec.Scope), "expires_at", nil, link.AuditTime(rec.ExpiresAt)))
	})
	if err != nil {
		return err
	}
	k.ID, k.CreatedAt = s.db.ids.formatID(prefixKey, id), created
	return nil
}

// FindKeyByID returns a key of the workspace with its usage. ENOTFOUND.
func (s *KeyService) FindKeyByID(ctx context.Context, workspaceID, id string) (*link.APIKey, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	kid, ok2 := s.db.ids.parseID(prefixKey, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "key %q not found", id)
	}
	var k *link.APIKey
	err := s.db.viewWithUsage(false, func(tx *bolt.Tx, snap usageSnapshot) (err error) {
		k, err = s.readKey(tx, snap, wid, kid)
		return err
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// readKey returns key kid (of workspace wid; 0 means any) with its usage.
// ENOTFOUND.
func (s *KeyService) readKey(tx *bolt.Tx, snap usageSnapshot, wid, kid uint64) (*link.APIKey, error) {
	rec, err := findKey(tx, wid, kid)
	if err != nil {
		return nil, err
	}
	u, err := snap.usage(tx, kid)
	if err != nil {
		return nil, err
	}
	return rec.apiKey(s.db.ids, kid, u), nil
}

// FindKeyByHash returns the key with the token hash, in any state, with
// its usage. ENOTFOUND.
func (s *KeyService) FindKeyByHash(ctx context.Context, hash []byte) (*link.APIKey, error) {
	if len(hash) == 0 {
		return nil, link.Errorf(link.ENOTFOUND, "key not found")
	}
	var k *link.APIKey
	err := s.db.viewWithUsage(false, func(tx *bolt.Tx, snap usageSnapshot) error {
		v := tx.Bucket(bucketKeysHash).Get(hash)
		if v == nil {
			return link.Errorf(link.ENOTFOUND, "key not found")
		}
		var err error
		k, err = s.readKey(tx, snap, 0, btoi(v))
		return err
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// FindKeys returns the workspace's keys, newest first, with their usage.
func (s *KeyService) FindKeys(ctx context.Context, workspaceID string) ([]*link.APIKey, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	out := []*link.APIKey{}
	err := s.db.viewWithUsage(true, func(tx *bolt.Tx, snap usageSnapshot) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		it := newReverseIndex(tx.Bucket(bucketKeysWorkspace), itob(wid))
		for idb := it.next(); idb != nil; idb = it.next() {
			kid := btoi(idb)
			rec, err := findKey(tx, wid, kid)
			if err != nil {
				return fmt.Errorf("key index: %w", err)
			}
			u, err := snap.usage(tx, kid)
			if err != nil {
				return err
			}
			out = append(out, rec.apiKey(s.db.ids, kid, u))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RotateKey stores next with the old key's name, scope and expiry, and puts
// the old key in grace until graceEnds, in one transaction; sets next's ID,
// WorkspaceID, Name, Scope, ExpiresAt and CreatedAt and returns it.
// ENOTFOUND; ECONFLICT unless the old key is active.
//
// Rotation may pass max (keys active or in grace; max <= 0: no cap) so that
// a workspace at the cap can still rotate every key once; at twice max it
// is refused with ECONFLICT until grace periods end or keys are revoked.
func (s *KeyService) RotateKey(ctx context.Context, workspaceID, id string, next *link.APIKey, graceEnds time.Time, max int) (*link.APIKey, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	kid, ok2 := s.db.ids.parseID(prefixKey, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "key %q not found", id)
	}
	now := s.db.now()
	var nrec *keyRecord
	var nid uint64
	err := s.db.update(func(tx *bolt.Tx) error {
		old, err := findKey(tx, wid, kid)
		if err != nil {
			return err
		}
		if st := old.apiKey(s.db.ids, kid, keyUsage{}).State(now); st != link.KeyActive {
			return link.Errorf(link.ECONFLICT, "only an active key can be rotated; this key is %s", st)
		}
		if err := checkActor(ctx, tx, s.db.ids, wid, now); err != nil {
			return err
		}
		if max > 0 {
			n, err := countLiveKeys(tx, wid, now)
			if err != nil {
				return err
			}
			if n >= 2*max {
				return link.Errorf(link.ECONFLICT, "the workspace has %d keys active or in grace, twice keys.max_per_workspace; revoke keys in grace before rotating more", n)
			}
		}
		nrec = &keyRecord{
			Workspace:   wid,
			Name:        old.Name,
			Scope:       old.Scope,
			Hash:        cloneBytes(next.Hash),
			Start:       next.Start,
			CreatedAt:   now,
			ExpiresAt:   cloneTime(old.ExpiresAt),
			CreatorType: next.CreatedBy.Type,
			CreatorID:   next.CreatedBy.ID,
			Resources:   slices.Clone(old.Resources),
		}
		if nid, err = createKey(tx, nrec); err != nil {
			return err
		}
		g := graceEnds.UTC()
		old.GraceEndsAt, old.ReplacedBy = &g, nid
		if err := putJSON(tx.Bucket(bucketKeys), itob(kid), old); err != nil {
			return err
		}
		// The entry names when the old key stops working; key.grace_ended
		// follows once that time has passed (see recordEndedKeys).
		return s.db.recordAudit(ctx, tx, wid, link.AuditKeyRotated, keyTarget(s.db.ids, kid),
			link.AuditChanges("replaced_by", nil, s.db.ids.formatID(prefixKey, nid), "grace_ends_at", nil, link.AuditTime(&g)))
	})
	if err != nil {
		return nil, err
	}
	*next = *nrec.apiKey(s.db.ids, nid, keyUsage{})
	return next, nil
}

// RevokeKey revokes a key now. ENOTFOUND. Revoking a revoked key keeps its
// first revocation time.
func (s *KeyService) RevokeKey(ctx context.Context, workspaceID, id string) error {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	kid, ok2 := s.db.ids.parseID(prefixKey, id)
	if !ok1 || !ok2 {
		return link.Errorf(link.ENOTFOUND, "key %q not found", id)
	}
	now := s.db.now()
	return s.db.update(func(tx *bolt.Tx) error {
		rec, err := findKey(tx, wid, kid)
		if err != nil {
			return err
		}
		if rec.RevokedAt != nil {
			return nil
		}
		state := rec.apiKey(s.db.ids, kid, keyUsage{}).State(now)
		if err := revokeKeyRecord(tx, wid, kid, rec, now); err != nil {
			return err
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditKeyRevoked, keyTarget(s.db.ids, kid),
			link.AuditChanges("state", string(state), string(link.KeyRevoked)))
	})
}

// SetKeepWhenCreatorDisabled sets whether the key keeps working when its
// creator is disabled, recording key.updated when that changes, and
// returns the key. ENOTFOUND.
func (s *KeyService) SetKeepWhenCreatorDisabled(ctx context.Context, workspaceID, id string, keep bool) (*link.APIKey, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	kid, ok2 := s.db.ids.parseID(prefixKey, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "key %q not found", id)
	}
	err := s.db.update(func(tx *bolt.Tx) error {
		rec, err := findKey(tx, wid, kid)
		if err != nil {
			return err
		}
		if rec.Keep == keep {
			return nil
		}
		rec.Keep = keep
		if err := putJSON(tx.Bucket(bucketKeys), itob(kid), rec); err != nil {
			return err
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditKeyUpdated, keyTarget(s.db.ids, kid),
			link.AuditChanges("keep_when_creator_disabled", fmt.Sprint(!keep), fmt.Sprint(keep)))
	})
	if err != nil {
		return nil, err
	}
	return s.FindKeyByID(ctx, workspaceID, id)
}

// countLiveKeys returns how many keys of workspace wid are active or in
// grace at now. It reads the keys.live index, which holds every key not yet
// seen revoked or expired, and drops the ones that have become so (both
// are final), so a count reads about the live keys only however many dead
// ones the workspace has. A workspace's index is built from all its keys
// the first time it is counted (data files from before the index).
func countLiveKeys(tx *bolt.Tx, wid uint64, now time.Time) (int, error) {
	live := tx.Bucket(bucketKeysLive)
	prefix := itob(wid)
	if live.Get(prefix) == nil {
		if err := buildLiveKeys(tx, wid, now); err != nil {
			return 0, err
		}
	}
	n := 0
	var dead [][]byte
	c := live.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) != len(prefix)+8 {
			continue // the workspace's marker
		}
		kid := btoi(k[len(prefix):])
		rec, err := findKey(tx, wid, kid)
		if err != nil {
			return 0, fmt.Errorf("live key index: %w", err)
		}
		if rec.apiKey(idsOf(tx), kid, keyUsage{}).State(now).Authenticates() {
			n++
		} else {
			dead = append(dead, cloneBytes(k))
		}
	}
	for _, k := range dead {
		if err := dropEndedKey(tx, k, now); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// dropEndedKey removes a key that has stopped authenticating from keys.live
// (key: workspace id + key id) and records how it ended: key.grace_ended
// for a rotated key whose grace period is over, key.expired for one past
// its expiry, by the system and at the time it ended (a revocation was
// recorded when it was made). Both are noticed in a later transaction
// (counting a workspace's keys, or RecordEndedKeys), so the entry is
// written then with the earlier time.
func dropEndedKey(tx *bolt.Tx, k []byte, now time.Time) error {
	wid, kid := btoi(k[:8]), btoi(k[8:16])
	if err := tx.Bucket(bucketKeysLive).Delete(k); err != nil {
		return fmt.Errorf("live key index: %w", err)
	}
	rec, err := findKey(tx, wid, kid)
	if err != nil {
		return fmt.Errorf("live key index: %w", err)
	}
	ids := idsOf(tx)
	var action string
	var at time.Time
	switch {
	case rec.RevokedAt != nil:
		return nil
	case rec.ExpiresAt != nil && !now.Before(*rec.ExpiresAt) && (rec.GraceEndsAt == nil || rec.ExpiresAt.Before(*rec.GraceEndsAt)):
		action, at = link.AuditKeyExpired, *rec.ExpiresAt
	case rec.GraceEndsAt != nil && !now.Before(*rec.GraceEndsAt):
		action, at = link.AuditKeyGraceEnded, *rec.GraceEndsAt
	default:
		return nil
	}
	before := link.KeyActive
	if rec.GraceEndsAt != nil {
		before = link.KeyGrace
	}
	after := link.KeyRevoked
	if action == link.AuditKeyExpired {
		after = link.KeyExpired
	}
	e := newAuditRecord(context.Background(), []uint64{wid}, at, action, keyTarget(ids, kid),
		link.AuditChanges("state", string(before), string(after)))
	return putAudit(tx, e)
}

// RecordEndedKeys finds the keys whose grace period or expiry has passed
// by now, takes them off keys.live and records key.grace_ended or
// key.expired for each (see dropEndedKey). The server runs it with the
// audit log's pruning, every hour; it returns how many keys ended.
func (s *KeyService) RecordEndedKeys(ctx context.Context, now time.Time) (int, error) {
	n := 0
	err := s.db.update(func(tx *bolt.Tx) error {
		n = 0
		var ended [][]byte
		c := tx.Bucket(bucketKeysLive).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if len(k) != 16 {
				continue // a workspace's marker
			}
			rec, err := findKey(tx, btoi(k[:8]), btoi(k[8:]))
			if err != nil {
				return fmt.Errorf("live key index: %w", err)
			}
			if !rec.apiKey(idsOf(tx), btoi(k[8:]), keyUsage{}).State(now).Authenticates() {
				ended = append(ended, cloneBytes(k))
			}
		}
		for _, k := range ended {
			if err := dropEndedKey(tx, k, now); err != nil {
				return err
			}
		}
		n = len(ended)
		return nil
	})
	return n, err
}

// keyTarget is a key as the target of an audit entry.
func keyTarget(ids *idCodec, kid uint64) link.AuditTarget {
	return link.AuditTarget{Type: "key", ID: ids.formatID(prefixKey, kid)}
}

// buildLiveKeys fills keys.live for workspace wid from all its keys and
// marks it built.
func buildLiveKeys(tx *bolt.Tx, wid uint64, now time.Time) error {
	live := tx.Bucket(bucketKeysLive)
	prefix := itob(wid)
	c := tx.Bucket(bucketKeysWorkspace).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) != len(prefix)+8 {
			continue
		}
		kid := btoi(k[len(prefix):])
		rec, err := findKey(tx, wid, kid)
		if err != nil {
			return fmt.Errorf("key index: %w", err)
		}
		if rec.apiKey(idsOf(tx), kid, keyUsage{}).State(now).Authenticates() {
			if err := live.Put(concat(prefix, itob(kid)), []byte{}); err != nil {
				return fmt.Errorf("live key index: %w", err)
			}
		}
	}
	if err := live.Put(prefix, []byte{}); err != nil {
		return fmt.Errorf("live key index: %w", err)
	}
	return nil
}

// findKey returns a key of workspace wid (any workspace when wid is 0).
func findKey(tx *bolt.Tx, wid, kid uint64) (*keyRecord, error) {
	var rec keyRecord
	ok, err := getJSON(tx.Bucket(bucketKeys), itob(kid), &rec)
	if err != nil {
		return nil, err
	}
	if !ok || wid != 0 && rec.Workspace != wid {
		return nil, link.Errorf(link.ENOTFOUND, "key %q not found", idsOf(tx).formatID(prefixKey, kid))
	}
	return &rec, nil
}

func createKey(tx *bolt.Tx, rec *keyRecord) (uint64, error) {
	if len(rec.Hash) == 0 {
		return 0, errors.New("storage: key without hash")
	}
	hashes := tx.Bucket(bucketKeysHash)
	if hashes.Get(rec.Hash) != nil {
		return 0, link.Errorf(link.ECONFLICT, "a key with this token exists already")
	}
	keys := tx.Bucket(bucketKeys)
	id, err := nextID(keys)
	if err != nil {
		return 0, err
	}
	if err := putJSON(keys, itob(id), rec); err != nil {
		return 0, err
	}
	if err := hashes.Put(rec.Hash, itob(id)); err != nil {
		return 0, fmt.Errorf("index key hash: %w", err)
	}
	if err := tx.Bucket(bucketKeysWorkspace).Put(concat(itob(rec.Workspace), itob(id)), []byte{}); err != nil {
		return 0, fmt.Errorf("index key workspace: %w", err)
	}
	if err := tx.Bucket(bucketKeysLive).Put(concat(itob(rec.Workspace), itob(id)), []byte{}); err != nil {
		return 0, fmt.Errorf("index live key: %w", err)
	}
	return id, nil
}
