package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	bolt "go.etcd.io/bbolt"
)

// The hosts of referrers, in clicks.hosts, per workspace and UTC day:
//
//	day(4) + workspace id(8) + 0x00 + id(4)   → host
//	day(4) + workspace id(8) + 0x01 + host    → uvarint(id)
//
// ids count from 0 in each workspace and day. Day first, so a prune
// deletes whole days from the front. A prune deletes a day's entries in
// several transactions, and clicks arriving late for that day in between
// must not find half a dictionary: the days before hostsFrom (in the meta
// bucket), which a prune moves on before it deletes anything, are neither
// read nor written here, and their clicks keep the host inline. A workspace keeps at most
// maxHostsPerDay hosts a day: a flood of distinct hosts stops there, and
// the further hosts of the day are kept inline when they are short (at most
// maxInlineHost bytes) and as otherReferrer when not.
const (
	maxHostsPerDay = 1024
	maxInlineHost  = 32
	otherReferrer  = "(other)"
)

// hostTable finds and assigns the host ids of a batch in a write
// transaction.
type hostTable struct {
	b    *bolt.Bucket
	from uint32 // the first day with a dictionary; see hostsFrom
	mem  *arena
	refs map[hostKey]rawReferrer
	next map[[12]byte]uint64 // day + workspace → next id
}

type hostKey struct {
	day  uint32
	ws   uint64
	host string
}

func newHostTable(tx *bolt.Tx, mem *arena) *hostTable {
	return &hostTable{b: tx.Bucket(bucketClicksHosts), from: hostsFrom(tx), mem: mem, refs: map[hostKey]rawReferrer{}, next: map[[12]byte]uint64{}}
}

// referrer returns how a raw click of the workspace on the day stores the
// referrer host.
func (t *hostTable) referrer(day uint32, ws uint64, host string) (rawReferrer, error) {
	if host == directReferrer || day < t.from {
		return rawReferrer{inline: host}, nil
	}
	hk := hostKey{day, ws, host}
	if r, ok := t.refs[hk]; ok {
		return r, nil
	}
	var prefix [12]byte
	binary.BigEndian.PutUint32(prefix[:], day)
	binary.BigEndian.PutUint64(prefix[4:], ws)
	fwd := t.mem.alloc(13 + len(host))
	copy(fwd, prefix[:])
	fwd[12] = 1
	copy(fwd[13:], host)
	r, err := t.lookup(prefix, fwd, host)
	if err != nil {
		return r, err
	}
	t.refs[hk] = r
	return r, nil
}

func (t *hostTable) lookup(prefix [12]byte, fwd []byte, host string) (rawReferrer, error) {
	if v := t.b.Get(fwd); v != nil {
		id, n := binary.Uvarint(v)
		if n <= 0 {
			return rawReferrer{}, fmt.Errorf("host %x: malformed id", fwd)
		}
		return rawReferrer{ref: true, id: id}, nil
	}
	next, ok := t.next[prefix]
	if !ok {
		next = t.count(prefix)
	}
	if next >= maxHostsPerDay {
		t.next[prefix] = next
		if len(host) <= maxInlineHost {
			return rawReferrer{inline: host}, nil
		}
		return rawReferrer{inline: otherReferrer}, nil
	}
	rev := t.mem.alloc(17)
	copy(rev, prefix[:])
	rev[12] = 0
	binary.BigEndian.PutUint32(rev[13:], uint32(next))
	if err := t.b.Put(rev, t.mem.copy([]byte(host))); err != nil {
		return rawReferrer{}, fmt.Errorf("put host: %w", err)
	}
	if err := t.b.Put(fwd, binary.AppendUvarint(t.mem.alloc(binary.MaxVarintLen64)[:0], next)); err != nil {
		return rawReferrer{}, fmt.Errorf("put host: %w", err)
	}
	t.next[prefix] = next + 1
	return rawReferrer{ref: true, id: next}, nil
}

// count returns the number of hosts of a workspace and day: one more than
// the last id.
func (t *hostTable) count(prefix [12]byte) uint64 {
	c := t.b.Cursor()
	end := append(prefix[:], 1)
	k, _ := c.Seek(end)
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	if len(k) != 17 || !bytes.HasPrefix(k, prefix[:]) || k[12] != 0 {
		return 0
	}
	return uint64(binary.BigEndian.Uint32(k[13:])) + 1
}

// hostOf returns the host of an id in a workspace and day.
func hostOf(b *bolt.Bucket, day uint32, ws, id uint64) (string, error) {
	var k [17]byte
	binary.BigEndian.PutUint32(k[:], day)
	binary.BigEndian.PutUint64(k[4:], ws)
	binary.BigEndian.PutUint32(k[13:], uint32(id))
	v := b.Get(k[:])
	if v == nil || id > math.MaxUint32 {
		return "", fmt.Errorf("raw click: no host %d of workspace %d on day %d", id, ws, day)
	}
	return string(v), nil
}
