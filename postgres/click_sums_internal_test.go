package postgres

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestTopsRoundTrip: top lists read back as written, and no cut or
// changed byte of them panics or reads as an entry of an unknown
// dimension.
func TestTopsRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		var p periodSums
		for dim := dimLinks; dim < numDims; dim++ {
			for i := range rng.IntN(5) {
				p.tops[dim] = append(p.tops[dim], topEntry{value: fmt.Sprintf("v%d-%s", i, string(make([]byte, rng.IntN(3)))),
					clicks: rng.Int64N(1 << 40), bots: rng.Int64N(10), inherited: rng.Int64N(1 << 50)})
			}
		}
		b := encodeTops(&p.tops)
		var q periodSums
		if err := q.decodeTops(b); err != nil || !reflect.DeepEqual(normal(p.tops), normal(q.tops)) {
			t.Fatalf("decoded %v, %v; want %v", q.tops, err, p.tops)
		}
		for cut := range len(b) {
			_ = eachTop(b[:cut], func(dim int16, _ topEntry) {
				if dim < dimLinks || dim >= numDims {
					t.Fatalf("dimension %d read", dim)
				}
			})
		}
		if len(b) > 0 {
			c := append([]byte(nil), b...)
			c[rng.IntN(len(c))] ^= byte(1 + rng.IntN(255))
			_ = eachTop(c, func(dim int16, _ topEntry) {
				if dim < dimLinks || dim >= numDims {
					t.Fatalf("dimension %d read", dim)
				}
			})
		}
	}
}

func normal(tops [numDims][]topEntry) [numDims][]topEntry {
	for d := range tops {
		if len(tops[d]) == 0 {
			tops[d] = nil
		}
	}
	return tops
}

// TestBoundKeepsTheHeavy: a list over its bound keeps its entries first
// and takes the fresh values in most clicks first, each in the place of
// the smallest estimate (of two alike, the fewer clicks, then the
// earlier value), inheriting it, as the bbolt store does.
func TestBoundKeepsTheHeavy(t *testing.T) {
	t.Parallel()
	list := []topEntry{{value: "a", clicks: 5}, {value: "b", clicks: 1}, {value: "c", clicks: 1}, {value: "d", clicks: 1, inherited: 3}, {value: "e", clicks: 2}}
	got := bound(list, 3, []string{"c", "e"})
	want := []topEntry{{value: "a", clicks: 5}, {value: "c", clicks: 1, inherited: 3}, {value: "d", clicks: 1, inherited: 3}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("bound = %v, want %v", got, want)
	}
}

// TestBoundKeepsAValueOfOneClickABatch: a value whose clicks come one a
// batch into a full list of greater counts takes a place at once and
// keeps it; its estimate is at least its clicks.
func TestBoundKeepsAValueOfOneClickABatch(t *testing.T) {
	t.Parallel()
	var p periodSums
	first := &sumsDelta{}
	for i := range topCap[dimVariants] {
		first.addValue(dimVariants, fmt.Sprintf("v%02d", i), false, 2)
	}
	p.add(first)
	const batches = 40
	for range batches {
		d := &sumsDelta{}
		d.addValue(dimVariants, "x", false, 1)
		p.add(d)
	}
	if n := len(p.tops[dimVariants]); n != topCap[dimVariants] {
		t.Fatalf("%d values listed, want %d", n, topCap[dimVariants])
	}
	for _, e := range p.tops[dimVariants] {
		if e.value == "x" {
			if e.clicks+e.inherited < batches {
				t.Fatalf("x: %d clicks, %d inherited; at least %d expected", e.clicks, e.inherited, batches)
			}
			return
		}
	}
	t.Fatalf("x, %d of %d clicks, not listed: %v", batches, batches+2*topCap[dimVariants], p.tops[dimVariants])
}
