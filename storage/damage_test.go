package storage_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/linkbolt/linkbolt/storage"
)

// TestDamagedFiles damages a real data file in a few hundred seeded ways
// (bytes flipped, pages overwritten, the file cut short) and inspects
// each: the start-up inspection and CheckFile never panic or fault, agree
// with each other (what start-up refuses, check reports), and Open
// refuses what the inspection refuses without writing to it.
func TestDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	if err := fillBenchFile(good, 1); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := storage.CheckFile(good); err != nil || !r.OK() {
		t.Fatalf("the undamaged file: %v %+v", err, r)
	}
	const pageSize = 4096
	rng := rand.New(rand.NewPCG(1, 8))
	refused, reported := 0, 0
	for i := 0; i < 300; i++ {
		b := bytes.Clone(orig)
		var how string
		switch i % 3 {
		case 0:
			n := 1 + rng.IntN(64)
			how = fmt.Sprintf("%d bytes flipped", n)
			for j := 0; j < n; j++ {
				b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
			}
		case 1:
			p := rng.IntN(len(b) / pageSize)
			how = fmt.Sprintf("page %d overwritten", p)
			for j := p * pageSize; j < (p+1)*pageSize; j++ {
				b[j] = byte(rng.Uint32())
			}
		case 2:
			n := rng.IntN(len(b))
			how = fmt.Sprintf("cut to %d bytes", n)
			b = b[:n]
		}
		path := filepath.Join(dir, fmt.Sprintf("damaged-%d.db", i))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		inspectErr := storage.InspectDataFile(path)
		if inspectErr != nil && !errors.Is(inspectErr, storage.ErrDamaged) {
			t.Fatalf("%s: inspection: %v", how, inspectErr)
		}
		r, err := storage.CheckFile(path)
		if err != nil {
			t.Fatalf("%s: check: %v", how, err)
		}
		if inspectErr != nil && r.OK() {
			t.Fatalf("%s: start-up refuses it (%v) but check finds it whole", how, inspectErr)
		}
		if inspectErr != nil {
			refused++
			db := storage.NewDB(path)
			if err := db.Open(); !errors.Is(err, storage.ErrDamaged) {
				db.Close()
				t.Fatalf("%s: open: %v", how, err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
				t.Fatalf("%s: the refused open wrote to the file", how)
			}
		}
		if !r.OK() {
			reported++
		}
		os.Remove(path)
	}
	t.Logf("of 300 damaged files, start-up refused %d and check reported %d", refused, reported)
	if refused == 0 || reported <= refused {
		t.Fatalf("start-up refused %d, check reported %d", refused, reported)
	}
}
