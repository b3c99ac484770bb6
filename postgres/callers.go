package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// callerFinder reads what authenticates a request, one statement each, so
// that what another instance changed (a logout, a disabled user, a
// member removed, a key revoked) counts on the very next request here.
type callerFinder struct {
	keys *KeyService
}

// FindTokenUser returns the token's user and whether the token was logged
// out (revoked_tokens, until its expiry). ENOTFOUND.
func (c *callerFinder) FindTokenUser(ctx context.Context, userID, tokenID string, now time.Time) (*link.User, bool, error) {
	var revoked bool
	u, err := scanUser(c.keys.db.pool.QueryRow(ctx, `SELECT `+userColumns+`,
		EXISTS (SELECT 1 FROM revoked_tokens r WHERE r.id = $2 AND r.expires_at > $3)
		FROM users WHERE id = $1`, userID, tokenID, now), &revoked)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, link.Errorf(link.ENOTFOUND, "user %q not found", userID)
	} else if err != nil {
		return nil, false, fmt.Errorf("token user: %w", err)
	}
	return u, revoked, nil
}

// keyCallerSQL reads a key with its usage, its workspace (a key goes with
// its workspace) and, for a key a user made, that user's disabled flag and
// role in the workspace: one index probe each.
const keyCallerSQL = `SELECT ` + keyColumns + `, coalesce(u.request_count, 0), u.last_used_at, pg_current_snapshot()::text,
	` + wsColumns + `, coalesce(cu.disabled, false), coalesce(m.role, '')
	FROM keys k
	JOIN workspaces w ON w.id = k.workspace_id
	LEFT JOIN key_usage u ON u.key_id = k.id
	LEFT JOIN users cu ON k.creator_type = 'user' AND cu.id = k.creator_id
	LEFT JOIN members m ON k.creator_type = 'user' AND m.workspace_id = k.workspace_id AND m.user_id = k.creator_id
	WHERE k.hash = $1`

// FindKeyCaller returns the key with the token hash as authentication
// reads it. ENOTFOUND.
func (c *callerFinder) FindKeyCaller(ctx context.Context, hash []byte) (*link.KeyCaller, error) {
	if len(hash) == 0 {
		return nil, link.Errorf(link.ENOTFOUND, "key not found")
	}
	db := c.keys.db
	r := db.usage.begin()
	var count int64
	var last *time.Time
	var snap string
	var out link.KeyCaller
	var ws link.Workspace
	var since *time.Time
	var forward int16
	var role string
	k, err := scanKey(db.pool.QueryRow(ctx, keyCallerSQL, hash), &count, &last, &snap,
		&ws.ID, &ws.Name, &ws.Plan, &ws.CreatedAt, &ws.UpdatedAt, &since, &forward, &ws.DestinationChecks, &ws.Pixels.Meta, &ws.Pixels.Google, &ws.Pixels.LinkedIn, &out.CreatorDisabled, &role)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "key not found")
	} else if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	setUsage(k, count, last)
	if err := db.usage.merge(ctx, db, r, snap, []*link.APIKey{k}); err != nil {
		return nil, err
	}
	ws.CreatedAt, ws.UpdatedAt = ws.CreatedAt.UTC(), ws.UpdatedAt.UTC()
	if since != nil {
		ws.DataSince = since.UTC()
	}
	ws.ForwardPath, ws.ForwardQuery = forward&forwardPath != 0, forward&forwardQuery != 0
	out.Key, out.Workspace, out.CreatorRole = k, &ws, link.Role(role)
	return &out, nil
}
