package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbolt/linkbolt/internal/faultlog"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

// DefaultBlocklistPoll is how often the blocklist file's modification
// time is checked when links.blocklist_poll is not set.
const DefaultBlocklistPoll = 5 * time.Second

// blocklist is the destination blocklist: the entries of the file at
// links.blocklist_path and those added through the admin API, compiled
// into a host map and a list of patterns.
//
// Entry syntax (one a line in the file, "#" starts a comment):
//
//   - a host, "example.com": the host and every subdomain of it;
//   - a pattern, an entry with a "/" or a "*": matched against the
//     destination's host, path and query ("example.com/phish?x=1", the
//     host in lower case as A-labels, no scheme, no port, no fragment),
//     "*" standing for any run of characters, the whole string to match;
//     "example.com/promo/*", "*.example.net/login*". A pattern without
//     "/" ("*.example.org", "bad-*.example") is matched against the host
//     alone. The path and query are matched as a browser requests them,
//     in lower case (blockTail: "/./PROMO/x", "/%70romo/x", "//promo/x"
//     are "/promo/x"), and a pattern's own are normalised the same way.
//
// Every destination of a link is matched: destination_url, rules[].then,
// variants[].destination_url when it is saved and served, expired_url
// when saved and where it is served (checkBlocked, blocksLinkAt,
// goneRedirect).
//
// A scheme in front ("https://"), a port and a lone "/" after the host
// are dropped, and hosts are lowered and turned into A-labels, so that
// "bücher.example" blocks "xn--bcher-kva.example".
//
// The file is not watched: its modification time and size are compared,
// at most every poll interval, by the first request that needs the list
// (a redirect, a create) after the interval, with the injected clock.
// A redirect of a plain link reads one atomic pointer while the list is
// empty, and looks its host up in a map otherwise.
type blocklist struct {
	path   string
	poll   time.Duration
	store  link.BlocklistService
	now    func() time.Time
	logger *slog.Logger

	next atomic.Int64 // unix nanos of the next look at the file

	mu        sync.Mutex // held by one reload at a time
	fileMod   time.Time
	fileSize  int64
	fileSeen  bool
	fileLines []string
	apiLines  []string

	list atomic.Pointer[compiledBlocklist] // nil while empty

	// changes, when the store's entries change through other processes
	// too (PostgreSQL), says when to read them again: seen is the version
	// read last, retryAt (unix nanos) when to try again after a failed
	// read.
	changes   link.BlocklistChanges
	seen      atomic.Uint64
	retryAt   atomic.Int64
	reloading atomic.Bool // a read of the store is under way
	// changed counts the changes made through this process (under mu):
	// a read of the store begun before one is older than the list, and
	// is dropped (see reloadStore).
	changed uint64
	readLog *faultlog.Log // the failed reads of an outage, logged once
}

// compiledBlocklist is a blocklist ready to be matched.
type compiledBlocklist struct {
	hosts    map[string]bool
	patterns []blockPattern
}

// blockPattern is a pattern entry: host is matched against a
// destination's host, tail (when the entry has a "/") against its path and
// query as blockTail spells them. The two are matched apart so that a "*"
// never runs from one into the other: "*.example.net/login*" must not
// block https://innocent.example/x.example.net/login.
type blockPattern struct {
	host, tail string
	hostOnly   bool
}

func newBlocklist(ctx context.Context, path string, poll time.Duration, store link.BlocklistService, now func() time.Time, logger *slog.Logger) (*blocklist, error) {
	if poll <= 0 {
		poll = DefaultBlocklistPoll
	}
	b := &blocklist{path: path, poll: poll, store: store, now: now, logger: logger,
		readLog: &faultlog.Log{Logger: logger, Now: now}}
	if store != nil {
		if c, ok := store.(link.BlocklistChanges); ok {
			b.changes = c
			b.seen.Store(c.BlocklistVersion())
		}
		lines, err := b.readStore(ctx)
		if err != nil {
			return nil, err
		}
		b.apiLines = lines
	}
	if path != "" {
		if err := b.reloadFile(); err != nil {
			return nil, err
		}
		b.next.Store(now().Add(poll).UnixNano())
	}
	b.compile()
	return b, nil
}

// readStore returns the entries stored through the API, in order.
func (b *blocklist) readStore(ctx context.Context) ([]string, error) {
	entries, err := b.store.ListBlockEntries(ctx)
	if err != nil {
		return nil, fmt.Errorf("blocklist: %w", err)
	}
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = e.Entry
	}
	return lines, nil
}

// active reports whether a redirect must look at the blocklist: it has
// entries, a file to look at again, or entries other processes may add.
func (b *blocklist) active() bool {
	return b.path != "" || b.changes != nil || b.list.Load() != nil
}

// refresh reads the stored entries again when another process may have
// changed them, and reloads the file when the poll interval has passed at
// now and the file changed (modification time or size). The store is read
// in the background, by one goroutine at a time, while requests go on
// with the list they have: a slow or locked database never holds a
// redirect. A failed read keeps the list as it was and is logged (a
// store's read is tried again at most once a second, and logged once an
// outage).
func (b *blocklist) refresh(now time.Time) {
	if b.changes != nil {
		if v := b.changes.BlocklistVersion(); v != b.seen.Load() && now.UnixNano() >= b.retryAt.Load() &&
			!b.reloading.Load() && b.reloading.CompareAndSwap(false, true) {
			go b.reloadStore(now, v)
		}
	}
	b.refreshFile(now)
}

// refreshNow is refresh for the API's blocklist routes: a change another
// process made is read before the answer, not in the background.
func (b *blocklist) refreshNow(now time.Time) {
	if b.changes != nil {
		if v := b.changes.BlocklistVersion(); v != b.seen.Load() && b.reloading.CompareAndSwap(false, true) {
			b.reloadStore(now, v)
		}
	}
	b.refreshFile(now)
}

func (b *blocklist) refreshFile(now time.Time) {
	if b.path == "" {
		return
	}
	next := b.next.Load()
	if now.UnixNano() < next || !b.next.CompareAndSwap(next, now.Add(b.poll).UnixNano()) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.reloadFile(); err != nil {
		b.logger.Error("blocklist: keeping the previous list", "err", err)
		return
	}
	b.compile()
}

// reloadStore reads the stored entries as of version v; the caller has
// set reloading, which it clears. The list is not locked during the read.
// A change made here meanwhile moved the version past v, so the entries
// are read again after.
func (b *blocklist) reloadStore(now time.Time, v uint64) {
	defer b.reloading.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	b.mu.Lock()
	changed := b.changed
	b.mu.Unlock()
	lines, err := b.readStore(ctx)
	if err != nil {
		b.retryAt.Store(now.Add(time.Second).UnixNano())
		b.readLog.Fail("the blocklist's entries cannot be read again; keeping those read before", err)
		return
	}
	b.readLog.OK("the blocklist's entries are read again")
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != changed {
		// A change made here while the store was read: the read may
		// predate it, and must not undo it; the version it moved has
		// the list read again.
		return
	}
	b.seen.Store(v)
	b.apiLines = lines
	b.compile()
}

// reloadFile reads the file when it changed since it was last read; the
// caller holds mu (or has the blocklist to itself). A missing file is an
// empty list.
func (b *blocklist) reloadFile() error {
	fi, err := os.Stat(b.path)
	if os.IsNotExist(err) {
		b.fileLines, b.fileSeen = nil, false
		return nil
	} else if err != nil {
		return fmt.Errorf("blocklist %s: %w", b.path, err)
	}
	if b.fileSeen && fi.ModTime().Equal(b.fileMod) && fi.Size() == b.fileSize {
		return nil
	}
	data, err := os.ReadFile(b.path)
	if err != nil {
		return fmt.Errorf("blocklist %s: %w", b.path, err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		e, problem := canonicalBlockEntry(line)
		if problem != "" {
			b.logger.Warn("blocklist: line skipped", "file", b.path, "line", n, "problem", problem)
			continue
		}
		lines = append(lines, e)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("blocklist %s: %w", b.path, err)
	}
	b.fileLines, b.fileMod, b.fileSize, b.fileSeen = lines, fi.ModTime(), fi.Size(), true
	return nil
}

// compile builds the list of the file's and the API's entries; the
// caller holds mu (or has the blocklist to itself).
func (b *blocklist) compile() {
	c := &compiledBlocklist{hosts: map[string]bool{}}
	for _, e := range slices.Concat(b.fileLines, b.apiLines) {
		if isBlockPattern(e) {
			// An entry stored before entries were normalised (or lowered)
			// is matched as its canonical form.
			if ce, problem := canonicalBlockEntry(e); problem == "" {
				e = ce
			}
			host, tail, hasTail := strings.Cut(e, "/")
			c.patterns = append(c.patterns, blockPattern{host: host, tail: "/" + tail, hostOnly: !hasTail})
		} else {
			c.hosts[e] = true
		}
	}
	if len(c.hosts) == 0 && len(c.patterns) == 0 {
		c = nil
	}
	b.list.Store(c)
}

func isBlockPattern(e string) bool { return strings.ContainsAny(e, "/*") }

// blocks reports whether the destination rawURL is blocked, after a look
// at the file when one is due.
func (b *blocklist) blocks(rawURL string) bool {
	b.refresh(b.now())
	c := b.list.Load()
	return c != nil && c.matches(rawURL)
}

// blocksLinkAt reports whether a live l sends a visitor to a destination
// on the list at now (a redirect, which has read the clock already): its
// destination_url, a rule's then or a variant's destination_url. One of
// them blocked turns the whole link off, as a blocked destination_url
// does: the link is answered 410 whoever visits it. expired_url is looked
// at only where it is served (goneRedirect).
func (b *blocklist) blocksLinkAt(l *link.Link, now time.Time) bool {
	b.refresh(now)
	c := b.list.Load()
	if c == nil {
		return false
	}
	if c.matches(l.DestinationURL) || l.IOSURL != "" && c.matches(l.IOSURL) || l.AndroidURL != "" && c.matches(l.AndroidURL) {
		return true
	}
	for i := range l.Rules {
		if c.matches(l.Rules[i].Then) {
			return true
		}
	}
	for i := range l.Variants {
		if c.matches(l.Variants[i].DestinationURL) {
			return true
		}
	}
	return false
}

// entries returns the entries in force: the file's and the API's.
func (b *blocklist) entries() (file, api []string) {
	b.refreshNow(b.now())
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.fileLines), slices.Clone(b.apiLines)
}

// matches reports whether the list blocks rawURL.
func (c *compiledBlocklist) matches(rawURL string) bool {
	_, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return false
	}
	rest, _, _ = strings.Cut(rest, "#")
	auth, tail := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		auth, tail = rest[:i], rest[i:]
	}
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
	}
	host := auth
	if i := strings.LastIndexByte(auth, ':'); i >= 0 && !strings.Contains(auth[i:], "]") {
		host = auth[:i]
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if c.matchesHost(host, tail) {
		return true
	}
	if other := blockHost(host); other != host {
		return c.matchesHost(other, tail)
	}
	return false
}

// matchesHost reports whether the list blocks a destination of host (lower
// case, without a final dot) and tail (its path and query).
func (c *compiledBlocklist) matchesHost(host, tail string) bool {
	for h := host; h != ""; {
		if c.hosts[h] {
			return true
		}
		_, parent, ok := strings.Cut(h, ".")
		if !ok {
			break
		}
		h = parent
	}
	if len(c.patterns) == 0 {
		return false
	}
	tail = blockTail(tail)
	for _, p := range c.patterns {
		if globMatch(p.host, host) && (p.hostOnly || globMatch(p.tail, tail)) {
			return true
		}
	}
	return false
}

// blockHost returns the host a browser connects to for host, as written in
// a destination (lower case, without a final dot), where that is another
// spelling: an escaped or non-ASCII name (b%c3%bccher.example, which
// link.NormalizeDestination stores as A-labels but an older linkbolt kept
// as written) in A-labels, and an IPv4 address in IPv6 form
// ([::ffff:192.0.2.1]) as the IPv4 address. Otherwise host itself.
func blockHost(host string) string {
	if strings.HasPrefix(host, "[") {
		if a, err := netip.ParseAddr(strings.TrimSuffix(host[1:], "]")); err == nil && a.Is4In6() {
			return a.Unmap().String()
		}
		return host
	}
	if !strings.Contains(host, "%") && isASCII(host) {
		return host
	}
	h, err := url.PathUnescape(host)
	if err != nil {
		return host
	}
	if a, err := wire.DestinationIDNA.ToASCII(h); err == nil {
		h = a
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// globMatch reports whether s matches pattern, where "*" matches any run
// of characters (also "/") and everything else itself.
func globMatch(pattern, s string) bool {
	px, sx := 0, 0
	star, mark := -1, 0
	for sx < len(s) {
		switch {
		case px < len(pattern) && pattern[px] == '*':
			star, mark = px, sx
			px++
		case px < len(pattern) && pattern[px] == s[sx]:
			px++
			sx++
		case star >= 0:
			px = star + 1
			mark++
			sx = mark
		default:
			return false
		}
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}

// blockTail returns the path and query of a destination ("/a/b?x=1",
// "" for none) as the blocklist matches them: the path as a browser
// requests it, and in lower case, so that spelling a path another way
// does not get around a pattern:
//
//   - a percent-escape of an unreserved character (RFC 3986 §2.3:
//     letters, digits, "-", "." , "_", "~") is decoded, in the path and
//     the query: "/%70romo" is "/promo", "/%2e%2e/" is "/../";
//   - other bytes outside ASCII are percent-escaped, as the redirect's
//     Location carries them;
//   - in the path, "\" is "/" (as browsers read http and https URLs),
//     repeated slashes are folded ("//promo" is "/promo": many servers
//     do so) and dot segments are removed (RFC 3986 §5.2.4: "/./promo",
//     "/a/../promo" are "/promo"); an empty path is "/";
//   - the whole of it is lowered (ASCII only): many servers treat paths
//     case-insensitively, so "/PROMO/x" is blocked by "example.org/promo/*".
//
// A pattern's path goes through the same (canonicalBlockEntry). The query
// keeps its slashes and dots: they mean nothing there.
func blockTail(tail string) string {
	path, query, hasQuery := strings.Cut(tail, "?")
	path = removeDotSegments(foldSlashes(strings.ReplaceAll(normalizeEscapes(path), `\`, "/")))
	if path == "" {
		path = "/"
	}
	if hasQuery {
		path += "?" + normalizeEscapes(query)
	}
	return strings.ToLower(path) // ASCII by now: the others are escaped
}

// normalizeEscapes decodes the percent-escapes of unreserved characters
// in s, writes the hex digits of the others in upper case and
// percent-escapes the bytes outside ASCII. A "%" not followed by two hex
// digits is escaped ("%25"): so that decoding never makes a new escape
// ("%7%41" is not "%7A"), and the result is its own normal form.
func normalizeEscapes(s string) string {
	i := 0
	for ; i < len(s); i++ {
		if s[i] == '%' || s[i] >= 0x80 {
			break
		}
	}
	if i == len(s) {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+8)
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			b = append(b, '%', hex[c>>4], hex[c&15])
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(d) {
				b = append(b, d)
			} else {
				b = append(b, '%', hex[d>>4], hex[d&15])
			}
			i += 2
		case c == '%':
			b = append(b, "%25"...) // a "%" that starts no escape is one
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// isUnreserved reports whether c is an unreserved character of RFC 3986
// (§2.3), whose percent-escape means the character itself.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// foldSlashes turns every run of "/" into one.
func foldSlashes(p string) string {
	if !strings.Contains(p, "//") {
		return p
	}
	b := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && len(b) > 0 && b[len(b)-1] == '/' {
			continue
		}
		b = append(b, p[i])
	}
	return string(b)
}

// removeDotSegments is RFC 3986's remove_dot_segments (§5.2.4) for a path
// without repeated slashes: "." segments go, a ".." segment takes the
// segment before it (none above the root) along; a path that ended in a
// dot segment keeps its trailing "/".
func removeDotSegments(p string) string {
	if !hasDotSegment(p) {
		return p // "/index.html": no work, no allocation
	}
	abs := strings.HasPrefix(p, "/")
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	out := make([]string, 0, len(segs))
	trailing := false
	for i, seg := range segs {
		last := i == len(segs)-1
		switch seg {
		case ".":
			trailing = last
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			trailing = last
		default:
			out = append(out, seg)
			trailing = false
		}
	}
	r := strings.Join(out, "/")
	if trailing && len(out) > 0 {
		r += "/"
	}
	if abs {
		r = "/" + r
	}
	return r
}

// hasDotSegment reports whether the path p has a "." or ".." segment.
func hasDotSegment(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '.' || i > 0 && p[i-1] != '/' {
			continue
		}
		j := i + 1
		if j < len(p) && p[j] == '.' {
			j++
		}
		if j == len(p) || p[j] == '/' {
			return true
		}
	}
	return false
}

// canonicalBlockEntry returns the form in which an entry is kept and
// matched, or a problem: the scheme dropped, the host lowered and in
// A-labels, a trailing dot and a port dropped, and the path and query of
// a pattern as blockTail makes them (lowered, dot segments removed…).
func canonicalBlockEntry(raw string) (entry, problem string) {
	e := strings.TrimSpace(raw)
	if i := strings.Index(e, "://"); i >= 0 {
		e = e[i+3:]
	}
	if e == "" {
		return "", "must not be empty"
	}
	if len(e) > link.MaxBlockEntryLength {
		return "", fmt.Sprintf("must be at most %d characters", link.MaxBlockEntryLength)
	}
	for _, r := range e {
		if r <= ' ' || r == 0x7f {
			return "", "must not contain spaces or control characters"
		}
	}
	host, tail := e, ""
	if i := strings.IndexAny(e, "/?"); i >= 0 {
		host, tail = e[:i], e[i:]
	}
	if tail == "/" {
		tail = "" // "https://example.com/" names the host, as it is usually pasted
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return "", "must start with a host, like example.com or *.example.com"
	}
	if !strings.Contains(host, "*") && !isASCII(host) {
		a, err := wire.DestinationIDNA.ToASCII(host)
		if err != nil {
			return "", "has a host that is not a valid domain name"
		}
		host = a
	}
	if tail == "" && !strings.Contains(host, "*") && strings.Trim(host, ".") != host {
		return "", "has a host that is not a valid domain name"
	}
	if tail != "" {
		tail = blockTail(tail)
	}
	return host + tail, ""
}

// linkDestinations names the destinations of a link that checkBlocked
// looks at.
type linkDestinations uint8

const (
	destMain     linkDestinations = 1 << iota // destination_url
	destRules                                 // rules[].then
	destVariants                              // variants[].destination_url
	destExpired                               // expired_url
	destApps                                  // ios_url, android_url
	destAll      = destMain | destRules | destVariants | destExpired | destApps
)

// blockedMessage is the message of a destination on the blocklist (the
// YOURLS API looks for "blocklist" in it).
const blockedMessage = "is on this service's blocklist"

// checkBlocked refuses a link that would send a visitor to a destination
// on the blocklist (422), naming each such field: destination_url,
// rules[i].then, variants[i].destination_url, expired_url, ios_url,
// android_url, of those which
// names. A new link is checked with destAll; a PATCH checks the fields it
// sets.
func (s *Server) checkBlocked(l *link.Link, which linkDestinations) error {
	b := s.blocklist
	b.refresh(b.now())
	c := b.list.Load()
	if c == nil {
		return nil
	}
	var fields []link.FieldError
	add := func(field, dest string) {
		if dest != "" && c.matches(dest) {
			fields = append(fields, link.FieldError{Field: field, Message: blockedMessage})
		}
	}
	if which&destMain != 0 {
		add("destination_url", l.DestinationURL)
	}
	if which&destRules != 0 {
		for i := range l.Rules {
			add(fmt.Sprintf("rules[%d].then", i), l.Rules[i].Then)
		}
	}
	if which&destVariants != 0 {
		for i := range l.Variants {
			add(fmt.Sprintf("variants[%d].destination_url", i), l.Variants[i].DestinationURL)
		}
	}
	if which&destExpired != 0 {
		add("expired_url", l.ExpiredURL)
	}
	if which&destApps != 0 {
		add("ios_url", l.IOSURL)
		add("android_url", l.AndroidURL)
	}
	if len(fields) == 0 {
		return nil
	}
	msg := fields[0].Field + ": " + fields[0].Message
	if len(fields) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(fields)-1)
	}
	return &link.Error{Code: link.EINVALID, Message: msg, Fields: fields}
}

// checkBlockedDomainURLs refuses a custom domain's root_redirect_url or
// not_found_url on the blocklist (422, naming each): a domain sends
// visitors there as a link sends them to its destination.
func (s *Server) checkBlockedDomainURLs(root, notFound *string) error {
	var fields []link.FieldError
	for _, f := range []struct {
		name string
		url  *string
	}{{"root_redirect_url", root}, {"not_found_url", notFound}} {
		if f.url != nil && *f.url != "" && s.blocklist.blocks(strings.TrimSpace(*f.url)) {
			fields = append(fields, link.FieldError{Field: f.name, Message: blockedMessage})
		}
	}
	if len(fields) == 0 {
		return nil
	}
	return &link.Error{Code: link.EINVALID, Message: fields[0].Field + ": " + fields[0].Message, Fields: fields}
}

// The admin API of the blocklist.

func (s *Server) blocklistRoutes() {
	s.handle("GET", "/v1/admin/blocklist", accessAdmin, s.handleListBlocklist)
	s.handle("POST", "/v1/admin/blocklist", accessAdmin, s.handleAddBlockEntry)
	s.handle("DELETE", "/v1/admin/blocklist", accessAdmin, s.handleDeleteBlockEntry)
}

type blockEntryResponse struct {
	Entry     string  `json:"entry"`
	Kind      string  `json:"kind"`   // host or pattern
	Source    string  `json:"source"` // file or api
	CreatedAt *string `json:"created_at"`
}

type blocklistResponse struct {
	Data []blockEntryResponse `json:"data"`
	Meta struct {
		Path string `json:"path"`
	} `json:"meta"`
}

func newBlockEntryResponse(entry, source string, createdAt *time.Time) blockEntryResponse {
	out := blockEntryResponse{Entry: entry, Kind: "host", Source: source}
	if isBlockPattern(entry) {
		out.Kind = "pattern"
	}
	if createdAt != nil {
		t := wire.Time(*createdAt)
		out.CreatedAt = &t
	}
	return out
}

func (s *Server) handleListBlocklist(w http.ResponseWriter, r *http.Request, c *caller) error {
	file, _ := s.blocklist.entries()
	out := blocklistResponse{Data: []blockEntryResponse{}}
	out.Meta.Path = s.blocklist.path
	for _, e := range file {
		out.Data = append(out.Data, newBlockEntryResponse(e, "file", nil))
	}
	if s.blocklist.store != nil {
		stored, err := s.blocklist.store.ListBlockEntries(r.Context())
		if err != nil {
			return err
		}
		for _, e := range stored {
			out.Data = append(out.Data, newBlockEntryResponse(e.Entry, "api", &e.CreatedAt))
		}
	} else {
		_, api := s.blocklist.entries()
		for _, e := range api {
			out.Data = append(out.Data, newBlockEntryResponse(e, "api", nil))
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type blockEntryRequest struct {
	Entry string `json:"entry"`
}

func (s *Server) handleAddBlockEntry(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in blockEntryRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	entry, problem := canonicalBlockEntry(in.Entry)
	if problem != "" {
		return fieldError("entry", problem)
	}
	b := s.blocklist
	b.refreshNow(s.now())
	b.mu.Lock()
	defer b.mu.Unlock()
	if entryIndex(b.apiLines, entry) >= 0 {
		return link.Errorf(link.ECONFLICT, "%q is on the blocklist already", entry)
	}
	e := &link.BlockEntry{Entry: entry, CreatedAt: s.now()}
	if c.user != nil {
		e.CreatedBy = c.user.ID
	}
	if b.store != nil {
		if err := b.store.AddBlockEntry(r.Context(), e); err != nil {
			return err
		}
	}
	b.apiLines = append(b.apiLines, entry)
	slices.Sort(b.apiLines)
	b.changed++
	b.compile()
	writeJSON(w, http.StatusCreated, newBlockEntryResponse(entry, "api", &e.CreatedAt))
	return nil
}

func (s *Server) handleDeleteBlockEntry(w http.ResponseWriter, r *http.Request, c *caller) error {
	raw := r.URL.Query().Get("entry")
	if raw == "" {
		return link.Errorf(link.EINVALIDREQUEST, "entry: send the entry to remove as ?entry=")
	}
	entry, problem := canonicalBlockEntry(raw)
	if problem != "" {
		return link.Errorf(link.EINVALIDREQUEST, "entry: %s", problem)
	}
	b := s.blocklist
	b.refreshNow(s.now())
	b.mu.Lock()
	defer b.mu.Unlock()
	i := entryIndex(b.apiLines, entry)
	if i < 0 {
		if entryIndex(b.fileLines, entry) >= 0 {
			return link.Errorf(link.ECONFLICT, "%q comes from the blocklist file %s: remove it there", entry, b.path)
		}
		return link.Errorf(link.ENOTFOUND, "%q is not on the blocklist", entry)
	}
	if b.store != nil {
		if err := b.store.DeleteBlockEntry(r.Context(), b.apiLines[i]); err != nil {
			return err
		}
	}
	b.apiLines = slices.Delete(b.apiLines, i, i+1)
	b.changed++
	b.compile()
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// entryIndex returns the index of the canonical entry in lines, or -1: an
// entry stored in an older canonical form (before paths were normalised
// and lowered) is found by its form today.
func entryIndex(lines []string, entry string) int {
	for i, e := range lines {
		if e == entry {
			return i
		}
	}
	for i, e := range lines {
		if ce, problem := canonicalBlockEntry(e); problem == "" && ce == entry {
			return i
		}
	}
	return -1
}
