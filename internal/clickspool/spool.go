// Package clickspool keeps the clicks an instance on PostgreSQL cannot
// write at once in a small bbolt file on its own disk, and replays them
// into the database exactly once. It is the click backlog
// (analytics.Backlog) of a server on PostgreSQL: it takes clicks while
// the database is down, and what a killed instance spilled is replayed
// at its next start.
//
// Each spilled click gets the next sequence number of the file. A replay
// writes the oldest clicks and raises the spool's mark in the database
// (click_spools: the file's random ID and the last sequence number
// written) in one transaction, then deletes them from the file: clicks at
// or below the mark are skipped, so a stop between the database's commit
// and the delete never counts a click twice.
//
// A spool also drains what the database's shared backlog table holds
// (left by an earlier version or run): while that table has rows, a drain
// takes them first.
package clickspool

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/link"
)

// Sink writes replayed clicks into the database: clicks numbered seqs,
// in one transaction that skips those at or below spool's mark and
// raises the mark to the last of seqs ((*postgres.ClickService).RecordSpooled).
type Sink interface {
	RecordSpooled(ctx context.Context, spool string, seqs []uint64, clicks []link.Click) (applied, skipped int, err error)
}

// FileName is the spool's file name, in the folder of storage.path.
const FileName = "click-spool.db"

var (
	bucketClicks = []byte("clicks")
	bucketMeta   = []byte("meta")
	keyID        = []byte("id")
	keyNext      = []byte("next")
	keyCount     = []byte("clicks")
	keyBytes     = []byte("bytes")
)

// Spool is a click spool file. Its methods are safe for concurrent use.
type Spool struct {
	db     *bolt.DB
	id     string
	sink   Sink
	shared analytics.Backlog // the database's own backlog table, or nil

	mu sync.Mutex
	// What the shared table held when last read; sharedLeft is false once
	// a drain found it empty.
	sharedClicks, sharedBytes int64
	sharedLeft                bool

	// afterApply, when set, runs between the database's commit of a
	// replay and the delete from the file (tests: a stop there).
	afterApply func() error
}

var _ analytics.Backlog = (*Spool)(nil)

// ErrInUse is returned by Open when another process has the file open.
var ErrInUse = errors.New("in use by another linkbolt instance")

// Open opens or creates the spool file at path (its folder is created),
// locked against every other process: a second instance on the same
// file fails with ErrInUse. sink replays the clicks; shared, when not
// nil, is the database's backlog table, drained first while it has rows.
func Open(ctx context.Context, path string, sink Sink, shared analytics.Backlog) (*Spool, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("click spool: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 200 * time.Millisecond})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("click spool %s: %w: give each instance its own storage.path", path, ErrInUse)
	}
	if err != nil {
		return nil, fmt.Errorf("click spool %s: %w", path, err)
	}
	s := &Spool{db: db, sink: sink, shared: shared}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketClicks); err != nil {
			return err
		}
		m, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		if id := m.Get(keyID); id != nil {
			s.id = string(id)
			return nil
		}
		var b [16]byte
		rand.Read(b[:])
		s.id = hex.EncodeToString(b[:])
		return m.Put(keyID, []byte(s.id))
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("click spool %s: %w", path, err)
	}
	if shared != nil {
		n, size, err := shared.Backlog(ctx)
		if err != nil {
			db.Close()
			return nil, err
		}
		s.sharedClicks, s.sharedBytes, s.sharedLeft = n, size, n > 0
	}
	return s, nil
}

// ID returns the spool's random ID, its row in click_spools.
func (s *Spool) ID() string { return s.id }

// Close closes the file; the clicks it holds are replayed by the next Open.
func (s *Spool) Close() error { return s.db.Close() }

// record is a spilled click: classified, without the address and the
// user agent, which the database does not keep either.
type record struct {
	L string `json:"l"`
	W string `json:"w"`
	C string `json:"c,omitempty"`
	T int64  `json:"t"`
	R string `json:"r,omitempty"`
	V uint8  `json:"v,omitempty"`
	B string `json:"b,omitempty"`
	O string `json:"o,omitempty"`
	D string `json:"d,omitempty"`
	N string `json:"n,omitempty"`
	X bool   `json:"x,omitempty"`
	H uint64 `json:"h,omitempty"`
}

func toRecord(c *link.Click) record {
	return record{L: c.LinkID, W: c.WorkspaceID, C: c.CampaignID, T: c.Time.UnixNano(), R: c.Referrer, V: c.Variant,
		B: c.Browser, O: c.OS, D: c.Device, N: c.Country, X: c.Bot, H: c.Visitor}
}

func (r *record) click() link.Click {
	return link.Click{LinkID: r.L, WorkspaceID: r.W, CampaignID: r.C, Time: time.Unix(0, r.T).UTC(), Referrer: r.R,
		Variant: r.V, Browser: r.B, OS: r.O, Device: r.D, Country: r.N, Bot: r.X, Visitor: r.H}
}

func getInt(m *bolt.Bucket, k []byte) uint64 {
	if v := m.Get(k); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func putInt(m *bolt.Bucket, k []byte, v uint64) error {
	return m.Put(k, binary.BigEndian.AppendUint64(nil, v))
}

// SpillClicks appends clicks, in order, while the file's clicks hold at
// most limit bytes (0: no bound); spilled is how many it took. It never
// skips a click: the database judges them when they are replayed.
func (s *Spool) SpillClicks(ctx context.Context, clicks []link.Click, limit int64) (spilled, skipped int, err error) {
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		spilled = 0
		b, m := tx.Bucket(bucketClicks), tx.Bucket(bucketMeta)
		next, count, size := getInt(m, keyNext), getInt(m, keyCount), getInt(m, keyBytes)
		var key [8]byte
		for i := range clicks {
			v, err := json.Marshal(toRecord(&clicks[i]))
			if err != nil {
				return err
			}
			if limit > 0 && int64(size)+int64(len(v)) > limit {
				break
			}
			next++
			binary.BigEndian.PutUint64(key[:], next)
			if err := b.Put(key[:], v); err != nil {
				return err
			}
			count++
			size += uint64(len(v))
			spilled++
		}
		if spilled == 0 {
			return nil
		}
		return errors.Join(putInt(m, keyNext, next), putInt(m, keyCount, count), putInt(m, keyBytes, size))
	})
	if err != nil {
		return 0, 0, fmt.Errorf("spill clicks: %w", err)
	}
	return spilled, 0, nil
}

// DrainClicks writes the oldest at most max clicks into the database and
// then deletes them from the file: from the shared table first while it
// holds clicks, then from the file. taken counts the clicks taken out,
// skipped those of them that could not be stored (or read).
func (s *Spool) DrainClicks(ctx context.Context, max int) (taken, skipped int, err error) {
	if max <= 0 {
		return 0, 0, nil
	}
	s.mu.Lock()
	shared := s.shared != nil && s.sharedLeft
	s.mu.Unlock()
	if shared {
		taken, skipped, err := s.shared.DrainClicks(ctx, max)
		if err != nil {
			return 0, 0, err
		}
		n, size, berr := s.shared.Backlog(context.WithoutCancel(ctx))
		s.mu.Lock()
		if berr == nil {
			s.sharedClicks, s.sharedBytes = n, size
		} else {
			s.sharedClicks = max64(s.sharedClicks-int64(taken), 0)
		}
		// Another instance may be draining the rest (SKIP LOCKED): the
		// table is done here once a drain finds nothing.
		s.sharedLeft = taken > 0 && s.sharedClicks > 0
		if !s.sharedLeft {
			s.sharedClicks, s.sharedBytes = 0, 0
		}
		s.mu.Unlock()
		if taken > 0 {
			return taken, skipped, nil
		}
	}
	return s.drainLocal(ctx, max)
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func (s *Spool) drainLocal(ctx context.Context, max int) (taken, skipped int, err error) {
	var seqs []uint64
	var clicks []link.Click
	var bad [][]byte // records that cannot be read
	err = s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketClicks).Cursor()
		for k, v := c.First(); k != nil && len(seqs)+len(bad) < max; k, v = c.Next() {
			var r record
			if len(k) != 8 || json.Unmarshal(v, &r) != nil {
				bad = append(bad, append([]byte(nil), k...))
				continue
			}
			seqs = append(seqs, binary.BigEndian.Uint64(k))
			clicks = append(clicks, r.click())
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("drain clicks: %w", err)
	}
	if len(seqs)+len(bad) == 0 {
		return 0, 0, nil
	}
	if len(seqs) > 0 {
		if _, skipped, err = s.sink.RecordSpooled(ctx, s.id, seqs, clicks); err != nil {
			return 0, 0, err
		}
		if s.afterApply != nil {
			if err := s.afterApply(); err != nil {
				return 0, 0, err
			}
		}
	}
	// The database has them: delete them here whatever the caller's
	// context says.
	err = s.db.Update(func(tx *bolt.Tx) error {
		b, m := tx.Bucket(bucketClicks), tx.Bucket(bucketMeta)
		count, size := getInt(m, keyCount), getInt(m, keyBytes)
		var key [8]byte
		del := func(k []byte) error {
			v := b.Get(k)
			if v == nil {
				return nil
			}
			size -= min(size, uint64(len(v)))
			count -= min(count, 1)
			return b.Delete(k)
		}
		for _, seq := range seqs {
			binary.BigEndian.PutUint64(key[:], seq)
			if err := del(key[:]); err != nil {
				return err
			}
		}
		for _, k := range bad {
			if err := del(k); err != nil {
				return err
			}
		}
		return errors.Join(putInt(m, keyCount, count), putInt(m, keyBytes, size))
	})
	if err != nil {
		// Replayed again later, the clicks are skipped by the mark.
		return 0, 0, fmt.Errorf("drain clicks: deleting replayed clicks from the spool: %w", err)
	}
	return len(seqs) + len(bad), skipped + len(bad), nil
}

// Backlog returns the clicks the file holds and their bytes, with what
// the shared table held when last read while it has clicks left. It
// never asks the database.
func (s *Spool) Backlog(ctx context.Context) (clicks, bytes int64, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		clicks, bytes = int64(getInt(m, keyCount)), int64(getInt(m, keyBytes))
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("click spool: %w", err)
	}
	s.mu.Lock()
	if s.sharedLeft {
		clicks, bytes = clicks+s.sharedClicks, bytes+s.sharedBytes
	}
	s.mu.Unlock()
	return clicks, bytes, nil
}
