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

// TestBoundKeepsTheHeavy: a list over its bound drops the smallest
// estimates, of two alike the greater value, and the fresh values that
// stay inherit the largest estimate dropped.
func TestBoundKeepsTheHeavy(t *testing.T) {
	t.Parallel()
	list := []topEntry{{value: "a", clicks: 5}, {value: "b", clicks: 1}, {value: "c", clicks: 1}, {value: "d", clicks: 1, inherited: 3}, {value: "e", clicks: 2}}
	got := bound(list, 3, []string{"c", "e"})
	want := []topEntry{{value: "a", clicks: 5}, {value: "d", clicks: 1, inherited: 3}, {value: "e", clicks: 2, inherited: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("bound = %v, want %v", got, want)
	}
}
