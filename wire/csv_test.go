package wire_test

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/linkbolt/linkbolt/wire"
)

func TestCSVWriter(t *testing.T) {
	in := []string{"=HYPERLINK(\"https://evil.example\")", "+1", "-2+3", "@SUM(A1)", "\tx", "\rx",
		"", "plain", "a=b", "'quoted", "https://example.com/=x", "2026-03-10T00:00:00Z", "42", " =1",
		"\n=1", "\u00a0 @x", "＝HYPERLINK(\"x\")", "\u3000＋1", "－1", "＠x", "  ", "x =1", "\t"}
	want := []string{"'=HYPERLINK(\"https://evil.example\")", "'+1", "'-2+3", "'@SUM(A1)", "'\tx", "'\rx",
		"", "plain", "a=b", "'quoted", "https://example.com/=x", "2026-03-10T00:00:00Z", "42", "' =1",
		"'\n=1", "'\u00a0 @x", "'＝HYPERLINK(\"x\")", "'\u3000＋1", "'－1", "'＠x", "  ", "x =1", "'\t"}
	var b bytes.Buffer
	w := wire.NewCSVWriter(&b)
	if err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	got, err := csv.NewReader(&b).Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d cells, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cell %d: got %q, want %q", i, got[i], want[i])
		}
	}
}
