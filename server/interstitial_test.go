package server

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// Tests of the interstitials of a link (interstitial.go): leaving an
// in-app browser, and the retargeting pixels.

// The user agents of the in-app browsers, as the apps send them.
const (
	uaInstagramIPhone  = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 361.0.0.35.82 (iPhone14,5; iOS 18_1_1; en_US; en; scale=3.00; 1170x2532; 674117118)"
	uaInstagramAndroid = "Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36 Instagram 357.0.0.25.101 Android (34/14; 480dpi; 1080x2340; samsung; SM-S918B; dm3q; qcom; en_US; 658543098)"
)

var inAppUAs = []struct {
	name, ua string
	android  bool
}{
	{"Instagram iPhone", uaInstagramIPhone, false},
	{"Instagram Android", uaInstagramAndroid, true},
	{"Facebook iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/488.0.0.53.106;FBBV/123;FBDV/iPhone14,2;FBMD/iPhone;FBSN/iOS;FBSV/17.6;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]", false},
	{"Facebook Android", "Mozilla/5.0 (Linux; Android 13; SM-A536B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/130.0.6723.107 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/489.0.0.66.81;]", true},
	{"Messenger iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/MessengerForiOS;FBAV/470.0.0.40.107;FBBV/612180339;FBDV/iPhone15,3;FBMD/iPhone;FBSN/iOS;FBSV/17.5.1;FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/5]", false},
	{"TikTok iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 musical_ly_34.4.0 JsSdk/2.0 NetType/WIFI Channel/App Store ByteLocale/en Region/US ByteFullLocale/en isDarkMode/0 WKWebView/1 RevealType/Dialog BytedanceWebview/d8a21c6", false},
	{"TikTok Android", "Mozilla/5.0 (Linux; Android 14; 2201116SG Build/UKQ1.231003.002; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36 musical_ly_2023707030 JsSdk/1.0 NetType/WIFI Channel/googleplay AppName/musical_ly app_version/37.7.3 ByteLocale/en ByteFullLocale/en Region/US AppId/1233 Spark/1.6.0.5-bugfix AppVersion/37.7.3 BytedanceWebview/d8a21c6", true},
	{"TikTok Android (trill)", "Mozilla/5.0 (Linux; Android 12; SM-G991B Build/SP1A.210812.016; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/108.0.5359.128 Mobile Safari/537.36 trill_2023107030 JsSdk/1.0 NetType/WIFI Channel/googleplay AppName/trill app_version/31.7.3 ByteLocale/en ByteFullLocale/en Region/GB Spark/1.4.3-alpha.7 AppVersion/31.7.3 BytedanceWebview/d8a21c6", true},
	{"LinkedIn iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [LinkedInApp]/9.29.6117", false},
	{"LinkedIn Android", "Mozilla/5.0 (Linux; Android 13; Pixel 7 Build/TQ3A.230901.001; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/118.0.0.0 Mobile Safari/537.36 [LinkedInApp]/4.1.881", true},
}

// Browsers and bots that are in no in-app browser.
var notInAppUAs = []struct{ name, ua string }{
	{"Safari iPhone", uaSafariIPhone},
	{"Chrome Android", "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36"},
	{"Android WebView", "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.81 Mobile Safari/537.36"},
	{"Firefox Linux", uaFirefoxLinux},
	{"Facebook's link preview", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"},
	{"LinkedIn's link preview", "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)"},
	{"Slack's link preview", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"},
	{"Googlebot", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"},
	{"curl", "curl/8.4.0"},
}

// The script hosts of the three pixels.
var pixelScriptHosts = []string{"https://connect.facebook.net", "https://www.googletagmanager.com", "https://snap.licdn.com"}

func TestLinkEscapeInAppBrowser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/shop?a=1&b=2#top","alias":"esc","escape_in_app_browser":true}`, 201)
	if r.path("escape_in_app_browser") != true || r.path("retargeting") != false {
		t.Fatalf("created: %s", r.raw)
	}
	id := r.str("id")
	plain := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/shop?a=1&b=2#top","alias":"plain"}`, 201)
	if plain.path("escape_in_app_browser") != false || plain.path("retargeting") != false {
		t.Fatalf("a plain link: %s", plain.raw)
	}
	const dest = "https://x.test/shop?a=1&b=2#top"
	const intent = "intent://x.test/shop?a=1&b=2#top#Intent;scheme=https;action=android.intent.action.VIEW;" +
		"category=android.intent.category.BROWSABLE;S.browser_fallback_url=https%3A%2F%2Fx.test%2Fshop%3Fa%3D1%26b%3D2%23top;end"
	clicks := 0
	for _, c := range inAppUAs {
		t.Run(c.name, func(t *testing.T) {
			got := e.request(visit("/esc", "192.0.2.7", c.ua))
			clicks++
			if got.status != 200 {
				t.Fatalf("status %d, want the page: %s", got.status, got.raw)
			}
			checkPageHeaders(t, c.name, got.header, got.raw)
			if cc := got.header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
				t.Errorf("Cache-Control %q", cc)
			}
			body := string(got.raw)
			if c.android {
				for _, want := range []string{`data-next="` + htmlAttr(intent) + `"`, `id="open" href="` + htmlAttr(intent) + `"`,
					`content="0;url=` + htmlAttr(intent) + `"`, `id="continue" href="` + htmlAttr(dest) + `"`} {
					if !strings.Contains(body, want) {
						t.Errorf("no %s in %s", want, body)
					}
				}
			} else {
				for _, want := range []string{`href="x-safari-` + htmlAttr(dest) + `"`, `id="continue" href="` + htmlAttr(dest) + `"`, "Open in Safari"} {
					if !strings.Contains(body, want) {
						t.Errorf("no %s in %s", want, body)
					}
				}
				if strings.Contains(body, "refresh") || strings.Contains(body, "data-next") {
					t.Errorf("an iOS page leaves by itself: %s", body)
				}
			}
			if strings.Contains(body, "data-meta") || strings.Contains(got.header.Get("Content-Security-Policy"), "https:") {
				t.Errorf("pixels on a link without retargeting: %s %s", got.header.Get("Content-Security-Policy"), body)
			}
			// The same visitor on a link without the option is redirected.
			if p := e.request(visit("/plain", "192.0.2.7", c.ua)); p.status != 302 || p.header.Get("Location") != dest {
				t.Fatalf("plain link: %d %q", p.status, p.header.Get("Location"))
			}
			clicks++
			// HEAD answers the page, without a click.
			head := visit("/esc", "192.0.2.7", c.ua)
			head.Method = "HEAD"
			if h := e.request(head); h.status != 200 || len(h.raw) != 0 {
				t.Fatalf("HEAD: %d %s", h.status, h.raw)
			}
		})
	}
	for _, c := range notInAppUAs {
		t.Run(c.name, func(t *testing.T) {
			got := e.request(visit("/esc", "192.0.2.8", c.ua))
			clicks++
			if got.status != 302 || got.header.Get("Location") != dest {
				t.Fatalf("%d %q, want the redirect: %s", got.status, got.header.Get("Location"), got.raw)
			}
		})
	}
	e.flush()
	all := e.do("GET", "/v1/links/"+id, e.writeKey, "", 200).path("clicks").(float64) +
		e.do("GET", "/v1/links/"+plain.str("id"), e.writeKey, "", 200).path("clicks").(float64)
	if int(all) != clicks {
		t.Fatalf("clicks %v, want %d: one a visit", all, clicks)
	}

	// Switched off, the link redirects everyone.
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"escape_in_app_browser":false}`, 200)
	if got := e.request(visit("/esc", "192.0.2.7", uaInstagramIPhone)); got.status != 302 {
		t.Fatalf("switched off: %d", got.status)
	}
}

// htmlAttr is s as html/template writes it into an attribute.
func htmlAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", "+", "&#43;").Replace(s)
}

func TestLinkEscapeWithControls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const pw = "open-sesame-7731"
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/vault","alias":"vault","password":"`+pw+`","escape_in_app_browser":true}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/docs","alias":"fwd","forward_path":true,"escape_in_app_browser":true,
		"rules":[{"if":{"os":"Android"},"then":"https://x.test/android"}]}`, 201)
	// The password first: its form tells nothing of where the link goes.
	form := e.request(visit("/vault", "192.0.2.9", uaInstagramIPhone))
	if form.status != 200 || !strings.Contains(string(form.raw), `action="/vault"`) || strings.Contains(string(form.raw), "x.test") {
		t.Fatalf("password form: %d %s", form.status, form.raw)
	}
	post := passwordPost("/vault", "192.0.2.9", pw)
	post.Header.Set("User-Agent", uaInstagramIPhone)
	rec := e.request(post)
	if rec.status != 200 || !strings.Contains(string(rec.raw), `href="x-safari-https://x.test/vault"`) {
		t.Fatalf("after the password: %d %s", rec.status, rec.raw)
	}
	if !strings.Contains(rec.header.Get("Set-Cookie"), unlockCookie) {
		t.Fatalf("no unlock cookie: %v", rec.header)
	}
	// Rules and forwarding pick the destination the page leads to.
	got := e.request(visit("/fwd/guide/install?x=1", "192.0.2.9", uaInstagramAndroid))
	if want := `intent://x.test/android/guide/install#Intent;scheme=https;`; got.status != 200 || !strings.Contains(string(got.raw), want) {
		t.Fatalf("forwarded: %d, want %s in %s", got.status, want, got.raw)
	}
	// An expired link is gone for in-app visitors too.
	at := e.clock.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/soon","alias":"soon","escape_in_app_browser":true,"expires_at":"`+at+`"}`, 201)
	e.clock.Add(2 * time.Minute)
	if got := e.request(visit("/soon", "192.0.2.9", uaInstagramAndroid)); got.status != 410 {
		t.Fatalf("expired: %d %s", got.status, got.raw)
	}
}

func TestWorkspacePixels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws := e.do("GET", "/v1/workspaces/"+e.ws, e.adminToken, "", 200)
	if ws.path("pixels", "meta") != "" || ws.path("pixels", "google") != "" || ws.path("pixels", "linkedin") != "" {
		t.Fatalf("a new workspace has pixels: %s", ws.raw)
	}
	for _, c := range []struct{ body, field string }{
		{`{"pixels":{"meta":"12345"}}`, "pixels.meta"},
		{`{"pixels":{"meta":"1234567890abc"}}`, "pixels.meta"},
		{`{"pixels":{"google":"UA-12345-1"}}`, "pixels.google"},
		{`{"pixels":{"google":"G-<script>"}}`, "pixels.google"},
		{`{"pixels":{"google":"AW-12ab"}}`, "pixels.google"},
		{`{"pixels":{"linkedin":"12';alert(1)//"}}`, "pixels.linkedin"},
	} {
		r := e.request(newRequest("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, c.body))
		wantProblem(t, r, 422, "validation_failed")
		if !strings.Contains(string(r.raw), c.field) {
			t.Errorf("%s: no %s in %s", c.body, c.field, r.raw)
		}
	}
	wantProblem(t, e.request(newRequest("PATCH", "/v1/workspaces/"+e.ws, e.writeKey, `{"pixels":{"meta":"1234567890"}}`)), 403, "forbidden")
	r := e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"pixels":{"meta":"1234567890123456","google":"g-ab12cd34ef"}}`, 200)
	if r.path("pixels", "meta") != "1234567890123456" || r.path("pixels", "google") != "G-AB12CD34EF" || r.path("pixels", "linkedin") != "" {
		t.Fatalf("set: %s", r.raw)
	}
	r = e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"pixels":{"linkedin":"5544332","google":""}}`, 200)
	if r.path("pixels", "meta") != "1234567890123456" || r.path("pixels", "google") != "" || r.path("pixels", "linkedin") != "5544332" {
		t.Fatalf("one changed, one removed, one kept: %s", r.raw)
	}
}

func TestLinkRetargeting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/sale?c=1&d=2","alias":"ret","retargeting":true}`, 201)
	id := r.str("id")
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/sale?c=1&d=2","alias":"both","retargeting":true,"escape_in_app_browser":true}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/sale?c=1&d=2","alias":"plain"}`, 201)
	const dest = "https://x.test/sale?c=1&d=2"
	// No pixel yet: nothing to fire, the redirect as before.
	if got := e.request(visit("/ret", "192.0.2.7", uaSafariIPhone)); got.status != 302 || got.header.Get("Location") != dest {
		t.Fatalf("without pixels: %d %q", got.status, got.header.Get("Location"))
	}
	e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"pixels":{"meta":"1234567890123456"}}`, 200)
	got := e.request(visit("/ret", "192.0.2.7", uaSafariIPhone))
	if got.status != 200 {
		t.Fatalf("status %d: %s", got.status, got.raw)
	}
	checkPageHeaders(t, "meta only", got.header, got.raw, pixelScriptHosts[0])
	csp := got.header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'sha256-", " https://connect.facebook.net;", "img-src https://www.facebook.com;", "connect-src https://www.facebook.com;"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q: no %q", csp, want)
		}
	}
	if strings.Contains(csp, "google") || strings.Contains(csp, "licdn") || strings.Contains(csp, "unsafe") || strings.Contains(csp, "*;") {
		t.Errorf("CSP %q names more than the Meta pixel needs", csp)
	}
	body := string(got.raw)
	for _, want := range []string{`data-meta="1234567890123456"`, `data-next="` + htmlAttr(dest) + `"`, `data-delay="800"`,
		`content="2;url=` + htmlAttr(dest) + `"`, `id="continue" href="` + htmlAttr(dest) + `"`} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in %s", want, body)
		}
	}
	if strings.Contains(body, "1234567890123456'") || strings.Contains(body, "data-google") {
		t.Errorf("the ID in script, or a pixel not set: %s", body)
	}

	e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"pixels":{"google":"AW-123456789","linkedin":"5544332"}}`, 200)
	got = e.request(visit("/ret", "192.0.2.7", uaFirefoxLinux))
	checkPageHeaders(t, "three pixels", got.header, got.raw, pixelScriptHosts...)
	csp = got.header.Get("Content-Security-Policy")
	for _, h := range pixelScriptHosts {
		if !strings.Contains(csp, h) {
			t.Errorf("CSP %q: no %s", csp, h)
		}
	}
	if !strings.Contains(string(got.raw), `data-google="AW-123456789"`) || !strings.Contains(string(got.raw), `data-linkedin="5544332"`) {
		t.Errorf("pixels: %s", got.raw)
	}
	visits := 2
	// Bots and link previews are redirected as before.
	for _, c := range notInAppUAs[4:] {
		if got := e.request(visit("/ret", "192.0.2.8", c.ua)); got.status != 302 || got.header.Get("Location") != dest {
			t.Errorf("%s: %d %q", c.name, got.status, got.header.Get("Location"))
		}
		visits++
	}
	// Both: in an Android in-app browser the pixels fire, then the intent.
	got = e.request(visit("/both", "192.0.2.7", uaInstagramAndroid))
	if b := string(got.raw); got.status != 200 || !strings.Contains(b, `data-meta=`) || !strings.Contains(b, `data-next="intent://x.test/sale`) {
		t.Fatalf("both, Android: %d %s", got.status, b)
	}
	got = e.request(visit("/both", "192.0.2.7", uaInstagramIPhone))
	if b := string(got.raw); got.status != 200 || !strings.Contains(b, `data-meta=`) || !strings.Contains(b, "x-safari-https://x.test/sale") || strings.Contains(b, "data-next") {
		t.Fatalf("both, iOS: %d %s", got.status, b)
	}
	// A link without the option, the same visitor: the redirect.
	if got := e.request(visit("/plain", "192.0.2.7", uaFirefoxLinux)); got.status != 302 || got.header.Get("Location") != dest {
		t.Fatalf("plain: %d %q", got.status, got.header.Get("Location"))
	}
	e.flush()
	if n := e.do("GET", "/v1/links/"+id, e.writeKey, "", 200).path("clicks").(float64); int(n) != visits+1 {
		t.Fatalf("clicks %v, want %d", n, visits+1)
	}
}

// TestBulkCreateInterstitials: bulk creation takes the flags per link, on
// both stores (PostgreSQL inserts a batch its own way).
func TestBulkCreateInterstitials(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/links/bulk", e.writeKey, bulkBody(
		`{"destination_url":"https://bulk.example.com/a","alias":"bulk-a","escape_in_app_browser":true}`,
		`{"destination_url":"https://bulk.example.com/b","alias":"bulk-b","retargeting":true}`,
		`{"destination_url":"https://bulk.example.com/c","alias":"bulk-c"}`,
	), 200)
	for alias, want := range map[string][2]bool{"bulk-a": {true, false}, "bulk-b": {false, true}, "bulk-c": {false, false}} {
		l := e.do("GET", "/v1/links?search="+alias, e.readKey, "", 200)
		if l.path("data", 0, "escape_in_app_browser") != want[0] || l.path("data", 0, "retargeting") != want[1] {
			t.Errorf("%s: %s", alias, l.raw)
		}
	}
	if got := e.request(visit("/bulk-a", "192.0.2.7", uaInstagramAndroid)); got.status != 200 {
		t.Fatalf("bulk-a as Instagram: %d", got.status)
	}
}

func TestIntentURL(t *testing.T) {
	t.Parallel()
	got := intentURL("http://x.test/a b?q=é#f")
	want := "intent://x.test/a b?q=é#f#Intent;scheme=http;action=android.intent.action.VIEW;category=android.intent.category.BROWSABLE;" +
		"S.browser_fallback_url=http%3A%2F%2Fx.test%2Fa%20b%3Fq%3D%C3%A9%23f;end"
	if got != want {
		t.Fatalf("intentURL = %q, want %q", got, want)
	}
	if u, err := url.Parse(intentURL("https://x.test/")); err != nil || u.Scheme != "intent" {
		t.Fatalf("%v %v", u, err)
	}
}
