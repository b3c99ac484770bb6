package link

import (
	"strconv"
	"testing"
)

// A NameSet tells every string it was given from every other: a string
// is new once, its parts may be split anywhere, and 200,000 close
// strings (a dry run's keys and aliases) are all told apart.
func TestNameSet(t *testing.T) {
	s := NewNameSet()
	if !s.Add("example.com", "/", "spring") || s.Add("example.com/spring") || !s.Has("example.com/", "spring") {
		t.Fatal("a string is not the same string split otherwise")
	}
	if s.Has("/spring") || s.Has("example.com/spring2") {
		t.Fatal("a string never added is in the set")
	}
	for i := range 200_000 {
		if k := "imp" + strconv.Itoa(i); !s.Add(k) || !s.Add("/", k) || s.Add(k) {
			t.Fatalf("%s: not new when added first, or new when added again", k)
		}
	}
	if s.Len() != 400_001 {
		t.Fatalf("%d strings, want 400001", s.Len())
	}
}
