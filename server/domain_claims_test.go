package server

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/dnscheck"
)

// TestDomainUnverifiedClaims: a hostname another workspace claimed and
// never verified is not theirs for ever. The workspace that controls the
// name takes it over at once by publishing its own claim's TXT record
// (the 409 names it), and anyone may take it once the claim is older than
// domains.unverified_ttl. A verified claim, or one whose domain has links,
// is never taken.
func TestDomainUnverifiedClaims(t *testing.T) {
	t.Parallel()
	z, addr := startDNS(t)
	e := newEnvWith(t, func(d *Deps) { d.DomainVerifier = dnscheck.NewDomains(addr) },
		func(c *Config) { c.DomainUnverifiedTTL = 7 * 24 * time.Hour })
	e.do("POST", "/v1/domains", e.otherKey, `{"hostname":"squat.example.com"}`, 201)
	e.do("POST", "/v1/domains", e.otherKey, `{"hostname":"proof.example.com"}`, 201)
	otherDomains := func() string { return string(e.do("GET", "/v1/domains", e.otherKey, "", 200).raw) }
	record := regexp.MustCompile(`linkbolt-verify=[a-z0-9]{32}`)

	// While the claim is young: 409, with this workspace's record and the
	// time the claim expires.
	r := e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"proof.example.com"}`, 409)
	wantProblem(t, r, 409, "conflict")
	detail := r.str("detail")
	value := record.FindString(detail)
	if value == "" || !strings.Contains(detail, "_linkbolt.proof.example.com") || !strings.Contains(detail, "2026-03-17T12:00:00Z") {
		t.Fatalf("409 detail: %s", detail)
	}
	if again := record.FindString(e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"proof.example.com"}`, 409).str("detail")); again != value {
		t.Fatalf("the record changed between attempts: %s, then %s", value, again)
	}
	if other := record.FindString(otherDomains()); other == value {
		t.Fatal("the claim's record is the squatter's")
	}

	// Proof of control: the record published, the claim is taken over and
	// verified at once.
	z.set("_linkbolt.proof.example.com", []string{value})
	r = e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"proof.example.com"}`, 201)
	if r.path("verified") != true || r.path("verification", "value") != value {
		t.Fatalf("taken over by proof: %s", r.raw)
	}
	if strings.Contains(otherDomains(), "proof.example.com") {
		t.Fatalf("the squatter still holds proof.example.com: %s", otherDomains())
	}
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/p","alias":"p","domain":"proof.example.com"}`, 201)

	// By age: a second before the claim expires, 409; then it is taken.
	e.clock.Add(7*24*time.Hour - time.Second)
	e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"squat.example.com"}`, 409)
	e.clock.Add(time.Second)
	r = e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"squat.example.com"}`, 201)
	if r.path("verified") != false {
		t.Fatalf("taken over by age: %s", r.raw)
	}
	if strings.Contains(otherDomains(), "squat.example.com") {
		t.Fatalf("the squatter still holds squat.example.com: %s", otherDomains())
	}
	// The squatter's log says the claim went, not who took it.
	e.adminToken = e.login("admin@example.com", "correct horse battery") // a week on, the first expired
	var removed []map[string]any
	for _, a := range findAudit(e.auditEntries("/v1/admin/audit-log?action=domain.removed", e.adminToken), "domain.removed") {
		if ws, _ := a["workspace_ids"].([]any); len(ws) == 1 && ws[0] == e.otherWS {
			removed = append(removed, a)
		}
	}
	if len(removed) != 2 || field(removed[0], "actor", "type") != "system" || field(removed[1], "actor", "type") != "system" {
		t.Fatalf("domain.removed in the squatter's workspace: %v", removed)
	}

	// Never taken: a verified claim, however old.
	e.clock.Add(30 * 24 * time.Hour)
	if r := e.do("POST", "/v1/domains", e.otherKey, `{"hostname":"proof.example.com"}`, 409); !strings.Contains(r.str("detail"), "already taken") {
		t.Fatalf("a verified claim: %s", r.raw)
	}
	// An unverified claim is anyone's once old, its first holder's too;
	// a workspace's own claim is never taken by itself.
	e.do("POST", "/v1/domains", e.otherKey, `{"hostname":"squat.example.com"}`, 201)
	e.clock.Add(30 * 24 * time.Hour)
	if r := e.do("POST", "/v1/domains", e.otherKey, `{"hostname":"squat.example.com"}`, 409); !strings.Contains(r.str("detail"), "already taken") {
		t.Fatalf("a workspace's own claim: %s", r.raw)
	}
	// A domain un-verified by the admin keeps its links; nobody takes it.
	proofID := ""
	for _, d := range e.do("GET", "/v1/domains", e.readKey, "", 200).path("data").([]any) {
		if m := d.(map[string]any); m["hostname"] == "proof.example.com" {
			proofID = m["id"].(string)
		}
	}
	e.adminToken = e.login("admin@example.com", "correct horse battery")
	e.do("PATCH", "/v1/domains/"+proofID, e.adminToken, `{"verified":false}`, 200)
	e.clock.Add(30 * 24 * time.Hour)
	e.do("POST", "/v1/domains", e.otherKey, `{"hostname":"proof.example.com"}`, 409)
}
