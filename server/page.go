package server

import (
	"html/template"
	"net/http"
)

// Every HTML page the server writes (the status page at /, setup, the
// password link's form, the 404 and 410 pages, a link's preview, password
// form and social card, a custom domain's root) goes out through
// writePage, so that none lacks the headers the dashboard's pages carry:
// a policy that runs no script but the page's own (by hash), no framing,
// no sniffing, no referrer. The dashboard sets the same in its package.

// writePage answers page with data, status and the page headers with csp;
// a HEAD gets the headers alone.
func writePage(w http.ResponseWriter, r *http.Request, status int, csp string, page *template.Template, data any) {
	setPageHeaders(w.Header(), csp)
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_ = page.Execute(w, data)
	}
}

// setPageHeaders sets the headers of an HTML page. csp must forbid
// framing (frame-ancestors 'none') and inline script but by hash;
// X-Frame-Options says the same to browsers without CSP 2.
func setPageHeaders(h http.Header, csp string) {
	h.Set("Content-Type", "text/html; charset=utf-8")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-store")
	}
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// pageCSP is the Content-Security-Policy of the pages without script:
// inline style only, nothing else, no form posted anywhere.
const pageCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// scriptPageCSP is the policy of a page whose one inline script is
// script (setup, a password link's form): that script alone runs, by its
// hash, and may call this server's API. Forms go nowhere: they are sent
// by the script, so a page whose script did not run cannot put a
// password in a URL.
func scriptPageCSP(script string) string {
	return "default-src 'none'; script-src 'sha256-" + cspHash(script) + "'; connect-src 'self'; style-src 'unsafe-inline'; " +
		"img-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
}
