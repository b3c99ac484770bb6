package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportCommand runs linkbolt import through run: against a running
// server (the data file is locked, so the import goes through POST
// /v1/imports), then offline on the data file, with a dry run, a broken
// row, a taken alias renamed, and a second run that adds nothing.
func TestImportCommand(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	cfgPath := filepath.Join(filepath.Dir(filepath.Dir(cfg.Storage.Path)), "config.yaml")
	base, stop := startApp(t, cfg, nil)
	c := client{t, base}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	ws := c.must("GET", "/v1/me", tok, "", 200)["workspaces"].([]any)[0].(map[string]any)["id"].(string)
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://other.example/","alias":"gh"}`, 201)

	dir := t.TempDir()
	urls, logs := filepath.Join(dir, "yourls_url.csv"), filepath.Join(dir, "yourls_log.csv")
	for name, data := range map[string]string{
		urls: "keyword,url,title,timestamp,ip,clicks\n" +
			"gh,https://github.com/linkbolt/linkbolt,linkbolt,2022-05-01 10:00:00,203.0.113.7,3\n" +
			"wiki,https://en.wikipedia.org/wiki/URL_shortening,URL shortening,2022-06-10 14:30:00,203.0.113.7,1\n" +
			"broken,https://example.com/x,x,the day before,203.0.113.7,0\n",
		logs: "click_id,click_time,shorturl,referrer,user_agent,ip_address,country_code\n" +
			"1,2022-05-02 09:10:00,gh,direct,Mozilla/5.0 Firefox/100.0,198.51.100.1,DE\n",
	} {
		if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// While the server runs, through its API.
	live := cfgPath + ".live"
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(live, []byte(strings.Replace(string(raw), "listen: 127.0.0.1:0", "listen: 127.0.0.1:0\n  base_url: "+base, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"import", "--config", live, "--from", "yourls", "--workspace", ws, "--file", urls, "--log", logs}
	code, stdout, stderr := runCLI(t, append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(stdout, "dry run: nothing was written") || !strings.Contains(stdout, "imported 1, skipped 1 (imported before: 0), failed 1; 1 clicks") ||
		viaServer(stderr, "sending the import to the running server") {
		t.Fatalf("dry run: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, `skipped  line 2 (gh): alias "gh" is already taken`) || !strings.Contains(stdout, `failed   line 4: timestamp "the day before" is not a date`) {
		t.Fatalf("dry run rows:\n%s", stdout)
	}
	code, stdout, stderr = runCLI(t, append(args, "--on-conflict", "rename")...)
	if code != 0 || !strings.Contains(stdout, "imported 2, skipped 0 (imported before: 0), failed 1; 4 clicks") ||
		!strings.Contains(stdout, `imported line 2 (gh): alias "gh" is taken: renamed to "gh-2"`) {
		t.Fatalf("live import: exit %d\n%s%s", code, stdout, stderr)
	}
	list := c.must("GET", "/v1/links?search=gh-2", tok, "", 200)
	if got := list["meta"].(map[string]any)["total"]; got != 1.0 {
		t.Fatalf("gh-2: %v", list)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// Offline, on the data file: the same import again adds nothing.
	args[2] = cfgPath
	code, stdout, stderr = runCLI(t, args...)
	if code != 0 || !strings.Contains(stdout, "imported 0, skipped 2 (imported before: 2), failed 1; 0 clicks") || strings.Contains(stderr, "running server") {
		t.Fatalf("offline rerun: exit %d\n%s%s", code, stdout, stderr)
	}
	// A CSV offline.
	csvFile := filepath.Join(dir, "links.csv")
	if err := os.WriteFile(csvFile, []byte("url,alias,tags,clicks\nhttps://example.com/docs,docs-page,a|b,5\nftp://nope,nope,,\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, "import", "--config", cfgPath, "--from", "csv", "--workspace", ws, "--file", csvFile)
	if code != 0 || !strings.Contains(stdout, "imported 1, skipped 1 (imported before: 0), failed 0; 5 clicks") || !strings.Contains(stdout, "skipped  line 3 (nope): bad URL") {
		t.Fatalf("offline csv: exit %d\n%s%s", code, stdout, stderr)
	}

	// Mistakes in the command line and in the file.
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", "--config", cfgPath, "--workspace", ws, "--file", csvFile}, 2, "--from SOURCE is required"},
		{[]string{"import", "--config", cfgPath, "--from", "csv", "--file", csvFile}, 2, "--workspace ID is required"},
		{[]string{"import", "--config", cfgPath, "--from", "csv", "--workspace", ws}, 2, "give --file FILE"},
		{[]string{"import", "--config", cfgPath, "--from", "csv", "--workspace", ws, "--file", csvFile, "--on-conflict", "merge"}, 2, "--on-conflict must be skip or rename"},
		{[]string{"import", "--config", cfgPath, "--from", "tinyurl", "--workspace", ws, "--file", csvFile}, 2, `--from "tinyurl": want one of bitly, csv, kutt, shlink, yourls (run`},
		{[]string{"import", "--config", cfgPath, "--from", "shlink", "--workspace", ws, "--file", csvFile}, 2, "--from shlink reads the source's API: give --url URL and --api-key KEY"},
		{[]string{"import", "--config", cfgPath, "--from", "bitly", "--workspace", ws, "--url", "https://bit.example"}, 2, "--from bitly reads an exported file: give --file FILE"},
		{[]string{"import", "--config", cfgPath, "--from", "csv", "--workspace", ws, "--file", logs}, 1, "no url column"},
		{[]string{"import", "--config", cfgPath, "--from", "csv", "--workspace", "ws_nothere", "--file", csvFile}, 1, "not found"},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s%s", c.args, code, c.code, c.want, stdout, stderr)
		}
	}
}

// TestImportCommandAPIKeyFromEnv: the source's API key may come from
// LINKBOLT_IMPORT_API_KEY, out of the process list.
func TestImportCommandAPIKeyFromEnv(t *testing.T) {
	const apiKey = "shlink-key-from-the-environment"
	shlink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != apiKey {
			w.WriteHeader(401)
			return
		}
		fmt.Fprint(w, `{"shortUrls":{"data":[{"shortCode":"env1","longUrl":"https://example.com/env","dateCreated":"2024-01-01T00:00:00+00:00","tags":[],"visitsSummary":{"total":0}}],"pagination":{"currentPage":1,"pagesCount":1}}}`)
	}))
	defer shlink.Close()
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	cfgPath := filepath.Join(filepath.Dir(filepath.Dir(cfg.Storage.Path)), "config.yaml")
	base, stop := startApp(t, cfg, nil)
	c := client{t, base}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	ws := c.must("GET", "/v1/me", tok, "", 200)["workspaces"].([]any)[0].(map[string]any)["id"].(string)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LINKBOLT_IMPORT_API_KEY", apiKey)
	code, stdout, stderr := runCLI(t, "import", "--config", cfgPath, "--from", "shlink", "--workspace", ws, "--url", shlink.URL)
	if code != 0 || !strings.Contains(stdout, "imported 1,") || strings.Contains(stdout+stderr, apiKey) {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
}
