package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// BenchmarkRedirectControls compares the redirect of a plain link with
// that of a link with 20 rules (none of which matches, so that every one
// is tried) and a variant split, for a browser's request with a user
// agent, Accept-Language and an address the GeoIP database knows. The
// issue asks the second to cost at most 10 % more than the first.
func BenchmarkRedirectControls(b *testing.B) {
	geo := writeGeoIP(b, map[string]string{"81.2.69.0/24": "GB", "2.16.0.0/16": "FR"})
	e := newEnvWith(b, func(d *Deps) { d.Geo = geo })
	e.recorder.SetQueueBytes(1 << 30) // the redirect, not the drops, is measured
	plain := &link.Link{WorkspaceID: e.ws, Alias: "plain", DestinationURL: "https://example.com/page", RedirectCode: 302}
	controlled := &link.Link{WorkspaceID: e.ws, Alias: "ctl", DestinationURL: "https://example.com/page", RedirectCode: 302,
		Variants: []link.Variant{{DestinationURL: "https://example.com/a", Weight: 50}, {DestinationURL: "https://example.com/b", Weight: 50}}}
	conds := []link.RuleCondition{
		{Device: "tablet"}, {OS: "Android"}, {Browser: "Safari"}, {Country: "DE"}, {Language: "ja"},
		{Query: &link.QueryCondition{Name: "src", Value: "qr"}}, {Device: "mobile", OS: "iOS"}, {Country: "FR", Language: "fr"},
	}
	for i := 0; i < link.MaxRules; i++ {
		controlled.Rules = append(controlled.Rules, link.Rule{If: conds[i%len(conds)], Then: fmt.Sprintf("https://example.com/r%d", i)})
	}
	for _, l := range []*link.Link{plain, controlled} {
		if err := l.Validate(nil); err != nil {
			b.Fatal(err)
		}
		if err := e.srv.links.CreateLink(b.Context(), l); err != nil {
			b.Fatal(err)
		}
	}
	serve := func(b *testing.B, path string) {
		req := httptest.NewRequest("GET", path, nil)
		req.RemoteAddr = "81.2.69.160:4444"
		req.Header.Set("User-Agent", uaChromeWin)
		req.Header.Set("Accept-Language", "en-GB,en;q=0.9")
		w := httptest.NewRecorder()
		e.srv.ServeHTTP(w, req)
		if w.Code != http.StatusFound {
			b.Fatalf("status %d", w.Code)
		}
	}
	for _, bc := range []struct{ name, path string }{{"plain", "/plain"}, {"rules20+variants", "/ctl"}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					serve(b, bc.path)
				}
			})
		})
	}
	// interleaved alternates the two, one request each in turn, and times
	// each request: both see the same load of a busy machine, so the ratio
	// (ctl/plain) holds steadier than that of the two runs above.
	b.Run("interleaved", func(b *testing.B) {
		var plainNs, ctlNs time.Duration
		for b.Loop() {
			t0 := time.Now()
			serve(b, "/plain")
			t1 := time.Now()
			serve(b, "/ctl")
			t2 := time.Now()
			plainNs += t1.Sub(t0)
			ctlNs += t2.Sub(t1)
		}
		b.ReportMetric(float64(plainNs.Nanoseconds())/float64(b.N), "plain-ns/op")
		b.ReportMetric(float64(ctlNs.Nanoseconds())/float64(b.N), "ctl-ns/op")
		b.ReportMetric(float64(ctlNs)/float64(plainNs), "ctl/plain")
	})
}

// BenchmarkPickDestination measures what the controls add to a redirect:
// trying 20 rules that do not match and picking the visitor's variant.
func BenchmarkPickDestination(b *testing.B) {
	geo := writeGeoIP(b, map[string]string{"81.2.69.0/24": "GB"})
	e := newEnvWith(b, func(d *Deps) { d.Geo = geo })
	l := &link.Link{ID: "lnk_1", Variants: []link.Variant{{DestinationURL: "https://example.com/a", Weight: 50}, {DestinationURL: "https://example.com/b", Weight: 50}}}
	conds := []link.RuleCondition{
		{Device: "tablet"}, {OS: "Android"}, {Browser: "Safari"}, {Country: "DE"}, {Language: "ja"},
		{Query: &link.QueryCondition{Name: "src", Value: "qr"}}, {Device: "mobile", OS: "iOS"}, {Country: "FR", Language: "fr"},
	}
	for i := 0; i < link.MaxRules; i++ {
		l.Rules = append(l.Rules, link.Rule{If: conds[i%len(conds)], Then: "https://example.com/r"})
	}
	req := httptest.NewRequest("GET", "/ctl", nil)
	req.RemoteAddr = "81.2.69.160:4444"
	req.Header.Set("User-Agent", uaChromeWin)
	req.Header.Set("Accept-Language", "en-GB,en;q=0.9")
	b.ReportAllocs()
	for b.Loop() {
		if d, _ := e.srv.pickDestination(req, l); d != "https://example.com/a" && d != "https://example.com/b" {
			b.Fatal(d)
		}
	}
}
