package linkcheck

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/webhook"
)

// destination serves the answers the checks meet, by path.
func destination(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) })
	mux.HandleFunc("/nohead", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.WriteHeader(405)
			return
		}
		w.Write([]byte(strings.Repeat("x", 64<<10)))
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusMovedPermanently) })
	mux.HandleFunc("/moved-gone", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/gone", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	// Each answer comes in time, but they never end: a redirect after
	// nearly half the timeout, to itself.
	mux.HandleFunc("/slow-loop", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(90 * time.Millisecond):
			http.Redirect(w, r, "/slow-loop", http.StatusFound)
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestCheck(t *testing.T) {
	srv := destination(t)
	c := &Checker{Client: webhook.NewClient(true), Config: Config{Timeout: 200 * time.Millisecond}}
	for _, tt := range []struct {
		path   string
		status int
		err    string
	}{
		{"/ok", 200, ""},
		{"/gone", 404, "answered 404 Not Found"},
		{"/fail", 500, "answered 500 Internal Server Error"},
		{"/login", 401, ""},
		{"/nohead", 200, ""},
		{"/moved", 200, ""},
		{"/moved-gone", 404, "answered 404 Not Found"},
		{"/loop", 302, "more than 10 redirects"},
		{"/slow", 0, "no answer within 200ms"},
		{"/slow-loop", 0, "no final answer within 600ms, redirects included"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			r := c.Check(t.Context(), srv.URL+tt.path)
			if r.HTTPStatus != tt.status || r.Error != tt.err || r.Skipped {
				t.Fatalf("Check = %+v, want status %d, error %q", r, tt.status, tt.err)
			}
		})
	}
}

func TestCheckRefused(t *testing.T) {
	srv := destination(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	// Loopback is refused by the guard: not checked, never broken.
	guarded := &Checker{Client: webhook.NewClient(false)}
	r := guarded.Check(context.Background(), srv.URL+"/gone")
	if !r.Skipped || !strings.Contains(r.Error, "not checked") {
		t.Fatalf("guarded Check = %+v, want skipped", r)
	}
	open := &Checker{Client: webhook.NewClient(true)}
	r = open.Check(context.Background(), closedURL)
	if r.Skipped || r.HTTPStatus != 0 || !strings.Contains(r.Error, "cannot connect") {
		t.Fatalf("Check of a closed port = %+v, want a connection error", r)
	}
	r = open.Check(context.Background(), "http://no-such-host.invalid/")
	if r.Skipped || !strings.Contains(r.Error, "does not resolve") {
		t.Fatalf("Check of an unknown name = %+v", r)
	}
}

func TestNext(t *testing.T) {
	fail := Result{HTTPStatus: 500, Error: "answered 500"}
	c := Next(&link.LinkCheck{Status: link.CheckOK}, fail)
	if c.Status != link.CheckOK || c.Failures != 1 {
		t.Fatalf("one failure: %+v", c)
	}
	c = Next(c, fail)
	if c.Status != link.CheckBroken || c.Failures != 2 {
		t.Fatalf("two failures: %+v", c)
	}
	c = Next(c, Result{HTTPStatus: 200})
	if c.Status != link.CheckOK || c.Failures != 0 || c.Error != "" {
		t.Fatalf("a success: %+v", c)
	}
	c = Next(c, Result{Skipped: true, Error: "not checked"})
	if c.Status != link.CheckUnchecked || c.Failures != 0 {
		t.Fatalf("skipped: %+v", c)
	}
}
