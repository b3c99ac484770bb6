package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultClaimFor is how long an instance's claim of a webhook's queue
// lasts: longer than a run of deliveries (a second of sending plus one
// request's timeout and the recording), so that a live instance never
// loses it; an instance that died holds the queue that long.
const DefaultClaimFor = 2 * time.Minute

// Holder names this process where it holds leases and claims: its
// server.instance_id, a slash and a random part, so that two processes
// given one server.instance_id still hold apart.
func (db *DB) Holder() string { return db.name + "/" + db.instance }

// Lease takes the lease of the periodic job name as of now for period, and
// reports whether this process holds it: it does when nobody held it,
// when the last holder's lease ended by now, or when it is this process's
// own. Only the holder runs the job; the others skip it until the lease
// ends, so the job runs once a period across the instances, and the
// lease of an instance that died ends with its period. holder names the
// lease's holder, this process or another.
func (db *DB) Lease(ctx context.Context, name string, now time.Time, period time.Duration) (ok bool, holder string, err error) {
	me := db.Holder()
	err = db.pool.QueryRow(ctx, `INSERT INTO leases AS l (name, holder, until) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
			WHERE l.until <= $4 OR l.holder = excluded.holder
		RETURNING holder`, name, me, now.Add(period).UTC(), now.UTC()).Scan(&holder)
	if errors.Is(err, pgx.ErrNoRows) {
		err = db.pool.QueryRow(ctx, `SELECT holder FROM leases WHERE name = $1`, name).Scan(&holder)
		if err != nil {
			return false, "", fmt.Errorf("lease %s: %w", name, err)
		}
		return false, holder, nil
	}
	if err != nil {
		return false, "", fmt.Errorf("lease %s: %w", name, err)
	}
	return true, holder, nil
}

// takeOverClaims ends, once a process (on its first claim), the webhook
// claims held under its name by an earlier process: one that died and was
// started again with the same server.instance_id sends at once what its
// predecessor had claimed, instead of waiting for the claims to end. Two
// live processes must not share a server.instance_id (see
// docs/postgres.md).
func (s *WebhookService) takeOverClaims(ctx context.Context) error {
	if s.db.tookOver.Load() {
		return nil
	}
	tag, err := s.db.pool.Exec(ctx, `DELETE FROM webhook_claims WHERE split_part(holder, '/', 1) = $1 AND holder <> $2`,
		s.db.name, s.db.Holder())
	if err != nil {
		return fmt.Errorf("take over the webhook claims of %s: %w", s.db.name, err)
	}
	if n := tag.RowsAffected(); n > 0 {
		s.db.logger.Info("webhooks: took over the claims an earlier process of this instance left", "instance", s.db.name,
			"holder", s.db.Holder(), "webhooks", n)
	}
	s.db.tookOver.Store(true)
	return nil
}

// ReleaseDelivery gives up this process's claim of a webhook's queue (see
// DueDeliveries) once its run is recorded or not sent: another instance
// may send the queue's next deliveries at once. A claim another process
// took meanwhile (this one's ended) stays.
func (s *WebhookService) ReleaseDelivery(ctx context.Context, webhookID string) error {
	if _, err := s.db.pool.Exec(ctx, `DELETE FROM webhook_claims WHERE webhook_id = $1 AND holder = $2`,
		webhookID, s.db.Holder()); err != nil {
		return fmt.Errorf("release webhook %s: %w", webhookID, err)
	}
	return nil
}
