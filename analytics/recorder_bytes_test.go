package analytics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/link"
)

// bigClick is a click as a redirect hands it over under a flood of huge
// headers: the user agent cut to MaxUALength, the referrer a long host.
func bigClick(i int) link.Click {
	c := testClick(i)
	c.UserAgent = strings.Repeat("u", MaxUALength)
	c.Referrer = strings.Repeat("r", 253)
	return c
}

// TestRecorderQueueBytesBound: the queue's memory stays under its byte
// bound (arrays included) however many clicks come, the clicks past it
// are counted as dropped, and the drops are logged once a minute, not once
// a click.
func TestRecorderQueueBytesBound(t *testing.T) {
	const bound = 256 << 10
	store := &memStore{}
	var logs syncBuffer
	clock := clocktest.New(clickTime)
	r := NewRecorder(store, time.Hour, 0, slog.New(slog.NewTextHandler(&logs, nil)))
	r.SetQueueBytes(bound)
	r.SetClock(clock.Now)

	recorded := 0
	for ; recorded < 5000; recorded++ {
		r.Record(bigClick(recorded))
		if got := r.PendingBytes(); got > bound {
			t.Fatalf("after %d records: PendingBytes = %d, over the bound %d", recorded+1, got, bound)
		}
	}
	pending, dropped := r.Pending(), r.Dropped()
	if dropped == 0 {
		t.Fatalf("no click dropped after %d clicks of ~%d bytes into a %d-byte queue", recorded, clickBytes(&link.Click{UserAgent: strings.Repeat("u", MaxUALength)}), bound)
	}
	if got, want := int64(pending)+dropped, int64(recorded); got != want {
		t.Fatalf("Pending + Dropped = %d, want %d recorded", got, want)
	}
	// The queue is used, not given up early: at least 80% of it is clicks.
	if got, min := int64(pending)*clickBytes(&[]link.Click{bigClick(0)}[0]), int64(bound*8/10); got < min {
		t.Fatalf("%d clicks queued (%d bytes), want the queue at least 80%% used (%d bytes)", pending, got, min)
	}
	if got, want := strings.Count(logs.String(), "DROPPED"), 1; got != want {
		t.Fatalf("log has %d lines with DROPPED, want %d:\n%s", got, want, logs.String())
	}
	clock.Add(logEvery)
	r.Record(bigClick(recorded))
	recorded++
	out := logs.String()
	if got, want := strings.Count(out, "DROPPED"), 2; got != want {
		t.Fatalf("log has %d lines with DROPPED a minute later, want %d:\n%s", got, want, out)
	}
	if !strings.Contains(out, "dropped_total="+strconv.FormatInt(r.Dropped(), 10)) {
		t.Fatalf("the drop log does not give the total %d:\n%s", r.Dropped(), out)
	}

	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("Flush = %v", err)
	}
	if got, want := r.Written(), int64(pending); got != want {
		t.Fatalf("Written = %d, want the %d queued", got, want)
	}
	if got := r.PendingBytes(); got > bound {
		t.Fatalf("PendingBytes after Flush = %d, over the bound %d", got, bound)
	}
	// Room again: the next click is queued.
	r.Record(bigClick(recorded))
	if got, want := r.Pending(), 1; got != want {
		t.Fatalf("Pending after Flush and Record = %d, want %d", got, want)
	}
}

// TestRecorderWhileWritesFail: with every write failing, the queue and
// the batch held for a retry stay within the byte bound together; Pending
// counts both; failed writes are counted; WriteFailing says so from the
// first failure until a write succeeds; nothing recorded is lost without
// being counted.
func TestRecorderWhileWritesFail(t *testing.T) {
	const bound = 128 << 10
	store := &memStore{}
	store.failAlways(errDisk)
	var logs syncBuffer
	clock := clocktest.New(clickTime)
	r := NewRecorder(store, time.Hour, 0, slog.New(slog.NewTextHandler(&logs, nil)))
	r.SetQueueBytes(bound)
	r.SetClock(clock.Now)

	if _, failing := r.WriteFailing(); failing {
		t.Fatal("WriteFailing before any write")
	}
	recorded := 0
	failedAt := clock.Now()
	for try := 1; try <= 5; try++ {
		for range 500 {
			r.Record(bigClick(recorded))
			recorded++
		}
		if err := r.Flush(context.Background()); !errors.Is(err, errDisk) {
			t.Fatalf("try %d: Flush = %v, want %v", try, err, errDisk)
		}
		if got := r.PendingBytes(); got > bound {
			t.Fatalf("try %d: PendingBytes = %d, over the bound %d", try, got, bound)
		}
		if got, want := int64(r.Pending())+r.Dropped(), int64(recorded); got != want {
			t.Fatalf("try %d: Pending + Dropped = %d, want %d recorded", try, got, want)
		}
		if got, want := r.FailedWrites(), int64(try); got != want {
			t.Fatalf("try %d: FailedWrites = %d, want %d", try, got, want)
		}
		since, failing := r.WriteFailing()
		if !failing || !since.Equal(failedAt) {
			t.Fatalf("try %d: WriteFailing = %v, %v; want true since the first failure %v", try, since, failing, failedAt)
		}
		clock.Add(time.Second)
	}
	if got, want := strings.Count(logs.String(), "writing clicks failed"), 1; got != want {
		t.Fatalf("%d failed-write log lines in 5 s of failures, want %d", got, want)
	}

	// A write under way: its batch is pending too.
	store.setFail(nil)
	entered, release := store.hold()
	pending := r.Pending()
	flushed := make(chan error, 1)
	go func() { flushed <- r.Flush(context.Background()) }()
	waitFor(t, entered, "the store to be called")
	if got, want := r.Pending(), pending; got != want {
		t.Fatalf("Pending during the retried write = %d, want %d", got, want)
	}
	// Stop holding before the release: the held write has its channels
	// already, and the batches that follow it must not wait for the test.
	store.unhold()
	release <- nil
	if err := waitFor(t, flushed, "Flush to return"); err != nil {
		t.Fatalf("Flush after recovery = %v", err)
	}
	if _, failing := r.WriteFailing(); failing {
		t.Fatal("WriteFailing after a write succeeded")
	}
	if !strings.Contains(logs.String(), "writing clicks works again") {
		t.Fatalf("recovery not logged:\n%s", logs.String())
	}
	if got, want := r.Written()+r.Dropped(), int64(recorded); got != want {
		t.Fatalf("Written + Dropped = %d, want %d recorded", got, want)
	}
	if got, want := r.Pending(), 0; got != want {
		t.Fatalf("Pending = %d, want %d", got, want)
	}
	if got, want := store.Clicks(), testClicks(0, int(r.Written())); len(got) != len(want) || got[0].LinkID != want[0].LinkID || got[len(got)-1].LinkID != want[len(want)-1].LinkID {
		t.Fatalf("written %d clicks, want the oldest %d in order", len(got), len(want))
	}
}

// hotClick is testClick(i) of one of 100 links.
func hotClick(i int) link.Click {
	c := testClick(i)
	c.LinkID = fmt.Sprintf("l%d", i%100)
	return c
}

// TestRecorderWritesBacklogInParts: a backlog (built up while writes
// failed) is written in transactions of at most maxWrite clicks, so that
// neither a write nor a failed try costs memory in proportion to the
// backlog; a part that fails keeps itself and what follows, in order.
// The clicks are of 100 links, so that the bound by links
// (TestRecorderWritesFewLinksAPart) does not apply.
func TestRecorderWritesBacklogInParts(t *testing.T) {
	t.Parallel()
	store := &memStore{}
	r := NewRecorder(store, time.Hour, 0, discardLogger())
	r.SetQueueBytes(4 * (2*maxWrite + 5000) * clickBytes(&[]link.Click{testClick(0)}[0]))
	const n = 2*maxWrite + 5000
	var want []link.Click
	for i := range n {
		want = append(want, hotClick(i))
		r.Record(want[i])
	}
	store.setFail(func(call int) error {
		if call == 2 {
			return errDisk
		}
		return nil
	})
	if err := r.Flush(context.Background()); !errors.Is(err, errDisk) {
		t.Fatalf("Flush = %v, want %v", err, errDisk)
	}
	if got, want := r.Written(), int64(maxWrite); got != want {
		t.Fatalf("Written = %d, want the first part, %d", got, want)
	}
	if got, want := r.Pending(), n-maxWrite; got != want {
		t.Fatalf("Pending = %d, want %d", got, want)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("Flush = %v", err)
	}
	batches := store.Batches()
	for i, b := range batches {
		if len(b) > maxWrite {
			t.Fatalf("batch %d has %d clicks, more than %d", i, len(b), maxWrite)
		}
	}
	// The try after the failure wrote a small part first.
	if got, want := len(batches[1]), probeWrite; got != want {
		t.Fatalf("the first write after a failure had %d clicks, want %d", got, want)
	}
	if got := store.Clicks(); !equalClicks(got, want) {
		t.Fatalf("written %d clicks, want all %d in order", len(got), n)
	}
	if got := r.Pending(); got != 0 {
		t.Fatalf("Pending = %d, want 0", got)
	}
}

// TestRecorderWritesFewLinksAPart: a write's memory follows the links it
// touches, so a part of a write also ends at maxWriteLinks links. Each
// part holds as many clicks as both bounds allow: clicks spread over many
// links go in parts of maxWriteLinks links, clicks of a few hot links in
// parts of maxWrite clicks, a mix of both in between.
func TestRecorderWritesFewLinksAPart(t *testing.T) {
	t.Parallel()
	store := &memStore{}
	r := NewRecorder(store, time.Hour, 0, discardLogger())
	r.SetQueueBytes(50_000 * 4 * clickBytes(&[]link.Click{testClick(0)}[0]))
	var want []link.Click
	add := func(c link.Click) {
		want = append(want, c)
		r.Record(c)
	}
	for i := range 12_000 { // one click each of 12,000 links
		add(testClick(i))
	}
	for i := range 30_000 { // 30,000 clicks of 100 of them
		add(hotClick(i))
	}
	for i := range 3_000 { // then 3,000 more links
		add(testClick(20_000 + i))
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	batches := store.Batches()
	var sizes []int
	next := 0 // the first click after b
	for i, b := range batches {
		sizes = append(sizes, len(b))
		next += len(b)
		links := map[string]bool{}
		for _, c := range b {
			links[c.LinkID] = true
		}
		if len(b) > maxWrite || len(links) > maxWriteLinks {
			t.Errorf("batch %d: %d clicks of %d links, more than %d or %d", i, len(b), len(links), maxWrite, maxWriteLinks)
		}
		// A part ends at a bound, or with the clicks.
		if i < len(batches)-1 && len(b) < maxWrite && (len(links) < maxWriteLinks || links[want[next].LinkID]) {
			t.Errorf("batch %d: %d clicks of %d links ended before a bound", i, len(b), len(links))
		}
	}
	// 5,000 + 5,000 links; 2,000 links and 18,000 hot clicks (2,100
	// links); 12,000 hot clicks and 3,000 links (3,100).
	if want := []int{5000, 5000, 20_000, 15_000}; !slices.Equal(sizes, want) {
		t.Errorf("parts of %v clicks, want %v", sizes, want)
	}
	if got := store.Clicks(); !equalClicks(got, want) {
		t.Fatalf("written %d clicks, want all %d in order", len(got), len(want))
	}
}
