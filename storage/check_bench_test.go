package storage_test

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/linkbolt/linkbolt/storage"
	bolt "go.etcd.io/bbolt"
)

// benchFile is a big data file shared by the benchmarks below: its size in
// MB comes from LINKBOLT_BENCH_DATA_MB (default 64); it is made once and
// kept between runs, at LINKBOLT_BENCH_DATA_FILE or in the temporary
// directory as linkbolt-bench-<MB>mb.db.
//
//	LINKBOLT_BENCH_DATA_MB=1500 LINKBOLT_BENCH_DATA_FILE=/tmp/big.db \
//	  go test ./storage -run '^$' -bench 'Open|Check' -benchtime 3x
var benchFile = sync.OnceValues(func() (string, error) {
	mb := 64
	if v, err := strconv.Atoi(os.Getenv("LINKBOLT_BENCH_DATA_MB")); err == nil && v > 0 {
		mb = v
	}
	path := os.Getenv("LINKBOLT_BENCH_DATA_FILE")
	if path == "" {
		path = filepath.Join(os.TempDir(), "linkbolt-bench-"+strconv.Itoa(mb)+"mb.db")
	}
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	return path, fillBenchFile(path, mb)
})

// fillBenchFile writes about mb megabytes of records shaped like
// linkbolt's: sequential keys written in order (links, raw clicks) and
// random keys (an index), 200-byte values. They go into buckets of their
// own: random bytes in linkbolt's buckets would break its invariants,
// which CheckFile checks too.
func fillBenchFile(path string, mb int) error {
	db := storage.NewDB(path)
	if err := db.Open(); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	defer bdb.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 200)
	n := mb << 20 / 260
	const perTx = 50000
	for start := 0; start < n; start += perTx {
		err := bdb.Update(func(tx *bolt.Tx) error {
			seq, err := tx.CreateBucketIfNotExists([]byte("bench.sequential"))
			if err != nil {
				return err
			}
			idx, err := tx.CreateBucketIfNotExists([]byte("bench.random"))
			if err != nil {
				return err
			}
			seq.FillPercent = 1
			for i := start; i < start+perTx && i < n; i++ {
				var k [12]byte
				binary.BigEndian.PutUint64(k[:], uint64(i))
				for j := range val {
					val[j] = byte(rng.Uint32())
				}
				b := seq
				if i%4 == 0 {
					b = idx
					binary.BigEndian.PutUint64(k[:], rng.Uint64())
				}
				if err := b.Put(k[:], val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func benchPath(b *testing.B) string {
	b.Helper()
	path, err := benchFile()
	if err != nil {
		b.Fatal(err)
	}
	if info, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(info.Size())/(1<<20), "MB")
	}
	return path
}

// BenchmarkOpen measures a start-up's open of a big data file, with its
// inspection (header pages, size, free-page list, branch pages).
func BenchmarkOpen(b *testing.B) {
	path := benchPath(b)
	for b.Loop() {
		db := storage.NewDB(path)
		if err := db.Open(); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}

// BenchmarkInspect measures the inspection alone, what every start-up
// adds to bbolt's own open.
func BenchmarkInspect(b *testing.B) {
	path := benchPath(b)
	for b.Loop() {
		if err := storage.InspectDataFile(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenBolt is BenchmarkOpen without linkbolt's inspection: what
// the inspection adds is the difference.
func BenchmarkOpenBolt(b *testing.B) {
	path := benchPath(b)
	for b.Loop() {
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}

// BenchmarkCheckFile measures linkbolt check: every page read, then
// bbolt's tx.Check.
func BenchmarkCheckFile(b *testing.B) {
	path := benchPath(b)
	for b.Loop() {
		r, err := storage.CheckFile(path)
		if err != nil || !r.OK() {
			b.Fatal(err, r)
		}
	}
}

// BenchmarkTxCheck measures bbolt's tx.Check alone, what a start-up would
// pay to run it.
func BenchmarkTxCheck(b *testing.B) {
	path := benchPath(b)
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for b.Loop() {
		db.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				b.Fatal(err)
			}
			return nil
		})
	}
}
