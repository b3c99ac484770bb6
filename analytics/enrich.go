package analytics

import (
	"context"
	"sync"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// SaltSource gives the secret salt of a UTC day for visitor hashes.
type SaltSource interface {
	DailySalt(ctx context.Context, day time.Time) ([]byte, error)
}

// Enricher returns the recorder's enrich step: it classifies each click of
// a batch (browser, OS, device, bot, country, visitor) with c and the salt
// of the click's UTC day, and so drops the address and user agent before
// anything is written. Clicks classified in an earlier, failed try are
// left as they are.
func Enricher(c *Classifier, salts SaltSource) func(ctx context.Context, batch []link.Click) error {
	var mu sync.Mutex
	var day time.Time
	var salt []byte
	saltOf := func(ctx context.Context, t time.Time) ([]byte, error) {
		d := t.UTC().Truncate(24 * time.Hour)
		mu.Lock()
		defer mu.Unlock()
		if salt != nil && d.Equal(day) {
			return salt, nil
		}
		s, err := salts.DailySalt(ctx, d)
		if err != nil {
			return nil, err
		}
		day, salt = d, s
		return s, nil
	}
	return func(ctx context.Context, batch []link.Click) error {
		for i := range batch {
			clk := &batch[i]
			if clk.Device != "" {
				continue
			}
			s, err := saltOf(ctx, clk.Time)
			if err != nil {
				return err
			}
			c.Classify(clk, s)
		}
		return nil
	}
}
