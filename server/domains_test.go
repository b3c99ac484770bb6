package server

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"github.com/linkbolt/linkbolt/dnscheck"
	"github.com/linkbolt/linkbolt/link"
)

// dnsZone is a real DNS server on loopback that answers TXT questions
// from a table tests change as they go.
type dnsZone struct {
	mu      sync.Mutex
	txt     map[string][][]string // lower-case FQDN → records, each of one or more strings
	fail    map[string]bool       // names answered SERVFAIL
	a       map[string]net.IP     // lower-case FQDN → its IPv4 address
	queries int
}

// startDNS starts a DNS server on 127.0.0.1 and returns it with its address.
func startDNS(t *testing.T) (*dnsZone, string) {
	t.Helper()
	z := &dnsZone{txt: map[string][][]string{}, fail: map[string]bool{}, a: map[string]net.IP{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	serve := func(srv *dns.Server) {
		started := make(chan struct{})
		srv.Handler, srv.NotifyStartedFunc = dns.HandlerFunc(z.serve), func() { close(started) }
		go func() { _ = srv.ActivateAndServe() }()
		<-started
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	serve(&dns.Server{PacketConn: pc})
	// TCP too, on the same port, for resolvers configured to use it.
	if ln, err := net.Listen("tcp", addr); err == nil {
		serve(&dns.Server{Listener: ln})
	}
	return z, addr
}

// set makes name answer the given TXT records (none: the name exists with
// no TXT record).
func (z *dnsZone) set(name string, records ...[]string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.txt[strings.ToLower(name)+"."] = records
	delete(z.fail, strings.ToLower(name)+".")
}

// setA makes name resolve to the IPv4 address ip.
func (z *dnsZone) setA(name, ip string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.a[strings.ToLower(name)+"."] = net.ParseIP(ip).To4()
}

func (z *dnsZone) setFail(name string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.fail[strings.ToLower(name)+"."] = true
}

func (z *dnsZone) clear(name string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	delete(z.txt, strings.ToLower(name)+".")
	delete(z.fail, strings.ToLower(name)+".")
}

func (z *dnsZone) count() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.queries
}

func (z *dnsZone) serve(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) == 1 {
		q := req.Question[0]
		name := strings.ToLower(q.Name)
		z.mu.Lock()
		z.queries++
		records, ok := z.txt[name]
		fail := z.fail[name]
		a, hasA := z.a[name]
		z.mu.Unlock()
		switch {
		case fail:
			m.Rcode = dns.RcodeServerFailure
		case hasA:
			if q.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{
					Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: a})
			}
		case !ok:
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeTXT:
			for _, r := range records {
				m.Answer = append(m.Answer, &dns.TXT{
					Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60},
					Txt: r,
				})
			}
		}
	}
	_ = w.WriteMsg(m)
}

// newDomainEnv is an env whose domain verifications ask a DNS server of
// the test's own.
func newDomainEnv(t *testing.T) (*env, *dnsZone) {
	t.Helper()
	z, addr := startDNS(t)
	e := newEnvWith(t, func(d *Deps) { d.DomainVerifier = dnscheck.NewDomains(addr) })
	return e, z
}

// verifiedDomain adds a domain to the admin's workspace and has the
// instance admin verify it; it returns the domain's id.
func (e *env) verifiedDomain(hostname, extra string) string {
	e.t.Helper()
	id := e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"`+hostname+`"`+extra+`}`, 201).str("id")
	e.do("PATCH", "/v1/domains/"+id, e.adminToken, `{"verified":true}`, 200)
	return id
}

// onHost sends a request with the given Host header.
func (e *env) onHost(host, method, path, cred, body string, header ...string) *response {
	e.t.Helper()
	req := newRequest(method, path, cred, body)
	req.Host = host
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return e.request(req)
}

func TestDomainCRUD(t *testing.T) {
	t.Parallel()
	e, _ := newDomainEnv(t)
	r := e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"Go.Example.com","root_redirect_url":"https://example.com/"}`, 201)
	id := r.str("id")
	if r.str("hostname") != "go.example.com" || r.path("verified") != false || r.path("verified_at") != nil ||
		r.path("not_found_url") != nil || r.str("root_redirect_url") != "https://example.com/" || r.path("links") != float64(0) ||
		r.str("created_at") != "2026-03-10T12:00:00Z" {
		t.Fatalf("created: %s", r.raw)
	}
	ver := r.path("verification").(map[string]any)
	value, _ := ver["value"].(string)
	token := strings.TrimPrefix(value, "linkbolt-verify=")
	if ver["type"] != "dns_txt" || ver["name"] != "_linkbolt.go.example.com" || len(token) != 32 || token == value {
		t.Fatalf("verification: %v", ver)
	}

	if got := e.do("GET", "/v1/domains/"+id, e.readKey, "", 200); got.str("hostname") != "go.example.com" || got.path("verification", "value") != value {
		t.Fatalf("get: %s", got.raw)
	}
	e.clock.Add(60e9)
	e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"b.example.com"}`, 201)
	list := e.do("GET", "/v1/domains", e.readKey, "", 200).path("data").([]any)
	if len(list) != 2 || list[1].(map[string]any)["id"] != id {
		t.Fatalf("list: %v", list)
	}

	// PATCH: null leaves a field, "" clears it, a bad URL is 422.
	u := e.do("PATCH", "/v1/domains/"+id, e.writeKey, `{"root_redirect_url":null,"not_found_url":"https://example.com/404"}`, 200)
	if u.str("root_redirect_url") != "https://example.com/" || u.str("not_found_url") != "https://example.com/404" ||
		u.str("updated_at") != "2026-03-10T12:01:00Z" {
		t.Fatalf("patched: %s", u.raw)
	}
	u = e.do("PATCH", "/v1/domains/"+id, e.writeKey, `{"root_redirect_url":""}`, 200)
	if u.path("root_redirect_url") != nil {
		t.Fatalf("cleared: %s", u.raw)
	}
	bad := e.do("PATCH", "/v1/domains/"+id, e.writeKey, `{"not_found_url":"https://go.example.com/oops"}`, 422)
	if bad.path("errors", 0, "field") != "not_found_url" {
		t.Fatalf("loop: %s", bad.raw)
	}
	wantProblem(t, e.do("PATCH", "/v1/domains/"+id, e.writeKey, `{"hostname":"c.example.com"}`, 400), 400, "invalid_request")
	wantProblem(t, e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"c.example.com","root_redirect_url":"ftp://x"}`, 422), 422, "validation_failed")

	// Unique across the instance, in any spelling.
	for _, h := range []string{"go.example.com", "GO.EXAMPLE.COM.", " go.example.com"} {
		wantProblem(t, e.do("POST", "/v1/domains", e.otherKey, `{"hostname":"`+h+`"}`, 409), 409, "conflict")
		wantProblem(t, e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"`+h+`"}`, 409), 409, "conflict")
	}

	e.do("DELETE", "/v1/domains/"+id, e.writeKey, "", 204)
	wantProblem(t, e.do("GET", "/v1/domains/"+id, e.readKey, "", 404), 404, "not_found")
	wantProblem(t, e.do("DELETE", "/v1/domains/"+id, e.writeKey, "", 404), 404, "not_found")
	// The hostname is free again, for any workspace.
	e.do("POST", "/v1/domains", e.otherKey, `{"hostname":"go.example.com"}`, 201)
}

func TestDomainHostnames(t *testing.T) {
	t.Parallel()
	e, _ := newDomainEnv(t)
	for _, tt := range []struct{ in, want string }{
		{"UPPER.Example.COM", "upper.example.com"},
		{"bücher.example", "xn--bcher-kva.example"},
		{"trailing.example.com.", "trailing.example.com"},
		{"  spaced.example.com  ", "spaced.example.com"},
		{"a-b.example", "a-b.example"},
	} {
		r := e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"`+tt.in+`"}`, 201)
		if got := r.str("hostname"); got != tt.want {
			t.Errorf("%q → %q, want %q", tt.in, got, tt.want)
		}
		if got := r.path("verification", "name"); got != "_linkbolt."+tt.want {
			t.Errorf("%q: verification name %v", tt.in, got)
		}
	}
	for _, in := range []string{
		"go.example.com:8443", "https://go.example.com", "go.example.com/path", "go example.com",
		"go_links.example.com", strings.Repeat("a", 64) + ".example", strings.Repeat("abcdefghi.", 26) + "com",
		"localhost", "intranet", "", "192.0.2.7", "-go.example.com", "go..example.com",
		"lb.test", "LB.test", "s.test", "lb.test.",
	} {
		body := `{"hostname":"` + in + `"}`
		r := e.do("POST", "/v1/domains", e.writeKey, body, 422)
		wantProblem(t, r, 422, "validation_failed")
		if r.path("errors", 0, "field") != "hostname" {
			t.Errorf("%q: %s", in, r.raw)
		}
	}
	if n := len(e.do("GET", "/v1/domains", e.readKey, "", 200).path("data").([]any)); n != 5 {
		t.Fatalf("%d domains", n)
	}
}

func TestDomainAccess(t *testing.T) {
	t.Parallel()
	e, _ := newDomainEnv(t)
	id := e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"go.example.com"}`, 201).str("id")
	path := "/v1/domains/" + id

	// Another workspace never sees it.
	for _, c := range []struct{ method, path, body string }{
		{"GET", path, ""}, {"PATCH", path, `{"not_found_url":"https://example.com/"}`}, {"DELETE", path, ""},
		{"POST", path + "/verify", ""},
	} {
		wantProblem(t, e.do(c.method, c.path, e.otherKey, c.body, 404), 404, "not_found")
	}
	if n := len(e.do("GET", "/v1/domains", e.otherKey, "", 200).path("data").([]any)); n != 0 {
		t.Fatalf("other workspace lists %d domains", n)
	}
	// A read key reads but does not write.
	e.do("GET", path, e.readKey, "", 200)
	e.do("GET", "/v1/domains", e.readKey, "", 200)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/domains", `{"hostname":"r.example.com"}`}, {"PATCH", path, `{"not_found_url":""}`},
		{"DELETE", path, ""}, {"POST", path + "/verify", ""},
	} {
		wantProblem(t, e.do(c.method, c.path, e.readKey, c.body, 403), 403, "forbidden")
	}
	wantProblem(t, e.do("GET", "/v1/domains", "", "", 401), 401, "unauthorized")

	// Only the instance admin sets verified: not a read_write key, not the
	// admin's own key, not another workspace's owner.
	for _, cred := range []string{e.writeKey, e.readKey} {
		wantProblem(t, e.do("PATCH", path, cred, `{"verified":true}`, 403), 403, "forbidden")
	}
	otherID := e.do("POST", "/v1/domains", e.otherKey, `{"hostname":"other.example.com"}`, 201).str("id")
	otherOwner := e.login("other@example.com", "other password 123")
	wantProblem(t, e.do("PATCH", "/v1/domains/"+otherID, otherOwner, `{"verified":true}`, 403), 403, "forbidden")
	// The admin acts in their own workspace; another's domain stays hidden.
	wantProblem(t, e.do("PATCH", "/v1/domains/"+otherID, e.adminToken, `{"verified":true}`, 404), 404, "not_found")

	v := e.do("PATCH", path, e.adminToken, `{"verified":true}`, 200)
	if v.path("verified") != true || v.str("verified_at") != "2026-03-10T12:00:00Z" {
		t.Fatalf("admin verified: %s", v.raw)
	}
	v = e.do("PATCH", path, e.adminToken, `{"verified":false}`, 200)
	if v.path("verified") != false || v.path("verified_at") != nil {
		t.Fatalf("admin unverified: %s", v.raw)
	}
	wantProblem(t, e.do("PATCH", path, e.adminToken, `{"verified":"yes"}`, 400), 400, "invalid_request")
}

func TestDomainVerifyDNS(t *testing.T) {
	t.Parallel()
	e, z := newDomainEnv(t)
	r := e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"go.example.com"}`, 201)
	id, value := r.str("id"), r.path("verification", "value").(string)
	verify := func(want int) *response {
		t.Helper()
		return e.do("POST", "/v1/domains/"+id+"/verify", e.writeKey, "", want)
	}
	detail := func(r *response) string { return r.path("detail").(string) }

	// No record at all.
	r = verify(422)
	wantProblem(t, r, 422, "validation_failed")
	if d := detail(r); !strings.Contains(d, "no TXT record") || !strings.Contains(d, "_linkbolt.go.example.com") || !strings.Contains(d, value) {
		t.Fatalf("no record: %s", d)
	}
	if z.count() == 0 {
		t.Fatal("the DNS server was never asked")
	}
	// The name exists with no TXT record.
	z.set("_linkbolt.go.example.com")
	if d := detail(verify(422)); !strings.Contains(d, "no TXT record") {
		t.Fatalf("empty name: %s", d)
	}
	// Wrong values: the detail lists what was found.
	z.set("_linkbolt.go.example.com", []string{"linkbolt-verify=wrong"}, []string{"v=spf1 -all"})
	if d := detail(verify(422)); !strings.Contains(d, `"linkbolt-verify=wrong"`) || !strings.Contains(d, `"v=spf1 -all"`) {
		t.Fatalf("wrong value: %s", d)
	}
	// A record on the domain itself does not count.
	z.set("go.example.com", []string{value})
	verify(422)
	// The lookup fails.
	z.setFail("_linkbolt.go.example.com")
	if d := detail(verify(422)); !strings.Contains(d, "failed") {
		t.Fatalf("lookup error: %s", d)
	}
	if e.do("GET", "/v1/domains/"+id, e.readKey, "", 200).path("verified") != false {
		t.Fatal("verified after failures")
	}

	// Several records, the right one split into two strings as long
	// records are: verified.
	e.clock.Add(3600e9)
	z.set("_linkbolt.go.example.com", []string{"google-site-verification=abc"}, []string{"linkbolt-verify=", strings.TrimPrefix(value, "linkbolt-verify=")})
	r = verify(200)
	if r.path("verified") != true || r.str("verified_at") != "2026-03-10T13:00:00Z" || r.str("id") != id {
		t.Fatalf("verified: %s", r.raw)
	}
	// Verified stays verified without another lookup, even once the record
	// is gone.
	z.clear("_linkbolt.go.example.com")
	before := z.count()
	if r := verify(200); r.path("verified") != true || r.str("verified_at") != "2026-03-10T13:00:00Z" {
		t.Fatalf("verified again: %s", r.raw)
	}
	if z.count() != before {
		t.Fatal("a verified domain was looked up again")
	}
	// Its links now work on it.
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/x","alias":"x","domain":"go.example.com"}`, 201)
	if got := e.onHost("go.example.com", "GET", "/x", "", ""); got.status != 302 || got.header.Get("Location") != "https://example.com/x" {
		t.Fatalf("redirect on the verified domain: %d %v", got.status, got.header)
	}
}

func TestLinksOnDomains(t *testing.T) {
	t.Parallel()
	e, z := newDomainEnv(t)
	goID := e.verifiedDomain("go.example.com", "")
	e.verifiedDomain("bücher.example", "")
	unverified := e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"new.example.com"}`, 201).str("id")
	// Another workspace's domain, verified by DNS.
	o := e.do("POST", "/v1/domains", e.otherKey, `{"hostname":"other.example.com"}`, 201)
	z.set("_linkbolt.other.example.com", []string{o.path("verification", "value").(string)})
	e.do("POST", "/v1/domains/"+o.str("id")+"/verify", e.otherKey, "", 200)
	e.do("POST", "/v1/links", e.otherKey, `{"destination_url":"https://other.example/x","alias":"promo","domain":"other.example.com"}`, 201)

	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/go","alias":"promo","domain":"GO.example.com"}`, 201)
	if l.str("domain") != "go.example.com" || l.str("short_url") != "https://go.example.com/promo" {
		t.Fatalf("link on a domain: %s", l.raw)
	}
	idn := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/b","domain":"BÜCHER.example"}`, 201)
	if idn.str("domain") != "xn--bcher-kva.example" || !strings.HasPrefix(idn.str("short_url"), "https://xn--bcher-kva.example/") {
		t.Fatalf("link on an IDN domain: %s", idn.raw)
	}
	// The same alias on the primary host and on another domain; taken on
	// the same domain.
	p := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/primary","alias":"promo"}`, 201)
	if p.str("domain") != "lb.test" || p.str("short_url") != "http://lb.test/promo" {
		t.Fatalf("primary link: %s", p.raw)
	}
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/b2","alias":"promo","domain":"xn--bcher-kva.example"}`, 201)
	wantProblem(t, e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/2","alias":"promo","domain":"go.example.com"}`, 409), 409, "conflict")
	// The primary and alternate hosts mean the primary host.
	for _, d := range []string{"lb.test", "LB.TEST.", "s.test", ""} {
		r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/p","domain":"`+d+`"}`, 201)
		if r.str("domain") != "lb.test" {
			t.Fatalf("domain %q: %s", d, r.raw)
		}
	}
	// Unverified, another workspace's, unknown, malformed: 422 on domain.
	for _, d := range []string{"new.example.com", "other.example.com", "nowhere.example.com", "https://go.example.com", "go.example.com:443"} {
		r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","domain":"`+d+`"}`, 422)
		wantProblem(t, r, 422, "validation_failed")
		if r.path("errors", 0, "field") != "domain" {
			t.Fatalf("domain %q: %s", d, r.raw)
		}
	}
	if d := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","domain":"new.example.com"}`, 422).path("detail").(string); !strings.Contains(d, "not verified yet") || !strings.Contains(d, unverified) {
		t.Fatalf("unverified detail: %s", d)
	}
	// A destination back into the link's own domain would loop.
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://go.example.com/promo","domain":"go.example.com"}`, 422)
	if r.path("errors", 0, "field") != "destination_url" {
		t.Fatalf("loop: %s", r.raw)
	}
	// The domain of a link does not change.
	wantProblem(t, e.do("PATCH", "/v1/links/"+l.str("id"), e.writeKey, `{"domain":"lb.test"}`, 400), 400, "invalid_request")
	u := e.do("PATCH", "/v1/links/"+l.str("id"), e.writeKey, `{"alias":"promo2"}`, 200)
	if u.str("short_url") != "https://go.example.com/promo2" {
		t.Fatalf("updated: %s", u.raw)
	}
	// Its QR code carries the custom domain's short URL.
	if got := decodeQR(t, e.do("GET", "/v1/links/"+l.str("id")+"/qr", e.readKey, "", 200).raw); got != "https://go.example.com/promo2" {
		t.Fatalf("QR code of a link on a domain: %q", got)
	}

	// Filters and counts.
	total := func(q string) any {
		t.Helper()
		return e.do("GET", "/v1/links?domain="+q, e.readKey, "", 200).path("meta", "total")
	}
	if got := total("go.example.com"); got != float64(1) {
		t.Fatalf("go.example.com: %v", got)
	}
	if got := total("b%C3%BCcher.example"); got != float64(2) {
		t.Fatalf("bücher.example: %v", got)
	}
	if got := total("new.example.com"); got != float64(0) {
		t.Fatalf("unverified domain: %v", got)
	}
	if got := total("lb.test"); got != float64(5) { // promo and the four links above
		t.Fatalf("primary: %v", got)
	}
	for _, q := range []string{"other.example.com", "nowhere.example.com", "bad_host"} {
		wantProblem(t, e.do("GET", "/v1/links?domain="+q, e.readKey, "", 400), 400, "invalid_request")
	}
	if got := e.do("GET", "/v1/domains/"+goID, e.readKey, "", 200).path("links"); got != float64(1) {
		t.Fatalf("links of the domain: %v", got)
	}

	// A domain with links is not deleted.
	r = e.do("DELETE", "/v1/domains/"+goID, e.writeKey, "", 409)
	wantProblem(t, r, 409, "conflict")
	if d := r.path("detail").(string); !strings.Contains(d, "still has 1 link:") {
		t.Fatalf("delete conflict: %s", d)
	}
	if d := r.path("detail").(string); !strings.Contains(d, "1 link: delete it (or re-create it on another domain)") {
		t.Fatalf("delete conflict speaks of one link as them: %s", d)
	}
	e.do("DELETE", "/v1/links/"+l.str("id"), e.writeKey, "", 204)
	e.do("DELETE", "/v1/domains/"+goID, e.writeKey, "", 204)
	e.do("DELETE", "/v1/domains/"+unverified, e.writeKey, "", 204)
	// Gone: links may not use it any more.
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","domain":"go.example.com"}`, 422)
}

func TestCustomHostRouting(t *testing.T) {
	t.Parallel()
	e, _ := newDomainEnv(t)
	id := e.verifiedDomain("go.example.com", "")
	on := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/on-domain","alias":"promo","domain":"go.example.com","utm_source":"go"}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/primary","alias":"promo"}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/only-primary","alias":"solo"}`, 201)

	// The domain's link by alias, whatever the case of the host or its port.
	for _, host := range []string{"go.example.com", "GO.Example.COM", "go.example.com:8080", "go.example.com."} {
		r := e.onHost(host, "GET", "/promo", "", "")
		if r.status != 302 || r.header.Get("Location") != "https://example.com/on-domain?utm_source=go" {
			t.Fatalf("%s/promo: %d %v", host, r.status, r.header)
		}
	}
	if r := e.onHost("go.example.com", "HEAD", "/promo", "", ""); r.status != 302 || len(r.raw) != 0 {
		t.Fatalf("HEAD: %d", r.status)
	}
	// The primary host keeps its own link of the same alias.
	if r := e.do("GET", "/promo", "", "", 302); r.header.Get("Location") != "https://example.com/primary" {
		t.Fatalf("primary promo: %v", r.header)
	}
	// Clicks on the domain are counted like any other (4 GETs, no HEAD).
	e.flush()
	if got := e.do("GET", "/v1/links/"+on.str("id"), e.readKey, "", 200).path("clicks"); got != float64(4) {
		t.Fatalf("clicks: %v", got)
	}

	// The primary host's links are not served on the domain; nor is any
	// path but / and /{alias}: not the API, the setup page, health, metrics.
	wantProblem(t, e.onHost("go.example.com", "GET", "/solo", "", ""), 404, "not_found")
	if r := e.onHost("go.example.com", "GET", "/solo", "", "", "Accept", "text/html"); r.status != 404 || !strings.Contains(string(r.raw), "Link not found") {
		t.Fatalf("HTML 404: %d %s", r.status, r.raw)
	}
	for _, c := range []struct{ method, path, cred, body string }{
		{"GET", "/v1/links", e.writeKey, ""},
		{"POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/"}`},
		{"GET", "/v1/domains", e.readKey, ""},
		{"POST", "/api/urls", e.writeKey, `{"originalUrl":"https://example.com/"}`},
		{"GET", "/healthz", "", ""},
		{"GET", "/metrics", "", ""},
		{"GET", "/setup", "", ""},
		{"GET", "/v1/openapi.json", "", ""},
		{"GET", "/v1/me", e.adminToken, ""},
		{"POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"correct horse battery"}`},
		{"GET", "/promo/more", "", ""},
		{"POST", "/promo", "", ""},
		{"GET", "/v1", "", ""},
	} {
		r := e.onHost("go.example.com", c.method, c.path, c.cred, c.body)
		wantProblem(t, r, 404, "not_found")
		if !strings.Contains(r.path("detail").(string), "serves only its short links") {
			t.Errorf("%s %s: %s", c.method, c.path, r.raw)
		}
	}
	for _, p := range []string{"/healthz", "/setup"} {
		if r := e.onHost("go.example.com", "GET", p, "", "", "Accept", "text/html"); r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("browser %s: %d %v", p, r.status, r.header)
		}
	}
	if r := e.onHost("go.example.com", "HEAD", "/healthz", "", ""); r.status != 404 {
		t.Fatalf("HEAD /healthz: %d", r.status)
	}
	// Nothing was created through the domain.
	if got := e.do("GET", "/v1/links", e.readKey, "", 200).path("meta", "total"); got != float64(3) {
		t.Fatalf("links: %v", got)
	}

	// "/" is a small page, or the root redirect.
	if r := e.onHost("go.example.com", "GET", "/", "", ""); r.status != 200 || !strings.Contains(string(r.raw), "go.example.com") ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("root page: %d %s", r.status, r.raw)
	}
	e.do("PATCH", "/v1/domains/"+id, e.writeKey, `{"root_redirect_url":"https://example.com/home","not_found_url":"https://example.com/missing"}`, 200)
	if r := e.onHost("go.example.com", "GET", "/", "", ""); r.status != 302 || r.header.Get("Location") != "https://example.com/home" {
		t.Fatalf("root redirect: %d %v", r.status, r.header)
	}
	// Unknown codes go to not_found_url; reserved paths stay 404.
	for _, p := range []string{"/nope", "/solo", "/bad.code!"} {
		if r := e.onHost("go.example.com", "GET", p, "", ""); r.status != 302 || r.header.Get("Location") != "https://example.com/missing" {
			t.Fatalf("not found redirect %s: %d %v", p, r.status, r.header)
		}
	}
	wantProblem(t, e.onHost("go.example.com", "GET", "/healthz", "", ""), 404, "not_found")
	// The primary host is unchanged.
	e.do("GET", "/healthz", "", "", 200)
	e.do("GET", "/nope", "", "", 404)
	e.do("GET", "/v1/links", e.readKey, "", 200)

	// Unverified, the domain is an unknown host again: served as the
	// primary host (an unverified claim changes nothing).
	e.do("PATCH", "/v1/domains/"+id, e.adminToken, `{"verified":false}`, 200)
	if r := e.onHost("go.example.com", "GET", "/healthz", "", ""); r.status != 200 {
		t.Fatalf("unverified host /healthz: %d", r.status)
	}
	if r := e.onHost("go.example.com", "GET", "/promo", "", ""); r.status != 302 || r.header.Get("Location") != "https://example.com/primary" {
		t.Fatalf("unverified host /promo: %d %v", r.status, r.header)
	}
	// Hosts that are no domain at all behave as today.
	for _, host := range []string{"s.test", "127.0.0.1:8080", "localhost", "[::1]:8080", "unknown.example.com"} {
		if r := e.onHost(host, "GET", "/solo", "", ""); r.status != 302 || r.header.Get("Location") != "https://example.com/only-primary" {
			t.Fatalf("host %s: %d %v", host, r.status, r.header)
		}
	}
}

func TestCustomDomainScheme(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.DomainScheme = "http" })
	e.verifiedDomain("go.example.com", "")
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"x","domain":"go.example.com"}`, 201)
	if got, want := l.str("short_url"), "http://go.example.com/x"; got != want {
		t.Fatalf("short_url %q, want %q", got, want)
	}
}

// BenchmarkRedirectCustomDomain is BenchmarkRedirect on a verified custom
// domain: the host lookup is one more map read.
func BenchmarkRedirectCustomDomain(b *testing.B) {
	e := newEnv(b)
	e.verifiedDomain("go.example.com", "")
	for i := range 100 {
		l := &link.Link{WorkspaceID: e.ws, Alias: fmt.Sprintf("c%d", i), Domain: "go.example.com", DestinationURL: "https://example.com/page", RedirectCode: 302}
		if err := e.srv.links.CreateLink(b.Context(), l); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			req := httptest.NewRequest("GET", "/c"+strconv.Itoa(i%100), nil)
			req.Host = "go.example.com"
			w := httptest.NewRecorder()
			e.srv.ServeHTTP(w, req)
			if w.Code != http.StatusFound {
				b.Fatalf("status %d", w.Code)
			}
			i++
		}
	})
}

// TestDomainVerifyNoResolverLeak: a failed verification says what it found
// but never the resolver's address, whether the resolver answers SERVFAIL
// or is not there at all (issue 9).
func TestDomainVerifyNoResolverLeak(t *testing.T) {
	z, dnsAddr := startDNS(t)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := pc.LocalAddr().String()
	pc.Close() // nothing answers there
	for _, tt := range []struct {
		name, resolver, want string
	}{
		{"servfail", dnsAddr, "the DNS server answered with an error"},
		{"resolver down", down, "no answer from the DNS server"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvWith(t, func(d *Deps) { d.DomainVerifier = dnscheck.NewDomains(tt.resolver) })
			id := e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"go.example.com"}`, 201).str("id")
			z.setFail("_linkbolt.go.example.com")
			r := e.do("POST", "/v1/domains/"+id+"/verify", e.writeKey, "", 422)
			if d := r.str("detail"); !strings.Contains(d, tt.want) || !strings.Contains(d, "_linkbolt.go.example.com") {
				t.Errorf("detail %q, want %q", d, tt.want)
			}
			for _, leak := range []string{tt.resolver, "127.0.0.1", ":53", "udp"} {
				if strings.Contains(string(r.raw), leak) {
					t.Errorf("the answer reveals %q: %s", leak, r.raw)
				}
			}
		})
	}
}

// TestDomainAppFiles: a custom domain serves the apple-app-site-association
// and assetlinks.json its settings hold, as JSON, for iOS and Android to
// open its links in an app; the primary host and a domain without them
// answer 404; bad JSON of the wrong kind or too large is refused; null
// removes a file.
func TestDomainAppFiles(t *testing.T) {
	t.Parallel()
	e, _ := newDomainEnv(t)
	id := e.verifiedDomain("go.example.com", "")
	aasa := `{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.app"],"components":[{"/":"/*"}]}]}}`
	assets := `[{"relation":["delegate_permission/common.handle_all_urls"],"target":{"namespace":"android_app","package_name":"com.example.app"}}]`
	if r := e.onHost("go.example.com", "GET", "/.well-known/assetlinks.json", "", ""); r.status != 404 {
		t.Fatalf("before it is set: %d", r.status)
	}
	d := e.do("PATCH", "/v1/domains/"+id, e.writeKey, `{"apple_app_site_association":`+aasa+`,"android_asset_links":`+assets+`}`, 200)
	if got, _ := json.Marshal(d.path("android_asset_links")); !strings.Contains(string(got), "com.example.app") {
		t.Fatalf("domain %s", d.raw)
	}
	for path, want := range map[string]string{
		"/.well-known/apple-app-site-association": aasa, "/apple-app-site-association": aasa, "/.well-known/assetlinks.json": assets,
	} {
		r := e.onHost("go.example.com", "GET", path, "", "")
		if r.status != 200 || r.header.Get("Content-Type") != "application/json" || string(r.raw) != want {
			t.Fatalf("%s: %d %q %s", path, r.status, r.header.Get("Content-Type"), r.raw)
		}
	}
	if r := e.request(newRequest("GET", "/.well-known/assetlinks.json", "", "")); r.status != 404 {
		t.Fatalf("on the primary host: %d", r.status)
	}
	for _, bad := range []string{
		`{"apple_app_site_association":[1]}`, `{"android_asset_links":{"a":1}}`, `{"android_asset_links":"x"}`,
		`{"apple_app_site_association":{"x":"` + strings.Repeat("a", link.MaxWellKnownFile) + `"}}`,
	} {
		wantProblem(t, e.do("PATCH", "/v1/domains/"+id, e.writeKey, bad, 422), 422, link.EINVALID)
	}
	e.do("PATCH", "/v1/domains/"+id, e.writeKey, `{"android_asset_links":null}`, 200)
	if r := e.onHost("go.example.com", "GET", "/.well-known/assetlinks.json", "", ""); r.status != 404 {
		t.Fatalf("after its removal: %d", r.status)
	}
	if r := e.onHost("go.example.com", "GET", "/apple-app-site-association", "", ""); r.status != 200 {
		t.Fatalf("the other file went too: %d", r.status)
	}
}
