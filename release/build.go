package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// moduleRoot is the directory of linkbolt's go.mod, so the command works
// from any directory of the checkout.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside linkbolt's module: run the command from the repository")
	}
	return filepath.Dir(gomod), nil
}

// git runs git in dir and returns its output without the trailing newline.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// gitCommit returns the checked-out commit, with "-dirty" when tracked
// files differ from it, and the commit's time. Outside a git checkout (a
// source archive) the commit is empty and the time is now.
func gitCommit(ctx context.Context, dir string) (string, time.Time) {
	commit, err := git(ctx, dir, "rev-parse", "HEAD")
	if err != nil || commit == "" {
		return "", time.Now().UTC().Truncate(time.Second)
	}
	mod := time.Now().UTC().Truncate(time.Second)
	if s, err := git(ctx, dir, "log", "-1", "--format=%ct", "HEAD"); err == nil {
		if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
			mod = time.Unix(sec, 0).UTC()
		}
	}
	if status, err := git(ctx, dir, "status", "--porcelain", "--untracked-files=no"); err != nil || status != "" {
		commit += "-dirty"
	}
	return commit, mod
}

// gitDescribe is the default version: the nearest tag (with the commits
// since and the commit, "-dirty" for changed files), the short commit when
// there is no tag, or "dev" outside git.
func gitDescribe(ctx context.Context, dir string) string {
	v, err := git(ctx, dir, "describe", "--tags", "--always", "--dirty")
	if err != nil || v == "" {
		return "dev"
	}
	return v
}

// buildAll builds the targets' binaries into their directories of r.out,
// as many at once as GOMAXPROCS. It reports every target that failed with
// the compiler's output.
func (r *release) buildAll(ctx context.Context) error {
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	errs := make([]error, len(r.targets))
	var wg sync.WaitGroup
	var logMu sync.Mutex
	for i, t := range r.targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			logMu.Lock()
			fmt.Fprintf(r.log, "building %s\n", t)
			logMu.Unlock()
			errs[i] = r.build(ctx, t)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// versionPkg is the package whose version and commit the release stamps.
const versionPkg = "github.com/linkbolt/linkbolt/internal/version"

// build builds one static binary: no cgo, no file system paths of this
// machine (-trimpath), no symbol table or DWARF (-s -w), the version and
// commit stamped into internal/version (see versionPkg). The version control
// stamp of go build is off: the commit is stamped explicitly, and a
// checkout git refuses to read (another user's) fails no build.
func (r *release) build(ctx context.Context, t target) error {
	dir := filepath.Join(r.out, t.dir())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bin, err := filepath.Abs(filepath.Join(dir, t.exe()))
	if err != nil {
		return err
	}
	ldflags := "-s -w -X " + versionPkg + ".version=" + r.version
	if r.commit != "" {
		ldflags += " -X " + versionPkg + ".commit=" + r.commit
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", ldflags, "-o", bin, ".")
	cmd.Dir = r.root
	// The baseline instruction sets, so a binary runs on any machine of
	// its architecture whatever this machine's environment asks for.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.os, "GOARCH="+t.arch,
		"GOAMD64=v1", "GOARM64=v8.0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", t, err, strings.TrimSpace(out.String()))
	}
	return nil
}
