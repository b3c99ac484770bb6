package dashboard

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func newDashboard(t *testing.T) *Dashboard {
	t.Helper()
	d, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func get(d *Dashboard, path string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	d.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	return w
}

func TestServesTheAppForEveryRoute(t *testing.T) {
	d := newDashboard(t)
	for _, path := range []string{"/app/", "/app/links", "/app/keys", "/app/invite", "/app/no/such/page"} {
		w := get(d, path)
		if got, want := w.Code, 200; got != want {
			t.Fatalf("%s: %d, want %d", path, got, want)
		}
		h := w.Header()
		if got, want := h.Get("Cache-Control"), "no-cache"; got != want {
			t.Errorf("%s: Cache-Control %q, want %q", path, got, want)
		}
		if !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Errorf("%s: Content-Type %q", path, h.Get("Content-Type"))
		}
		checkSecurityHeaders(t, path, h)
		if !strings.Contains(w.Body.String(), `src="/app/assets/`+d.AssetName("app.js")+`"`) {
			t.Fatalf("%s: the page does not load the fingerprinted app.js:\n%s", path, w.Body)
		}
		if regexp.MustCompile(`<script>|<script [^>]*>[^<]|<style|\sstyle=|\son[a-z]+=`).MatchString(w.Body.String()) {
			t.Errorf("%s: inline script or style in the page:\n%s", path, w.Body)
		}
	}
}

func checkSecurityHeaders(t *testing.T, path string, h http.Header) {
	t.Helper()
	want := map[string]string{
		"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %s = %q, want %q", path, k, got, v)
		}
	}
}

func TestAssetsAreFingerprintedAndImmutable(t *testing.T) {
	d := newDashboard(t)
	assets := d.Assets()
	for _, src := range []string{"app.js", "api.js", "ui.js", "links.js", "keys.js", "invite.js", "account.js", "app.css", "htm-preact-standalone.js", "uPlot.esm.js", "uPlot.min.css"} {
		name := d.AssetName(src)
		body, ok := assets[name]
		if name == "" || !ok {
			t.Fatalf("no served asset for %s", src)
		}
		sum := sha256.Sum256(body)
		if !strings.Contains(name, "."+hex.EncodeToString(sum[:])[:12]+".") {
			t.Errorf("%s is served as %s, which does not carry its content hash", src, name)
		}
		w := get(d, "/app/assets/"+name)
		if got, want := w.Code, 200; got != want {
			t.Fatalf("%s: %d", name, got)
		}
		if got, want := w.Header().Get("Cache-Control"), "public, max-age=31536000, immutable"; got != want {
			t.Errorf("%s: Cache-Control %q, want %q", name, got, want)
		}
		checkSecurityHeaders(t, name, w.Header())
		if !bytes.Equal(w.Body.Bytes(), body) {
			t.Errorf("%s: served body differs", name)
		}
	}
	// Imports name the fingerprinted modules, so a new build never mixes
	// with a cached old one.
	app := string(assets[d.AssetName("app.js")])
	for _, dep := range []string{"api.js", "htm-preact-standalone.js", "links.js"} {
		if !strings.Contains(app, "'./"+d.AssetName(dep)+"'") {
			t.Errorf("app.js does not import %s by its fingerprinted name", dep)
		}
	}
	w := get(d, "/app/assets/app.00000000.js")
	if got, want := w.Code, 404; got != want {
		t.Errorf("an unknown asset: %d, want %d", got, want)
	}
	if got := w.Header().Get("Cache-Control"); got != "no-store" {
		t.Errorf("an unknown asset: Cache-Control %q", got)
	}
}

// TestVendoredFilesMatchTheirChecksums checks the vendored libraries
// against the SHA256SUMS that vendor.sh wrote when it fetched them.
func TestVendoredFilesMatchTheirChecksums(t *testing.T) {
	dir := filepath.Join("assets", "vendor")
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checked := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		want, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: bad line %q", line)
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s: sha256 %s, SHA256SUMS says %s: run dashboard/vendor.sh", name, got, want)
		}
		checked++
	}
	if checked < 3 {
		t.Fatalf("SHA256SUMS lists %d files", checked)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(entries), checked+1; got != want {
		t.Errorf("%d files in %s, SHA256SUMS lists %d: every vendored file has a checksum", got-1, dir, checked)
	}
}

// TestJavaScriptBudget keeps all the dashboard's JavaScript under 150 KB
// gzipped.
func TestJavaScriptBudget(t *testing.T) {
	d := newDashboard(t)
	var total int
	for name, body := range d.Assets() {
		if !strings.HasSuffix(name, ".js") {
			continue
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(body)
		_ = zw.Close()
		total += buf.Len()
	}
	if total == 0 || total > 150*1024 {
		t.Fatalf("the dashboard's JavaScript is %d bytes gzipped, the budget is %d", total, 150*1024)
	}
	t.Logf("JavaScript: %d bytes gzipped", total)
}
