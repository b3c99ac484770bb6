package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/internal/version"
	"github.com/linkbolt/linkbolt/link"
)

// httpsSetup is HTTPS as server.tls configures it: the TLS configuration
// of the main listener (server.listen) and the handler of the plain HTTP
// listener (server.http_listen), which answers the ACME HTTP-01 challenge
// and sends everything else to HTTPS.
type httpsSetup struct {
	tls   *tls.Config
	plain http.Handler // nil: no plain HTTP listener
	cache *certCache   // acme only
}

// close ends the use of the data file; run calls it before closing the
// file.
func (h *httpsSetup) close() {
	if h != nil && h.cache != nil {
		h.cache.close()
	}
}

// newHTTPS returns the HTTPS of cfg for the server main serves, or nil when
// server.tls is off. With files, the certificate and key must load.
func newHTTPS(cfg *config.Config, store *link.Store, main http.Handler, logger *slog.Logger) (*httpsSetup, error) {
	if cfg.Server.TLS == config.TLSOff {
		return nil, nil
	}
	h := &httpsSetup{}
	hosts := &servedHosts{cfg: cfg, domains: store.Domains, data: store.Data}
	redirect := &plainHTTP{hosts: hosts, main: main, redirects: cfg.Server.TLSRedirectsHTTP}
	switch cfg.Server.TLS {
	case config.TLSACME:
		client := &acme.Client{DirectoryURL: cfg.Server.ACMEDirectory, UserAgent: "linkbolt/" + version.String()}
		if path := cfg.Server.ACMECARoot; path != "" {
			hc, err := trustingClient(path)
			if err != nil {
				return nil, fmt.Errorf("server.acme_ca_root: %w", err)
			}
			client.HTTPClient = hc
		}
		h.cache = &certCache{c: store.Certs, now: time.Now, logger: logger}
		if l, ok := store.Data.(Leaser); ok {
			h.cache.leaser = l
		}
		m := &autocert.Manager{
			Prompt:     autocert.AcceptTOS,
			Cache:      h.cache,
			HostPolicy: hosts.policy(logger),
			Email:      cfg.Server.ACMEEmail,
			Client:     client,
		}
		get, policy := m.GetCertificate, m.HostPolicy
		h.tls = &tls.Config{
			MinVersion: tls.VersionTLS12,
			// HTTP/1.1 only: the server's connection wrapper (connection
			// limits, problem+json for bare errors) sits above TLS, where
			// net/http cannot hand a connection to HTTP/2.
			NextProtos: []string{"http/1.1", acme.ALPNProto},
			GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
				if hello.ServerName == "" { // no SNI (an address): the primary host's
					h := *hello
					h.ServerName = cfg.Server.BaseURL.Hostname()
					hello = &h
				}
				challenge := wantsChallenge(hello)
				if !challenge { // refused here, a stranger's name is not logged below
					if err := policy(context.Background(), hello.ServerName); err != nil {
						return nil, err
					}
				}
				start := time.Now()
				cert, err := get(hello)
				if err == nil && time.Since(start) > time.Second && hello.Conn != nil {
					// A first certificate took its order's time: the
					// client still gets the header time the server
					// gives any request.
					_ = hello.Conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				}
				if err != nil && !challenge {
					logger.Warn("automatic HTTPS: no certificate for a served host; its handshakes fail until one is issued",
						"host", hello.ServerName, "err", err)
				}
				return cert, err
			},
		}
		h.plain = m.HTTPHandler(redirect)
	case config.TLSFiles:
		f, err := loadCertFiles(cfg.Server.TLSCert, cfg.Server.TLSKey, logger)
		if err != nil {
			return nil, err
		}
		h.tls = &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}, GetCertificate: f.get}
		h.plain = redirect
	}
	if cfg.Server.HTTPListen == "" {
		h.plain = nil
	}
	return h, nil
}

// wantsChallenge reports whether hello is the CA's TLS-ALPN-01 check.
func wantsChallenge(hello *tls.ClientHelloInfo) bool {
	return len(hello.SupportedProtos) == 1 && hello.SupportedProtos[0] == acme.ALPNProto
}

// trustingClient returns an HTTP client for the ACME directory that trusts
// the system's roots and the PEM certificates of path (a private ACME
// server's root).
func trustingClient(path string) (*http.Client, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: t, Timeout: time.Minute}, nil
}

// certCache is autocert's cache in the data file. autocert writes to it
// from goroutines of its own (a challenge's clean-up, a renewal), so it is
// closed before the data file is: later calls fail.
//
// On a database several instances share (leaser set), it also makes a
// certificate's renewal happen once across them: autocert renews a
// certificate from each process that serves it, after reading it from
// the cache once more. A read of a certificate due for renewal takes the
// lease "acme-renew:<name>": the holder gets the certificate it has and
// renews it; another instance waits, in its renewal, until the holder
// has stored the new one (or the lease ended: then it may renew), and
// takes that. The first read of a name in a process (a handshake of a
// process that has not served it yet) never waits: the old certificate is
// still good, and the renewal that autocert starts for it waits instead;
// nor does a read of an expired certificate, which autocert does not use.
type certCache struct {
	c      link.CertStore
	leaser Leaser // nil: one process, nothing to share
	now    func() time.Time
	logger *slog.Logger
	mu     sync.RWMutex
	closed bool

	seenMu sync.Mutex
	seen   map[string]bool // the names read once by this process
}

// renewLease is how long the lease of a certificate's renewal lasts: an
// order takes seconds; one that fails is tried again by its holder, who
// takes its own lease again, and an instance that died gives the renewal
// up to the others within it.
const renewLease = 10 * time.Minute

// renewPoll is how often an instance waiting for another's renewal reads
// the certificate again.
const renewPoll = time.Second

var errCacheClosed = errors.New("linkbolt: the data file is closed")

func (c *certCache) do(fn func() error) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return errCacheClosed
	}
	return fn()
}

// close waits for the calls under way and makes the next ones fail.
func (c *certCache) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

func (c *certCache) Get(ctx context.Context, name string) ([]byte, error) {
	b, err := c.get(ctx, name)
	if err != nil || c.leaser == nil {
		return b, err
	}
	c.seenMu.Lock()
	first := !c.seen[name]
	if c.seen == nil {
		c.seen = make(map[string]bool)
	}
	c.seen[name] = true
	c.seenMu.Unlock()
	for {
		due, expired := renewalDue(b, c.now())
		if !due || expired {
			// An expired certificate is no answer for autocert, which
			// orders a new one (a handshake waiting here would hold
			// autocert's lock, and every other handshake, with it).
			return b, nil
		}
		mine, holder, err := c.leaser.Lease(ctx, "acme-renew:"+name, c.now(), renewLease)
		switch {
		case err != nil:
			// Without the lease this process may renew too: a second
			// certificate is better than none.
			c.logger.Warn("https: the lease of a certificate's renewal cannot be taken; renewing here", "name", name, "err", err)
			return b, nil
		case mine || first:
			return b, nil
		}
		c.logger.Debug("https: another instance renews the certificate; waiting for it", "name", name, "holder", holder)
		select {
		case <-ctx.Done():
			return b, nil // still good; autocert tries again later
		case <-time.After(renewPoll):
		}
		fresh, err := c.get(ctx, name)
		if err != nil {
			return b, nil
		}
		b = fresh
	}
}

func (c *certCache) get(ctx context.Context, name string) (b []byte, err error) {
	err = c.do(func() error {
		b, err = c.c.Get(ctx, name)
		return err
	})
	if link.ErrorCode(err) == link.ENOTFOUND {
		return nil, autocert.ErrCacheMiss
	}
	return b, err
}

// renewalDue reports whether data, as autocert caches a certificate (its
// private key, then its chain, in PEM), holds a certificate that autocert
// renews by now: one with less than a third of its lifetime, or 30 days,
// left (autocert's threshold, before its jitter of up to an hour, which
// only delays a renewal: the holder of the lease may then find it not due
// yet and order later, its lease ended, while the others wait), and
// whether it has expired. Other entries (the account key, challenge
// tokens) are never due.
func renewalDue(data []byte, now time.Time) (due, expired bool) {
	for rest := data; len(rest) > 0; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return false, false
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		leaf, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return false, false
		}
		threshold := min(leaf.NotAfter.Sub(leaf.NotBefore)/3, 30*24*time.Hour)
		return !now.Before(leaf.NotAfter.Add(-threshold)), !now.Before(leaf.NotAfter)
	}
	return false, false
}

func (c *certCache) Put(ctx context.Context, name string, data []byte) error {
	return c.do(func() error { return c.c.Put(ctx, name, data) })
}

func (c *certCache) Delete(ctx context.Context, name string) error {
	return c.do(func() error { return c.c.Delete(ctx, name) })
}

// servedHosts tells the hosts linkbolt serves: server.base_url's,
// server.alt_base_url's and every verified custom domain, looked up live
// (in the in-memory table of verified domains), so a domain verified while
// the server runs gets its certificate without a restart.
type servedHosts struct {
	cfg     *config.Config
	domains link.DomainService
	data    link.StoreData
}

// kind tells whether hostname (lower case, ASCII, no port) is the primary
// host ("primary"), the alternate one ("alt"), a verified custom domain
// ("domain") or none of them ("").
func (s *servedHosts) kind(ctx context.Context, hostname string) (string, error) {
	hostname = strings.TrimSuffix(hostname, ".")
	if hostname == s.cfg.Server.BaseURL.Hostname() {
		return "primary", nil
	}
	if alt := s.cfg.Server.AltBaseURL; alt != nil && hostname == alt.Hostname() {
		return "alt", nil
	}
	var err error
	if hostname != "" {
		err = s.data.CatchDamage(func() error {
			_, err := s.domains.FindVerifiedDomain(ctx, hostname)
			return err
		})
	}
	switch {
	case hostname == "" || link.ErrorCode(err) == link.ENOTFOUND:
		return "", nil
	case err != nil:
		return "", err
	}
	return "domain", nil
}

// policy is autocert's HostPolicy: a certificate is ordered only for a
// host linkbolt serves; any other name is refused before any ACME request.
func (s *servedHosts) policy(logger *slog.Logger) autocert.HostPolicy {
	return func(ctx context.Context, host string) error {
		kind, err := s.kind(ctx, hostnameOf(host)) // a TLS server name, or the Host of an HTTP-01 request
		if err != nil {
			logger.Error("automatic HTTPS: looking up a custom domain failed", "host", host, "err", err)
			return err
		}
		if kind == "" {
			logger.Debug("automatic HTTPS: refused a certificate for a host that is neither server.base_url's nor a verified custom domain", "host", host)
			return fmt.Errorf("%w: %q", errNotServed, host)
		}
		return nil
	}
}

// hostnameOf is host (a name, or a Host header with a port) in lower
// case without its port.
func hostnameOf(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(host)
}

// errNotServed refuses a certificate for a host linkbolt does not serve.
var errNotServed = errors.New("linkbolt: neither server.base_url's host nor a verified custom domain")

// plainHTTP answers the plain HTTP listener (server.http_listen) when
// HTTPS is on. Every request is sent to HTTPS with 308, except (when
// server.tls_redirects_http is false) the public short links: a GET or
// HEAD of /{alias} on a host linkbolt serves, or of / on a verified custom
// domain, is answered as over HTTPS when the answer is a redirect, 404 or
// 410; any other answer (a password form, a page) is replaced by the
// redirect to HTTPS, so no form and nothing of the dashboard or the API is
// served over plain HTTP. autocert's handler answers the ACME HTTP-01
// challenge before it.
type plainHTTP struct {
	hosts     *servedHosts
	main      http.Handler
	redirects bool // server.tls_redirects_http
}

func (p *plainHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hostname := hostnameOf(r.Host)
	kind, err := p.hosts.kind(r.Context(), hostname)
	if err != nil {
		kind = "" // the primary host's URL below
	}
	if !p.redirects && kind != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) && shortLinkPath(r.URL.Path, kind == "domain") {
		p.main.ServeHTTP(&redirectsOnly{ResponseWriter: w, to: httpsURL(p.hosts.cfg, kind, hostname, r)}, r)
		return
	}
	writeToHTTPS(w, httpsURL(p.hosts.cfg, kind, hostname, r))
}

// shortLinkPath reports whether path may be a short link: /{alias} with an
// alias that has a short code's syntax and is not a reserved word, or / on
// a custom domain. A page of one segment (/yourls-api.php, which acts on
// an API key) never is.
func shortLinkPath(path string, domain bool) bool {
	if path == "/" {
		return domain
	}
	alias := strings.TrimPrefix(path, "/")
	return link.ValidCodeSyntax(alias) && !link.IsReserved(alias)
}

// httpsURL is the HTTPS URL of a plain HTTP request: on the host it named
// when linkbolt serves it (server.base_url's and server.alt_base_url's
// with their port, a custom domain on 443), else on server.base_url's;
// never on a host the request-target names.
func httpsURL(cfg *config.Config, kind, hostname string, r *http.Request) string {
	host := cfg.Server.BaseURL.Host
	switch kind {
	case "alt":
		host = cfg.Server.AltBaseURL.Host
	case "domain":
		host = hostname
	}
	uri := r.URL.RequestURI()
	if !strings.HasPrefix(uri, "/") {
		// A request-target that is no path ("http:@evil.test", "*") would
		// otherwise write the host of the Location.
		uri = "/"
	}
	return "https://" + host + uri
}

// writeToHTTPS answers a permanent redirect to to, keeping the method.
func writeToHTTPS(w http.ResponseWriter, to string) {
	h := w.Header()
	h.Set("Location", to)
	h.Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusPermanentRedirect)
	_, _ = w.Write([]byte("Use HTTPS: " + to + "\n"))
}

// redirectsOnly lets a redirect, 404 or 410 through and turns any other
// answer into the redirect to HTTPS (see plainHTTP).
type redirectsOnly struct {
	http.ResponseWriter
	to      string
	decided bool
	swallow bool
}

func (w *redirectsOnly) WriteHeader(code int) {
	if w.decided {
		return
	}
	w.decided = true
	if (code >= 300 && code < 400 && code != http.StatusNotModified) || code == http.StatusNotFound || code == http.StatusGone {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	h := w.Header()
	for k := range h {
		delete(h, k)
	}
	w.swallow = true
	writeToHTTPS(w.ResponseWriter, w.to)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *redirectsOnly) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *redirectsOnly) Write(b []byte) (int, error) {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if w.swallow {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// certFiles is the certificate and key of server.tls: files. Each
// handshake looks at the files' size and modification time (two stats) and
// loads them again after a change; a pair that does not load (half
// written, a key of another certificate) is logged once and the last good
// pair is served on.
type certFiles struct {
	certPath, keyPath string
	logger            *slog.Logger

	mu         sync.Mutex
	cert       *tls.Certificate
	seen       [2]fileStamp // of the files when last loaded or tried
	unreadable bool         // a stat failed, and was logged
}

// fileStamp is what tells a changed file.
type fileStamp struct {
	size int64
	mod  time.Time
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{fi.Size(), fi.ModTime()}, nil
}

// loadCertFiles loads the pair at start; it must load.
func loadCertFiles(certPath, keyPath string, logger *slog.Logger) (*certFiles, error) {
	f := &certFiles{certPath: certPath, keyPath: keyPath, logger: logger}
	stamps, err := f.stamps()
	if err == nil {
		err = f.load(stamps)
	}
	if err != nil {
		return nil, fmt.Errorf("server.tls_cert and server.tls_key: %w", err)
	}
	return f, nil
}

func (f *certFiles) stamps() ([2]fileStamp, error) {
	c, err := stampOf(f.certPath)
	if err != nil {
		return [2]fileStamp{}, err
	}
	k, err := stampOf(f.keyPath)
	return [2]fileStamp{c, k}, err
}

// load reads the pair and, when it loads, serves it; seen records stamps
// either way, so a broken pair is read (and logged) once per change.
func (f *certFiles) load(stamps [2]fileStamp) error {
	f.seen = stamps
	cert, err := tls.LoadX509KeyPair(f.certPath, f.keyPath)
	if err != nil {
		return err
	}
	if cert.Leaf != nil && time.Now().After(cert.Leaf.NotAfter) {
		f.logger.Warn("HTTPS: the certificate of server.tls_cert has expired", "file", f.certPath, "not_after", cert.Leaf.NotAfter)
	}
	f.cert = &cert
	return nil
}

// get is the GetCertificate of the main listener.
func (f *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	stamps, err := f.stamps()
	switch {
	case err != nil:
		if !f.unreadable {
			f.logger.Error("HTTPS: cannot read the certificate or key file; serving the previous ones", "err", err)
			f.unreadable = true
		}
		f.seen = [2]fileStamp{} // a file back in place loads again
	case !stamps[0].mod.Equal(f.seen[0].mod) || !stamps[1].mod.Equal(f.seen[1].mod) ||
		stamps[0].size != f.seen[0].size || stamps[1].size != f.seen[1].size:
		f.unreadable = false
		if err := f.load(stamps); err != nil {
			f.logger.Error("HTTPS: the new certificate and key do not load; serving the previous ones", "cert", f.certPath, "key", f.keyPath, "err", err)
		} else {
			f.logger.Info("HTTPS: loaded the new certificate and key", "cert", f.certPath, "key", f.keyPath)
		}
	}
	return f.cert, nil
}

// listenHTTPS puts TLS on the main listener *ln and opens the plain HTTP
// listener when server.tls is on. TLS sits under the server's connection
// wrapper (server.Listener), so connection limits and problem+json answers
// to bare errors hold over HTTPS too.
func (a *App) listenHTTPS(ln *net.Listener) error {
	https, err := newHTTPS(a.cfg, a.store, a.server, a.logger)
	if err != nil || https == nil {
		return err
	}
	a.https = https
	if https.plain != nil {
		pl, err := net.Listen("tcp", a.cfg.Server.HTTPListen)
		if err != nil {
			return fmt.Errorf("listen on %s (server.http_listen): %w", a.cfg.Server.HTTPListen, err)
		}
		a.plainListener = pl
		a.plain = a.server.HTTPServer(a.cfg.Server.HTTPListen)
		a.plain.Handler = https.plain
	}
	*ln = httpsListener{tls.NewListener(*ln, https.tls)}
	return nil
}

// httpsListener is the TLS listener of the main port; its connections
// answer a plain HTTP request with a problem+json 400 instead of a dropped
// connection.
type httpsListener struct{ net.Listener }

func (l httpsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &httpsConn{c.(*tls.Conn)}, nil
}

// httpsConn is a server TLS connection; see httpsListener.
type httpsConn struct{ *tls.Conn }

// plainOnHTTPS is the answer to a plain HTTP request on the HTTPS port.
const plainOnHTTPS = `{"type":"https://linkbolt.dev/problems/invalid_request","title":"Bad Request","status":400,` +
	`"detail":"this port serves HTTPS: use an https:// URL","code":"invalid_request"}` + "\n"

func (c *httpsConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	var re tls.RecordHeaderError
	if err != nil && errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader) {
		_ = re.Conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.WriteString(re.Conn, "HTTP/1.0 400 Bad Request\r\nContent-Type: application/problem+json\r\n"+
			"Cache-Control: no-store\r\nConnection: close\r\nContent-Length: "+strconv.Itoa(len(plainOnHTTPS))+"\r\n\r\n"+plainOnHTTPS)
		return 0, io.EOF // answered: the server closes the connection quietly
	}
	return n, err
}

// looksLikeHTTP reports whether the first bytes a client sent are an HTTP
// request line rather than a TLS record.
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "DELET", "PATCH":
		return true
	}
	return false
}

// plainAddr returns the address of the plain HTTP listener, "" when there
// is none.
func (a *App) plainAddr() string {
	if a.plainListener == nil {
		return ""
	}
	return a.plainListener.Addr().String()
}
