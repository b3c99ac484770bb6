package link_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// TestIDCodec: an ID is its prefix and 22 base62 characters that parse
// back to the sequence under the same key only, under its own prefix
// only; a sequence at or below its prefix's legacy maximum keeps the
// legacy base 36 form.
func TestIDCodec(t *testing.T) {
	key := bytes.Repeat([]byte{7}, link.IDKeySize)
	c, err := link.NewIDCodec(key, map[string]uint64{link.PrefixLink: 40})
	if err != nil {
		t.Fatal(err)
	}
	other, err := link.NewIDCodec(bytes.Repeat([]byte{8}, link.IDKeySize), nil)
	if err != nil {
		t.Fatal(err)
	}
	id := c.FormatID(link.PrefixUser, 41)
	if len(id) != len(link.PrefixUser)+link.IDOpaqueLen || !strings.HasPrefix(id, link.PrefixUser) {
		t.Fatalf("FormatID = %q", id)
	}
	if seq, ok := c.ParseID(link.PrefixUser, id); !ok || seq != 41 {
		t.Fatalf("ParseID(%q) = %d, %v; want 41", id, seq, ok)
	}
	if got := string(c.AppendID([]byte("x"), link.PrefixUser, 41)); got != "x"+id {
		t.Fatalf("AppendID = %q", got)
	}
	if _, ok := c.ParseID(link.PrefixWorkspace, link.PrefixWorkspace+id[len(link.PrefixUser):]); ok {
		t.Fatalf("%q parses under another prefix", id)
	}
	if _, ok := other.ParseID(link.PrefixUser, id); ok {
		t.Fatalf("%q parses under another key", id)
	}
	if got := c.FormatID(link.PrefixLink, 36); got != "lnk_10" {
		t.Fatalf("legacy FormatID = %q, want lnk_10", got)
	}
	if seq, ok := c.ParseID(link.PrefixLink, "lnk_10"); !ok || seq != 36 {
		t.Fatalf("legacy ParseID = %d, %v", seq, ok)
	}
	// usr_ has no legacy maximum; 15 in base 36 is 41, above lnk_'s.
	for _, bad := range []string{"usr_10", "", "usr_", id[:len(id)-1], "lnk_15", "lnk_010"} {
		prefix := bad[:min(len(bad), 4)]
		if _, ok := c.ParseID(prefix, bad); ok {
			t.Fatalf("ParseID(%q) accepted", bad)
		}
	}
	if _, err := link.NewIDCodec([]byte("short"), nil); err == nil {
		t.Fatal("a key of 5 bytes makes a codec")
	}
}
