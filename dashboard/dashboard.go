// Package dashboard serves linkbolt's web dashboard: a single-page app of
// embedded files under /app/ that is a client of the public /v1 API and
// nothing else. Its assets are served under names that carry their content
// hash, cached for a year; its HTML is never cached.
package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"
	"sort"
	"strings"
)

//go:embed index.html assets
var files embed.FS

// Prefix is the path the dashboard is served under.
const Prefix = "/app/"

// ContentSecurityPolicy is sent with every answer of the dashboard: nothing
// from another origin, no inline script or style, no eval, no framing.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// Dashboard holds the embedded app with its assets renamed by content.
type Dashboard struct {
	index []byte
	// assets maps a fingerprinted name ("app.3f9a1c2b.js") to its file.
	assets map[string]asset
	// names maps a source name ("app.js") to its fingerprinted name.
	names map[string]string
}

type asset struct {
	body        []byte
	contentType string
}

// reference finds "./name", "./vendor/name" and "/app/assets/name"
// references of one asset in another (ES module imports, the index's script
// and link tags). Assets are served flat: the vendor folder is dropped.
var reference = regexp.MustCompile(`(["'])(\./|/app/assets/)(?:vendor/)?([A-Za-z0-9_.-]+\.(?:js|css))(["'])`)

// New loads the embedded files and fingerprints them.
func New() (*Dashboard, error) {
	d := &Dashboard{assets: map[string]asset{}, names: map[string]string{}}
	src := map[string][]byte{}
	err := fs.WalkDir(files, "assets", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if ext := path.Ext(p); ext != ".js" && ext != ".css" {
			return nil // licences and checksums stay in the source tree
		}
		b, err := files.ReadFile(p)
		src[path.Base(p)] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	// A file's name depends on its content after its references are
	// renamed, so the files it refers to are named first.
	visiting := map[string]bool{}
	var name func(n string) (string, error)
	name = func(n string) (string, error) {
		if fp, ok := d.names[n]; ok {
			return fp, nil
		}
		b, ok := src[n]
		if !ok {
			return "", fmt.Errorf("dashboard: reference to missing asset %q", n)
		}
		if visiting[n] {
			return "", fmt.Errorf("dashboard: assets refer to each other in a cycle through %q", n)
		}
		visiting[n] = true
		out, err := d.rename(b, name)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(out)
		ext := path.Ext(n)
		fp := strings.TrimSuffix(n, ext) + "." + hex.EncodeToString(sum[:])[:12] + ext
		d.names[n] = fp
		d.assets[fp] = asset{body: out, contentType: mime.TypeByExtension(ext)}
		return fp, nil
	}
	keys := make([]string, 0, len(src))
	for n := range src {
		keys = append(keys, n)
	}
	sort.Strings(keys)
	for _, n := range keys {
		if _, err := name(n); err != nil {
			return nil, err
		}
	}
	index, err := files.ReadFile("index.html")
	if err != nil {
		return nil, err
	}
	if d.index, err = d.rename(index, name); err != nil {
		return nil, err
	}
	return d, nil
}

// rename replaces the references in b by the fingerprinted names.
func (d *Dashboard) rename(b []byte, name func(string) (string, error)) ([]byte, error) {
	var firstErr error
	out := reference.ReplaceAllFunc(b, func(m []byte) []byte {
		g := reference.FindSubmatch(m)
		fp, err := name(string(g[3]))
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return m
		}
		return bytes.Join([][]byte{g[1], g[2], []byte(fp), g[4]}, nil)
	})
	return out, firstErr
}

// AssetName returns the fingerprinted name of a source asset ("app.js"),
// or "" when there is none.
func (d *Dashboard) AssetName(source string) string { return d.names[source] }

// Assets returns the served assets: fingerprinted name → content.
func (d *Dashboard) Assets() map[string][]byte {
	m := make(map[string][]byte, len(d.assets))
	for n, a := range d.assets {
		m[n] = a.body
	}
	return m
}

// ServeHTTP answers every path under /app/: an asset under /app/assets/,
// and the app's page for any other path (its own routes, read by the app).
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if n, ok := strings.CutPrefix(r.URL.Path, Prefix+"assets/"); ok {
		a, found := d.assets[n]
		if !found {
			// An asset of an older build: the page that asked for it is
			// stale, and a reload fetches the new one.
			h.Set("Cache-Control", "no-store")
			http.Error(w, "404 asset not found: reload the page", http.StatusNotFound)
			return
		}
		h.Set("Content-Type", a.contentType)
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		_, _ = w.Write(a.body)
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	_, _ = w.Write(d.index)
}
