package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/linkbolt/linkbolt/internal/config"
)

// testConfig returns a configuration for a server on a free loopback port
// with its data under a temporary directory (internal/apptest.Config, which
// this package's own tests cannot import).
func testConfig(t testing.TB, yaml string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	base := fmt.Sprintf("server:\n  listen: 127.0.0.1:0\nstorage:\n  path: %s\nauth:\n  password_cost: 4\n", filepath.Join(dir, "data", "linkbolt.db"))
	if err := os.WriteFile(path, []byte(base+yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

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
