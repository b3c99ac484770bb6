package storage

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
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
