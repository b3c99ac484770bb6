package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/cli"
)

// testVersion is the version the test's release is stamped with.
const testVersion = "v9.8.7-test.1"

// TestRelease runs the release command once for every target into a
// temporary directory and checks what a user downloads and what the
// Dockerfile and the systemd unit use. With a warm build cache it links
// five binaries; a cold cache compiles the standard library and every
// dependency for each platform once.
func TestRelease(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--version", testVersion, "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("release exited %d: %s%s", code, stdout.String(), stderr.String())
	}
	wantCommit := expectedCommit(t, root)
	if got, want := stdout.String(), fmt.Sprintf("linkbolt %s (commit %s): 5 archives and SHA256SUMS in %s\n", testVersion, wantCommit, out); got != want {
		t.Fatalf("stdout %q, want %q", got, want)
	}

	sums := checkSums(t, out)
	var names []string
	for _, tg := range allTargets {
		names = append(names, tg.archiveName(testVersion))
	}
	if got, want := slices.Sorted(slices.Values(sums)), slices.Sorted(slices.Values(names)); !slices.Equal(got, want) {
		t.Fatalf("SHA256SUMS names %v, want %v", got, want)
	}

	unpacked := t.TempDir()
	bins := map[target]string{}
	for _, tg := range allTargets {
		t.Run("archive "+tg.String(), func(t *testing.T) {
			bins[tg] = checkArchive(t, root, out, unpacked, tg)
			checkBinary(t, root, bins[tg], tg)
		})
	}
	if t.Failed() {
		return
	}

	host := target{runtime.GOOS, runtime.GOARCH}
	bin, ok := bins[host]
	if !ok {
		t.Fatalf("this machine (%s) is not a release target: the test runs the binary of the machine it runs on", host)
	}
	t.Run("version", func(t *testing.T) {
		got, err := exec.Command(bin, "version").Output()
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("linkbolt %s\ncommit   %s\ngo       %s\nplatform %s\ngeoip    %s\n", testVersion, wantCommit, runtime.Version(), host, cli.GeoIPVersion())
		if string(got) != want {
			t.Fatalf("linkbolt version printed\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("Dockerfile", func(t *testing.T) { checkDockerfile(t, root, out, bin) })
	t.Run("systemd unit", func(t *testing.T) { checkUnitServes(t, root, bin) })
}

// expectedCommit is the commit the release should stamp: git's HEAD, with
// "-dirty" when tracked files changed, or "unknown" outside a checkout
// (the binary's own fallback).
func expectedCommit(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "HEAD")
	cmd.Dir = root
	head, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(head))
	if !regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`).MatchString(commit) {
		t.Fatalf("git rev-parse HEAD: %q", commit)
	}
	cmd = exec.Command("git", "diff", "--quiet", "HEAD", "--")
	cmd.Dir = root
	if err := cmd.Run(); err != nil {
		commit += "-dirty"
	}
	return commit
}

// checkSums checks every line of SHA256SUMS against the file it names and
// returns the names. Where sha256sum is installed it checks the file too.
func checkSums(t *testing.T, out string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, sumsFile))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^([0-9a-f]{64})  ([^/\s]+)$`)
	var names []string
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("SHA256SUMS line %q is not <sha256>  <name>", l)
		}
		f, err := os.ReadFile(filepath.Join(out, m[2]))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(f); hex.EncodeToString(sum[:]) != m[1] {
			t.Fatalf("SHA256SUMS: %s does not match its digest", m[2])
		}
		names = append(names, m[2])
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", "-c", sumsFile)
		cmd.Dir = out
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sha256sum -c: %v\n%s", err, b)
		}
	}
	return names
}

// checkArchive unpacks tg's archive into dir and checks it holds exactly
// the files a user expects, in one directory named as the archive, the
// binary executable, the manual's pages under docs/ (and nothing else of
// docs/); it returns the unpacked binary's path.
func checkArchive(t *testing.T, root, out, dir string, tg target) string {
	t.Helper()
	name := tg.archiveName(testVersion)
	base := strings.TrimSuffix(strings.TrimSuffix(name, ".zip"), ".tar.gz")
	files := unpack(t, filepath.Join(out, name), dir)
	want := []string{base + "/README.md", base + "/config.example.yaml", base + "/" + tg.exe()}
	if tg.os == "linux" {
		want = append(want, base+"/linkbolt.service", base+"/linkbolt@.service", base+"/nginx-linkbolt.conf")
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pages, filepath.Join(root, "docs", "README.md")) {
		t.Fatalf("docs/ holds %v: no index, docs/README.md", pages)
	}
	for _, p := range pages {
		want = append(want, base+"/docs/"+filepath.Base(p))
	}
	if got := slices.Sorted(maps(files)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Fatalf("%s holds %v, want %v", name, got, want)
	}
	if got, want := files[base+"/"+tg.exe()], os.FileMode(0o755); got != want {
		t.Fatalf("%s: the binary's mode is %v, want %v", name, got, want)
	}
	for file, src := range map[string]string{
		"README.md":           filepath.Join(root, "README.md"),
		"config.example.yaml": filepath.Join(root, "config.example.yaml"),
		tg.exe():              filepath.Join(out, tg.dir(), tg.exe()),
	} {
		sameFile(t, filepath.Join(dir, base, file), src)
	}
	for _, p := range pages {
		sameFile(t, filepath.Join(dir, base, "docs", filepath.Base(p)), p)
	}
	return filepath.Join(dir, base, tg.exe())
}

func maps(m map[string]os.FileMode) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(da, db) {
		t.Fatalf("%s differs from %s", a, b)
	}
}

// unpack extracts a .tar.gz or .zip into dir and returns its regular
// files' names and modes.
func unpack(t *testing.T, archive, dir string) map[string]os.FileMode {
	t.Helper()
	files := map[string]os.FileMode{}
	write := func(name string, mode os.FileMode, r io.Reader) {
		if !filepath.IsLocal(name) {
			t.Fatalf("%s: entry %q leaves the directory", archive, name)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, mode); err != nil {
			t.Fatal(err)
		}
		files[name] = mode
	}
	if strings.HasSuffix(archive, ".zip") {
		zr, err := zip.OpenReader(archive)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			write(f.Name, f.Mode().Perm(), rc)
			rc.Close()
		}
		return files
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg:
			write(h.Name, os.FileMode(h.Mode).Perm(), tr)
		default:
			t.Fatalf("%s: entry %q of type %c", archive, h.Name, h.Typeflag)
		}
	}
	return files
}

// checkBinary checks bin is an executable for tg: a static ELF for Linux
// (no interpreter, no shared library), Mach-O for macOS, PE for Windows,
// for tg's processor, with no path of this checkout in it (-trimpath).
func checkBinary(t *testing.T, root, bin string, tg target) {
	t.Helper()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(root)) {
		t.Errorf("%s holds the build's path %s: built without -trimpath?", tg, root)
	}
	switch tg.os {
	case "linux":
		f, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: not ELF: %v", tg, err)
		}
		if got, want := f.Machine, map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[tg.arch]; got != want {
			t.Errorf("%s: ELF machine %v, want %v", tg, got, want)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("%s: has a %v program header: dynamically linked", tg, p.Type)
			}
		}
		if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
			t.Errorf("%s: needs shared libraries %v (%v)", tg, libs, err)
		}
		if f.Section(".symtab") != nil {
			t.Errorf("%s: has a symbol table: built without -s?", tg)
		}
	case "darwin":
		f, err := macho.NewFile(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: not Mach-O: %v", tg, err)
		}
		if got, want := f.Cpu, map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[tg.arch]; got != want {
			t.Errorf("%s: Mach-O CPU %v, want %v", tg, got, want)
		}
		if f.Type != macho.TypeExec {
			t.Errorf("%s: Mach-O type %v, want an executable", tg, f.Type)
		}
	case "windows":
		f, err := pe.NewFile(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: not PE: %v", tg, err)
		}
		if got, want := f.Machine, uint16(pe.IMAGE_FILE_MACHINE_AMD64); got != want {
			t.Errorf("%s: PE machine %#x, want %#x", tg, got, want)
		}
		if f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 {
			t.Errorf("%s: PE is not an executable image", tg)
		}
	default:
		t.Fatalf("no check for %s", tg)
	}
	if !bytes.Contains(data, []byte(testVersion)) {
		t.Errorf("%s: the version %s is not stamped in", tg, testVersion)
	}
}

// A dockerfile is the instructions of the Dockerfile, each with its
// arguments, continuation lines joined.
type dockerfile [][]string

func parseDockerfile(t *testing.T, name string) dockerfile {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var df dockerfile
	var cur string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if cur == "" && (l == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		df = append(df, strings.Fields(cur+l))
		cur = ""
	}
	return df
}

// args returns the arguments of every instruction named op, flags
// (--chown=...) left out.
func (df dockerfile) args(op string) [][]string {
	var all [][]string
	for _, ins := range df {
		if strings.EqualFold(ins[0], op) {
			var args []string
			for _, a := range ins[1:] {
				if !strings.HasPrefix(a, "--") {
					args = append(args, a)
				}
			}
			all = append(all, args)
		}
	}
	return all
}

// checkDockerfile checks the image is built from scratch and the release's
// files, that .dockerignore lets them through, that it runs linkbolt as a
// user other than root with its data in the volume, and that the released
// binary serves with the image's environment.
func checkDockerfile(t *testing.T, root, out, bin string) {
	df := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	for _, from := range df.args("FROM") {
		if len(from) != 1 || from[0] != "scratch" {
			t.Errorf("FROM %v: the image must need no base image", from)
		}
	}
	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	copied := map[string]bool{}
	for _, arch := range []string{"amd64", "arm64"} {
		for _, c := range df.args("COPY") {
			if len(c) != 2 {
				t.Fatalf("COPY %v: want one source and the destination", c)
			}
			src := strings.ReplaceAll(c[0], "${TARGETARCH}", arch)
			rel, ok := strings.CutPrefix(src, "dist/")
			if !ok {
				t.Fatalf("COPY %s: the image is made of the release's files in dist/ only", src)
			}
			if !dockerIncluded(string(ignore), src) {
				t.Errorf(".dockerignore keeps %s out of the build context", src)
			}
			fi, err := os.Stat(filepath.Join(out, rel))
			if err != nil {
				t.Fatalf("COPY %s: the release did not write it: %v", src, err)
			}
			copied[c[1]] = true
			switch c[1] {
			case "/linkbolt":
				checkBinary(t, root, filepath.Join(out, rel), target{"linux", arch})
			case "/etc/ssl/certs/ca-certificates.crt":
				pem, err := os.ReadFile(filepath.Join(out, rel))
				if err != nil {
					t.Fatal(err)
				}
				if !x509.NewCertPool().AppendCertsFromPEM(pem) {
					t.Errorf("%s holds no certificate", src)
				}
			case "/data/":
				if !fi.IsDir() {
					t.Errorf("%s is not a directory", src)
				}
			}
		}
	}
	for _, dst := range []string{"/linkbolt", "/etc/ssl/certs/ca-certificates.crt", "/data/"} {
		if !copied[dst] {
			t.Errorf("the Dockerfile copies nothing to %s", dst)
		}
	}
	if got, want := df.args("ENTRYPOINT"), [][]string{{`["/linkbolt"]`}}; !slicesEqual(got, want) {
		t.Errorf("ENTRYPOINT %v, want %v", got, want)
	}
	if got := df.args("USER"); len(got) != 1 || !regexp.MustCompile(`^[1-9][0-9]*:[1-9][0-9]*$`).MatchString(got[0][0]) {
		t.Errorf("USER %v: want a numeric user:group other than root", got)
	}
	if got, want := df.args("VOLUME"), [][]string{{`["/data"]`}}; !slicesEqual(got, want) {
		t.Errorf("VOLUME %v, want %v", got, want)
	}
	env := map[string]string{}
	for _, e := range df.args("ENV") {
		for _, kv := range e {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("ENV %q: want KEY=value", kv)
			}
			env[k] = v
		}
	}
	if got, want := df.args("EXPOSE"), [][]string{{strings.TrimPrefix(env["LINKBOLT_SERVER_LISTEN"], ":")}}; !slicesEqual(got, want) {
		t.Errorf("EXPOSE %v, but LINKBOLT_SERVER_LISTEN is %q", got, env["LINKBOLT_SERVER_LISTEN"])
	}
	if !strings.HasPrefix(env["LINKBOLT_STORAGE_PATH"], "/data/") {
		t.Errorf("LINKBOLT_STORAGE_PATH %q is not in the volume /data", env["LINKBOLT_STORAGE_PATH"])
	}
	serveWithEnv(t, bin, env)
}

func slicesEqual(a, b [][]string) bool {
	return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}

// dockerIncluded reports whether .dockerignore, which leaves out
// everything ("*") and lets chosen paths back in ("!path"), lets src in.
func dockerIncluded(ignore, src string) bool {
	for _, l := range strings.Split(ignore, "\n") {
		p, ok := strings.CutPrefix(strings.TrimSpace(l), "!")
		if !ok {
			continue
		}
		p = strings.TrimSuffix(p, "/")
		if src == p || strings.HasPrefix(src, p+"/") {
			return true
		}
	}
	return false
}

// serveWithEnv starts the released binary as its environment (the image's
// or the unit's) starts it, paths moved into a temporary directory and
// the listen address onto a free loopback port, and checks it serves with
// its data file where the environment puts it. Every LINKBOLT_ variable
// the environment sets must be one this check proves linkbolt reads.
func serveWithEnv(t *testing.T, bin string, env map[string]string, args ...string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = os.Environ()
	var dataFile string
	for k, v := range env {
		switch k {
		case "LINKBOLT_STORAGE_PATH":
			dataFile = filepath.Join(dir, path.Base(v))
			v = dataFile
		case "LINKBOLT_SERVER_LISTEN":
		default:
			t.Fatalf("%s=%s: the test does not check that linkbolt reads it", k, v)
		}
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if dataFile == "" {
		t.Fatal("LINKBOLT_STORAGE_PATH is not set: the data would be in the working directory")
	}
	cmd.Env = append(cmd.Env, "LINKBOLT_SERVER_LISTEN=127.0.0.1:0")
	logs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type result struct {
		err  error
		logs string
	}
	exited := make(chan result, 1)
	serving := make(chan string, 1)
	go func() {
		var all strings.Builder
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "linkbolt is serving") {
				serving <- sc.Text()
			}
		}
		exited <- result{cmd.Wait(), all.String()}
	}()
	// Only a hang is caught here; a slow machine just takes longer.
	select {
	case line := <-serving:
		if !strings.Contains(line, "listen=127.0.0.1:") || !strings.Contains(line, "data="+dataFile) {
			t.Errorf("serving with the wrong settings: %s", line)
		}
	case r := <-exited:
		t.Fatalf("linkbolt stopped before serving: %v\n%s", r.err, r.logs)
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		r := <-exited
		t.Fatalf("linkbolt did not start serving: %v\n%s", r.err, r.logs)
	}
	if _, err := os.Stat(dataFile); err != nil {
		t.Errorf("no data file where the environment puts it: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if r := <-exited; r.err != nil {
		t.Errorf("linkbolt did not stop cleanly on SIGTERM: %v\n%s", r.err, r.logs)
	}
}
