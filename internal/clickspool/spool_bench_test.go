package clickspool

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkbolt/linkbolt/internal/pgtest"
)

// BenchmarkSpill is the cost of spilling a click to the file, in batches
// of 1,000 (ns/op is per click).
func BenchmarkSpill(b *testing.B) {
	f := newFixture(b, pgtest.URL(b))
	s := f.open(b, filepath.Join(b.TempDir(), FileName))
	batch := f.clicks(0, 1000)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(batch) {
		if _, _, err := s.SpillClicks(ctx, batch[:min(len(batch), b.N-i)], 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDrain is the cost of replaying a spilled click into
// PostgreSQL and deleting it from the file, in drains of 5,000 (the
// recorder's; ns/op is per click).
func BenchmarkDrain(b *testing.B) {
	f := newFixture(b, pgtest.URL(b))
	s := f.open(b, filepath.Join(b.TempDir(), FileName))
	ctx := context.Background()
	for i := 0; i < b.N; i += 1000 {
		if _, _, err := s.SpillClicks(ctx, f.clicks(i, min(1000, b.N-i)), 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for n := 0; n < b.N; {
		taken, _, err := s.DrainClicks(ctx, 5000)
		if err != nil || taken == 0 {
			b.Fatalf("drain = %d, %v", taken, err)
		}
		n += taken
	}
}

// BenchmarkRecordDirect is the write BenchmarkDrain replays through,
// without the spool, in batches of 5,000 (ns/op is per click).
func BenchmarkRecordDirect(b *testing.B) {
	f := newFixture(b, pgtest.URL(b))
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i += 5000 {
		if _, err := f.store.Clicks.RecordClicks(ctx, f.clicks(i, min(5000, b.N-i))); err != nil {
			b.Fatal(err)
		}
	}
}
