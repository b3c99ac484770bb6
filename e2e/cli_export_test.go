package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/internal/apptest"
	"github.com/linkbolt/linkbolt/internal/config"
)

// exportLines parses an export and returns its lines by type.
func exportLines(t *testing.T, out string) map[string][]map[string]any {
	t.Helper()
	byType := map[string][]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Type == "" || l.Data == nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		byType[l.Type] = append(byType[l.Type], l.Data)
	}
	return byType
}

// TestExport: an export holds everything the workspace owns, one JSON
// object a line, and none of its secrets; offline, to a file, and through
// a running server.
var (
	apiTime   = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	clickTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
)

func TestExport(t *testing.T) {
	t.Parallel()
	in := newAdminInstance(t)
	var secrets []string
	in.serve(func(c client) {
		tok := loginAs(c, "admin@example.com", "a long password", 200)
		cmp := c.must("POST", "/v1/campaigns", in.key, `{"name":"Spring"}`, 201)["id"].(string)
		l := c.must("POST", "/v1/links", in.key, `{"destination_url":"https://example.com/vault","alias":"vault","password":"open sesame 42","tags":["news"],"campaign_id":"`+cmp+`","note":"Behind a password"}`, 201)
		c.must("PUT", "/v1/tags/news", in.key, `{"color":"red","description":"Newsletter links"}`, 200)
		c.must("POST", "/v1/qr-codes", in.key, `{"link_id":"`+l["id"].(string)+`","name":"Flyer"}`, 201)
		wh := c.must("POST", "/v1/webhooks", in.key, `{"url":"https://93.184.215.14/hook","events":["link.created"]}`, 201)
		secrets = append(secrets, in.key, wh["secret"].(string), "open sesame 42", "$2a$", "$2b$", "hash")
		if status, _, _ := c.call("GET", "/kept", "", ""); status/100 != 3 {
			t.Fatalf("GET /kept: %d", status)
		}
		_ = tok
	})
	wsID := regexp.MustCompile(`(?m)^(ws_\S+)`).FindStringSubmatch(in.mustCLI("workspaces", "list"))[1]

	check := func(t *testing.T, out string) {
		t.Helper()
		lines := exportLines(t, out)
		for typ, n := range map[string]int{"workspace": 1, "member": 1, "campaign": 1, "link": 2, "tag": 1, "qr_code": 1, "webhook": 1, "key": 1, "click": 1} {
			if len(lines[typ]) != n {
				t.Errorf("%d %s lines, want %d:\n%s", len(lines[typ]), typ, n, out)
			}
		}
		if !strings.HasPrefix(out, `{"type":"workspace","data":{`) {
			t.Errorf("the export does not start with the workspace: %.80s", out)
		}
		for _, l := range lines["link"] {
			if l["alias"] == "vault" && (l["password_protected"] != true || l["campaign_id"] == "" || len(l["tags"].([]any)) != 1 || l["note"] != "Behind a password") {
				t.Errorf("the protected link: %v", l)
			}
			if l["alias"] == "kept" && l["clicks"] != float64(1) {
				t.Errorf("the clicked link: %v", l)
			}
		}
		if tg := lines["tag"]; len(tg) == 1 && (tg[0]["name"] != "news" || tg[0]["color"] != "red" || tg[0]["links"] != float64(1) || !apiTime.MatchString(tg[0]["updated_at"].(string))) {
			t.Errorf("the tag: %v", tg[0])
		}
		if k := lines["key"]; len(k) == 1 && (k[0]["name"] != "deploy" || !strings.HasPrefix(in.key, k[0]["start"].(string))) {
			t.Errorf("the key: %v", k[0])
		}
		// Times as the API writes them: RFC 3339 UTC in whole seconds; a
		// raw click's with milliseconds, as the analytics export has it.
		for typ, field := range map[string]string{"workspace": "created_at", "member": "joined_at", "link": "created_at", "key": "last_used_at", "click": "time"} {
			want := apiTime
			if typ == "click" {
				want = clickTime
			}
			for _, l := range lines[typ] {
				if s, _ := l[field].(string); !want.MatchString(s) {
					t.Errorf("%s %s %q is not written as the API writes it", typ, field, l[field])
				}
			}
		}
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("the export holds the secret %q", s)
			}
		}
	}
	t.Run("offline to stdout", func(t *testing.T) {
		check(t, in.mustCLI("export", "--workspace", wsID))
	})
	t.Run("offline to a file", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "ws.jsonl")
		code, stdout, stderr := in.cli("", "export", "--workspace", wsID, "--out", out)
		if code != 0 || stdout != "" || !strings.Contains(stderr, "wrote 10 lines to "+out) {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		check(t, string(b))
	})
	t.Run("refused", func(t *testing.T) {
		if code, _, stderr := in.cli("", "export"); code != 2 || !strings.Contains(stderr, "--workspace ID is required") {
			t.Fatalf("no workspace: exit %d, %q", code, stderr)
		}
		if code, _, stderr := in.cli("", "export", "--workspace", "ws_nope"); code != 1 || !strings.Contains(stderr, "not found") {
			t.Fatalf("an unknown workspace: exit %d, %q", code, stderr)
		}
		if code, _, stderr := in.cli("", "export", "--workspace", wsID, "--out", in.cfg.Storage.Path); !apptest.OnPostgres() && (code != 1 || !strings.Contains(stderr, "data file itself")) {
			t.Fatalf("onto the data file: exit %d, %q", code, stderr)
		}
	})
	t.Run("through a running server", func(t *testing.T) {
		cfg, err := config.Load(in.cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		base, stop := startApp(t, cfg, nil)
		defer stop()
		raw, _ := os.ReadFile(in.cfgPath)
		live := in.cfgPath + ".live"
		os.WriteFile(live, []byte(strings.Replace(string(raw), "listen: 127.0.0.1:0", "listen: 127.0.0.1:0\n  base_url: "+base, 1)), 0o600)
		check(t, runOK(t, "export", "--workspace", wsID, "--config", live))
	})
}
