package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReleaseRefusesBadInput checks a mistake in the command line, or an
// output directory that holds something else, stops the command before it
// builds anything, with a line that says what is wrong.
func TestReleaseRefusesBadInput(t *testing.T) {
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		stderr   string
		noOutput string // a directory that must not be created
	}{
		{"unknown target", []string{"--targets", "linux/amd64,plan9/386"}, 2, `release: --targets: "plan9/386" is not one of linux/amd64, linux/arm64, darwin/arm64, darwin/amd64, windows/amd64`, ""},
		{"extra argument", []string{"v1.2.3"}, 2, `release: unexpected argument "v1.2.3"`, ""},
		{"version with a slash", []string{"--version", "v1/2"}, 1, `release: --version "v1/2": use letters, digits and . _ + - only (it names files), like v1.2.3`, ""},
		{"version with a space", []string{"--version", "1 2"}, 1, `release: --version "1 2"`, ""},
		{"foreign files in --out", []string{"--out", foreign}, 1, "release: --out " + foreign + " holds notes.txt, which is not part of a linkbolt release: choose a new or empty directory", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "dist")
			args := tc.args
			if !strings.Contains(strings.Join(args, " "), "--out") {
				args = append(args, "--out", out)
			}
			var stdout, stderr bytes.Buffer
			if got := run(context.Background(), args, &stdout, &stderr); got != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", got, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Fatalf("stderr %q, want %q", stderr.String(), tc.stderr)
			}
			if stdout.Len() > 0 {
				t.Fatalf("stdout %q, want nothing", stdout.String())
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("--out %s was made: %v", out, err)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(foreign, "notes.txt")); err != nil || string(b) != "keep me" {
		t.Fatalf("the foreign file was touched: %q, %v", b, err)
	}
}

// TestPrepareOutReplacesAnEarlierRelease checks an output directory that
// holds only what the release command writes is emptied for the next one,
// and a missing one is made.
func TestPrepareOutReplacesAnEarlierRelease(t *testing.T) {
	out := t.TempDir()
	for _, name := range []string{
		"SHA256SUMS", "linkbolt_v1.0.0_linux_amd64.tar.gz", "linkbolt_v1.0.0_windows_amd64.zip",
		"linux_amd64/linkbolt", "windows_amd64/linkbolt.exe", "docker/ca-certificates.crt", "docker/data/",
	} {
		p := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(name, "/") {
			if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := prepareOut(out); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(out); err != nil || len(entries) != 0 {
		t.Fatalf("after prepareOut %s holds %v (%v), want nothing", out, entries, err)
	}

	// A directory named like a target dir of another tool is not ours.
	if err := os.Mkdir(filepath.Join(out, "my_notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := prepareOut(out); err == nil || !strings.Contains(err.Error(), "holds my_notes") {
		t.Fatalf("prepareOut with my_notes: %v", err)
	}

	missing := filepath.Join(t.TempDir(), "a", "dist")
	if err := prepareOut(missing); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(missing); err != nil || !fi.IsDir() {
		t.Fatalf("prepareOut did not make %s: %v", missing, err)
	}
}

// TestBuildFailureNamesEveryTarget checks a build that fails names each
// target that failed with the compiler's message.
func TestBuildFailureNamesEveryTarget(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module example.com/broken\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() { undefinedCall() }\n",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	r := &release{root: root, out: t.TempDir(), version: "v0.0.1", targets: []target{{"linux", "amd64"}, {"windows", "amd64"}}, log: &log}
	err := r.buildAll(context.Background())
	if err == nil {
		t.Fatal("a package that does not compile built")
	}
	for _, want := range []string{"building linux/amd64: exit status 1", "building windows/amd64: exit status 1", "undefined: undefinedCall"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}
