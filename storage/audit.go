package storage

// The audit log: one record per entry, and four indexes (by time, actor,
// action and target), each written under every scope the entry belongs to
// — its workspaces (0 for an instance-level entry) and the instance-wide
// scope the admin reads — so that every filter is a prefix walk, newest
// first. An entry is written by the transaction of the change it records
// (db.recordAudit), so a change that fails records nothing.

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

var _ link.AuditService = (*AuditService)(nil)

// prefixAudit is the wire ID prefix of audit entries.
const prefixAudit = link.PrefixAudit

// auditAllScope is the scope of the instance-wide indexes; no workspace
// has this sequence.
const auditAllScope = math.MaxUint64

// auditSystemID is what the actor index holds for the system actor, which
// has no ID, so that actor=system filters its entries.
const auditSystemID = "system"

// AuditService keeps the audit log in bbolt.
type AuditService struct{ db *DB }

// NewAuditService returns the audit service of db.
func NewAuditService(db *DB) *AuditService { return &AuditService{db: db} }

// auditRecord is an audit entry on disk. Changes hold [before, after].
type auditRecord struct {
	Workspaces []uint64              `json:"ws,omitempty"`
	Time       time.Time             `json:"t"`
	ActorType  string                `json:"at"`
	ActorID    string                `json:"ai,omitempty"`
	ActorName  string                `json:"an,omitempty"`
	Action     string                `json:"a"`
	TargetType string                `json:"tt,omitempty"`
	TargetID   string                `json:"ti,omitempty"`
	Address    string                `json:"ad,omitempty"`
	Changes    map[string][2]*string `json:"c,omitempty"`
}

func (r *auditRecord) entry(ids *idCodec, id uint64) *link.AuditEntry {
	e := &link.AuditEntry{
		ID: ids.formatID(prefixAudit, id), Time: r.Time,
		Actor:  link.Actor{Type: r.ActorType, ID: r.ActorID, Name: r.ActorName},
		Action: r.Action, Target: link.AuditTarget{Type: r.TargetType, ID: r.TargetID},
		Address: r.Address,
	}
	for _, w := range r.Workspaces {
		if w != 0 {
			e.WorkspaceIDs = append(e.WorkspaceIDs, ids.formatID(prefixWorkspace, w))
		}
	}
	if len(r.Changes) > 0 {
		e.Changes = make(map[string]link.Change, len(r.Changes))
		for f, c := range r.Changes {
			e.Changes[f] = link.Change{Before: c[0], After: c[1]}
		}
	}
	return e
}

// scopes returns the scopes an entry is indexed under.
func (r *auditRecord) scopes() []uint64 {
	if len(r.Workspaces) == 0 {
		return []uint64{0, auditAllScope}
	}
	return append(append([]uint64{}, r.Workspaces...), auditAllScope)
}

// actorIndexID is the value the actor index holds for the entry's actor.
func (r *auditRecord) actorIndexID() string {
	if r.ActorType == link.ActorSystem {
		return auditSystemID
	}
	return r.ActorID
}

// auditSuffix is the end of every index key: the time and the entry's ID.
func auditSuffix(t time.Time, id uint64) []byte {
	return concat(itob(uint64(max(t.UnixNano(), 0))), itob(id))
}

// auditIndexKeys returns each index bucket with the keys of the entry in it.
func auditIndexKeys(r *auditRecord, id uint64) map[string][][]byte {
	suffix := auditSuffix(r.Time, id)
	out := map[string][][]byte{}
	for _, s := range r.scopes() {
		sc := itob(s)
		out[string(bucketAuditTime)] = append(out[string(bucketAuditTime)], concat(sc, suffix))
		out[string(bucketAuditActor)] = append(out[string(bucketAuditActor)], concat(sc, []byte(r.actorIndexID()), []byte{0}, suffix))
		out[string(bucketAuditAction)] = append(out[string(bucketAuditAction)], concat(sc, []byte(r.Action), []byte{0}, suffix))
		if r.TargetID != "" {
			out[string(bucketAuditTarget)] = append(out[string(bucketAuditTarget)], concat(sc, []byte(r.TargetID), []byte{0}, suffix))
		}
	}
	return out
}

// putAudit stores an entry and its index keys in tx.
func putAudit(tx *bolt.Tx, r *auditRecord) error {
	b := tx.Bucket(bucketAudit)
	id, err := nextID(b)
	if err != nil {
		return err
	}
	b.FillPercent = 0.9 // written in key order
	if err := putJSON(b, itob(id), r); err != nil {
		return fmt.Errorf("audit entry: %w", err)
	}
	for name, keys := range auditIndexKeys(r, id) {
		ib := tx.Bucket([]byte(name))
		for _, k := range keys {
			if err := ib.Put(k, []byte{}); err != nil {
				return fmt.Errorf("index audit entry: %w", err)
			}
		}
	}
	return nil
}

// recordAudit records action on target in the write transaction tx of the
// change, for workspace wid (0: the instance), at the database's clock,
// by the actor and from the address of ctx (link.WithActor; the system
// when none). changes hold the changed fields as before and after, never
// a secret. Any storage write calls it beside its change:
//
//	err := s.db.recordAudit(ctx, tx, wid, link.AuditKeyRevoked,
//		link.AuditTarget{Type: "key", ID: keyID}, link.AuditChanges("state", "active", "revoked"))
func (db *DB) recordAudit(ctx context.Context, tx *bolt.Tx, wid uint64, action string, target link.AuditTarget, changes map[string][2]*string) error {
	var ws []uint64
	if wid != 0 {
		ws = []uint64{wid}
	}
	return putAudit(tx, newAuditRecord(ctx, ws, db.now(), action, target, changes))
}

func newAuditRecord(ctx context.Context, ws []uint64, at time.Time, action string, target link.AuditTarget, changes map[string][2]*string) *auditRecord {
	actor, addr := link.ActorFrom(ctx)
	return &auditRecord{Workspaces: ws, Time: at.UTC(), ActorType: actor.Type, ActorID: actor.ID, ActorName: actor.Name,
		Action: action, TargetType: target.Type, TargetID: target.ID, Address: addr, Changes: changes}
}

// recordUserAudit is recordAudit for an action on a user's account (a
// password change, a sign-out everywhere): the entry belongs to every
// workspace the user is a member of, read in tx, and to the instance when
// there is none.
func (db *DB) recordUserAudit(ctx context.Context, tx *bolt.Tx, uid uint64, action string, target link.AuditTarget, changes map[string][2]*string) error {
	var ws []uint64
	prefix := itob(uid)
	c := tx.Bucket(bucketUserWorkspaces).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) == 16 {
			ws = append(ws, btoi(k[8:]))
		}
	}
	return putAudit(tx, newAuditRecord(ctx, ws, db.now(), action, target, changes))
}

// RecordUserAudit stores an entry of an action on a user's account that
// changes nothing else (a sign-in) in every workspace of the user, with
// the actor and address of ctx; for an unknown user, the instance's.
func (s *AuditService) RecordUserAudit(ctx context.Context, userID, action string, target link.AuditTarget, changes map[string]link.Change) error {
	uid, _ := s.db.ids.parseID(prefixUser, userID)
	ch := link.AuditChangeRecords(changes)
	return s.db.update(func(tx *bolt.Tx) error { return s.db.recordUserAudit(ctx, tx, uid, action, target, ch) })
}

// RecordAudit stores an entry of an action that changes nothing else (a
// login, a backup download) for the workspaces named (none: the instance),
// with the actor and address of ctx. Unknown workspaces are left out.
func (s *AuditService) RecordAudit(ctx context.Context, workspaceIDs []string, action string, target link.AuditTarget, changes map[string]link.Change) error {
	var ws []uint64
	for _, id := range workspaceIDs {
		if wid, ok := s.db.ids.parseID(prefixWorkspace, id); ok {
			ws = append(ws, wid)
		}
	}
	rec := newAuditRecord(ctx, ws, s.db.now(), action, target, link.AuditChangeRecords(changes))
	return s.db.update(func(tx *bolt.Tx) error { return putAudit(tx, rec) })
}

// FindAuditEntries returns a page of the entries f selects, newest first,
// and the cursor of the next page ("" when there is none). It walks the
// index of the most selective filter given (actor, target, action, else
// time) and checks the others on each entry. EINVALIDREQUEST for a
// malformed cursor; an unknown workspace has no entries.
func (s *AuditService) FindAuditEntries(ctx context.Context, f link.AuditFilter) ([]*link.AuditEntry, string, error) {
	scope := uint64(0)
	switch {
	case f.AllWorkspaces && f.WorkspaceID == "":
		scope = auditAllScope
	case f.WorkspaceID != "":
		wid, ok := s.db.ids.parseID(prefixWorkspace, f.WorkspaceID)
		if !ok {
			return []*link.AuditEntry{}, "", nil
		}
		scope = wid
	}
	upper := []byte(nil) // index suffix to walk below, exclusive
	if !f.End.IsZero() {
		upper = auditSuffix(f.End, 0)
	}
	if f.Cursor != "" {
		c, err := base64.RawURLEncoding.DecodeString(f.Cursor)
		if err != nil || len(c) != 16 {
			return nil, "", link.Errorf(link.EINVALIDREQUEST, "cursor is not one this server gave out")
		}
		if upper == nil || bytes.Compare(c, upper) < 0 {
			upper = c
		}
	}
	limit := f.Limit
	if limit <= 0 || limit > link.MaxAuditPage {
		limit = link.MaxAuditPage
	}
	bucket, prefix := bucketAuditTime, itob(scope)
	switch {
	case f.Actor != "":
		bucket, prefix = bucketAuditActor, concat(prefix, []byte(f.Actor), []byte{0})
	case f.Target != "":
		bucket, prefix = bucketAuditTarget, concat(prefix, []byte(f.Target), []byte{0})
	case f.Action != "":
		bucket, prefix = bucketAuditAction, concat(prefix, []byte(f.Action), []byte{0})
	}
	out := []*link.AuditEntry{}
	next := ""
	err := s.db.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		var k []byte
		if upper == nil {
			k = lastWithPrefix(c, prefix)
		} else if k, _ = c.Seek(concat(prefix, upper)); k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		records := tx.Bucket(bucketAudit)
		var last []byte
		for ; k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+16; k, _ = c.Prev() {
			suffix := k[len(prefix):]
			if !f.Start.IsZero() && btoi(suffix[:8]) < uint64(max(f.Start.UnixNano(), 0)) {
				break
			}
			id := btoi(suffix[8:])
			var rec auditRecord
			if ok, err := getJSON(records, itob(id), &rec); err != nil {
				return err
			} else if !ok {
				return fmt.Errorf("audit index: entry %d missing", id)
			}
			if !auditMatches(&rec, f) {
				continue
			}
			if len(out) == limit {
				next = base64.RawURLEncoding.EncodeToString(last)
				return nil
			}
			out = append(out, rec.entry(s.db.ids, id))
			last = cloneBytes(suffix)
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return out, next, nil
}

// auditMatches checks the filters the index walked does not.
func auditMatches(r *auditRecord, f link.AuditFilter) bool {
	return (f.Actor == "" || r.actorIndexID() == f.Actor) &&
		(f.Action == "" || r.Action == f.Action) &&
		(f.Target == "" || r.TargetID == f.Target)
}

// auditPruneChunk is how many entries one pruning transaction deletes.
const auditPruneChunk = 5000

// PruneAudit deletes the entries recorded before before, oldest first, in
// transactions of at most auditPruneChunk entries, and returns how many.
func (s *AuditService) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	deleted := 0
	end := itob(uint64(max(before.UnixNano(), 0)))
	for {
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		n := 0
		err := s.db.update(func(tx *bolt.Tx) error {
			n = 0
			prefix := itob(auditAllScope)
			var ids [][]byte
			c := tx.Bucket(bucketAuditTime).Cursor()
			for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(ids) < auditPruneChunk; k, _ = c.Next() {
				if len(k) != 24 || bytes.Compare(k[8:16], end) >= 0 {
					break
				}
				ids = append(ids, cloneBytes(k[16:]))
			}
			for _, id := range ids {
				if err := deleteAudit(tx, id); err != nil {
					return err
				}
			}
			n = len(ids)
			return nil
		})
		if err != nil {
			return deleted, fmt.Errorf("prune audit log: %w", err)
		}
		deleted += n
		if n < auditPruneChunk {
			return deleted, nil
		}
	}
}

// deleteAudit deletes an entry and its index keys.
func deleteAudit(tx *bolt.Tx, id []byte) error {
	records := tx.Bucket(bucketAudit)
	var rec auditRecord
	if ok, err := getJSON(records, id, &rec); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("audit index: entry %x missing", id)
	}
	for name, keys := range auditIndexKeys(&rec, btoi(id)) {
		ib := tx.Bucket([]byte(name))
		for _, k := range keys {
			if err := ib.Delete(k); err != nil {
				return fmt.Errorf("unindex audit entry: %w", err)
			}
		}
	}
	return records.Delete(id)
}
