package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
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
	db := storage.NewDB(path)
	db.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := db.Open(); err != nil {
		return fmt.Errorf("seed clicks: %w", err)
	}
	defer db.Close()
	clicks := storage.NewClickService(db)
	enrich := analytics.Enricher(analytics.NewClassifier(nil), clicks)

	batches := (o.seedClicks + o.seedBatch - 1) / o.seedBatch
	span := time.Duration(o.seedDays) * 24 * time.Hour
	start := time.Now().Add(-span)
	step := span / time.Duration(batches)
	rng := rand.New(rand.NewPCG(1, 2))
	logf("recording %s clicks over %d days offline, %d batches of %d", count(int64(o.seedClicks)), o.seedDays, batches, o.seedBatch)
	t := time.Now()
	written, skipped := 0, 0
	stopProgress := progress(func() string {
		return fmt.Sprintf("  %s clicks, %.0f/s", count(int64(written)), float64(written)/time.Since(t).Seconds())
	})
	defer stopProgress()
	batch := make([]link.Click, 0, o.seedBatch)
	for b := range batches {
		if err := ctx.Err(); err != nil {
			return err
		}
		from := start.Add(time.Duration(b) * step)
		batch = batch[:0]
		for range min(o.seedBatch, o.seedClicks-written) {
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
		if err := enrich(ctx, batch); err != nil {
			return fmt.Errorf("seed clicks: classify: %w", err)
		}
		n, err := clicks.RecordClicks(ctx, batch)
		if err != nil {
			return fmt.Errorf("seed clicks: %w", err)
		}
		skipped += n
		written += len(batch)
	}
	r.seeded, r.seedSecs = int64(written-skipped), time.Since(t).Seconds()
	if skipped > 0 {
		return fmt.Errorf("seed clicks: storage skipped %d of %d clicks", skipped, written)
	}
	logf("recorded %s clicks in %.1f s: %.0f/s", count(r.seeded), r.seedSecs, float64(r.seeded)/r.seedSecs)
	return nil
}

// setUpBackdated sets up a fresh data file at path as the server does on
// its first start with admin.* configured (auth.Setup over storage), but
// with a clock days in the past: the workspace is then that old, and
// analytics range=all, which starts at the workspace's creation, holds
// the clicks seeded over the days before now.
func setUpBackdated(ctx context.Context, path string, days int) error {
	then := time.Now().Add(-time.Duration(days) * 24 * time.Hour)
	clock := func() time.Time { return then }
	db := storage.NewDB(path)
	db.Now = clock
	db.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := db.Open(); err != nil {
		return fmt.Errorf("set up: %w", err)
	}
	setup := &auth.Setup{Users: storage.NewUserService(db), Passwords: auth.Passwords{Cost: benchPasswordCost}, Plan: link.PlanFree, Now: clock}
	if _, err := setup.Bootstrap(ctx, benchEmail, benchPassword, "Default"); err != nil {
		db.Close()
		return fmt.Errorf("set up: %w", err)
	}
	logf("set up the instance as of %s (%d days ago)", then.UTC().Format(time.DateOnly), days)
	return db.Close()
}
