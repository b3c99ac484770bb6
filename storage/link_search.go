package storage

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/bits"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The search index (bucket links.search) finds the links whose alias,
// destination URL (host, path, query), a tag or a line of the note
// contains a text, without reading every link. It is a trigram index:
// every three bytes in a row of those fields (lower-cased, each field apart) point to the link. A
// search for a text of three bytes or more reads the links that hold all
// its trigrams and checks each of them; a shorter text has no trigram
// and is checked on the newest links instead (FindLinkPage).
//
// A key is workspace id(8) + block(4) + trigram(3), a block being the
// link ids id>>searchBlockBits; its value is the set of the block's links
// that hold the trigram, as a sorted list of the ids' low bits (2 bytes
// each) while that is smaller than a bitmap, else a bitmap. Links created
// one after the other fall in the same block, at the end of the
// workspace's keys, so creations write side by side into full pages, and
// a search reads the blocks newest first, intersecting in each the sets
// of the text's trigrams.
const (
	searchBlockBits = 12
	searchBlockSize = 1 << searchBlockBits // links per block
	searchWords     = searchBlockSize / 64
	searchBitmapLen = 1 + searchBlockSize/8
	searchKeyLen    = 8 + 3 + 4
	searchList      = 'L'
	searchBitmap    = 'B'
	// SearchDestinationBytes bounds the part of a destination URL that is
	// searched (and indexed), so that a link's index entries stay few.
	SearchDestinationBytes = 512
)

// metaSearchIndex records that links.search is built for every link;
// metaSearchIndexFrom, while it is being built, the first link id not
// indexed yet.
var (
	metaSearchIndex     = []byte("search_index_v1")
	metaSearchIndexFrom = []byte("search_index_v1_from")
)

// searchFields returns the lower-cased texts of a link that search reads:
// its alias, the first SearchDestinationBytes of its destination URL, each
// tag, and each line of its note (a search holds no line break, and matches
// within one line as within one field, as on PostgreSQL).
func searchFields(r *linkRecord) []string {
	fields := make([]string, 0, 2+len(r.Tags))
	dest := strings.ToLower(r.Destination)
	if len(dest) > SearchDestinationBytes {
		dest = dest[:SearchDestinationBytes]
	}
	fields = append(fields, strings.ToLower(r.Alias), dest)
	for _, t := range r.Tags {
		fields = append(fields, strings.ToLower(t))
	}
	if r.Note != "" {
		fields = append(fields, strings.Split(strings.ToLower(r.Note), "\n")...)
	}
	return fields
}

// searchMatches reports whether a field of r contains the lower-case text q.
func searchMatches(r *linkRecord, q string) bool {
	for _, f := range searchFields(r) {
		if strings.Contains(f, q) {
			return true
		}
	}
	return false
}

// trigrams returns the distinct trigrams of the fields, sorted.
func trigrams(fields ...string) []string {
	packed := packedTrigrams(nil, fields)
	out := make([]string, len(packed))
	for i, g := range packed {
		out[i] = string([]byte{byte(g >> 16), byte(g >> 8), byte(g)})
	}
	return out
}

// packedTrigrams appends to dst the distinct trigrams of the fields, each
// as the number its three bytes make, sorted.
func packedTrigrams(dst []uint32, fields []string) []uint32 {
	for _, f := range fields {
		for i := 0; i+3 <= len(f); i++ {
			dst = append(dst, uint32(f[i])<<16|uint32(f[i+1])<<8|uint32(f[i+2]))
		}
	}
	slices.Sort(dst)
	return slices.Compact(dst)
}

func searchKey(wid uint64, block uint32, gram string) []byte {
	var k [searchKeyLen]byte
	putSearchKey(&k, wid, block, gram)
	return k[:]
}

func putSearchKey(k *[searchKeyLen]byte, wid uint64, block uint32, gram string) {
	binary.BigEndian.PutUint64(k[:], wid)
	binary.BigEndian.PutUint32(k[8:], block)
	copy(k[12:], gram)
}

// searchKeyParts splits a links.search key.
func searchKeyParts(k []byte) (wid uint64, block uint32, gram string) {
	return btoi(k[:8]), binary.BigEndian.Uint32(k[8:12]), string(k[12:])
}

// searchSet is the links of one block, one bit each.
type searchSet [searchWords]uint64

func (s *searchSet) add(low uint16)    { s[low/64] |= 1 << (low % 64) }
func (s *searchSet) remove(low uint16) { s[low/64] &^= 1 << (low % 64) }

func (s *searchSet) count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// decodeSearchSet reads a links.search value into s.
func decodeSearchSet(v []byte, s *searchSet) error {
	*s = searchSet{}
	switch {
	case len(v) == searchBitmapLen && v[0] == searchBitmap:
		for i := range s {
			s[i] = binary.BigEndian.Uint64(v[1+8*i:])
		}
	case len(v) >= 3 && len(v)%2 == 1 && v[0] == searchList:
		prev := -1
		for i := 1; i < len(v); i += 2 {
			low := int(binary.BigEndian.Uint16(v[i:]))
			if low <= prev || low >= searchBlockSize {
				return fmt.Errorf("links.search: malformed list")
			}
			s.add(uint16(low))
			prev = low
		}
	default:
		return fmt.Errorf("links.search: malformed value of %d bytes", len(v))
	}
	return nil
}

// encode returns the value of s: a list while it is smaller than a
// bitmap; nil for an empty set.
func (s *searchSet) encode() []byte {
	n := s.count()
	if n == 0 {
		return nil
	}
	if 1+2*n >= searchBitmapLen {
		v := make([]byte, searchBitmapLen)
		v[0] = searchBitmap
		for i, w := range s {
			binary.BigEndian.PutUint64(v[1+8*i:], w)
		}
		return v
	}
	v := make([]byte, 1, 1+2*n)
	v[0] = searchList
	for i, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			v = binary.BigEndian.AppendUint16(v, uint16(i*64+b))
			w &^= 1 << b
		}
	}
	return v
}

// searchIndexer gathers the changes a transaction makes to links.search
// and writes each touched key once, in key order: a bulk creation of a
// thousand links rewrites a block's value once, not a thousand times.
//
// A change is one number (see searchOp), appended to its workspace's
// list; write sorts each list stably by all but the change's last bit,
// so that the changes to a key come together, in key order, and those to
// one link of it in the order made: the last one says whether the link
// is in the set, as the link's last record says, whatever the set held
// (an update removes a link and adds it again). A change costs 8 bytes
// and an append, where a map from keys to lists of changes took half
// the time of a bulk creation.
type searchIndexer struct {
	ws    []searchOps
	grams []uint32 // reused
	err   error    // a link id too large for searchOp
}

// searchOps is the changes to the keys of a workspace.
type searchOps struct {
	wid uint64
	ops []uint64
}

// A searchOp packs a change: the block of the link id, the trigram, the
// link's low bits, and 1 for an addition, 0 for a removal. A block takes
// the top 27 bits: link ids below 2^39.
const (
	searchOpGram  = searchBlockBits + 1
	searchOpBlock = searchOpGram + 24
	searchOpMaxID = 1<<(64-searchOpBlock+searchBlockBits) - 1
)

// changes appends a change to each trigram of r for link id.
func (ix *searchIndexer) changes(id uint64, r *linkRecord, add uint64) {
	if id > searchOpMaxID {
		ix.err = fmt.Errorf("links.search: link id %d too large to index", id)
		return
	}
	var ws *searchOps
	for i := range ix.ws {
		if ix.ws[i].wid == r.Workspace {
			ws = &ix.ws[i]
			break
		}
	}
	if ws == nil {
		ix.ws = append(ix.ws, searchOps{wid: r.Workspace})
		ws = &ix.ws[len(ix.ws)-1]
	}
	ix.grams = packedTrigrams(ix.grams[:0], searchFields(r))
	base := id>>searchBlockBits<<searchOpBlock | (id&(searchBlockSize-1))<<1 | add
	if n := len(ws.ops) + len(ix.grams); n > cap(ws.ops) {
		// Doubled: append grows a large slice by a quarter, allocating
		// five times what it ends up holding.
		ws.ops = slices.Grow(ws.ops, max(n, 2*cap(ws.ops), 256)-len(ws.ops))
	}
	for _, g := range ix.grams {
		ws.ops = append(ws.ops, base|uint64(g)<<searchOpGram)
	}
}

// add indexes the link id of record r.
func (ix *searchIndexer) add(id uint64, r *linkRecord) { ix.changes(id, r, 1) }

// remove unindexes the link id of record r.
func (ix *searchIndexer) remove(id uint64, r *linkRecord) { ix.changes(id, r, 0) }

// write applies the gathered changes to links.search and forgets them.
func (ix *searchIndexer) write(tx *bolt.Tx) error {
	if err := ix.err; err != nil {
		ix.ws, ix.err = nil, nil
		return err
	}
	if len(ix.ws) == 0 {
		return nil
	}
	slices.SortFunc(ix.ws, func(a, b searchOps) int { return cmp.Compare(a.wid, b.wid) })
	b := tx.Bucket(bucketLinksSearch)
	// New links add to the trigrams of the last block in no order, and
	// the sets grow in place: pages split at bolt's default fill stay
	// fuller (about 67 %) than ones filled up first (about 41 %), which
	// the next insert splits again.
	b.FillPercent = bolt.DefaultFillPercent
	for _, ws := range ix.ws {
		if err := writeSearchOps(b, ws.wid, ws.ops); err != nil {
			return err
		}
	}
	ix.ws = nil
	return nil
}

// writeSearchOps applies the changes ops to the keys of workspace wid.
func writeSearchOps(b *bolt.Bucket, wid uint64, ops []uint64) error {
	radixSortFrom(ops, 1)
	keys := 0
	for i := range ops {
		if i == 0 || ops[i]>>searchOpGram != ops[i-1]>>searchOpGram {
			keys++
		}
	}
	// bolt keeps the keys until the commit.
	mem := make([]byte, keys*searchKeyLen)
	var set searchSet
	for i := 0; i < len(ops); {
		key := mem[:searchKeyLen:searchKeyLen]
		mem = mem[searchKeyLen:]
		binary.BigEndian.PutUint64(key, wid)
		binary.BigEndian.PutUint32(key[8:], uint32(ops[i]>>searchOpBlock))
		g := ops[i] >> searchOpGram
		key[12], key[13], key[14] = byte(g>>16), byte(g>>8), byte(g)
		old := b.Get(key)
		if old != nil {
			if err := decodeSearchSet(old, &set); err != nil {
				return fmt.Errorf("%w at %x", err, key)
			}
		} else {
			set = searchSet{}
		}
		for i < len(ops) && ops[i]>>searchOpGram == g {
			run := ops[i] >> 1 // the key and the link
			low := uint16(run) & (searchBlockSize - 1)
			var last uint64
			for ; i < len(ops) && ops[i]>>1 == run; i++ {
				last = ops[i] & 1
			}
			if last == 1 {
				set.add(low)
			} else {
				set.remove(low)
			}
		}
		// An update that keeps a link's trigrams removes and adds it
		// again: its keys are left as they are, their pages clean.
		v := set.encode()
		if bytes.Equal(v, old) {
			continue
		}
		var err error
		if v == nil {
			err = b.Delete(key)
		} else {
			err = b.Put(key, v)
		}
		if err != nil {
			return fmt.Errorf("index search: %w", err)
		}
	}
	return nil
}

// searchWalk yields, newest first, the links of a workspace that hold
// every trigram of a text: the candidates a search checks. It reads the
// workspace's blocks from the last one down, and in each the sets of the
// trigrams, stopping at the first one missing.
type searchWalk struct {
	b     *bolt.Bucket
	c     *bolt.Cursor
	wid   uint64
	grams []string
	next0 []byte // a key at or past the end of the blocks left to read; nil when done
	set   searchSet
	block uint32
	word  int // the next word of set to read, downwards
	cur   [8]byte
}

// newSearchWalk starts a walk over the links of workspace wid holding
// every trigram of grams (at least one).
func newSearchWalk(tx *bolt.Tx, wid uint64, grams []string) *searchWalk {
	b := tx.Bucket(bucketLinksSearch)
	return &searchWalk{b: b, c: b.Cursor(), wid: wid, grams: grams, word: -1, next0: prefixEnd(itob(wid))}
}

// nextBlock loads into w.set the intersection of the trigrams' sets of
// the next block down that holds them all; false when there is none.
func (w *searchWalk) nextBlock() (bool, error) {
	var s searchSet
	for w.next0 != nil {
		// The last key before next0 names the next block down.
		var k []byte
		if k, _ = w.c.Seek(w.next0); k == nil {
			k, _ = w.c.Last()
		} else {
			k, _ = w.c.Prev()
		}
		if k == nil || len(k) != searchKeyLen || btoi(k[:8]) != w.wid {
			w.next0 = nil
			return false, nil
		}
		_, block, _ := searchKeyParts(k)
		w.next0 = searchKey(w.wid, block, "")[:12]
		found := true
		for i, g := range w.grams {
			v := w.b.Get(searchKey(w.wid, block, g))
			if v == nil {
				found = false
				break
			}
			if i == 0 {
				if err := decodeSearchSet(v, &w.set); err != nil {
					return false, err
				}
				continue
			}
			if err := decodeSearchSet(v, &s); err != nil {
				return false, err
			}
			for j := range w.set {
				w.set[j] &= s[j]
			}
		}
		if found {
			w.block = block
			return true, nil
		}
	}
	return false, nil
}

// next returns the next candidate link id (8 bytes, valid until the next
// call), nil at the end.
func (w *searchWalk) next() ([]byte, error) {
	for {
		for w.word >= 0 {
			if x := w.set[w.word]; x != 0 {
				b := 63 - bits.LeadingZeros64(x)
				w.set[w.word] &^= 1 << b
				id := uint64(w.block)<<searchBlockBits | uint64(w.word*64+b)
				binary.BigEndian.PutUint64(w.cur[:], id)
				return w.cur[:], nil
			}
			w.word--
		}
		ok, err := w.nextBlock()
		if err != nil || !ok {
			return nil, err
		}
		w.word = searchWords - 1
	}
}

// markResumable records how far a job over the links that runs a
// transaction at a time has come, in meta: next, the first key it has not
// done yet, under fromKey; or, once it is done (next nil), doneKey set and
// fromKey gone. It reports whether the job is done.
func markResumable(meta *bolt.Bucket, fromKey, doneKey, next []byte) (bool, error) {
	if next != nil {
		return false, meta.Put(fromKey, cloneBytes(next))
	}
	if err := meta.Delete(fromKey); err != nil {
		return false, err
	}
	return true, meta.Put(doneKey, []byte("1"))
}

// searchBuildBatch is how many links one transaction of the build of the
// search index reads: the memory the build takes is that of one batch.
var searchBuildBatch = 20_000

// buildSearchIndex builds links.search for the links of a data file
// written before it existed, once: meta search_index_v1 records that it
// is built (a new file gets it at once, with no link to index). It reads
// the links in batches, one transaction each, recording after each batch
// the first link id left to index, so that an interrupted build resumes
// where it stopped and a batch is never indexed twice.
func buildSearchIndex(bdb *bolt.DB, log *slog.Logger) error {
	var built bool
	if err := bdb.View(func(tx *bolt.Tx) error {
		built = tx.Bucket(bucketMeta).Get(metaSearchIndex) != nil
		return nil
	}); err != nil || built {
		return err
	}
	start := time.Now()
	total := 0
	for done := false; !done; {
		err := bdb.Update(func(tx *bolt.Tx) error {
			meta := tx.Bucket(bucketMeta)
			var from []byte
			if v := meta.Get(metaSearchIndexFrom); len(v) == 8 {
				from = cloneBytes(v)
			}
			var ix searchIndexer
			n := 0
			c := tx.Bucket(bucketLinks).Cursor()
			k, v := c.First()
			if from != nil {
				k, v = c.Seek(from)
			}
			for ; k != nil && n < searchBuildBatch; k, v = c.Next() {
				var rec linkRecord
				if err := decodeLink(v, &rec); err != nil {
					return fmt.Errorf("link %x: %w", k, err)
				}
				ix.add(btoi(k), &rec)
				n++
			}
			total += n
			if err := ix.write(tx); err != nil {
				return err
			}
			var err error
			done, err = markResumable(meta, metaSearchIndexFrom, metaSearchIndex, k)
			return err
		})
		if err != nil {
			return fmt.Errorf("build the search index: %w", err)
		}
	}
	if total > 0 {
		log.Info("built the search index", "links", total, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}
