package storage

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

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
