package postgres_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

// TestMigrateFromEveryVersion: a database left at any older schema, with
// data in it, is brought to the newest by Open, keeps its data, and
// serves accounts.
func TestMigrateFromEveryVersion(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) != postgres.SchemaVersion() {
		t.Fatalf("migration files %v, %v; want %d", files, err, postgres.SchemaVersion())
	}
	sort.Strings(files)
	for v := 1; v < len(files); v++ {
		t.Run(filepath.Base(files[v-1]), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			u := pgtest.URL(t)
			conn, err := pgx.Connect(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, `CREATE TABLE linkbolt_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
				t.Fatal(err)
			}
			for i, f := range files[:v] {
				sql, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := conn.Exec(ctx, string(sql)); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if _, err := conn.Exec(ctx, `INSERT INTO linkbolt_schema (version) VALUES ($1)`, i+1); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := conn.Exec(ctx, `INSERT INTO settings (name, value) VALUES ('jwt_secret', 'kept')`); err != nil {
				t.Fatal(err)
			}
			if v >= 2 {
				if _, err := conn.Exec(ctx, `INSERT INTO certs (name, data) VALUES ('example.com', 'cert')`); err != nil {
					t.Fatal(err)
				}
			}

			if v == 3 {
				// A key of the minimal table (0003): 0004 gives it a hash.
				if _, err := conn.Exec(ctx, `INSERT INTO workspaces (id, seq, name, plan, created_at, updated_at) VALUES ('ws_old', 1000, 'Old', 'free', now(), now());
					INSERT INTO keys (id, seq, workspace_id, created_at) VALUES ('key_old', 1000, 'ws_old', now())`); err != nil {
					t.Fatal(err)
				}
			}

			s, err := postgres.Open(ctx, postgres.Options{URL: u})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Data.Close()
			var got int
			if err := conn.QueryRow(ctx, `SELECT max(version) FROM linkbolt_schema`).Scan(&got); err != nil || got != postgres.SchemaVersion() {
				t.Fatalf("schema version %d, %v; want %d", got, err, postgres.SchemaVersion())
			}
			if secret, err := s.Data.JWTSecret(func() []byte { return []byte("new") }); err != nil || string(secret) != "kept" {
				t.Fatalf("JWT secret %q, %v; want the one kept", secret, err)
			}
			if v >= 2 {
				if c, err := s.Certs.Get(ctx, "example.com"); err != nil || string(c) != "cert" {
					t.Fatalf("certificate %q, %v", c, err)
				}
			}
			if v == 3 {
				var n int
				if err := conn.QueryRow(ctx, `SELECT count(*) FROM keys WHERE id = 'key_old' AND length(hash) = 32`).Scan(&n); err != nil || n != 1 {
					t.Fatalf("the old key after the migration: %d rows with a hash, %v", n, err)
				}
			}
			u1 := &link.User{Email: "admin@example.com", PasswordHash: []byte("h")}
			if err := s.Users.Bootstrap(ctx, u1, &link.Workspace{Name: "Default", Plan: link.PlanFree}); err != nil {
				t.Fatalf("bootstrap after the migration: %v", err)
			}
		})
	}
}

// TestMigrateClickSums: the click aggregates of schema 9, a row per
// scope, period and dimension value, become a row per scope and period
// (0010) that answers analytics as before, bounded top lists and their
// inherited estimates included, and passes Check. The rows of schema 9
// are made from what this linkbolt recorded, taken apart.
func TestMigrateClickSums(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.URL(t)
	s, err := postgres.Open(ctx, postgres.Options{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	admin := &link.User{Email: "admin@example.com", PasswordHash: []byte("h")}
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := s.Users.Bootstrap(ctx, admin, ws); err != nil {
		t.Fatal(err)
	}
	camp := &link.Campaign{WorkspaceID: ws.ID, Name: "Spring", Status: link.CampaignActive}
	if err := s.Campaigns.CreateCampaign(ctx, camp); err != nil {
		t.Fatal(err)
	}
	a, b := newLink(ws.ID, "a"), newLink(ws.ID, "b")
	a.CampaignID = camp.ID
	for _, l := range []*link.Link{a, b} {
		if err := s.Links.CreateLink(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	var clicks []link.Click
	for i := range 400 { // more referrers than a top list keeps
		l := a
		if i%3 == 0 {
			l = b
		}
		c := link.Click{LinkID: l.ID, WorkspaceID: ws.ID, CampaignID: l.CampaignID, Time: t0.Add(time.Duration(i) * 7 * time.Minute),
			Visitor: uint64(i % 50), Referrer: fmt.Sprintf("r%d.example", i%300), Country: []string{"DE", "FR", "US"}[i%3],
			Device: "desktop", Browser: "Firefox", OS: "Linux", Bot: i%10 == 0}
		clicks = append(clicks, c)
	}
	for i := 0; i < len(clicks); i += 100 {
		if _, err := s.Clicks.RecordClicks(ctx, clicks[i:i+100]); err != nil {
			t.Fatal(err)
		}
	}
	filters := []link.StatsFilter{
		{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: t0.Add(-time.Hour), End: t0.Add(72 * time.Hour), TopLimit: -1},
		{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: t0.Add(5 * time.Hour), End: t0.Add(30 * time.Hour), TopLimit: -1, ExcludeBots: true},
		{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: a.ID, Start: t0, End: t0.Add(72 * time.Hour), TopLimit: -1},
		{WorkspaceID: ws.ID, Scope: link.ScopeCampaign, ID: camp.ID, Start: t0, End: t0.Add(72 * time.Hour), TopLimit: -1, ExcludeBots: true},
	}
	stats := func(s *link.Store) []string {
		var out []string
		for _, f := range filters {
			st, err := s.Clicks.Stats(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%+v", *st))
		}
		return out
	}
	before := stats(s)
	if !strings.Contains(before[0], "r299.example") {
		t.Fatalf("the workspace's referrers lack the last: %s", before[0])
	}
	s.Data.Close()

	// Schema 9: the old tables, filled from the new ones' rows, and none
	// of the later schemas' (they are made again after 0010).
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	old, err := os.ReadFile("migrations/0007_clicks.sql")
	if err != nil {
		t.Fatal(err)
	}
	ddl := string(old)
	ddl = ddl[strings.Index(ddl, "CREATE TABLE click_hours"):strings.Index(ddl, "CREATE TABLE click_visitors")]
	if _, err := conn.Exec(ctx, ddl); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, tt := range []struct{ sums, old, period, extra string }{
		{"click_hour_sums", "click_hours", "hour", "0, 0"}, {"click_day_sums", "click_days", "day", "s.visitors, s.bot_visitors"},
	} {
		q, err := conn.Query(ctx, `SELECT s.scope, s.`+tt.period+`, s.clicks, s.bots, `+tt.extra+`, s.tops, coalesce(s.workspace_id, l.workspace_id, c.workspace_id), s.campaign_id, s.link_id
			FROM `+tt.sums+` s LEFT JOIN links l ON l.id = s.link_id LEFT JOIN campaigns c ON c.id = s.campaign_id`)
		if err != nil {
			t.Fatal(err)
		}
		type row []any
		var batch []row
		var scope, wsID string
		var campaign, lnk *string
		var period int32
		var n, bots, visitors, botVisitors int64
		var tops []byte
		if _, err := pgx.ForEachRow(q, []any{&scope, &period, &n, &bots, &visitors, &botVisitors, &tops, &wsID, &campaign, &lnk}, func() error {
			batch = append(batch, row{scope, period, 0, "", n, bots, 0, visitors, botVisitors, wsID, campaign, lnk})
			return postgres.EachTop(tops, func(dim int, value string, n, bots, inherited int64) {
				batch = append(batch, row{scope, period, dim, value, n, bots, inherited, 0, 0, wsID, campaign, lnk})
			})
		}); err != nil {
			t.Fatal(err)
		}
		for _, r := range batch {
			if tt.old == "click_hours" {
				r = append(r[:7:7], r[9:]...)
			}
			cols := "scope, hour, dim, value, clicks, bots, inherited, workspace_id, campaign_id, link_id"
			args := "$1, $2, $3, $4, $5, $6, $7, $8, $9, $10"
			if tt.old == "click_days" {
				cols = "scope, day, dim, value, clicks, bots, inherited, visitors, bot_visitors, workspace_id, campaign_id, link_id"
				args += ", $11, $12"
			}
			if _, err := conn.Exec(ctx, `INSERT INTO `+tt.old+` (`+cols+`) VALUES (`+args+`)`, r...); err != nil {
				t.Fatal(err)
			}
			rows++
		}
	}
	if rows < 600 {
		t.Fatalf("%d rows of schema 9 made, too few to mean anything", rows)
	}
	// Back to schema 9: the tables of 0010 and of every later migration go.
	if _, err := conn.Exec(ctx, `DROP TABLE click_hour_sums; DROP TABLE click_day_sums; DROP TABLE click_reservations; DROP TABLE rate_budgets;
		DROP TABLE leases; DROP TABLE webhook_claims; DROP TABLE click_spools; DROP TABLE utm_templates; DROP SEQUENCE ids_utm; ALTER TABLE keys DROP COLUMN resources;
		ALTER TABLE qr_codes DROP COLUMN logo, DROP COLUMN logo_digest; DROP TABLE abuse_reports; DROP SEQUENCE ids_rpt;
		ALTER TABLE domains DROP COLUMN aasa, DROP COLUMN asset_links; ALTER TABLE links DROP COLUMN external_id, DROP COLUMN ios_url, DROP COLUMN android_url, DROP COLUMN crawlable;
		DROP TABLE link_checks; ALTER TABLE workspaces DROP COLUMN destination_checks, DROP COLUMN link_checks_enrolled;
		ALTER TABLE links DROP COLUMN interstitial; ALTER TABLE workspaces DROP COLUMN pixel_meta, DROP COLUMN pixel_google, DROP COLUMN pixel_linkedin;
		ALTER TABLE links DROP COLUMN note; DROP TABLE tags;
		DROP TABLE orphan_visit_counts; DROP TABLE orphan_visits;
		DELETE FROM linkbolt_schema WHERE version >= 10`); err != nil {
		t.Fatal(err)
	}

	s, err = postgres.Open(ctx, postgres.Options{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Data.Close()
	if after := stats(s); !slices.Equal(after, before) {
		t.Fatalf("analytics after the migration:\n%s\nbefore:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
	if r, err := postgres.Check(ctx, u); err != nil || !r.OK() {
		t.Fatalf("Check after the migration = %+v, %v", r, err)
	}
}
