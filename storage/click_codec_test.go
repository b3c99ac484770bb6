package storage

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// readBlob decodes a whole blob into a map.
func readBlob(tb testing.TB, dim byte, blob []byte) map[string][2]uint64 {
	tb.Helper()
	m := map[string][2]uint64{}
	r := newBlobReader(dim, blob)
	for {
		val, human, bot, ok, err := r.next()
		if err != nil {
			tb.Fatalf("read blob: %v", err)
		}
		if !ok {
			return m
		}
		m[string(val)] = [2]uint64{human, bot}
	}
}

func TestMergeSection(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dim := range []byte{dimLinks, dimReferrers} {
		value := func() string {
			if dim == dimLinks {
				return string(itob(uint64(r.IntN(3000) + 1)))
			}
			return fmt.Sprintf("host%d.example", r.IntN(300))
		}
		var blob []byte
		want := map[string][2]uint64{}
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
			var err error
			if blob, err = mergeSection(dim, blob, deltas, vals, nil); err != nil {
				t.Fatal(err)
			}
			if got := readBlob(t, dim, blob); !maps.Equal(got, want) {
				t.Fatalf("dim %d: blob holds %d values, want %d", dim, len(got), len(want))
			}
		}
		t.Logf("dim %d: %d values in %d bytes", dim, len(want), len(blob))
	}
	// An unsorted section is refused rather than rewritten.
	var bad blobWriter
	bad.add([]byte("b"), 1, 0)
	bad.add([]byte("a"), 1, 0)
	if _, err := mergeSection(dimReferrers, bad.buf, []dimDelta{{v: 0, human: 1}}, []string{"c"}, nil); err == nil {
		t.Fatal("merged an unsorted section")
	}
}

func TestMergePeriodBlob(t *testing.T) {
	var deltas [numDims][]dimDelta
	var vals [numDims][]string
	for d := range numDims {
		deltas[d] = []dimDelta{{v: 1, human: 2, bot: 1}}
		vals[d] = []string{"a", "b"}
	}
	var scratch [2][]byte
	add := periodHeader{clicks: 3, bots: 1, visitors: 2, humans: 1}
	blob, err := mergePeriodBlob(nil, true, add, &deltas, &vals, &scratch)
	if err != nil {
		t.Fatal(err)
	}
	blob = slices.Clone(blob)
	deltas[dimOS] = []dimDelta{{v: 0, human: 1}}
	deltas[dimLinks] = []dimDelta{{v: 1, human: 1}}
	blob, err = mergePeriodBlob(blob, true, periodHeader{clicks: 1, visitors: 1, humans: 1}, &deltas, &vals, &scratch)
	if err != nil {
		t.Fatal(err)
	}
	h, sections, err := parsePeriodBlob(blob, true)
	if err != nil || h != (periodHeader{clicks: 4, bots: 1, visitors: 3, humans: 2}) {
		t.Fatalf("header %+v, %v", h, err)
	}
	if got := fmt.Sprint(readBlob(t, dimOS, sections[dimOS])); got != "map[a:[1 0] b:[2 1]]" {
		t.Fatalf("os section: %s", got)
	}
	if got := readBlob(t, dimLinks, sections[dimLinks]); got[string(itob(1))] != [2]uint64{3, 1} || len(got) != 1 {
		t.Fatalf("links section: %v", got)
	}
	if c, b, err := periodClicks(blob); c != 4 || b != 1 || err != nil {
		t.Fatalf("period clicks %d, %d, %v", c, b, err)
	}
	if _, _, err := parsePeriodBlob(blob, false); err == nil {
		t.Fatal("read a daily blob as hourly")
	}
}

func TestVisitorRecord(t *testing.T) {
	in := visitorRecord{bot: true, links: []uint64{3, 9, 1 << 40}, campaigns: []string{"cmp_a", "cmp_b"}}
	out, err := decodeVisitorRecord(in.appendTo(nil))
	if err != nil || fmt.Sprint(out) != fmt.Sprint(in) {
		t.Fatalf("round trip %+v, %v", out, err)
	}
	bad := visitorRecord{campaigns: []string{"b", "a"}}
	if _, err := decodeVisitorRecord(bad.appendTo(nil)); err == nil {
		t.Fatal("decoded campaigns out of order")
	}
}

func FuzzBlobReader(f *testing.F) {
	var w blobWriter
	w.addID(5, 1, 2)
	w.addID(300, 0, 7)
	f.Add(w.buf)
	f.Add([]byte{0x03, 'a', 'b', 'c', 0x01, 0x00})
	f.Fuzz(func(t *testing.T, blob []byte) {
		vals := []string{"x"}
		for _, dim := range []byte{dimLinks, dimOS} {
			r := newBlobReader(dim, blob)
			for range len(blob) + 1 {
				_, _, _, ok, err := r.next()
				if err != nil || !ok {
					break
				}
			}
			_, _ = mergeSection(dim, blob, []dimDelta{{v: 7 * uint64(dim&1^1), human: 1}}, vals, nil)
			var deltas [numDims][]dimDelta
			var allVals [numDims][]string
			deltas[dim], allVals[dim] = []dimDelta{{v: 0, human: 1}}, vals
			var scratch [2][]byte
			_, _ = mergePeriodBlob(blob, dim == dimLinks, periodHeader{clicks: 1}, &deltas, &allVals, &scratch)
			_, _ = decodeVisitorRecord(blob)
		}
	})
}

func TestRawClickRoundTrip(t *testing.T) {
	ids := testCodec(t, nil)
	in := link.Click{LinkID: ids.formatID(prefixLink, 100), WorkspaceID: ids.formatID(prefixWorkspace, 1), CampaignID: ids.formatID(prefixCampaign, 9), Time: time.Unix(1740830400, 123456789).UTC(),
		Referrer: "t.co", Country: "DE", Device: "mobile", Browser: "Safari", OS: "iOS", Bot: true, Visitor: 1<<64 - 1}
	p, err := parseClick(ids, 0, &in)
	if err != nil {
		t.Fatal(err)
	}
	v := appendRawClick(nil, &p)
	k := concat(itob(p.ws), itob(uint64(p.nanos)), be32(7))
	var out link.Click
	if err := decodeRawClick(ids, k, v, &out, func(b []byte) string { return string(b) }); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip:\n%+v\n%+v", out, in)
	}
	t.Logf("raw click: %d bytes + %d key", len(v), len(k))
	for i := range v {
		if err := decodeRawClick(ids, k, v[:i], &out, func(b []byte) string { return string(b) }); err == nil {
			t.Fatalf("decoded a raw click cut at %d", i)
		}
	}
}
