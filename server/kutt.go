package server

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// The Kutt-compatible API: /api/v2 answers the links, stats, domains,
// user and health routes of Kutt's API v2 as Kutt 3 answers them, so that
// clients made for Kutt (the kutt npm client, scripts, bots) work against
// linkbolt given its base URL plus /api/v2 and a linkbolt API key in
// X-API-Key. The key acts in its workspace, rated as that workspace, with
// its scope (read for GETs, read_write for changes). Every answer, errors
// included, is Kutt's JSON: `{"error": "…"}` with the HTTP status, never
// problem+json. docs/compat-kutt.md lists what is supported, field by
// field.

// kuttMaxLimit is the most links a list answers, as Kutt's.
const kuttMaxLimit = 50

func (s *Server) kuttRoutes() {
	s.handle("GET", "/api/v2/health", accessPublic, s.handleKuttHealth)
	// kutt authorizes an API key inside a public route: these count among
	// the routes a key reaches (TestKeyResourceRoutes).
	s.keyedPublic = true
	s.handle("GET", "/api/v2/links", accessPublic, s.kutt(accessRead, s.kuttListLinks))
	s.handle("POST", "/api/v2/links", accessPublic, s.kutt(accessWrite, s.kuttCreateLink))
	s.handle("PATCH", "/api/v2/links/:id", accessPublic, s.kutt(accessWrite, s.kuttUpdateLink))
	s.handle("DELETE", "/api/v2/links/:id", accessPublic, s.kutt(accessWrite, s.kuttDeleteLink))
	s.handle("GET", "/api/v2/links/:id/stats", accessPublic, s.kutt(accessRead, s.kuttLinkStats))
	// The kutt npm client (3.0.2) asks for a link's stats with DELETE.
	s.handle("DELETE", "/api/v2/links/:id/stats", accessPublic, s.kutt(accessRead, s.kuttLinkStats))
	s.handle("GET", "/api/v2/users", accessPublic, s.kutt(accessRead, s.kuttUser))
	s.handle("POST", "/api/v2/domains", accessPublic, s.kutt(accessWrite, s.kuttCreateDomain))
	s.handle("DELETE", "/api/v2/domains/:id", accessPublic, s.kutt(accessWrite, s.kuttDeleteDomain))
	s.keyedPublic = false
}

func (s *Server) handleKuttHealth(w http.ResponseWriter, r *http.Request, _ *caller) error {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8") // Kutt's (Express's send)
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte("OK"))
	}
	return nil
}

// kutt authenticates and rates a Kutt request with access a, runs h, and
// answers an error in Kutt's shape.
func (s *Server) kutt(a access, h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *caller) error {
		key, err := s.authorize(w, r, a)
		if err == nil {
			key.params = c.params
			*c = *key // the request log names the key
			r = s.withActor(r, c)
			err = h(w, r, c)
		}
		if err != nil {
			s.kuttError(w, r, err)
		}
		return nil
	}
}

// kuttError writes err as Kutt does: its status and `{"error": message}`;
// an internal error is logged and masked, the store's unavailability
// answered 503 with Retry-After.
func (s *Server) kuttError(w http.ResponseWriter, r *http.Request, err error) {
	err = s.storeUnavailable(w, r, err)
	code := link.ErrorCode(err)
	status, ok := codeStatus[code]
	msg := link.ErrorMessage(err)
	switch {
	case !ok || code == link.EINTERNAL:
		status, msg = http.StatusInternalServerError, "An error occurred."
		s.logger.LogAttrs(r.Context(), slog.LevelError, "internal error",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	case code == link.EINVALID:
		status = http.StatusBadRequest // Kutt's status for every refused field
	case code == link.ECONFLICT:
		status = http.StatusBadRequest
	}
	var ke *kuttMessage
	if errors.As(err, &ke) {
		msg = ke.msg
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="linkbolt"`)
	}
	writeJSON(w, status, map[string]string{"error": msg})
}

// kuttMessage is an error answered with Kutt's own message for it.
type kuttMessage struct {
	msg string
	err error
}

func (e *kuttMessage) Error() string { return e.msg }
func (e *kuttMessage) Unwrap() error { return e.err }

// kuttRefuse is a 400 with Kutt's message msg.
func kuttRefuse(msg string) error {
	return &kuttMessage{msg: msg, err: link.Errorf(link.EINVALID, "%s", msg)}
}

// kuttLink is a link as Kutt answers it.
type kuttLink struct {
	ID          string  `json:"id"`
	Address     string  `json:"address"`
	Domain      *string `json:"domain"`
	Description *string `json:"description"`
	Banned      bool    `json:"banned"` // always false: linkbolt's blocklist refuses, it does not ban
	Password    bool    `json:"password"`
	ExpireIn    *string `json:"expire_in"`
	Target      string  `json:"target"`
	VisitCount  int64   `json:"visit_count"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`
	Link        string  `json:"link"`
}

func (s *Server) newKuttLink(l *link.Link) kuttLink {
	out := kuttLink{
		ID: l.ID, Address: l.Alias, Domain: optional(l.Domain), Description: optional(l.Title),
		Password: l.PasswordHash != "",
		Target:   l.DestinationURL, VisitCount: l.Clicks,
		CreatedAt: ts(l.CreatedAt), UpdatedAt: ts(l.UpdatedAt), Link: s.shortURL(l),
	}
	if l.ExpiresAt != nil {
		at := ts(*l.ExpiresAt)
		out.ExpireIn = &at
	}
	return out
}

type kuttLinkList struct {
	Total int        `json:"total"`
	Limit int        `json:"limit"`
	Skip  int        `json:"skip"`
	Data  []kuttLink `json:"data"`
}

// kuttListLinks lists the workspace's links newest first, Kutt's way:
// skip and limit (10 by default, at most 50), and search.
func (s *Server) kuttListLinks(w http.ResponseWriter, r *http.Request, c *caller) error {
	q := r.URL.Query()
	limit, skip := 10, 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return kuttRefuse("limit query is not valid.")
		}
		if n > 0 {
			limit = min(n, kuttMaxLimit)
		}
	}
	if v := q.Get("skip"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 10_000_000 {
			return kuttRefuse("skip query is not valid.")
		}
		skip = n
	}
	f := link.LinkFilter{WorkspaceID: c.workspace.ID, Search: strings.TrimSpace(q.Get("search")),
		Limit: limit, ScanLimit: s.cfg.SearchScanLimit}
	if f.Search != "" {
		release, err := s.admit(w, r, costlySearch)
		if err != nil {
			return err
		}
		defer release()
	}
	// The store pages by page and limit: a skip between two pages reads
	// both and keeps what lies between.
	f.Page = skip/limit + 1
	p, err := s.links.FindLinkPage(r.Context(), f)
	if err != nil {
		return err
	}
	links := p.Links
	if off := skip % limit; off > 0 {
		links = links[min(off, len(links)):]
		if len(p.Links) == limit {
			f.Page++
			next, err := s.links.FindLinkPage(r.Context(), f)
			if err != nil {
				return err
			}
			links = append(links, next.Links[:min(off, len(next.Links))]...)
		}
	}
	out := kuttLinkList{Total: p.Total, Limit: limit, Skip: skip, Data: make([]kuttLink, 0, len(links))}
	for _, l := range links {
		out.Data = append(out.Data, s.newKuttLink(l))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type kuttNewLink struct {
	Target      string `json:"target"`
	Description string `json:"description"`
	ExpireIn    string `json:"expire_in"`
	Password    string `json:"password"`
	CustomURL   string `json:"customurl"`
	Reuse       bool   `json:"reuse"`
	Domain      string `json:"domain"`
}

// kuttTarget is a target as Kutt takes it: trimmed, http:// added when it
// has no scheme.
func kuttTarget(raw string) string {
	t := strings.TrimSpace(raw)
	if t != "" && !strings.Contains(t, "://") {
		t = "http://" + t
	}
	return t
}

// kuttFieldError is err, a refused link, with Kutt's message for the
// field it names.
func kuttFieldError(err error) error {
	for _, f := range link.ErrorFields(err) {
		switch f.Field {
		case "destination_url":
			return &kuttMessage{msg: "URL is not valid: " + f.Message + ".", err: err}
		case "alias":
			return &kuttMessage{msg: "Custom URL is not valid: " + f.Message + ".", err: err}
		case "title":
			return &kuttMessage{msg: "Description is not valid: " + f.Message + ".", err: err}
		case "password":
			return &kuttMessage{msg: "Password is not valid: " + f.Message + ".", err: err}
		}
	}
	if link.ErrorCode(err) == link.ECONFLICT {
		return &kuttMessage{msg: "Custom URL is already in use.", err: err}
	}
	return err
}

// kuttCreateLink creates a link (201), or with reuse answers the
// workspace's link to the same target (200).
func (s *Server) kuttCreateLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in kuttNewLink
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	target := kuttTarget(in.Target)
	if target == "" {
		return kuttRefuse("Target is missing.")
	}
	if len(target) > 2040 {
		return kuttRefuse("Maximum URL length is 2040.")
	}
	now := s.now()
	l := &link.Link{WorkspaceID: c.workspace.ID, DestinationURL: target, Alias: strings.TrimSpace(in.CustomURL),
		CreatedAt: now, UpdatedAt: now}
	l.Title = strings.TrimSpace(in.Description)
	if in.ExpireIn != "" {
		d, err := kuttDuration(in.ExpireIn)
		if err != nil {
			return err
		}
		at := now.Add(d)
		l.ExpiresAt = &at
	}
	if in.Domain != "" {
		domain, err := s.linkDomain(r.Context(), c.workspace.ID, in.Domain, false)
		if err != nil {
			return &kuttMessage{msg: "You can't use this domain.", err: err}
		}
		l.Domain = domain
	}
	if in.Password != "" {
		if n := len([]rune(in.Password)); n < 3 || n > 64 {
			return kuttRefuse("Password length must be between 3 and 64.")
		}
	}
	if err := s.checkNewLink(l); err != nil {
		return kuttFieldError(err)
	}
	if in.Reuse {
		release, err := s.admit(w, r, costlySearch) // the reuse check is a search
		if err != nil {
			return err
		}
		defer release()
		shortenByDestinationMu.Lock()
		defer shortenByDestinationMu.Unlock()
		dup, err := s.findDestination(r.Context(), c.workspace.ID, l.DestinationURL,
			func(d *link.Link) bool { return d.Domain == l.Domain })
		if err != nil {
			return err
		}
		if dup != nil {
			writeJSON(w, http.StatusOK, s.newKuttLink(dup))
			return nil
		}
	}
	if in.Password != "" {
		hash, err := s.hashLinkPassword(w, r, in.Password)
		if err != nil {
			return kuttFieldError(err)
		}
		l.PasswordHash = hash
	}
	if err := s.links.CreateLink(r.Context(), l); err != nil {
		return kuttFieldError(err)
	}
	writeJSON(w, http.StatusCreated, s.newKuttLink(l))
	return nil
}

type kuttLinkEdit struct {
	Target      string  `json:"target"`
	Address     string  `json:"address"`
	Description *string `json:"description"`
	ExpireIn    string  `json:"expire_in"`
	Password    *string `json:"password"`
}

// kuttUpdateLink changes a link as Kutt's edit does: an empty or absent
// target, address or expire_in leaves it as it is, a description given
// (even empty) replaces it, and a password left out or empty removes the
// link's password (Kutt's edit form sends it back each time).
func (s *Server) kuttUpdateLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in kuttLinkEdit
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	now := s.now()
	var upd link.LinkUpdate
	if t := kuttTarget(in.Target); t != "" {
		if len(t) > 2040 {
			return kuttRefuse("Maximum URL length is 2040.")
		}
		if msg := link.CheckDestination(t, s.servedRules); msg != "" {
			return kuttRefuse("URL is not valid: " + msg + ".")
		}
		upd.DestinationURL = &t
	}
	if a := strings.TrimSpace(in.Address); a != "" {
		upd.Alias = &a
	}
	if in.Description != nil {
		d := strings.TrimSpace(*in.Description)
		upd.Limits.Title = &d
	}
	if in.ExpireIn != "" {
		d, err := kuttDuration(in.ExpireIn)
		if err != nil {
			return err
		}
		at := now.Add(d)
		upd.Limits.ExpiresAt = &at
	}
	none := ""
	upd.PasswordHash = &none
	if in.Password != nil && *in.Password != "" {
		if n := len([]rune(*in.Password)); n < 3 || n > 64 {
			return kuttRefuse("Password length must be between 3 and 64.")
		}
		hash, err := s.hashLinkPassword(w, r, *in.Password)
		if err != nil {
			return kuttFieldError(err)
		}
		upd.PasswordHash = &hash
	}
	l, err := s.links.UpdateLink(r.Context(), c.workspace.ID, c.params.ByName("id"), upd, func(l *link.Link) error {
		if err := l.Validate(s.rules.WithDomain(l.Domain)); err != nil {
			return err
		}
		var which linkDestinations
		if upd.DestinationURL != nil {
			which |= destMain
		}
		return s.checkBlocked(l, which)
	})
	if isNotFound(err) {
		return &kuttMessage{msg: "Link was not found.", err: err}
	} else if err != nil {
		return kuttFieldError(err)
	}
	writeJSON(w, http.StatusOK, s.newKuttLink(l))
	return nil
}

func (s *Server) kuttDeleteLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	err := s.links.DeleteLink(r.Context(), c.workspace.ID, c.params.ByName("id"))
	if isNotFound(err) {
		return &kuttMessage{msg: "Could not delete the link.", err: err}
	} else if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"message": "Link has been deleted successfully."})
	return nil
}

// kuttDuration parses Kutt's expire_in, a duration as the ms package
// reads it ("30m", "8h", "42 days", "2 weeks"): at least a minute.
func kuttDuration(raw string) (time.Duration, error) {
	const bad = "Expire format is invalid. Valid examples: 1m, 8h, 42 days."
	v := strings.ToLower(strings.TrimSpace(raw))
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.' || i == 0 && v[i] == '-') {
		i++
	}
	n, err := strconv.ParseFloat(v[:i], 64)
	if err != nil || i == 0 {
		return 0, kuttRefuse(bad)
	}
	unit := strings.TrimSpace(v[i:])
	var per time.Duration
	switch unit {
	case "", "ms", "msec", "msecs", "millisecond", "milliseconds":
		per = time.Millisecond
	case "s", "sec", "secs", "second", "seconds":
		per = time.Second
	case "m", "min", "mins", "minute", "minutes":
		per = time.Minute
	case "h", "hr", "hrs", "hour", "hours":
		per = time.Hour
	case "d", "day", "days":
		per = 24 * time.Hour
	case "w", "week", "weeks":
		per = 7 * 24 * time.Hour
	case "y", "yr", "yrs", "year", "years":
		per = time.Duration(365.25 * 24 * float64(time.Hour))
	default:
		return 0, kuttRefuse(bad)
	}
	d := n * float64(per)
	switch {
	case d < float64(time.Minute):
		return 0, kuttRefuse("Expire time should be more than 1 minute.")
	case d > float64(100*365*24*time.Hour):
		return 0, kuttRefuse(bad)
	}
	return time.Duration(d), nil
}

// kuttStats are a link's stats as Kutt answers them, with the link.
type kuttStats struct {
	kuttLink
	LastDay   kuttPeriod `json:"lastDay"`
	LastWeek  kuttPeriod `json:"lastWeek"`
	LastMonth kuttPeriod `json:"lastMonth"`
	LastYear  kuttPeriod `json:"lastYear"`
	UpdatedAt string     `json:"updatedAt"`
}

type kuttPeriod struct {
	Stats kuttPeriodStats `json:"stats"`
	Views []int64         `json:"views"`
	Total int64           `json:"total"`
}

type kuttPeriodStats struct {
	Browser  []kuttStat `json:"browser"`
	OS       []kuttStat `json:"os"`
	Country  []kuttStat `json:"country"`
	Referrer []kuttStat `json:"referrer"`
}

type kuttStat struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

// kuttLinkStats answers a link's stats over the last day (24 hours), week
// (7 days), month (30 days) and year (12 months), as Kutt does: views per
// hour, day or month, oldest first, and the top browsers, systems,
// countries and referrers of each period, bots left out.
func (s *Server) kuttLinkStats(w http.ResponseWriter, r *http.Request, c *caller) error {
	l, err := s.links.FindLinkByID(r.Context(), c.workspace.ID, c.params.ByName("id"))
	if isNotFound(err) {
		return &kuttMessage{msg: "Link could not be found.", err: err}
	} else if err != nil {
		return err
	}
	release, err := s.admit(w, r, costlyAnalytics)
	if err != nil {
		return err
	}
	defer release()
	now := s.now().UTC()
	hour := now.Truncate(time.Hour)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	period := func(start time.Time, n int, bucket func(t time.Time) int) (kuttPeriod, error) {
		st, err := s.clicks.Stats(r.Context(), link.StatsFilter{WorkspaceID: c.workspace.ID, Scope: link.ScopeLink,
			ID: l.ID, Start: start, End: hour.Add(time.Hour), ExcludeBots: true, TopLimit: 10})
		if err != nil {
			return kuttPeriod{}, err
		}
		p := kuttPeriod{Views: make([]int64, n), Total: st.Clicks}
		for _, b := range st.Hourly {
			if i := bucket(b.Start.UTC()); i >= 0 && i < n {
				p.Views[i] += b.Clicks - b.BotClicks
			}
		}
		top := func(dim string) []kuttStat {
			out := []kuttStat{}
			for _, e := range st.Top[dim] {
				out = append(out, kuttStat{Name: e.Value, Value: e.Clicks})
			}
			return out
		}
		p.Stats = kuttPeriodStats{Browser: top(link.DimBrowsers), OS: top(link.DimOS),
			Country: top(link.DimCountries), Referrer: top(link.DimReferrers)}
		return p, nil
	}
	out := kuttStats{kuttLink: s.newKuttLink(l), UpdatedAt: ts(now)}
	firstHour := hour.Add(-23 * time.Hour)
	if out.LastDay, err = period(firstHour, 24, func(t time.Time) int { return int(t.Sub(firstHour) / time.Hour) }); err != nil {
		return err
	}
	firstWeekDay := day.AddDate(0, 0, -6)
	if out.LastWeek, err = period(firstWeekDay, 7, func(t time.Time) int { return int(t.Sub(firstWeekDay) / (24 * time.Hour)) }); err != nil {
		return err
	}
	firstMonthDay := day.AddDate(0, 0, -29)
	if out.LastMonth, err = period(firstMonthDay, 30, func(t time.Time) int { return int(t.Sub(firstMonthDay) / (24 * time.Hour)) }); err != nil {
		return err
	}
	firstMonth := month.AddDate(0, -11, 0)
	if out.LastYear, err = period(firstMonth, 12, func(t time.Time) int {
		return (t.Year()-firstMonth.Year())*12 + int(t.Month()) - int(firstMonth.Month())
	}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// kuttDomain is a domain as Kutt answers it.
type kuttDomain struct {
	ID        string `json:"id"`
	Address   string `json:"address"`
	Banned    bool   `json:"banned"`
	Homepage  string `json:"homepage"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func (s *Server) newKuttDomain(d *link.Domain) kuttDomain {
	home := d.RootRedirectURL
	if home == "" {
		home = s.primary.Host
	}
	return kuttDomain{ID: d.ID, Address: d.Hostname, Homepage: home, CreatedAt: ts(d.CreatedAt), UpdatedAt: ts(d.UpdatedAt)}
}

// kuttUser answers Kutt's user route for the key: the e-mail of the
// member who made it (empty for a key made by a key), its workspace's
// domains, and an empty apikey: linkbolt keeps only a hash of each key.
func (s *Server) kuttUser(w http.ResponseWriter, r *http.Request, c *caller) error {
	email := ""
	if c.user != nil {
		email = c.user.Email
	} else if c.key != nil && c.key.CreatedBy.Type == link.CreatorUser {
		if u, err := s.users.FindUserByID(r.Context(), c.key.CreatedBy.ID); err == nil {
			email = u.Email
		} else if !isNotFound(err) {
			return err
		}
	}
	ds, err := s.domains.FindDomains(r.Context(), c.workspace.ID)
	if err != nil {
		return err
	}
	out := struct {
		APIKey  string       `json:"apikey"`
		Email   string       `json:"email"`
		Domains []kuttDomain `json:"domains"`
	}{Email: email, Domains: make([]kuttDomain, 0, len(ds))}
	for _, d := range ds {
		out.Domains = append(out.Domains, s.newKuttDomain(d))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// kuttCreateDomain adds a custom domain to the workspace, as POST
// /v1/domains does (to be verified there with its TXT record), with
// Kutt's homepage as the domain's root redirect.
func (s *Server) kuttCreateDomain(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in struct {
		Address  string `json:"address"`
		Homepage string `json:"homepage"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	if strings.TrimSpace(in.Address) == "" {
		return kuttRefuse("Address is missing.")
	}
	var root *string
	if h := kuttTarget(in.Homepage); h != "" {
		root = &h
	}
	d, err := s.createDomain(r, c, in.Address, root, nil)
	if err != nil {
		for _, f := range link.ErrorFields(err) {
			switch f.Field {
			case "hostname":
				return &kuttMessage{msg: "Domain is not valid: " + f.Message + ".", err: err}
			case "root_redirect_url":
				return &kuttMessage{msg: "Homepage is not valid: " + f.Message + ".", err: err}
			}
		}
		return err
	}
	writeJSON(w, http.StatusOK, s.newKuttDomain(d))
	return nil
}

func (s *Server) kuttDeleteDomain(w http.ResponseWriter, r *http.Request, c *caller) error {
	err := s.domains.DeleteDomain(r.Context(), c.workspace.ID, c.params.ByName("id"))
	if isNotFound(err) {
		return &kuttMessage{msg: "Could not delete the domain.", err: err}
	} else if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"message": "Domain deleted successfully"})
	return nil
}
