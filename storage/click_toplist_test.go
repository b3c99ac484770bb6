package storage

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMergeSection merges random batches of fewer values than the cap:
// every count stays exact and nothing is folded.
func TestMergeSection(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dim := range []byte{dimLinks, dimReferrers} {
		value := func() string {
			if dim == dimLinks {
				return string(itob(uint64(r.IntN(topCap[dim]) + 1)))
			}
			return fmt.Sprintf("host%d.example", r.IntN(topCap[dim]))
		}
		var sec section
		want := map[string][2]uint64{}
		var scratch mergeScratch
		for range 50 {
			batch := map[string][2]uint64{}
			for range r.IntN(200) {
				v := value()
				c := batch[v]
				c[r.IntN(2)] += uint64(r.IntN(1000) + 1)
				batch[v] = c
			}
			var deltas []dimDelta
			vals := slices.Sorted(maps.Keys(batch))
			for i, v := range vals {
				dd := dimDelta{v: uint64(i), human: batch[v][0], bot: batch[v][1]}
				if dim == dimLinks {
					dd.v = btoi([]byte(v))
				}
				deltas = append(deltas, dd)
				w := want[v]
				want[v] = [2]uint64{w[0] + batch[v][0], w[1] + batch[v][1]}
			}
			b, err := mergeSection(dim, sec, deltas, vals, &scratch)
			if err != nil {
				t.Fatal(err)
			}
			sec = mustSection(t, slices.Clone(b))
			if got := readBlob(t, dim, sec); !maps.Equal(got, want) {
				t.Fatalf("dim %d: blob holds %d values, want %d", dim, len(got), len(want))
			}
			if sec.other != [2]uint64{} || int(sec.n) != len(want) {
				t.Fatalf("dim %d: other %v, %d entries, want none and %d", dim, sec.other, sec.n, len(want))
			}
		}
		t.Logf("dim %d: %d values in %d bytes", dim, len(want), len(sec.entries))
	}
	// An unsorted section is refused rather than rewritten.
	bad := section{entries: v1Section(dimReferrers, []string{"b", "a"}, [][2]uint64{{1, 0}, {1, 0}})}
	if _, err := mergeSection(dimReferrers, bad, []dimDelta{{v: 0, human: 1}}, []string{"c"}, &mergeScratch{}); err == nil {
		t.Fatal("merged an unsorted section")
	}
}

// TestMergeSection_Bounded floods a section with values of one click each
// among a few heavy ones: the list never exceeds the cap, the entries and
// other sum to every click, the heavy values are listed with their exact
// counts, and each listed count is a lower bound of its value's clicks.
func TestMergeSection_Bounded(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	heavy := []string{"a.example", "b.example", "c.example"}
	trueCounts := map[string][2]uint64{}
	var sec section
	var scratch mergeScratch
	var total [2]uint64
	for batch := range 200 {
		counts := map[string][2]uint64{}
		for i, h := range heavy { // 30, 20, 10 clicks a batch
			counts[h] = [2]uint64{uint64(30 - 10*i), uint64(batch % 2)}
		}
		for range 500 {
			counts[fmt.Sprintf("%08x.flood.example", r.Uint32())] = [2]uint64{1, 0}
		}
		vals := slices.Sorted(maps.Keys(counts))
		var deltas []dimDelta
		for i, v := range vals {
			c := counts[v]
			deltas = append(deltas, dimDelta{v: uint64(i), human: c[0], bot: c[1]})
			tc := trueCounts[v]
			trueCounts[v] = [2]uint64{tc[0] + c[0], tc[1] + c[1]}
			total[0] += c[0]
			total[1] += c[1]
		}
		b, err := mergeSection(dimReferrers, sec, deltas, vals, &scratch)
		if err != nil {
			t.Fatal(err)
		}
		sec = mustSection(t, slices.Clone(b))
		got := readBlob(t, dimReferrers, sec)
		if len(got) > topCap[dimReferrers] || int(sec.n) != len(got) {
			t.Fatalf("batch %d: %d entries (prefix %d), cap %d", batch, len(got), sec.n, topCap[dimReferrers])
		}
		sum := sec.other
		for v, c := range got {
			sum[0] += c[0]
			sum[1] += c[1]
			if tc := trueCounts[v]; c[0] > tc[0] || c[1] > tc[1] {
				t.Fatalf("batch %d: %s listed with %v, has %v", batch, v, c, tc)
			}
		}
		if sum != total {
			t.Fatalf("batch %d: entries and other sum to %v, clicks %v", batch, sum, total)
		}
		for _, h := range heavy {
			if got[h] != trueCounts[h] {
				t.Fatalf("batch %d: %s listed with %v, has %v", batch, h, got[h], trueCounts[h])
			}
		}
	}
}

// TestMergeSection_Version1 reads an unbounded section written before
// bounded lists and writes it back bounded: the largest values keep their
// exact counts, the rest is other.
func TestMergeSection_Version1(t *testing.T) {
	n := topCap[dimReferrers] + 50
	var vals []string
	var counts [][2]uint64
	var total uint64
	for i := range n {
		vals = append(vals, fmt.Sprintf("host%04d.example", i))
		counts = append(counts, [2]uint64{uint64(i + 1), 0})
		total += uint64(i + 1)
	}
	old := section{entries: v1Section(dimReferrers, vals, counts)}
	if got := readBlob(t, dimReferrers, old); len(got) != n {
		t.Fatalf("read %d values of a version 1 section, want %d", len(got), n)
	}
	b, err := mergeSection(dimReferrers, old, nil, nil, &mergeScratch{})
	if err != nil {
		t.Fatal(err)
	}
	sec := mustSection(t, b)
	got := readBlob(t, dimReferrers, sec)
	if len(got) != topCap[dimReferrers] {
		t.Fatalf("%d entries, want %d", len(got), topCap[dimReferrers])
	}
	var folded uint64
	for i := range 50 {
		folded += uint64(i + 1)
		if _, ok := got[vals[i]]; ok {
			t.Fatalf("kept %s, one of the smallest", vals[i])
		}
	}
	for i := 50; i < n; i++ {
		if got[vals[i]] != counts[i] {
			t.Fatalf("%s: %v, want %v", vals[i], got[vals[i]], counts[i])
		}
	}
	if sec.other != [2]uint64{folded, 0} {
		t.Fatalf("other %v, want %d", sec.other, folded)
	}
}
