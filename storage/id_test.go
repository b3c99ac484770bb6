package storage

import (
	"crypto/rand"
	"math"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// testCodec returns a codec with a fresh random key and the given legacy
// maxima.
func testCodec(tb testing.TB, legacy map[string]uint64) *idCodec {
	tb.Helper()
	key := make([]byte, 16)
	if _, err := rand.Read(key); err != nil {
		tb.Fatal(err)
	}
	c, err := newIDCodec(key, legacy)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

var allPrefixes = []string{prefixWorkspace, prefixUser, prefixKey, prefixLink, prefixCampaign, prefixEvent,
	prefixQRCode, prefixWebhook, prefixDelivery, prefixDomain}

// TestIDCodecRoundTrip: over random keys and sequences (and the edges),
// every ID has the fixed opaque form and parses back to its sequence,
// under its own prefix only.
func TestIDCodecRoundTrip(t *testing.T) {
	r := mrand.New(mrand.NewPCG(1, 2))
	for range 50 {
		c := testCodec(t, nil)
		seqs := []uint64{1, 2, 35, 36, math.MaxUint32, math.MaxUint64 - 1, math.MaxUint64}
		for range 200 {
			seqs = append(seqs, r.Uint64N(1<<uint(1+r.IntN(63)))+1)
		}
		for _, seq := range seqs {
			for _, prefix := range allPrefixes {
				id := c.formatID(prefix, seq)
				if len(id) != len(prefix)+opaqueLen || !strings.HasPrefix(id, prefix) {
					t.Fatalf("formatID(%s, %d) = %q", prefix, seq, id)
				}
				if got, ok := c.parseID(prefix, id); !ok || got != seq {
					t.Fatalf("parseID(%q) = %d, %v; want %d", id, got, ok, seq)
				}
				if got := string(c.appendID([]byte("x"), prefix, seq)); got != "x"+id {
					t.Fatalf("appendID = %q, want %q", got, "x"+id)
				}
				// The same sequence under another prefix is another ID,
				// and an ID does not parse as another kind.
				other := prefixLink
				if prefix == prefixLink {
					other = prefixCampaign
				}
				if o := c.formatID(other, seq); o[len(other):] == id[len(prefix):] {
					t.Fatalf("%s and %s share their body", id, o)
				}
				if _, ok := c.parseID(other, other+id[len(prefix):]); ok {
					t.Fatalf("%s parses as a %s", id, other)
				}
			}
		}
	}
}

// TestIDCodecHidesSequence: consecutive sequences give IDs with nothing
// in common to read an order or a count from, and another instance's key
// gives other IDs for the same sequences.
func TestIDCodecHidesSequence(t *testing.T) {
	a, b := testCodec(t, nil), testCodec(t, nil)
	seen := map[string]bool{}
	prev := ""
	ascending := 0
	for seq := uint64(1); seq <= 1000; seq++ {
		id := a.formatID(prefixLink, seq)
		if seen[id] {
			t.Fatalf("%s given twice", id)
		}
		seen[id] = true
		if id == b.formatID(prefixLink, seq) {
			t.Fatalf("two keys give %s for %d", id, seq)
		}
		if id > prev {
			ascending++
		}
		prev = id
	}
	// Random IDs are in ascending order about half the time.
	if ascending < 400 || ascending > 600 {
		t.Fatalf("%d of 1000 consecutive IDs sort after the one before", ascending)
	}
}

// TestIDCodecRejectsForgeries changes each character of valid IDs to every
// other character: none parses (a forged neighbour is not found, never
// another record).
func TestIDCodecRejectsForgeries(t *testing.T) {
	c := testCodec(t, nil)
	for _, seq := range []uint64{1, 2, 3, 1000, 1 << 40} {
		id := c.formatID(prefixLink, seq)
		for i := len(prefixLink); i < len(id); i++ {
			for j := 0; j < len(idAlphabet); j++ {
				if idAlphabet[j] == id[i] {
					continue
				}
				forged := id[:i] + string(idAlphabet[j]) + id[i+1:]
				if got, ok := c.parseID(prefixLink, forged); ok {
					t.Fatalf("forged %s (from %s) parses as %d", forged, id, got)
				}
			}
		}
		for _, bad := range []string{id[:len(id)-1], id + "0", strings.ToLower(id), strings.ToUpper(id), id[:len(id)-1] + "-",
			"lnk_zzzzzzzzzzzzzzzzzzzzzz" /* over 2^128 */, "lnk_" + strconv.FormatUint(seq, 36)} {
			if bad == id {
				continue
			}
			if got, ok := c.parseID(prefixLink, bad); ok {
				t.Fatalf("%q parses as %d", bad, got)
			}
		}
	}
}

// TestIDCodecLegacy: sequences up to the legacy maximum keep their schema
// version 1 form (base 36), read and written; above it IDs are opaque, and
// the legacy form of a sequence above the maximum is refused, so each
// record keeps exactly one ID.
func TestIDCodecLegacy(t *testing.T) {
	c := testCodec(t, map[string]uint64{prefixLink: 100})
	for _, tt := range []struct {
		id   string
		want uint64
		ok   bool
	}{
		{"lnk_1", 1, true},
		{"lnk_z", 35, true},
		{"lnk_10", 36, true},
		{"lnk_2s", 100, true},
		{"lnk_2t", 0, false}, // 101: above the legacy maximum
		{"lnk_", 0, false},
		{"lnk_0", 0, false},
		{"lnk_01", 0, false},
		{"lnk_Z", 0, false},
		{"lnk_-1", 0, false},
		{"key_1", 0, false},
		{"1", 0, false},
		{"lnk_zzzzzzzzzzzzz", 0, false}, // overflows uint64
		{"lnk_a b", 0, false},
	} {
		got, ok := c.parseID(prefixLink, tt.id)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseID(%q) = %d, %v; want %d, %v", tt.id, got, ok, tt.want, tt.ok)
		}
		if ok {
			if back := c.formatID(prefixLink, got); back != tt.id {
				t.Errorf("formatID(%d) = %q, want %q", got, back, tt.id)
			}
		}
	}
	if id := c.formatID(prefixLink, 101); len(id) != len(prefixLink)+opaqueLen {
		t.Errorf("sequence 101 = %q, want an opaque ID", id)
	}
	if _, ok := c.parseID(prefixWorkspace, "ws_1"); ok {
		t.Error("a legacy ID of a prefix with no legacy maximum parses")
	}
	if id := c.formatID(prefixWorkspace, 1); id == "ws_1" {
		t.Error("a prefix with no legacy maximum writes legacy IDs")
	}
}

// FuzzParseID: parsing never panics, and whatever parses is the one ID
// of its sequence.
func FuzzParseID(f *testing.F) {
	c := testCodec(f, map[string]uint64{prefixLink: 1000})
	for _, s := range []string{"lnk_1", "lnk_rs", c.formatID(prefixLink, 1001), c.formatID(prefixLink, math.MaxUint64), "lnk_zzzzzzzzzzzzzzzzzzzzzz", "lnk_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		seq, ok := c.parseID(prefixLink, id)
		if !ok {
			return
		}
		if back := c.formatID(prefixLink, seq); back != id {
			t.Fatalf("%q parses as %d, which formats as %q", id, seq, back)
		}
	})
}

// FuzzIDRoundTrip: any sequence under any key formats to an ID that parses
// back to it.
func FuzzIDRoundTrip(f *testing.F) {
	f.Add(make([]byte, 16), uint64(1))
	f.Add([]byte("0123456789abcdef"), uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, key []byte, seq uint64) {
		if len(key) != 16 || seq == 0 {
			return
		}
		c, err := newIDCodec(key, nil)
		if err != nil {
			t.Fatal(err)
		}
		id := c.formatID(prefixEvent, seq)
		if got, ok := c.parseID(prefixEvent, id); !ok || got != seq {
			t.Fatalf("%d → %q → %d, %v", seq, id, got, ok)
		}
	})
}

// BenchmarkIDs compares the opaque form with the legacy base 36 form
// (what every ID cost before) in the same run.
func BenchmarkIDs(b *testing.B) {
	for _, bc := range []struct {
		name   string
		legacy map[string]uint64
	}{{"opaque", nil}, {"legacy", map[string]uint64{prefixLink: math.MaxUint64}}} {
		c := testCodec(b, bc.legacy)
		id := c.formatID(prefixLink, 123456)
		b.Run("format/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = c.formatID(prefixLink, uint64(i)+1)
			}
		})
		b.Run("parse/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, ok := c.parseID(prefixLink, id); !ok {
					b.Fatal(id)
				}
			}
		})
	}
}
