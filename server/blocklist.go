package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
//     alone.
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
}

// compiledBlocklist is a blocklist ready to be matched.
type compiledBlocklist struct {
	hosts    map[string]bool
	patterns []blockPattern
}

type blockPattern struct {
	glob     string
	hostOnly bool
}

func newBlocklist(ctx context.Context, path string, poll time.Duration, store link.BlocklistService, now func() time.Time, logger *slog.Logger) (*blocklist, error) {
	if poll <= 0 {
		poll = DefaultBlocklistPoll
	}
	b := &blocklist{path: path, poll: poll, store: store, now: now, logger: logger}
	if store != nil {
		entries, err := store.ListBlockEntries(ctx)
		if err != nil {
			return nil, fmt.Errorf("blocklist: %w", err)
		}
		for _, e := range entries {
			b.apiLines = append(b.apiLines, e.Entry)
		}
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

// active reports whether a redirect must look at the blocklist: it has
// entries, or a file to look at again.
func (b *blocklist) active() bool { return b.path != "" || b.list.Load() != nil }

// refresh reloads the file when the poll interval has passed at now and
// the file changed (modification time or size). A failed read keeps the
// list as it was and is logged.
func (b *blocklist) refresh(now time.Time) {
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
			c.patterns = append(c.patterns, blockPattern{glob: e, hostOnly: !strings.Contains(e, "/")})
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
func (b *blocklist) blocks(rawURL string) bool { return b.blocksAt(rawURL, b.now()) }

// blocksAt is blocks for a redirect, which has read the clock already.
func (b *blocklist) blocksAt(rawURL string, now time.Time) bool {
	b.refresh(now)
	c := b.list.Load()
	return c != nil && c.matches(rawURL)
}

// entries returns the entries in force: the file's and the API's.
func (b *blocklist) entries() (file, api []string) {
	b.refresh(b.now())
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
	if tail == "" {
		tail = "/"
	}
	full := host + tail
	for _, p := range c.patterns {
		if p.hostOnly && globMatch(p.glob, host) || !p.hostOnly && globMatch(p.glob, full) {
			return true
		}
	}
	return false
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

// canonicalBlockEntry returns the form in which an entry is kept and
// matched, or a problem: the scheme dropped, the host lowered and in
// A-labels, a trailing dot and a port dropped.
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
	return host + tail, ""
}

// checkBlocked refuses a destination on the blocklist (field
// destination_url, 422).
func (s *Server) checkBlocked(dest string) error {
	if s.blocklist.blocks(dest) {
		return fieldError("destination_url", "is on this service's blocklist")
	}
	return nil
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
	b.mu.Lock()
	defer b.mu.Unlock()
	if slices.Contains(b.apiLines, entry) {
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
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.Index(b.apiLines, entry)
	if i < 0 {
		if slices.Contains(b.fileLines, entry) {
			return link.Errorf(link.ECONFLICT, "%q comes from the blocklist file %s: remove it there", entry, b.path)
		}
		return link.Errorf(link.ENOTFOUND, "%q is not on the blocklist", entry)
	}
	if b.store != nil {
		if err := b.store.DeleteBlockEntry(r.Context(), entry); err != nil {
			return err
		}
	}
	b.apiLines = slices.Delete(b.apiLines, i, i+1)
	b.compile()
	w.WriteHeader(http.StatusNoContent)
	return nil
}
