package server

// The redirect side of the link controls: password, rules, variants,
// social card, interstitials. A link with none of them never reaches this file (see
// link.Link.HasControls in redirect).

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash/fnv"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/crypto/bcrypt"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
)

const (
	// DefaultUnlockTTL is how long a right password unlocks a link in a
	// browser when links.unlock_ttl is not set.
	DefaultUnlockTTL = 24 * time.Hour
	// linkPasswordPerMinute bounds the password guesses at one link from
	// one address (form and X-Link-Password alike).
	linkPasswordPerMinute = 10
	// linkPasswordCost is the bcrypt cost of link passwords: lower than
	// the users' (every visitor's guess is checked, and the guesses are
	// rate-limited per link and address), still slow for an offline guesser.
	linkPasswordCost = bcrypt.DefaultCost
	// unlockCookie names the cookie that a right password sets, scoped to
	// the path of the link's code.
	unlockCookie = "lb_unlock"
	// linkPasswordHeader resolves a protected link for API clients.
	linkPasswordHeader = "X-Link-Password"
)

// controlKeys are the secrets of the link controls, derived from the
// server's JWT secret: one signs unlock cookies, one seeds the hash that
// keeps a visitor on their variant (stable across days, unlike the daily
// salt of the analytics' visitor hash).
type controlKeys struct {
	unlock  []byte
	variant uint64 // the seed of the variant hash
}

func newControlKeys(secret []byte) controlKeys {
	return controlKeys{unlock: deriveKey(secret, "linkbolt link controls: unlock cookie"),
		variant: binary.BigEndian.Uint64(deriveKey(secret, "linkbolt link controls: variant"))}
}

// deriveKey returns the key of one use of the server secret, named by
// label: HMAC-SHA256(secret, label), so no two uses share a key.
func deriveKey(secret []byte, label string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	return m.Sum(nil)
}

// linkPasswords hashes and checks link passwords: linkPasswordCost, or the
// users' cost where that is lower (tests).
func (s *Server) linkPasswords() auth.Passwords {
	cost := linkPasswordCost
	if c := s.passwords.Cost; c != 0 && c < cost {
		cost = c
	}
	return auth.Passwords{Cost: cost}
}

// redirectControlled answers GET and HEAD of a link with controls: the
// social card for link-preview bots, the password form until the visitor
// is unlocked, then the redirect to the destination the rules and
// variants pick.
func (s *Server) redirectControlled(w http.ResponseWriter, r *http.Request, d *link.Domain, l *link.Link) {
	if l.OG != nil && analytics.PreviewBot(r.Header.Get("User-Agent")) {
		s.serveOGPage(w, r, l)
		return
	}
	// A protected link tells nothing of where it goes before the password:
	// not even that it loops (redirect leaves that to this point).
	if l.PasswordHash != "" && !s.unlockedGet(w, r, l) {
		return
	}
	dest, variant := s.pickDestination(r, l)
	if s.loops(dest) {
		s.loopAnswer(w, r, l, dest) // before a click is taken
		return
	}
	// A plain link's click limit was taken by controlRedirect already; a
	// protected link's is taken once the visitor is through.
	if l.PasswordHash != "" && !s.takeClick(w, r, l) {
		return
	}
	s.redirectTo(w, r, l, dest, variant, 0)
}

// loopAnswer refuses to redirect l to dest, which points back into this
// service.
func (s *Server) loopAnswer(w http.ResponseWriter, r *http.Request, l *link.Link, dest string) {
	s.writeError(w, r, errHTTP(codeRedirectLoop,
		"short link "+strconv.Quote(l.Alias)+" points back into this service ("+hostOf(dest)+"), which would loop: change its destination"))
}

// redirectTo records a click for a GET (or a POST of the right password)
// and redirects to dest, the link's variant (from 1; 0 for none), with the
// link's UTM values and what the visitor added where the link forwards it
// (forward.go). status 0 is the link's redirect code. Answers vary by
// visitor, so none is cached. The caller has refused a dest that loops
// (loopAnswer), before taking a click.
func (s *Server) redirectTo(w http.ResponseWriter, r *http.Request, l *link.Link, dest string, variant uint8, status int) {
	loc := destinationTo(l, dest)
	if l.ForwardPath || l.ForwardQuery {
		var ok bool
		if loc, ok = s.forwardedLocation(w, r, l, loc); !ok {
			return
		}
	}
	// The interstitials (interstitial.go) take the place of the redirect
	// and its click.
	if (l.EscapeInApp || l.Retargeting) && s.interstitial(w, r, l, loc, variant) {
		return
	}
	if r.Method != http.MethodHead {
		s.recordClick(r, l, s.now(), variant)
	}
	h := w.Header()
	h["Location"] = []string{loc}
	h["Cache-Control"] = cacheTemporary
	if status == 0 {
		status = l.RedirectCode
	}
	w.WriteHeader(status)
}

// destinationTo is Destination of l going to dest instead of its own
// destination.
func destinationTo(l *link.Link, dest string) string {
	if l.UTMSource == "" && l.UTMMedium == "" && l.UTMCampaign == "" {
		return asciiURL(dest)
	}
	c := *l
	c.DestinationURL = dest
	return Destination(&c)
}

func isLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return false
		}
	}
	return true
}

// visitorFacts are what rules test of a request, each worked out once
// when a rule first needs it.
type visitorFacts struct {
	r              *http.Request
	s              *Server
	ua             analytics.UAClass
	country, lang  string
	hasUA, hasLang bool
	addr           netip.Addr
	hasAddr        bool
	query          url.Values
}

// headerValue is h.Get(key) for a key already in canonical form, without
// canonicalising it again on every call.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (f *visitorFacts) class() *analytics.UAClass {
	if !f.hasUA {
		f.ua, f.hasUA = f.s.uas.Classify(headerValue(f.r.Header, "User-Agent")), true
	}
	return &f.ua
}

func (f *visitorFacts) countryCode() string {
	if f.country == "" {
		f.country = f.s.geo.Country(f.address())
	}
	return f.country
}

func (f *visitorFacts) address() netip.Addr {
	if !f.hasAddr {
		f.addr, f.hasAddr = f.s.clientAddr(f.r), true
	}
	return f.addr
}

func (f *visitorFacts) language() string {
	if !f.hasLang {
		f.lang, f.hasLang = preferredLanguage(headerValue(f.r.Header, "Accept-Language")), true
	}
	return f.lang
}

func (f *visitorFacts) queryValues() url.Values {
	if f.query == nil && f.r.URL.RawQuery != "" {
		f.query, _ = url.ParseQuery(f.r.URL.RawQuery)
	}
	return f.query // a nil map reads as empty
}

func (f *visitorFacts) matches(c *link.RuleCondition) bool {
	if c.Device != "" && !strings.EqualFold(c.Device, f.class().Device) {
		return false
	}
	if c.OS != "" && !strings.EqualFold(c.OS, f.class().OS) {
		return false
	}
	if c.Browser != "" && !strings.EqualFold(c.Browser, f.class().Browser) {
		return false
	}
	if c.Country != "" && c.Country != f.countryCode() {
		return false
	}
	if c.Language != "" && c.Language != f.language() {
		return false
	}
	if q := c.Query; q != nil {
		vals, ok := f.queryValues()[q.Name]
		if !ok {
			return false
		}
		found := false
		for _, v := range vals {
			if v == q.Value {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if len(c.IP) > 0 && !c.ContainsAddr(f.address()) {
		return false
	}
	if (c.After != nil || c.Before != nil) && !c.InWindow(f.s.now()) {
		return false
	}
	return true
}

// preferredLanguage returns the primary tag, lower case, of the language
// an Accept-Language header prefers most (the highest q, the first among
// equals; q=0 is "not this one"), or "".
func preferredLanguage(h string) string {
	best, bestQ := "", 0
	for rest := h; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		tag, params, _ := strings.Cut(part, ";")
		tag = strings.TrimSpace(tag)
		if tag == "" || tag == "*" {
			continue
		}
		q := 1000
		if p := strings.TrimSpace(params); strings.HasPrefix(p, "q=") {
			v, ok := qValue(p[2:])
			if !ok {
				continue
			}
			q = v
		}
		if q > bestQ {
			best, _, _ = strings.Cut(tag, "-")
			bestQ = q
		}
	}
	if !isLower(best) {
		best = strings.ToLower(best)
	}
	return best
}

// qValue reads the weight of an Accept-Language entry, in thousandths:
// 0 to 1 with at most three decimals (RFC 9110's qvalue); ok is false for
// anything else.
func qValue(s string) (q int, ok bool) {
	if s == "" || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	q = int(s[0]-'0') * 1000
	s = s[1:]
	if s == "" {
		return q, true
	}
	if s[0] != '.' || len(s) > 4 {
		return 0, false
	}
	scale := 100
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		q += int(s[i]-'0') * scale
		scale /= 10
	}
	return q, q <= 1000
}

// pickDestination returns where the request goes: the link's app
// destination for the visitor's system (ios_url on iOS and iPadOS,
// android_url on Android), else the first rule that matches, else the
// visitor's variant (and its number, from 1, which the click carries),
// else the link's destination. Rules come before the A/B split: a rule
// takes its visitors out of it.
func (s *Server) pickDestination(r *http.Request, l *link.Link) (dest string, variant uint8) {
	f := visitorFacts{r: r, s: s}
	if l.IOSURL != "" || l.AndroidURL != "" {
		switch f.class().OS {
		case "iOS", "iPadOS":
			if l.IOSURL != "" {
				return l.IOSURL, 0
			}
		case "Android":
			if l.AndroidURL != "" {
				return l.AndroidURL, 0
			}
		}
	}
	for i := range l.Rules {
		if f.matches(&l.Rules[i].If) {
			return l.Rules[i].Then, 0
		}
	}
	if len(l.Variants) > 0 {
		i := s.variantOf(&f, l)
		return l.Variants[i].DestinationURL, uint8(i + 1)
	}
	return l.DestinationURL, 0
}

// variantOf returns the index of the visitor's variant of l: a hash of
// address and user agent (variantHash), seeded with a stable secret and
// mixed with the link's ID, picks a point in 0–99 that the weights
// divide. A visitor keeps their variant as long as both stay.
func (s *Server) variantOf(f *visitorFacts, l *link.Link) int {
	return variantIndex(l, variantHash(s.controlKeys.variant, f.address(), headerValue(f.r.Header, "User-Agent")))
}

// variantHash is the visitor's hash for the A/B split: xxHash64, seeded
// with a secret derived from the server's, of the address (16 bytes, IPv4
// as IPv4-mapped) and the user agent (cut as analytics cuts it). Stable
// across days and restarts; a tenth of the cost of an HMAC, which the
// redirect of every visitor of a split pays.
func variantHash(seed uint64, addr netip.Addr, ua string) uint64 {
	var d xxhash.Digest
	d.ResetWithSeed(seed)
	a := addr.As16()
	d.Write(a[:])
	d.Write([]byte{0})
	if len(ua) > analytics.MaxUALength {
		ua = ua[:analytics.MaxUALength]
	}
	d.WriteString(ua)
	return d.Sum64()
}

func variantIndex(l *link.Link, visitor uint64) int {
	h := fnv.New64a()
	h.Write([]byte(l.ID))
	x := visitor ^ h.Sum64()
	// splitmix64's finaliser spreads the bits.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	point := int(x % 100)
	for i, v := range l.Variants {
		if point < v.Weight {
			return i
		}
		point -= v.Weight
	}
	return len(l.Variants) - 1
}

// unlockValue is the unlock cookie of l until exp: exp in Unix seconds and
// an HMAC over the link's ID, its password hash (a new password ends every
// unlock) and exp.
func (s *Server) unlockValue(l *link.Link, exp int64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(exp))
	m := hmac.New(sha256.New, s.controlKeys.unlock)
	m.Write([]byte(l.ID))
	m.Write([]byte{0})
	m.Write([]byte(l.PasswordHash))
	m.Write(b[:])
	return base64.RawURLEncoding.EncodeToString(append(b[:], m.Sum(nil)[:16]...))
}

// unlockedByCookie reports whether the request carries a valid unlock
// cookie for l.
func (s *Server) unlockedByCookie(r *http.Request, l *link.Link) bool {
	for _, c := range r.Cookies() {
		if c.Name != unlockCookie {
			continue
		}
		raw, err := base64.RawURLEncoding.DecodeString(c.Value)
		if err != nil || len(raw) != 24 {
			continue
		}
		exp := int64(binary.BigEndian.Uint64(raw[:8]))
		if s.now().Unix() >= exp {
			continue
		}
		if hmac.Equal([]byte(c.Value), []byte(s.unlockValue(l, exp))) {
			return true
		}
	}
	return false
}

// setUnlockCookie lets the browser through l for links.unlock_ttl.
func (s *Server) setUnlockCookie(w http.ResponseWriter, d *link.Domain, l *link.Link) {
	ttl := s.cfg.UnlockTTL
	if ttl <= 0 {
		ttl = DefaultUnlockTTL
	}
	exp := s.now().Add(ttl)
	secure := s.primary.Scheme == "https"
	if d != nil {
		secure = s.cfg.DomainScheme != "http"
	}
	http.SetCookie(w, &http.Cookie{Name: unlockCookie, Value: s.unlockValue(l, exp.Unix()), Path: "/" + l.Alias,
		Expires: exp, MaxAge: int(ttl / time.Second), HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
}

// guessAllowed takes one password guess at l from the request's client
// (its address; an IPv6 client's /64, as logins count it: clientIP) from
// the limiter, and answers 429 (a page, or problem+json for API clients)
// when there is none left.
func (s *Server) guessAllowed(w http.ResponseWriter, r *http.Request, l *link.Link, page bool) bool {
	dec := s.limiters.Allow("link-password:"+l.ID+"|"+s.clientIP(r), linkPasswordPerMinute)
	if dec.Allowed {
		return true
	}
	retryAfter(w, dec.RetryAfter)
	if page {
		s.writePasswordPage(w, r, http.StatusTooManyRequests, l,
			"Too many wrong passwords from your address. Wait a minute and try again.")
		return false
	}
	s.writeError(w, r, link.Errorf(link.ERATELIMITED, "too many password guesses at this link from your address: retry in %d seconds", int(dec.RetryAfter/time.Second)))
	return false
}

// unlocked reports whether the request may go through the protected link
// l: a POST (the password form) by its password (unlockedPost), a GET or
// HEAD by unlockedGet. Otherwise it has answered.
func (s *Server) unlocked(w http.ResponseWriter, r *http.Request, l *link.Link) bool {
	if r.Method == http.MethodPost {
		return s.unlockedPost(w, r, l)
	}
	return s.unlockedGet(w, r, l)
}

// unlockedPost reports whether the password posted with the form (parsed
// already) is l's, checked through slowHash. Otherwise it has answered the
// form again: 401 with a message, 429, or 503 when the server is busy.
func (s *Server) unlockedPost(w http.ResponseWriter, r *http.Request, l *link.Link) bool {
	if !s.guessAllowed(w, r, l, true) {
		return false
	}
	ok, err := s.verifyLinkPassword(w, r, l.PasswordHash, r.PostForm.Get("password"))
	if err != nil {
		s.writePasswordPage(w, r, http.StatusServiceUnavailable, l, "The server is busy. Try again in a moment.")
		return false
	}
	if !ok {
		s.writePasswordPage(w, r, http.StatusUnauthorized, l, "Wrong password. Try again.")
		return false
	}
	return true
}

// unlockedGet reports whether a GET or HEAD may go through a protected
// link: by its unlock cookie or its X-Link-Password header. Otherwise it
// has answered: the password form, 401 for a wrong header, 429.
func (s *Server) unlockedGet(w http.ResponseWriter, r *http.Request, l *link.Link) bool {
	if s.unlockedByCookie(r, l) {
		return true
	}
	if pw, ok := r.Header[linkPasswordHeader]; ok {
		if !s.guessAllowed(w, r, l, false) {
			return false
		}
		if len(pw) == 1 {
			ok, err := s.verifyLinkPassword(w, r, l.PasswordHash, pw[0])
			if err != nil {
				s.writeError(w, r, err)
				return false
			}
			if ok {
				return true
			}
		}
		s.writeError(w, r, link.Errorf(link.EUNAUTHORIZED, "the %s header does not match the password of short link %q", linkPasswordHeader, l.Alias))
		return false
	}
	s.writePasswordPage(w, r, http.StatusOK, l, "")
	return false
}

// servePasswordPost answers POST /{code} of a protected link, its
// password form: the right password sets the unlock cookie and redirects
// (303, a click); a wrong one answers the form again with a message (401).
// It also answers POST /{code}+, the report form of a link's preview
// (servePreviewReport). It reports false, having answered nothing, for
// any other code: a POST there is answered as before link controls.
func (s *Server) servePasswordPost(w http.ResponseWriter, r *http.Request, d *link.Domain, code string) bool {
	host := ""
	if d != nil {
		host = d.Hostname
	}
	if c, ok := strings.CutSuffix(code, "+"); ok && link.ValidCodeSyntax(c) {
		s.servePreviewReport(w, r, d, c) // the preview's report form
		return true
	}
	if !link.ValidCodeSyntax(code) {
		return false
	}
	l, err := s.links.FindLinkByAlias(r.Context(), host, code)
	if isNotFound(err) {
		return false
	} else if err != nil {
		s.writeError(w, r, err)
		return true
	}
	if l.PasswordHash == "" {
		return false
	}
	s.unlockPost(w, r, d, l)
	return true
}

func (s *Server) unlockPost(w http.ResponseWriter, r *http.Request, d *link.Domain, l *link.Link) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		s.writePasswordPage(w, r, http.StatusBadRequest, l, "The form could not be read. Try again.")
		return
	}
	// An expired, used-up or blocked link asks for no password, unless
	// it goes to its expired_url (goneRedirect checks the password then).
	if (l.Limited() || s.blocklist.active()) && s.controlRedirect(w, r, l, s.now()) {
		return
	}
	if !s.unlockedPost(w, r, l) {
		return
	}
	dest, variant := s.pickDestination(r, l)
	if s.loops(dest) {
		s.loopAnswer(w, r, l, dest) // before a click is taken
		return
	}
	if !s.takeClick(w, r, l) {
		return
	}
	s.setUnlockCookie(w, d, l)
	s.redirectTo(w, r, l, dest, variant, http.StatusSeeOther)
}
