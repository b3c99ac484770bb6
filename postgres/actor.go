package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// errActorGone refuses a write whose actor can no longer act in the
// workspace.
var errActorGone = link.Errorf(link.EFORBIDDEN,
	"you are no longer a member of this workspace, or the API key you used no longer works (revoked, expired, or its member removed): nothing was saved")

// checkActor returns errActorGone unless the actor of ctx may still act in
// workspace wsID at now, read in tx, which has locked the workspace's row:
// so the check is ordered with a member's removal (endMembersWork, under
// the same lock), and a request that began before the removal and saves
// after it cannot leave behind what the removal ended. The walk is the
// server's: a key an owner keeps vouches for itself, a creator unknown or
// gone is no one's. A ctx without a user or key actor (the system, the
// command line) passes.
func (db *DB) checkActor(ctx context.Context, tx pgx.Tx, wsID string, now time.Time) error {
	actor, _ := link.ActorFrom(ctx)
	typ, id := actor.Type, actor.ID
	if typ == link.ActorKey {
		if !db.validID(link.PrefixKey, id) {
			return nil
		}
		k, err := actorKey(ctx, tx, wsID, id)
		if err != nil {
			return err
		}
		if k == nil {
			return errActorGone // a key of another workspace acts in none but its own
		}
		if !(&link.APIKey{ExpiresAt: k.expiresAt, RevokedAt: k.revokedAt, GraceEndsAt: k.graceEnd}).State(now).Authenticates() {
			return errActorGone
		}
	}
	for range maxCreatorChain + 1 {
		switch typ {
		case link.ActorUser:
			if !db.validID(link.PrefixUser, id) {
				return nil
			}
			var member bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM members WHERE workspace_id = $1 AND user_id = $2)`,
				wsID, id).Scan(&member); err != nil {
				return fmt.Errorf("actor's membership: %w", err)
			}
			if !member {
				return errActorGone
			}
			return nil
		case link.ActorKey:
			if !db.validID(link.PrefixKey, id) {
				return nil
			}
			k, err := actorKey(ctx, tx, wsID, id)
			if err != nil || k == nil || k.keep {
				return err
			}
			typ, id = k.creatorType, k.creatorID
		default:
			return nil
		}
	}
	return errActorGone // deeper than the server lets a key act
}

// actorKey reads a key of the workspace for checkActor; nil when it has
// none of that ID.
func actorKey(ctx context.Context, tx pgx.Tx, wsID, id string) (*removalKey, error) {
	k := removalKey{id: id}
	err := tx.QueryRow(ctx, `SELECT expires_at, revoked_at, grace_ends_at, creator_type, creator_id, keep_when_creator_disabled
		FROM keys WHERE id = $1 AND workspace_id = $2`, id, wsID).
		Scan(&k.expiresAt, &k.revokedAt, &k.graceEnd, &k.creatorType, &k.creatorID, &k.keep)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("actor's key: %w", err)
	}
	return &k, nil
}
