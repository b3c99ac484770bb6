package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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

// removalKey is what a member's removal reads of a key.
type removalKey struct {
	id                             string
	expiresAt, revokedAt, graceEnd *time.Time
	creatorType, creatorID         string
	keep                           bool
}

// endMembersWork revokes, in the transaction of userID's removal from the
// workspace, the live keys they made (directly or through keys they
// made), and disables the webhooks made the same way, each with its own
// audit entry. A key an owner keeps (KeepWhenCreatorDisabled) is left
// working, and so is what was made through it. Revoking is for good, so
// that inviting the person again does not bring back tokens they may
// have kept; a webhook stays listed, disabled with
// link.WebhookCreatorRemoved, for an owner to delete or enable again.
func (db *DB) endMembersWork(ctx context.Context, tx pgx.Tx, workspaceID, userID string) (leftBehind, error) {
	var out leftBehind
	now := db.now().UTC()
	rows, err := tx.Query(ctx, `SELECT id, expires_at, revoked_at, grace_ends_at, creator_type, creator_id, keep_when_creator_disabled
		FROM keys WHERE workspace_id = $1 ORDER BY seq FOR UPDATE`, workspaceID)
	if err != nil {
		return out, fmt.Errorf("keys of the workspace: %w", err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*removalKey, error) {
		var k removalKey
		err := r.Scan(&k.id, &k.expiresAt, &k.revokedAt, &k.graceEnd, &k.creatorType, &k.creatorID, &k.keep)
		return &k, err
	})
	if err != nil {
		return out, fmt.Errorf("keys of the workspace: %w", err)
	}
	byID := make(map[string]*removalKey, len(keys))
	for _, k := range keys {
		byID[k.id] = k
	}

	for _, k := range keys {
		state := (&link.APIKey{ExpiresAt: k.expiresAt, RevokedAt: k.revokedAt, GraceEndsAt: k.graceEnd}).State(now)
		if k.keep || !state.Authenticates() || !madeBy(byID, userID, k.creatorType, k.creatorID) {
			continue
		}
		if _, err := tx.Exec(ctx, `UPDATE keys SET revoked_at = $2 WHERE id = $1`, k.id, now); err != nil {
			return out, fmt.Errorf("revoke key %s: %w", k.id, err)
		}
		if err := db.recordAudit(ctx, tx, workspaceID, link.AuditKeyRevoked, link.AuditTarget{Type: "key", ID: k.id},
			link.AuditChanges("state", string(state), string(link.KeyRevoked), "reason", nil, "creator_removed")); err != nil {
			return out, err
		}
		out.keys = append(out.keys, k.id)
	}

	rows, err = tx.Query(ctx, `SELECT id, url, events, enabled, description, disabled_reason, creator_type, creator_id
		FROM webhooks WHERE workspace_id = $1 ORDER BY seq FOR UPDATE`, workspaceID)
	if err != nil {
		return out, fmt.Errorf("webhooks of the workspace: %w", err)
	}
	type hook struct {
		id, url                string
		events                 []string
		enabled                bool
		description, reason    string
		creatorType, creatorID string
	}
	hooks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (hook, error) {
		var h hook
		err := r.Scan(&h.id, &h.url, &h.events, &h.enabled, &h.description, &h.reason, &h.creatorType, &h.creatorID)
		return h, err
	})
	if err != nil {
		return out, fmt.Errorf("webhooks of the workspace: %w", err)
	}
	for _, h := range hooks {
		// A webhook a person disabled sends and queues nothing; one
		// disabled by its failures still is theirs to end.
		subscribed := h.enabled || h.reason != "" && h.reason != link.WebhookCreatorRemoved
		if !subscribed || !madeBy(byID, userID, h.creatorType, h.creatorID) {
			continue
		}
		if _, err := tx.Exec(ctx, `UPDATE webhooks SET enabled = false, disabled_reason = $2, updated_at = $3 WHERE id = $1`,
			h.id, link.WebhookCreatorRemoved, now); err != nil {
			return out, fmt.Errorf("disable webhook %s: %w", h.id, err)
		}
		host := link.AuditURLHost(h.url)
		if err := db.recordAudit(ctx, tx, workspaceID, link.AuditWebhookDisabled, link.AuditTarget{Type: "webhook", ID: h.id},
			link.AuditChanges("url_host", host, host, "events", h.events, h.events, "enabled", h.enabled, false,
				"description", h.description, h.description, "disabled_reason", h.reason, link.WebhookCreatorRemoved)); err != nil {
			return out, err
		}
		out.webhooks = append(out.webhooks, h.id)
	}
	return out, nil
}

// madeBy reports whether the creator (typ, id) of a key or webhook of the
// workspace whose keys are keys is the user userID, directly or through
// keys that made keys, none of them kept by an owner. A creator unknown or
// gone is not.
func madeBy(keys map[string]*removalKey, userID, typ, id string) bool {
	for range maxCreatorChain {
		switch typ {
		case link.CreatorUser:
			return id == userID
		case link.CreatorKey:
			k, ok := keys[id]
			if !ok || k.keep {
				return false
			}
			typ, id = k.creatorType, k.creatorID
		default:
			return false
		}
	}
	return false
}
