package app_test

import (
	"net/http"
	"testing"

	"github.com/linkbolt/linkbolt/internal/pgtest"
)

// TestLimitedLinkDatabaseDown stops PostgreSQL under a running linkbolt:
// a link with max_clicks, clicked before and so held in memory, is not
// redirected without its click reserved in the database: it is answered
// 503 store_unavailable with Retry-After (a link without a limit keeps
// redirecting from memory). When PostgreSQL is back exactly the clicks
// left go through.
func TestLimitedLinkDatabaseDown(t *testing.T) {
	c := pgtest.NewCluster(t)
	u := c.URL(t)
	base, stop := startPG(t, u, &logBuffer{})
	_, key, _, alias := setupLink(t, base)
	limited := must(t, base, "POST", "/v1/links", key, `{"destination_url":"https://example.com/limited","max_clicks":3}`, 201)["alias"].(string)
	must(t, base, "GET", "/"+alias, "", "", http.StatusFound)
	must(t, base, "GET", "/"+limited, "", "", http.StatusFound)

	c.Stop(t)
	waitFor(t, base, "/healthz", "", http.StatusServiceUnavailable)
	for range 5 {
		a := call(t, base, "GET", "/"+limited, "", "")
		wantUnavailable(t, "a limited link while the database is down", a, "the database cannot be reached")
		if loc := a.header.Get("Location"); loc != "" {
			t.Fatalf("a limited link while the database is down goes to %s", loc)
		}
	}
	must(t, base, "GET", "/"+alias, "", "", http.StatusFound)

	c.Start(t)
	waitFor(t, base, "/healthz", "", http.StatusOK)
	must(t, base, "GET", "/"+limited, "", "", http.StatusFound)
	must(t, base, "GET", "/"+limited, "", "", http.StatusFound)
	must(t, base, "GET", "/"+limited, "", "", http.StatusGone)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
