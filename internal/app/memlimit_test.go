package app

import (
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/internal/config"
)

// TestMemoryLimit: server.memory_limit defaults to 256 MiB, comes from the
// environment too, refuses a limit below 64 MiB naming the key, and sets
// the runtime's soft memory limit unless it is 0 or GOMEMLIMIT is set.
func TestMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	t.Chdir(t.TempDir())

	cfg, err := config.Load("")
	if err != nil || cfg.Server.MemoryLimit != 256<<20 {
		t.Fatalf("default: %d, %v", cfg.Server.MemoryLimit, err)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	applyMemoryLimit(cfg, quiet)
	if got := debug.SetMemoryLimit(-1); got != 256<<20 {
		t.Fatalf("runtime limit %d after the default, want %d", got, 256<<20)
	}

	t.Setenv("LINKBOLT_SERVER_MEMORY_LIMIT", "0")
	if cfg, err = config.Load(""); err != nil || cfg.Server.MemoryLimit != 0 {
		t.Fatalf("0 from the environment: %d, %v", cfg.Server.MemoryLimit, err)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	applyMemoryLimit(cfg, quiet)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("0 set the runtime limit to %d", got)
	}

	t.Setenv("LINKBOLT_SERVER_MEMORY_LIMIT", "134217728")
	t.Setenv("GOMEMLIMIT", "1GiB")
	if cfg, err = config.Load(""); err != nil || cfg.Server.MemoryLimit != 128<<20 {
		t.Fatalf("128 MiB from the environment: %d, %v", cfg.Server.MemoryLimit, err)
	}
	applyMemoryLimit(cfg, quiet)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("with GOMEMLIMIT set the limit became %d", got)
	}

	p := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(p, []byte("server:\n  memory_limit: 1000000\n"), 0o600)
	t.Setenv("LINKBOLT_SERVER_MEMORY_LIMIT", "")
	if _, err := config.Load(p); err == nil || !strings.Contains(err.Error(), "server.memory_limit") {
		t.Fatalf("a limit of 1 MB: %v, want an error naming server.memory_limit", err)
	}
}
