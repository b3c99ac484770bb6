package analytics

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

func TestVisitorHash(t *testing.T) {
	salt := []byte("0123456789abcdef0123456789abcdef")
	addr := netip.MustParseAddr("81.2.69.142")
	ua := uaCases[0].ua
	h := VisitorHash(salt, addr, ua)
	if got := VisitorHash(salt, addr, ua); got != h {
		t.Fatalf("hash not stable: %x then %x", h, got)
	}
	if got := VisitorHash(append([]byte(nil), salt...), netip.MustParseAddr("::ffff:81.2.69.142"), ua); got != h {
		t.Fatalf("IPv4-mapped address hashes to %x, its IPv4 form to %x", got, h)
	}
	differ := map[string]uint64{
		"salt":         VisitorHash([]byte("another salt of the next day...."), addr, ua),
		"addr":         VisitorHash(salt, netip.MustParseAddr("81.2.69.143"), ua),
		"addr v6":      VisitorHash(salt, netip.MustParseAddr("2001:db8::1"), ua),
		"no addr":      VisitorHash(salt, netip.Addr{}, ua),
		"ua":           VisitorHash(salt, addr, uaCases[1].ua),
		"no ua":        VisitorHash(salt, addr, ""),
		"empty salt":   VisitorHash(nil, addr, ua),
		"ua one extra": VisitorHash(salt, addr, ua+" "),
	}
	seen := map[uint64]string{h: "base"}
	for name, got := range differ {
		if other, ok := seen[got]; ok {
			t.Errorf("%s: hash %x equals that of %s", name, got, other)
		}
		seen[got] = name
	}
}

func TestVisitorHashIsHMAC(t *testing.T) {
	long := strings.Repeat("k", 100) // longer than a SHA-256 block
	for _, salt := range []string{"", "s", "0123456789abcdef0123456789abcdef", strings.Repeat("x", 64), long} {
		for _, addr := range []netip.Addr{{}, netip.MustParseAddr("81.2.69.142"), netip.MustParseAddr("2001:db8::1")} {
			for _, ua := range []string{"", "curl/8.5.0", uaCases[0].ua, strings.Repeat("u", 2*MaxUALength)} {
				a := addr.As16()
				mac := hmac.New(sha256.New, []byte(salt))
				mac.Write(a[:])
				mac.Write([]byte{0})
				mac.Write([]byte(truncateUA(ua)))
				want := binary.BigEndian.Uint64(mac.Sum(nil))
				if got := VisitorHash([]byte(salt), addr, ua); got != want {
					t.Fatalf("VisitorHash(%q, %v, %.20q) = %x, HMAC-SHA256 says %x", salt, addr, ua, got, want)
				}
			}
		}
	}
}

// TestVisitorHashKnownAnswers pins the hashes: visitor records of the last
// days are kept in the data file, so a restart under a new version must
// hash a returning visitor as before, or the day's unique visitors would
// count them twice.
func TestVisitorHashKnownAnswers(t *testing.T) {
	tests := []struct {
		salt string
		addr netip.Addr
		ua   string
		want uint64
	}{
		{"0123456789abcdef0123456789abcdef", netip.MustParseAddr("81.2.69.142"), uaCases[0].ua, 0x4969041698e24ad9},
		{"0123456789abcdef0123456789abcdef", netip.MustParseAddr("2001:db8::1"), "curl/8.5.0", 0x9520ecc604d5c936},
		{"", netip.Addr{}, "", 0x5dbe24f3fe0e2454},
		{strings.Repeat("k", 100), netip.MustParseAddr("81.2.69.142"), strings.Repeat("u", 2*MaxUALength), 0x50fd7722cb332321},
	}
	for _, tt := range tests {
		if got := VisitorHash([]byte(tt.salt), tt.addr, tt.ua); got != tt.want {
			t.Errorf("VisitorHash(%.10q, %v, %.20q) = %#016x, want %#016x", tt.salt, tt.addr, tt.ua, got, tt.want)
		}
	}
}

// TestVisitorHashConcurrentSalts hashes under two salts at once, as at the
// turn of a UTC day, and checks every hash against crypto/hmac.
func TestVisitorHashConcurrentSalts(t *testing.T) {
	salts := [][]byte{[]byte("salt of one day"), []byte("salt of the next day")}
	addr := netip.MustParseAddr("81.2.69.142")
	want := make([]uint64, len(salts))
	for i, salt := range salts {
		a := addr.As16()
		mac := hmac.New(sha256.New, salt)
		mac.Write(a[:])
		mac.Write([]byte{0})
		mac.Write([]byte("curl/8.5.0"))
		want[i] = binary.BigEndian.Uint64(mac.Sum(nil))
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := (g + i) % len(salts)
				if got := VisitorHash(salts[k], addr, "curl/8.5.0"); got != want[k] {
					t.Errorf("salt %d: hash %x, want %x", k, got, want[k])
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkVisitorHash(b *testing.B) {
	salt := []byte("0123456789abcdef0123456789abcdef")
	addr := netip.MustParseAddr("81.2.69.142")
	ua := uaCases[0].ua
	b.ReportAllocs()
	for b.Loop() {
		VisitorHash(salt, addr, ua)
	}
}
