package server

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// CORS lets a browser application on another origin call the API with an
// API key (server.cors_origins). The API reads no cookies and never allows
// credentials: a key or token travels in a header the application sets
// itself, so the browser's ambient credentials never reach the API.
const (
	// corsAllowMethods are the methods of the API.
	corsAllowMethods = "GET, HEAD, POST, PATCH, DELETE"
	// corsAllowHeaders are the request headers an API client sends.
	corsAllowHeaders = "Authorization, X-API-Key, Content-Type, X-Workspace-Id, If-None-Match"
	// corsExposeHeaders are the answer's headers a client reads beyond
	// the ones browsers always show: the rate limit, when to retry, the
	// 401 challenge, a QR image's ETag and an export's file name.
	corsExposeHeaders = "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, " +
		"WWW-Authenticate, ETag, Location, Content-Disposition"
	// corsMaxAge is how long, in seconds, a browser may reuse a preflight's
	// answer (Chromium caps it at two hours).
	corsMaxAge = 3600
)

// corsAnyOrigin in server.cors_origins allows every origin.
const corsAnyOrigin = "*"

// schemeRE is the syntax of a URL scheme (RFC 3986 section 3.1).
var schemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*$`)

// ParseCORSOrigins checks the origins of server.cors_origins and returns
// them as browsers send them in the Origin header: scheme and host in
// lower case, without a default port (80 for http, 443 for https) or a
// trailing slash. Each is scheme://host[:port] with no path, query or user,
// or "*" for any origin.
func ParseCORSOrigins(origins []string) ([]string, error) {
	out := make([]string, 0, len(origins))
	for _, raw := range origins {
		o, err := parseOrigin(strings.TrimSpace(raw))
		if err != nil {
			return nil, fmt.Errorf("%q is not an origin: %w (write scheme://host[:port], like https://app.example.com, or * for any origin)", raw, err)
		}
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out, nil
}

func parseOrigin(raw string) (string, error) {
	if raw == corsAnyOrigin {
		return raw, nil
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || !schemeRE.MatchString(scheme) {
		return "", fmt.Errorf("no scheme")
	}
	rest = strings.TrimSuffix(rest, "/") // as people often copy it from the address bar
	if strings.ContainsAny(rest, "/?#") {
		return "", fmt.Errorf("an origin has no path, query or fragment")
	}
	if strings.Contains(rest, "@") {
		return "", fmt.Errorf("an origin has no user")
	}
	u, err := url.Parse(scheme + "://" + rest)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return "", fmt.Errorf("no host")
	}
	for _, c := range u.Hostname() {
		if c > 0x7e {
			return "", fmt.Errorf("write an internationalised host in its ASCII (xn--) form, as browsers send it")
		}
	}
	scheme, host, port := strings.ToLower(scheme), strings.ToLower(u.Hostname()), u.Port()
	if strings.Contains(host, "*") {
		// Browsers send one origin, never a pattern: it would match nothing.
		return "", fmt.Errorf("a wildcard such as https://*.example.com matches no origin: list each origin, or * alone for any")
	}
	if !strings.HasPrefix(u.Host, "[") && strings.IndexFunc(host, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_')
	}) >= 0 {
		return "", fmt.Errorf("host %q has characters no browser sends in an origin", host)
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("port %s is out of range", port)
		}
		if scheme == "http" && n == 80 || scheme == "https" && n == 443 {
			port = ""
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}

// corsPolicy holds the allowed origins; nil allows none and adds no
// headers at all.
type corsPolicy struct {
	anyOrigin bool
	origins   map[string]bool
}

// newCORSPolicy returns the policy for origins as ParseCORSOrigins
// returns them, or nil when there are none.
func newCORSPolicy(origins []string) *corsPolicy {
	if len(origins) == 0 {
		return nil
	}
	p := &corsPolicy{origins: map[string]bool{}}
	for _, o := range origins {
		if o == corsAnyOrigin {
			p.anyOrigin = true
		}
		p.origins[o] = true
	}
	return p
}

// isAPIPath reports whether path is part of the JSON API, the only part
// of linkbolt other origins may call: redirects and pages are not.
func isAPIPath(path string) bool {
	return strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/api/")
}

// serveCORS adds the CORS headers to an API request from an allowed
// origin, and answers it when it is a preflight. It reports whether the
// request is answered. A preflight needs no credential and is not counted
// against any rate limit: it never reaches the router.
func (p *corsPolicy) serveCORS(w http.ResponseWriter, r *http.Request) bool {
	if !isAPIPath(r.URL.Path) {
		return false
	}
	h := w.Header()
	// The answer depends on the Origin header, whatever it holds.
	h.Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	if origin == "" || !p.anyOrigin && !p.origins[origin] {
		return false // not a cross-origin request, or not one allowed
	}
	allow := origin
	if p.anyOrigin {
		allow = corsAnyOrigin
	}
	h.Set("Access-Control-Allow-Origin", allow)
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		return false
	}
	h.Set("Access-Control-Allow-Methods", corsAllowMethods)
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	h.Set("Access-Control-Max-Age", strconv.Itoa(corsMaxAge))
	w.WriteHeader(http.StatusNoContent)
	return true
}
