// Package boltpage reads the structure of a bbolt file (format version 2)
// directly, through ReadAt and never a memory map, checking every offset
// before use. bbolt itself trusts the file: on a truncated file it maps
// pages past the end (a fatal SIGBUS or SIGSEGV, not a panic), and on
// damaged pages it indexes out of bounds. Reading the structure here first
// turns all of that into a list of problems.
//
// Open reads and checks the header (meta) pages; File.Walk then follows
// the page trees of every bucket and the free-page list. The package knows
// the bbolt format only, nothing of the buckets a program keeps in it.
package boltpage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	pageHeaderSize = 16 // id(8) flags(2) count(2) overflow(4)
	elementSize    = 16 // branch: pos(4) ksize(4) pgid(8); leaf: flags(4) pos(4) ksize(4) vsize(4)
	metaSize       = 56 // the meta fields the checksum covers
	inBucketSize   = 16 // root pgid(8) sequence(8)

	pageBranch   = 0x01
	pageLeaf     = 0x02
	pageMeta     = 0x04
	pageFreelist = 0x10

	leafBucket = 0x01 // a leaf element that is a nested bucket

	noFreelist = ^uint64(0)
)

// MaxProblems bounds the problems one inspection collects.
const MaxProblems = 50

var byteOrder = binary.NativeEndian // bbolt writes its structs as they are in memory

// boltMeta is the part of a meta page the inspection uses.
type boltMeta struct {
	pageSize uint32
	root     uint64 // the root bucket's page
	freelist uint64
	pgid     uint64 // high-water mark: pages [0, pgid) are in use or free
	txid     uint64
}

// parseMeta reads the meta page in buf (starting at its page header).
func parseMeta(buf []byte) (boltMeta, error) {
	if len(buf) < pageHeaderSize+metaSize+8 {
		return boltMeta{}, errors.New("too short")
	}
	m := buf[pageHeaderSize:]
	if byteOrder.Uint32(m[0:]) != boltMagic {
		return boltMeta{}, errors.New("not a bbolt meta page")
	}
	if v := byteOrder.Uint32(m[4:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("format version %d, not %d", v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:metaSize])
	if h.Sum64() != byteOrder.Uint64(m[metaSize:]) {
		return boltMeta{}, errors.New("checksum mismatch")
	}
	meta := boltMeta{
		pageSize: byteOrder.Uint32(m[8:]),
		root:     byteOrder.Uint64(m[16:]),
		freelist: byteOrder.Uint64(m[32:]),
		pgid:     byteOrder.Uint64(m[40:]),
		txid:     byteOrder.Uint64(m[48:]),
	}
	if ps := meta.pageSize; ps < 1024 || ps > 1<<24 || ps&(ps-1) != 0 {
		return boltMeta{}, fmt.Errorf("impossible page size %d", ps)
	}
	return meta, nil
}

// File is a bbolt file opened for inspection by Open.
type File struct {
	f        *os.File
	size     int64
	meta     boltMeta
	pageSize int64
	// headerDamage says which header page is damaged when the file opens
	// from the other one; empty when both are whole.
	headerDamage string
}

// Damage is what an inspection found wrong: Summary is short enough for
// one log line, Problems lists every finding (at most MaxProblems, and a
// line saying more were not listed).
type Damage struct {
	Summary  string
	Problems []string
}

func (d *Damage) add(format string, args ...any) {
	if len(d.Problems) < MaxProblems {
		d.Problems = append(d.Problems, fmt.Sprintf(format, args...))
	} else if len(d.Problems) == MaxProblems {
		d.Problems = append(d.Problems, "(more problems not listed)")
	}
	if d.Summary == "" {
		d.Summary = d.Problems[0]
	}
}

// Open reads the meta pages of the file at path and checks that the file
// holds every page the newest valid one records. It returns a Damage (and
// no file) when the file cannot be a whole bbolt file, and an error when
// the file cannot be read at all.
func Open(path string) (*File, *Damage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	bf := &File{f: f, size: info.Size()}
	if d := bf.readMeta(); d != nil {
		f.Close()
		return nil, d, nil
	}
	return bf, nil, nil
}

// Close closes the file.
func (bf *File) Close() error { return bf.f.Close() }

// PageSize is the page size the file's header records.
func (bf *File) PageSize() int { return int(bf.meta.pageSize) }

// Pages is the file's high-water mark: the pages in use or free.
func (bf *File) Pages() uint64 { return bf.meta.pgid }

// HeaderDamage says which header page is damaged when the file opened
// from the other one, and what may have been lost; empty when both are
// whole.
func (bf *File) HeaderDamage() string { return bf.headerDamage }

// readMeta picks the meta page bbolt would use: the valid one with the
// higher transaction id.
func (bf *File) readMeta() *Damage {
	d := &Damage{}
	if bf.size == 0 {
		d.add("the file is empty (0 bytes)")
		return d
	}
	h0, h1 := bf.readHeaderPages()
	meta0, err0, meta1, err1 := h0.meta, h0.err, h1.meta, h1.err
	switch {
	case err0 != nil && err1 != nil:
		d.add("no valid header page: not a linkbolt data file, or both header pages are damaged (first: %v; second: %v)", err0, err1)
		return d
	case err0 != nil:
		bf.meta = meta1
	case err1 != nil || meta0.txid >= meta1.txid:
		bf.meta = meta0
	default:
		bf.meta = meta1
	}
	bf.noteHeaderDamage(err0, err1)
	if err0 == nil && err1 == nil && meta0.pageSize != meta1.pageSize {
		d.add("the header pages disagree on the page size (%d and %d)", meta0.pageSize, meta1.pageSize)
		return d
	}
	bf.pageSize = int64(bf.meta.pageSize)
	bf.checkMetaBounds(d)
	if len(d.Problems) > 0 {
		if bf.headerDamage != "" {
			d.add("%s", bf.headerDamage)
		}
		return d
	}
	return nil
}

// headerPage is a meta page as read, or what is wrong with it.
type headerPage struct {
	meta boltMeta
	err  error
}

// readHeaderPages reads both meta pages.
func (bf *File) readHeaderPages() (first, second headerPage) {
	buf := make([]byte, 4096)
	n, _ := bf.f.ReadAt(buf, 0)
	meta0, err0 := parseMeta(buf[:n])
	// The second meta page starts one page in; without the first meta
	// the page size is unknown, so try each size bbolt could have used.
	sizes := []int64{int64(meta0.pageSize)}
	if err0 != nil {
		sizes = sizes[:0]
		for ps := int64(1024); ps <= 1<<24; ps <<= 1 {
			sizes = append(sizes, ps)
		}
	}
	var meta1 boltMeta
	err1 := errors.New("not found")
	for _, ps := range sizes {
		if ps >= bf.size {
			break
		}
		n, _ := bf.f.ReadAt(buf, ps)
		if m, err := parseMeta(buf[:n]); err == nil && int64(m.pageSize) == ps {
			meta1, err1 = m, nil
			break
		} else if err0 == nil {
			err1 = err
		}
	}
	return headerPage{meta0, err0}, headerPage{meta1, err1}
}

// noteHeaderDamage sets bf.headerDamage when one header page is damaged.
// bbolt then opens from the other without a word. That is right after a
// crash while it wrote the header of a transaction that never finished,
// but the damaged page may as well have held the last committed
// transaction, which is then lost: the page's own transaction id is as
// unreadable as the rest of it.
func (bf *File) noteHeaderDamage(err0, err1 error) {
	if err0 == nil && err1 == nil {
		return
	}
	bad, err := 0, err0
	if err0 == nil {
		bad, err = 1, err1
	}
	bf.headerDamage = fmt.Sprintf("header page %d is damaged (%v): the file opens from header page %d "+
		"(transaction %d), and the last transaction may be lost if the damaged page held a later one",
		bad, err, 1-bad, bf.meta.txid)
}

// checkMetaBounds adds to d what is impossible in the chosen meta page:
// a page count the file does not hold, a root or free-page list outside
// the file.
func (bf *File) checkMetaBounds(d *Damage) {
	m := bf.meta
	if want := int64(m.pgid) * bf.pageSize; m.pgid < 3 || uint64(want)/uint64(bf.pageSize) != m.pgid {
		d.add("the header records an impossible page count (%d)", m.pgid)
	} else if bf.size < want {
		d.add("the file is truncated: %d bytes, but its header records %d pages of %d bytes (%d bytes)",
			bf.size, m.pgid, m.pageSize, want)
	} else if m.root < 2 || m.root >= m.pgid {
		d.add("the root page %d is outside the file's %d pages", m.root, m.pgid)
	} else if m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.pgid) {
		d.add("the free-page list at page %d is outside the file's %d pages", m.freelist, m.pgid)
	}
}

// readAt reads exactly len(buf) bytes at off.
func (bf *File) readAt(buf []byte, off int64) error {
	_, err := bf.f.ReadAt(buf, off)
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
