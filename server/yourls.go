package server

import (
	"context"
	"errors"
	"log/slog"
	mathrand "math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/linkbolt/linkbolt/link"
)

// The YOURLS-compatible API: /yourls-api.php answers the actions of
// YOURLS's API (shorturl, expand, url-stats, stats, db-stats, version) as
// YOURLS 1.10 does, so that ShareX, the WordPress plugins and browser
// extensions made for YOURLS work unchanged against linkbolt. A linkbolt
// API key is the `signature`; it acts in its workspace, rated as that
// workspace. Every answer, errors included, is in the YOURLS shape and the
// format asked for (yourls_format.go), never problem+json.

// yourlsPath is where YOURLS serves its API; clients add it to the base
// URL they are given.
const yourlsPath = "/yourls-api.php"

// The YOURLS release whose API this one follows, as the version action
// reports it (clients compare it to decide what they may ask).
const (
	yourlsVersion   = "1.10.4"
	yourlsDBVersion = "507"
)

// yourlsMaxStatsLimit bounds the links one stats request lists (YOURLS has
// no bound; the WordPress Link Creator asks for 999).
const yourlsMaxStatsLimit = 1000

// The messages of YOURLS's failed logins, and linkbolt's reasons for the
// two ways of logging in to YOURLS it cannot take.
const (
	yourlsPleaseLogIn     = "Please log in"
	yourlsNoTimestamp     = "Please log in: linkbolt cannot check timestamp signatures (it keeps only a hash of each API key); send the API key itself as signature, without timestamp"
	yourlsNoPasswordLogin = "Invalid username or password: linkbolt takes no username and password here; send an API key as signature"
)

// shortenByDestinationMu orders the duplicate check and the creation of
// the compatible APIs' links that look up their destination first (YOURLS's
// shorturl, Kutt's reuse), so that two requests for one long URL at once
// make one link.
var shortenByDestinationMu sync.Mutex

func (s *Server) yourlsRoutes() {
	// One path segment: a page, not a short code (see ServeHTTP).
	s.pages[yourlsPath] = true
	// Public routes that take a key of their own (signature): they count
	// among the routes a key reaches (TestKeyResourceRoutes).
	s.keyedPublic = true
	s.handle("GET", "/yourls-api.php", accessPublic, s.handleYOURLS)
	s.handle("POST", "/yourls-api.php", accessPublic, s.handleYOURLS)
	s.keyedPublic = false
}

// handleYOURLS answers a YOURLS API request. It authenticates the
// signature itself (a failure is YOURLS's 403, not a 401 problem), rates
// the key's workspace, and runs the action; it never returns an error, as
// every answer is a YOURLS one.
func (s *Server) handleYOURLS(w http.ResponseWriter, r *http.Request, c *caller) error {
	form, cleanup, res := s.yourlsForm(w, r)
	defer cleanup()
	format := "xml" // YOURLS's default
	if form.Has("format") {
		format = form.Get("format")
	}
	if res == nil {
		var key *caller
		key, res = s.yourlsAuthenticate(w, r, form)
		if key != nil {
			*c = *key // the request log names the key
			res = s.yourlsAction(w, s.withActor(r, key), key, form)
			if form.Has("callback") {
				res.set("callback", form.Get("callback"))
			} else if form.Has("jsonp") {
				res.set("callback", form.Get("jsonp"))
			}
		}
	}
	writeYOURLS(w, r, format, res)
	return nil
}

// yourlsForm returns the parameters of a request as PHP's $_REQUEST holds
// them: the query, and a form body (url-encoded or multipart) whose values
// win over the query's. An unreadable body answers the query's format
// with a YOURLS error.
func (s *Server) yourlsForm(w http.ResponseWriter, r *http.Request) (url.Values, func(), yourlsResult) {
	cleanup := func() {}
	if r.Body != nil && s.cfg.MaxBody > 0 {
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	}
	var err error
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		err = r.ParseMultipartForm(s.cfg.MaxBody)
		if r.MultipartForm != nil {
			cleanup = func() { _ = r.MultipartForm.RemoveAll() }
			err = nil // the body was read; a query PHP cannot decode is skipped
		}
	} else if err = r.ParseForm(); err != nil {
		// PHP skips what it cannot decode; so does this, but for a body
		// over the limit.
		var tooLarge *http.MaxBytesError
		if !errors.As(err, &tooLarge) {
			err = nil
		}
	}
	if err == nil {
		// Go puts multipart values after the query's: order them as PHP does.
		form := url.Values{}
		body := r.PostForm
		if r.MultipartForm != nil {
			body = r.MultipartForm.Value
		}
		for k, v := range body {
			form[k] = append(form[k], v...)
		}
		for k, v := range r.URL.Query() {
			form[k] = append(form[k], v...)
		}
		return form, cleanup, nil
	}
	q := r.URL.Query()
	var tooLarge *http.MaxBytesError
	msg, code := "the request body is not a readable form: "+err.Error(), "400"
	if errors.As(err, &tooLarge) {
		msg, code = "the request body is over the limit of "+strconv.FormatInt(s.cfg.MaxBody, 10)+" bytes", "413"
	}
	res := yourlsError(msg, code)
	res.set("callback", q.Get("callback"))
	return q, cleanup, res
}

// yourlsAuthenticate checks the signature, which is a linkbolt API key,
// and rates the key's workspace. It returns the caller, or the answer: a
// 403 as YOURLS's auth.php gives it, or a 429 over the workspace's rate.
func (s *Server) yourlsAuthenticate(w http.ResponseWriter, r *http.Request, form url.Values) (*caller, yourlsResult) {
	refuse := func(msg string) yourlsResult {
		res := yourlsError(msg, "403")
		res.set("callback", form.Get("callback"))
		return res
	}
	sig := form.Get("signature")
	switch {
	case sig != "" && form.Get("timestamp") != "":
		return nil, refuse(yourlsNoTimestamp)
	case sig == "" && (form.Get("username") != "" || form.Get("password") != ""):
		return nil, refuse(yourlsNoPasswordLogin)
	case sig == "":
		return nil, refuse(yourlsPleaseLogIn)
	}
	// The key goes through the same checks as one in X-API-Key: format
	// and checksum, hash lookup, constant-time comparison, state, scope.
	kr := (&http.Request{Method: r.Method, URL: &url.URL{Path: r.URL.Path},
		Header: http.Header{"X-Api-Key": []string{sig}}}).WithContext(r.Context())
	c, err := s.authenticate(kr)
	if link.ErrorCode(err) == link.EUNAUTHORIZED {
		s.logger.LogAttrs(r.Context(), slog.LevelInfo, "yourls: signature refused", slog.String("reason", link.ErrorMessage(err)))
		return nil, refuse(yourlsPleaseLogIn)
	} else if err != nil {
		return nil, s.yourlsFailure(w, r, err)
	}
	if err := s.rate(w, r, c); err != nil {
		return nil, s.yourlsFailure(w, r, err)
	}
	if err := checkKeyResources(c, r); err != nil {
		return nil, refuse(link.ErrorMessage(err))
	}
	return c, nil
}

// yourlsFailure is the YOURLS answer of an error: its message and the
// status of its code; an internal error is logged and masked, the store's
// unavailability answered 503 with Retry-After.
func (s *Server) yourlsFailure(w http.ResponseWriter, r *http.Request, err error) yourlsResult {
	err = s.storeUnavailable(w, r, err)
	code := link.ErrorCode(err)
	status, ok := codeStatus[code]
	msg := link.ErrorMessage(err)
	if !ok || code == link.EINTERNAL {
		status, msg = http.StatusInternalServerError, "Internal server error"
		s.logger.LogAttrs(r.Context(), slog.LevelError, "internal error",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	}
	return yourlsError(msg, strconv.Itoa(status))
}

// yourlsError is a failed answer: msg, and the HTTP status code as YOURLS
// writes errorCode, a string.
func yourlsError(msg, code string) yourlsResult {
	return yourlsResult{{"simple", msg}, {"message", msg}, {"errorCode", code}}
}

// yourlsAction runs the action the request names.
func (s *Server) yourlsAction(w http.ResponseWriter, r *http.Request, c *caller, form url.Values) yourlsResult {
	var res yourlsResult
	var err error
	switch action := form.Get("action"); action {
	case "shorturl":
		if r.Method == http.MethodHead {
			// A HEAD (a link checker, a prefetch) makes nothing.
			return yourlsError("the shorturl action makes a link: send it with GET or POST, not HEAD", "400")
		}
		if !c.scope.Allows(link.ScopeReadWrite) {
			return yourlsError("this API key has the read scope; the shorturl action needs read_write", "403")
		}
		res, err = s.yourlsShorten(w, r, c, form)
	case "expand":
		res, err = s.yourlsExpand(r.Context(), c, form.Get("shorturl"))
	case "url-stats":
		res, err = s.yourlsURLStats(r.Context(), c, form.Get("shorturl"))
	case "stats":
		res, err = s.yourlsStats(w, r, c, form)
	case "db-stats":
		res, err = s.yourlsDBStats(w, r, c)
	case "version":
		res = yourlsResult{{"version", yourlsVersion}, {"simple", yourlsVersion}}
		if form.Get("db") == "1" {
			res.set("db_version", yourlsDBVersion)
		}
	default:
		msg := `Unknown or missing "action" parameter`
		res = yourlsResult{{"errorCode", "400"}, {"message", msg}, {"simple", msg}}
	}
	if err != nil {
		return s.yourlsFailure(w, r, err)
	}
	return res
}

// yourlsShorten is the shorturl action: yourls_add_new_link with unique
// long URLs (YOURLS_UNIQUE_URLS, on by default). The url is checked as
// every link's destination is (form, loops into this service, the
// blocklist); keyword is the alias, title the title.
func (s *Server) yourlsShorten(w http.ResponseWriter, r *http.Request, c *caller, form url.Values) (yourlsResult, error) {
	res := newShortenResult()
	l, code, msg, err := s.yourlsNewLink(c, form)
	if err != nil || code != "" {
		return res.fail(code, msg), err
	}
	release, err := s.admit(w, r, costlySearch) // the duplicate check is a search
	if err != nil {
		return nil, err
	}
	defer release()
	shortenByDestinationMu.Lock()
	defer shortenByDestinationMu.Unlock()
	dup, err := s.findDestination(r.Context(), c.workspace.ID, l.DestinationURL, nil)
	if err != nil {
		return nil, err
	}
	if dup != nil {
		short := s.shortURL(dup)
		res.set("url", yourlsResult{{"keyword", dup.Alias}, {"url", l.DestinationURL}, {"title", linkTitle(dup)},
			{"date", yourlsDate(dup)}, {"ip", ""}, {"clicks", dup.Clicks}})
		res.set("title", linkTitle(dup))
		res.set("shorturl", short)
		return res.fail("error:url", trimLongString(l.DestinationURL)+" already exists in database (short URL: "+schemeless(short)+")"), nil
	}
	if err := s.links.CreateLink(r.Context(), l); link.ErrorCode(err) == link.ECONFLICT {
		return res.fail("error:keyword", "Short URL "+l.Alias+" already exists in database or is reserved"), nil
	} else if err != nil {
		return nil, err
	}
	short := s.shortURL(l)
	res.set("url", yourlsResult{{"keyword", l.Alias}, {"url", l.DestinationURL}, {"title", linkTitle(l)},
		{"date", yourlsDate(l)}, {"ip", s.clientAddress(r)}})
	res.set("status", "success")
	res.set("message", trimLongString(l.DestinationURL)+" added to database")
	res.set("title", linkTitle(l))
	res.set("shorturl", short)
	res.set("statusCode", "200")
	res.set("simple", short)
	return res.yourlsResult, nil
}

// shortenResult is the answer of the shorturl action, with the keys
// yourls_add_new_link always sets, in its order.
type shortenResult struct{ yourlsResult }

func newShortenResult() *shortenResult {
	return &shortenResult{yourlsResult{{"status", ""}, {"code", ""}, {"message", ""}, {"errorCode", ""}, {"statusCode", ""}}}
}

// fail makes the answer YOURLS's failure with code and message, a 400;
// its simple form is the short URL found, if any.
func (res *shortenResult) fail(code, msg string) yourlsResult {
	if code == "" {
		return nil
	}
	res.set("status", "fail")
	res.set("code", code)
	res.set("message", msg)
	res.set("errorCode", "400")
	res.set("statusCode", "400")
	res.set("simple", res.str("shorturl"))
	return res.yourlsResult
}

// yourlsNewLink is the link the shorturl action asks for, normalised and
// validated, or YOURLS's code and message for why there is none.
func (s *Server) yourlsNewLink(c *caller, form url.Values) (l *link.Link, code, msg string, err error) {
	raw := strings.TrimSpace(form.Get("url"))
	if raw == "" || raw == "http://" || raw == "https://" {
		return nil, "error:nourl", "Missing or malformed URL", nil
	}
	now := s.now()
	l = &link.Link{WorkspaceID: c.workspace.ID, DestinationURL: raw, Alias: strings.TrimSpace(form.Get("keyword")),
		CreatedAt: now, UpdatedAt: now}
	l.Title = yourlsTitle(form.Get("title"))
	if err = s.checkNewLink(l); err == nil {
		return l, "", "", nil
	}
	for _, f := range link.ErrorFields(err) {
		switch {
		case f.Field == "destination_url" && strings.Contains(f.Message, "short URL of this service"):
			return nil, "error:noloop", "URL is a short URL", nil
		case f.Field == "destination_url" && strings.Contains(f.Message, "blocklist"):
			return nil, "error:blocked", "URL is on this service's blocklist", nil
		case f.Field == "destination_url":
			return nil, "error:nourl", "Missing or malformed URL: url " + f.Message, nil
		case f.Field == "alias":
			return nil, "error:keyword", "Short URL " + l.Alias + " is not a valid keyword: " + f.Message, nil
		}
	}
	return nil, "", "", err
}

// findDestination returns the newest link of the workspace whose
// destination is dest (and that match accepts, when not nil), or nil. The
// search index finds the candidates (the links whose destination holds
// dest's first bytes), read as far as a search reads
// (server.search_scan_limit) and at most maxDuplicateCandidates.
func (s *Server) findDestination(ctx context.Context, workspaceID, dest string, match func(*link.Link) bool) (*link.Link, error) {
	const pageSize, maxDuplicateCandidates = 500, 10_000
	needle := dest
	if len(needle) > 256 {
		needle = needle[:256]
		for !utf8.ValidString(needle) {
			needle = needle[:len(needle)-1]
		}
	}
	f := link.LinkFilter{WorkspaceID: workspaceID, Search: needle, Limit: pageSize,
		ScanLimit: s.cfg.SearchScanLimit, Archived: link.ArchivedAll}
	for f.Page = 1; f.Page*pageSize <= maxDuplicateCandidates; f.Page++ {
		p, err := s.links.FindLinkPage(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, l := range p.Links {
			if l.DestinationURL == dest && (match == nil || match(l)) {
				return l, nil
			}
		}
		if len(p.Links) < pageSize || f.Page*pageSize >= p.Total {
			break
		}
	}
	return nil, nil
}

// yourlsExpand is the expand action.
func (s *Server) yourlsExpand(ctx context.Context, c *caller, shorturl string) (yourlsResult, error) {
	l, keyword, err := s.yourlsFindShort(ctx, c, shorturl)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return yourlsResult{{"keyword", keyword}, {"simple", "not found"}, {"message", "Error: short URL not found"}, {"errorCode", "404"}}, nil
	}
	return yourlsResult{{"keyword", l.Alias}, {"shorturl", s.shortURL(l)}, {"longurl", l.DestinationURL},
		{"title", linkTitle(l)}, {"simple", l.DestinationURL}, {"message", "success"}, {"statusCode", "200"}}, nil
}

// yourlsURLStats is the url-stats action.
func (s *Server) yourlsURLStats(ctx context.Context, c *caller, shorturl string) (yourlsResult, error) {
	l, _, err := s.yourlsFindShort(ctx, c, shorturl)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return yourlsResult{{"statusCode", "404"}, {"message", "Error: short URL not found"}, {"simple", yourlsNeedFormat}}, nil
	}
	return yourlsResult{{"statusCode", "200"}, {"message", "success"}, {"link", s.yourlsLink(l)}, {"simple", yourlsNeedFormat}}, nil
}

// yourlsNeedFormat is the simple answer of the stats actions.
const yourlsNeedFormat = "Need either XML or JSON format for stats"

// yourlsLink is a link as YOURLS's stats list it. linkbolt does not keep
// who created a link, so ip is empty.
func (s *Server) yourlsLink(l *link.Link) yourlsResult {
	return yourlsResult{{"shorturl", s.shortURL(l)}, {"url", l.DestinationURL}, {"title", linkTitle(l)},
		{"timestamp", yourlsDate(l)}, {"ip", ""}, {"clicks", l.Clicks}}
}

// yourlsFindShort finds the link a shorturl parameter names in the
// caller's workspace: a short URL (on the primary or alternate host, or a
// custom domain of the workspace) or a bare keyword. It returns the
// keyword it read, and a nil link when there is none.
func (s *Server) yourlsFindShort(ctx context.Context, c *caller, shorturl string) (*link.Link, string, error) {
	raw := strings.TrimSpace(shorturl)
	domain, keyword := "", raw
	if u, err := url.Parse(raw); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		keyword = u.Path
		d, err := s.linkDomain(ctx, c.workspace.ID, u.Host, true)
		if link.ErrorCode(err) == link.EINVALID {
			return nil, strings.Trim(keyword, "/"), nil
		} else if err != nil {
			return nil, "", err
		}
		domain = d
	}
	keyword = strings.Trim(keyword, "/")
	if keyword == "" || link.CheckAlias(keyword) != "" {
		return nil, keyword, nil
	}
	found, err := s.links.FindLinkByAlias(ctx, domain, keyword)
	if isNotFound(err) || err == nil && found.WorkspaceID != c.workspace.ID {
		return nil, keyword, nil
	} else if err != nil {
		return nil, "", err
	}
	l, err := s.links.FindLinkByID(ctx, c.workspace.ID, found.ID) // with its clicks
	if isNotFound(err) {
		return nil, keyword, nil
	}
	return l, keyword, err
}

// yourlsDBStats is the db-stats action.
func (s *Server) yourlsDBStats(w http.ResponseWriter, r *http.Request, c *caller) (yourlsResult, error) {
	release, err := s.admit(w, r, costlyAnalytics)
	if err != nil {
		return nil, err
	}
	defer release()
	links, clicks, err := s.yourlsTotals(r.Context(), c)
	if err != nil {
		return nil, err
	}
	return yourlsResult{{"db-stats", totalsResult(links, clicks)}, {"statusCode", "200"}, {"simple", yourlsNeedFormat}, {"message", "success"}}, nil
}

// yourlsTotals counts the workspace's links (archived ones too) and its
// clicks of all time, as its analytics count them: from the first hour
// the aggregates hold, since an import brings clicks dated before the
// workspace was made.
func (s *Server) yourlsTotals(ctx context.Context, c *caller) (links int, clicks int64, err error) {
	p, err := s.links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: c.workspace.ID, Page: 1, Limit: 1, Archived: link.ArchivedAll})
	if err != nil {
		return 0, 0, err
	}
	now := s.now().UTC()
	st, err := s.clicks.Stats(ctx, link.StatsFilter{WorkspaceID: c.workspace.ID, Scope: link.ScopeWorkspace,
		Start: time.Unix(0, 0).UTC(), End: now.Truncate(time.Hour).Add(time.Hour), TopLimit: 1})
	if err != nil {
		return 0, 0, err
	}
	return p.Total, st.Clicks, nil
}

// totalsResult is the totals of the stats actions as YOURLS writes them.
func totalsResult(links int, clicks int64) yourlsResult {
	return yourlsResult{{"total_links", int64(links)}, {"total_clicks", clicks}}
}

// yourlsStats is the stats action: up to limit links from start, by
// filter (top, bottom, last, rand or random; anything else is top), and
// the totals. Without a positive limit there are no links, as in YOURLS.
func (s *Server) yourlsStats(w http.ResponseWriter, r *http.Request, c *caller, form url.Values) (yourlsResult, error) {
	release, err := s.admit(w, r, costlyAnalytics)
	if err != nil {
		return nil, err
	}
	defer release()
	// The totals first: the rand filter draws from the number of links.
	total, clicks, err := s.yourlsTotals(r.Context(), c)
	if err != nil {
		return nil, err
	}
	var res yourlsResult
	limit, start := min(phpIntval(form.Get("limit")), yourlsMaxStatsLimit), max(phpIntval(form.Get("start")), 0)
	if limit > 0 {
		links, err := s.yourlsStatsLinks(r.Context(), c, form.Get("filter"), limit, start, total)
		if err != nil {
			return nil, err
		}
		if len(links) > 0 {
			list := make(yourlsResult, 0, len(links))
			for i, l := range links {
				list = append(list, yourlsField{"link_" + strconv.Itoa(i+1), s.yourlsLink(l)})
			}
			res.set("links", list)
		}
	}
	res.set("stats", totalsResult(total, clicks))
	res.set("statusCode", "200")
	res.set("simple", yourlsNeedFormat)
	res.set("message", "success")
	return res, nil
}

// phpIntval reads a number as PHP's intval does: its leading digits, 0
// when there are none; past the range of int, the largest one.
func phpIntval(v string) int {
	v = strings.TrimSpace(v)
	end := 0
	if end < len(v) && (v[end] == '-' || v[end] == '+') {
		end++
	}
	for end < len(v) && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(v[:end])
	if errors.Is(err, strconv.ErrRange) && v[0] != '-' {
		return int(^uint(0) >> 1)
	}
	return n
}

// yourlsStatsLinks lists the links of the stats action. top and bottom
// order by clicks (reading as far as a list sorted by clicks does,
// server.search_scan_limit), last by creation, newest first; rand is a
// run of links from a random place of the workspace's total, in random
// order.
func (s *Server) yourlsStatsLinks(ctx context.Context, c *caller, filter string, limit, start, total int) ([]*link.Link, error) {
	f := link.LinkFilter{WorkspaceID: c.workspace.ID, Archived: link.ArchivedAll}
	switch filter {
	case "last":
		return s.linkWindow(ctx, f, start, limit)
	case "rand", "random":
		from := 0
		if total > limit {
			from = mathrand.IntN(total - limit + 1)
		}
		links, err := s.linkWindow(ctx, f, from, limit)
		mathrand.Shuffle(len(links), func(i, j int) { links[i], links[j] = links[j], links[i] })
		return links, err
	}
	f.Sort, f.ScanLimit = link.SortClicks, s.cfg.SearchScanLimit
	if filter != "bottom" {
		return s.linkWindow(ctx, f, start, limit)
	}
	// The fewest clicks first: the end of the list by clicks, reversed.
	p, err := s.links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: c.workspace.ID, Archived: link.ArchivedAll,
		Sort: link.SortClicks, ScanLimit: s.cfg.SearchScanLimit, Page: 1, Limit: 1})
	if err != nil {
		return nil, err
	}
	end := p.Total - start
	if end <= 0 {
		return nil, nil
	}
	from := max(end-limit, 0)
	links, err := s.linkWindow(ctx, f, from, end-from)
	slices.Reverse(links)
	return links, err
}

// linkWindow returns n links of f's order from offset on, reading the one
// or two pages of n links that hold them.
func (s *Server) linkWindow(ctx context.Context, f link.LinkFilter, offset, n int) ([]*link.Link, error) {
	f.Limit, f.Page = n, offset/n+1
	p, err := s.links.FindLinkPage(ctx, f)
	if err != nil {
		return nil, err
	}
	skip := min(offset%n, len(p.Links))
	links := p.Links[skip:]
	if skip > 0 && len(p.Links) == n {
		f.Page++
		next, err := s.links.FindLinkPage(ctx, f)
		if err != nil {
			return nil, err
		}
		links = append(links, next.Links...)
	}
	return links[:min(len(links), n)], nil
}

// yourlsTitle is a title given to the shorturl action made fit for a
// link: whitespace runs as one space, control characters dropped, cut to
// link.MaxTitleLength characters (YOURLS keeps longer ones).
func yourlsTitle(raw string) string {
	raw = strings.ToValidUTF8(raw, "")
	raw = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, raw)
	t := strings.Join(strings.Fields(raw), " ")
	if utf8.RuneCountInString(t) > link.MaxTitleLength {
		t = strings.TrimSpace(string([]rune(t)[:link.MaxTitleLength]))
	}
	return t
}

// linkTitle is a link's title for YOURLS answers: its own, or its
// destination, as YOURLS titles a link whose page it could not read.
func linkTitle(l *link.Link) string {
	if l.Title != "" {
		return l.Title
	}
	return l.DestinationURL
}

// yourlsDate is when a link was created, as YOURLS writes its timestamps
// (in UTC here).
func yourlsDate(l *link.Link) string { return l.CreatedAt.UTC().Format("2006-01-02 15:04:05") }

// trimLongString shortens s to 60 characters as yourls_trim_long_string does.
func trimLongString(s string) string {
	const length, tail = 60, "[...]"
	if utf8.RuneCountInString(s) <= length {
		return s
	}
	return string([]rune(s)[:length-len(tail)]) + tail
}

// schemeless is u without its http:// or https://.
func schemeless(u string) string {
	if rest, ok := strings.CutPrefix(u, "https://"); ok {
		return rest
	}
	return strings.TrimPrefix(u, "http://")
}
