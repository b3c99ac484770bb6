package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/linkbolt/linkbolt/internal/apptest"
	"github.com/linkbolt/linkbolt/internal/dump"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
	"github.com/linkbolt/linkbolt/storage"
	"github.com/linkbolt/linkbolt/webhook"
)

const (
	copyBaseURL       = "http://sho.rt"
	copyAdminEmail    = "admin@example.com"
	copyAdminPassword = "correct horse battery"
)

// copyInstance is what populateForCopy made, for the checks.
type copyInstance struct {
	ws1, ws2 *link.Workspace
	links    []*link.Link
	start    time.Time // the first click's day
	logoQR   string    // a QR code design with a logo
}

// populateForCopy fills a new data file at path through the store's
// services, at whole-second times of a clock that starts ten days ago.
func populateForCopy(t *testing.T, path string) *copyInstance {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(24 * time.Hour).Add(-10 * 24 * time.Hour)
	clock := func() time.Time { now = now.Add(time.Second); return now }
	db := storage.NewDB(path)
	db.Now = clock
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse(copyBaseURL)
	events, err := webhook.NewEncoder(base, "https")
	if err != nil {
		t.Fatal(err)
	}
	st := db.Store(storage.Options{Events: events, AliasHold: 90 * 24 * time.Hour})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	pw, err := bcrypt.GenerateFromPassword([]byte(copyAdminPassword), 4)
	must(err)
	in := &copyInstance{}
	admin := &link.User{Email: copyAdminEmail, Name: "Admin", PasswordHash: pw}
	in.ws1 = &link.Workspace{Name: "Default", Plan: link.PlanFree}
	must(st.Users.Bootstrap(ctx, admin, in.ws1))
	bob := &link.User{Email: "Bob@Example.com", Name: "Bob", PasswordHash: pw}
	must(st.Users.CreateUser(ctx, bob))
	carol := &link.User{Email: "carol@example.com", Name: "Carol", PasswordHash: pw}
	must(st.Users.CreateUser(ctx, carol))
	yes := true
	_, err = st.Accounts.UpdateUser(ctx, carol.ID, link.UserUpdate{Disabled: &yes})
	must(err)
	_, err = st.Accounts.UpdateUser(ctx, bob.ID, link.UserUpdate{EndTokens: true})
	must(err)
	must(st.Users.(link.PasswordResets).CreatePasswordReset(ctx, bob.ID, hashOf("reset"), now.Add(time.Hour)))
	in.ws2 = &link.Workspace{Name: "Second", Plan: link.PlanFree}
	must(st.Workspaces.CreateWorkspace(ctx, in.ws2, bob.ID, 0))
	pixels := link.Pixels{Meta: "1234567890123456", Google: "G-AB12CD34EF", LinkedIn: "5544332"}
	_, err = st.Workspaces.UpdateWorkspace(ctx, in.ws1.ID, link.WorkspaceUpdate{Pixels: &pixels})
	must(err)
	for i, u := range []*link.User{bob, carol} {
		tok := hashOf(fmt.Sprint("join", i))
		inv := &link.Invitation{WorkspaceID: in.ws1.ID, Email: u.Email, Role: link.RoleReadWrite, TokenHash: tok, InvitedBy: admin.ID, ExpiresAt: time.Now().Add(7 * 24 * time.Hour).Truncate(time.Second)}
		must(st.Invitations.CreateInvitation(ctx, inv))
		if i == 0 {
			_, _, err = st.Invitations.AcceptInvitation(ctx, tok, link.Acceptance{UserID: u.ID})
			must(err)
		}
	}
	// The admin joins the second workspace too, to read it.
	tok := hashOf("join admin")
	must(st.Invitations.CreateInvitation(ctx, &link.Invitation{WorkspaceID: in.ws2.ID, Email: admin.Email, Role: link.RoleRead, TokenHash: tok, InvitedBy: bob.ID, ExpiresAt: now.Add(time.Hour)}))
	_, _, err = st.Invitations.AcceptInvitation(ctx, tok, link.Acceptance{UserID: admin.ID})
	must(err)
	// A former member of the second workspace.
	dave := &link.User{Email: "dave@example.com", Name: "Dave", PasswordHash: pw}
	must(st.Users.CreateUser(ctx, dave))
	tok = hashOf("join dave")
	must(st.Invitations.CreateInvitation(ctx, &link.Invitation{WorkspaceID: in.ws2.ID, Email: dave.Email, Role: link.RoleRead, TokenHash: tok, InvitedBy: bob.ID, ExpiresAt: now.Add(time.Hour)}))
	_, _, err = st.Invitations.AcceptInvitation(ctx, tok, link.Acceptance{UserID: dave.ID})
	must(err)
	must(st.Members.RemoveMember(ctx, in.ws2.ID, dave.ID))
	must(st.Blocklist.AddBlockEntry(ctx, &link.BlockEntry{Entry: "evil.example"}))
	must(st.Certs.Put(ctx, "acme_account+key", []byte("account key")))

	cmp := &link.Campaign{WorkspaceID: in.ws1.ID, Name: "Launch", UTMSource: "news"}
	cmp.Normalize()
	must(st.Campaigns.CreateCampaign(ctx, cmp))
	verified := &link.Domain{WorkspaceID: in.ws1.ID, Hostname: "go.example.com", VerificationToken: link.NewVerificationToken(), NotFoundURL: "https://example.com/404",
		AppleAppSiteAssociation: `{"applinks":{"details":[]}}`, AndroidAssetLinks: `[{"relation":[]}]`}
	must(st.Domains.CreateDomain(ctx, verified, 0))
	_, err = st.Domains.SetDomainVerified(ctx, in.ws1.ID, verified.ID, true)
	must(err)
	must(st.Domains.CreateDomain(ctx, &link.Domain{WorkspaceID: in.ws1.ID, Hostname: "pending.example.com", VerificationToken: link.NewVerificationToken()}, 0))

	hook := &link.Webhook{WorkspaceID: in.ws1.ID, URL: "https://hooks.example.com/a", Events: []string{link.EventLinkCreated}, Enabled: true, Secret: "whsec_one"}
	hook.Normalize()
	must(st.Webhooks.CreateWebhook(ctx, hook))
	quiet := &link.Webhook{WorkspaceID: in.ws1.ID, URL: "https://hooks.example.com/b", Events: []string{link.EventCampaignUpdated}, Enabled: true, Secret: "whsec_two"}
	quiet.Normalize()
	must(st.Webhooks.CreateWebhook(ctx, quiet))

	expires := now.Add(300 * 24 * time.Hour)
	specs := []*link.Link{
		{WorkspaceID: in.ws1.ID, Alias: "plain", DestinationURL: "https://example.com/plain", Tags: []string{"a", "b"}},
		{WorkspaceID: in.ws1.ID, Alias: "full", DestinationURL: "https://example.com/full", Tags: []string{"b"}, CampaignID: cmp.ID,
			UTMSource: "s", UTMMedium: "m", UTMCampaign: "c", RedirectCode: 301, PasswordHash: "$2a$04$abcdefghijklmnopqrstuu5Q0Z5s7vVtq9P0Qq1wQ6m5fWq8yGmXa",
			Rules:      []link.Rule{{If: link.RuleCondition{Country: "DE"}, Then: "https://example.de/"}},
			Variants:   []link.Variant{{DestinationURL: "https://example.com/a", Weight: 50}, {DestinationURL: "https://example.com/b", Weight: 50}},
			OG:         &link.OG{Title: "Card", Description: "A card", ImageURL: "https://example.com/i.png"},
			LinkLimits: link.LinkLimits{ExpiresAt: &expires, MaxClicks: 1000, ExpiredURL: "https://example.com/gone", Title: "Full", Note: "A note\nof two lines"}, ExternalID: "crm:42",
			IOSURL: "https://apps.apple.com/app/id42", AndroidURL: "https://play.google.com/store/apps/details?id=com.example", Crawlable: true},
		{WorkspaceID: in.ws1.ID, Alias: "home", Domain: "go.example.com", DestinationURL: "https://example.com/home", PublicStats: true, EscapeInApp: true, Retargeting: true},
		{WorkspaceID: in.ws1.ID, Alias: "old", DestinationURL: "https://example.com/old", LinkLimits: link.LinkLimits{Archived: true}},
		{WorkspaceID: in.ws1.ID, Alias: "doomed", DestinationURL: "https://example.com/doomed"},
		{WorkspaceID: in.ws2.ID, Alias: "bobs", DestinationURL: "https://example.com/bob"},
	}
	for _, l := range specs {
		l.Normalize()
		if err := l.Validate(nil); err != nil {
			t.Fatalf("link %s: %v", l.Alias, err)
		}
		must(st.Links.CreateLink(ctx, l))
		in.links = append(in.links, l)
	}
	// The first webhook keeps its deliveries pending: disabled, nothing
	// sends them.
	no := false
	_, err = st.Webhooks.UpdateWebhook(ctx, in.ws1.ID, hook.ID, link.WebhookUpdate{Enabled: &no}, nil)
	must(err)
	must(st.QRCodes.CreateQRCode(ctx, &link.QRCode{WorkspaceID: in.ws1.ID, LinkID: specs[0].ID, Name: "Poster", Format: "svg", Size: 512, Margin: 4, Level: "M", Foreground: "#000000", Background: "#ffffff"}))
	must(st.UTMTemplates.CreateUTMTemplate(ctx, &link.UTMTemplate{WorkspaceID: in.ws1.ID, Name: "Newsletter", UTMSource: "newsletter", UTMMedium: "email"}))
	must(st.Tags.PutTag(ctx, &link.Tag{WorkspaceID: in.ws1.ID, Name: "b", Color: "green", Description: "Bee"}))
	must(st.Tags.PutTag(ctx, &link.Tag{WorkspaceID: in.ws1.ID, Name: "on no link", Color: "red"}))
	// Abuse reports: one counted twice and resolved, one open.
	for _, reason := range []string{link.AbusePhishing, link.AbusePhishing, link.AbuseSpam} {
		must(st.AbuseReports.ReportAbuse(ctx, &link.AbuseReport{WorkspaceID: in.ws1.ID, LinkID: specs[0].ID, Alias: specs[0].Alias,
			Destination: specs[0].DestinationURL, Reason: reason, Details: "seen in " + reason}))
	}
	reps, err := st.AbuseReports.FindAbuseReports(ctx, link.ReportOpen, time.Time{}, 10)
	must(err)
	_, err = st.AbuseReports.SetAbuseReportStatus(ctx, reps[len(reps)-1].ID, link.ReportResolved)
	must(err)
	// A design with a logo: the copy carries its bytes (the digest the
	// design's answer shows is computed from them again on loading).
	branded := &link.QRCode{WorkspaceID: in.ws1.ID, LinkID: specs[0].ID, Name: "Branded", Format: "png", Size: 512, Margin: 4, Level: "H", Foreground: "#000000", Background: "#ffffff"}
	must(st.QRCodes.CreateQRCode(ctx, branded))
	in.logoQR = branded.ID
	_, err = st.QRCodes.SetQRCodeLogo(ctx, in.ws1.ID, branded.ID, []byte("\x89PNG\r\n\x1a\nthe logo's bytes\x00\xff"))
	must(err)
	must(st.Imports.ImportLinks(ctx, in.ws2.ID, &link.ImportBatch{Source: "csv", Items: []link.ImportItem{{Key: "row-1",
		Link: link.Link{WorkspaceID: in.ws2.ID, Alias: "imported", DestinationURL: "https://example.com/imported", RedirectCode: 302}}}}))

	// Clicks over three days, of several links, a campaign, bots and
	// variants, then one link deleted with its clicks.
	in.start = now.Truncate(24 * time.Hour)
	var clicks []link.Click
	for i := range 300 {
		l := specs[i%len(specs)]
		at := in.start.Add(time.Duration(i) * 47 * time.Minute)
		c := link.Click{LinkID: l.ID, WorkspaceID: l.WorkspaceID, CampaignID: l.CampaignID, Time: at,
			Referrer: []string{"", "news.example", "social.example"}[i%3], Browser: []string{"Chrome", "Firefox"}[i%2],
			OS: "Linux", Device: []string{"desktop", "mobile", "bot"}[i%3], Country: []string{"DE", "US", "FR", "unknown"}[i%4],
			Bot: i%3 == 2, Visitor: uint64(i % 37)}
		if len(l.Variants) > 0 {
			c.Variant = uint8(1 + i%2)
		}
		clicks = append(clicks, c)
	}
	skipped, err := st.Clicks.RecordClicks(ctx, clicks)
	must(err)
	if skipped != 0 {
		t.Fatalf("%d clicks skipped", skipped)
	}
	_, _, err = st.Clicks.SpillClicks(ctx, clicks[:3], 0)
	must(err)
	must(st.Links.DeleteLink(ctx, in.ws1.ID, specs[4].ID))
	must(db.Close())
	return in
}

func hashOf(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// copyServer is a server booted on one store.
type copyServer struct {
	base string
	stop func() error
}

// startCopyServer boots a server on the store env names
// (LINKBOLT_STORAGE_PATH or LINKBOLT_STORAGE_POSTGRES_URL).
func startCopyServer(t *testing.T, env [2]string) *copyServer {
	t.Helper()
	t.Setenv("LINKBOLT_STORAGE_PATH", "")
	t.Setenv("LINKBOLT_STORAGE_POSTGRES_URL", "")
	t.Setenv(env[0], env[1])
	t.Setenv("LINKBOLT_SERVER_BASE_URL", copyBaseURL)
	cfg := apptest.Config(t, "")
	if env[0] == "LINKBOLT_STORAGE_PATH" {
		// On bbolt whichever store the tests run on: the copy's ends
		// are what env names (an empty LINKBOLT_STORAGE_POSTGRES_URL does
		// not unset the test store's URL of the configuration file).
		cfg.Storage.PostgresURL = ""
		if cfg.Storage.Path != env[1] {
			t.Fatalf("storage.path %s, want %s", cfg.Storage.Path, env[1])
		}
	}
	base, stop := apptest.Start(t, cfg, nil)
	return &copyServer{base: base, stop: stop}
}

func bboltEnv(path string) [2]string { return [2]string{"LINKBOLT_STORAGE_PATH", path} }
func pgEnv(u string) [2]string       { return [2]string{"LINKBOLT_STORAGE_POSTGRES_URL", u} }

// call makes a request and returns the status and the body.
func (s *copyServer) call(t *testing.T, method, path, token, ws string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ws != "" {
		req.Header.Set("X-Workspace-Id", ws)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (s *copyServer) json(t *testing.T, method, path, token, ws string, body any, want int, v any) {
	t.Helper()
	code, out := s.call(t, method, path, token, ws, body)
	if code != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, out)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// fraction matches the fraction of a second of a JSON time.
var fraction = regexp.MustCompile(`(T\d\d:\d\d:\d\d)\.(\d+)`)

// microseconds cuts every time in a JSON body to microseconds, what
// PostgreSQL keeps of a time.
func microseconds(b []byte) string {
	return fraction.ReplaceAllStringFunc(string(b), func(m string) string {
		p := fraction.FindStringSubmatch(m)
		f := p[2]
		if len(f) > 6 {
			f = f[:6]
		}
		f = strings.TrimRight(f, "0")
		if f == "" {
			return p[1]
		}
		return p[1] + "." + f
	})
}

// readRoutes answers every read route of the instance, by route.
func readRoutes(t *testing.T, s *copyServer, token string, in *copyInstance) map[string]string {
	t.Helper()
	day := func(d int) string { return in.start.Add(time.Duration(d) * 24 * time.Hour).Format(time.RFC3339) }
	ranges := []string{"range=7d", "range=30d", "range=all", "start=" + day(0) + "&end=" + day(1), "start=" + day(1) + "&end=" + day(3) + "&interval=day", "range=30d&tz=Europe/Berlin"}
	routes := []string{"/v1/me", "/v1/workspaces", "/v1/users", "/v1/admin/blocklist", "/v1/admin/audit-log?limit=100", "/v1/admin/abuse-reports?status=all"}
	for _, ws := range []string{in.ws1.ID, in.ws2.ID} {
		q := "workspace_id=" + ws
		routes = append(routes, "/v1/workspaces/"+ws, "/v1/links?limit=100&"+q, "/v1/links?archived=all&"+q, "/v1/links?tags=b&"+q, "/v1/links?search=ful&"+q, "/v1/links?sort=clicks&"+q,
			"/v1/keys?"+q, "/v1/members?"+q, "/v1/invitations?"+q, "/v1/campaigns?"+q, "/v1/domains?"+q, "/v1/webhooks?"+q, "/v1/qr-codes?"+q, "/v1/utm-templates?"+q, "/v1/tags?"+q,
			"/v1/qr-codes/"+in.logoQR+"/logo?"+q,
			"/v1/audit-log?limit=100&"+q)
		for _, r := range ranges {
			routes = append(routes, "/v1/analytics/workspace?"+r+"&"+q)
		}
		// The raw clicks.
		routes = append(routes, "/v1/analytics/export?range=all&format=json&"+q)
	}
	for _, l := range in.links {
		q := "workspace_id=" + l.WorkspaceID
		routes = append(routes, "/v1/links/"+l.ID+"?"+q)
		for _, r := range ranges[:4] {
			routes = append(routes, "/v1/analytics/links/"+l.ID+"?"+r+"&"+q)
		}
		if l.CampaignID != "" {
			routes = append(routes, "/v1/campaigns/"+l.CampaignID+"?"+q, "/v1/analytics/campaigns/"+l.CampaignID+"?range=30d&"+q)
		}
	}
	out := map[string]string{}
	for _, r := range routes {
		code, body := s.call(t, http.MethodGet, r, token, "", nil)
		out[r] = fmt.Sprintf("%d %s", code, microseconds(body))
	}
	// Each webhook's deliveries.
	var hooks struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	s.json(t, http.MethodGet, "/v1/webhooks?workspace_id="+in.ws1.ID, token, "", nil, 200, &hooks)
	if len(hooks.Data) != 2 {
		t.Fatalf("%d webhooks, want 2", len(hooks.Data))
	}
	for _, h := range hooks.Data {
		r := "/v1/webhooks/" + h.ID + "/deliveries?workspace_id=" + in.ws1.ID
		code, body := s.call(t, http.MethodGet, r, token, "", nil)
		out[r] = fmt.Sprintf("%d %s", code, microseconds(body))
	}
	return out
}

func copyRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), append([]string{"copy"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestCopyRoundTrip copies a populated data file into PostgreSQL and back
// into a new data file: every read route answers the same on the three,
// the API keys made before the copy authenticate after it, and new
// records take new IDs.
func TestCopyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first.db")
	in := populateForCopy(t, first)

	// Keys through the API: one used, one rotated (in grace), one revoked.
	s := startCopyServer(t, bboltEnv(first))
	var login struct {
		Token string `json:"token"`
	}
	s.json(t, http.MethodPost, "/v1/auth/login", "", "", map[string]string{"email": copyAdminEmail, "password": copyAdminPassword}, 200, &login)
	jwt := login.Token
	var other struct {
		Token string `json:"token"`
	}
	s.json(t, http.MethodPost, "/v1/auth/login", "", "", map[string]string{"email": copyAdminEmail, "password": copyAdminPassword}, 200, &other)
	s.json(t, http.MethodPost, "/v1/auth/logout", other.Token, "", nil, 204, nil)
	type keyResp struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	var used, rotated, revoked, readKey, next keyResp
	s.json(t, http.MethodPost, "/v1/keys", jwt, in.ws1.ID, map[string]any{"name": "used", "scope": "read_write"}, 201, &used)
	s.json(t, http.MethodPost, "/v1/keys", jwt, in.ws1.ID, map[string]any{"name": "read", "scope": "read", "resources": []string{"links"}}, 201, &readKey)
	s.json(t, http.MethodPost, "/v1/keys", jwt, in.ws1.ID, map[string]any{"name": "rotated", "scope": "read_write"}, 201, &rotated)
	s.json(t, http.MethodPost, "/v1/keys", jwt, in.ws1.ID, map[string]any{"name": "revoked", "scope": "read"}, 201, &revoked)
	s.json(t, http.MethodPost, "/v1/keys/"+rotated.ID+"/rotate", jwt, in.ws1.ID, map[string]any{}, 201, &next)
	s.json(t, http.MethodDelete, "/v1/keys/"+revoked.ID, jwt, in.ws1.ID, nil, 204, nil)
	for range 3 {
		s.json(t, http.MethodGet, "/v1/links", used.Key, "", nil, 200, nil)
	}
	// Orphan visits (written at the graceful stop) are not carried over:
	// the copy works with them in the file.
	s.json(t, http.MethodGet, "/no-such-code", "", "", nil, 404, nil)
	s.json(t, http.MethodGet, "/wp-admin/setup.php", "", "", nil, 404, nil)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	pg := pgtest.URL(t)
	second := filepath.Join(dir, "second.db")
	start := time.Now()
	if code, out, errOut := copyRun(t, "--from", first, "--to", pg); code != 0 {
		t.Fatalf("copy to PostgreSQL: %d %s %s", code, out, errOut)
	} else if !strings.HasPrefix(out, "copied ") || !strings.Contains(out, " 6 links,") || !strings.Contains(out, " 303 clicks") || !strings.Contains(out, "left out 50 raw clicks") || !strings.Contains(out, "1 alias holds") || !strings.Contains(out, "1 revoked tokens") {
		t.Errorf("summary: %q", out)
	} else {
		t.Log(out)
	}
	if code, out, errOut := copyRun(t, "--from", pg, "--to", second); code != 0 {
		t.Fatalf("copy from PostgreSQL: %d %s %s", code, out, errOut)
	} else if !strings.Contains(out, " 1 former members,") {
		t.Errorf("summary: %q", out)
	}
	pg2 := pgtest.URL(t)
	if code, out, errOut := copyRun(t, "--from", pg, "--to", pg2); code != 0 {
		t.Fatalf("copy between databases: %d %s %s", code, out, errOut)
	}
	t.Logf("two copies in %s", time.Since(start))
	if r, err := storage.CheckFile(second); err != nil {
		t.Fatal(err)
	} else if !r.OK() {
		t.Fatalf("the copied data file fails the check: %v", r.Problems)
	}

	stores := []struct {
		name string
		yaml [2]string
	}{{"bbolt", bboltEnv(first)}, {"postgres", pgEnv(pg)}, {"bbolt again", bboltEnv(second)}, {"postgres again", pgEnv(pg2)}}
	answers := make([]map[string]string, len(stores))
	for i, st := range stores {
		s := startCopyServer(t, st.yaml)
		answers[i] = readRoutes(t, s, jwt, in)
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
	}
	// The first workspace's raw clicks are one deleted link's fewer in
	// PostgreSQL, which deletes them with the link: the copies agree with
	// one another.
	ws1Export := "/v1/analytics/export?range=all&format=json&workspace_id=" + in.ws1.ID
	if a, b := answers[0][ws1Export], answers[1][ws1Export]; strings.Count(a, `"link_id"`) != strings.Count(b, `"link_id"`)+50 {
		t.Errorf("raw clicks: %d in the data file, %d in PostgreSQL; want 50 fewer", strings.Count(a, `"link_id"`), strings.Count(b, `"link_id"`))
	}
	answers[0][ws1Export] = answers[1][ws1Export]
	for i := 1; i < len(stores); i++ {
		for route, want := range answers[0] {
			if got := answers[i][route]; got != want {
				t.Errorf("%s: GET %s\n got %s\nwant %s", stores[i].name, route, got, want)
			}
		}
	}
	if !strings.HasPrefix(answers[0]["/v1/me"], "200 ") || !strings.Contains(answers[0]["/v1/links?limit=100&workspace_id="+in.ws1.ID], `"full"`) ||
		!strings.Contains(answers[0]["/v1/links?limit=100&workspace_id="+in.ws1.ID], `"note":"A note\nof two lines"`) ||
		!strings.Contains(answers[0]["/v1/tags?workspace_id="+in.ws1.ID], `"name":"on no link","color":"red"`) {
		t.Fatalf("the routes do not answer: %s", answers[0]["/v1/me"])
	}
	if !strings.Contains(answers[0]["/v1/links?limit=100&workspace_id="+in.ws1.ID], `"public_stats":true`) {
		t.Errorf("the link with public statistics lost them: %s", answers[0]["/v1/links?limit=100&workspace_id="+in.ws1.ID])
	}

	for r, a := range answers[0] {
		if os.Getenv("COPY_TEST_SHOW") != "" {
			t.Logf("%s: %.300s", r, a)
		}
	}
	// After the copy, on each copy: the keys made before it work as they
	// did, and a new link takes a new ID.
	for _, st := range stores[1:] {
		s := startCopyServer(t, st.yaml)
		for _, k := range []keyResp{used, readKey, rotated, next} {
			if code, body := s.call(t, http.MethodGet, "/v1/links", k.Key, "", nil); code != 200 {
				t.Errorf("%s: key %s: %d %s", st.name, k.ID, code, body)
			}
		}
		if code, _ := s.call(t, http.MethodGet, "/v1/links", revoked.Key, "", nil); code != 401 {
			t.Errorf("%s: the revoked key: %d, want 401", st.name, code)
		}
		// The key limited to links stays limited.
		if code, _ := s.call(t, http.MethodGet, "/v1/webhooks", readKey.Key, "", nil); code != 403 {
			t.Errorf("%s: the key limited to links on /v1/webhooks: %d, want 403", st.name, code)
		}
		var l struct {
			ID string `json:"id"`
		}
		s.json(t, http.MethodPost, "/v1/links", used.Key, "", map[string]any{"destination_url": "https://example.com/after", "alias": "after"}, 201, &l)
		for _, old := range in.links {
			if l.ID == old.ID {
				t.Errorf("%s: the new link took the ID %s of a copied one", st.name, l.ID)
			}
		}
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCopyRefused: each refusal is one clear line, and the destination
// is left as it was.
func TestCopyRefused(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	populateForCopy(t, src)
	pg := pgtest.URL(t)
	if code, _, errOut := copyRun(t, "--from", src, "--to", pg); code != 0 {
		t.Fatalf("copy: %s", errOut)
	}
	existing := filepath.Join(dir, "existing.db")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh.db")
	withPassword := strings.Replace(pgtest.URL(t), "://", "://someone:s3cr3t-pw@", 1)
	if u, err := url.Parse(pgtest.URL(t)); err == nil {
		u.User = url.UserPassword(u.User.Username(), "s3cr3t-pw")
		u.Host, u.RawQuery = "127.0.0.1:1", "" // a try with TLS and one without: two lines from the driver
		withPassword = u.String()
	}
	locked := storage.NewDB(src)
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"no flags", nil, "--from SRC and --to DST are both required", 2},
		{"file onto itself", []string{"--from", src, "--to", src}, "name the same store", 1},
		{"file onto itself by another path", []string{"--from", src, "--to", filepath.Join(dir, ".", "src.db")}, "name the same store", 1},
		{"database onto itself", []string{"--from", pg, "--to", pg + "&application_name=x"}, "name the same store", 1},
		{"existing file", []string{"--from", src, "--to", existing}, "exists already", 1},
		{"database with data", []string{"--from", src, "--to", pg}, "holds linkbolt data already", 1},
		{"missing source", []string{"--from", filepath.Join(dir, "none.db"), "--to", fresh}, "no such data file", 1},
		{"malformed URL", []string{"--from", src, "--to", "postgres://someone:s3cr3t-pw@db.example:notaport/x"}, "--to is not a PostgreSQL URL linkbolt can use", 1},
		{"unreachable database", []string{"--from", src, "--to", withPassword}, "127.0.0.1:1", 1},
		{"locked source", []string{"--from", src, "--to", fresh}, "in use by a running linkbolt: stop it first, or copy a backup (linkbolt backup --out FILE, then linkbolt copy --from FILE)", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "locked source" {
				if err := locked.Open(); err != nil {
					t.Fatal(err)
				}
				defer locked.Close()
			}
			code, out, errOut := copyRun(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, tc.code, tc.want)
			}
			if n := strings.Count(strings.TrimSpace(errOut), "\n"); n != 0 {
				t.Errorf("%d lines: %q", n+1, errOut)
			}
			if strings.Contains(errOut, "s3cr3t-pw") {
				t.Errorf("the password is shown: %q", errOut)
			}
		})
	}
	if b, err := os.ReadFile(existing); err != nil || string(b) != "keep me" {
		t.Errorf("the existing file: %q, %v", b, err)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused copy left %s: %v", fresh, err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".fresh.db.copy-*")); len(leftovers) != 0 {
		t.Errorf("a refused copy left %v", leftovers)
	}
}

// TestCopyInterrupted: a copy whose context ends half-way leaves no data
// file and an empty database.
func TestCopyInterrupted(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	populateForCopy(t, src)
	db := storage.NewDB(src)
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// halfway dumps the source and ends the context after 200 records.
	halfway := func(ctx context.Context) (context.Context, *dump.Source) {
		ctx, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		n := 0
		return ctx, dump.Stream(ctx, func(ctx context.Context, emit dump.Emit) error {
			return db.Dump(ctx, func(r dump.Record) error {
				if n++; n == 200 {
					cancel()
				}
				return emit(r)
			})
		})
	}
	to := filepath.Join(dir, "to.db")
	ctx, stream := halfway(context.Background())
	if _, err := storage.LoadFile(ctx, to, stream); err == nil {
		t.Fatal("an interrupted load into a data file succeeded")
	}
	stream.Close()
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %v, want only the source", entries)
	}

	pg := pgtest.URL(t)
	pdb, err := postgres.OpenDB(context.Background(), postgres.Options{URL: pg})
	if err != nil {
		t.Fatal(err)
	}
	defer pdb.Close()
	ctx, stream = halfway(context.Background())
	if _, err := pdb.Load(ctx, stream); err == nil {
		t.Fatal("an interrupted load into PostgreSQL succeeded")
	}
	stream.Close()
	if empty, err := pdb.Empty(context.Background()); err != nil || !empty {
		t.Errorf("the database after an interrupted load: empty %v, %v", empty, err)
	}
	// A copy after it goes through.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := copyRun(t, "--from", src, "--to", pg); code != 0 {
		t.Fatalf("a copy after the interrupted one: %s", errOut)
	}

	// The click backlog moves too (no server drained it): three clicks
	// wait on every side, and drain into the aggregates.
	back := filepath.Join(dir, "back.db")
	if code, _, errOut := copyRun(t, "--from", pg, "--to", back); code != 0 {
		t.Fatalf("copy back: %s", errOut)
	}
	ctx = context.Background()
	for _, open := range []func() (*link.Store, error){
		func() (*link.Store, error) { return storage.Open(storage.Options{Path: src}) },
		func() (*link.Store, error) { return postgres.Open(ctx, postgres.Options{URL: pg}) },
		func() (*link.Store, error) { return storage.Open(storage.Options{Path: back}) },
	} {
		st, err := open()
		if err != nil {
			t.Fatal(err)
		}
		if n, _, err := st.Clicks.Backlog(ctx); err != nil || n != 3 {
			t.Errorf("backlog: %d clicks, %v; want 3", n, err)
		}
		if taken, skipped, err := st.Clicks.DrainClicks(ctx, 10); err != nil || taken != 3 || skipped != 0 {
			t.Errorf("drain: %d taken, %d skipped, %v", taken, skipped, err)
		}
		if err := st.Data.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
