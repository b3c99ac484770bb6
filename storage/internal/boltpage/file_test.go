package boltpage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// mustBoltFile writes a bbolt file of n keys in two buckets, one of them
// nested, and returns its path and page size.
func mustBoltFile(tb testing.TB, n int) (string, int) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "data.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		tb.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		a, err := tx.CreateBucket([]byte("a"))
		if err != nil {
			return err
		}
		nested, err := a.CreateBucket([]byte("nested"))
		if err != nil {
			return err
		}
		if err := nested.Put([]byte("k"), []byte("v")); err != nil {
			return err
		}
		b, err := tx.CreateBucket([]byte("b"))
		if err != nil {
			return err
		}
		for i := range n {
			if err := b.Put(fmt.Appendf(nil, "key%08d", i), []byte(strings.Repeat("v", 100))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	pageSize := db.Info().PageSize
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	return path, pageSize
}

// mustOpen opens path and fails unless it opens without damage.
func mustOpen(t *testing.T, path string) *File {
	t.Helper()
	bf, d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if d != nil {
		t.Fatalf("damage in a whole file: %v", d.Problems)
	}
	t.Cleanup(func() { bf.Close() })
	return bf
}

// rewrite applies change to the bytes of the file at path.
func rewrite(t *testing.T, path string, change func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, change(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestWholeFile(t *testing.T) {
	path, pageSize := mustBoltFile(t, 2000)
	bf := mustOpen(t, path)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := bf.PageSize(), pageSize; got != want {
		t.Errorf("PageSize() = %d, want %d", got, want)
	}
	if got := bf.Pages(); got < 10 || int64(got)*int64(pageSize) > info.Size() {
		t.Errorf("Pages() = %d, for a file of %d bytes", got, info.Size())
	}
	if got := bf.HeaderDamage(); got != "" {
		t.Errorf("HeaderDamage() = %q, want none", got)
	}
	for _, leaves := range []bool{false, true} {
		if d := bf.Walk(leaves); d != nil {
			t.Errorf("Walk(%v) = %v, want nil", leaves, d.Problems)
		}
	}
}

func TestDamagedFile(t *testing.T) {
	tests := []struct {
		name   string
		change func(b []byte, pageSize int) []byte
		want   string // the start of the summary
	}{
		{"empty", func(b []byte, _ int) []byte { return nil }, "the file is empty (0 bytes)"},
		{"truncated", func(b []byte, pageSize int) []byte { return b[:len(b)/2/pageSize*pageSize] }, "the file is truncated: "},
		{"not bbolt", func(b []byte, _ int) []byte { return []byte(strings.Repeat("not a bbolt file\n", 1000)) }, "no valid header page: "},
		{"both headers", func(b []byte, pageSize int) []byte {
			b[pageHeaderSize] ^= 0xff
			b[pageSize+pageHeaderSize] ^= 0xff
			return b
		}, "no valid header page: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, pageSize := mustBoltFile(t, 2000)
			rewrite(t, path, func(b []byte) []byte { return tt.change(b, pageSize) })
			bf, d, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if bf != nil {
				bf.Close()
				t.Fatal("a damaged file opened")
			}
			if d == nil || !strings.HasPrefix(d.Summary, tt.want) {
				t.Fatalf("damage %+v, want a summary starting %q", d, tt.want)
			}
			if got, want := d.Problems[0], d.Summary; got != want {
				t.Errorf("first problem %q, summary %q", got, want)
			}
		})
	}
}

// TestHeaderDamage: a file with one damaged header page opens from the
// other, as bbolt does, and says so.
func TestHeaderDamage(t *testing.T) {
	for page := range 2 {
		t.Run(fmt.Sprint("page ", page), func(t *testing.T) {
			path, pageSize := mustBoltFile(t, 100)
			rewrite(t, path, func(b []byte) []byte {
				b[page*pageSize+pageHeaderSize+metaSize] ^= 0xff // the checksum
				return b
			})
			bf := mustOpen(t, path)
			want := fmt.Sprintf("header page %d is damaged (checksum mismatch): the file opens from header page %d ", page, 1-page)
			if got := bf.HeaderDamage(); !strings.HasPrefix(got, want) {
				t.Errorf("HeaderDamage() = %q, want it to start %q", got, want)
			}
			if d := bf.Walk(true); d != nil {
				t.Errorf("Walk(true) = %v, want nil: the pages are whole", d.Problems)
			}
		})
	}
}

// TestWalkDamagedPage overwrites the type of a page in use: the quick walk
// finds it when it is the root bucket's page, the full walk wherever it is.
func TestWalkDamagedPage(t *testing.T) {
	path, pageSize := mustBoltFile(t, 2000)
	bf := mustOpen(t, path)
	root, last := bf.meta.root, bf.meta.pgid-1
	bf.Close()
	for _, id := range []uint64{root, last} {
		t.Run(fmt.Sprint("page ", id), func(t *testing.T) {
			rewrite(t, path, func(b []byte) []byte {
				b[int(id)*pageSize+8] = 0x40 // flags: no page type
				return b
			})
			bf := mustOpen(t, path)
			d := bf.Walk(true)
			if d == nil || !strings.Contains(strings.Join(d.Problems, "\n"), fmt.Sprintf("page %d", id)) {
				t.Fatalf("Walk(true) = %+v, want a problem of page %d", d, id)
			}
			if d := bf.Walk(false); id == root && d == nil {
				t.Errorf("Walk(false) found no damage of the root bucket's page")
			}
		})
	}
}

// TestMaxProblems: a file with more problems than MaxProblems lists
// MaxProblems of them and a line saying there are more.
func TestMaxProblems(t *testing.T) {
	var d Damage
	for i := range MaxProblems + 10 {
		d.add("problem %d", i)
	}
	if got, want := len(d.Problems), MaxProblems+1; got != want {
		t.Fatalf("%d problems listed, want %d", got, want)
	}
	if got, want := d.Problems[MaxProblems], "(more problems not listed)"; got != want {
		t.Errorf("last line %q, want %q", got, want)
	}
	if got, want := d.Summary, "problem 0"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

// FuzzOpen reads damaged copies of a small bbolt file: patch overwrites
// its bytes at an offset, and cut (when not 0) truncates it. Whatever the
// damage, Open and Walk return problems, never panic or read past the
// file. (The damage is fuzzed rather than the whole file: inputs of tens
// of kilobytes starve the fuzzer.)
func FuzzOpen(f *testing.F) {
	path, pageSize := mustBoltFile(f, 50)
	whole, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint32(0), []byte{}, uint32(0))
	f.Add(uint32(0), []byte{}, uint32(len(whole)/2))
	f.Add(uint32(pageHeaderSize+metaSize), []byte{0xff}, uint32(0))          // a header's checksum
	f.Add(uint32(pageSize+pageHeaderSize+16), []byte{9, 0, 0, 0}, uint32(0)) // the second header's root
	f.Add(uint32(3*pageSize+8), []byte{0x40, 0}, uint32(0))                  // a page's type
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, at uint32, patch []byte, cut uint32) {
		b := append([]byte{}, whole...)
		copy(b[int(at)%len(b):], patch)
		if cut != 0 {
			b = b[:int(cut)%len(b)]
		}
		p := filepath.Join(dir, "fuzz.db")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		bf, d, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if d != nil {
			if bf != nil || len(d.Problems) == 0 || d.Summary == "" {
				t.Fatalf("damage %+v with file %v", d, bf != nil)
			}
			return
		}
		defer bf.Close()
		for _, leaves := range []bool{false, true} {
			if d := bf.Walk(leaves); d != nil && (len(d.Problems) == 0 || d.Summary == "") {
				t.Fatalf("Walk(%v): damage without problems %+v", leaves, d)
			}
		}
	})
}
