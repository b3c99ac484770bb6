package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/linkbolt/linkbolt/internal/config"
)

// Serve reads the configuration at configPath (see config.Load), logs to
// stderr and serves until ctx ends, then stops gracefully.
func Serve(ctx context.Context, configPath string, stderr io.Writer) error {
	cfg, err := config.Load(configPath)
	if err != nil {
		return err
	}
	logger := NewLogger(cfg, stderr)
	applyMemoryLimit(cfg, logger)
	a, err := New(ctx, cfg, logger)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

// applyMemoryLimit sets the runtime's soft memory limit to
// server.memory_limit unless GOMEMLIMIT is set (the runtime read it) or
// the limit is 0. With GOGC at 200 (see cli.Main) a small heap grows
// freely, and a large one is held near the limit by collecting more often.
func applyMemoryLimit(cfg *config.Config, logger *slog.Logger) {
	if os.Getenv("GOMEMLIMIT") != "" || cfg.Server.MemoryLimit <= 0 {
		return
	}
	debug.SetMemoryLimit(cfg.Server.MemoryLimit)
	logger.Debug("memory limit set", "bytes", cfg.Server.MemoryLimit)
}

// NewLogger returns the logger log.level and log.format ask for, writing
// to w. Where instances may share the data (on PostgreSQL) or an id is
// configured, each line names the instance (server.instance_id).
func NewLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel()}
	var l *slog.Logger
	if cfg.Log.Format == "json" {
		l = slog.New(slog.NewJSONHandler(w, opts))
	} else {
		l = slog.New(slog.NewTextHandler(w, opts))
	}
	if cfg.NamesInstance() {
		l = l.With("instance", cfg.Instance())
	}
	return l
}
