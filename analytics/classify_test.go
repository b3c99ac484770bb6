package analytics

import (
	"net/netip"
	"sync"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

func TestClassifierClearsUserAgentAndAddress(t *testing.T) {
	geo := mustOpenTestGeoIP(t)
	c := NewClassifier(geo)
	salt := []byte("salt of the day")
	ua := "Mozilla/5.0 (iPhone; CPU iPhone OS 18_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.2 Mobile/15E148 Safari/604.1"
	addr := netip.MustParseAddr("81.2.69.142")
	clk := link.Click{LinkID: "l1", UserAgent: ua, Addr: addr}
	c.Classify(&clk, salt)

	want := link.Click{LinkID: "l1", Browser: "Safari", OS: "iOS", Device: "mobile", Country: "GB",
		Visitor: VisitorHash(salt, addr, ua)}
	if clk != want {
		t.Fatalf("got %+v\nwant %+v", clk, want)
	}
	if clk.UserAgent != "" || clk.Addr.IsValid() {
		t.Fatalf("user agent %q and address %v outlived classification", clk.UserAgent, clk.Addr)
	}
}

func TestClassifierWithoutAddressOrGeoIP(t *testing.T) {
	salt := []byte("salt")
	for _, c := range []*Classifier{NewClassifier(nil), NewClassifier(mustOpenTestGeoIP(t))} {
		clk := link.Click{UserAgent: "curl/8.5.0"}
		c.Classify(&clk, salt)
		if got, want := clk.Country, Unknown; got != want {
			t.Errorf("Country = %q, want %q", got, want)
		}
		if got, want := clk.Visitor, VisitorHash(salt, netip.Addr{}, "curl/8.5.0"); got != want {
			t.Errorf("Visitor = %x, want %x", got, want)
		}
		if !clk.Bot || clk.Browser != "curl" || clk.Device != DeviceBot || clk.OS != Unknown {
			t.Errorf("got %+v, want a curl bot", clk)
		}
	}
	// Without GeoIP even a public address has no country.
	clk := link.Click{UserAgent: uaCases[0].ua, Addr: netip.MustParseAddr("81.2.69.142")}
	NewClassifier(nil).Classify(&clk, salt)
	if got, want := clk.Country, Unknown; got != want {
		t.Errorf("Country = %q, want %q", got, want)
	}
}

func TestClassifierConcurrent(t *testing.T) {
	c := NewClassifier(mustOpenTestGeoIP(t))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				tt := uaCases[(g+i)%len(uaCases)]
				clk := link.Click{UserAgent: tt.ua, Addr: netip.MustParseAddr("2001:db8::1")}
				c.Classify(&clk, []byte("s"))
				if clk.Browser != tt.browser || clk.Country != "DE" {
					t.Errorf("%s: got %+v", tt.name, clk)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkClassifierClassify(b *testing.B) {
	c := NewClassifier(mustOpenTestGeoIP(b))
	salt := []byte("0123456789abcdef0123456789abcdef")
	addr := netip.MustParseAddr("81.2.69.142")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		clk := link.Click{UserAgent: uaCases[i%len(uaCases)].ua, Addr: addr}
		c.Classify(&clk, salt)
		i++
	}
}
