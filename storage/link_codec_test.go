package storage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

// codecRecords are link records that between them set every field, at
// the edges of its encoding: empty and long strings (lengths of two
// varint bytes), non-ASCII and characters JSON escapes, times before 1970
// and the zero time, nanoseconds, an update time apart from the creation.
func codecRecords() []linkRecord {
	created := time.Date(2026, 11, 24, 8, 0, 0, 123456789, time.UTC)
	past := time.Date(1969, 7, 20, 20, 17, 40, 999999999, time.UTC)
	long := strings.Repeat("é/", 200)
	return []linkRecord{
		{},
		{Workspace: 1, Alias: "abc", Destination: "https://example.com/", RedirectCode: 302, CreatedAt: created, UpdatedAt: created},
		{Workspace: 1 << 40, Alias: "Ünï\"<>&\u2028", Domain: "go.example.com", Destination: "https://example.com/?a=1&b=<2>#" + long,
			Tags: []string{"red", "", long}, UTMSource: "s", UTMMedium: "m", UTMCampaign: "c", CampaignID: "cmp_1",
			RedirectCode: 308, CreatedAt: created, UpdatedAt: created.Add(time.Nanosecond),
			linkControls: linkControls{
				Password: "$2a$10$hash",
				Rules: []ruleRecord{
					{Device: "mobile", OS: "iOS", Browser: "Safari", Country: "DE", Language: "de", Then: "https://a.example/"},
					{HasQuery: true, QueryName: "ref", QueryValue: "", Then: "https://b.example/"},
					{HasQuery: true, QueryName: "q", QueryValue: long, Then: ""},
					{IP: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("2001:db8::1/128"), netip.MustParsePrefix("0.0.0.0/0")},
						After: &past, Before: &created, Then: "https://c.example/"},
					{HasQuery: true, QueryName: "n", Before: &created, Then: "https://d.example/"},
				},
				Variants: []variantRecord{{Destination: "https://a.example/", Weight: 70}, {Destination: "", Weight: 0}},
				OG:       &ogRecord{Title: "T", Description: long, ImageURL: "https://img.example/i.png"},
			},
			linkLimitsRecord: linkLimitsRecord{ExpiresAt: &past, MaxClicks: 1<<62 + 5, ExpiredURL: "https://example.com/gone", Archived: true, Title: long, Note: long + "\n" + long},
		},
		{Workspace: 2, Alias: "fw", Destination: "https://fw.example/", CreatedAt: created, UpdatedAt: created, ForwardPath: true},
		{Workspace: 3, Alias: "nt", Destination: "https://nt.example/", CreatedAt: created, UpdatedAt: created, linkLimitsRecord: linkLimitsRecord{Note: "one\ntwo"}},
		{Workspace: 2, Alias: "fq", Destination: "https://fq.example/", CreatedAt: created, UpdatedAt: created, ForwardQuery: true, ForwardPath: true, ExternalID: "order-1", Crawlable: true, PublicStats: true,
			linkControls: linkControls{IOS: "https://apps.apple.com/app/id1", Android: "https://play.google.com/store/apps/details?id=x"}},
		{Workspace: 2, Alias: "ia", Destination: "https://ia.example/", CreatedAt: created, UpdatedAt: created, EscapeInApp: true},
		{Workspace: 2, Alias: "rt", Destination: "https://rt.example/", CreatedAt: created, UpdatedAt: created, Retargeting: true, EscapeInApp: true},
		{Workspace: 7, Alias: "z", Destination: "https://z.example/", UpdatedAt: created, linkControls: linkControls{OG: &ogRecord{}},
			linkLimitsRecord: linkLimitsRecord{ExpiresAt: &time.Time{}, MaxClicks: -3}},
	}
}

// TestLinkCodec_RoundTrip checks that a record reads back from the binary
// form as it does from the JSON form of schema version 3, field for
// field, and that the binary form is the smaller.
func TestLinkCodec_RoundTrip(t *testing.T) {
	for i, r := range codecRecords() {
		bin := appendLink(nil, &r)
		var got linkRecord
		if err := decodeLink(bin, &got); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		js, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		var fromJSON linkRecord
		if err := decodeLink(js, &fromJSON); err != nil {
			t.Fatalf("record %d as JSON: %v", i, err)
		}
		if !reflect.DeepEqual(got, fromJSON) {
			t.Errorf("record %d:\nbinary %+v\nJSON   %+v", i, got, fromJSON)
		}
		if len(bin) >= len(js) {
			t.Errorf("record %d: %d bytes binary, %d JSON", i, len(bin), len(js))
		}
		// A record decoded into one that held another keeps nothing of it.
		other := codecRecords()[2]
		if err := decodeLink(bin, &other); err != nil || !reflect.DeepEqual(other, got) {
			t.Errorf("record %d decoded over another: %+v, %v", i, other, err)
		}
	}
}

// TestLinkCodec_Damaged checks that a damaged binary record is an error
// matching errLinkRecord, never a panic or a record read wrong without
// one: every truncation, trailing bytes, unknown flags, an unknown first
// byte, and random bytes changed.
func TestLinkCodec_Damaged(t *testing.T) {
	rec := codecRecords()[2]
	bin := appendLink(nil, &rec)
	wantErr := func(name string, raw []byte) {
		t.Helper()
		var r linkRecord
		if err := decodeLink(raw, &r); !errors.Is(err, errLinkRecord) {
			t.Errorf("%s: %v, want a malformed record", name, err)
		} else if !reflect.DeepEqual(r, linkRecord{}) {
			t.Errorf("%s: the record holds %+v after the error", name, r)
		}
	}
	for n := range len(bin) {
		wantErr("truncated", bin[:n])
	}
	wantErr("trailing byte", append(append([]byte{}, bin...), 0))
	// The first flag past lfAll, whatever its number: refused for being
	// unknown, not for what follows it.
	unknown := binary.AppendUvarint([]byte{linkCodecBinary}, lfAll+1)
	wantErr("unknown flag", append(unknown, 0, 0, 0, 0, 0, 0, 0))
	if err := decodeLink(append(unknown, 0, 0, 0, 0, 0, 0, 0), &linkRecord{}); err == nil || !strings.Contains(err.Error(), "unknown flags") {
		t.Errorf("unknown flag: %v, want an error naming unknown flags", err)
	}
	wantErr("unknown form", append([]byte{0x02}, bin[1:]...))
	wantErr("overlong varint", append([]byte{linkCodecBinary}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f))

	rng := rand.New(rand.NewPCG(13, 4))
	for range 20_000 {
		raw := append([]byte{}, bin...)
		for range 1 + rng.IntN(3) {
			raw[1+rng.IntN(len(raw)-1)] = byte(rng.Uint32())
		}
		var r linkRecord
		if err := decodeLink(raw, &r); err == nil {
			// Some changes leave a readable record (a changed letter):
			// it must write back to exactly those bytes.
			if back := appendLink(nil, &r); string(back) != string(raw) && !sameButTime(back, raw, &r) {
				t.Fatalf("%x read as %+v, which writes %x", raw, r, back)
			}
		} else if !errors.Is(err, errLinkRecord) {
			t.Fatalf("%x: %v", raw, err)
		}
	}
}

// sameButTime reports whether back and raw differ only in how a record
// whose update time equals its creation time says so (the flag, or the
// time written twice): both read as r.
func sameButTime(back, raw []byte, r *linkRecord) bool {
	var a, b linkRecord
	return decodeLink(back, &a) == nil && decodeLink(raw, &b) == nil && reflect.DeepEqual(a, b) && reflect.DeepEqual(a, *r)
}

// FuzzDecodeLink: any bytes of a damaged or crafted data file decode to
// a record or errLinkRecord, never a panic or an allocation past their
// size; what decodes encodes to a canonical binary form that decodes to
// the same record (its encoding again the same bytes).
func FuzzDecodeLink(f *testing.F) {
	for _, r := range codecRecords() {
		f.Add(appendLink(nil, &r))
		js, err := json.Marshal(&r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(js)
	}
	f.Add([]byte{linkCodecBinary})
	f.Add([]byte{linkCodecBinary, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var r linkRecord
		if err := decodeLink(raw, &r); err != nil {
			if (len(raw) == 0 || raw[0] != '{') && !errors.Is(err, errLinkRecord) {
				t.Fatalf("decodeLink(%q): %v, not errLinkRecord", raw, err)
			}
			return
		}
		canon := appendLink(nil, &r)
		var again linkRecord
		if err := decodeLink(canon, &again); err != nil {
			t.Fatalf("the canonical form of %q does not decode: %v", raw, err)
		}
		if got := appendLink(nil, &again); string(got) != string(canon) {
			t.Fatalf("%q: canonical %q encodes again as %q", raw, canon, got)
		}
	})
}
