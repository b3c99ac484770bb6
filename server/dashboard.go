package server

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"
)

// serveDashboard serves the web dashboard: its assets, and its page for
// /app and every other path under /app/ (the app's own routes, such as /app/links
// and the invitation page /app/invite). The dashboard is a client of the
// /v1 API; nothing here reads a credential.
func (s *Server) serveDashboard(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	s.dashboard.ServeHTTP(w, r)
}

// acceptsHTML reports whether a request comes from a browser navigating:
// its Accept header names text/html (curl and API clients send */* or
// application/json).
func acceptsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}
