package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kuttClientPkg is the Kutt client the journey runs, from the npm
// registry at a pinned version (the community Node.js client of Kutt's
// API v2).
const kuttClientPkg = "kutt@3.0.2"

// kuttJourney is a script written as a Kutt user writes one with the kutt
// client: it prints one JSON object of what it saw.
const kuttJourney = `
import { Kutt } from "kutt";

const [base, key] = process.argv.slice(2);
const kutt = new Kutt().set("api", base + "/api/v2").set("key", key);
const links = kutt.links();
const out = {};

out.health = await kutt.health().check();
const created = await links.create({
  target: "https://example.com/spring-sale",
  customurl: "spring",
  description: "Spring sale",
  expire_in: "2 days",
  password: "open-sesame",
  reuse: false,
});
out.created = created;
out.createdAtIsDate = created.created_at instanceof Date;
const plain = await links.create({ target: "example.com/plain" });
out.reused = (await links.create({ target: "http://example.com/plain", reuse: true })).id === plain.id;
for (let i = 0; i < 4; i++) await links.create({ target: "https://example.com/item/" + i });

const first = await links.list({ skip: 0, limit: 2 });
const second = await links.list({ skip: 2, limit: 2 });
out.total = first.total;
out.pages = [first.data.map(l => l.address), second.data.map(l => l.address)];

const updated = await links.update(plain.id, { target: "https://example.com/changed", address: "changed", description: "Changed" });
out.updated = { address: updated.address, target: updated.target, description: updated.description };

for (let i = 0; i < 3; i++) {
  const res = await fetch(base + "/changed", { redirect: "manual", headers: { "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36" } });
  if (res.status !== 302) throw new Error("redirect answered " + res.status);
}
await new Promise(r => setTimeout(r, 1500)); // the clicks are written within a flush interval
const stats = await links.stats(plain.id);
out.stats = { visits: stats.visit_count, lastDay: stats.lastDay.total, views: stats.lastDay.views.length, browsers: stats.lastWeek.stats.browser.map(b => b.name) };

try { await links.create({ target: "https://example.com/again", customurl: "spring" }); out.duplicate = "created"; }
catch (e) { out.duplicate = { message: e.message, status: e.cause.status }; }
try { await links.create({ target: "not a url at all" }); out.badURL = "created"; }
catch (e) { out.badURL = { message: e.message, status: e.cause.status }; }
try { await new Kutt().set("api", base + "/api/v2").set("key", "lb_live_wrong").links().list(); out.badKey = "listed"; }
catch (e) { out.badKey = { status: e.cause.status }; }

out.user = await kutt.users().info();
out.removed = await links.remove(created.id);
console.log(JSON.stringify(out));
`

// TestKuttClient runs the kutt npm client against the real binary: a
// journey in the client's own idiom (create with every field, reuse, list
// and page, update, stats after real redirects, errors as the client
// reports them, delete), and the links it made are /v1's links.
func TestKuttClient(t *testing.T) {
	t.Parallel()
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("npm is needed for the Kutt client's journey (Node.js with npm); .ci/run installs it: %v", err)
		}
		t.Skip("npm not found: install Node.js with npm to run the Kutt client's journey (CI runs it)")
	}
	dir := t.TempDir()
	// npm's own cache keeps the pinned package: once there, offline.
	install := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefer-offline", "--no-update-notifier", "--prefix", dir, kuttClientPkg)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s: %v\n%s", kuttClientPkg, err, out)
	}
	script := filepath.Join(dir, "journey.mjs")
	if err := os.WriteFile(script, []byte(kuttJourney), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startChild(t, t.TempDir(), "100ms")
	c := srv.client()
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	key := c.must("POST", "/v1/keys", tok, `{"name":"kutt","scope":"read_write"}`, 201)["key"].(string)

	node := exec.Command("node", script, c.base, key)
	node.Dir = dir
	raw, err := node.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("the journey failed: %v\n%s\n%s\nserver: %s", err, raw, stderr, srv.logs.String())
	}
	var out struct {
		Health          bool
		Created         map[string]any
		CreatedAtIsDate bool
		Reused          bool
		Total           int
		Pages           [][]string
		Updated         map[string]string
		Stats           struct {
			Visits, LastDay, Views int
			Browsers               []string
		}
		Duplicate, BadURL, BadKey struct {
			Message string
			Status  int
		}
		User    map[string]any
		Removed string
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("the journey's output: %v: %s", err, raw)
	}
	cr := out.Created
	switch {
	case !out.Health:
		t.Error("health check false")
	case cr["address"] != "spring" || cr["description"] != "Spring sale" || cr["password"] != true ||
		cr["target"] != "https://example.com/spring-sale" || cr["link"] != c.base+"/spring" || cr["expire_in"] == nil:
		t.Errorf("created: %v", cr)
	case !out.CreatedAtIsDate:
		t.Error("created_at is not a Date for the client")
	case !out.Reused:
		t.Error("reuse made a second link")
	case out.Total != 6 || len(out.Pages) != 2 || len(out.Pages[0]) != 2 || len(out.Pages[1]) != 2 || out.Pages[0][0] == out.Pages[1][0]:
		t.Errorf("list: total %d, pages %v", out.Total, out.Pages)
	case out.Updated["address"] != "changed" || out.Updated["target"] != "https://example.com/changed" || out.Updated["description"] != "Changed":
		t.Errorf("updated: %v", out.Updated)
	case out.Stats.Visits != 3 || out.Stats.LastDay != 3 || out.Stats.Views != 24 || len(out.Stats.Browsers) != 1:
		t.Errorf("stats: %+v", out.Stats)
	case out.Duplicate.Status != 400 || out.Duplicate.Message != "Custom URL is already in use.":
		t.Errorf("duplicate customurl: %+v", out.Duplicate)
	case out.BadURL.Status != 400 || !strings.HasPrefix(out.BadURL.Message, "URL is not valid"):
		t.Errorf("bad URL: %+v", out.BadURL)
	case out.BadKey.Status != 401:
		t.Errorf("bad key: %+v", out.BadKey)
	case out.User["email"] != "admin@example.com":
		t.Errorf("user: %v", out.User)
	case out.Removed != "Link has been deleted successfully.":
		t.Errorf("remove: %q", out.Removed)
	}
	// The links the client made are /v1's: the deleted one gone, the
	// changed one changed.
	list := c.must("GET", "/v1/links?limit=100", key, "", 200)
	var aliases []string
	for _, l := range list["data"].([]any) {
		aliases = append(aliases, l.(map[string]any)["alias"].(string))
	}
	if len(aliases) != 5 || !strings.Contains(strings.Join(aliases, ","), "changed") || strings.Contains(strings.Join(aliases, ","), "spring") {
		t.Errorf("/v1/links after the journey: %v", aliases)
	}
}

// TestKuttImportedByLinkbolt: linkbolt's own Kutt importer, written
// against Kutt, reads another linkbolt's Kutt-compatible API as it reads
// a Kutt: the links with their aliases, titles and click totals.
func TestKuttImportedByLinkbolt(t *testing.T) {
	t.Parallel()
	src := startChild(t, t.TempDir(), "100ms")
	sc := src.client()
	tok := sc.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	key := sc.must("POST", "/v1/keys", tok, `{"name":"kutt","scope":"read_write"}`, 201)["key"].(string)
	for i := range 3 {
		status, body, _ := sc.callHeader("POST", "/api/v2/links", map[string]string{"X-API-Key": key},
			fmt.Sprintf(`{"target":"https://example.com/%d","customurl":"k%d","description":"Item %d"}`, i, i, i))
		if status != 201 {
			t.Fatalf("create through /api/v2: %d %v", status, body)
		}
	}
	for range 2 {
		status, _, _ := sc.callHeader("GET", "/k0", map[string]string{"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0 Safari/537.36"}, "")
		if status != 302 {
			t.Fatalf("redirect: %d", status)
		}
	}
	waitFor(t, "the clicks counted", func() bool {
		return sc.must("GET", "/v1/links?search=k0", key, "", 200)["data"].([]any)[0].(map[string]any)["clicks"] == float64(2)
	})

	dst := startChild(t, t.TempDir(), "100ms", "LINKBOLT_WEBHOOKS_ALLOW_PRIVATE=true") // the source is on loopback
	dc := dst.client()
	dtok := dc.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	res := dc.must("POST", "/v1/imports", dtok, fmt.Sprintf(`{"from":"kutt","url":%q,"api_key":%q}`, sc.base, key), 200)
	if res["imported"] != float64(3) || res["failed"] != float64(0) {
		t.Fatalf("import: %v", res)
	}
	got := map[string]string{}
	for _, l := range dc.must("GET", "/v1/links", dtok, "", 200)["data"].([]any) {
		m := l.(map[string]any)
		got[m["alias"].(string)] = fmt.Sprintf("%v %v %v", m["destination_url"], m["title"], m["clicks"])
	}
	want := map[string]string{"k0": "https://example.com/0 Item 0 2", "k1": "https://example.com/1 Item 1 0", "k2": "https://example.com/2 Item 2 0"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("imported %v, want %v", got, want)
	}
}
