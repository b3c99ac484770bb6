package app

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"
	"golang.org/x/crypto/acme/autocert"

	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/internal/pgtest"
)

// startLoopbackDNS serves DNS on 127.0.0.1 (UDP) answering every A query
// with 127.0.0.1 and every other query with no record, so that the ACME
// server's validation of any test hostname reaches linkbolt's listeners.
func startLoopbackDNS(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, NotifyStartedFunc: func() { close(started) },
		Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
			m := new(dns.Msg)
			m.SetReply(r)
			for _, q := range r.Question {
				if q.Qtype == dns.TypeA {
					m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
						A: net.IPv4(127, 0, 0, 1)})
				}
			}
			_ = w.WriteMsg(m)
		})}
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

// pebble is Let's Encrypt's test ACME server, run in the test: its web
// front end on an httptest TLS server, its validation authority pointed at
// linkbolt's ports through a loopback DNS server.
type pebble struct {
	srv     *httptest.Server
	handler atomic.Pointer[http.Handler]
	orders  atomic.Int64 // new-order requests received
	issued  atomic.Int64 // orders finalized: certificates issued
	log     syncWriter
	ca      *ca.CAImpl
}

// newPebble starts the front end; the CA starts with start, once
// linkbolt's ports are known.
func newPebble(t *testing.T) *pebble {
	t.Helper()
	// No random waits before a validation, no nonces refused on purpose,
	// every order validated afresh.
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	t.Setenv("PEBBLE_WFE_NONCEREJECT", "0")
	t.Setenv("PEBBLE_AUTHZREUSE", "0")
	p := &pebble{}
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/order-plz" {
			p.orders.Add(1)
		}
		if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/finalize-order/") {
			p.issued.Add(1)
		}
		h := p.handler.Load()
		if h == nil {
			http.Error(w, "pebble is not started", http.StatusServiceUnavailable)
			return
		}
		(*h).ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// start runs the CA and validation authority: HTTP-01 is checked on
// httpPort, TLS-ALPN-01 on tlsPort, names resolved by resolver.
func (p *pebble) start(httpPort, tlsPort int, resolver string) {
	logger := log.New(&p.log, "pebble ", 0)
	store := db.NewMemoryStore()
	p.ca = ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "default"}})
	v := va.New(logger, httpPort, tlsPort, false, resolver, store)
	front := wfe.New(logger, store, v, p.ca, false, false, 0, 0)
	h := front.Handler()
	p.handler.Store(&h)
}

// directoryCA writes the front end's certificate (what server.acme_ca_root
// trusts) and returns the file.
func (p *pebble) directoryCA(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "pebble-wfe.pem")
	raw := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// roots is the pool of Pebble's root, which signs the certificates it
// issues.
func (p *pebble) roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.ca.GetRootCert(0).Cert)
	return pool
}

// startTLSApp boots a whole server like startApp and returns it and a
// function that stops it.
func startTLSApp(t *testing.T, cfg *config.Config, logs io.Writer) (*App, func()) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	a, err := New(ctx, cfg, logger)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("stopping: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return a, stop
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer closed.Close()
	return port(t, closed.Addr().String())
}

// port returns the port of a host:port address.
func port(t *testing.T, addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// webClient dials addr for every host, as if each hostname resolved to
// linkbolt, trusts roots, opens a new connection (a new handshake) for
// each request and follows no redirect.
func webClient(addr string, roots *x509.CertPool) *http.Client {
	return &http.Client{
		Timeout: 2 * time.Minute, // a guard against a hung test, not an assertion
		Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
			TLSClientConfig: &tls.Config{RootCAs: roots},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// fetch sends one request and returns the answer with its body read.
func fetch(t *testing.T, c *http.Client, method, url, cred, body string) (*http.Response, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if cred != "" {
		req.Header.Set("Authorization", "Bearer "+cred)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp, out
}

func mustFetch(t *testing.T, c *http.Client, method, url, cred, body string, want int) (*http.Response, map[string]any) {
	t.Helper()
	resp, out := fetch(t, c, method, url, cred, body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %v", method, url, resp.StatusCode, want, out)
	}
	return resp, out
}

// servedName returns the DNS names of the certificate a request was
// answered with, after the client verified it.
func servedName(resp *http.Response) string {
	if resp.TLS == nil || len(resp.TLS.PeerCertificates) == 0 {
		return "(no TLS)"
	}
	return strings.Join(resp.TLS.PeerCertificates[0].DNSNames, ",")
}

// tlsConfig is a configuration like internal/apptest.Config (a free
// loopback port, the data under t.TempDir()) with more keys of server (indented lines) and
// of other sections (rest).
func tlsConfig(t *testing.T, server string, rest ...string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	yaml := "server:\n  listen: 127.0.0.1:0\n" + server + "storage:\n  path: " + filepath.Join(dir, "data", "linkbolt.db") +
		"\nauth:\n  password_cost: 4\n" + strings.Join(rest, "")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

const tlsAdmin = "admin:\n  email: admin@example.com\n  password: a long password\n"

func TestHTTPSACMEEndToEnd(t *testing.T) {
	resolver := startLoopbackDNS(t)
	pb := newPebble(t)
	logs := &syncWriter{}
	cfg := tlsConfig(t, fmt.Sprintf(`  base_url: https://lb.test
  tls: acme
  acme_directory: %s/dir
  acme_ca_root: %s
  acme_email: ops@lb.test
  http_listen: 127.0.0.1:0
`, pb.srv.URL, pb.directoryCA(t)), tlsAdmin)
	a, stop := startTLSApp(t, cfg, logs)
	pb.start(port(t, a.plainAddr()), port(t, a.Addr()), resolver)
	web := webClient(a.Addr(), pb.roots())

	// The primary host: its certificate is ordered at its first handshake,
	// validated over TLS-ALPN-01 on the HTTPS port.
	resp, out := mustFetch(t, web, "POST", "https://lb.test/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)
	if servedName(resp) != "lb.test" {
		t.Fatalf("primary host served a certificate for %q", servedName(resp))
	}
	if strings.Contains(pb.log.String(), "validate w/ HTTP") {
		t.Errorf("pebble validated over HTTP-01, not TLS-ALPN-01:\n%s", pb.log.String())
	}
	tok := out["token"].(string)
	_, out = mustFetch(t, web, "POST", "https://lb.test/v1/keys", tok, `{"name":"script","scope":"read_write"}`, 201)
	key := out["key"].(string)
	_, out = mustFetch(t, web, "POST", "https://lb.test/v1/domains", key, `{"hostname":"go.test"}`, 201)
	domainID := out["id"].(string)
	if n := pb.orders.Load(); n != 1 {
		t.Fatalf("%d orders after the primary host's certificate, want 1", n)
	}

	// A domain not verified yet, and a host nobody added: the handshake
	// fails and the ACME server hears nothing of them.
	for _, host := range []string{"go.test", "stranger.test"} {
		if _, err := web.Get("https://" + host + "/abc"); err == nil || !strings.Contains(err.Error(), "tls") {
			t.Fatalf("%s: got a TLS connection (err %v)", host, err)
		}
	}
	if n := pb.orders.Load(); n != 1 {
		t.Fatalf("%d orders after handshakes for unserved hosts, want still 1", n)
	}
	if !strings.Contains(logs.String(), "is neither server.base_url's nor a verified custom domain") {
		t.Errorf("the refusal is not logged:\n%s", logs.String())
	}

	// Verified while the server runs: its next handshake gets a
	// certificate, and its short links redirect over HTTPS.
	mustFetch(t, web, "PATCH", "https://lb.test/v1/domains/"+domainID, tok, `{"verified":true}`, 200)
	mustFetch(t, web, "POST", "https://lb.test/v1/links", key, `{"destination_url":"https://example.com/x","alias":"abc","domain":"go.test"}`, 201)
	resp, _ = fetch(t, web, "GET", "https://go.test/abc", "", "")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "https://example.com/x" || servedName(resp) != "go.test" {
		t.Fatalf("short link on the custom domain: %d %q, certificate for %q", resp.StatusCode, resp.Header.Get("Location"), servedName(resp))
	}
	if n := pb.orders.Load(); n != 2 {
		t.Fatalf("%d orders after the custom domain's certificate, want 2", n)
	}

	// Plain HTTP: everything goes to HTTPS on the host asked for (a host
	// linkbolt does not serve to the primary one), except the ACME
	// challenge, which autocert answers.
	plain := webClient(a.plainAddr(), nil)
	for _, c := range []struct{ method, url, want string }{
		{"GET", "http://go.test/abc", "https://go.test/abc"},
		{"GET", "http://lb.test/", "https://lb.test/"},
		{"POST", "http://lb.test/v1/links?x=1", "https://lb.test/v1/links?x=1"},
		{"GET", "http://stranger.test/abc", "https://lb.test/abc"},
	} {
		resp, _ := fetch(t, plain, c.method, c.url, "", "")
		if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != c.want {
			t.Errorf("%s %s: %d %q, want 308 to %s", c.method, c.url, resp.StatusCode, resp.Header.Get("Location"), c.want)
		}
	}
	resp, _ = fetch(t, plain, "GET", "http://go.test/.well-known/acme-challenge/no-such-token", "", "")
	if resp.StatusCode == http.StatusPermanentRedirect || resp.StatusCode/100 == 2 {
		t.Errorf("an ACME challenge path was answered %d %q, not by the challenge handler", resp.StatusCode, resp.Header.Get("Location"))
	}

	// The certificates live in the data file: a server started again on it
	// (or on a backup of it) serves them without a new order.
	cache := &certCache{c: a.store.Certs}
	for _, name := range []string{"lb.test", "go.test", "acme_account+key"} {
		if b, err := cache.Get(context.Background(), name); err != nil || len(b) == 0 {
			t.Fatalf("%s is not in the data file: %v", name, err)
		}
	}
	if _, err := cache.Get(context.Background(), "stranger.test"); err != autocert.ErrCacheMiss {
		t.Fatalf("a host never served: %v, want a cache miss", err)
	}
	stop()
	again, _ := startTLSApp(t, cfg, logs)
	resp, _ = fetch(t, webClient(again.Addr(), pb.roots()), "GET", "https://go.test/abc", "", "")
	if resp.StatusCode != http.StatusFound || servedName(resp) != "go.test" {
		t.Fatalf("after a restart: %d, certificate for %q", resp.StatusCode, servedName(resp))
	}
	if n := pb.orders.Load(); n != 2 {
		t.Fatalf("%d orders after a restart, want still 2", n)
	}

	// No longer verified: its stored certificate is not served either.
	web = webClient(again.Addr(), pb.roots())
	_, out = mustFetch(t, web, "POST", "https://lb.test/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)
	mustFetch(t, web, "PATCH", "https://lb.test/v1/domains/"+domainID, out["token"].(string), `{"verified":false}`, 200)
	if _, err := web.Get("https://go.test/abc"); err == nil {
		t.Fatal("an unverified domain still gets a TLS connection")
	}
	if n := pb.orders.Load(); n != 2 {
		t.Fatalf("%d orders at the end, want still 2", n)
	}
}

func TestHTTPSACMEOverHTTP01(t *testing.T) {
	// TLS-ALPN-01 cannot reach linkbolt (the ACME server checks a closed
	// port), so autocert falls back to HTTP-01, answered on the plain HTTP
	// listener.
	noALPN := closedPort(t)
	resolver := startLoopbackDNS(t)
	pb := newPebble(t)
	cfg := tlsConfig(t, fmt.Sprintf(`  base_url: https://lb.test
  tls: acme
  acme_directory: %s/dir
  acme_ca_root: %s
  http_listen: 127.0.0.1:0
`, pb.srv.URL, pb.directoryCA(t)))
	a, _ := startTLSApp(t, cfg, io.Discard)
	pb.start(port(t, a.plainAddr()), noALPN, resolver)
	resp, _ := mustFetch(t, webClient(a.Addr(), pb.roots()), "GET", "https://lb.test/healthz", "", "", 200)
	if servedName(resp) != "lb.test" {
		t.Fatalf("certificate for %q", servedName(resp))
	}
	if !strings.Contains(pb.log.String(), "Attempting to validate w/ HTTP: http://lb.test:") {
		t.Fatalf("pebble did not validate over HTTP-01:\n%s", pb.log.String())
	}
}

// selfSigned returns a new self-signed certificate for lb.test and its
// key, in PEM.
func selfSigned(t *testing.T, serial int64) (certPEM, keyPEM []byte, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "lb.test"}, DNSNames: []string{"lb.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err = x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), cert
}

// writePair writes a certificate and key and gives both a modification
// time of their own, as a renewal some time later would.
func writePair(t *testing.T, certPath, keyPath string, certPEM, keyPEM []byte, when time.Time) {
	t.Helper()
	for path, b := range map[string][]byte{certPath: certPEM, keyPath: keyPEM} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, when, when); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHTTPSFilesReload(t *testing.T) {
	dir := t.TempDir()
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	oldCert, oldKey, first := selfSigned(t, 1)
	newCert, newKey, second := selfSigned(t, 2)
	_, otherKey, _ := selfSigned(t, 3)
	start := time.Now()
	writePair(t, certPath, keyPath, oldCert, oldKey, start.Add(-time.Hour))
	logs := &syncWriter{}
	cfg := tlsConfig(t, fmt.Sprintf(`  base_url: https://lb.test
  tls: files
  tls_cert: %s
  tls_key: %s
  http_listen: 127.0.0.1:0
`, certPath, keyPath))
	a, _ := startTLSApp(t, cfg, logs)
	roots := x509.NewCertPool()
	roots.AddCert(first)
	roots.AddCert(second)
	web := webClient(a.Addr(), roots)
	served := func() *big.Int {
		t.Helper()
		resp, _ := mustFetch(t, web, "GET", "https://lb.test/healthz", "", "", 200)
		return resp.TLS.PeerCertificates[0].SerialNumber
	}
	if got := served(); got.Int64() != 1 {
		t.Fatalf("serial %s served, want 1", got)
	}

	// Renewed on disk: the next handshake serves the new pair.
	writePair(t, certPath, keyPath, newCert, newKey, start.Add(-time.Minute))
	if got := served(); got.Int64() != 2 {
		t.Fatalf("after the renewal, serial %s served, want 2", got)
	}

	// A broken certificate file, then a key of another certificate: the
	// last good pair is served on, and the log says why.
	writePair(t, certPath, keyPath, []byte("-----BEGIN CERTIFICATE-----\nbroken\n"), newKey, start)
	if got := served(); got.Int64() != 2 {
		t.Fatalf("after a broken certificate, serial %s served, want 2", got)
	}
	writePair(t, certPath, keyPath, newCert, otherKey, start.Add(time.Minute))
	if got := served(); got.Int64() != 2 {
		t.Fatalf("after a mismatched key, serial %s served, want 2", got)
	}
	if n := strings.Count(logs.String(), "do not load; serving the previous ones"); n != 2 {
		t.Fatalf("%d log lines about a pair that does not load, want 2:\n%s", n, logs.String())
	}
	// The file removed: still the last good pair.
	if err := os.Remove(certPath); err != nil {
		t.Fatal(err)
	}
	if got := served(); got.Int64() != 2 {
		t.Fatalf("with the certificate file gone, serial %s served, want 2", got)
	}
	// Fixed: the good pair loads again.
	writePair(t, certPath, keyPath, oldCert, oldKey, start.Add(2*time.Minute))
	if got := served(); got.Int64() != 1 {
		t.Fatalf("after the fix, serial %s served, want 1", got)
	}

	// Plain HTTP sent to the HTTPS port gets a problem+json 400.
	resp, out := fetch(t, webClient(a.Addr(), nil), "GET", "http://lb.test/healthz", "", "")
	if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/problem+json" || out["code"] != "invalid_request" ||
		!strings.Contains(fmt.Sprint(out["detail"]), "https://") {
		t.Fatalf("plain HTTP on the HTTPS port: %d %q %v", resp.StatusCode, resp.Header.Get("Content-Type"), out)
	}

	// A malformed request over HTTPS gets problem+json too: the server's
	// connection wrapper sits above TLS.
	conn, err := tls.Dial("tcp", a.Addr(), &tls.Config{ServerName: "lb.test", RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /%zz HTTP/1.1\r\nHost: lb.test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(conn)
	if !bytes.HasPrefix(raw, []byte("HTTP/1.1 400 ")) || !bytes.Contains(raw, []byte("application/problem+json")) {
		t.Fatalf("a malformed request over HTTPS: %q", raw)
	}

	// Plain HTTP redirects everything to HTTPS (server.tls_redirects_http
	// defaults to true), short links included.
	plain := webClient(a.plainAddr(), nil)
	for _, path := range []string{"/abc", "/", "/v1/links", "/healthz"} {
		resp, _ := fetch(t, plain, "GET", "http://lb.test"+path, "", "")
		if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != "https://lb.test"+path {
			t.Errorf("GET http://lb.test%s: %d %q", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

func TestHTTPSFilesStartNeedsAPair(t *testing.T) {
	dir := t.TempDir()
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	certPEM, _, _ := selfSigned(t, 1)
	_, otherKey, _ := selfSigned(t, 2)
	writePair(t, certPath, keyPath, certPEM, otherKey, time.Now())
	cfg := tlsConfig(t, fmt.Sprintf("  base_url: https://lb.test\n  tls: files\n  tls_cert: %s\n  tls_key: %s\n  http_listen: 127.0.0.1:0\n", certPath, keyPath))
	logs := &syncWriter{}
	_, err := New(context.Background(), cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err == nil || !strings.Contains(err.Error(), "server.tls_cert and server.tls_key") {
		t.Fatalf("start with a mismatched pair: %v", err)
	}
	// It ended before the bootstrap: no setup link for a server that is
	// not running.
	if strings.Contains(logs.String(), "setup link") {
		t.Fatalf("a failed start logged a setup link:\n%s", logs.String())
	}
	// The data file was closed: a server starts on it.
	cfg.Server.TLS = config.TLSOff
	cfg.Server.BaseURL, _ = url.Parse("http://lb.test")
	a, _ := startTLSApp(t, cfg, io.Discard)
	if a.plainAddr() != "" {
		t.Fatal("a plain HTTP listener with server.tls off")
	}
}

func TestHTTPSConfig(t *testing.T) {
	for _, c := range []struct{ yaml, key string }{
		{"server:\n  tls: on\n", "server.tls"},
		{"server:\n  tls: acme\n", "server.base_url"}, // http://localhost:8080
		{"server:\n  tls: acme\n  base_url: https://lb.test\n  alt_base_url: http://s.test\n", "server.alt_base_url"},
		{"server:\n  tls: acme\n  base_url: https://lb.test\n  acme_directory: http://ca.test/dir\n", "server.acme_directory"},
		{"server:\n  tls: acme\n  base_url: https://lb.test\n  acme_email: nobody\n", "server.acme_email"},
		{"server:\n  tls: files\n  base_url: https://lb.test\n  tls_cert: /etc/cert.pem\n", "server.tls_key"},
	} {
		t.Run(c.yaml, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(p, []byte(c.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := config.Load(p)
			if err == nil || !strings.Contains(err.Error(), c.key) {
				t.Fatalf("error %v, want one naming %s", err, c.key)
			}
		})
	}
	// acme_ca_root must hold a certificate: start fails with the key named.
	bad := filepath.Join(t.TempDir(), "root.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := tlsConfig(t, "  base_url: https://lb.test\n  tls: acme\n  http_listen: 127.0.0.1:0\n  acme_ca_root: "+bad+"\n")
	if _, err := New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil || !strings.Contains(err.Error(), "server.acme_ca_root") {
		t.Fatalf("start with a bad acme_ca_root: %v", err)
	}
}

// TestHTTPSShortLinksOverHTTP: with server.tls_redirects_http false, plain
// HTTP answers short links' redirects, 404 and 410, and sends anything
// else (the dashboard, the API, a password form) to HTTPS.
func TestHTTPSShortLinksOverHTTP(t *testing.T) {
	dir := t.TempDir()
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	certPEM, keyPEM, cert := selfSigned(t, 1)
	writePair(t, certPath, keyPath, certPEM, keyPEM, time.Now())
	cfg := tlsConfig(t, fmt.Sprintf(`  base_url: https://lb.test
  tls: files
  tls_cert: %s
  tls_key: %s
  http_listen: 127.0.0.1:0
  tls_redirects_http: false
`, certPath, keyPath), tlsAdmin)
	a, _ := startTLSApp(t, cfg, io.Discard)
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	web := webClient(a.Addr(), roots)
	_, out := mustFetch(t, web, "POST", "https://lb.test/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)
	tok := out["token"].(string)
	_, out = mustFetch(t, web, "POST", "https://lb.test/v1/keys", tok, `{"name":"script","scope":"read_write"}`, 201)
	key := out["key"].(string)
	mustFetch(t, web, "POST", "https://lb.test/v1/links", key, `{"destination_url":"https://example.com/x","alias":"abc"}`, 201)
	mustFetch(t, web, "POST", "https://lb.test/v1/links", key, `{"destination_url":"https://example.com/secret","alias":"vault","password":"a secret word"}`, 201)
	_, out = mustFetch(t, web, "POST", "https://lb.test/v1/domains", key, `{"hostname":"go.test","root_redirect_url":"https://example.com/home"}`, 201)
	mustFetch(t, web, "PATCH", "https://lb.test/v1/domains/"+out["id"].(string), tok, `{"verified":true}`, 200)
	mustFetch(t, web, "POST", "https://lb.test/v1/links", key, `{"destination_url":"https://example.com/y","alias":"abc","domain":"go.test"}`, 201)

	plain := webClient(a.plainAddr(), nil)
	for _, c := range []struct {
		method, url string
		status      int
		location    string
	}{
		{"GET", "http://lb.test/abc", 302, "https://example.com/x"},
		{"HEAD", "http://lb.test/abc", 302, "https://example.com/x"},
		{"GET", "http://go.test/abc", 302, "https://example.com/y"},
		{"GET", "http://go.test/", 302, "https://example.com/home"},
		{"GET", "http://lb.test/nope", 404, ""},
		{"GET", "http://lb.test/vault", 308, "https://lb.test/vault"}, // the password form
		{"POST", "http://lb.test/vault", 308, "https://lb.test/vault"},
		{"GET", "http://lb.test/", 308, "https://lb.test/"},
		{"GET", "http://lb.test/login", 308, "https://lb.test/login"},
		{"GET", "http://lb.test/healthz", 308, "https://lb.test/healthz"},
		{"GET", "http://lb.test/v1/links", 308, "https://lb.test/v1/links"},
		{"POST", "http://lb.test/v1/links", 308, "https://lb.test/v1/links"},
		{"GET", "http://stranger.test/abc", 308, "https://lb.test/abc"},
		// The YOURLS API is no short link: not run over plain HTTP.
		{"GET", "http://lb.test/yourls-api.php?action=shorturl&format=json&url=https://example.com/plain&signature=" + key, 308,
			"https://lb.test/yourls-api.php?action=shorturl&format=json&url=https://example.com/plain&signature=" + key},
		{"GET", "http://lb.test/yourls-api.php?action=expand&format=json&shorturl=nope&signature=" + key, 308,
			"https://lb.test/yourls-api.php?action=expand&format=json&shorturl=nope&signature=" + key},
	} {
		resp, _ := fetch(t, plain, c.method, c.url, "", "")
		if resp.StatusCode != c.status || resp.Header.Get("Location") != c.location {
			t.Errorf("%s %s: %d %q, want %d %q", c.method, c.url, resp.StatusCode, resp.Header.Get("Location"), c.status, c.location)
		}
		if resp.StatusCode == 308 && resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("%s %s: a cookie over plain HTTP", c.method, c.url)
		}
	}
	if _, out := mustFetch(t, web, "GET", "https://lb.test/v1/links?search=plain", key, "", 200); out["meta"].(map[string]any)["total"] != 0.0 {
		t.Errorf("a YOURLS request over plain HTTP made a link: %v", out)
	}
	// A hostile request-target or Host never chooses the host of the
	// redirect: only server.base_url's or a verified domain's.
	for _, c := range []struct{ target, host, location string }{
		{"http:@evil.test/x", "lb.test", "https://lb.test/"},
		{"http:.evil.test", "lb.test", "https://lb.test/"},
		{"*", "lb.test", "https://lb.test/"},
		{"//evil.test/x", "lb.test", "https://lb.test//evil.test/x"},
		{"http://evil.test/v1/links", "lb.test", "https://lb.test/v1/links"},
		{"/login", "evil.test", "https://lb.test/login"},
		{"/login", "GO.TEST.:80", "https://go.test./login"},
		{"/login", "go.test.evil.test", "https://lb.test/login"},
		{"/login", "evil.test@go.test", "https://lb.test/login"},
	} {
		conn, err := net.Dial("tcp", a.plainAddr())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", c.target, c.host)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("GET %s (Host %s): %v", c.target, c.host, err)
		}
		resp.Body.Close()
		conn.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode == 308 && loc != c.location || resp.StatusCode != 308 && resp.StatusCode != 400 {
			t.Errorf("GET %s (Host %s): %d %q, want 308 %q", c.target, c.host, resp.StatusCode, loc, c.location)
		}
	}
}

// acmeInstances starts two instances on one PostgreSQL database serving
// https://lb.test with certificates from pebble, which checks HTTP-01 on
// b's plain port only, and TLS-ALPN-01 nowhere.
func acmeInstances(t *testing.T) (pb *pebble, a, b *App) {
	t.Helper()
	db := pgtest.URL(t)
	noALPN := closedPort(t)
	resolver := startLoopbackDNS(t)
	pb = newPebble(t)
	server := fmt.Sprintf(`  base_url: https://lb.test
  tls: acme
  acme_directory: %s/dir
  acme_ca_root: %s
  http_listen: 127.0.0.1:0
`, pb.srv.URL, pb.directoryCA(t))
	t.Setenv("LINKBOLT_STORAGE_POSTGRES_URL", db)
	a, _ = startTLSApp(t, tlsConfig(t, server), io.Discard)
	b, _ = startTLSApp(t, tlsConfig(t, server), io.Discard)
	pb.start(port(t, b.plainAddr()), noALPN, resolver)
	return pb, a, b
}

// TestHTTPSACMESharedByInstances runs two instances on one PostgreSQL
// database: the certificate one orders is validated over HTTP-01 on the
// other (the challenge is in the database), and the other then serves it
// without ordering one of its own.
func TestHTTPSACMESharedByInstances(t *testing.T) {
	pb, a, b := acmeInstances(t)

	resp, _ := mustFetch(t, webClient(a.Addr(), pb.roots()), "GET", "https://lb.test/healthz", "", "", 200)
	if servedName(resp) != "lb.test" {
		t.Fatalf("a served a certificate for %q", servedName(resp))
	}
	if !strings.Contains(pb.log.String(), "Attempting to validate w/ HTTP: http://lb.test:") {
		t.Fatalf("pebble did not validate over HTTP-01 on b:\n%s", pb.log.String())
	}
	// autocert tries TLS-ALPN-01 first, then orders again for HTTP-01.
	ordered := pb.orders.Load()
	resp, _ = mustFetch(t, webClient(b.Addr(), pb.roots()), "GET", "https://lb.test/healthz", "", "", 200)
	if servedName(resp) != "lb.test" {
		t.Fatalf("b served a certificate for %q", servedName(resp))
	}
	if n := pb.orders.Load(); n != ordered {
		t.Fatalf("b ordered a certificate of its own (%d orders, %d before): it should read the one a stored", n, ordered)
	}
}

// TestHTTPSACMERenewedOnceByInstances: two instances on one database
// serve a certificate due for renewal and both start renewing it at
// once (autocert renews from every process that serves a certificate):
// one takes the renewal's lease and orders, the other waits for the
// certificate it stores; one certificate is issued and both serve it.
func TestHTTPSACMERenewedOnceByInstances(t *testing.T) {
	pb, a, b := acmeInstances(t)

	// A certificate of 90 days with 10 left: due (a third of its life).
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(42), Subject: pkix.Name{CommonName: "lb.test"}, DNSNames: []string{"lb.test"},
		NotBefore: now.Add(-80 * 24 * time.Hour), NotAfter: now.Add(10 * 24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cached := append(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	if err := a.store.Certs.Put(context.Background(), "lb.test", cached); err != nil {
		t.Fatal(err)
	}

	// served returns the serial number of the certificate app serves.
	served := func(app *App) *big.Int {
		conn, err := tls.Dial("tcp", app.Addr(), &tls.Config{ServerName: "lb.test", InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber
	}
	var wg sync.WaitGroup
	serials := make([]*big.Int, 2)
	for i, app := range []*App{a, b} {
		wg.Go(func() { serials[i] = served(app) })
	}
	wg.Wait()
	for i, s := range serials {
		if s.Cmp(tmpl.SerialNumber) != 0 {
			t.Fatalf("instance %d first served serial %v, want the cached certificate's", i, s)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		sa, sb := served(a), served(b)
		if sa.Cmp(tmpl.SerialNumber) != 0 && sa.Cmp(sb) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not renewed on both within a minute: a serves %v, b %v; %d issued\n%s", sa, sb, pb.issued.Load(), pb.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := pb.issued.Load(); n != 1 {
		t.Fatalf("%d certificates issued for one renewal by two instances, want 1", n)
	}
}

// renewalDue: due from a third of a certificate's life (or 30 days) before
// its end, expired at its end; the account key and tokens never.
func TestRenewalDue(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"lb.test"}, NotBefore: start, NotAfter: start.Add(90 * 24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	cached := append(slices.Clone(keyPEM), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	for _, c := range []struct {
		data         []byte
		at           time.Time
		due, expired bool
	}{
		{cached, start.Add(59 * 24 * time.Hour), false, false},
		{cached, start.Add(60 * 24 * time.Hour), true, false},
		{cached, start.Add(90 * 24 * time.Hour), true, true},
		{keyPEM, start.Add(100 * 24 * time.Hour), false, false},
		{[]byte("a token"), start, false, false},
	} {
		if due, expired := renewalDue(c.data, c.at); due != c.due || expired != c.expired {
			t.Errorf("at %s: due %v expired %v, want %v %v", c.at.Format(time.DateOnly), due, expired, c.due, c.expired)
		}
	}
}
