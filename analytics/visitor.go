package analytics

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"net/netip"
	"sync"
)

// VisitorHash returns the first 8 bytes, big-endian, of
// HMAC-SHA256(salt, addr || 0 || ua), where addr is the 16-byte form of the
// address (IPv4 as IPv4-mapped, so both spellings of one client agree; all
// zeros for an invalid address) and ua is cut to MaxUALength.
//
// The salt is a random secret of one UTC day (link.ClickService.DailySalt),
// deleted when its day is pruned. While it exists, whoever holds it can
// test whether a given address and user agent made a click; once it is
// deleted, the hash cannot be linked back to an address, not even by
// trying all 2^32 IPv4 addresses, since the key is gone. Only the hash is
// stored. 64 bits keep collisions among a day's visitors negligible.
func VisitorHash(salt []byte, addr netip.Addr, ua string) uint64 {
	m := visitorMACs.Get().(*visitorMAC)
	defer visitorMACs.Put(m)
	if m.mac == nil || !bytes.Equal(m.salt, salt) {
		m.rekey(salt)
	}
	return m.sum(addr, ua)
}

// visitorMACs holds keyed HMACs with their buffers for VisitorHash: a
// click's hash is then one HMAC over the message with no allocation, where
// hmac.New would allocate and hash the key's pads on every click. All
// clicks of a day share a salt, so a MAC is keyed again about once a day.
var visitorMACs = sync.Pool{New: func() any { return new(visitorMAC) }}

// visitorMAC is an HMAC-SHA256 keyed with salt and the buffers of one
// VisitorHash.
type visitorMAC struct {
	salt []byte
	mac  hash.Hash
	msg  [16 + 1 + MaxUALength]byte
	out  [sha256.Size]byte
}

func (m *visitorMAC) rekey(salt []byte) {
	m.salt = bytes.Clone(salt)
	m.mac = hmac.New(sha256.New, m.salt)
}

func (m *visitorMAC) sum(addr netip.Addr, ua string) uint64 {
	a := addr.As16()
	copy(m.msg[:], a[:])
	m.msg[16] = 0
	n := 17 + copy(m.msg[17:], truncateUA(ua))
	m.mac.Reset()
	m.mac.Write(m.msg[:n])
	return binary.BigEndian.Uint64(m.mac.Sum(m.out[:0]))
}
