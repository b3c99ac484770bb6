package importer_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/importer"
)

// FuzzFileSources feeds any bytes to the file sources: none panics, each
// row is a link with a URL and a key or a RowError saying where, and the
// only errors that end a source are input errors (a missing column).
func FuzzFileSources(f *testing.F) {
	for _, name := range []string{"links.csv", "bitly.csv", "yourls_url.csv", "yourls_log.csv"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("url\n\"unterminated\n")
	f.Add("\ufeffURL,Alias\nhttps://a.example/,x\n")
	f.Fuzz(func(t *testing.T, data string) {
		for _, src := range []importer.Source{
			importer.NewCSV(strings.NewReader(data)),
			importer.NewBitly(strings.NewReader(data)),
			importer.NewYOURLS(strings.NewReader(data), strings.NewReader(data)),
		} {
			err := src.Each(context.Background(), func(l importer.Link, rowErr *importer.RowError) error {
				if rowErr != nil {
					if rowErr.Where == "" || rowErr.Reason == "" {
						t.Fatalf("%s: row error without where or reason: %+v", src.Name(), rowErr)
					}
					return nil
				}
				if l.URL == "" || l.Key == "" || l.Where == "" {
					t.Fatalf("%s: link without URL, key or where: %+v", src.Name(), l)
				}
				return nil
			})
			if err != nil && !importer.IsInputError(err) {
				t.Fatalf("%s: %v", src.Name(), err)
			}
		}
	})
}
