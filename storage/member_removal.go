package storage

import (
	"bytes"
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// maxCreatorChain bounds the walk from a key or webhook to the user who
// made it through keys that made keys (the server walks as far).
const maxCreatorChain = 16

// leftBehind is what a removed member made that would otherwise go on
// acting for them: the keys revoked and the webhooks disabled.
type leftBehind struct {
	keys, webhooks []string
}

// endMembersWork revokes, in the transaction of uid's removal from wid, the
// live keys uid made (directly or through keys they made), and disables the
// webhooks made the same way, each with its own audit entry. A key an owner
// keeps (Keep) is left working, and so is what was made through it: the
// owner vouched for it, as for a disabled user's keys. Revoking is for
// good, so that inviting the person again does not bring back tokens they
// may have kept; a webhook stays listed, disabled with
// link.WebhookCreatorRemoved, for an owner to delete or enable again.
func (db *DB) endMembersWork(ctx context.Context, tx *bolt.Tx, wid, uid uint64) (leftBehind, error) {
	var out leftBehind
	now := db.now()
	userID := db.ids.formatID(prefixUser, uid)

	for _, kid := range workspaceIDs(tx.Bucket(bucketKeysWorkspace), wid) {
		rec, err := findKey(tx, wid, kid)
		if err != nil {
			return out, fmt.Errorf("key index: %w", err)
		}
		state := rec.apiKey(db.ids, kid, keyUsage{}).State(now)
		if rec.Keep || !state.Authenticates() {
			continue
		}
		if mine, err := madeBy(tx, db.ids, wid, userID, rec.CreatorType, rec.CreatorID); err != nil || !mine {
			if err != nil {
				return out, err
			}
			continue
		}
		if err := revokeKeyRecord(tx, wid, kid, rec, now); err != nil {
			return out, err
		}
		if err := db.recordAudit(ctx, tx, wid, link.AuditKeyRevoked, keyTarget(db.ids, kid),
			link.AuditChanges("state", string(state), string(link.KeyRevoked), "reason", nil, "creator_removed")); err != nil {
			return out, err
		}
		out.keys = append(out.keys, db.ids.formatID(prefixKey, kid))
	}

	for _, whid := range workspaceIDs(tx.Bucket(bucketWebhooksWorkspace), wid) {
		rec, err := findWebhook(tx, wid, whid)
		if err != nil {
			return out, fmt.Errorf("webhook index: %w", err)
		}
		if !rec.Enabled && !rec.subscribed() {
			continue // a person disabled it: it sends and queues nothing
		}
		if mine, err := madeBy(tx, db.ids, wid, userID, rec.CreatorType, rec.CreatorID); err != nil || !mine {
			if err != nil {
				return out, err
			}
			continue
		}
		old := *rec
		rec.Enabled, rec.DisabledReason, rec.UpdatedAt = false, link.WebhookCreatorRemoved, now
		if err := setSubscriptions(tx, whid, &old, rec); err != nil {
			return out, err
		}
		if err := putJSON(tx.Bucket(bucketWebhooks), itob(whid), rec); err != nil {
			return out, err
		}
		if err := db.recordAudit(ctx, tx, wid, link.AuditWebhookDisabled, webhookTarget(db.ids, whid),
			webhookChanges(&old, rec)); err != nil {
			return out, err
		}
		out.webhooks = append(out.webhooks, db.ids.formatID(prefixWebhook, whid))
	}
	return out, nil
}

// madeBy reports whether the creator (typ, id) of a key or webhook of
// workspace wid is the user userID, directly or through keys that made
// keys, none of them kept by an owner. A creator unknown or gone is not.
func madeBy(tx *bolt.Tx, ids *idCodec, wid uint64, userID, typ, id string) (bool, error) {
	for range maxCreatorChain {
		switch typ {
		case link.CreatorUser:
			return id == userID, nil
		case link.CreatorKey:
			kid, ok := ids.parseID(prefixKey, id)
			if !ok {
				return false, nil
			}
			rec, err := findKey(tx, wid, kid)
			if link.ErrorCode(err) == link.ENOTFOUND {
				return false, nil
			} else if err != nil {
				return false, err
			}
			if rec.Keep {
				return false, nil
			}
			typ, id = rec.CreatorType, rec.CreatorID
		default:
			return false, nil
		}
	}
	return false, nil
}

// revokeKeyRecord marks a live key revoked at now and takes it off
// keys.live; the caller records the audit entry.
func revokeKeyRecord(tx *bolt.Tx, wid, kid uint64, rec *keyRecord, now time.Time) error {
	rec.RevokedAt = &now
	if err := tx.Bucket(bucketKeysLive).Delete(concat(itob(wid), itob(kid))); err != nil {
		return fmt.Errorf("live key index: %w", err)
	}
	return putJSON(tx.Bucket(bucketKeys), itob(kid), rec)
}

// errActorGone refuses a write whose actor can no longer act in the
// workspace (actorGone).
var errActorGone = link.Errorf(link.EFORBIDDEN,
	"you are no longer a member of this workspace, or the API key you used no longer works (revoked, expired, or its member removed): nothing was saved")

// checkActor returns errActorGone unless the actor of ctx may still act in
// workspace wid at now. The server checks who may act when a request
// begins; a key or a webhook outlasts the request, so its write checks
// again in its own transaction, ordered with the member's removal
// (endMembersWork): a request that began before the removal and saves
// after it (its webhook URL held by a slow name server) would otherwise
// leave behind what the removal ended. A ctx without a user or key actor
// (the system, the command line) passes.
func checkActor(ctx context.Context, tx *bolt.Tx, ids *idCodec, wid uint64, now time.Time) error {
	actor, _ := link.ActorFrom(ctx)
	typ, id := actor.Type, actor.ID
	if typ == link.ActorKey {
		kid, ok := ids.parseID(prefixKey, id)
		if !ok {
			return nil
		}
		rec, err := findKey(tx, wid, kid)
		if link.ErrorCode(err) == link.ENOTFOUND {
			return errActorGone // a key of another workspace acts in none but its own
		} else if err != nil {
			return err
		}
		if !rec.apiKey(ids, kid, keyUsage{}).State(now).Authenticates() {
			return errActorGone
		}
	}
	// The walk as the server's keyCreatorStop: a key an owner keeps vouches
	// for itself, a creator unknown or gone is no one's. (A key's creator
	// types, link.CreatorUser and CreatorKey, are the actor types' words.)
	for range maxCreatorChain + 1 {
		switch typ {
		case link.ActorUser:
			uid, ok := ids.parseID(prefixUser, id)
			if !ok {
				return nil
			}
			if tx.Bucket(bucketWorkspaceMembers).Get(concat(itob(wid), itob(uid))) == nil {
				return errActorGone
			}
			return nil
		case link.ActorKey:
			kid, ok := ids.parseID(prefixKey, id)
			if !ok {
				return nil
			}
			rec, err := findKey(tx, wid, kid)
			if link.ErrorCode(err) == link.ENOTFOUND {
				return nil
			} else if err != nil {
				return err
			}
			if rec.Keep {
				return nil
			}
			typ, id = rec.CreatorType, rec.CreatorID
		default:
			return nil
		}
	}
	return errActorGone // deeper than the server lets a key act
}

// workspaceIDs returns the IDs a workspace index (workspace ID, then the
// object's ID) lists under wid, read before the caller changes any of them.
func workspaceIDs(b *bolt.Bucket, wid uint64) []uint64 {
	var ids []uint64
	prefix := itob(wid)
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) == len(prefix)+8 {
			ids = append(ids, btoi(k[len(prefix):]))
		}
	}
	return ids
}
