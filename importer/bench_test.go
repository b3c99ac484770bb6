package importer_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/linkbolt/linkbolt/importer"
)

const benchRows = 100_000

var benchBatch = importer.DefaultBatchSize

// BenchmarkRun_CSV100k imports a CSV file of 100,000 links, each with a
// click total, into a new data file.
func BenchmarkRun_CSV100k(b *testing.B) {
	var data bytes.Buffer
	data.WriteString("url,alias,tags,title,created_at,clicks\n")
	for i := range benchRows {
		fmt.Fprintf(&data, "https://example.com/page/%d,a%d,tag%d,Page %d,2024-%02d-%02d 10:00:00,%d\n", i, i, i%50, i, 1+i%12, 1+i%28, i%100)
	}
	for range b.N {
		b.StopTimer()
		e := newEnv(b)
		b.StartTimer()
		r, err := importer.Run(context.Background(), e.imports, importer.NewCSV(bytes.NewReader(data.Bytes())), importer.Options{WorkspaceID: e.ws, BatchSize: benchBatch})
		if err != nil || r.Imported != benchRows {
			b.Fatalf("%v: %d imported", err, r.Imported)
		}
	}
}
