package wire_test

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

func TestDestinationHosts(t *testing.T) {
	for _, tc := range []struct{ dest, ascii, unicode string }{
		{"https://Example.COM./x", "example.com", "example.com"},
		{"https://xn--pple-43d.com/", "xn--pple-43d.com", "аpple.com"},
		{"https://bücher.example/", "xn--bcher-kva.example", "bücher.example"},
		{"http://[2001:DB8::1]:8080/", "[2001:db8::1]", "[2001:db8::1]"},
		{"https://my_host/", "my_host", "my_host"},
		{"://bad", "", ""},
	} {
		ascii, unicode := wire.DestinationHosts(tc.dest)
		if ascii != tc.ascii || unicode != tc.unicode {
			t.Errorf("DestinationHosts(%q) = %q, %q; want %q, %q", tc.dest, ascii, unicode, tc.ascii, tc.unicode)
		}
	}
}

func TestLink(t *testing.T) {
	urls := wire.ShortURLs{Base: &url.URL{Scheme: "http", Host: "lb.test"}}
	at := time.Date(2026, 3, 10, 12, 0, 5, 999, time.FixedZone("CET", 3600))
	l := &link.Link{ID: "lnk_1", Alias: "spring", DestinationURL: "https://example.com/a",
		CampaignID: "cmp_1", RedirectCode: 302, CreatedAt: at, UpdatedAt: at}
	b, err := json.Marshal(urls.Link(l))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"lnk_1","short_url":"http://lb.test/spring","alias":"spring","domain":"lb.test",` +
		`"destination_url":"https://example.com/a","destination_host":"example.com","destination_host_unicode":"example.com",` +
		`"tags":[],"utm_source":null,"utm_medium":null,"utm_campaign":null,"campaign_id":"cmp_1","redirect_code":302,` +
		`"clicks":0,"created_at":"2026-03-10T11:00:05Z","updated_at":"2026-03-10T11:00:05Z","forward_path":false,"forward_query":false,"external_id":null,"crawlable":false,"public_stats":false,"escape_in_app_browser":false,"retargeting":false,"ios_url":null,"android_url":null,` +
		`"has_password":false,"rules":[],"variants":[],"og":null,"expires_at":null,"max_clicks":null,"expired_url":null,"archived":false,"title":null,"note":null}`
	if string(b) != want {
		t.Fatalf("link\n got %s\nwant %s", b, want)
	}

	l.Domain = "go.example.com"
	if got, want := urls.ShortURL(l), "https://go.example.com/spring"; got != want {
		t.Errorf("on a custom domain: %s, want %s", got, want)
	}
	urls.DomainScheme = "http"
	if got, want := urls.Link(l).ShortURL, "http://go.example.com/spring"; got != want {
		t.Errorf("with domains.scheme http: %s, want %s", got, want)
	}
}
