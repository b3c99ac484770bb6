package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The links of the benchmark: alias m<i>, a destination on one of 1,000
// hosts, and one link in 100 tagged with one of 100 tags, so that search
// has aliases, hosts and tags to find.
func linkBody(prefix string, i int) map[string]any {
	b := map[string]any{
		"destination_url": destination(i),
		"alias":           prefix + strconv.Itoa(i),
	}
	if i%100 == 0 {
		b["tags"] = []string{tagOf(i)}
	}
	return b
}

func destination(i int) string { return fmt.Sprintf("https://w%d.example.com/item/%d", i%1000, i) }

func tagOf(i int) string { return fmt.Sprintf("team-%02d", (i/100)%100) }

// createLinks creates the links <prefix>0 .. <prefix>(n-1) from o.clients
// concurrent clients and returns their IDs by index and the time taken. A
// link counts once its 201 (written after the commit) is read.
func createLinks(ctx context.Context, a *apiClient, o options, prefix string, n int) ([]string, float64, error) {
	logf("creating %s links (%s0 ..) through POST /v1/links from %d clients", count(int64(n)), prefix, o.clients)
	ids := make([]string, n)
	var next, done atomic.Int64
	var failed firstError
	var wg sync.WaitGroup
	start := time.Now()
	stopProgress := progress(func() string {
		d := done.Load()
		return fmt.Sprintf("  %s links, %.0f/s", count(d), float64(d)/time.Since(start).Seconds())
	})
	for range o.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for failed.get() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				id, err := createLink(ctx, a, linkBody(prefix, i))
				if err != nil {
					failed.set(err)
					return
				}
				ids[i] = id
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	stopProgress()
	if err := failed.get(); err != nil {
		return nil, 0, fmt.Errorf("create links: %w", err)
	}
	secs := time.Since(start).Seconds()
	logf("created %s links in %.1f s: %.0f/s", count(int64(n)), secs, float64(n)/secs)
	return ids, secs, nil
}

// seedBulk creates the links m0 .. mN-1 through POST /v1/links/bulk,
// 1,000 a request from o.bulkClients clients, and returns their IDs by
// index and the time taken; every item must be created.
func seedBulk(ctx context.Context, a *apiClient, o options) ([]string, float64, error) {
	logf("seeding %s links (m0 ..) through POST /v1/links/bulk, %d a request, %d clients", count(int64(o.n)), bulkSize, o.bulkClients)
	ids := make([]string, o.n)
	var next, done atomic.Int64
	var failed firstError
	var wg sync.WaitGroup
	start := time.Now()
	stopProgress := progress(func() string {
		d := done.Load()
		return fmt.Sprintf("  %s links, %.0f/s", count(d), float64(d)/time.Since(start).Seconds())
	})
	for range o.bulkClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for failed.get() == nil {
				from := int(next.Add(bulkSize) - bulkSize)
				if from >= o.n {
					return
				}
				to := min(from+bulkSize, o.n)
				ok, bad, msg, err := bulkRequest(ctx, a, "m", from, to, ids[from:to])
				if err == nil && bad > 0 {
					err = fmt.Errorf("%d of links m%d .. m%d refused, first: %s", bad, from, to-1, msg)
				}
				if err != nil {
					failed.set(err)
					return
				}
				done.Add(int64(ok))
			}
		}()
	}
	wg.Wait()
	stopProgress()
	if err := failed.get(); err != nil {
		return nil, 0, fmt.Errorf("seed links: %w", err)
	}
	secs := time.Since(start).Seconds()
	logf("seeded %s links in %.1f s: %.0f/s", count(int64(o.n)), secs, float64(o.n)/secs)
	return ids, secs, nil
}

// createLink creates one link, waiting out a busy server or a rate limit.
func createLink(ctx context.Context, a *apiClient, body map[string]any) (string, error) {
	in, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	for try := 0; ; try++ {
		status, b, err := a.do(ctx, "POST", "/v1/links", in)
		if err != nil {
			return "", err
		}
		if status == http.StatusCreated {
			var l struct{ ID string }
			if err := json.Unmarshal(b, &l); err != nil || l.ID == "" {
				return "", fmt.Errorf("POST /v1/links: an answer without an id: %s", snippet(b))
			}
			return l.ID, nil
		}
		if (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) && try < 100 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		return "", fmt.Errorf("POST /v1/links %s: %d %s", body["alias"], status, snippet(b))
	}
}

// bulkSize is the most links one bulk request takes.
const bulkSize = 1000

// errBulkAbsent says the binary has no bulk route.
var errBulkAbsent = errors.New("bulk route absent")

// bulkCreate creates o.bulkN more links (b0 ..) through POST
// /v1/links/bulk, 1,000 a request from o.bulkClients clients, or notes
// that the route is absent.
func bulkCreate(ctx context.Context, a *apiClient, o options, r *results) error {
	logf("creating %s links through POST /v1/links/bulk, %d a request, %d clients", count(int64(o.bulkN)), bulkSize, o.bulkClients)
	var next, done, itemErrs atomic.Int64
	var failed firstError
	var firstItemErr firstError
	var wg sync.WaitGroup
	start := time.Now()
	for range o.bulkClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for failed.get() == nil {
				from := int(next.Add(bulkSize) - bulkSize)
				if from >= o.bulkN {
					return
				}
				to := min(from+bulkSize, o.bulkN)
				ok, bad, msg, err := bulkRequest(ctx, a, "b", from, to, nil)
				if err != nil {
					failed.set(err)
					return
				}
				done.Add(int64(ok))
				if bad > 0 {
					itemErrs.Add(int64(bad))
					firstItemErr.set(errors.New(msg))
				}
			}
		}()
	}
	wg.Wait()
	if err := failed.get(); err != nil {
		if errors.Is(err, errBulkAbsent) {
			r.bulkAbsent = true
			logf("bulk: route absent")
			return nil
		}
		return fmt.Errorf("bulk: %w", err)
	}
	r.bulkN, r.bulkSecs, r.bulkItemErrors = done.Load(), time.Since(start).Seconds(), itemErrs.Load()
	r.bulkRate = float64(r.bulkN) / r.bulkSecs
	if err := firstItemErr.get(); err != nil {
		r.bulkFirstError = err.Error()
	}
	logf("bulk: %s links in %.2f s: %.0f/s, %d items refused", count(r.bulkN), r.bulkSecs, r.bulkRate, r.bulkItemErrors)
	return nil
}

// bulkRequest creates the links <prefix><from> .. <prefix><to-1> in one
// request and counts the items created and refused; ids, when not nil,
// takes the created links' IDs.
func bulkRequest(ctx context.Context, a *apiClient, prefix string, from, to int, ids []string) (ok, bad int, firstErr string, err error) {
	items := make([]map[string]any, 0, to-from)
	for i := from; i < to; i++ {
		items = append(items, linkBody(prefix, i))
	}
	in, err := json.Marshal(map[string]any{"links": items})
	if err != nil {
		return 0, 0, "", err
	}
	status, b, err := a.do(ctx, "POST", "/v1/links/bulk", in)
	if err != nil {
		return 0, 0, "", err
	}
	if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
		return 0, 0, "", errBulkAbsent
	}
	if status/100 != 2 {
		return 0, 0, "", fmt.Errorf("POST /v1/links/bulk: %d %s", status, snippet(b))
	}
	var out struct {
		Data []struct {
			Index int             `json:"index"`
			Link  json.RawMessage `json:"link"`
			Error json.RawMessage `json:"error"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return 0, 0, "", fmt.Errorf("POST /v1/links/bulk: %w: %s", err, snippet(b))
	}
	if len(out.Data) != to-from {
		return 0, 0, "", fmt.Errorf("POST /v1/links/bulk: %d results for %d links", len(out.Data), to-from)
	}
	for j, d := range out.Data {
		if len(d.Link) > 0 && string(d.Link) != "null" {
			ok++
			if ids != nil {
				var l struct{ ID string }
				if err := json.Unmarshal(d.Link, &l); err != nil || l.ID == "" || d.Index != j {
					return 0, 0, "", fmt.Errorf("POST /v1/links/bulk: item %d: no id: %s", j, snippet(d.Link))
				}
				ids[j] = l.ID
			}
			continue
		}
		bad++
		if firstErr == "" {
			firstErr = snippet(d.Error)
		}
	}
	return ok, bad, firstErr, nil
}

// progress logs line() every 10 seconds until the returned func is called.
func progress(line func() string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				logf("%s", line())
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// firstError keeps the first error of several goroutines.
type firstError struct {
	mu  sync.Mutex
	err error
}

func (f *firstError) set(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

func (f *firstError) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
