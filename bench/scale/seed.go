package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
	"github.com/linkbolt/linkbolt/storage"
)

// The clicks seeded offline come from these browsers, referrers and a
// pool of visitors, so the aggregates have top lists and unique visitors
// as real traffic gives them.
var (
	seedAgents = []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
		"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
		"Mozilla/5.0 (iPad; CPU OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"curl/8.5.0",
	}
	seedReferrers = []string{"", "", "google.com", "news.ycombinator.com", "t.co", "www.reddit.com", "duckduckgo.com", "mail.example.org"}
)

// seedVisitors is the number of distinct addresses the clicks come from.
const seedVisitors = 200_000

// seedClicks records o.seedClicks clicks of the links ids (uniformly)
// spread evenly over the o.seedDays days before now, in time order, into
// the data file at path while no server holds it. It writes through the
// same steps as the server's click recorder: the recorder's enrich step
// (analytics.Enricher: classification and the daily-salted visitor) and
// then storage's ClickService.RecordClicks, one transaction per batch of
// o.seedBatch clicks (a busy second of a server's flushes).
func seedClicks(ctx context.Context, path, workspaceID string, ids []string, o options, r *results) error {
	if len(ids) == 0 {
		return nil
	}
	st, closeStore, err := openOffline(ctx, o, path, nil)
	if err != nil {
		return fmt.Errorf("seed clicks: %w", err)
	}
	defer closeStore()
	clicks := st.Clicks
	enrich := analytics.Enricher(analytics.NewClassifier(nil), clicks)

	batches := (o.seedClicks + o.seedBatch - 1) / o.seedBatch
	span := time.Duration(o.seedDays) * 24 * time.Hour
	start := time.Now().Add(-span)
	step := span / time.Duration(batches)
	rng := rand.New(rand.NewPCG(1, 2))
	logf("recording %s clicks over %d days offline, %d batches of %d", count(int64(o.seedClicks)), o.seedDays, batches, o.seedBatch)
	t := time.Now()
	var written, skipped atomic.Int64
	stopProgress := progress(func() string {
		return fmt.Sprintf("  %s clicks, %.0f/s", count(written.Load()), float64(written.Load())/time.Since(t).Seconds())
	})
	defer stopProgress()
	// The batches are made and classified here, in time order, and
	// written by o.seedWriters writers, each one RecordClicks at a time.
	todo := make(chan []link.Click, o.seedWriters)
	var failed firstError
	var wg sync.WaitGroup
	for range o.seedWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range todo {
				if failed.get() != nil {
					continue
				}
				n, err := clicks.RecordClicks(ctx, batch)
				if err != nil {
					failed.set(fmt.Errorf("seed clicks: %w", err))
					continue
				}
				skipped.Add(int64(n))
				written.Add(int64(len(batch)))
			}
		}()
	}
	// In time order; but with -seed-for, which may stop early, the
	// batches' periods are taken in a stride that spreads any first part
	// of them over all the days.
	slot := func(b int) int { return b }
	if o.seedFor > 0 {
		k := int(float64(batches)*0.618) | 1
		for ; gcd(k, batches) != 1; k++ {
		}
		slot = func(b int) int { return b * k % batches }
	}
	made := 0
	for b := range batches {
		if ctx.Err() != nil || failed.get() != nil {
			break
		}
		if o.seedFor > 0 && time.Since(t) > o.seedFor {
			logf("-seed-for %s is up: %s of %s clicks made", o.seedFor, count(int64(made)), count(int64(o.seedClicks)))
			break
		}
		from := start.Add(time.Duration(slot(b)) * step)
		batch := make([]link.Click, 0, o.seedBatch)
		for range min(o.seedBatch, o.seedClicks-made) {
			v := rng.IntN(seedVisitors)
			batch = append(batch, link.Click{
				LinkID:      ids[rng.IntN(len(ids))],
				WorkspaceID: workspaceID,
				Time:        from.Add(time.Duration(rng.Int64N(int64(step)))),
				Referrer:    seedReferrers[rng.IntN(len(seedReferrers))],
				UserAgent:   seedAgents[v%len(seedAgents)],
				Addr:        netip.AddrFrom4([4]byte{10, byte(v >> 16), byte(v >> 8), byte(v)}),
			})
		}
		made += len(batch)
		if err := enrich(ctx, batch); err != nil {
			failed.set(fmt.Errorf("seed clicks: classify: %w", err))
			break
		}
		todo <- batch
	}
	close(todo)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := failed.get(); err != nil {
		return err
	}
	r.seeded, r.seedSecs = written.Load()-skipped.Load(), time.Since(t).Seconds()
	if skipped.Load() > 0 {
		return fmt.Errorf("seed clicks: storage skipped %d of %d clicks", skipped.Load(), written.Load())
	}
	logf("recorded %s clicks in %.1f s: %.0f/s", count(r.seeded), r.seedSecs, float64(r.seeded)/r.seedSecs)
	return nil
}

// setUpBackdated sets up a fresh store as the server does on its first
// start with admin.* configured (auth.Setup over the store), but with a
// clock days in the past: the workspace is then that old, and analytics
// range=all, which starts at the workspace's creation, holds the clicks
// seeded over the days before now.
func setUpBackdated(ctx context.Context, o options, path string, days int) error {
	then := time.Now().Add(-time.Duration(days) * 24 * time.Hour)
	clock := func() time.Time { return then }
	st, closeStore, err := openOffline(ctx, o, path, clock)
	if err != nil {
		return fmt.Errorf("set up: %w", err)
	}
	setup := &auth.Setup{Users: st.Users, Passwords: auth.Passwords{Cost: benchPasswordCost}, Plan: link.PlanFree, Now: clock}
	if _, err := setup.Bootstrap(ctx, benchEmail, benchPassword, "Default"); err != nil {
		closeStore()
		return fmt.Errorf("set up: %w", err)
	}
	logf("set up the instance as of %s (%d days ago)", then.UTC().Format(time.DateOnly), days)
	return closeStore()
}

// openOffline opens the store of the run while no server holds it: the
// bbolt file at path, or the database of -postgres-url. now nil is
// time.Now.
func openOffline(ctx context.Context, o options, path string, now func() time.Time) (*link.Store, func() error, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if o.store == "postgres" {
		st, err := postgres.Open(ctx, postgres.Options{URL: o.pgURL, Now: now, Logger: quiet})
		if err != nil {
			return nil, nil, err
		}
		return st, st.Data.Close, nil
	}
	db := storage.NewDB(path)
	if now != nil {
		db.Now = now
	}
	db.Logger = quiet
	if err := db.Open(); err != nil {
		return nil, nil, err
	}
	st := &link.Store{Users: storage.NewUserService(db), Clicks: storage.NewClickService(db)}
	return st, db.Close, nil
}

// dataSize is what the run's data takes on disk: the bbolt file's size,
// or PostgreSQL's pg_database_size of the database; -1 when unknown.
func dataSize(ctx context.Context, o options, path string) int64 {
	if o.store != "postgres" {
		return fileSize(path)
	}
	conn, err := pgx.Connect(ctx, o.pgURL)
	if err != nil {
		logf("pg_database_size: %s", hidePassword(err.Error(), o.pgURL))
		return -1
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n); err != nil {
		logf("pg_database_size: %v", err)
		return -1
	}
	return n
}

// hidePassword takes the password of the URL u out of msg.
func hidePassword(msg, u string) string {
	if p, err := url.Parse(u); err == nil {
		if pw, ok := p.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
