package storage

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestAppendJSONTime checks the hand-written times against encoding/json.
func TestAppendJSONTime(t *testing.T) {
	for _, at := range []time.Time{time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC), time.Unix(0, 0).UTC()} {
		want, _ := json.Marshal(at)
		if got := appendJSONTime(nil, at); !bytes.Equal(got, want) {
			t.Errorf("appendJSONTime(%v) = %s, want %s", at, got, want)
		}
	}
}
