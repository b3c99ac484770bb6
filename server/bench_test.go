package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// BenchmarkRedirect measures the redirect handler (lookup, click hand-off,
// headers) without the network; bench/redirects.sh measures it over HTTP.
func BenchmarkRedirect(b *testing.B) {
	e := newEnv(b)
	for i := 0; i < 100; i++ {
		l := &link.Link{WorkspaceID: e.ws, Alias: fmt.Sprintf("c%d", i), DestinationURL: "https://example.com/page", RedirectCode: 302}
		if err := e.srv.links.CreateLink(b.Context(), l); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			req := httptest.NewRequest("GET", "/c"+fmt.Sprint(i%100), nil)
			w := httptest.NewRecorder()
			e.srv.ServeHTTP(w, req)
			if w.Code != http.StatusFound {
				b.Fatalf("status %d", w.Code)
			}
			i++
		}
	})
}

// BenchmarkLoops measures the loop check every redirect makes on its
// destination.
func BenchmarkLoops(b *testing.B) {
	e := newEnv(b)
	for _, dest := range []string{"https://example.com/landing?utm_source=x", "http://192.0.2.1:8080/x"} {
		b.Run(dest, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if e.srv.loops(dest) {
					b.Fatal("loops")
				}
			}
		})
	}
}

// BenchmarkRedirectBrowserHeaders is BenchmarkRedirect with what a browser
// sends, a user agent and a Referer, and with a hostile client's 60 KB
// ones: what a click keeps of them is cut on the redirect.
func BenchmarkRedirectBrowserHeaders(b *testing.B) {
	for _, bc := range []struct{ name, ua, ref string }{
		{"browser", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
			"https://news.ycombinator.com/item?id=41234567"},
		{"huge", strings.Repeat("Mozilla/5.0 ", 5<<10), "https://" + strings.Repeat("a", 60<<10) + "/"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := newEnv(b)
			e.recorder.SetQueueBytes(1 << 30) // the redirect, not the drops, is measured
			l := &link.Link{WorkspaceID: e.ws, Alias: "c", DestinationURL: "https://example.com/page", RedirectCode: 302}
			if err := e.srv.links.CreateLink(b.Context(), l); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest("GET", "/c", nil)
					req.Header.Set("User-Agent", bc.ua)
					req.Header.Set("Referer", bc.ref)
					w := httptest.NewRecorder()
					e.srv.ServeHTTP(w, req)
					if w.Code != http.StatusFound {
						b.Fatalf("status %d", w.Code)
					}
				}
			})
		})
	}
}

// BenchmarkAuthenticatedGet measures one API read through the whole
// authentication pipeline: with an API key (hash lookup, and the check that
// the key's creator is still a member who is not disabled) and with a login
// token (JWT, the user's session in memory, the membership).
func BenchmarkAuthenticatedGet(b *testing.B) {
	e := newEnv(b, func(c *Config) { c.Plans = map[link.Plan]int{link.PlanFree: 0} }) // unlimited
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"bench"}`, 201).str("id")
	for _, cred := range []struct{ name, token string }{
		{"key made by a user", e.readKey},
		{"key made by a key", e.createKey(e.writeKey, "made by a key", "read")},
		{"login token", e.adminToken},
	} {
		b.Run(cred.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("GET", "/v1/links/"+id, nil)
				req.Header.Set("Authorization", "Bearer "+cred.token)
				w := httptest.NewRecorder()
				e.srv.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
