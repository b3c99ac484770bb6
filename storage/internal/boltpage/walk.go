package boltpage

// This file walks the page trees of a bbolt file opened by Open
// (file.go): every offset is checked before it is read.

// pageHeader is the header every page starts with.
type pageHeader struct {
	id       uint64
	flags    uint16
	count    uint16
	overflow uint32
}

func parsePageHeader(b []byte) pageHeader {
	return pageHeader{
		id:       byteOrder.Uint64(b[0:]),
		flags:    byteOrder.Uint16(b[8:]),
		count:    byteOrder.Uint16(b[10:]),
		overflow: byteOrder.Uint32(b[12:]),
	}
}

// pageWalk walks the page tree of a File. With leaves false (the
// quick walk of every start) it reads each bucket's root page, its branch
// pages and its first leaf, and the root bucket's leaves (which hold the
// buckets): about one page in a hundred of a big file, every page of a
// small one. With leaves true it reads every page in use
// and the free-page list, and finds pages that are neither.
type pageWalk struct {
	bf     *File
	leaves bool
	d      Damage
	seen   []uint64 // bitset of pages reached
	buf    []byte
	pages  int // pages reached
}

// Walk inspects the structure and returns what is wrong, or nil. With
// leaves false it reads each bucket's root, branch pages and first leaf
// (the quick walk of a start); with leaves true every page in use and the
// free-page list, and finds pages that are neither (see pageWalk).
func (bf *File) Walk(leaves bool) *Damage {
	w := &pageWalk{bf: bf, leaves: leaves, seen: make([]uint64, (bf.meta.pgid+63)/64)}
	w.mark(0, "header page")
	w.mark(1, "header page")
	w.freelist()
	w.tree(bf.meta.root, "the root bucket", true, 0)
	if leaves && bf.meta.freelist != noFreelist && len(w.d.Problems) == 0 {
		lost := 0
		for id := uint64(2); id < bf.meta.pgid; id++ {
			if !w.isSeen(id) {
				if lost == 0 {
					w.d.add("page %d is neither in use nor free", id)
				}
				lost++
			}
		}
		if lost > 1 {
			w.d.add("%d pages in all are neither in use nor free", lost)
		}
	}
	if len(w.d.Problems) == 0 {
		return nil
	}
	return &w.d
}

func (w *pageWalk) isSeen(id uint64) bool { return w.seen[id/64]&(1<<(id%64)) != 0 }

// mark records page id as reached and reports a page reached twice.
func (w *pageWalk) mark(id uint64, what string) bool {
	if w.isSeen(id) {
		w.d.add("page %d (%s) is used twice", id, what)
		return false
	}
	w.seen[id/64] |= 1 << (id % 64)
	w.pages++
	return true
}

// page reads page id and its overflow pages, checking its header.
func (w *pageWalk) page(id uint64, what string) ([]byte, pageHeader, bool) {
	bf := w.bf
	if id < 2 || id >= bf.meta.pgid {
		w.d.add("%s points at page %d, outside the file's %d pages", what, id, bf.meta.pgid)
		return nil, pageHeader{}, false
	}
	if len(w.buf) < int(bf.pageSize) {
		w.buf = make([]byte, bf.pageSize)
	}
	if err := bf.readAt(w.buf[:bf.pageSize], int64(id)*bf.pageSize); err != nil {
		w.d.add("page %d (%s): %v", id, what, err)
		return nil, pageHeader{}, false
	}
	h := parsePageHeader(w.buf)
	if h.id != id {
		w.d.add("page %d (%s) is overwritten: it calls itself page %d", id, what, h.id)
		return nil, h, false
	}
	if uint64(h.overflow) >= bf.meta.pgid-id {
		w.d.add("page %d (%s) runs %d pages past the end of the file", id, what, h.overflow)
		return nil, h, false
	}
	for i := uint64(0); i <= uint64(h.overflow); i++ {
		if !w.mark(id+i, what) {
			return nil, h, false
		}
	}
	span := (1 + int64(h.overflow)) * bf.pageSize
	if int64(len(w.buf)) < span {
		nb := make([]byte, span)
		copy(nb, w.buf[:bf.pageSize])
		w.buf = nb
	}
	b := w.buf[:span]
	if h.overflow > 0 {
		if err := bf.readAt(b[bf.pageSize:], int64(id)*bf.pageSize+bf.pageSize); err != nil {
			w.d.add("page %d (%s): %v", id, what, err)
			return nil, h, false
		}
	}
	return b, h, true
}

// freelist checks the free-page list and marks the free pages.
func (w *pageWalk) freelist() {
	id := w.bf.meta.freelist
	if id == noFreelist {
		return
	}
	b, h, ok := w.page(id, "the free-page list")
	if !ok {
		return
	}
	if h.flags != pageFreelist {
		w.d.add("page %d should hold the free-page list but has type %#x", id, h.flags)
		return
	}
	start, count := pageHeaderSize, uint64(h.count)
	if count == 0xFFFF {
		if len(b) < pageHeaderSize+8 {
			w.d.add("the free-page list at page %d is cut short", id)
			return
		}
		count = byteOrder.Uint64(b[pageHeaderSize:])
		start += 8
	}
	if count > uint64(len(b)-start)/8 {
		w.d.add("the free-page list at page %d records %d pages, more than it can hold", id, count)
		return
	}
	if !w.leaves {
		// Free page ids out of range would make bbolt allocate outside
		// the file; checking them is cheap.
		for i := uint64(0); i < count; i++ {
			if p := byteOrder.Uint64(b[start+int(i)*8:]); p < 2 || p >= w.bf.meta.pgid {
				w.d.add("the free-page list records page %d, outside the file's %d pages", p, w.bf.meta.pgid)
				return
			}
		}
		return
	}
	ids := append([]byte(nil), b[start:start+int(count)*8]...)
	for i := 0; i < len(ids); i += 8 {
		p := byteOrder.Uint64(ids[i:])
		if p < 2 || p >= w.bf.meta.pgid {
			w.d.add("the free-page list records page %d, outside the file's %d pages", p, w.bf.meta.pgid)
			return
		}
		w.mark(p, "free")
	}
}

// tree walks the pages of one bucket from its root page.
func (w *pageWalk) tree(root uint64, what string, buckets bool, depth int) {
	leafDepth := -1
	w.subtree(root, what, buckets, depth, depth, &leafDepth)
}

// subtree walks the pages under page id, at level of its bucket's tree,
// and returns the page's type (0 when it is damaged). buckets says
// whether its leaves may hold buckets (read them even in a quick walk).
// bbolt keeps every leaf of a tree at the same level: once the walk has
// read one leaf, *leafDepth holds that level, and a quick walk only checks
// that the other leaves lie inside the file.
func (w *pageWalk) subtree(id uint64, what string, buckets bool, level, depth int, leafDepth *int) uint16 {
	if len(w.d.Problems) >= MaxProblems {
		return 0
	}
	if depth > 64 {
		w.d.add("%s is deeper than any bbolt tree at page %d", what, id)
		return 0
	}
	b, h, ok := w.page(id, what)
	if !ok {
		return 0
	}
	next, ok := w.elements(b, h, id, what)
	if !ok {
		return 0
	}
	switch h.flags {
	case pageBranch:
		for _, child := range next {
			if level+1 == *leafDepth && !w.leaves && !buckets {
				if child < 2 || child >= w.bf.meta.pgid {
					w.d.add("%s points at page %d, outside the file's %d pages", what, child, w.bf.meta.pgid)
				}
				continue
			}
			if typ := w.subtree(child, what, buckets, level+1, depth+1, leafDepth); typ == pageLeaf && *leafDepth < 0 {
				*leafDepth = level + 1
			}
		}
	case pageLeaf:
		for _, root := range next {
			w.tree(root, "a nested bucket", w.leaves, depth+1)
		}
	}
	return h.flags
}

// elements checks the elements of a branch or leaf page and returns the
// pages they lead to: a branch's children, or the root pages of the
// buckets a leaf holds. b is copied first: walking on reuses the buffer.
func (w *pageWalk) elements(b []byte, h pageHeader, id uint64, what string) ([]uint64, bool) {
	if h.flags != pageBranch && h.flags != pageLeaf {
		w.d.add("page %d (%s) is overwritten: type %#x is not a tree page", id, what, h.flags)
		return nil, false
	}
	n := int(h.count)
	if pageHeaderSize+n*elementSize > len(b) {
		w.d.add("page %d (%s) records %d elements, more than it can hold", id, what, n)
		return nil, false
	}
	var next []uint64
	for i := 0; i < n; i++ {
		off := pageHeaderSize + i*elementSize
		e := b[off : off+elementSize]
		var pos, ksize, vsize uint64
		if h.flags == pageBranch {
			pos, ksize = uint64(byteOrder.Uint32(e[0:])), uint64(byteOrder.Uint32(e[4:]))
		} else {
			pos, ksize, vsize = uint64(byteOrder.Uint32(e[4:])), uint64(byteOrder.Uint32(e[8:])), uint64(byteOrder.Uint32(e[12:]))
		}
		if end := uint64(off) + pos + ksize + vsize; end > uint64(len(b)) || ksize == 0 {
			w.d.add("page %d (%s): element %d lies outside the page", id, what, i)
			return nil, false
		}
		if h.flags == pageBranch {
			next = append(next, byteOrder.Uint64(e[8:]))
			continue
		}
		if byteOrder.Uint32(e[0:])&leafBucket == 0 {
			continue
		}
		v := b[uint64(off)+pos+ksize:][:vsize]
		if vsize < inBucketSize {
			w.d.add("page %d (%s): bucket %q has a %d-byte header", id, what, b[uint64(off)+pos:][:ksize], vsize)
			return nil, false
		}
		if root := byteOrder.Uint64(v); root != 0 {
			next = append(next, root)
		} else if !w.inline(v[inBucketSize:]) {
			w.d.add("page %d (%s): the small bucket %q stored in it is damaged", id, what, b[uint64(off)+pos:][:ksize])
			return nil, false
		}
	}
	return next, true
}

// inline checks a bucket small enough to be stored inside its parent's
// leaf: a leaf page with no buckets of its own.
func (w *pageWalk) inline(b []byte) bool {
	if len(b) < pageHeaderSize {
		return false
	}
	h := parsePageHeader(b)
	if h.flags != pageLeaf || pageHeaderSize+int(h.count)*elementSize > len(b) {
		return false
	}
	for i := 0; i < int(h.count); i++ {
		off := pageHeaderSize + i*elementSize
		e := b[off:]
		pos, ksize, vsize := uint64(byteOrder.Uint32(e[4:])), uint64(byteOrder.Uint32(e[8:])), uint64(byteOrder.Uint32(e[12:]))
		if uint64(off)+pos+ksize+vsize > uint64(len(b)) || byteOrder.Uint32(e[0:])&leafBucket != 0 {
			return false
		}
	}
	return true
}
