package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"golang.org/x/net/idna"

	"github.com/linkbolt/linkbolt/link"
)

// domainRoutes registers the routes of custom domains.
func (s *Server) domainRoutes() {
	s.handle("GET", "/v1/domains", accessRead, s.handleListDomains)
	s.handle("POST", "/v1/domains", accessWrite, s.handleCreateDomain)
	s.handle("GET", "/v1/domains/:id", accessRead, s.handleGetDomain)
	s.handle("PATCH", "/v1/domains/:id", accessWrite, s.handleUpdateDomain)
	s.handle("DELETE", "/v1/domains/:id", accessWrite, s.handleDeleteDomain)
	s.handle("POST", "/v1/domains/:id/verify", accessWrite, s.handleVerifyDomain)
}

// normalizeHostname is link.NormalizeHostname with the IDNA lookup profile
// of UTS #46 (what browsers do with a typed name).
func normalizeHostname(raw string) (host, problem string) {
	return link.NormalizeHostname(raw, idna.Lookup.ToASCII)
}

type domainVerification struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

type domainResponse struct {
	ID              string             `json:"id"`
	Hostname        string             `json:"hostname"`
	Verified        bool               `json:"verified"`
	VerifiedAt      *string            `json:"verified_at"`
	Verification    domainVerification `json:"verification"`
	RootRedirectURL *string            `json:"root_redirect_url"`
	NotFoundURL     *string            `json:"not_found_url"`
	// The app files the domain serves, as JSON; null for none.
	AppleAppSiteAssociation json.RawMessage `json:"apple_app_site_association"`
	AndroidAssetLinks       json.RawMessage `json:"android_asset_links"`
	Links                   int             `json:"links"`
	CreatedAt               string          `json:"created_at"`
	UpdatedAt               string          `json:"updated_at"`
}

func newDomainResponse(d *link.Domain) domainResponse {
	out := domainResponse{
		ID: d.ID, Hostname: d.Hostname, Verified: d.Verified,
		Verification:    domainVerification{Type: link.VerificationType, Name: d.VerificationName(), Value: d.VerificationValue()},
		RootRedirectURL: optional(d.RootRedirectURL), NotFoundURL: optional(d.NotFoundURL),
		Links: d.Links, CreatedAt: ts(d.CreatedAt), UpdatedAt: ts(d.UpdatedAt),
	}
	if d.VerifiedAt != nil {
		at := ts(*d.VerifiedAt)
		out.VerifiedAt = &at
	}
	out.AppleAppSiteAssociation, out.AndroidAssetLinks = rawOrNull(d.AppleAppSiteAssociation), rawOrNull(d.AndroidAssetLinks)
	return out
}

// rawOrNull is stored JSON as an answer's value, null for none.
func rawOrNull(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage("null")
	}
	return json.RawMessage(s)
}

// appFile checks a domain's app file sent in a PATCH (absent: nil; null:
// ""): JSON of the kind want ('{' an object, '[' an array), at most
// link.MaxWellKnownFile bytes, kept compact. EINVALID naming field.
func appFile(field string, raw json.RawMessage, want byte) (*string, error) {
	if raw == nil {
		return nil, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fieldError(field, "must be JSON")
	}
	v := b.String()
	kind := map[byte]string{'{': "a JSON object", '[': "a JSON array"}[want]
	switch {
	case v == "null":
		v = ""
	case v[0] != want:
		return nil, fieldError(field, "must be "+kind+", or null to remove it")
	case len(v) > link.MaxWellKnownFile:
		return nil, fieldError(field, fmt.Sprintf("must be at most %d bytes", link.MaxWellKnownFile))
	}
	return &v, nil
}

func (s *Server) handleListDomains(w http.ResponseWriter, r *http.Request, c *caller) error {
	ds, err := s.domains.FindDomains(r.Context(), c.workspace.ID)
	if err != nil {
		return err
	}
	out := make([]domainResponse, 0, len(ds))
	for _, d := range ds {
		out = append(out, newDomainResponse(d))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

type createDomainRequest struct {
	Hostname        string  `json:"hostname"`
	RootRedirectURL *string `json:"root_redirect_url"`
	NotFoundURL     *string `json:"not_found_url"`
}

func (s *Server) handleCreateDomain(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in createDomainRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	d, err := s.createDomain(r, c, in.Hostname, in.RootRedirectURL, in.NotFoundURL)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, newDomainResponse(d))
	return nil
}

// createDomain adds the domain hostname to the caller's workspace, with
// its root and not-found redirects (nil: none), for both APIs.
func (s *Server) createDomain(r *http.Request, c *caller, hostname string, root, notFound *string) (*link.Domain, error) {
	host, problem := normalizeHostname(hostname)
	if problem != "" {
		return nil, fieldError("hostname", problem)
	}
	now := s.now()
	d := &link.Domain{WorkspaceID: c.workspace.ID, Hostname: host, CreatedAt: now, UpdatedAt: now}
	link.DomainUpdate{RootRedirectURL: root, NotFoundURL: notFound}.Apply(d, now)
	if err := d.Validate(s.servedRules); err != nil {
		return nil, err
	}
	if err := s.checkBlockedDomainURLs(root, notFound); err != nil {
		return nil, err
	}
	contested, err := s.proveContestedClaim(r.Context(), d, now)
	if err != nil {
		return nil, err
	}
	if err := s.domains.CreateDomain(r.Context(), d, s.cfg.DomainUnverifiedTTL); err != nil {
		if contested && link.ErrorCode(err) == link.ECONFLICT {
			var le *link.Error
			if errors.As(err, &le) {
				return nil, link.Errorf(link.ECONFLICT, "%s. This workspace's TXT record: %s with the value %s", le.Message, d.VerificationName(), d.VerificationValue())
			}
		}
		return nil, err
	}
	return d, nil
}

// proveContestedClaim prepares d when another workspace holds its
// hostname with a claim it never verified: d gets the token claimToken
// gives, the same at every attempt, so that the TXT record published
// after a 409 proves this claim when it is made again; and d is verified
// at once when that record is there, which lets it take the name over
// (link.CanTakeOver). It reports whether the hostname was so contested.
func (s *Server) proveContestedClaim(ctx context.Context, d *link.Domain, now time.Time) (bool, error) {
	held, err := s.domains.FindDomainByHostname(ctx, d.Hostname)
	if isNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if held.WorkspaceID == d.WorkspaceID || held.Verified {
		return false, nil
	}
	d.VerificationToken = s.claimToken(d.WorkspaceID, d.Hostname)
	if s.domainVerifier.VerifyDomain(ctx, d) == nil {
		d.Verified, d.VerifiedAt = true, &now
	}
	return true, nil
}

// newClaimKey derives the key of claimToken from the server's secret.
func newClaimKey(secret []byte) []byte { return deriveKey(secret, "linkbolt domain claims") }

// claimToken is the verification token of workspace wsID's claim on host
// while another workspace holds it: a MAC of both, so it is the same at
// every attempt and no other workspace's.
func (s *Server) claimToken(wsID, host string) string {
	m := hmac.New(sha256.New, s.claimKey)
	m.Write([]byte(wsID + "\x00" + host))
	tok := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(m.Sum(nil)))
	return tok[:link.VerificationTokenLength]
}

func (s *Server) handleGetDomain(w http.ResponseWriter, r *http.Request, c *caller) error {
	d, err := s.domains.FindDomainByID(r.Context(), c.workspace.ID, c.params.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newDomainResponse(d))
	return nil
}

type updateDomainRequest struct {
	RootRedirectURL         *string         `json:"root_redirect_url"`
	NotFoundURL             *string         `json:"not_found_url"`
	Verified                *bool           `json:"verified"`
	AppleAppSiteAssociation json.RawMessage `json:"apple_app_site_association"`
	AndroidAssetLinks       json.RawMessage `json:"android_asset_links"`
}

// handleUpdateDomain changes a domain's redirects and, for the instance
// admin only, its verified flag: the way to serve a name that public DNS
// cannot verify (a homelab's internal name).
func (s *Server) handleUpdateDomain(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in updateDomainRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Verified != nil && (c.user == nil || !c.user.Admin) {
		return link.Errorf(link.EFORBIDDEN, "only the instance admin may set verified (with a user token); prove control of the domain with POST /v1/domains/{id}/verify instead")
	}
	// Custom domains are read from the database here, not in the write
	// transaction of the update, which checks the rest.
	for _, f := range []struct {
		name string
		url  *string
	}{{"root_redirect_url", in.RootRedirectURL}, {"not_found_url", in.NotFoundURL}} {
		if f.url != nil && strings.TrimSpace(*f.url) != "" {
			if msg := link.CheckDestination(strings.TrimSpace(*f.url), s.servedRules); msg != "" {
				return fieldError(f.name, msg)
			}
		}
	}
	if err := s.checkBlockedDomainURLs(in.RootRedirectURL, in.NotFoundURL); err != nil {
		return err
	}
	aasa, err := appFile("apple_app_site_association", in.AppleAppSiteAssociation, '{')
	if err != nil {
		return err
	}
	assetLinks, err := appFile("android_asset_links", in.AndroidAssetLinks, '[')
	if err != nil {
		return err
	}
	upd := link.DomainUpdate{RootRedirectURL: in.RootRedirectURL, NotFoundURL: in.NotFoundURL, Verified: in.Verified,
		AppleAppSiteAssociation: aasa, AndroidAssetLinks: assetLinks}
	d, err := s.domains.UpdateDomain(r.Context(), c.workspace.ID, c.params.ByName("id"), upd,
		func(d *link.Domain) error { return d.Validate(s.rules) })
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newDomainResponse(d))
	return nil
}

func (s *Server) handleDeleteDomain(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.domains.DeleteDomain(r.Context(), c.workspace.ID, c.params.ByName("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleVerifyDomain looks up the domain's TXT record and marks it
// verified when the record carries its token. A verified domain stays
// verified without a lookup: the record may be removed once it served.
func (s *Server) handleVerifyDomain(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	d, err := s.domains.FindDomainByID(ctx, c.workspace.ID, c.params.ByName("id"))
	if err != nil {
		return err
	}
	if !d.Verified {
		if err := s.domainVerifier.VerifyDomain(ctx, d); err != nil {
			return err
		}
		if d, err = s.domains.SetDomainVerified(ctx, c.workspace.ID, d.ID, true); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, newDomainResponse(d))
	return nil
}

// fieldError is a validation error of one field.
func fieldError(field, msg string) error {
	return &link.Error{Code: link.EINVALID, Message: field + ": " + msg,
		Fields: []link.FieldError{{Field: field, Message: msg}}}
}

// customDomain returns the verified custom domain a request's Host names,
// or nil: the primary and alternate hosts, addresses and every other name
// (an unverified domain's too) are served as the primary host. It is on
// the path of every request, so it costs a map lookup and no allocation.
func (s *Server) customDomain(r *http.Request) (*link.Domain, error) {
	host := r.Host
	if s.domains == nil || host == s.primary.Host || host == s.alt.Host || host == "" {
		return nil, nil
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && strings.IndexByte(host[i:], ']') < 0 {
		host = host[:i] // the port; a bare IPv6 address keeps its colons
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == s.primary.Hostname() || host == s.alt.Hostname() {
		return nil, nil // the server's own names win, whatever their port
	}
	d, err := s.domains.FindVerifiedDomain(r.Context(), host)
	if isNotFound(err) {
		return nil, nil
	}
	return d, err
}

// serveCustomHost answers a request on a verified custom domain, which
// serves only its short links: GET and HEAD of "/" (the root redirect or
// a small page) and of "/{alias}" (the redirect, or the not-found
// redirect or page). Everything else, the API, the setup page, health and
// metrics included, is 404. It reports false for a request to any other
// host, which the caller serves as usual.
func (s *Server) serveCustomHost(w http.ResponseWriter, r *http.Request) bool {
	d, err := s.customDomain(r)
	if err != nil && r.URL.Path == "/healthz" {
		// A probe by address while the store is away gets the health
		// answer, which says why, not the lookup's error.
		return false
	} else if err != nil {
		s.writeError(w, r, err)
		return true
	}
	if d == nil {
		return false
	}
	p := r.URL.Path
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	switch {
	case get && p == "/":
		s.serveDomainRoot(w, r, d)
	case get && (p == "/.well-known/apple-app-site-association" || p == "/apple-app-site-association"):
		serveAppFile(w, r, d.AppleAppSiteAssociation)
	case get && p == "/.well-known/assetlinks.json":
		serveAppFile(w, r, d.AndroidAssetLinks)
	case get && p == "/robots.txt":
		s.writeRobots(w, r, d.Hostname)
	case get && len(p) > 1 && strings.IndexByte(p[1:], '/') < 0 && !link.IsReserved(p[1:]):
		s.redirect(w, r, d, p[1:])
	case r.Method == http.MethodPost && len(p) > 1 && strings.IndexByte(p[1:], '/') < 0 && !link.IsReserved(p[1:]) &&
		s.servePasswordPost(w, r, d, p[1:]):
	case get && pixelCode(p) != "" && !link.IsReserved(pixelCode(p)):
		s.servePixel(w, r, d, pixelCode(p))
	case get && statsCode(p) != "" && !link.IsReserved(statsCode(p)):
		s.servePublicStatsPage(w, r, d, statsCode(p))
	case s.serveForwarded(w, r, d):
	default:
		s.customHostNotFound(w, r, d)
	}
	return true
}

var domainRootPage = template.Must(template.New("root").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#222}</style></head>
<body><h1>{{.}}</h1><p>This domain serves short links.</p></body></html>
`))

// serveDomainRoot answers "/" on a custom domain: a redirect to its
// root_redirect_url, or a small page naming the domain (also when that URL
// loops or has come onto the blocklist since it was saved).
func (s *Server) serveDomainRoot(w http.ResponseWriter, r *http.Request, d *link.Domain) {
	s.recordOrphan(r, d, link.OrphanBaseURL)
	h := w.Header()
	if d.RootRedirectURL != "" && !s.loops(d.RootRedirectURL) && !s.blocklist.blocks(d.RootRedirectURL) {
		h["Location"] = []string{asciiURL(d.RootRedirectURL)}
		h["Cache-Control"] = cacheTemporary
		w.WriteHeader(http.StatusFound)
		return
	}
	writePage(w, r, http.StatusOK, pageCSP, domainRootPage, d.Hostname)
}

// customHostNotFound answers a path a custom domain does not serve: the
// 404 page for browsers, problem+json for the API's paths and any other
// client.
func (s *Server) customHostNotFound(w http.ResponseWriter, r *http.Request, d *link.Domain) {
	p := r.URL.Path
	api := strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/api/")
	if !api {
		s.recordOrphan(r, d, link.OrphanRegular404)
	}
	if !api && strings.Contains(r.Header.Get("Accept"), "text/html") {
		writePage(w, r, http.StatusNotFound, pageCSP, notFoundPage, strings.TrimPrefix(p, "/"))
		return
	}
	s.writeError(w, r, link.Errorf(link.ENOTFOUND, "no route for %s %s on %s: this domain serves only its short links", r.Method, p, d.Hostname))
}

// serveAppFile answers an app file of a custom domain (its
// apple-app-site-association or assetlinks.json) as the platforms fetch
// it: JSON, no redirect; 404 when the domain has none.
func serveAppFile(w http.ResponseWriter, r *http.Request, body string) {
	if body == "" {
		writeError404Plain(w)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(body))
	}
}

// writeError404Plain answers a missing app file: a bare 404, which is
// what the platforms' fetchers expect.
func writeError404Plain(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte("not found\n"))
}
