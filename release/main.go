// Command release builds linkbolt's release: a static binary for each
// platform linkbolt is published for, stamped with its version and commit,
// packed in an archive with the README, the manual's pages (docs/*.md) and
// the example configuration, a SHA256SUMS file over the archives, and what
// the Dockerfile copies into the image.
//
// From the repository's root:
//
//	go run ./release [--version v1.2.3] [--out dist] [--targets linux/amd64,...]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// A target is a platform a release has a binary for.
type target struct{ os, arch string }

func (t target) String() string { return t.os + "/" + t.arch }

// exe is the binary's file name on the target.
func (t target) exe() string {
	if t.os == "windows" {
		return "linkbolt.exe"
	}
	return "linkbolt"
}

// dir is the directory of dist that holds the target's binary, the one the
// Dockerfile copies.
func (t target) dir() string { return t.os + "_" + t.arch }

// archiveName is the name of the target's archive: a zip for Windows, a
// gzipped tar elsewhere. Its files sit in a directory of the same name
// without the extension.
func (t target) archiveName(version string) string {
	base := fmt.Sprintf("linkbolt_%s_%s_%s", version, t.os, t.arch)
	if t.os == "windows" {
		return base + ".zip"
	}
	return base + ".tar.gz"
}

// allTargets are the platforms of a release: Linux servers (amd64 and
// arm64, a Raspberry Pi's), Macs (Apple silicon and Intel) and Windows.
var allTargets = []target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "arm64"}, {"darwin", "amd64"},
	{"windows", "amd64"},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run builds the release the command line asks for and returns the exit
// code: 0 when every file was written, 1 when something failed, 2 for a
// mistake in the command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	version := fs.String("version", "", "the `VERSION` stamped into the binaries and named in the archives;\ndefault: git describe --tags --always --dirty, or \"dev\" outside a git checkout")
	out := fs.String("out", "dist", "the `DIR` the release is written to; emptied first when it holds an\nearlier release, refused when it holds anything else")
	targets := fs.String("targets", "", "comma-separated `OS/ARCH` list to build (default: all of "+targetList(allTargets)+")")
	caBundle := fs.String("ca-bundle", "", "the `FILE` of CA certificates the Docker image trusts; default: the\nhost's bundle (/etc/ssl/certs/ca-certificates.crt and the like)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "release: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	ts, err := parseTargets(*targets)
	if err != nil {
		fmt.Fprintln(stderr, "release:", err)
		return 2
	}
	r := &release{out: *out, targets: ts, caBundle: *caBundle, log: stderr}
	if err := r.prepare(ctx, *version); err != nil {
		fmt.Fprintln(stderr, "release:", err)
		return 1
	}
	if err := r.write(ctx); err != nil {
		fmt.Fprintln(stderr, "release:", err)
		return 1
	}
	fmt.Fprintf(stdout, "linkbolt %s (commit %s): %d archives and SHA256SUMS in %s\n",
		r.version, r.commit, len(r.targets), r.out)
	return 0
}

// A release is what one run of the command builds and where.
type release struct {
	root     string // the module's root directory, where go build runs
	out      string // the directory the release is written to
	version  string
	commit   string    // the git commit, "-dirty" when tracked files changed; empty outside git
	modTime  time.Time // the time archive entries carry: the commit's, so archives are reproducible
	targets  []target
	caBundle string
	log      io.Writer
}

// prepare finds the module's root and the version, commit and time to
// stamp, and readies the output directory.
func (r *release) prepare(ctx context.Context, version string) error {
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	r.root = root
	r.commit, r.modTime = gitCommit(ctx, root)
	if version == "" {
		version = gitDescribe(ctx, root)
	}
	if !validVersion.MatchString(version) {
		return fmt.Errorf("--version %q: use letters, digits and . _ + - only (it names files), like v1.2.3", version)
	}
	r.version = version
	if r.caBundle == "" {
		if r.caBundle = hostCABundle(); r.caBundle == "" {
			return errors.New("no CA certificate bundle found on this machine for the Docker image: pass --ca-bundle FILE")
		}
	}
	return prepareOut(r.out)
}

// write builds every target's binary, packs the archives, and writes
// SHA256SUMS and the Docker image's files.
func (r *release) write(ctx context.Context) error {
	if err := r.buildAll(ctx); err != nil {
		return err
	}
	var archives []string
	for _, t := range r.targets {
		name := t.archiveName(r.version)
		if err := r.pack(t, filepath.Join(r.out, name)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		archives = append(archives, name)
	}
	if err := writeSums(r.out, archives); err != nil {
		return err
	}
	return r.dockerFiles()
}

// validVersion is what a version may look like: it is part of file names.
var validVersion = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z._+-]*$`)

func parseTargets(s string) ([]target, error) {
	if s == "" {
		return allTargets, nil
	}
	var ts []target
	seen := map[target]bool{}
	for _, name := range strings.Split(s, ",") {
		t, ok := findTarget(strings.TrimSpace(name))
		if !ok {
			return nil, fmt.Errorf("--targets: %q is not one of %s", name, targetList(allTargets))
		}
		if !seen[t] {
			seen[t] = true
			ts = append(ts, t)
		}
	}
	return ts, nil
}

func findTarget(name string) (target, bool) {
	for _, t := range allTargets {
		if t.String() == name {
			return t, true
		}
	}
	return target{}, false
}

func targetList(ts []target) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}

// hostCABundle returns the path of the host's CA certificate bundle, the
// places Go's crypto/x509 reads on Linux, BSD and macOS, or "" when there
// is none.
func hostCABundle() string {
	if runtime.GOOS == "windows" {
		return ""
	}
	for _, p := range []string{
		"/etc/ssl/certs/ca-certificates.crt",                // Debian, Ubuntu, Arch, Gentoo
		"/etc/pki/tls/certs/ca-bundle.crt",                  // Fedora, RHEL
		"/etc/ssl/ca-bundle.pem",                            // openSUSE
		"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS, RHEL 7
		"/etc/ssl/cert.pem",                                 // Alpine, macOS, BSD
	} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return p
		}
	}
	return ""
}
