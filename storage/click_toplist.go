package storage

// The bounded top lists of a period blob's sections: how a batch's counts
// are merged into a section and held to topCap entries by the Space-Saving
// rule (the format is in click_blob.go).

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
)

// dimDelta is what a batch adds to one value of a dimension: v is a link
// id, or the index of a string value in a table beside the deltas. (No
// pointers: a batch makes hundreds of thousands of them.)
type dimDelta struct {
	v          uint64
	human, bot uint64
}

// topEntry is an entry of a section being merged.
type topEntry struct {
	val        []byte // string dimensions: a value of the old section
	str        string // string dimensions: a value new to the section
	id         uint64 // links
	human, bot uint64
	inherited  uint64
	added      uint64 // clicks of a new value in this batch; 0 for old ones
	gone       bool   // pushed out of the list
}

func (e *topEntry) estimate() uint64 { return e.human + e.bot + e.inherited }

// mergeScratch is the reusable memory of mergePeriodBlob.
type mergeScratch struct {
	out, sec []byte
	one      []byte // a version 3 blob
	entries  []topEntry
	fresh    []int32
	heap     entryHeap
}

// mergeSection encodes into scratch.sec the section old plus deltas (sorted
// by value, each value once), bounded to topCap entries. Old entries are
// checked for order, so a damaged section is not rewritten as if it were
// sound.
func mergeSection(dim byte, old section, deltas []dimDelta, vals []string, scratch *mergeScratch) ([]byte, error) {
	ents, other, err := mergeEntries(dim, old, deltas, vals, scratch.entries[:0])
	scratch.entries = ents
	if err != nil {
		return nil, err
	}
	n := boundEntries(ents, topCap[dim], &other, scratch)

	buf := scratch.sec[:0]
	if n > 0 {
		buf = binary.AppendUvarint(buf, uint64(n))
		buf = binary.AppendUvarint(buf, other[0])
		buf = binary.AppendUvarint(buf, other[1])
	}
	var prevID uint64
	for i := range ents {
		e := &ents[i]
		if e.gone {
			continue
		}
		if dim == dimLinks {
			buf = binary.AppendUvarint(buf, e.id-prevID)
			prevID = e.id
		} else if e.val != nil {
			buf = binary.AppendUvarint(buf, uint64(len(e.val)))
			buf = append(buf, e.val...)
		} else {
			buf = binary.AppendUvarint(buf, uint64(len(e.str)))
			buf = append(buf, e.str...)
		}
		buf = binary.AppendUvarint(buf, e.human)
		buf = binary.AppendUvarint(buf, e.bot)
		buf = binary.AppendUvarint(buf, e.inherited)
	}
	scratch.sec = buf
	return buf, nil
}

// mergeEntries returns the entries of old and the deltas in value order,
// with the deltas of old values added, and old's other counts.
func mergeEntries(dim byte, old section, deltas []dimDelta, vals []string, ents []topEntry) ([]topEntry, [2]uint64, error) {
	other := old.other
	r := newBlobReader(dim, old)
	val, human, bot, ok, err := r.next()
	if err != nil {
		return ents, other, err
	}
	i := 0
	// cmp compares delta i with the current old entry.
	cmp := func() int {
		if dim == dimLinks {
			return cmp.Compare(deltas[i].v, r.prevID)
		}
		return strings.Compare(vals[deltas[i].v], string(val))
	}
	fresh := func(d dimDelta) topEntry {
		e := topEntry{human: d.human, bot: d.bot, added: d.human + d.bot}
		if dim == dimLinks {
			e.id = d.v
		} else {
			e.str = vals[d.v]
		}
		return e
	}
	for ok {
		e := topEntry{id: r.prevID, human: human, bot: bot, inherited: r.inherited}
		if dim != dimLinks {
			e.val = val
		}
		for i < len(deltas) && cmp() < 0 {
			if deltas[i].human+deltas[i].bot > 0 {
				ents = append(ents, fresh(deltas[i]))
			}
			i++
		}
		if i < len(deltas) && cmp() == 0 {
			e.human += deltas[i].human
			e.bot += deltas[i].bot
			i++
		}
		if e.human+e.bot == 0 {
			return ents, other, errBadBlob
		}
		ents = append(ents, e)
		prev := val // string values point into old, never reused
		if val, human, bot, ok, err = r.next(); err != nil {
			return ents, other, err
		}
		if ok && dim != dimLinks && string(val) <= string(prev) {
			return ents, other, errBadBlob
		}
	}
	for ; i < len(deltas); i++ {
		if deltas[i].human+deltas[i].bot > 0 {
			ents = append(ents, fresh(deltas[i]))
		}
	}
	if old.v2 && len(ents)-countAdded(ents) != int(old.n) {
		return ents, other, errBadBlob
	}
	return ents, other, nil
}

func countAdded(ents []topEntry) int {
	n := 0
	for i := range ents {
		if ents[i].added > 0 {
			n++
		}
	}
	return n
}

// boundEntries marks entries gone until at most limit remain, by the
// Space-Saving rule, and adds the clicks of the gone ones to other. It
// returns how many remain. Old entries hold their places first (an
// unbounded version 1 section loses its smallest); then the new values
// come in, most clicks first, each taking a free place or the place of the
// entry with the smallest estimate.
func boundEntries(ents []topEntry, limit int, other *[2]uint64, scratch *mergeScratch) int {
	if len(ents) <= limit {
		return len(ents)
	}
	h := &scratch.heap
	h.ents, h.idx = ents, h.idx[:0]
	fresh := scratch.fresh[:0]
	for i := range ents {
		if ents[i].added > 0 {
			fresh = append(fresh, int32(i))
		} else {
			h.idx = append(h.idx, int32(i))
		}
	}
	scratch.fresh = fresh
	h.init()
	evict := func() uint64 {
		m := &ents[h.idx[0]]
		m.gone = true
		other[0] += m.human
		other[1] += m.bot
		return m.estimate()
	}
	for len(h.idx) > limit {
		evict()
		h.pop()
	}
	slices.SortStableFunc(fresh, func(a, b int32) int { return cmp.Compare(ents[b].added, ents[a].added) })
	for _, i := range fresh {
		if len(h.idx) < limit {
			h.push(i)
			continue
		}
		ents[i].inherited = evict()
		h.idx[0] = i
		h.down(0)
	}
	return len(h.idx)
}

// entryHeap is a min-heap of entries by estimate, then by exact clicks
// (of two equal estimates, the one with fewer known clicks goes first),
// then by value order.
type entryHeap struct {
	ents []topEntry
	idx  []int32
}

func (h *entryHeap) less(a, b int32) bool {
	x, y := &h.ents[a], &h.ents[b]
	if ex, ey := x.estimate(), y.estimate(); ex != ey {
		return ex < ey
	}
	if cx, cy := x.human+x.bot, y.human+y.bot; cx != cy {
		return cx < cy
	}
	return a < b
}

func (h *entryHeap) init() {
	for i := len(h.idx)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *entryHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h.idx) {
			return
		}
		m := l
		if r := l + 1; r < len(h.idx) && h.less(h.idx[r], h.idx[l]) {
			m = r
		}
		if !h.less(h.idx[m], h.idx[i]) {
			return
		}
		h.idx[i], h.idx[m] = h.idx[m], h.idx[i]
		i = m
	}
}

func (h *entryHeap) push(e int32) {
	h.idx = append(h.idx, e)
	for i := len(h.idx) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(h.idx[i], h.idx[p]) {
			return
		}
		h.idx[i], h.idx[p] = h.idx[p], h.idx[i]
		i = p
	}
}

func (h *entryHeap) pop() {
	last := len(h.idx) - 1
	h.idx[0] = h.idx[last]
	h.idx = h.idx[:last]
	h.down(0)
}
