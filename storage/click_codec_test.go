package storage

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// readBlob decodes a whole section into a map.
func readBlob(tb testing.TB, dim byte, sec section) map[string][2]uint64 {
	tb.Helper()
	m := map[string][2]uint64{}
	r := newBlobReader(dim, sec)
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

// mustSection parses an encoded version 2 section.
func mustSection(tb testing.TB, b []byte) section {
	tb.Helper()
	sec, err := parseSection(b, true)
	if err != nil {
		tb.Fatalf("parse section: %v", err)
	}
	return sec
}

// v1Section encodes entries as a version 1 section (no inherited counts).
func v1Section(dim byte, vals []string, counts [][2]uint64) []byte {
	var b []byte
	var prev uint64
	for i, v := range vals {
		if dim == dimLinks {
			id := btoi([]byte(v))
			b = binary.AppendUvarint(b, id-prev)
			prev = id
		} else {
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		}
		b = binary.AppendUvarint(b, counts[i][0])
		b = binary.AppendUvarint(b, counts[i][1])
	}
	return b
}

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

func TestMergePeriodBlob(t *testing.T) {
	var deltas [numDims][]dimDelta
	var vals [numDims][]string
	for d := range numDims {
		deltas[d] = []dimDelta{{v: 1, human: 2, bot: 1}}
		vals[d] = []string{"a", "b"}
	}
	var scratch mergeScratch
	add := periodHeader{clicks: 3, bots: 1, visitors: 2, humans: 1}
	blob, err := mergePeriodBlob(nil, true, add, &deltas, &vals, &scratch)
	if err != nil {
		t.Fatal(err)
	}
	blob = slices.Clone(blob)
	deltas[dimOS] = []dimDelta{{v: 0, human: 1}}
	deltas[dimLinks] = []dimDelta{{v: 1, human: 1}}
	deltas[dimBrowsers] = nil // untouched: copied
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
	if got := fmt.Sprint(readBlob(t, dimBrowsers, sections[dimBrowsers])); got != "map[b:[2 1]]" {
		t.Fatalf("browsers section: %s", got)
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

	// A version 1 blob (as written before bounded lists) is read, and
	// written back as version 2.
	v1 := binary.AppendUvarint(nil, 3)
	v1 = binary.AppendUvarint(v1, 1)
	for d := range numDims {
		val := "a"
		if d == dimLinks {
			val = string(itob(4))
		}
		sec := v1Section(d, []string{val}, [][2]uint64{{2, 1}})
		v1 = binary.AppendUvarint(v1, uint64(len(sec)))
		v1 = append(v1, sec...)
	}
	if c, b, err := periodClicks(v1); c != 3 || b != 1 || err != nil {
		t.Fatalf("version 1 period clicks %d, %d, %v", c, b, err)
	}
	_, sections, err = parsePeriodBlob(v1, false)
	if err != nil || fmt.Sprint(readBlob(t, dimOS, sections[dimOS])) != "map[a:[2 1]]" {
		t.Fatalf("version 1 blob: %v", err)
	}
	for d := range numDims {
		deltas[d] = nil
	}
	deltas[dimOS] = []dimDelta{{v: 1, human: 1}}
	blob, err = mergePeriodBlob(v1, false, periodHeader{clicks: 1}, &deltas, &vals, &scratch)
	if err != nil || blob[0] != 0 || blob[1] != blobVersion {
		t.Fatalf("version 1 blob merged into % x, %v", blob[:2], err)
	}
	_, sections, err = parsePeriodBlob(blob, false)
	if err != nil || fmt.Sprint(readBlob(t, dimOS, sections[dimOS])) != "map[a:[2 1] b:[1 0]]" ||
		fmt.Sprint(readBlob(t, dimCountries, sections[dimCountries])) != "map[a:[2 1]]" {
		t.Fatalf("version 1 blob merged: %v", err)
	}
}

func TestVisitorRecord(t *testing.T) {
	in := visitorRecord{bot: true, links: []uint64{3, 9, 1 << 40}, campaigns: []string{"cmp_a", "cmp_b"}}
	var out visitorRecord
	err := out.decode(in.appendTo(nil))
	if err != nil || fmt.Sprint(out) != fmt.Sprint(in) {
		t.Fatalf("round trip %+v, %v", out, err)
	}
	bad := visitorRecord{campaigns: []string{"b", "a"}}
	if err := new(visitorRecord).decode(bad.appendTo(nil)); err == nil {
		t.Fatal("decoded campaigns out of order")
	}
}

func FuzzBlobReader(f *testing.F) {
	f.Add(v1Section(dimLinks, []string{string(itob(5)), string(itob(300))}, [][2]uint64{{1, 2}, {0, 7}}))
	f.Add([]byte{0x03, 'a', 'b', 'c', 0x01, 0x00})
	f.Add([]byte{0x01, 0x02, 0x00, 0x03, 'a', 'b', 'c', 0x01, 0x00, 0x05})
	f.Add([]byte{0x00, blobOneClick, oneBot, 0x3e, 0x80, 0x81, 0x82, 0x81, 0x81})     // a link's hour of one click, version 3
	f.Add([]byte{0x00, blobOneClick, oneVisitor | oneHumanVisitor, 0x01, 0xac, 0x02}) // a workspace's day of one click of link 300
	f.Fuzz(func(t *testing.T, blob []byte) {
		vals := []string{"x"}
		for _, dim := range []byte{dimLinks, dimOS} {
			for _, v2 := range []bool{false, true} {
				sec, err := parseSection(blob, v2)
				if err != nil {
					continue
				}
				r := newBlobReader(dim, sec)
				for range len(blob) + 1 {
					_, _, _, ok, err := r.next()
					if err != nil || !ok {
						break
					}
				}
				_, _ = mergeSection(dim, sec, []dimDelta{{v: 7 * uint64(dim&1^1), human: 1}}, vals, &mergeScratch{})
			}
			var deltas [numDims][]dimDelta
			var allVals [numDims][]string
			deltas[dim], allVals[dim] = []dimDelta{{v: 0, human: 1}}, vals
			var scratch mergeScratch
			_, _ = mergePeriodBlob(blob, dim == dimLinks, periodHeader{clicks: 1}, &deltas, &allVals, &scratch)
			_ = new(visitorRecord).decode(blob)
		}
	})
}

func TestRawClickRoundTrip(t *testing.T) {
	ids := testCodec(t, nil)
	in := link.Click{LinkID: ids.formatID(prefixLink, 100), WorkspaceID: ids.formatID(prefixWorkspace, 1), CampaignID: ids.formatID(prefixCampaign, 9), Time: time.Unix(1740830400, 123456789).UTC(),
		Referrer: "t.co", Country: "DE", Device: "mobile", Browser: "Safari", OS: "iOS", Bot: true, Visitor: 1<<64 - 1}
	p, ok := parseClick(ids, &in)
	if !ok {
		t.Fatal("parseClick refused a valid click")
	}
	k := concat(itob(p.ws), itob(uint64(p.nanos)), be32(7))
	str := func(b []byte) string { return string(b) }
	day := uint32(in.Time.Unix() / secondsPerDay)
	host := func(d uint32, id uint64) (string, error) {
		if d != day || id != 300 {
			return "", fmt.Errorf("no host %d on day %d", id, d)
		}
		return "t.co", nil
	}
	for _, ref := range []rawReferrer{{inline: "t.co"}, {ref: true, id: 300}} {
		v := appendRawClick(nil, &p, ref)
		var out link.Click
		if err := decodeRawClick(ids, k, v, &out, str, host); err != nil {
			t.Fatal(err)
		}
		if out != in {
			t.Fatalf("round trip of %+v:\n%+v\n%+v", ref, out, in)
		}
		t.Logf("raw click (%+v): %d bytes + %d key", ref, len(v), len(k))
		for i := range v {
			if err := decodeRawClick(ids, k, v[:i], &out, str, host); err == nil {
				t.Fatalf("decoded a raw click cut at %d", i)
			}
		}
	}
	// A reference to a host that is not there is an error, not a blank.
	v := appendRawClick(nil, &p, rawReferrer{ref: true, id: 301})
	var out link.Click
	if err := decodeRawClick(ids, k, v, &out, str, host); err == nil {
		t.Fatal("decoded a raw click of a missing host")
	}
}

// TestRawClickShortValues: a raw click whose values are short holds them
// as short values (rawFlagCodes), common ones in a byte; one with a value
// too long for that holds them all as before; and a raw click written
// before schema version 5 (no rawFlagCodes) reads as it did.
func TestRawClickShortValues(t *testing.T) {
	ids := testCodec(t, nil)
	k := concat(itob(1), itob(uint64(time.Unix(1740830400, 0).UnixNano())), be32(7))
	str := func(b []byte) string { return string(b) }
	long := strings.Repeat("x", maxShortValue+1)
	for _, tt := range []struct {
		ref, country string
		short        bool
		size         int
	}{
		{"direct", "unknown", true, 1 + 1 + 5 + 8}, // flags, link, five codes, visitor
		{"t.co", "DE", true, 0},
		{strings.Repeat("r", maxShortValue), "DE", true, 0},
		{long, "DE", false, 0},
		{"t.co", long, false, 0},
	} {
		in := link.Click{LinkID: ids.formatID(prefixLink, 100), WorkspaceID: ids.formatID(prefixWorkspace, 1),
			Time: time.Unix(1740830400, 0).UTC(), Referrer: tt.ref, Country: tt.country, Device: "bot", Browser: "unknown", OS: "unknown", Bot: true, Visitor: 42}
		p, ok := parseClick(ids, &in)
		if !ok {
			t.Fatal("parseClick refused a valid click")
		}
		v := appendRawClick(nil, &p, rawReferrer{inline: tt.ref})
		if got := v[0]&rawFlagCodes != 0; got != tt.short {
			t.Errorf("%.10s/%.10s: short values %v, want %v", tt.ref, tt.country, got, tt.short)
		}
		if tt.size != 0 && len(v) != tt.size {
			t.Errorf("%.10s/%.10s: %d bytes, want %d", tt.ref, tt.country, len(v), tt.size)
		}
		var out link.Click
		if err := decodeRawClick(ids, k, v, &out, str, nil); err != nil || out != in {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, out, in)
		}
		for i := range v {
			if err := decodeRawClick(ids, k, v[:i], &out, str, nil); err == nil {
				t.Fatalf("decoded a raw click cut at %d", i)
			}
		}
		// As schema version 4 wrote it.
		old := []byte{rawFlagBot}
		old = binary.AppendUvarint(old, 100)
		for _, s := range []string{tt.ref, tt.country, "bot", "unknown", "unknown"} {
			old = appendLenString(old, s)
		}
		old = binary.BigEndian.AppendUint64(old, 42)
		if err := decodeRawClick(ids, k, old, &out, str, nil); err != nil || out != in {
			t.Fatalf("a raw click of schema version 4: %v\n%+v\n%+v", err, out, in)
		}
	}
}

// TestPeriodBlobVariants: the variants section is optional and last. A
// blob without variants is written as before (six sections), a blob of the
// six sections reads with no variants, and variants merged into it are
// written as a seventh section.
func TestPeriodBlobVariants(t *testing.T) {
	var deltas [numDims][]dimDelta
	var vals [numDims][]string
	for d := range dimVariants {
		deltas[d] = []dimDelta{{v: 0, human: 1}}
		vals[d] = []string{"a"}
	}
	var scratch mergeScratch
	blob, err := mergePeriodBlob(nil, false, periodHeader{clicks: 1}, &deltas, &vals, &scratch)
	if err != nil {
		t.Fatal(err)
	}
	blob = slices.Clone(blob)
	// Walk the sections as a reader of six would: nothing follows them.
	rest := blob[2:]
	for range 2 {
		_, l := binary.Uvarint(rest)
		rest = rest[l:]
	}
	for d := range dimVariants {
		n, l := binary.Uvarint(rest)
		if l <= 0 || n > uint64(len(rest)-l) {
			t.Fatalf("section %d: malformed", d)
		}
		rest = rest[l+int(n):]
	}
	if len(rest) != 0 {
		t.Fatalf("a blob without variants has %d bytes after the os section", len(rest))
	}
	_, sections, err := parsePeriodBlob(blob, false)
	if err != nil || len(sections[dimVariants].entries) != 0 || fmt.Sprint(readBlob(t, dimOS, sections[dimOS])) != "map[a:[1 0]]" {
		t.Fatalf("six sections: %v", err)
	}

	for d := range numDims {
		deltas[d] = nil
	}
	deltas[dimVariants], vals[dimVariants] = []dimDelta{{v: 0, human: 2}, {v: 1, human: 3, bot: 1}}, []string{"1", "2"}
	blob, err = mergePeriodBlob(blob, false, periodHeader{clicks: 6, bots: 1}, &deltas, &vals, &scratch)
	if err != nil {
		t.Fatal(err)
	}
	blob = slices.Clone(blob)
	h, sections, err := parsePeriodBlob(blob, false)
	if err != nil || h.clicks != 7 || fmt.Sprint(readBlob(t, dimVariants, sections[dimVariants])) != "map[1:[2 0] 2:[3 1]]" ||
		fmt.Sprint(readBlob(t, dimOS, sections[dimOS])) != "map[a:[1 0]]" {
		t.Fatalf("with variants: %+v, %v", h, err)
	}
	// Another batch without variants keeps them.
	deltas[dimVariants] = nil
	deltas[dimOS] = []dimDelta{{v: 0, human: 1}}
	blob, err = mergePeriodBlob(blob, false, periodHeader{clicks: 1}, &deltas, &vals, &scratch)
	if err != nil {
		t.Fatal(err)
	}
	if _, sections, err = parsePeriodBlob(blob, false); err != nil || fmt.Sprint(readBlob(t, dimVariants, sections[dimVariants])) != "map[1:[2 0] 2:[3 1]]" {
		t.Fatalf("variants kept: %v", err)
	}
	// An empty variants section written out is malformed (it is left out).
	bad := append(slices.Clone(blob[:len(blob)-len(sections[dimVariants].entries)]), 0)
	if _, _, err := parsePeriodBlob(bad, false); err == nil {
		t.Fatal("read a blob with a trailing byte")
	}
}

// TestRawClickVariant: a raw click keeps its variant; one without is
// written as before (no variant byte).
func TestRawClickVariant(t *testing.T) {
	ids := testCodec(t, nil)
	in := link.Click{LinkID: ids.formatID(prefixLink, 100), WorkspaceID: ids.formatID(prefixWorkspace, 1), Time: time.Unix(1740830400, 0).UTC(),
		Referrer: "direct", Country: "DE", Device: "mobile", Browser: "Safari", OS: "iOS", Visitor: 42}
	k := concat(itob(1), itob(uint64(in.Time.UnixNano())), be32(7))
	str := func(b []byte) string { return string(b) }
	noHost := func(uint32, uint64) (string, error) { return "", fmt.Errorf("no host") }
	p, _ := parseClick(ids, &in)
	plain := appendRawClick(nil, &p, rawReferrer{inline: "direct"})
	in.Variant = 3
	p, _ = parseClick(ids, &in)
	v := appendRawClick(nil, &p, rawReferrer{inline: "direct"})
	if len(v) != len(plain)+1 || v[0]&^rawFlagVariant != plain[0] {
		t.Fatalf("with a variant % x, without % x", v, plain)
	}
	var out link.Click
	if err := decodeRawClick(ids, k, v, &out, str, noHost); err != nil || out != in {
		t.Fatalf("round trip %+v, %v", out, err)
	}
	if err := decodeRawClick(ids, k, plain, &out, str, noHost); err != nil || out.Variant != 0 {
		t.Fatalf("without a variant: %+v, %v", out, err)
	}
	if err := decodeRawClick(ids, k, v[:len(v)-1], &out, str, noHost); err == nil {
		t.Fatal("decoded a raw click without its variant byte")
	}
	in.Variant = 11 // no link has 11 variants: none
	if p, ok := parseClick(ids, &in); !ok || p.variant != 0 {
		t.Fatalf("variant 11: %d, %v", p.variant, ok)
	}
}

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
