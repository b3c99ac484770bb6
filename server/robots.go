package server

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/linkbolt/linkbolt/link"
)

// /robots.txt of the primary host and of each verified custom domain: the
// crawlable links of that host are allowed (each by its exact path), every
// other path is disallowed, so that search engines index only the short
// URLs a workspace marked crawlable (Shlink's behaviour). An answer is
// kept robotsTTL per host, so a crawler's visits read the store once a
// minute at most; a change shows within that time.
const (
	robotsTTL = time.Minute
	// maxRobotsAllows bounds the lines of one robots.txt (about 300 KiB
	// of aliases of 30 characters, under the 500 KiB crawlers read).
	maxRobotsAllows = 10_000
)

// robotsCache keeps the robots.txt of each host for robotsTTL.
type robotsCache struct {
	mu    sync.Mutex
	hosts map[string]robotsEntry
}

type robotsEntry struct {
	body  []byte
	until time.Time
}

// serveRobots serves GET /robots.txt of the primary host.
func (s *Server) serveRobots(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	s.writeRobots(w, r, "")
}

// writeRobots writes the robots.txt of domain ("" the primary host), or
// 404 when the instance serves none.
func (s *Server) writeRobots(w http.ResponseWriter, r *http.Request, domain string) {
	if s.cfg.NoRobotsTxt {
		s.writeError(w, r, link.Errorf(link.ENOTFOUND, "this server serves no /robots.txt (links.robots_txt is false)"))
		return
	}
	body, err := s.robotsTxt(r.Context(), domain)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(robotsTTL.Seconds())))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// robotsTxt returns the robots.txt of domain, from the cache while it
// holds.
func (s *Server) robotsTxt(ctx context.Context, domain string) ([]byte, error) {
	now := s.now()
	c := &s.robots
	c.mu.Lock()
	e, ok := c.hosts[domain]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.body, nil
	}
	aliases, err := s.links.CrawlableAliases(ctx, domain, maxRobotsAllows)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("# linkbolt: short links are not for indexing, except those marked crawlable.\nUser-agent: *\n")
	for _, a := range aliases {
		// "$" ends the path: /spring allows neither /spring2 nor /spring/x.
		b.WriteString("Allow: /" + a + "$\n")
	}
	b.WriteString("Disallow: /\n")
	body := b.Bytes()
	c.mu.Lock()
	if c.hosts == nil || len(c.hosts) >= 10_000 {
		c.hosts = map[string]robotsEntry{} // many hosts: start over rather than grow
	}
	c.hosts[domain] = robotsEntry{body: body, until: now.Add(robotsTTL)}
	c.mu.Unlock()
	return body, nil
}
