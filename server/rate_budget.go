package server

import (
	"context"

	"github.com/linkbolt/linkbolt/auth"
)

// allow takes one request from key's budget of perMinute requests: from
// the store's budget, shared by every process on it, when the store has
// one (PostgreSQL), else from this process's memory. A store that fails
// never fails the request: it is rated in memory, and the fault logged
// once per episode.
func (s *Server) allow(ctx context.Context, key string, perMinute int) auth.Decision {
	if s.budgets == nil {
		return s.limiters.Allow(key, perMinute)
	}
	d, err := s.budgets.Allow(ctx, key, perMinute)
	if err != nil {
		s.budgetFaults.Fail("the shared rate budget cannot be read: requests are rated in this process's memory", err)
	} else if perMinute > 0 {
		s.budgetFaults.OK("the shared rate budget works again")
	}
	return d
}
