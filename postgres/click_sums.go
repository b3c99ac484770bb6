package postgres

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// A scope's period (a workspace's, link's or campaign's hour or UTC day)
// is one row of click_hour_sums or click_day_sums, as it is one blob in
// the bbolt store: its totals in columns, which the time series and the
// unique visitors read alone, and its top lists in one bytea, tops. A
// click of a link new in the hour writes two rows (its hour and its day)
// instead of a row per dimension value, and a workspace's period is one
// row that each batch reads and writes once.
//
// tops is a sequence of entries, each
//
//	dim int16, len uint16, value (len bytes), clicks, bots, inherited int64
//
// big-endian (SQL builds the same with int2send and int8send), in the
// order of dim and then of value's bytes.

// topCap is the most entries a period's top list of each dimension keeps,
// as in the bbolt store.
var topCap = [numDims]int{dimLinks: 1024, dimReferrers: 256, dimCountries: 256, dimDevices: 256, dimBrowsers: 256, dimOS: 256, dimVariants: 16}

// topEntry is one value of a top list: its exact clicks and bots since it
// took its place, and the estimate it took its place with (see bound).
type topEntry struct {
	value                   string
	clicks, bots, inherited int64
}

// periodSums is a scope's period: its totals (visitors for days only)
// and its top lists by dimension, each in the order of its values.
type periodSums struct {
	clicks, bots, visitors, botVisitors int64
	tops                                [numDims][]topEntry
}

// topEntryFixed is an entry's size without its value.
const topEntryFixed = 2 + 2 + 3*8

// errTops is a tops value that does not decode.
var errTops = errors.New("top lists do not decode")

// encodeTops is tops' bytes.
func encodeTops(tops *[numDims][]topEntry) []byte {
	n := 0
	for d := dimLinks; d < numDims; d++ {
		for _, e := range tops[d] {
			n += topEntryFixed + len(e.value)
		}
	}
	b := make([]byte, 0, n)
	for d := dimLinks; d < numDims; d++ {
		for _, e := range tops[d] {
			b = binary.BigEndian.AppendUint16(b, uint16(d))
			b = binary.BigEndian.AppendUint16(b, uint16(len(e.value)))
			b = append(b, e.value...)
			b = binary.BigEndian.AppendUint64(b, uint64(e.clicks))
			b = binary.BigEndian.AppendUint64(b, uint64(e.bots))
			b = binary.BigEndian.AppendUint64(b, uint64(e.inherited))
		}
	}
	return b
}

// eachTop calls fn with each entry of b in its order; errTops for bytes
// that are not a sequence of entries of known dimensions.
func eachTop(b []byte, fn func(dim int16, e topEntry)) error {
	for len(b) > 0 {
		if len(b) < topEntryFixed {
			return errTops
		}
		dim, n := int16(binary.BigEndian.Uint16(b)), int(binary.BigEndian.Uint16(b[2:]))
		if dim < dimLinks || dim >= numDims || len(b) < topEntryFixed+n {
			return errTops
		}
		v := b[4 : 4+n]
		b = b[4+n:]
		fn(dim, topEntry{value: string(v), clicks: int64(binary.BigEndian.Uint64(b)),
			bots: int64(binary.BigEndian.Uint64(b[8:])), inherited: int64(binary.BigEndian.Uint64(b[16:]))})
		b = b[24:]
	}
	return nil
}

// decodeTops reads b into p's top lists.
func (p *periodSums) decodeTops(b []byte) error {
	return eachTop(b, func(dim int16, e topEntry) { p.tops[dim] = append(p.tops[dim], e) })
}

// sumsDelta is what a batch adds to a scope's period.
type sumsDelta struct {
	clicks, bots, visitors, botVisitors int64
	// tops holds, by dimension, each value's clicks and bots.
	tops [numDims]map[string]*[2]int64
	// the scope's owner: exactly one is set
	ws, campaign, link string
}

func (d *sumsDelta) addValue(dim int16, value string, bot bool, n int64) {
	m := d.tops[dim]
	if m == nil {
		m = map[string]*[2]int64{}
		d.tops[dim] = m
	}
	c := m[value]
	if c == nil {
		c = new([2]int64)
		m[value] = c
	}
	c[0] += n
	if bot {
		c[1] += n
	}
}

// add adds d to p, each top list held to its bound.
func (p *periodSums) add(d *sumsDelta) {
	p.clicks += d.clicks
	p.bots += d.bots
	p.visitors += d.visitors
	p.botVisitors += d.botVisitors
	for dim := dimLinks; dim < numDims; dim++ {
		if len(d.tops[dim]) == 0 {
			continue
		}
		list := p.tops[dim]
		var fresh []string
		for v, c := range d.tops[dim] {
			i, found := slices.BinarySearchFunc(list, v, func(e topEntry, v string) int { return cmp.Compare(e.value, v) })
			if found {
				list[i].clicks += c[0]
				list[i].bots += c[1]
				continue
			}
			fresh = append(fresh, v)
		}
		if len(fresh) > 0 {
			// The new values go in all at once: a workspace's hour takes
			// thousands a batch.
			for _, v := range fresh {
				c := d.tops[dim][v]
				list = append(list, topEntry{value: v, clicks: c[0], bots: c[1]})
			}
			slices.SortFunc(list, func(x, y topEntry) int { return cmp.Compare(x.value, y.value) })
		}
		p.tops[dim] = bound(list, topCap[dim], fresh)
	}
}

// bound holds list, in value order, to limit entries by the Space-Saving
// rule, as the bbolt store does (storage's boundEntries): the entries
// already listed hold their places first (the smallest estimates, clicks
// and inherited, go if they alone are too many); then the fresh values
// (new to the list in this batch) come in, most clicks first, each taking
// a free place or the place of the entry of the smallest estimate, whose
// estimate it inherits. Of two estimates alike, the entry of fewer clicks
// goes first, then the one earlier in value order. So every value with
// more than clicks/limit clicks in the period stays listed, however its
// clicks are spread over batches. An entry's clicks and bots stay the
// exact clicks since it took its place.
func bound(list []topEntry, limit int, fresh []string) []topEntry {
	if len(list) <= limit {
		return list
	}
	isFresh := make(map[string]bool, len(fresh))
	for _, v := range fresh {
		isFresh[v] = true
	}
	less := func(a, b int) bool {
		x, y := &list[a], &list[b]
		if ex, ey := x.clicks+x.inherited, y.clicks+y.inherited; ex != ey {
			return ex < ey
		}
		if x.clicks != y.clicks {
			return x.clicks < y.clicks
		}
		return a < b
	}
	var heap, newcomers []int
	for i := range list {
		if isFresh[list[i].value] {
			newcomers = append(newcomers, i)
		} else {
			heap = append(heap, i)
		}
	}
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(heap) {
				return
			}
			m := l
			if r := l + 1; r < len(heap) && less(heap[r], heap[l]) {
				m = r
			}
			if !less(heap[m], heap[i]) {
				return
			}
			heap[i], heap[m] = heap[m], heap[i]
			i = m
		}
	}
	up := func(i int) {
		for i > 0 {
			p := (i - 1) / 2
			if !less(heap[i], heap[p]) {
				return
			}
			heap[i], heap[p] = heap[p], heap[i]
			i = p
		}
	}
	for i := len(heap)/2 - 1; i >= 0; i-- {
		down(i)
	}
	gone := make([]bool, len(list))
	pop := func() {
		gone[heap[0]] = true
		last := len(heap) - 1
		heap[0] = heap[last]
		heap = heap[:last]
		down(0)
	}
	for len(heap) > limit {
		pop()
	}
	slices.SortStableFunc(newcomers, func(a, b int) int { return cmp.Compare(list[b].clicks, list[a].clicks) })
	for _, i := range newcomers {
		if len(heap) < limit {
			heap = append(heap, i)
			up(len(heap) - 1)
			continue
		}
		m := &list[heap[0]]
		gone[heap[0]] = true
		list[i].inherited = m.clicks + m.inherited
		heap[0] = i
		down(0)
	}
	kept := list[:0]
	for i, e := range list {
		if !gone[i] {
			kept = append(kept, e)
		}
	}
	return kept
}

// checkTops reports what breaks the rules of a period's top lists: each
// at most its bound, its values in order and once, its counts sane and
// summing to at most the period's totals, a link's own list of links and
// another scope's list of variants empty.
func (p *periodSums) checkTops(isLink bool) []string {
	var out []string
	for dim := dimLinks; dim < numDims; dim++ {
		list := p.tops[dim]
		if len(list) == 0 {
			continue
		}
		if dim == dimLinks && isLink || dim == dimVariants && !isLink {
			out = append(out, fmt.Sprintf("dimension %d: %d values, none expected in this scope", dim, len(list)))
			continue
		}
		var c, b int64
		for i, e := range list {
			if i > 0 && list[i-1].value >= e.value {
				out = append(out, fmt.Sprintf("dimension %d: value %q out of order", dim, e.value))
			}
			if e.clicks < 0 || e.bots < 0 || e.bots > e.clicks || e.inherited < 0 {
				out = append(out, fmt.Sprintf("dimension %d value %q: %d clicks, %d bots, %d inherited", dim, e.value, e.clicks, e.bots, e.inherited))
			}
			c += e.clicks
			b += e.bots
		}
		if len(list) > topCap[dim] || c > p.clicks || b > p.bots {
			out = append(out, fmt.Sprintf("dimension %d: %d values (at most %d) of %d clicks (%d bots), its totals %d (%d)",
				dim, len(list), topCap[dim], c, b, p.clicks, p.bots))
		}
	}
	return out
}
