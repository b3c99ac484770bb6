package app

import (
	"strings"
	"sync"
)

// syncWriter collects log lines written from several goroutines.
type syncWriter struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}
