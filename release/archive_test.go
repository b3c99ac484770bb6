package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPackShipsTheManual packs a Linux and a Windows archive around a
// stand-in binary and checks each carries the manual's pages under docs/,
// as in the repository, and neither the screenshots nor the pages' test.
func TestPackShipsTheManual(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	r := &release{root: root, out: t.TempDir(), version: "v0.0.1", modTime: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("docs/*.md: %v %v", pages, err)
	}
	for _, tg := range []target{{"linux", "amd64"}, {"windows", "amd64"}} {
		bin := filepath.Join(r.out, tg.dir(), tg.exe())
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, []byte("a binary"), 0o755); err != nil {
			t.Fatal(err)
		}
		name := tg.archiveName(r.version)
		if err := r.pack(tg, filepath.Join(r.out, name)); err != nil {
			t.Fatalf("%s: %v", tg, err)
		}
		dir := t.TempDir()
		files := unpack(t, filepath.Join(r.out, name), dir)
		base := strings.TrimSuffix(strings.TrimSuffix(name, ".zip"), ".tar.gz")
		var docs int
		for file, mode := range files {
			rest, ok := strings.CutPrefix(file, base+"/docs/")
			if !ok {
				continue
			}
			docs++
			if !strings.HasSuffix(rest, ".md") || strings.Contains(rest, "/") {
				t.Errorf("%s holds %s: only the manual's pages belong in docs/", name, file)
			}
			if mode != 0o644 {
				t.Errorf("%s: %s has mode %v, want 0644", name, file, mode)
			}
		}
		if docs != len(pages) {
			t.Errorf("%s holds %d pages under docs/, the repository %d", name, docs, len(pages))
		}
		for _, p := range pages {
			sameFile(t, filepath.Join(dir, base, "docs", filepath.Base(p)), p)
		}
	}
}
