package storage

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestMergeSorted(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		all := map[uint64]bool{}
		var a, b []uint64
		for range rnd.IntN(40) {
			v := uint64(rnd.IntN(100))
			if all[v] {
				continue
			}
			all[v] = true
			if rnd.IntN(2) == 0 {
				a = append(a, v)
			} else {
				b = append(b, v)
			}
		}
		slices.Sort(a)
		slices.Sort(b)
		want := slices.Sorted(maps.Keys(all))
		a = slices.Clip(a) // force a grow sometimes
		if rnd.IntN(2) == 0 {
			a = slices.Grow(a, rnd.IntN(10))
		}
		if got := mergeSorted(a, b); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("mergeSorted(%v, %v) = %v, want %v", a, b, got, want)
		}
	}
}
