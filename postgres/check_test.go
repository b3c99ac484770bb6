package postgres_test

import (
	"context"
	neturl "net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

// TestCheck: a database written through the services passes the check;
// each invariant broken with SQL is reported, with the check's name, and
// the database is whole again once it is put back.
func TestCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if r, err := postgres.Check(ctx, pgtest.URL(t)); err != nil || r.OK() || !strings.Contains(r.Problems[0], "no linkbolt schema") {
		t.Fatalf("Check of an empty database = %+v, %v", r, err)
	}
	url := pgtest.URL(t)
	wrong, _ := neturl.Parse(url)
	wrong.User = neturl.UserPassword(wrong.User.Username(), "not-the-password")
	if _, err := postgres.Check(ctx, wrong.String()); err == nil || strings.Contains(err.Error(), "not-the-password") || !strings.Contains(err.Error(), "xxxxx") {
		t.Fatalf("Check with a wrong password: %v; want an error with the password hidden", err)
	}
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	s, err := postgres.Open(ctx, postgres.Options{URL: url, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Data.Close() })
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	admin, ws := bootstrap(t, s)
	other := &link.Workspace{Name: "Other", Plan: link.PlanFree}
	if err := s.Workspaces.CreateWorkspace(ctx, other, admin.ID, 0); err != nil {
		t.Fatal(err)
	}

	// What the services write: a campaign's link with tags, clicks of
	// two days (the older day's link hours rolled up), a backlog, a key.
	c := &link.Campaign{WorkspaceID: ws.ID, Name: "Spring", Status: link.CampaignActive}
	if err := s.Campaigns.CreateCampaign(ctx, c); err != nil {
		t.Fatal(err)
	}
	l := newLink(ws.ID, "checked")
	l.CampaignID, l.Tags = c.ID, []string{"a", "b"}
	if err := s.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	day0 := clock.Now().Add(-48 * time.Hour)
	var clicks []link.Click
	for i := range 6 {
		at := day0
		if i%2 == 1 {
			at = clock.Now().Add(-time.Hour)
		}
		cl := clickOf(l, at.Add(time.Duration(i)*time.Minute), uint64(i%3+1))
		cl.CampaignID, cl.Bot = c.ID, i == 4
		clicks = append(clicks, cl)
	}
	if _, err := s.Clicks.RecordClicks(ctx, clicks); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Clicks.RollUpLinkHours(ctx, clock.Now()); err != nil || n == 0 {
		t.Fatalf("RollUpLinkHours = %d, %v", n, err)
	}
	if _, _, err := s.Clicks.SpillClicks(ctx, clicks[:2], 0); err != nil {
		t.Fatal(err)
	}
	k := apiKey(ws.ID, "lb_live_checked")
	if err := s.Keys.CreateKey(ctx, k, 0); err != nil {
		t.Fatal(err)
	}

	r, err := postgres.Check(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Schema != postgres.SchemaVersion() || r.Users != 1 || r.Workspaces != 2 || r.Links != 1 || r.Clicks != 6 || r.Keys != 1 {
		t.Fatalf("Check of a sound database = %+v", r)
	}
	if strings.Contains(r.URL, "@") && !strings.Contains(r.URL, "xxxxx") {
		t.Fatalf("the report's URL %q shows the password", r.URL)
	}

	wsScope, linkScope := "w:"+ws.ID, "l:"+l.ID
	for _, tc := range []struct {
		name        string
		break_, fix string
		args        []any // of break_ and fix, which name the same parameters
		want        string
	}{
		{"newer schema", `INSERT INTO linkbolt_schema (version) VALUES (9999)`, `DELETE FROM linkbolt_schema WHERE version = 9999`, nil,
			"schema version 9999, newer than this linkbolt's"},
		{"older schema", `UPDATE linkbolt_schema SET version = -version WHERE version = (SELECT max(version) FROM linkbolt_schema)`,
			`UPDATE linkbolt_schema SET version = -version WHERE version < 0`, nil, "older than this linkbolt's"},
		{"missing migration", `DELETE FROM linkbolt_schema WHERE version = 1`, `INSERT INTO linkbolt_schema (version) VALUES (1)`, nil,
			"a migration is missing"},
		{"link counter", `UPDATE links SET clicks = clicks + 1 WHERE id = $1`, `UPDATE links SET clicks = clicks - 1 WHERE id = $1`,
			[]any{l.ID}, "link clicks: link " + l.ID + ": its counter says 7 clicks, its daily aggregates 6"},
		{"an hour's total", `UPDATE click_hour_sums SET clicks = clicks + 1 WHERE scope = $1`,
			`UPDATE click_hour_sums SET clicks = clicks - 1 WHERE scope = $1`, []any{wsScope}, "day totals: " + wsScope},
		{"a day without hours", `UPDATE click_hour_sums SET scope = 'x' || scope WHERE scope = $1`,
			`UPDATE click_hour_sums SET scope = substr(scope, 2) WHERE scope = 'x' || $1`, []any{wsScope}, "day totals: " + wsScope},
		{"a link's hours over its day", `UPDATE click_hour_sums SET clicks = clicks + 1 WHERE scope = $1`,
			`UPDATE click_hour_sums SET clicks = clicks - 1 WHERE scope = $1`, []any{linkScope}, "day totals: " + linkScope},
		{"top list over its totals", `UPDATE click_day_sums SET tops = tops || int2send(3::smallint) || int2send(2::smallint) || convert_to('ZZ', 'UTF8') || int8send(5) || int8send(0) || int8send(0) WHERE scope = $1`,
			`UPDATE click_day_sums SET tops = substr(tops, 1, octet_length(tops) - 30) WHERE scope = $1`, []any{wsScope}, "click_day_sums top lists: " + wsScope},
		{"top list over its bound", `UPDATE click_hour_sums SET tops = tops || (SELECT string_agg(int2send(7::smallint) || int2send(3::smallint) || convert_to('v' || lpad(n::text, 2, '0'), 'UTF8')
				|| int8send(0) || int8send(0) || int8send(0), ''::bytea ORDER BY n) FROM generate_series(1, 17) AS n) WHERE scope = $1`,
			`UPDATE click_hour_sums SET tops = substr(tops, 1, octet_length(tops) - 17 * 31) WHERE scope = $1`, []any{linkScope}, "(at most 16)"},
		{"top lists that do not decode", `UPDATE click_day_sums SET tops = tops || '\x0003'::bytea WHERE scope = $1`,
			`UPDATE click_day_sums SET tops = substr(tops, 1, octet_length(tops) - 2) WHERE scope = $1`, []any{linkScope}, "click_day_sums top lists: " + linkScope + " day"},
		{"bots over clicks", `UPDATE click_hour_sums SET bots = bots + 100 WHERE scope = $1`,
			`UPDATE click_hour_sums SET bots = bots - 100 WHERE scope = $1`, []any{wsScope}, "click_hour_sums totals: " + wsScope},
		{"aggregate of another workspace", `UPDATE click_day_sums SET workspace_id = $2 WHERE scope = $1 AND workspace_id = $3`,
			`UPDATE click_day_sums SET workspace_id = $3 WHERE scope = $1 AND workspace_id = $2`, []any{wsScope, other.ID, ws.ID}, "click_day_sums scopes: " + wsScope},
		{"visitors over clicks", `UPDATE click_day_sums SET visitors = visitors + 100 WHERE scope = $1`,
			`UPDATE click_day_sums SET visitors = visitors - 100 WHERE scope = $1`, []any{wsScope}, "visitors: " + wsScope},
		{"visitor records over the count", `UPDATE click_day_sums SET visitors = visitors - 1 WHERE scope = $1`,
			`UPDATE click_day_sums SET visitors = visitors + 1 WHERE scope = $1`, []any{wsScope}, "visitor records: " + wsScope},
		{"raw clicks over the hour", `UPDATE click_hour_sums SET clicks = clicks - 1 WHERE scope = $1 AND bots = 0`,
			`UPDATE click_hour_sums SET clicks = clicks + 1 WHERE scope = $1 AND bots = 0`, []any{wsScope}, "raw clicks: workspace " + ws.ID},
		{"backlog size", `UPDATE click_backlog_size SET clicks = clicks + 1`, `UPDATE click_backlog_size SET clicks = clicks - 1`, nil,
			"click backlog: its size says 3 clicks"},
		{"outbox depth", `UPDATE outbox_depth SET pending = pending + 1 WHERE slot = 3`, `UPDATE outbox_depth SET pending = pending - 1 WHERE slot = 3`, nil,
			"outbox: its depth says 1 pending deliveries, there are 0"},
		{"link's campaign gone", `UPDATE links SET campaign_id = 'cmp_gone' WHERE id = $1 AND campaign_id = $2`, `UPDATE links SET campaign_id = $2 WHERE id = $1`,
			[]any{l.ID, c.ID}, "link campaigns: link " + l.ID + " of workspace " + ws.ID + ": campaign cmp_gone does not exist"},
		{"link's domain not its workspace's", `UPDATE links SET domain = 'go.example.com' WHERE id = $1`, `UPDATE links SET domain = '' WHERE id = $1`,
			[]any{l.ID}, "link domains: link " + l.ID},
		{"a count of clicks without a limit", `INSERT INTO click_reservations (link_id, used) VALUES ($1, 4)`, `DELETE FROM click_reservations WHERE link_id = $1`,
			[]any{l.ID}, "click reservations: link " + l.ID + ": 4 of its clicks counted against a max_clicks it has not"},
		{"a tag twice", `UPDATE links SET tags = '{a,a}' WHERE id = $1`, `UPDATE links SET tags = '{a,b}' WHERE id = $1`, []any{l.ID}, "link tags: link " + l.ID},
		{"raw clicks of another workspace", `UPDATE clicks SET workspace_id = $2 WHERE link_id = $1 AND workspace_id = $3`,
			`UPDATE clicks SET workspace_id = $3 WHERE link_id = $1 AND workspace_id = $2`, []any{l.ID, other.ID, ws.ID}, "clicks: raw clicks of link " + l.ID},
		{"key successor gone", `UPDATE keys SET replaced_by = 'key_gone' WHERE id = $1`, `UPDATE keys SET replaced_by = NULL WHERE id = $1`,
			[]any{k.ID}, "key successors: key " + k.ID},
		{"key creator gone", `UPDATE keys SET creator_type = 'user', creator_id = 'usr_gone' WHERE id = $1`,
			`UPDATE keys SET creator_type = '', creator_id = '' WHERE id = $1`, []any{k.ID}, "creators: key " + k.ID + ": made by user usr_gone"},
		{"alias held for no workspace", `INSERT INTO link_alias_holds (domain, alias, workspace_id, until) VALUES ('', 'held', 'ws_gone', now())`,
			`DELETE FROM link_alias_holds WHERE alias = 'held'`, nil, "alias holds: alias held held for workspace ws_gone"},
		{"audit of no workspace", `UPDATE audit_entries SET workspace_ids = workspace_ids || '{ws_gone}'`,
			`UPDATE audit_entries SET workspace_ids = array_remove(workspace_ids, 'ws_gone')`, nil, "audit: audit entry"},
		{"e-mail key not normal", `UPDATE users SET email_key = 'Admin@example.com' WHERE id = $1`, `UPDATE users SET email_key = 'admin@example.com' WHERE id = $1`,
			[]any{admin.ID}, "user e-mails: user " + admin.ID},
		{"inviter gone", `INSERT INTO invitations (id, seq, workspace_id, email, role, token_hash, invited_by, created_at, expires_at)
				VALUES ('inv_c', -3, $1, 'c@example.com', 'read', '\x03', 'usr_gone', now(), now())`,
			`DELETE FROM invitations WHERE seq < 0 AND workspace_id = $1`, []any{ws.ID}, "invitation users: invitation inv_c: inviting user usr_gone does not exist"},
		{"no owner", `UPDATE members SET role = 'read' WHERE workspace_id = $1`, `UPDATE members SET role = 'owner' WHERE workspace_id = $1`,
			[]any{ws.ID}, "owners: workspace " + ws.ID + " has no owner"},
		{"member and former member", `INSERT INTO former_members (workspace_id, user_id, removed_at) SELECT workspace_id, user_id, now() FROM members WHERE workspace_id = $1`,
			`DELETE FROM former_members WHERE workspace_id = $1`, []any{ws.ID}, "former members: user"},
		{"two pending invitations", `INSERT INTO invitations (id, seq, workspace_id, email, role, token_hash, invited_by, created_at, expires_at)
				VALUES ('inv_a', -1, $1, 'New@example.com', 'read', '\x01', '', now(), now() + interval '1 day'),
					('inv_b', -2, $1, 'new@example.com', 'read', '\x02', '', now(), now() + interval '1 day')`,
			`DELETE FROM invitations WHERE seq < 0 AND workspace_id = $1`, []any{ws.ID}, "invitations: workspace " + ws.ID + ": 2 pending invitations of new@example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := conn.Exec(ctx, tc.break_, tc.args...); err != nil {
				t.Fatalf("break: %v", err)
			}
			r, err := postgres.Check(ctx, url)
			if _, ferr := conn.Exec(ctx, tc.fix, tc.args...); ferr != nil {
				t.Fatalf("fix: %v", ferr)
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.OK() || !slices.ContainsFunc(r.Problems, func(l string) bool { return strings.Contains(l, tc.want) }) {
				t.Fatalf("problems %q, want one with %q", r.Problems, tc.want)
			}
		})
	}
	if r, err := postgres.Check(ctx, url); err != nil || !r.OK() {
		t.Fatalf("Check after the fixes = %+v, %v", r, err)
	}
}
