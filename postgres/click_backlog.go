package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/linkbolt/linkbolt/link"
)

// SpillClicks appends the valid clicks, in order, while the backlog holds
// at most limit bytes (0: no bound); malformed ones are skipped and
// counted. spilled counts the clicks taken, skipped ones included. The
// size's row stays locked to the commit, so two instances never both
// fill the backlog's last room.
func (s *ClickService) SpillClicks(ctx context.Context, clicks []link.Click, limit int64) (spilled, skipped int, err error) {
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		spilled, skipped = 0, 0
		var size int64
		if err := tx.QueryRow(ctx, `SELECT bytes FROM click_backlog_size FOR UPDATE`).Scan(&size); err != nil {
			return err
		}
		var links []string
		var data [][]byte
		for i := range clicks {
			p, ok := parseClick(s.db.ids, &clicks[i])
			if !ok {
				spilled++
				skipped++
				continue
			}
			b, err := json.Marshal(&p)
			if err != nil {
				return err
			}
			if limit > 0 && size+int64(len(b)) > limit {
				break
			}
			size += int64(len(b))
			links, data = append(links, p.Link), append(data, b)
			spilled++
		}
		if len(data) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `INSERT INTO click_backlog (link_id, click)
			SELECT l, c FROM unnest($1::text[], $2::bytea[]) WITH ORDINALITY AS u(l, c, n) ORDER BY n`, links, data); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE click_backlog_size SET clicks = clicks + $1, bytes = $2`, len(data), size)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("spill clicks: %w", err)
	}
	return spilled, skipped, nil
}

// DrainClicks takes the oldest at most max clicks out of the backlog and
// writes them, in one transaction; a drain on another instance takes
// other clicks (SKIP LOCKED).
func (s *ClickService) DrainClicks(ctx context.Context, max int) (taken, skipped int, err error) {
	if max <= 0 {
		return 0, 0, nil
	}
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `DELETE FROM click_backlog WHERE id IN (
				SELECT id FROM click_backlog ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
			RETURNING id, click`, max)
		var bytes int64
		if err != nil {
			return err
		}
		type waiting struct {
			id int64
			c  storedClick
		}
		var ws []waiting
		var id int64
		var b []byte
		if _, err := pgx.ForEachRow(rows, []any{&id, &b}, func() error {
			w := waiting{id: id}
			if err := json.Unmarshal(b, &w.c); err != nil {
				return fmt.Errorf("backlog click %d: %w", id, err)
			}
			ws = append(ws, w)
			bytes += int64(len(b))
			return nil
		}); err != nil {
			return err
		}
		taken = len(ws)
		if taken == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE click_backlog_size SET clicks = clicks - $1, bytes = bytes - $2`, taken, bytes); err != nil {
			return err
		}
		batch := make([]storedClick, 0, len(ws))
		for _, w := range ws {
			batch = append(batch, w.c)
		}
		return s.write(ctx, tx, batch)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("drain clicks: %w", err)
	}
	return taken, 0, nil
}

// Backlog returns the clicks the backlog holds and their bytes.
func (s *ClickService) Backlog(ctx context.Context) (clicks, bytes int64, err error) {
	err = s.db.pool.QueryRow(ctx, `SELECT clicks, bytes FROM click_backlog_size`).Scan(&clicks, &bytes)
	if err != nil {
		return 0, 0, fmt.Errorf("backlog: %w", err)
	}
	return clicks, bytes, nil
}
