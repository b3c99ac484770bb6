package server

import (
	"strings"
	"testing"
)

// Real user agents of the systems the app destinations look for.
const (
	uaSafariIPad    = "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
	uaChromeAndroid = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.104 Mobile Safari/537.36"
	uaSafariMac     = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15"
)

// TestLinkAppDestinations checks ios_url and android_url: visitors on
// iOS and iPadOS, and on Android, go there before the rules and the A/B
// split, with the link's UTM values; others as before; one set alone
// leaves the other system at the rules and destination; a password is
// asked first; PATCH removes one; a bad URL is 422 on its field.
func TestLinkAppDestinations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/app","alias":"get-app","utm_source":"poster",
		"ios_url":" https://apps.apple.com/app/id123 ","android_url":"https://play.google.com/store/apps/details?id=com.example",
		"rules":[{"if":{"os":"iOS"},"then":"https://example.com/ios-rule"},{"if":{"device":"mobile"},"then":"https://example.com/mobile"}]}`, 201)
	if r.path("ios_url") != "https://apps.apple.com/app/id123" || r.path("android_url") != "https://play.google.com/store/apps/details?id=com.example" {
		t.Fatalf("created: %s", r.raw)
	}
	id := r.str("id")
	for _, c := range []struct{ name, ua, want string }{
		{"iPhone", uaSafariIPhone, "https://apps.apple.com/app/id123?utm_source=poster"},
		{"iPad", uaSafariIPad, "https://apps.apple.com/app/id123?utm_source=poster"},
		{"Instagram on iPhone", uaInstagramIPhone, "https://apps.apple.com/app/id123?utm_source=poster"},
		{"Android", uaChromeAndroid, "https://play.google.com/store/apps/details?id=com.example&utm_source=poster"},
		{"a Mac", uaSafariMac, "https://example.com/app?utm_source=poster"},
		{"Windows", uaChromeWin, "https://example.com/app?utm_source=poster"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := e.request(visit("/get-app", "192.0.2.10", c.ua))
			if got.status != 302 || got.header.Get("Location") != c.want {
				t.Fatalf("%d Location %q, want %q", got.status, got.header.Get("Location"), c.want)
			}
		})
	}

	// Android's removed: Android visitors meet the rules again.
	if got := e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"android_url":""}`, 200); got.path("android_url") != nil {
		t.Fatalf("removed: %s", got.raw)
	}
	if got := e.request(visit("/get-app", "192.0.2.10", uaChromeAndroid)); got.header.Get("Location") != "https://example.com/mobile?utm_source=poster" {
		t.Fatalf("Android after removing android_url: %q", got.header.Get("Location"))
	}

	// A password comes first.
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/secret","alias":"secret-app","password":"open sesame","ios_url":"https://apps.apple.com/app/id9"}`, 201)
	if got := e.request(visit("/secret-app", "192.0.2.10", uaSafariIPhone, "Accept", "text/html")); got.status != 200 || got.header.Get("Location") != "" || !strings.Contains(string(got.raw), `name="password"`) {
		t.Fatalf("a protected link on iOS: %d %q", got.status, got.header.Get("Location"))
	}

	for body, field := range map[string]string{
		`{"destination_url":"https://example.com/","ios_url":"itms-apps://apps.apple.com/app/id1"}`: "ios_url",
		`{"destination_url":"https://example.com/","android_url":"not a url"}`:                      "android_url",
	} {
		got := e.do("POST", "/v1/links", e.writeKey, body, 422)
		if got.path("errors", 0, "field") != field {
			t.Errorf("%s: %s", body, got.raw)
		}
	}
}
