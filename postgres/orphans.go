package postgres

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// OrphanVisitService keeps the orphan visits in orphan_visit_counts (every
// visit, per domain, hour and type) and orphan_visits (a bounded number of
// visits per domain and hour).
type OrphanVisitService struct {
	db *DB
}

var _ link.OrphanVisitStore = (*OrphanVisitService)(nil)

type orphanHourKey struct {
	domain string
	hour   time.Time
}

// AddOrphanVisits counts and keeps a batch (see link.OrphanVisitStore).
func (s *OrphanVisitService) AddOrphanVisits(ctx context.Context, visits []link.OrphanVisit, perHour int) error {
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		seen := map[orphanHourKey]int64{}
		added := map[orphanHourKey]map[string]int64{}
		var rows [][]any
		for _, v := range visits {
			if !link.ValidOrphanType(v.Type) {
				continue
			}
			k := orphanHourKey{v.Domain, v.Time.UTC().Truncate(time.Hour)}
			n, ok := seen[k]
			if !ok {
				if err := tx.QueryRow(ctx, `SELECT coalesce(sum(count), 0) FROM orphan_visit_counts WHERE domain = $1 AND hour = $2`,
					k.domain, k.hour).Scan(&n); err != nil {
					return err
				}
			}
			seen[k] = n + 1
			if added[k] == nil {
				added[k] = map[string]int64{}
			}
			added[k][v.Type]++
			if n < int64(perHour) {
				rows = append(rows, []any{v.Domain, dbTime(v.Time), v.Type, v.Path, v.Referrer, v.Country, v.Device, v.Browser, v.OS, v.Bot})
			}
		}
		b := &pgx.Batch{}
		for k, types := range added {
			for t, n := range types {
				b.Queue(`INSERT INTO orphan_visit_counts (domain, hour, type, count) VALUES ($1, $2, $3, $4)
					ON CONFLICT (domain, hour, type) DO UPDATE SET count = orphan_visit_counts.count + excluded.count`, k.domain, k.hour, t, n)
			}
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"orphan_visits"},
			[]string{"domain", "time", "type", "path", "referrer", "country", "device", "browser", "os", "bot"}, pgx.CopyFromRows(rows))
		return err
	})
}

// OrphanCounts returns the hourly counters of domain (see
// link.OrphanVisitStore).
func (s *OrphanVisitService) OrphanCounts(ctx context.Context, domain string, start, end time.Time) ([]link.OrphanCount, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT hour, type, count FROM orphan_visit_counts
		WHERE domain = $1 AND hour >= $2 AND hour < $3 ORDER BY hour, type`, domain, start, end)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (link.OrphanCount, error) {
		var c link.OrphanCount
		err := row.Scan(&c.Hour, &c.Type, &c.Count)
		c.Hour = c.Hour.UTC()
		return c, err
	})
	// The order of link.OrphanTypes within an hour, as bbolt keeps them.
	sortOrphanCounts(out)
	return out, err
}

func sortOrphanCounts(cs []link.OrphanCount) {
	idx := func(t string) int {
		for i, v := range link.OrphanTypes {
			if v == t {
				return i
			}
		}
		return len(link.OrphanTypes)
	}
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].Hour.Equal(cs[j-1].Hour) && idx(cs[j].Type) < idx(cs[j-1].Type); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// FindOrphanVisits returns a page of kept visits (see
// link.OrphanVisitStore). Its cursor is the bbolt store's: unix nanos and
// a sequence (here the row's id), in hex, just past the next visit.
func (s *OrphanVisitService) FindOrphanVisits(ctx context.Context, f link.OrphanVisitFilter) ([]link.OrphanVisit, string, error) {
	end, endID := f.End, int64(0)
	if f.Cursor != "" {
		b, err := hex.DecodeString(f.Cursor)
		if err != nil || len(b) != 16 {
			return nil, "", link.Errorf(link.EINVALIDREQUEST, "cursor %q is not one this API returned", f.Cursor)
		}
		ct := time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC()
		if ct.Before(end) || ct.Equal(end) {
			end, endID = ct, int64(binary.BigEndian.Uint64(b[8:]))
		}
	}
	rows, err := s.db.pool.Query(ctx, `SELECT id, time, type, path, referrer, country, device, browser, os, bot FROM orphan_visits
		WHERE domain = $1 AND time >= $2 AND (time < $3 OR (time = $3 AND id < $4)) AND ($5 = '' OR type = $5)
		ORDER BY time DESC, id DESC LIMIT $6`, f.Domain, f.Start, end, endID, f.Type, f.Limit+1)
	if err != nil {
		return nil, "", err
	}
	var ids []int64
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (link.OrphanVisit, error) {
		var v link.OrphanVisit
		var id int64
		err := row.Scan(&id, &v.Time, &v.Type, &v.Path, &v.Referrer, &v.Country, &v.Device, &v.Browser, &v.OS, &v.Bot)
		v.Time, v.Domain = v.Time.UTC(), f.Domain
		ids = append(ids, id)
		return v, err
	})
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > f.Limit {
		last := out[f.Limit]
		b := make([]byte, 16)
		binary.BigEndian.PutUint64(b, uint64(last.Time.UnixNano()))
		binary.BigEndian.PutUint64(b[8:], uint64(ids[f.Limit]+1))
		next, out = hex.EncodeToString(b), out[:f.Limit]
	}
	return out, next, nil
}

// PruneOrphanVisits deletes rows and counters from before before (see
// link.OrphanVisitStore).
func (s *OrphanVisitService) PruneOrphanVisits(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM orphan_visits WHERE time < $1`, before)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		_, err = tx.Exec(ctx, `DELETE FROM orphan_visit_counts WHERE hour < $1`, before.UTC().Truncate(time.Hour))
		return err
	})
	return int(n), err
}
