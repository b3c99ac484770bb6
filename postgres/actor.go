package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// errActorGone refuses a write whose actor can no longer act in the
// workspace.
var errActorGone = link.Errorf(link.EFORBIDDEN,
	"you are no longer a member of this workspace, or the API key you used no longer works (revoked, expired, or its member removed): nothing was saved")

// checkActor returns errActorGone unless the actor of ctx may still act in
// workspace wsID at now. The server checks who may act when a request
// begins; a key or a webhook outlasts the request, so its write checks
// again in its own transaction, which holds the workspace's row lock as a
// member's removal does (endMembersWork): a request that began before the
// removal and saves after it would otherwise leave behind what the
// removal ended. A ctx without a user or key actor (the system, the
// command line) passes. The key and webhook services call it.
func (db *DB) checkActor(ctx context.Context, tx pgx.Tx, wsID string, now time.Time) error {
	actor, _ := link.ActorFrom(ctx)
	typ, id := actor.Type, actor.ID
	if typ == link.ActorKey {
		if !db.validID(link.PrefixKey, id) {
			return nil
		}
		k, err := findKeyRow(ctx, tx, wsID, id, false)
		if link.ErrorCode(err) == link.ENOTFOUND {
			return errActorGone // a key of another workspace acts in none but its own
		} else if err != nil {
			return err
		}
		if !k.State(now).Authenticates() {
			return errActorGone
		}
	}
	// The walk as the server's: a key an owner keeps vouches for itself, a
	// creator unknown or gone is no one's. (A key's creator types,
	// link.CreatorUser and CreatorKey, are the actor types' words.)
	for range maxCreatorChain + 1 {
		switch typ {
		case link.ActorUser:
			if !db.validID(link.PrefixUser, id) {
				return nil
			}
			var member bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM members WHERE workspace_id = $1 AND user_id = $2)`, wsID, id).Scan(&member); err != nil {
				return err
			}
			if !member {
				return errActorGone
			}
			return nil
		case link.ActorKey:
			if !db.validID(link.PrefixKey, id) {
				return nil
			}
			k, err := findKeyRow(ctx, tx, wsID, id, false)
			if link.ErrorCode(err) == link.ENOTFOUND {
				return nil
			} else if err != nil {
				return err
			}
			if k.KeepWhenCreatorDisabled {
				return nil
			}
			typ, id = k.CreatedBy.Type, k.CreatedBy.ID
		default:
			return nil
		}
	}
	return errActorGone // deeper than the server lets a key act
}
