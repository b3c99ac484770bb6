package server

import (
	"context"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
)

// auditEntries returns every entry of the audit log at path (with its
// query), following next_cursor, as decoded objects.
func (e *env) auditEntries(path, cred string) []map[string]any {
	e.t.Helper()
	var out []map[string]any
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	next := ""
	for {
		p := path
		if next != "" {
			p += sep + "cursor=" + url.QueryEscape(next)
		}
		r := e.do("GET", p, cred, "", 200)
		for _, d := range r.path("data").([]any) {
			out = append(out, d.(map[string]any))
		}
		c, _ := r.path("next_cursor").(string)
		if c == "" {
			return out
		}
		next = c
	}
}

// findAudit returns the entries of action, newest first.
func findAudit(es []map[string]any, action string) []map[string]any {
	var out []map[string]any
	for _, e := range es {
		if e["action"] == action {
			out = append(out, e)
		}
	}
	return out
}

func field(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[p]
	}
	return v
}

// TestAuditLogRecordsEachAction makes every audited change through the
// router and finds each in the owner's log with its actor, target and
// address, and none of the secrets that went by.
func TestAuditLogRecordsEachAction(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	secrets := []string{"correct horse battery", "other password 123", "wrong password 1", "a guess at a password",
		e.adminToken, e.writeKey, e.readKey, e.otherKey, hex.EncodeToString(auth.HashToken(e.writeKey))}
	admin := e.do("GET", "/v1/me", e.adminToken, "", 200).str("id")

	// Sign-ins: the env signed the admin in; now a wrong password and an
	// e-mail that names no user.
	wantProblem(t, e.request(newRequest("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"wrong password 1"}`)), 401, "unauthorized")
	wantProblem(t, e.request(newRequest("POST", "/v1/auth/login", "", `{"email":"nobody@example.com","password":"a guess at a password"}`)), 401, "unauthorized")

	// Keys: created by a key, rotated, revoked.
	k := e.do("POST", "/v1/keys", e.writeKey, `{"name":"deploy","scope":"read"}`, 201)
	keyID := k.str("id")
	secrets = append(secrets, k.str("key"))
	rot := e.do("POST", "/v1/keys/"+keyID+"/rotate", e.adminToken, "", 201)
	secrets = append(secrets, rot.str("key"))
	e.do("DELETE", "/v1/keys/"+rot.str("id"), e.adminToken, "", 204)

	// A webhook: created, secret rolled, disabled.
	w := e.do("POST", "/v1/webhooks", e.adminToken, `{"url":"https://93.184.215.14/hook?token=receiver-secret","events":["link.created"]}`, 201)
	whID := w.str("id")
	secrets = append(secrets, w.str("secret"), "receiver-secret")
	secrets = append(secrets, e.do("POST", "/v1/webhooks/"+whID+"/secret", e.adminToken, "", 200).str("secret"))
	e.do("PATCH", "/v1/webhooks/"+whID, e.adminToken, `{"enabled":false}`, 200)

	// A domain: added, verified by the admin, removed.
	d := e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"go.example.com"}`, 201)
	domID := d.str("id")
	e.do("PATCH", "/v1/domains/"+domID, e.adminToken, `{"verified":true}`, 200)
	e.do("DELETE", "/v1/domains/"+domID, e.adminToken, "", 204)

	// The workspace: renamed by its owner, its plan changed by the admin.
	e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"name":"Marketing"}`, 200)
	e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"plan":"pro"}`, 200)

	// A backup (PostgreSQL's is pg_dump's: the server refuses it).
	backup := 200
	if onPostgres() {
		backup = 409
	}
	if r := e.request(newRequest("GET", "/v1/admin/backup", e.adminToken, "")); r.status != backup {
		t.Fatalf("backup: %d", r.status)
	}

	log := e.auditEntries("/v1/audit-log?limit=3", e.adminToken)
	for _, tt := range []struct {
		action, actorType, actorID, targetType, targetID string
		changes                                          map[string][2]any
	}{
		{"auth.login_succeeded", "user", admin, "user", admin, nil},
		{"auth.login_failed", "user", admin, "user", admin, nil},
		{"key.created", "key", "", "key", keyID, map[string][2]any{"name": {nil, "deploy"}, "scope": {nil, "read"}}},
		{"key.rotated", "user", admin, "key", keyID, map[string][2]any{"replaced_by": {nil, rot.str("id")}, "grace_ends_at": {nil, "2026-03-11T12:00:00Z"}}},
		{"key.revoked", "user", admin, "key", rot.str("id"), map[string][2]any{"state": {"active", "revoked"}}},
		{"webhook.created", "user", admin, "webhook", whID, map[string][2]any{"url_host": {nil, "https://93.184.215.14"}, "enabled": {nil, "true"}}},
		{"webhook.secret_rolled", "user", admin, "webhook", whID, map[string][2]any{"previous_secret_expires_at": {nil, "2026-03-11T12:00:00Z"}}},
		{"webhook.disabled", "user", admin, "webhook", whID, map[string][2]any{"enabled": {"true", "false"}}},
		{"domain.added", "key", "", "domain", domID, map[string][2]any{"hostname": {nil, "go.example.com"}}},
		{"domain.verified", "user", admin, "domain", domID, map[string][2]any{"verified": {"false", "true"}}},
		{"domain.removed", "user", admin, "domain", domID, map[string][2]any{"hostname": {"go.example.com", nil}}},
		{"workspace.renamed", "user", admin, "workspace", e.ws, map[string][2]any{"name": {"Default", "Marketing"}}},
		{"workspace.plan_changed", "user", admin, "workspace", e.ws, map[string][2]any{"plan": {"free", "pro"}}},
	} {
		t.Run(tt.action, func(t *testing.T) {
			es := findAudit(log, tt.action)
			if len(es) == 0 {
				t.Fatalf("no %s entry in %d entries", tt.action, len(log))
			}
			got := es[0]
			if field(got, "actor", "type") != tt.actorType || tt.actorID != "" && field(got, "actor", "id") != tt.actorID ||
				field(got, "target", "type") != tt.targetType || field(got, "target", "id") != tt.targetID ||
				got["address"] != "192.0.2.1" {
				t.Fatalf("entry = %v", got)
			}
			if _, ok := got["workspace_ids"]; ok {
				t.Fatalf("an owner's entry names workspaces: %v", got)
			}
			changes, _ := got["changes"].(map[string]any)
			for f, want := range tt.changes {
				c, _ := changes[f].([]any)
				if len(c) != 2 || c[0] != want[0] || c[1] != want[1] {
					t.Fatalf("change %s = %v, want %v (entry %v)", f, changes[f], want, got)
				}
			}
		})
	}
	// The key's actor is named by ID and name; a user by e-mail.
	if k := findAudit(log, "key.created")[0]; field(k, "actor", "name") != "writer" || field(k, "actor", "id") == nil {
		t.Fatalf("key actor = %v", k["actor"])
	}
	if l := findAudit(log, "auth.login_failed")[0]; field(l, "actor", "name") != "admin@example.com" {
		t.Fatalf("failed login actor = %v", l["actor"])
	}

	// The instance's own entries are the admin's: the unknown e-mail and
	// the backup.
	all := e.auditEntries("/v1/admin/audit-log", e.adminToken)
	unknown := findAudit(all, "auth.login_failed")
	if len(unknown) != 2 || field(unknown[0], "actor", "name") != "nobody@example.com" || field(unknown[0], "actor", "id") != nil ||
		unknown[0]["workspace_ids"] != nil || unknown[1]["workspace_ids"] == nil {
		t.Fatalf("failed logins in the admin's log = %v", unknown)
	}
	if b := findAudit(all, "backup.downloaded"); onPostgres() && len(b) != 0 {
		t.Fatalf("a refused backup is in the log: %v", b)
	} else if !onPostgres() && (len(b) != 1 || field(b[0], "actor", "id") != admin || b[0]["address"] != "192.0.2.1") {
		t.Fatalf("backup entries = %v", b)
	}
	for _, id := range []string{"backup.downloaded"} {
		if len(findAudit(log, id)) != 0 {
			t.Fatalf("the instance's %s is in a workspace's log", id)
		}
	}
	// The other user's workspace has its own log, without the admin's.
	otok := e.login("other@example.com", "other password 123")
	for _, en := range e.auditEntries("/v1/audit-log", otok) {
		if field(en, "actor", "id") == admin {
			t.Fatalf("the admin's entry in another workspace's log: %v", en)
		}
	}

	t.Run("no secret in any entry", func(t *testing.T) {
		var raw []string
		for _, p := range []string{"/v1/admin/audit-log?limit=500", "/v1/audit-log?limit=500", "/v1/admin/audit-log?format=csv", "/v1/admin/audit-log?format=jsonl"} {
			raw = append(raw, string(e.do("GET", p, e.adminToken, "", 200).raw))
		}
		all := strings.Join(raw, "\n")
		for _, s := range secrets {
			if strings.Contains(all, s) {
				t.Fatalf("secret %q in the audit log", s)
			}
		}
	})
}

// TestAuditLogOwnersOnly: the audit log is an owner's; every other
// credential is refused, and the admin's log is the admin's.
func TestAuditLogOwnersOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tokens := map[link.Role]string{}
	for _, role := range []link.Role{link.RoleRead, link.RoleReadWrite, link.RoleOwner} {
		tokens[role], _ = e.join(string(role)+"@example.com", string(role))
	}
	ws := "&workspace_id=" + e.ws
	for _, tt := range []struct {
		name, path, cred string
		status           int
	}{
		{"owner", "/v1/audit-log?limit=1" + ws, tokens[link.RoleOwner], 200},
		{"read member", "/v1/audit-log?limit=1" + ws, tokens[link.RoleRead], 403},
		{"read_write member", "/v1/audit-log?limit=1" + ws, tokens[link.RoleReadWrite], 403},
		{"read_write member's export", "/v1/audit-log?format=csv" + ws, tokens[link.RoleReadWrite], 403},
		{"read key", "/v1/audit-log", e.readKey, 403},
		{"read_write key", "/v1/audit-log", e.writeKey, 403},
		{"another workspace's owner", "/v1/audit-log?limit=1" + ws, e.login("other@example.com", "other password 123"), 404},
		{"no credential", "/v1/audit-log", "", 401},
		{"admin log: an owner", "/v1/admin/audit-log", tokens[link.RoleOwner], 403},
		{"admin log: a key", "/v1/admin/audit-log", e.writeKey, 403},
		{"admin log: the admin", "/v1/admin/audit-log?limit=1", e.adminToken, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.request(newRequest("GET", tt.path, tt.cred, ""))
			if tt.status != 200 {
				wantProblem(t, r, tt.status, map[int]string{401: "unauthorized", 403: "forbidden", 404: "not_found"}[tt.status])
				return
			}
			if r.status != 200 || len(r.path("data").([]any)) != 1 {
				t.Fatalf("%d: %s", r.status, r.raw)
			}
		})
	}
	// The members' joining is on record, seen by an owner.
	joined := findAudit(e.auditEntries("/v1/audit-log?action=member.joined"+ws, tokens[link.RoleOwner]), "member.joined")
	if len(joined) != 3 {
		t.Fatalf("%d member.joined entries, want 3", len(joined))
	}
}

func TestAuditLogFiltersAndPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Ten keys made a minute apart by the write key, and two revoked.
	var ids []string
	for i := range 10 {
		e.clock.Add(time.Minute)
		ids = append(ids, e.do("POST", "/v1/keys", e.writeKey, `{"name":"k`+string(rune('0'+i))+`","scope":"read"}`, 201).str("id"))
	}
	e.clock.Add(time.Minute)
	e.do("DELETE", "/v1/keys/"+ids[3], e.adminToken, "", 204)
	e.do("DELETE", "/v1/keys/"+ids[4], e.adminToken, "", 204)
	writer := e.do("GET", "/v1/keys", e.adminToken, "", 200).path("data")
	var writerID string
	for _, k := range writer.([]any) {
		if k.(map[string]any)["name"] == "writer" {
			writerID = k.(map[string]any)["id"].(string)
		}
	}

	count := func(q string) int { return len(e.auditEntries("/v1/audit-log?"+q, e.adminToken)) }
	for _, tt := range []struct {
		query string
		want  int
	}{
		{"actor=" + writerID, 10},
		{"actor=" + writerID + "&limit=3", 10},
		{"action=key.revoked", 2},
		{"target=" + ids[3], 2},
		{"action=key.created&target=" + ids[3], 1},
		{"action=key.created&limit=4", 12}, // the env's two keys too
		{"range=today&action=key.revoked", 2},
		{"range=all&action=key.revoked", 2},
		{"start=2026-03-10T12:00:00Z&end=2026-03-10T13:00:00Z&actor=" + writerID, 10},
		{"start=2026-03-09T00:00:00Z&end=2026-03-10T00:00:00Z", 0},
		{"action=webhook.created", 0},
	} {
		t.Run(tt.query, func(t *testing.T) {
			if got := count(tt.query); got != tt.want {
				t.Fatalf("%d entries, want %d", got, tt.want)
			}
		})
	}
	t.Run("pages are newest first and do not overlap", func(t *testing.T) {
		es := e.auditEntries("/v1/audit-log?actor="+writerID+"&limit=4", e.adminToken)
		for i := range es {
			if got, want := field(es[i], "target", "id"), ids[len(ids)-1-i]; got != want {
				t.Fatalf("entry %d is about %v, want %v", i, got, want)
			}
		}
		last := e.do("GET", "/v1/audit-log?actor="+writerID+"&limit=10", e.adminToken, "", 200)
		if last.path("next_cursor") != nil {
			t.Fatalf("a full last page has a next cursor: %s", last.raw)
		}
	})
	for _, q := range []string{"action=key.exploded", "cursor=bogus", "range=forever", "start=yesterday&end=today", "limit=0", "limit=501", "format=xml"} {
		t.Run("bad "+q, func(t *testing.T) {
			wantProblem(t, e.request(newRequest("GET", "/v1/audit-log?"+q, e.adminToken, "")), 400, "invalid_request")
		})
	}
}

func TestAuditLogExport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 7 {
		e.do("POST", "/v1/keys", e.adminToken, `{"name":"export `+string(rune('a'+i))+`","scope":"read"}`, 201)
	}
	page := e.auditEntries("/v1/audit-log?action=key.created", e.adminToken)

	t.Run("csv", func(t *testing.T) {
		r := e.do("GET", "/v1/audit-log?format=csv&action=key.created", e.adminToken, "", 200)
		if ct := r.header.Get("Content-Type"); ct != "text/csv; charset=utf-8" || !strings.Contains(r.header.Get("Content-Disposition"), "linkbolt-audit-log.csv") {
			t.Fatalf("headers %v", r.header)
		}
		rows, err := csv.NewReader(strings.NewReader(string(r.raw))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(rows[0], ",") != strings.Join(auditCSVHeader, ",") || len(rows) != len(page)+1 {
			t.Fatalf("%d rows (want %d), header %v", len(rows), len(page)+1, rows[0])
		}
		for i, row := range rows[1:] {
			if row[0] != page[i]["id"] || row[6] != "key.created" || row[9] != "192.0.2.1" {
				t.Fatalf("row %d = %v, entry %v", i, row, page[i])
			}
			var ch map[string][2]any
			if err := json.Unmarshal([]byte(row[10]), &ch); err != nil || ch["name"][1] == nil {
				t.Fatalf("row %d changes %q: %v", i, row[10], err)
			}
		}
	})
	t.Run("json lines, by format and by Accept", func(t *testing.T) {
		for _, req := range []*http.Request{
			newRequest("GET", "/v1/audit-log?format=jsonl&action=key.created", e.adminToken, ""),
			func() *http.Request {
				r := newRequest("GET", "/v1/audit-log?action=key.created", e.adminToken, "")
				r.Header.Set("Accept", "application/x-ndjson")
				return r
			}(),
		} {
			r := e.request(req)
			if r.status != 200 || r.header.Get("Content-Type") != "application/x-ndjson" {
				t.Fatalf("%d %v", r.status, r.header)
			}
			lines := strings.Split(strings.TrimSpace(string(r.raw)), "\n")
			if len(lines) != len(page) {
				t.Fatalf("%d lines, want %d", len(lines), len(page))
			}
			for i, l := range lines {
				var got map[string]any
				if err := json.Unmarshal([]byte(l), &got); err != nil || got["id"] != page[i]["id"] || got["action"] != "key.created" {
					t.Fatalf("line %d = %s (%v)", i, l, err)
				}
			}
		}
		r := newRequest("GET", "/v1/audit-log?action=key.created", e.adminToken, "")
		r.Header.Set("Accept", "text/csv")
		if got := e.request(r); got.status != 200 || !strings.HasPrefix(string(got.raw), "id,time,") {
			t.Fatalf("Accept: text/csv answered %d %s", got.status, got.raw)
		}
	})
	t.Run("an export reads past a page", func(t *testing.T) {
		// More entries than a page holds.
		audit := e.db.Audit
		ctx := link.WithActor(context.Background(), link.Actor{Type: link.ActorUser, Name: "nobody@example.com"}, "198.51.100.1")
		for range 600 {
			if err := audit.RecordAudit(ctx, nil, link.AuditLoginFailed, link.AuditTarget{Type: "user"}, nil); err != nil {
				t.Fatal(err)
			}
		}
		r := e.do("GET", "/v1/admin/audit-log?format=jsonl&action=auth.login_failed", e.adminToken, "", 200)
		if n := strings.Count(string(r.raw), "\n"); n != 600 {
			t.Fatalf("%d lines, want 600", n)
		}
	})
}

// TestAuditActionsDocumented: the OpenAPI document lists exactly the
// actions the action filter accepts.
func TestAuditActionsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := loadOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, v := range doc.Components.Schemas["AuditAction"].Value.Enum {
		documented = append(documented, v.(string))
	}
	if got, want := strings.Join(documented, " "), strings.Join(link.AuditActions, " "); got != want {
		t.Fatalf("documented actions:\n%s\nlink.AuditActions:\n%s", got, want)
	}
}
