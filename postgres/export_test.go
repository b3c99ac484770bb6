package postgres

import "github.com/linkbolt/linkbolt/link"

// EachTop calls fn with each entry of tops, a tops column of the click
// aggregates, in its order.
func EachTop(tops []byte, fn func(dim int, value string, clicks, bots, inherited int64)) error {
	return eachTop(tops, func(dim int16, e topEntry) { fn(int(dim), e.value, e.clicks, e.bots, e.inherited) })
}

// DrawCodes makes the generated short codes those of codes, in order,
// until restore is called. Only tests that run alone may call it.
func DrawCodes(codes ...string) (restore func()) {
	next := 0
	newCode = func() string { next++; return codes[next-1] }
	return func() { newCode = link.NewCode }
}

// Listening reports whether the store hears the notifications of cache
// changes.
func Listening(s *link.Store) bool {
	db := s.Data.(*DB)
	return db.links.listening.Load() && db.domains.listening.Load()
}

// UnusedWorkspaceID is a workspace ID of the store's form that no
// workspace has.
func UnusedWorkspaceID(s *link.Store) string {
	return s.Data.(*DB).ids.FormatID(link.PrefixWorkspace, 1<<40)
}
