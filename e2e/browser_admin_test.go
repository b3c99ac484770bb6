package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/linkbolt/linkbolt/internal/apptest"
	"github.com/oauth2-proxy/mockoidc"
)

// TestBrowserAdmin drives the Admin page: the admin creates a user (a bad
// password refused at its field), disables them (their login is refused),
// enables them again, downloads a backup that opens as a bbolt file with
// the links, and reads the instance's audit log and which country
// database is in use. A user who is not the
// admin sees no Admin entry and, opening it, a clear refusal.
func TestBrowserAdmin(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/","alias":"kept"}`, 201)

	b := newBrowser(t, base)
	b.run("admin page",
		withToken(base, "/app/", tok),
		chromedp.WaitVisible(`nav[aria-label=Main]`),
		chromedp.Click(`nav[aria-label=Main] a[href="/app/admin"]`),
		chromedp.WaitVisible(`#users tbody tr`),
		chromedp.WaitVisible(`#instance-audit tbody tr`))

	// The country database in use: the one inside linkbolt, with its
	// package, version and licence.
	var geoSource, geoPackage, geoLicense string
	b.run("country database",
		chromedp.WaitVisible(`#geoip [data-geoip="package"]`),
		chromedp.Text(`#geoip [data-geoip="source"]`, &geoSource),
		chromedp.Text(`#geoip [data-geoip="package"]`, &geoPackage),
		chromedp.Text(`#geoip [data-geoip="license"]`, &geoLicense))
	if geoSource != "inside linkbolt" || !strings.HasPrefix(geoPackage, "@ip-location-db/geo-whois-asn-country-mmdb ") ||
		!strings.HasPrefix(geoLicense, "CC0-1.0") || !strings.Contains(geoLicense, "NRO") {
		t.Errorf("the country database shows %q, %q, %q", geoSource, geoPackage, geoLicense)
	}

	// A password too short is refused at its field.
	b.run("bad password",
		chromedp.Click(`#create-user summary`),
		chromedp.SendKeys("#user-email", "ann@example.com"),
		chromedp.SendKeys("#user-name", "Ann"),
		chromedp.SendKeys("#user-password", "short"),
		chromedp.Click(`#create-user-form button[type=submit]`),
		chromedp.WaitVisible(`#user-password-error`))
	b.run("create ann",
		clear("#user-password"),
		chromedp.SendKeys("#user-password", "ann's long password"),
		chromedp.Click(`#create-user-form button[type=submit]`),
		chromedp.WaitVisible(`//table[@id="users"]//td[starts-with(., "ann@example.com")]`, chromedp.BySearch))
	var ann string
	for _, u := range c.must("GET", "/v1/users", tok, "", 200)["data"].([]any) {
		if u := u.(map[string]any); u["email"] == "ann@example.com" {
			ann = u["id"].(string)
		}
	}
	if ann == "" {
		t.Fatal("ann is not a user after the form")
	}
	login := `{"email":"ann@example.com","password":"ann's long password"}`
	annTok := c.must("POST", "/v1/auth/login", "", login, 200)["token"].(string)
	b.screenshot("admin")

	// Disabled, Ann cannot sign in; enabled, she can again.
	row := `tr[data-user="` + ann + `"]`
	b.run("disable ann",
		chromedp.Click(row+` button.danger`),
		chromedp.Click(row+` .confirm button.danger`),
		chromedp.WaitVisible(row+` .state.disabled`))
	c.must("POST", "/v1/auth/login", "", login, 403)
	c.must("GET", "/v1/me", annTok, "", 401)
	b.run("enable ann",
		chromedp.Click(row+` button.danger`),
		chromedp.Click(row+` .confirm button.danger`),
		chromedp.WaitVisible(row+` .state.enabled`))
	annTok = c.must("POST", "/v1/auth/login", "", login, 200)["token"].(string)

	// The backup is saved by the browser and opens as bbolt with the link;
	// on PostgreSQL the page says to use pg_dump.
	backupRow := `#instance-audit tr[data-action="user.created"]`
	if apptest.OnPostgres() {
		b.run("a backup on PostgreSQL",
			chromedp.Click(`#download-backup`),
			chromedp.WaitVisible(`#backup-title ~ .msg.error`))
		var msg string
		b.run("read the message", chromedp.Text(`#backup-title ~ .msg.error`, &msg))
		if !strings.Contains(msg, "pg_dump") {
			t.Errorf("the backup's message on PostgreSQL: %q", msg)
		}
	} else {
		downloadBackup(t, b)
		backupRow = `#instance-audit tr[data-action="backup.downloaded"]`
	}

	// The instance's log, read afresh, has the user's changes and the backup.
	b.run("the instance's audit log",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/account"]`),
		chromedp.WaitVisible(`#name-form`),
		chromedp.Click(`nav[aria-label=Main] a[href="/app/admin"]`),
		chromedp.WaitVisible(backupRow),
		chromedp.WaitVisible(`#instance-audit tr[data-action="user.disabled"]`),
		chromedp.WaitVisible(`#instance-audit tr[data-action="user.enabled"]`),
		chromedp.WaitVisible(`#instance-audit tr[data-action="user.created"]`))

	// Narrowed to the admin's workspace, the log leaves out the instance's
	// own entries, such as the backup download (on PostgreSQL, which has
	// none, every row of the instance's own: waiting ends when they left).
	instanceGone := `!document.querySelector('#instance-audit tr[data-action="backup.downloaded"]')`
	if apptest.OnPostgres() {
		instanceGone = `![...document.querySelectorAll('#instance-audit tbody tr')].some(r => r.cells[1].textContent.trim() === 'instance')`
	}
	var instanceRows, shown int
	b.run("the instance's audit log of one workspace",
		chromedp.Evaluate(`(() => { const s = document.querySelector('#log-workspace'); s.value = s.options[1].value; s.dispatchEvent(new Event('change', { bubbles: true })); })()`, nil),
		chromedp.Poll(instanceGone+` && !!(document.querySelector('#instance-audit tbody tr') || [...document.querySelectorAll('p.empty')].some(p => p.textContent === 'No entries.'))`, nil),
		chromedp.Evaluate(`[...document.querySelectorAll('#instance-audit tbody tr')].filter(r => r.cells[1].textContent.trim() === 'instance').length`, &instanceRows),
		chromedp.Evaluate(`document.querySelectorAll('#instance-audit tbody tr').length`, &shown))
	if instanceRows != 0 {
		t.Errorf("the log of one workspace shows %d of the instance's own entries among %d", instanceRows, shown)
	}

	// Ann is not the admin: no Admin entry, and the page says why.
	b2 := newBrowser(t, base)
	var entries int
	var msg string
	b2.run("ann opens the admin page",
		withToken(base, "/app/admin", annTok),
		chromedp.WaitVisible(`main .msg.error`),
		chromedp.Text(`main .msg.error`, &msg),
		chromedp.Evaluate(`document.querySelectorAll('nav[aria-label=Main] a[href="/app/admin"]').length`, &entries))
	if entries != 0 || !strings.Contains(msg, "Only the instance admin") {
		t.Fatalf("a user who is not the admin sees %d Admin entries and %q", entries, msg)
	}
	b2.screenshot("admin-refused")
	c.must("GET", "/v1/users", annTok, "", 403)

	got := b.templates(t)
	for _, w := range []string{"GET /v1/users", "POST /v1/users", "PATCH /v1/users/{id}", "GET /v1/admin/backup", "GET /v1/admin/audit-log", "GET /v1/admin/geoip"} {
		if !got[w] {
			t.Errorf("the admin journey did not call %s", w)
		}
	}
}

// TestBrowserNavigation390 opens the navigation at 390 px: the Menu button
// opens the list, a choice navigates and closes it, Escape closes it too.
func TestBrowserNavigation390(t *testing.T) {
	t.Parallel()
	base, _, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	var expanded string
	var ok bool
	b.run("narrow",
		chromedp.EmulateViewport(390, 844),
		withToken(base, "/app/", tok),
		chromedp.WaitVisible(`#menu-button`),
		chromedp.WaitNotVisible(`nav[aria-label=Main]`),
		chromedp.AttributeValue(`#menu-button`, "aria-expanded", &expanded, &ok))
	if expanded != "false" {
		t.Fatalf("the closed menu's button says aria-expanded=%q", expanded)
	}
	b.run("open the menu",
		chromedp.Click(`#menu-button`),
		chromedp.WaitVisible(`nav[aria-label=Main] a[href="/app/keys"]`),
		chromedp.AttributeValue(`#menu-button`, "aria-expanded", &expanded, &ok))
	if expanded != "true" {
		t.Fatalf("the open menu's button says aria-expanded=%q", expanded)
	}
	if os.Getenv("LINKBOLT_SCREENSHOTS") == "1" {
		var png []byte
		b.run("screenshot nav-390", chromedp.FullScreenshot(&png, 100))
		if err := os.WriteFile(filepath.Join("..", "docs", "screenshots", "nav-390.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var location string
	b.run("choose a page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/keys"]`),
		chromedp.WaitVisible(`#create-key-form`),
		chromedp.WaitNotVisible(`nav[aria-label=Main]`),
		chromedp.Location(&location))
	if location != base+"/app/keys" {
		t.Fatalf("the menu led to %s", location)
	}
	b.run("escape closes it",
		chromedp.Click(`#menu-button`),
		chromedp.WaitVisible(`nav[aria-label=Main]`),
		chromedp.KeyEvent("\x1b"),
		chromedp.WaitNotVisible(`nav[aria-label=Main]`))
	var focused string
	b.run("focus back on the button", chromedp.Evaluate(`document.activeElement.id`, &focused))
	if focused != "menu-button" {
		t.Fatalf("after Escape the focus is on %q", focused)
	}
}

// TestBrowserSingleSignOn signs in with the "Sign in with single sign-on"
// button against a real OpenID Connect provider and lands in the
// dashboard; without single sign-on the button is absent.
func TestBrowserSingleSignOn(t *testing.T) {
	t.Run("off", func(t *testing.T) {
		base, _, _ := startDashboard(t, "")
		b := newBrowser(t, base)
		var n int
		b.run("sign-in page",
			chromedp.Navigate(base+"/app/"),
			chromedp.WaitVisible(`#sign-in`),
			// The page has asked whether single sign-on is on.
			chromedp.WaitReady(`main[data-sso="off"]`),
			chromedp.Evaluate(`document.querySelectorAll('a[href="/v1/auth/oidc/start"]').length`, &n))
		if n != 0 {
			t.Fatal("the single sign-on button shows while single sign-on is off")
		}
	})
	t.Run("on", func(t *testing.T) {
		op, err := mockoidc.Run()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = op.Shutdown() })
		// The provider sends the browser back to base_url, so linkbolt
		// listens where base_url says: a free loopback port.
		addr := freePort(t)
		t.Setenv("LINKBOLT_SERVER_LISTEN", addr)
		t.Setenv("LINKBOLT_SERVER_BASE_URL", "http://"+addr)
		t.Setenv("LINKBOLT_AUTH_OIDC_ISSUER", op.Issuer())
		t.Setenv("LINKBOLT_AUTH_OIDC_CLIENT_ID", op.ClientID)
		t.Setenv("LINKBOLT_AUTH_OIDC_CLIENT_SECRET", op.ClientSecret)
		base, c, tok := startDashboard(t, "")
		if base != "http://"+addr {
			t.Fatalf("linkbolt listens at %s, not at its base URL", base)
		}
		op.QueueUser(&mockoidc.MockUser{Subject: "42", Email: "admin@example.com", EmailVerified: true})
		b := newBrowser(t, base)
		b.run("sign-in page",
			chromedp.Navigate(base+"/app/"),
			chromedp.WaitVisible(`#sign-in`),
			chromedp.WaitReady(`main[data-sso="on"]`),
			chromedp.WaitVisible(`a[href="/v1/auth/oidc/start"]`))
		b.screenshot("sign-in-sso")
		var location, email string
		var ok bool
		b.run("sign in with single sign-on",
			chromedp.Click(`a[href="/v1/auth/oidc/start"]`),
			chromedp.WaitVisible(`nav[aria-label=Main]`),
			chromedp.WaitVisible(`#create-link-form`),
			chromedp.Location(&location),
			chromedp.AttributeValue(`.who`, "title", &email, &ok))
		if location != base+"/app/" || email != "admin@example.com" {
			t.Fatalf("after single sign-on: at %s as %q", location, email)
		}
		var stored string
		b.run("the token", chromedp.Evaluate(`sessionStorage.getItem('linkbolt.token') || ''`, &stored))
		if stored == "" || stored == tok {
			t.Fatal("no token of its own after single sign-on")
		}
		if got := c.must("GET", "/v1/me", stored, "", 200)["email"]; got != "admin@example.com" {
			t.Fatalf("the single sign-on token is %v's", got)
		}
	})
}

// TestBrowserKeyGraceCountdown: a rotated key's row says how long the old
// key keeps working, in hours and minutes, beside the date.
func TestBrowserKeyGraceCountdown(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	id := c.must("POST", "/v1/keys", tok, `{"name":"deploy","scope":"read"}`, 201)["id"].(string)
	c.must("POST", "/v1/keys/"+id+"/rotate", tok, "", 201)
	b := newBrowser(t, base)
	var left, title string
	var ok bool
	b.run("keys page",
		withToken(base, "/app/keys", tok),
		chromedp.WaitVisible(`#keys tr[data-key="`+id+`"] .countdown`),
		chromedp.Text(`#keys tr[data-key="`+id+`"] .countdown`, &left),
		chromedp.AttributeValue(`#keys tr[data-key="`+id+`"] .countdown`, "title", &title, &ok))
	// 24 hours of grace, less the moments the test took.
	if !regexp.MustCompile(`^old key works for (23 hr [0-9]{1,2} min|24 hr) more$`).MatchString(left) || !strings.HasPrefix(title, "until ") {
		t.Fatalf("the grace countdown says %q (title %q)", left, title)
	}
}

// downloadBackup downloads a backup from the admin page, saved by the
// browser, and checks that it opens as bbolt.
func downloadBackup(t *testing.T, b *browser) {
	t.Helper()
	dir := t.TempDir()
	done := make(chan string, 1)
	name := make(chan string, 1)
	chromedp.ListenTarget(b.ctx, func(ev any) {
		switch e := ev.(type) {
		case *cdpbrowser.EventDownloadWillBegin:
			select {
			case name <- e.SuggestedFilename:
			default:
			}
		case *cdpbrowser.EventDownloadProgress:
			if e.State == cdpbrowser.DownloadProgressStateCompleted {
				select {
				case done <- e.GUID:
				default:
				}
			}
		}
	})
	b.allowDownloads(dir)
	b.run("download a backup",
		chromedp.Click(`#download-backup`),
		chromedp.WaitVisible(`#backup-title ~ .msg.notice`))
	var guid, file string
	select {
	case guid = <-done:
	case <-b.ctx.Done():
		t.Fatal("the backup download did not complete")
	}
	select {
	case file = <-name:
	default:
	}
	if file != "linkbolt-backup.db" {
		t.Errorf("the backup was saved as %q, want the server's linkbolt-backup.db", file)
	}
	checkBackup(t, filepath.Join(dir, guid))
}
