package storage

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// oneClickCase is one click merged into an empty period blob.
type oneClickCase struct {
	name    string
	daily   bool
	add     periodHeader
	link    uint64          // the links value (0: a link's own blob)
	values  [numDims]string // the string values; "" leaves a dimension out
	want3   bool            // written in version 3
	wantLen int             // its length, when known
	deltas  [numDims][]dimDelta
	vals    [numDims][]string
}

func oneClickCases() []oneClickCase {
	plain := [numDims]string{dimReferrers: "direct", dimCountries: "unknown", dimDevices: "bot", dimBrowsers: "unknown", dimOS: "unknown"}
	browser := [numDims]string{dimReferrers: "www.google.com", dimCountries: "DE", dimDevices: "desktop", dimBrowsers: "Chrome", dimOS: "Windows"}
	variant := browser
	variant[dimVariants] = "2"
	long := browser
	long[dimReferrers] = strings.Repeat("r", 127)
	tooLong := browser
	tooLong[dimReferrers] = strings.Repeat("r", 128)
	cs := []oneClickCase{
		{name: "hourly bot, no headers", add: periodHeader{clicks: 1, bots: 1}, values: plain, want3: true, wantLen: 9},
		{name: "daily bot visitor", daily: true, add: periodHeader{clicks: 1, bots: 1, visitors: 1}, values: plain, want3: true, wantLen: 9},
		{name: "daily human", daily: true, add: periodHeader{clicks: 1, visitors: 1, humans: 1}, values: browser, want3: true},
		{name: "daily without a visitor (import)", daily: true, add: periodHeader{clicks: 1}, values: browser, want3: true},
		{name: "workspace hour, with its link", add: periodHeader{clicks: 1}, link: 1 << 40, values: browser, want3: true},
		{name: "a variant", add: periodHeader{clicks: 1}, values: variant, want3: true},
		{name: "a value of 127 bytes", add: periodHeader{clicks: 1}, values: long, want3: true},
		{name: "a value of 128 bytes", add: periodHeader{clicks: 1}, values: tooLong},
		{name: "two clicks", add: periodHeader{clicks: 2}, values: browser},
		{name: "two visitors", daily: true, add: periodHeader{clicks: 1, visitors: 2}, values: browser},
	}
	for i := range cs {
		c := &cs[i]
		n := c.add.clicks
		if c.link != 0 {
			c.deltas[dimLinks] = []dimDelta{{v: c.link, human: n - c.add.bots, bot: c.add.bots}}
		}
		for d := dimReferrers; d < numDims; d++ {
			if c.values[d] != "" {
				c.vals[d] = []string{c.values[d]}
				c.deltas[d] = []dimDelta{{v: 0, human: n - c.add.bots, bot: c.add.bots}}
			}
		}
	}
	return cs
}

// TestOneClickBlob: a blob of one click is written in version 3 when its
// values allow, and reads exactly as the version 2 blob it stands for:
// the same header, the same sections byte for byte; the next click of
// the period writes the same version 2 blob from either.
func TestOneClickBlob(t *testing.T) {
	for _, c := range oneClickCases() {
		t.Run(c.name, func(t *testing.T) {
			var scratch mergeScratch
			blob, err := mergePeriodBlob(nil, c.daily, c.add, &c.deltas, &c.vals, &scratch)
			if err != nil {
				t.Fatal(err)
			}
			blob = slices.Clone(blob)
			v2 := slices.Clone(scratch.out)
			if got := len(blob) > 1 && blob[1] == blobOneClick; got != c.want3 {
				t.Fatalf("version 3: %v, want %v (%q)", got, c.want3, blob)
			}
			if c.wantLen != 0 && len(blob) != c.wantLen {
				t.Errorf("%d bytes, want %d: %q", len(blob), c.wantLen, blob)
			}
			if !c.want3 {
				return
			}
			h3, s3, err := parsePeriodBlob(blob, c.daily)
			if err != nil {
				t.Fatal(err)
			}
			h2, s2, err := parsePeriodBlob(v2, c.daily)
			if err != nil {
				t.Fatal(err)
			}
			if h3 != h2 || !sameSections(&s3, &s2) {
				t.Fatalf("version 3 reads\n%+v %+v\nversion 2\n%+v %+v", h3, s3, h2, s2)
			}
			if clicks, bots, err := periodClicks(blob); err != nil || clicks != h2.clicks || bots != h2.bots {
				t.Fatalf("periodClicks = %d, %d, %v; want %d, %d", clicks, bots, err, h2.clicks, h2.bots)
			}
			// The next click: a human's, on the same values.
			next := c
			next.add = periodHeader{clicks: 1, visitors: 1, humans: 1}
			for d := range numDims {
				for j := range next.deltas[d] {
					next.deltas[d][j] = dimDelta{v: next.deltas[d][j].v, human: 1}
				}
			}
			from3, err := mergePeriodBlob(blob, c.daily, next.add, &next.deltas, &next.vals, &scratch)
			if err != nil {
				t.Fatal(err)
			}
			from3 = slices.Clone(from3)
			from2, err := mergePeriodBlob(v2, c.daily, next.add, &next.deltas, &next.vals, &scratch)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(from3, from2) || from3[1] != blobVersion {
				t.Fatalf("the next click from version 3 wrote\n%q\nfrom version 2\n%q", from3, from2)
			}
		})
	}
}

// TestOneClickBlob_Damaged: every truncation of a version 3 blob is an
// error; random changes to its bytes give an error or a blob whose
// entries read back and whose totals periodClicks reads alike; never a
// panic.
func TestOneClickBlob_Damaged(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	for _, c := range oneClickCases() {
		if !c.want3 {
			continue
		}
		var scratch mergeScratch
		blob, err := mergePeriodBlob(nil, c.daily, c.add, &c.deltas, &c.vals, &scratch)
		if err != nil {
			t.Fatal(err)
		}
		blob = slices.Clone(blob)
		for n := 2; n < len(blob); n++ {
			if _, _, err := parsePeriodBlob(blob[:n], c.daily); err == nil {
				t.Errorf("%s: truncated to %d bytes, no error", c.name, n)
			}
		}
		if _, _, err := parsePeriodBlob(append(slices.Clone(blob), 0), c.daily); err == nil {
			t.Errorf("%s: a trailing byte, no error", c.name)
		}
		for range 3000 {
			bad := slices.Clone(blob)
			for range 1 + rnd.IntN(3) {
				bad[2+rnd.IntN(len(bad)-2)] = byte(rnd.IntN(256))
			}
			h, sections, err := parsePeriodBlob(bad, c.daily)
			if err != nil {
				continue
			}
			if clicks, bots, err := periodClicks(bad); err != nil || clicks != h.clicks || bots != h.bots {
				t.Fatalf("%s: %q reads as %+v, its totals as %d, %d, %v", c.name, bad, h, clicks, bots, err)
			}
			for d := range numDims {
				if len(sections[d].entries) == 0 {
					continue
				}
				r := newBlobReader(d, sections[d])
				if _, human, bot, ok, err := r.next(); err != nil || !ok || human+bot != 1 || len(r.buf) != 0 {
					t.Fatalf("%s: %q: dimension %d reads %d+%d, %v %v", c.name, bad, d, human, bot, ok, err)
				}
			}
		}
	}
}

// sameSections reports whether a and b hold the same sections (an empty
// one nil or not).
func sameSections(a, b *[numDims]section) bool {
	for d := range numDims {
		x, y := a[d], b[d]
		if x.n != y.n || x.other != y.other || x.v2 != y.v2 || !bytes.Equal(x.entries, y.entries) {
			return false
		}
	}
	return true
}

// TestOneClickBlob_Sizes pins the sizes docs/operations.md gives ("Disk
// and memory", schema version 5).
func TestOneClickBlob_Sizes(t *testing.T) {
	for _, c := range oneClickCases()[:3] {
		var scratch mergeScratch
		blob, err := mergePeriodBlob(nil, c.daily, c.add, &c.deltas, &c.vals, &scratch)
		if err != nil {
			t.Fatal(err)
		}
		want3, want2 := 9, 75
		if c.values[dimBrowsers] == "Chrome" {
			want3, want2 = 25, 81
		}
		if c.daily {
			want2 += 2 // the visitor counts
		}
		if len(blob) != want3 || len(scratch.out) != want2 {
			t.Errorf("%s: %d bytes (version 2: %d), want %d (%d)", c.name, len(blob), len(scratch.out), want3, want2)
		}
	}
}

// TestShortValues_OnDisk pins the bytes schema version 5 writes, as data
// files hold them: a version 3 blob and a raw click with rawFlagCodes are
// written as these bytes, and these bytes read as the click. A short
// value's code is a place in commonValues, so the list may only grow at
// its end: a value inserted or moved would make every blob and raw click
// written before read as another value, and this test fail.
func TestShortValues_OnDisk(t *testing.T) {
	pinned := []string{"direct", "unknown", "bot", "desktop", "mobile", "tablet",
		"Chrome", "Safari", "Firefox", "Edge", "Opera", "Samsung Internet",
		"Windows", "macOS", "iOS", "Android", "Linux", "ChromeOS"}
	if len(commonValues) < len(pinned) || !slices.Equal(commonValues[:len(pinned)], pinned) {
		t.Fatalf("commonValues = %q, but the codes on disk name %q", commonValues, pinned)
	}
	if len(commonValues) > 0x100-oneCode {
		t.Fatalf("%d common values: a code is one byte from %#x", len(commonValues), oneCode)
	}

	// A human visitor's click of link 300 in a workspace's day: from t.co,
	// in Germany, on mobile Safari on iOS.
	blob := []byte{0x00, 0x03, oneVisitor | oneHumanVisitor, 0x3f, 0xac, 0x02, 0x04, 't', '.', 'c', 'o', 0x02, 'D', 'E', 0x84, 0x87, 0x8e}
	var deltas [numDims][]dimDelta
	var vals [numDims][]string
	deltas[dimLinks] = []dimDelta{{v: 300, human: 1}}
	for d, v := range map[byte]string{dimReferrers: "t.co", dimCountries: "DE", dimDevices: "mobile", dimBrowsers: "Safari", dimOS: "iOS"} {
		vals[d], deltas[d] = []string{v}, []dimDelta{{v: 0, human: 1}}
	}
	var scratch mergeScratch
	if got, err := mergePeriodBlob(nil, true, periodHeader{clicks: 1, visitors: 1, humans: 1}, &deltas, &vals, &scratch); err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("wrote the blob %x, %v; want %x", got, err, blob)
	}
	h3, s3, err := parsePeriodBlob(blob, true)
	if err != nil {
		t.Fatal(err)
	}
	h2, s2, err := parsePeriodBlob(scratch.out, true)
	if err != nil {
		t.Fatal(err)
	}
	if h3 != h2 || !sameSections(&s3, &s2) {
		t.Fatalf("the blob reads\n%+v %+v\nits version 2\n%+v %+v", h3, s3, h2, s2)
	}
	for d, want := range vals {
		if len(want) == 0 {
			continue
		}
		r := newBlobReader(byte(d), s3[d])
		if val, human, bot, ok, err := r.next(); err != nil || !ok || string(val) != want[0] || human != 1 || bot != 0 {
			t.Errorf("dimension %d reads %q %d+%d %v %v, want %q", d, val, human, bot, ok, err, want[0])
		}
	}

	// A human's click of link 100 with no referrer, in Germany, on desktop
	// Chrome on Windows.
	raw := []byte{rawFlagCodes, 100, 0x80, 0x02, 'D', 'E', 0x83, 0x86, 0x8c, 0, 0, 0, 0, 0, 0, 0, 42}
	ids := testCodec(t, nil)
	at := time.Unix(1740830400, 0).UTC()
	want := link.Click{LinkID: ids.formatID(prefixLink, 100), WorkspaceID: ids.formatID(prefixWorkspace, 1), Time: at,
		Referrer: "direct", Country: "DE", Device: "desktop", Browser: "Chrome", OS: "Windows", Visitor: 42}
	p, ok := parseClick(ids, &want)
	if !ok {
		t.Fatal("parseClick refused a valid click")
	}
	if got := appendRawClick(nil, &p, rawReferrer{inline: directReferrer}); !bytes.Equal(got, raw) {
		t.Fatalf("wrote the raw click %x, want %x", got, raw)
	}
	var got link.Click
	k := concat(itob(1), itob(uint64(at.UnixNano())), be32(7))
	if err := decodeRawClick(ids, k, raw, &got, func(b []byte) string { return string(b) }, nil); err != nil || got != want {
		t.Fatalf("the raw click reads %+v, %v; want %+v", got, err, want)
	}
}
