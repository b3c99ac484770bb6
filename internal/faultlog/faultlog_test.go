package faultlog_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/faultlog"
)

// TestEpisode: a fault that lasts writes its first line, then one a
// minute whatever the number of failures, and one line when it ends; the
// next fault is a new episode, logged at once.
func TestEpisode(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := &faultlog.Log{Logger: slog.New(slog.NewTextHandler(&buf, nil)), Now: func() time.Time { return now }}
	lines := func() int { return strings.Count(buf.String(), "\n") }
	errDown := errors.New("connection refused")

	if l.OK("works again") {
		t.Fatal("OK without a fault logged a line")
	}
	for i := range 100 {
		l.Fail("store unavailable", errDown, "path", "/x")
		now = now.Add(100 * time.Millisecond) // 10 s in all
		if got, want := lines(), 1; got != want {
			t.Fatalf("after %d failures within a minute: %d lines, want %d\n%s", i+1, got, want, buf.String())
		}
	}
	now = now.Add(time.Minute)
	if !l.Fail("store unavailable", errDown) {
		t.Fatal("a failure a minute after the last line was not logged")
	}
	if got := buf.String(); !strings.Contains(got, "still failing") || !strings.Contains(got, "failures_since_last_line=100") {
		t.Fatalf("second line without the count:\n%s", got)
	}
	if since, failing := l.Failing(); !failing || since.IsZero() {
		t.Fatal("Failing during a fault = false")
	}
	if !l.OK("works again") || !strings.Contains(buf.String(), "works again") || !strings.Contains(buf.String(), "failures=101") {
		t.Fatalf("end of the episode not logged:\n%s", buf.String())
	}
	if l.OK("works again") {
		t.Fatal("a second OK logged again")
	}
	n := lines()
	if !l.Fail("store unavailable", errDown) || lines() != n+1 {
		t.Fatal("a new episode was not logged at once")
	}
}
