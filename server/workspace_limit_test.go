package server

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestWorkspacesPerUser: a user owns at most workspaces.max_per_user
// workspaces when creating one (each has its own rate budget), even with
// requests at once; past it, 409. The instance admin is not bound.
func TestWorkspacesPerUser(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxWorkspacesPerUser = 3 })
	other := e.login("other@example.com", "other password 123") // owns one workspace

	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, newRequest("POST", "/v1/workspaces", other, `{"name":"Mine"}`))
			statuses[i] = rec.Code
		})
	}
	wg.Wait()
	created := 0
	for _, s := range statuses {
		switch s {
		case 201:
			created++
		case 409:
		default:
			t.Fatalf("statuses %v", statuses)
		}
	}
	if created != 2 {
		t.Fatalf("%d workspaces created at once past one owned, want 2 (max 3): %v", created, statuses)
	}
	r := e.do("POST", "/v1/workspaces", other, `{"name":"One more"}`, 409)
	wantProblem(t, r, 409, "conflict")
	if !strings.Contains(r.str("detail"), "workspaces.max_per_user") {
		t.Fatalf("detail: %s", r.raw)
	}
	if n := len(e.do("GET", "/v1/workspaces", other, "", 200).path("data").([]any)); n != 3 {
		t.Fatalf("the user has %d workspaces, want 3", n)
	}

	for range 4 {
		e.do("POST", "/v1/workspaces", e.adminToken, `{"name":"Admin's"}`, 201)
	}
}
