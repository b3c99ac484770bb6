package server

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"

	"github.com/linkbolt/linkbolt/analytics"
)

// Tests of the link controls: password, rules, variants, social card.

const (
	uaFirefoxLinux = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	uaChromeWin    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	uaSafariIPhone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
)

// visit is a GET of a short link from addr with the user agent and extra
// headers (name, value pairs).
func visit(path, addr, ua string, headers ...string) *http.Request {
	req := httptest.NewRequest("GET", "http://lb.test"+path, nil)
	req.RemoteAddr = addr + ":4444"
	req.Header.Set("User-Agent", ua)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

func passwordPost(path, addr, password string, cookies ...*http.Cookie) *http.Request {
	req := httptest.NewRequest("POST", "http://lb.test"+path, strings.NewReader(url.Values{"password": {password}}.Encode()))
	req.RemoteAddr = addr + ":4444"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", uaFirefoxLinux)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return req
}

func TestLinkPassword(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const pw = "open-sesame-7731"
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/secret","alias":"vault","password":"`+pw+`"}`, 201)
	id := r.str("id")
	if r.path("has_password") != true {
		t.Fatalf("has_password: %s", r.raw)
	}
	if strings.Contains(string(r.raw), pw) || strings.Contains(string(r.raw), "$2a$") {
		t.Fatalf("the password or its hash is in the answer: %s", r.raw)
	}
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200); strings.Contains(string(got.raw), pw) || strings.Contains(string(got.raw), "$2a$") || got.path("has_password") != true {
		t.Fatalf("GET link: %s", got.raw)
	}

	// A browser gets the form: no click, no script, strict CSP.
	form := e.request(visit("/vault", "198.51.100.7", uaFirefoxLinux, "Accept", "text/html"))
	if form.status != 200 || !strings.Contains(string(form.raw), `<form method="post" action="/vault">`) || strings.Contains(string(form.raw), "<script") {
		t.Fatalf("form: %d %s", form.status, form.raw)
	}
	if csp := form.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "form-action 'self'") {
		t.Fatalf("CSP %q", csp)
	}
	if strings.Contains(string(form.raw), "example.com/secret") || form.header.Get("Location") != "" {
		t.Fatalf("the form gives the destination away: %s", form.raw)
	}

	// HEAD answers as GET, without a body and without a click.
	head := visit("/vault", "198.51.100.7", uaFirefoxLinux)
	head.Method = "HEAD"
	if got := e.request(head); got.status != 200 || len(got.raw) != 0 {
		t.Fatalf("HEAD: %d %q", got.status, got.raw)
	}

	// A wrong password: the form again, with a message.
	wrong := e.request(passwordPost("/vault", "198.51.100.7", "guess"))
	if wrong.status != 401 || !strings.Contains(string(wrong.raw), "Wrong password") || wrong.header.Get("Set-Cookie") != "" {
		t.Fatalf("wrong password: %d %v %s", wrong.status, wrong.header, wrong.raw)
	}

	// The right one: a click, a redirect and the unlock cookie.
	right := e.request(passwordPost("/vault", "198.51.100.7", pw))
	if right.status != 303 || right.header.Get("Location") != "https://example.com/secret" {
		t.Fatalf("right password: %d %v", right.status, right.header)
	}
	res := http.Response{Header: right.header}
	cookies := res.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", right.header["Set-Cookie"])
	}
	c := cookies[0]
	if c.Name != "lb_unlock" || c.Path != "/vault" || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || c.MaxAge != int((24*time.Hour)/time.Second) {
		t.Fatalf("cookie %+v", c)
	}

	// The cookie lets the browser through without asking again.
	req := visit("/vault", "198.51.100.7", uaFirefoxLinux)
	req.AddCookie(c)
	if got := e.request(req); got.status != 302 || got.header.Get("Location") != "https://example.com/secret" {
		t.Fatalf("with the cookie: %d %v", got.status, got.header)
	}
	// A forged or altered cookie does not.
	req = visit("/vault", "198.51.100.7", uaFirefoxLinux)
	req.AddCookie(&http.Cookie{Name: "lb_unlock", Value: c.Value[:len(c.Value)-2] + "AA"})
	if got := e.request(req); got.status != 200 {
		t.Fatalf("with a forged cookie: %d", got.status)
	}

	// API clients send the password in a header.
	if got := e.request(visit("/vault", "198.51.100.8", "curl/8.4.0", "X-Link-Password", pw)); got.status != 302 || got.header.Get("Location") != "https://example.com/secret" {
		t.Fatalf("X-Link-Password: %d %s", got.status, got.raw)
	}
	wantProblem(t, e.request(visit("/vault", "198.51.100.8", "curl/8.4.0", "X-Link-Password", "nope")), 401, "unauthorized")

	// Form, cookie and header: three clicks; the form itself none.
	e.flush()
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("clicks"); got != float64(3) {
		t.Fatalf("clicks = %v, want 3", got)
	}

	// The cookie ends with links.unlock_ttl.
	e.clock.Add(24*time.Hour + time.Second)
	req = visit("/vault", "198.51.100.7", uaFirefoxLinux)
	req.AddCookie(c)
	if got := e.request(req); got.status != 200 || !strings.Contains(string(got.raw), "<form") {
		t.Fatalf("with an expired cookie: %d", got.status)
	}

	// Guesses are limited per link and address: 10 a minute.
	for i := 0; i < 10; i++ {
		if got := e.request(passwordPost("/vault", "203.0.113.9", fmt.Sprintf("guess-%d", i))); got.status != 401 {
			t.Fatalf("guess %d: %d", i, got.status)
		}
	}
	limited := e.request(passwordPost("/vault", "203.0.113.9", pw))
	if limited.status != 429 || limited.header.Get("Retry-After") == "" || !strings.Contains(string(limited.raw), "Too many") {
		t.Fatalf("11th guess: %d %v %s", limited.status, limited.header, limited.raw)
	}
	wantProblem(t, e.request(visit("/vault", "203.0.113.9", "curl/8.4.0", "X-Link-Password", pw)), 429, "rate_limited")
	// Another address still may.
	if got := e.request(passwordPost("/vault", "203.0.113.10", pw)); got.status != 303 {
		t.Fatalf("another address: %d", got.status)
	}
	e.clock.Add(time.Minute)
	if got := e.request(passwordPost("/vault", "203.0.113.9", pw)); got.status != 303 {
		t.Fatalf("a minute later: %d", got.status)
	}

	// A new password ends every unlock; "" removes it.
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"password":"another-secret"}`, 200)
	req = visit("/vault", "198.51.100.7", uaFirefoxLinux)
	fresh := e.request(passwordPost("/vault", "198.51.100.7", "another-secret"))
	req.AddCookie((&http.Response{Header: fresh.header}).Cookies()[0])
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"password":"yet-another-one"}`, 200)
	if got := e.request(req); got.status != 200 {
		t.Fatalf("an unlock of the old password: %d", got.status)
	}
	if got := e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"password":""}`, 200); got.path("has_password") != false {
		t.Fatalf("password removed: %s", got.raw)
	}
	if got := e.request(visit("/vault", "198.51.100.7", uaFirefoxLinux)); got.status != 302 {
		t.Fatalf("without a password: %d", got.status)
	}

	// The password never reaches a log.
	for _, secret := range []string{pw, "another-secret", "yet-another-one", "guess-3"} {
		if strings.Contains(e.logs.String(), secret) {
			t.Fatalf("a password is in the log:\n%s", e.logs.String())
		}
	}
}

func TestLinkPasswordSecureCookie(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) {
		c.BaseURL = &url.URL{Scheme: "https", Host: "lb.test"}
		c.UnlockTTL = time.Hour
	})
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/x","alias":"sec","password":"swordfish"}`, 201)
	r := e.request(passwordPost("/sec", "198.51.100.7", "swordfish"))
	cookies := (&http.Response{Header: r.header}).Cookies()
	if r.status != 303 || len(cookies) != 1 || !cookies[0].Secure || cookies[0].MaxAge != 3600 {
		t.Fatalf("https cookie: %d %v", r.status, r.header["Set-Cookie"])
	}
}

// writeGeoIP writes a country database as geo_test.go does and opens it.
func writeGeoIP(t testing.TB, networks map[string]string) *analytics.GeoIP {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoIP2-Country"})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, iso := range networks {
		_, network, _ := net.ParseCIDR(cidr)
		if err := tree.Insert(network, mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(iso)}}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "country.mmdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	geo, err := analytics.OpenGeoIP(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { geo.Close() })
	return geo
}

func TestLinkRules(t *testing.T) {
	t.Parallel()
	geo := writeGeoIP(t, map[string]string{"81.2.69.0/24": "GB", "2.16.0.0/16": "FR"})
	e := newEnvWith(t, func(d *Deps) { d.Geo = geo })
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/default","alias":"where","rules":[
		{"if":{"query":{"name":"src","value":"qr"}},"then":"https://example.com/qr"},
		{"if":{"country":"gb"},"then":"https://example.com/gb"},
		{"if":{"device":"mobile","os":"iOS"},"then":"https://example.com/ios"},
		{"if":{"language":"de"},"then":"https://example.com/de"},
		{"if":{"browser":"firefox"},"then":"https://example.com/firefox"},
		{"if":{"device":"desktop","country":"FR"},"then":"https://example.com/fr-desktop"}]}`, 201)
	if got := r.path("rules", 1, "if", "country"); got != "GB" {
		t.Fatalf("country stored as %v", got)
	}
	for _, c := range []struct {
		name, path, addr, ua, lang, want string
	}{
		{"default", "/where", "192.0.2.10", uaChromeWin, "en-US,en;q=0.9", "https://example.com/default"},
		{"query", "/where?src=qr", "81.2.69.160", uaFirefoxLinux, "de", "https://example.com/qr"},
		{"query other value", "/where?src=mail", "192.0.2.10", uaChromeWin, "", "https://example.com/default"},
		{"country", "/where", "81.2.69.160", uaChromeWin, "de", "https://example.com/gb"},
		{"device and os", "/where", "192.0.2.10", uaSafariIPhone, "de-AT", "https://example.com/ios"},
		{"language primary tag", "/where", "192.0.2.10", uaChromeWin, "de-AT,de;q=0.9,en;q=0.5", "https://example.com/de"},
		{"language preferred by q", "/where", "192.0.2.10", uaChromeWin, "en;q=0.3,de-CH;q=0.8", "https://example.com/de"},
		{"language not preferred", "/where", "192.0.2.10", uaChromeWin, "en,de;q=0.5", "https://example.com/default"},
		{"browser", "/where", "192.0.2.10", uaFirefoxLinux, "en", "https://example.com/firefox"},
		{"every condition of a rule", "/where", "2.16.3.4", uaChromeWin, "fr", "https://example.com/fr-desktop"},
		{"one condition short", "/where", "2.16.3.4", uaSafariIPhone + " x", "fr", "https://example.com/ios"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := e.request(visit(c.path, c.addr, c.ua, "Accept-Language", c.lang))
			if got.status != 302 || got.header.Get("Location") != c.want {
				t.Fatalf("%d Location %q, want %q", got.status, got.header.Get("Location"), c.want)
			}
		})
	}
	// The UTM values of the link apply to a rule's destination too.
	e.do("PATCH", "/v1/links/"+r.str("id"), e.writeKey, `{"utm_source":"news"}`, 200)
	if got := e.request(visit("/where", "81.2.69.160", uaChromeWin)); got.header.Get("Location") != "https://example.com/gb?utm_source=news" {
		t.Fatalf("rule with UTM: %q", got.header.Get("Location"))
	}
	// PATCH "rules": [] removes them.
	e.do("PATCH", "/v1/links/"+r.str("id"), e.writeKey, `{"rules":[],"utm_source":""}`, 200)
	if got := e.request(visit("/where", "81.2.69.160", uaChromeWin)); got.header.Get("Location") != "https://example.com/default" {
		t.Fatalf("after removing the rules: %q", got.header.Get("Location"))
	}
}

func TestLinkVariants(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"ab","variants":[
		{"destination_url":"https://example.com/a","weight":50},
		{"destination_url":"https://example.com/b","weight":30},
		{"destination_url":"https://example.com/c","weight":20}]}`, 201)
	if got := r.path("variants", 1, "weight"); got != float64(30) {
		t.Fatalf("variants: %s", r.raw)
	}
	// A visitor keeps their variant.
	first := e.request(visit("/ab", "198.51.100.20", uaChromeWin)).header.Get("Location")
	for i := 0; i < 20; i++ {
		if got := e.request(visit("/ab", "198.51.100.20", uaChromeWin)).header.Get("Location"); got != first {
			t.Fatalf("visit %d went to %q, first to %q", i, got, first)
		}
	}
	// The split follows the weights within ±3 % over 10,000 visitors.
	const n = 10_000
	counts := map[string]int{}
	for i := 0; i < n; i++ {
		req := visit("/ab", fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), uaChromeWin)
		w := httptest.NewRecorder()
		e.srv.ServeHTTP(w, req)
		if w.Code != 302 {
			t.Fatalf("status %d", w.Code)
		}
		counts[w.Header().Get("Location")]++
	}
	for dest, weight := range map[string]int{"https://example.com/a": 50, "https://example.com/b": 30, "https://example.com/c": 20} {
		share := float64(counts[dest]) * 100 / n
		if share < float64(weight)-3 || share > float64(weight)+3 {
			t.Errorf("%s got %.1f %% of the visitors, want %d ± 3 %%", dest, share, weight)
		}
	}
	if len(counts) != 3 {
		t.Fatalf("destinations %v", counts)
	}

	// Rules come before the split.
	e.do("PATCH", "/v1/links/"+r.str("id"), e.writeKey, `{"rules":[{"if":{"query":{"name":"v","value":"x"}},"then":"https://example.com/x"}]}`, 200)
	if got := e.request(visit("/ab?v=x", "198.51.100.20", uaChromeWin)).header.Get("Location"); got != "https://example.com/x" {
		t.Fatalf("rule before variants: %q", got)
	}
	if got := e.request(visit("/ab", "198.51.100.20", uaChromeWin)).header.Get("Location"); got != first {
		t.Fatalf("no rule: %q, want %q", got, first)
	}
}

func TestLinkSocialCard(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/sale","alias":"card",
		"og":{"title":"Spring <sale> \"30%\"","description":"All & more","image_url":"https://example.com/card.png"}}`, 201)
	id := r.str("id")
	if got := r.path("og", "title"); got != `Spring <sale> "30%"` {
		t.Fatalf("og: %s", r.raw)
	}
	bots := []string{
		"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
		"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
		"Twitterbot/1.0",
		"LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
		"WhatsApp/2.23.20.0",
		"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
		"TelegramBot (like TwitterBot)",
	}
	for _, ua := range bots {
		got := e.request(visit("/card", "192.0.2.30", ua))
		body := string(got.raw)
		if got.status != 200 || got.header.Get("Location") != "" ||
			!strings.Contains(body, `<meta property="og:title" content="Spring &lt;sale&gt; &#34;30%&#34;">`) ||
			!strings.Contains(body, `<meta property="og:description" content="All &amp; more">`) ||
			!strings.Contains(body, `<meta property="og:image" content="https://example.com/card.png">`) ||
			!strings.Contains(body, `<meta name="twitter:card" content="summary_large_image">`) ||
			!strings.Contains(body, `<meta property="og:url" content="http://lb.test/card">`) {
			t.Fatalf("%s: %d %s", ua, got.status, body)
		}
	}
	for _, ua := range []string{uaChromeWin, uaSafariIPhone, "curl/8.4.0"} {
		if got := e.request(visit("/card", "192.0.2.31", ua)); got.status != 302 || got.header.Get("Location") != "https://example.com/sale" {
			t.Fatalf("%s: %d", ua, got.status)
		}
	}
	// Every preview is a bot click, never a click of a person.
	e.flush()
	a := e.do("GET", "/v1/analytics/links/"+id+"?range=all&exclude_bots=true", e.readKey, "", 200)
	if got := a.path("totals").(map[string]any); got["clicks"] != float64(2) || got["bot_clicks"] != float64(len(bots)+1) {
		t.Fatalf("totals %v: want 2 people (curl is a bot too) and %d bots", got, len(bots)+1)
	}
}

func TestLinkControlsBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rules21 := strings.Repeat(`{"if":{"device":"mobile"},"then":"https://example.com/m"},`, 21)
	for _, c := range []struct{ name, body, field string }{
		{"weights not summing to 100", `{"destination_url":"https://example.com/","variants":[{"destination_url":"https://example.com/a","weight":50},{"destination_url":"https://example.com/b","weight":40}]}`, "variants"},
		{"a weight of 0", `{"destination_url":"https://example.com/","variants":[{"destination_url":"https://example.com/a","weight":0},{"destination_url":"https://example.com/b","weight":100}]}`, "variants[0].weight"},
		{"one variant", `{"destination_url":"https://example.com/","variants":[{"destination_url":"https://example.com/a","weight":100}]}`, "variants"},
		{"a variant pointing back here", `{"destination_url":"https://example.com/","variants":[{"destination_url":"http://lb.test/x","weight":50},{"destination_url":"https://example.com/b","weight":50}]}`, "variants[0].destination_url"},
		{"a rule with no condition", `{"destination_url":"https://example.com/","rules":[{"if":{},"then":"https://example.com/a"}]}`, "rules[0].if"},
		{"a rule to nowhere", `{"destination_url":"https://example.com/","rules":[{"if":{"country":"DE"},"then":"ftp://example.com/a"}]}`, "rules[0].then"},
		{"a bad country", `{"destination_url":"https://example.com/","rules":[{"if":{"country":"Germany"},"then":"https://example.com/a"}]}`, "rules[0].if.country"},
		{"a bad device", `{"destination_url":"https://example.com/","rules":[{"if":{"device":"fridge"},"then":"https://example.com/a"}]}`, "rules[0].if.device"},
		{"21 rules", `{"destination_url":"https://example.com/","rules":[` + strings.TrimSuffix(rules21, ",") + `]}`, "rules"},
		{"a short password", `{"destination_url":"https://example.com/","password":"abc"}`, "password"},
		{"an image that is no URL", `{"destination_url":"https://example.com/","og":{"title":"t","image_url":"javascript:alert(1)"}}`, "og.image_url"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.request(newRequest("POST", "/v1/links", e.writeKey, c.body))
			wantProblem(t, r, 422, "validation_failed")
			if !strings.Contains(string(r.raw), `"field":"`+c.field+`"`) {
				t.Fatalf("want field %s: %s", c.field, r.raw)
			}
		})
	}
	r := e.request(newRequest("POST", "/api/urls", e.writeKey, `{"originalUrl":"https://example.com/","password":"swordfish"}`))
	wantProblem(t, r, 422, "validation_failed")
	if !strings.Contains(string(r.raw), `"field":"password"`) || strings.Contains(string(r.raw), "swordfish") {
		t.Fatalf("simple API: %s", r.raw)
	}
	// Nothing was stored.
	if got := e.do("GET", "/v1/links", e.readKey, "", 200).path("meta", "total"); got != float64(0) {
		t.Fatalf("links stored: %v", got)
	}
}
