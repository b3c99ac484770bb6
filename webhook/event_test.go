package webhook

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

func mustEncoder(tb testing.TB, base, scheme string) *Encoder {
	tb.Helper()
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	enc, err := NewEncoder(u, scheme)
	if err != nil {
		tb.Fatal(err)
	}
	return enc
}

// TestEncoder pins the wire format of every event type, byte for byte:
// receivers parse these bodies, and a delivery's body is fixed when its
// event is written.
func TestEncoder(t *testing.T) {
	enc := mustEncoder(t, "http://lb.test/", "")
	at := time.Date(2026, 3, 10, 12, 0, 5, 0, time.UTC)

	t.Run("body", func(t *testing.T) {
		// created_at in whole seconds, UTC, like every time of the API.
		ev := &link.Event{ID: "evt_1", Type: link.EventLinkCreated, WorkspaceID: "ws_1",
			CreatedAt: time.Date(2026, 3, 10, 13, 0, 5, 987654321, time.FixedZone("CET", 3600)), Data: []byte(`{"a":1}`)}
		if got, want := string(enc.AppendEvent([]byte("prefix:"), ev)),
			`prefix:{"id":"evt_1","type":"link.created","created_at":"2026-03-10T12:00:05Z","workspace_id":"ws_1","data":{"a":1}}`; got != want {
			t.Fatalf("body\n got %s\nwant %s", got, want)
		}
		ev.Data = nil
		if got, want := string(enc.AppendEvent(nil, ev)),
			`{"id":"evt_1","type":"link.created","created_at":"2026-03-10T12:00:05Z","workspace_id":"ws_1","data":null}`; got != want {
			t.Fatalf("body without data\n got %s\nwant %s", got, want)
		}
	})

	t.Run("link", func(t *testing.T) {
		for _, tt := range []struct {
			name string
			l    *link.Link
			want string
		}{
			{"primary domain, bare", &link.Link{ID: "lnk_1", Alias: "abc", DestinationURL: "https://Example.COM/a?x=1&y=<2>",
				RedirectCode: 302, CreatedAt: at, UpdatedAt: at},
				`{"id":"lnk_1","short_url":"http://lb.test/abc","alias":"abc","domain":"lb.test","destination_url":"https://Example.COM/a?x=1\u0026y=\u003c2\u003e",` +
					`"destination_host":"example.com","destination_host_unicode":"example.com","tags":[],"utm_source":null,"utm_medium":null,` +
					`"utm_campaign":null,"campaign_id":null,"redirect_code":302,"clicks":0,"created_at":"2026-03-10T12:00:05Z","updated_at":"2026-03-10T12:00:05Z","forward_path":false,"forward_query":false,"external_id":null,"crawlable":false,"public_stats":false,"escape_in_app_browser":false,"retargeting":false,"ios_url":null,"android_url":null,` +
					`"has_password":false,"rules":[],"variants":[],"og":null,"expires_at":null,"max_clicks":null,"expired_url":null,"archived":false,"title":null,"note":null}`},
			{"custom domain, everything set", &link.Link{ID: "lnk_2", Alias: "spring", Domain: "go.example.org",
				DestinationURL: "https://bücher.example/", Tags: []string{"a", "b"}, UTMSource: "news", UTMMedium: "email",
				UTMCampaign: "spring", CampaignID: "cmp_1", RedirectCode: 301, Clicks: 42,
				CreatedAt: at, UpdatedAt: at.Add(90*time.Minute + 500*time.Millisecond),
				// link controls: the password's hash never leaves the server.
				PasswordHash: "$2a$10$never-sent",
				Rules:        []link.Rule{{If: link.RuleCondition{Country: "DE", Query: &link.QueryCondition{Name: "src", Value: "qr"}}, Then: "https://example.com/de"}},
				Variants:     []link.Variant{{DestinationURL: "https://example.com/a", Weight: 60}, {DestinationURL: "https://example.com/b", Weight: 40}},
				OG:           &link.OG{Title: "T", Description: "D", ImageURL: "https://example.com/i.png"}},
				`{"id":"lnk_2","short_url":"https://go.example.org/spring","alias":"spring","domain":"go.example.org","destination_url":"https://bücher.example/",` +
					`"destination_host":"xn--bcher-kva.example","destination_host_unicode":"bücher.example","tags":["a","b"],"utm_source":"news","utm_medium":"email",` +
					`"utm_campaign":"spring","campaign_id":"cmp_1","redirect_code":301,"clicks":42,"created_at":"2026-03-10T12:00:05Z","updated_at":"2026-03-10T13:30:05Z","forward_path":false,"forward_query":false,"external_id":null,"crawlable":false,"public_stats":false,"escape_in_app_browser":false,"retargeting":false,"ios_url":null,"android_url":null,` +
					`"has_password":true,"rules":[{"if":{"country":"DE","query":{"name":"src","value":"qr"}},"then":"https://example.com/de"}],` +
					`"variants":[{"destination_url":"https://example.com/a","weight":60},{"destination_url":"https://example.com/b","weight":40}],` +
					`"og":{"title":"T","description":"D","image_url":"https://example.com/i.png"},"expires_at":null,"max_clicks":null,"expired_url":null,"archived":false,"title":null,"note":null}`},
			{"IPv6 destination", &link.Link{ID: "lnk_3", Alias: "v6", DestinationURL: "http://[2001:DB8::1]:8080/", CreatedAt: at, UpdatedAt: at},
				`{"id":"lnk_3","short_url":"http://lb.test/v6","alias":"v6","domain":"lb.test","destination_url":"http://[2001:DB8::1]:8080/",` +
					`"destination_host":"[2001:db8::1]","destination_host_unicode":"[2001:db8::1]","tags":[],"utm_source":null,"utm_medium":null,` +
					`"utm_campaign":null,"campaign_id":null,"redirect_code":0,"clicks":0,"created_at":"2026-03-10T12:00:05Z","updated_at":"2026-03-10T12:00:05Z","forward_path":false,"forward_query":false,"external_id":null,"crawlable":false,"public_stats":false,"escape_in_app_browser":false,"retargeting":false,"ios_url":null,"android_url":null,` +
					`"has_password":false,"rules":[],"variants":[],"og":null,"expires_at":null,"max_clicks":null,"expired_url":null,"archived":false,"title":null,"note":null}`},
		} {
			t.Run(tt.name, func(t *testing.T) {
				got, err := enc.LinkData(tt.l)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tt.want {
					t.Fatalf("link data\n got %s\nwant %s", got, tt.want)
				}
			})
		}
		// The scheme of custom domains is configurable.
		got, err := mustEncoder(t, "https://lb.test", "http").LinkData(&link.Link{Alias: "x", Domain: "go.example.org"})
		if err != nil || !bytes.Contains(got, []byte(`"short_url":"http://go.example.org/x"`)) {
			t.Fatalf("link data with domains.scheme http: %s, %v", got, err)
		}
	})

	t.Run("campaign", func(t *testing.T) {
		c := &link.Campaign{ID: "cmp_1", Name: "Spring <sale>", Status: link.CampaignPaused, UTMSource: "news", Links: 3,
			CreatedAt: at, UpdatedAt: at.Add(time.Hour)}
		got, err := enc.CampaignData(c, map[string][2]string{"status": {"active", "paused"}, "name": {"Spring", "Spring <sale>"}})
		if err != nil {
			t.Fatal(err)
		}
		want := `{"campaign":{"id":"cmp_1","name":"Spring \u003csale\u003e","status":"paused","utm_source":"news","utm_medium":null,` +
			`"utm_campaign":null,"links":3,"created_at":"2026-03-10T12:00:05Z","updated_at":"2026-03-10T13:00:05Z"},` +
			`"changes":{"name":{"from":"Spring","to":"Spring \u003csale\u003e"},"status":{"from":"active","to":"paused"}}}`
		if string(got) != want {
			t.Fatalf("campaign data\n got %s\nwant %s", got, want)
		}
		got, err = enc.CampaignData(c, nil)
		if err != nil || !bytes.HasSuffix(got, []byte(`"changes":{}}`)) {
			t.Fatalf("campaign data without changes: %s, %v", got, err)
		}
	})

	t.Run("click", func(t *testing.T) {
		c := &link.ClickEvent{LinkID: "lnk_1", Time: time.Date(2026, 3, 10, 12, 0, 5, 250_000_000, time.UTC),
			Referrer: "news.example", Country: "DE", Device: "mobile", Browser: "Firefox", OS: "Android", Bot: true}
		want := `{"link_id":"lnk_1","time":"2026-03-10T12:00:05.250Z","referrer":"news.example","country":"DE","device":"mobile",` +
			`"browser":"Firefox","os":"Android","bot":true}`
		if got := string(enc.AppendClickData(nil, c)); got != want {
			t.Fatalf("click data\n got %s\nwant %s", got, want)
		}
		c.Referrer, c.Bot = "we\"ird\n<&>", false
		got := enc.AppendClickData(nil, c)
		var m map[string]any
		if err := json.Unmarshal(got, &m); err != nil || m["referrer"] != c.Referrer || m["bot"] != false {
			t.Fatalf("click data %s: %v, %v", got, m, err)
		}
	})

	t.Run("ping", func(t *testing.T) {
		got, err := enc.PingData()
		if err != nil || string(got) != `{"message":"ping from linkbolt"}` {
			t.Fatalf("ping data %s, %v", got, err)
		}
	})
}

func TestNewEncoder_BadBaseURL(t *testing.T) {
	for _, u := range []*url.URL{nil, {}, {Path: "lb.test"}} {
		if _, err := NewEncoder(u, ""); err == nil {
			t.Errorf("NewEncoder(%v): no error", u)
		}
	}
}

// FuzzAppendString checks the hand-written JSON strings of events against
// encoding/json (without its HTML escaping).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `quote " back \ slash`, "ctl \x00\x01\x1f\x7f", "nl\n\r\t\b\f", "é日本", "bad \xff\xfe utf8", "\u2028\u2029", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}

// TestAppendTime checks a click's time: UTC, always in milliseconds, as
// the raw clicks of an export.
func TestAppendTime(t *testing.T) {
	for at, want := range map[time.Time]string{
		time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC):                            `"2025-03-01T12:00:00.000Z"`,
		time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC):                    `"2025-03-01T12:00:00.123Z"`,
		time.Date(2025, 3, 1, 13, 0, 0, 999999999, time.FixedZone("CET", 3600)): `"2025-03-01T12:00:00.999Z"`,
		time.Unix(0, 0).UTC(): `"1970-01-01T00:00:00.000Z"`,
	} {
		if got := appendTime(nil, at); string(got) != want {
			t.Errorf("appendTime(%v) = %s, want %s", at, got, want)
		}
	}
}
