package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/linkbolt/linkbolt/internal/dump"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

// TestClickReservationsCopied: `linkbolt copy` between PostgreSQL
// databases carries each limited link's count, also where it is ahead
// of the stored total (a click reserved, never written), so that the copy
// lets exactly the clicks left through.
func TestClickReservationsCopied(t *testing.T) {
	ctx := context.Background()
	src, err := postgres.OpenDB(ctx, postgres.Options{URL: pgtest.URL(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	s := src.Store(postgres.Options{})
	_, ws := bootstrap(t, s)
	l := newLink(ws.ID, "copied")
	l.MaxClicks = 5
	other := newLink(ws.ID, "unlimited")
	for _, x := range []*link.Link{l, other} {
		if err := s.Links.CreateLink(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	r := reservations(t, s)
	for range 3 { // reserved, never recorded
		if !reserve(t, r, l.ID, true) {
			t.Fatal("a click of five")
		}
	}

	dstURL := pgtest.URL(t)
	dst, err := postgres.OpenDB(ctx, postgres.Options{URL: dstURL})
	if err != nil {
		t.Fatal(err)
	}
	stream := dump.Stream(ctx, src.Dump)
	defer stream.Close()
	if _, err := dst.Load(ctx, stream); err != nil {
		t.Fatal(err)
	}
	// A server starts on the copy, with the source's ID key.
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	copied, err := postgres.Open(ctx, postgres.Options{URL: dstURL})
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Data.Close()
	rc := reservations(t, copied)
	// Each call reserves one more click: two are left, then none.
	var got []bool
	for range 3 {
		got = append(got, reserve(t, rc, l.ID, true))
	}
	if !slices.Equal(got, []bool{true, true, false}) {
		t.Fatalf("the copy's reservations %v: want the two clicks left, then none", got)
	}
	if !reserve(t, rc, other.ID, true) {
		t.Fatal("the copy's unlimited link")
	}
}
