// Command linkbolt is a self-hosted link shortener in one executable: the
// JSON API, the public redirects and click analytics on one port, with
// everything kept in one bbolt file.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	_ "time/tzdata" // analytics time zones work on hosts without a zone database
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func main() {
	// Redirects allocate little but often; a larger heap goal trades a few
	// MB for less time in the collector. GOGC in the environment wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs a subcommand and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = runServe(ctx, args, stderr)
	case "version":
		fmt.Fprintln(stdout, "linkbolt", versionString())
		return 0
	case "backup":
		err = runBackup(ctx, args, stdout, stderr)
	case "check":
		err = runCheck(ctx, args, stdout, stderr)
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "linkbolt: unknown command %q\n\n", cmd)
		usage(stderr)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if errors.Is(err, errDamaged) {
		return 1 // the report says why
	}
	if err != nil {
		fmt.Fprintln(stderr, "linkbolt:", err)
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage:
  linkbolt [serve] [--config FILE]              start the server (the default)
  linkbolt version                              print the version
  linkbolt backup --out FILE [--config FILE]    write a consistent copy of the data file
  linkbolt check [--file FILE] [--config FILE]  check the data file (or a backup) for damage

Configuration: config.yaml in the working directory (or --config FILE) and
LINKBOLT_<SECTION>_<KEY> environment variables; see config.example.yaml.
`)
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func runServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "configuration file (YAML)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		return err
	}
	logger := newLogger(cfg, stderr)
	a, err := newApp(ctx, cfg, logger)
	if err != nil {
		return err
	}
	return a.run(ctx)
}

func newLogger(cfg *Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	if cfg.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
