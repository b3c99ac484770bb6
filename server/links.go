package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

// optional is s, or nil (JSON null) when s is empty.
func optional(s string) *string { return wire.Optional(s) }

// linkResponse is a link as the API shows it, as link.* events do.
type linkResponse = wire.Link

func (s *Server) newLinkResponse(l *link.Link) linkResponse { return s.urls.Link(l) }

// linkDomain maps the domain of a request to the link's Domain: nothing,
// the primary or the alternate host (with or without port) is "", the
// primary namespace that both serve; any other name must be a domain of
// the workspace, verified unless anyVerification (for list filters, as a
// domain's links stay listed after it is unverified). EINVALID (field
// domain) otherwise, the same for a domain of another workspace and for
// no domain at all.
func (s *Server) linkDomain(ctx context.Context, workspaceID, raw string, anyVerification bool) (string, error) {
	d := strings.ToLower(strings.TrimSpace(raw))
	for _, u := range []*url.URL{s.primary, s.alt} {
		if d == "" || d == strings.ToLower(u.Host) || d == strings.ToLower(u.Hostname()) {
			return "", nil
		}
	}
	const notOurs = "is not a verified domain of this workspace"
	host, problem := normalizeHostname(d)
	if problem != "" {
		return "", fieldError("domain", problem)
	}
	if host == strings.ToLower(s.primary.Hostname()) || host == strings.ToLower(s.alt.Hostname()) {
		return "", nil // spelt another way ("LB.test.")
	}
	if s.domains == nil {
		return "", fieldError("domain", notOurs)
	}
	dom, err := s.domains.FindDomainByHostname(ctx, host)
	if isNotFound(err) || err == nil && dom.WorkspaceID != workspaceID {
		return "", &link.Error{Code: link.EINVALID, Message: "domain: " + host + " is not a domain of this workspace: add it with POST /v1/domains",
			Fields: []link.FieldError{{Field: "domain", Message: notOurs}}}
	} else if err != nil {
		return "", err
	}
	if !dom.Verified && !anyVerification {
		return "", &link.Error{Code: link.EINVALID, Message: "domain: " + host + " is not verified yet: verify it with POST /v1/domains/" + dom.ID + "/verify",
			Fields: []link.FieldError{{Field: "domain", Message: notOurs}}}
	}
	return host, nil
}

type createLinkRequest struct {
	DestinationURL string   `json:"destination_url"`
	Alias          string   `json:"alias"`
	Domain         string   `json:"domain"`
	Tags           []string `json:"tags"`
	UTMSource      string   `json:"utm_source"`
	UTMMedium      string   `json:"utm_medium"`
	UTMCampaign    string   `json:"utm_campaign"`
	CampaignID     string   `json:"campaign_id"`
	RedirectCode   int      `json:"redirect_code"`
	// UTMTemplateID names a UTM template of the workspace whose values
	// the link takes where it sets none of its own.
	UTMTemplateID string `json:"utm_template_id"`
	// FindIfExists answers the workspace's link with the same destination
	// (and domain, and the alias and tags when given) instead of making
	// another.
	FindIfExists bool `json:"find_if_exists"`
	// ExternalID is another system's ID of the link, unique in the
	// workspace.
	ExternalID string `json:"external_id"`
	// Crawlable lets search engines index the short URL (robots.txt).
	Crawlable bool `json:"crawlable"`
	// ForwardPath and ForwardQuery: absent is the workspace's default.
	ForwardPath  *bool `json:"forward_path"`
	ForwardQuery *bool `json:"forward_query"`
	// PublicStats makes the link's statistics public (off by default).
	PublicStats bool `json:"public_stats"`
	// EscapeInAppBrowser and Retargeting switch the link's interstitials
	// (interstitial.go); absent is off.
	EscapeInAppBrowser bool `json:"escape_in_app_browser"`
	Retargeting        bool `json:"retargeting"`
	// link controls: password, rules, variants, social card
	linkControlsRequest
	linkLimitsRequest
}

// link is the link the request asks for in the workspace ws, on domain
// (the request's, as linkDomain resolved it), created at now. What the
// request does not say of forwarding, the workspace's defaults do.
func (in *createLinkRequest) link(ws *link.Workspace, domain string, now time.Time) *link.Link {
	l := &link.Link{
		WorkspaceID: ws.ID, DestinationURL: in.DestinationURL, Alias: in.Alias, Domain: domain,
		Tags: in.Tags, UTMSource: in.UTMSource, UTMMedium: in.UTMMedium, UTMCampaign: in.UTMCampaign,
		CampaignID: in.CampaignID, RedirectCode: in.RedirectCode, CreatedAt: now, UpdatedAt: now,
		ForwardPath: ws.ForwardPath, ForwardQuery: ws.ForwardQuery, ExternalID: in.ExternalID, Crawlable: in.Crawlable, PublicStats: in.PublicStats,
		EscapeInApp: in.EscapeInAppBrowser, Retargeting: in.Retargeting,
	}
	if in.ForwardPath != nil {
		l.ForwardPath = *in.ForwardPath
	}
	if in.ForwardQuery != nil {
		l.ForwardQuery = *in.ForwardQuery
	}
	return l
}

func (s *Server) handleCreateLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in createLinkRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	domain, err := s.linkDomain(r.Context(), c.workspace.ID, in.Domain, false)
	if err != nil {
		return err
	}
	now := s.now()
	l := in.link(c.workspace, domain, now)
	if err := s.applyUTMTemplate(r.Context(), nil, in.UTMTemplateID, l); err != nil {
		return err
	}
	if err := in.linkLimitsRequest.applyTo(l, now); err != nil {
		return err
	}
	if err := s.setControls(w, r, l, in.linkControlsRequest); err != nil {
		return err
	}
	if in.FindIfExists {
		found, err := s.createOrFind(w, r, l, in.Tags != nil)
		if err != nil {
			return err
		}
		if found != nil {
			if err := s.addChecks(r.Context(), c.workspace, found); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, s.newLinkResponse(found))
			return nil
		}
	} else if err := s.createLink(r, l); err != nil {
		return err
	}
	if c.workspace.DestinationChecks {
		l.Check = &link.LinkCheck{Status: link.CheckUnchecked} // enrolled by the next claim
	}
	writeJSON(w, http.StatusCreated, s.newLinkResponse(l))
	return nil
}

// createOrFind is POST /v1/links with find_if_exists: the newest link of
// the workspace with l's destination and domain, and l's alias when it
// has one and its tags when withTags, or else l, created. found is the
// link found, nil when l was created. The look-up and the creation hold
// shortenByDestinationMu, so that two such requests at once through this
// process make one link.
func (s *Server) createOrFind(w http.ResponseWriter, r *http.Request, l *link.Link, withTags bool) (found *link.Link, err error) {
	if err := s.checkNewLink(l); err != nil {
		return nil, err
	}
	release, err := s.admit(w, r, costlySearch) // the look-up is a search
	if err != nil {
		return nil, err
	}
	defer release()
	shortenByDestinationMu.Lock()
	defer shortenByDestinationMu.Unlock()
	found, err = s.findDestination(r.Context(), l.WorkspaceID, l.DestinationURL, func(d *link.Link) bool {
		return d.Domain == l.Domain && (l.Alias == "" || d.Alias == l.Alias) && (!withTags || sameTags(d.Tags, l.Tags)) &&
			(l.ExternalID == "" || d.ExternalID == l.ExternalID)
	})
	if err != nil || found != nil {
		return found, err
	}
	return nil, s.createLink(r, l)
}

// sameTags reports whether two links have the same tags, in any order.
func sameTags(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// createLink validates and stores a link for both APIs.
func (s *Server) createLink(r *http.Request, l *link.Link) error {
	if err := s.checkNewLink(l); err != nil {
		return err
	}
	return s.links.CreateLink(r.Context(), l)
}

// checkNewLink normalises and validates a link to create (by the API, one
// alone or one of a bulk creation, or by YOURLS's shorturl), and refuses a
// link with a destination on the blocklist (destination_url, a rule's, a
// variant's, expired_url). Validation needs the normalised link: a
// trimmed alias, the default redirect code.
func (s *Server) checkNewLink(l *link.Link) error {
	l.Normalize()
	if err := l.Validate(s.servedRules); err != nil {
		return err
	}
	return s.checkBlocked(l, destAll)
}

func (s *Server) handleGetLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	l, err := s.links.FindLinkByID(r.Context(), c.workspace.ID, c.params.ByName("id"))
	if err != nil {
		return err
	}
	if err := s.addChecks(r.Context(), c.workspace, l); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newLinkResponse(l))
	return nil
}

type updateLinkRequest struct {
	DestinationURL *string   `json:"destination_url"`
	Alias          *string   `json:"alias"`
	Tags           *[]string `json:"tags"`
	UTMSource      *string   `json:"utm_source"`
	UTMMedium      *string   `json:"utm_medium"`
	UTMCampaign    *string   `json:"utm_campaign"`
	CampaignID     *string   `json:"campaign_id"`
	RedirectCode   *int      `json:"redirect_code"`
	ForwardPath    *bool     `json:"forward_path"`
	ForwardQuery   *bool     `json:"forward_query"`
	// ExternalID: null or "" removes it.
	ExternalID  patchField[string] `json:"external_id"`
	Crawlable   *bool              `json:"crawlable"`
	PublicStats *bool              `json:"public_stats"`
	EscapeInApp *bool              `json:"escape_in_app_browser"`
	Retargeting *bool              `json:"retargeting"`
	// link controls: password, rules, variants, social card
	linkControlsRequest

	linkLimitsPatch
}

func (s *Server) handleUpdateLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in updateLinkRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	upd, validate, err := s.linkUpdate(w, r, in)
	if err != nil {
		return err
	}
	l, err := s.links.UpdateLink(r.Context(), c.workspace.ID, c.params.ByName("id"), upd, validate)
	if err != nil {
		return err
	}
	if err := s.updatedChecks(r.Context(), c.workspace, l); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newLinkResponse(l))
	return nil
}

// linkUpdate is the update a PATCH of links asks for, and the check of
// each link it makes (for one link, or for each of a bulk update).
func (s *Server) linkUpdate(w http.ResponseWriter, r *http.Request, in updateLinkRequest) (link.LinkUpdate, func(*link.Link) error, error) {
	if in.Alias != nil && *in.Alias == "" {
		return link.LinkUpdate{}, nil, &link.Error{Code: link.EINVALID, Message: "alias: must not be empty",
			Fields: []link.FieldError{{Field: "alias", Message: "must not be empty"}}}
	}
	// Custom domains are read from the database here, not in the write
	// transaction of the update, which checks the rest.
	if in.DestinationURL != nil {
		if msg := link.CheckDestination(strings.TrimSpace(*in.DestinationURL), s.servedRules); msg != "" {
			return link.LinkUpdate{}, nil, fieldError("destination_url", msg)
		}
	}
	upd := link.LinkUpdate{
		DestinationURL: in.DestinationURL, Alias: in.Alias, Tags: in.Tags,
		UTMSource: in.UTMSource, UTMMedium: in.UTMMedium, UTMCampaign: in.UTMCampaign,
		CampaignID: in.CampaignID, RedirectCode: in.RedirectCode,
		ForwardPath: in.ForwardPath, ForwardQuery: in.ForwardQuery, Crawlable: in.Crawlable, PublicStats: in.PublicStats,
		EscapeInApp: in.EscapeInApp, Retargeting: in.Retargeting,
	}
	if in.ExternalID.Set {
		v := in.ExternalID.Value
		upd.ExternalID = &v
	}
	if err := s.updateControls(w, r, &upd, in.linkControlsRequest); err != nil {
		return link.LinkUpdate{}, nil, err
	}
	limits, err := in.linkLimitsPatch.update()
	if err != nil {
		return link.LinkUpdate{}, nil, err
	}
	upd.Limits = limits
	validate := func(l *link.Link) error {
		if err := l.Validate(s.rules.WithDomain(l.Domain)); err != nil {
			return err
		}
		// Only the destinations the PATCH sets are checked: a link
		// turned off by the blocklist may still be archived, retitled…
		var which linkDestinations
		if in.DestinationURL != nil {
			which |= destMain
		}
		if in.Rules != nil {
			which |= destRules
		}
		if in.Variants != nil {
			which |= destVariants
		}
		if in.ExpiredURL.Set {
			which |= destExpired
		}
		if in.IOSURL != nil || in.AndroidURL != nil {
			which |= destApps
		}
		return s.checkBlocked(l, which)
	}
	return upd, validate, nil
}

func (s *Server) handleDeleteLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.links.DeleteLink(r.Context(), c.workspace.ID, c.params.ByName("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type listMeta struct {
	Total int `json:"total"`
	Page  int `json:"page"`
	Limit int `json:"limit"`
	// SearchTruncated: search, campaign_id, domain or sort=clicks read the
	// newest server.search_scan_limit links and stopped there.
	SearchTruncated bool `json:"search_truncated"`
}

type linkList struct {
	Data []linkResponse `json:"data"`
	Meta listMeta       `json:"meta"`
}

func (s *Server) handleListLinks(w http.ResponseWriter, r *http.Request, c *caller) error {
	q := r.URL.Query()
	f := link.LinkFilter{WorkspaceID: c.workspace.ID, Search: strings.TrimSpace(q.Get("search")),
		CampaignID: q.Get("campaign_id")}
	var err error
	if f.Limit, err = positiveParam(q.Get("limit"), "limit", link.DefaultPageLimit, link.MaxPageLimit); err != nil {
		return err
	}
	if f.Page, err = positiveParam(q.Get("page"), "page", 1, 1_000_000); err != nil {
		return err
	}
	if t := q.Get("tags"); t != "" {
		for _, tag := range strings.Split(t, ",") {
			if tag = strings.TrimSpace(tag); tag != "" {
				f.Tags = append(f.Tags, tag)
			}
		}
		if len(f.Tags) > link.MaxTags {
			return link.Errorf(link.EINVALIDREQUEST, "tags: at most %d tags", link.MaxTags)
		}
	}
	if q.Has("domain") {
		d, err := s.linkDomain(r.Context(), c.workspace.ID, q.Get("domain"), true)
		if link.ErrorCode(err) == link.EINVALID {
			return link.Errorf(link.EINVALIDREQUEST, "domain: %q is not a domain of this workspace", q.Get("domain"))
		} else if err != nil {
			return err
		}
		f.Domain = &d
	}
	switch sort := link.LinkSort(q.Get("sort")); sort {
	case "", link.SortCreated:
	case link.SortClicks:
		f.Sort = sort
	default:
		return link.Errorf(link.EINVALIDREQUEST, "sort must be %q or %q, not %q", link.SortCreated, link.SortClicks, sort)
	}
	if f.Archived, err = archivedParam(q); err != nil {
		return err
	}
	if q.Has("external_id") {
		return s.writeExternalLinkPage(w, r, c, f)
	}
	switch b := q.Get("broken"); b {
	case "", "false":
	case "true":
		f.Broken = true
	default:
		return link.Errorf(link.EINVALIDREQUEST, "broken must be true or false, not %q", b)
	}
	if f.Search == "" && f.CampaignID == "" && f.Domain == nil && f.Sort == "" {
		return s.writeLinkPage(w, r, c.workspace, f)
	}
	// These filters, and the order by clicks, read links one by one:
	// costly work.
	release, err := s.admit(w, r, costlySearch)
	if err != nil {
		return err
	}
	defer release()
	f.ScanLimit = s.cfg.SearchScanLimit
	return s.work(costlySearch, func() error { return s.writeLinkPage(w, r, c.workspace, f) })
}

// addChecks sets the destination check of each of links, when ws checks
// its destinations (unchecked where there is none yet).
func (s *Server) addChecks(ctx context.Context, ws *link.Workspace, links ...*link.Link) error {
	if !ws.DestinationChecks || s.linkChecks == nil || len(links) == 0 {
		return nil
	}
	ids := make([]string, len(links))
	for i, l := range links {
		ids[i] = l.ID
	}
	checks, err := s.linkChecks.FindLinkChecks(ctx, ws.ID, ids)
	if err != nil {
		return err
	}
	for _, l := range links {
		if l.Check = checks[l.ID]; l.Check == nil {
			l.Check = &link.LinkCheck{Status: link.CheckUnchecked}
		}
	}
	return nil
}

// updatedChecks is addChecks for links just updated: the check of a link
// whose destination changed is forgotten and made at once, not at the old
// destination's time.
func (s *Server) updatedChecks(ctx context.Context, ws *link.Workspace, links ...*link.Link) error {
	if err := s.addChecks(ctx, ws, links...); err != nil {
		return err
	}
	for _, l := range links {
		if ch := l.Check; ch != nil && ch.DestinationURL != "" && ch.DestinationURL != l.DestinationURL {
			if err := s.linkChecks.ResetLinkCheck(ctx, ws.ID, l.ID, s.now()); err != nil {
				return err
			}
			l.Check = &link.LinkCheck{Status: link.CheckUnchecked}
		}
	}
	return nil
}

// writeExternalLinkPage answers GET /v1/links?external_id=: a page of the
// link with that external ID (archived or not), or an empty page. It
// takes no other filter.
func (s *Server) writeExternalLinkPage(w http.ResponseWriter, r *http.Request, c *caller, f link.LinkFilter) error {
	q := r.URL.Query()
	for name := range q {
		switch name {
		case "external_id", "page", "limit", "archived", "api_key", "workspace_id":
		default:
			return link.Errorf(link.EINVALIDREQUEST, "external_id names one link: it takes no other filter, not %q", name)
		}
	}
	out := linkList{Data: []linkResponse{}, Meta: listMeta{Page: f.Page, Limit: f.Limit}}
	l, err := s.links.FindLinkByExternalID(r.Context(), c.workspace.ID, q.Get("external_id"))
	switch {
	case isNotFound(err):
	case err != nil:
		return err
	default:
		out.Meta.Total = 1
		if f.Page == 1 {
			if err := s.addChecks(r.Context(), c.workspace, l); err != nil {
				return err
			}
			out.Data = append(out.Data, s.newLinkResponse(l))
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// writeLinkPage finds the page of links f asks for and writes it.
func (s *Server) writeLinkPage(w http.ResponseWriter, r *http.Request, ws *link.Workspace, f link.LinkFilter) error {
	p, err := s.links.FindLinkPage(r.Context(), f)
	if err != nil {
		return err
	}
	if err := s.addChecks(r.Context(), ws, p.Links...); err != nil {
		return err
	}
	out := linkList{Data: make([]linkResponse, 0, len(p.Links)),
		Meta: listMeta{Total: p.Total, Page: f.Page, Limit: f.Limit, SearchTruncated: p.Truncated}}
	for _, l := range p.Links {
		out.Data = append(out.Data, s.newLinkResponse(l))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// positiveParam parses an optional positive integer query parameter.
func positiveParam(v, name string, def, max int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, link.Errorf(link.EINVALIDREQUEST, "%s must be a positive integer, not %q", name, v)
	}
	if n > max {
		return 0, link.Errorf(link.EINVALIDREQUEST, "%s must be at most %d", name, max)
	}
	return n, nil
}

type simpleRequest struct {
	OriginalURL string `json:"originalUrl"`
	CustomCode  string `json:"customCode"`
	// Password is refused: the simple API makes plain links only (link controls).
	Password *string `json:"password"`
}

type simpleResponse struct {
	ShortCode   string `json:"shortCode"`
	ShortURL    string `json:"shortUrl"`
	OriginalURL string `json:"originalUrl"`
}

// handleSimpleCreate is the simple API: a destination in, a short URL on
// the alternate base URL out.
func (s *Server) handleSimpleCreate(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in simpleRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := refuseControlsOnSimpleAPI(in.Password); err != nil {
		return err
	}
	now := s.now()
	l := &link.Link{WorkspaceID: c.workspace.ID, DestinationURL: in.OriginalURL, Alias: in.CustomCode,
		CreatedAt: now, UpdatedAt: now}
	if err := s.createLink(r, l); err != nil {
		if link.ErrorCode(err) == link.ECONFLICT {
			return link.Errorf(link.ECONFLICT, "customCode %q is already taken", l.Alias)
		}
		return renameField(err, "destination_url", "originalUrl", "alias", "customCode")
	}
	writeJSON(w, http.StatusCreated, simpleResponse{ShortCode: l.Alias, ShortURL: s.alt.String() + "/" + l.Alias,
		OriginalURL: l.DestinationURL})
	return nil
}

// renameField rewrites the field names of a validation error for an API
// whose fields are named differently (pairs of old, new).
func renameField(err error, pairs ...string) error {
	var e *link.Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return err
	}
	out := &link.Error{Code: e.Code, Message: e.Message}
	for _, f := range e.Fields {
		for i := 0; i+1 < len(pairs); i += 2 {
			if f.Field == pairs[i] {
				out.Message = strings.Replace(out.Message, pairs[i], pairs[i+1], 1)
				f.Field = pairs[i+1]
			}
		}
		out.Fields = append(out.Fields, f)
	}
	return out
}

// byExternalID returns the parameters of a route of one link (its path
// holds /links/:id) with an ID of the form ext_{external_id} replaced by
// the ID of the workspace's link with that external ID; ENOTFOUND when
// there is none. Other IDs are left as they are.
func (s *Server) byExternalID(r *http.Request, c *caller) (httprouter.Params, error) {
	id := c.params.ByName("id")
	ext, ok := strings.CutPrefix(id, link.ExternalIDPrefix)
	if !ok || c.workspace == nil {
		return c.params, nil
	}
	l, err := s.links.FindLinkByExternalID(r.Context(), c.workspace.ID, ext)
	if err != nil {
		return c.params, err
	}
	ps := slices.Clone(c.params)
	for i := range ps {
		if ps[i].Key == "id" {
			ps[i].Value = l.ID
		}
	}
	return ps, nil
}
