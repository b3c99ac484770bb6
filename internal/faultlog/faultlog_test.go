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
	now = now.Add(time.Minute)
	if !l.Fail("store unavailable", errDown) || lines() != n+1 {
		t.Fatal("a new episode a minute after the last line was not logged at once")
	}
}

// TestFlapping: a fault that comes and goes within a minute (a full disk
// that still takes small writes) writes a beginning and an end, then
// nothing until a minute has passed, when one line counts the failures
// meanwhile.
func TestFlapping(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := &faultlog.Log{Logger: slog.New(slog.NewTextHandler(&buf, nil)), Now: func() time.Time { return now }}
	errFull := errors.New("no space left on device")
	for range 50 {
		l.Fail("writes fail", errFull)
		now = now.Add(time.Second)
		l.OK("writes work again")
	}
	if got := buf.String(); strings.Count(got, "\n") != 2 || strings.Count(got, "writes fail") != 1 || strings.Count(got, "writes work again") != 1 {
		t.Fatalf("50 s of a fault coming and going:\n%s", got)
	}
	if _, failing := l.Failing(); failing {
		t.Fatal("Failing after a success")
	}
	now = now.Add(15 * time.Second)
	if !l.Fail("writes fail", errFull) || !strings.Contains(buf.String(), "failures_since_last_line=50") {
		t.Fatalf("the line a minute later does not count the failures meanwhile:\n%s", buf.String())
	}
	if !l.OK("writes work again") || !strings.Contains(buf.String(), "failures=50") {
		t.Fatalf("the end does not count the failures:\n%s", buf.String())
	}
}
