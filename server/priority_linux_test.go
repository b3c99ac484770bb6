package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// threadNice returns the nice value of thread tid of this process, and
// whether the thread exists.
func threadNice(t *testing.T, tid int) (nice int, alive bool) {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return 0, false // gone, or ending while it was read
	} else if err != nil {
		t.Fatal(err)
	}
	// "tid (comm) state ..." with nice the 19th field; comm may hold
	// spaces and parentheses, so count from the last ')'.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	nice, err = strconv.Atoi(fields[19-3])
	if err != nil {
		t.Fatalf("stat of thread %d: %q: %v", tid, stat, err)
	}
	return nice, true
}

// waitThreadEnd waits until thread tid has ended: the runtime ends a
// locked thread once its goroutine has returned, a little later. A thread
// still alive when the test's deadline nears has gone back to the pool.
func waitThreadEnd(t *testing.T, tid int) {
	t.Helper()
	deadline, bounded := t.Deadline()
	for {
		nice, alive := threadNice(t, tid)
		if !alive {
			return
		}
		if bounded && time.Until(deadline) < 10*time.Second {
			t.Fatalf("thread %d (nice %d) outlived its costly work", tid, nice)
		}
		time.Sleep(time.Millisecond)
	}
}

// Every class of costly work runs on a thread at nice 10 while the handler's
// own thread keeps its priority.
func TestCostlyWorkRunsOnNicedThread(t *testing.T) {
	e := newEnv(t)
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"nice"}`, 201).str("id")
	e.do("GET", "/nice", "", "", http.StatusFound)
	e.flush()

	type thread struct{ tid, nice int }
	var mu sync.Mutex
	threads := map[string][]thread{}
	e.srv.costly.working = func(class string) {
		tid := syscall.Gettid()
		nice, _ := threadNice(t, tid)
		mu.Lock()
		threads[class] = append(threads[class], thread{tid, nice})
		mu.Unlock()
	}

	// The handlers run on this goroutine, held on its thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self := syscall.Gettid()
	before, _ := threadNice(t, self)
	reqs := costlyRequests(e, id)
	for path := range reqs {
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, newRequest("GET", path, e.adminToken, ""))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d: %s", path, rec.Code, rec.Body)
		}
	}
	if after, _ := threadNice(t, self); after != before {
		t.Fatalf("the handler's thread went from nice %d to %d", before, after)
	}

	want := map[string]int{}
	for _, class := range reqs {
		want[class]++
	}
	for class, n := range want {
		if got := len(threads[class]); got != n {
			t.Errorf("%s: %d requests worked through Server.work, want %d", class, got, n)
		}
		for _, th := range threads[class] {
			if th.tid == self {
				t.Errorf("%s: the work ran on the handler's thread", class)
			}
			if th.nice != costlyNice {
				t.Errorf("%s: the work ran at nice %d, want %d", class, th.nice, costlyNice)
			}
		}
	}
}

// A niced thread that has had no work for its linger ends, rather than go
// back to the runtime to run other goroutines (redirects) at low priority.
func TestNicedThreadEndsWhenIdle(t *testing.T) {
	p := &nicedThreads{linger: 0, jobs: make(chan func())}
	var tid, nice int
	err := p.run(func() error {
		tid = syscall.Gettid()
		nice, _ = threadNice(t, tid)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if nice != costlyNice {
		t.Fatalf("the work ran at nice %d, want %d", nice, costlyNice)
	}
	waitThreadEnd(t, tid)
}

// lowPriority hands back the work's error, and raises its panics again on
// the caller's goroutine: http.ErrAbortHandler as itself (the server cuts
// the connection), anything else with the work's stack.
func TestLowPriorityCarriesErrorsAndPanics(t *testing.T) {
	errWork := errors.New("work failed")
	if got := lowPriority(func() error { return errWork }); got != errWork {
		t.Fatalf("lowPriority = %v, want the work's error", got)
	}
	recovered := func(work func() error) (v any) {
		defer func() { v = recover() }()
		_ = lowPriority(work)
		return nil
	}
	if got := recovered(func() error { panic(http.ErrAbortHandler) }); got != http.ErrAbortHandler {
		t.Fatalf("panic = %v, want http.ErrAbortHandler", got)
	}
	got := fmt.Sprint(recovered(func() error { panic("boom") }))
	if !strings.HasPrefix(got, "boom [in costly work: ") || !strings.Contains(got, "TestLowPriorityCarriesErrorsAndPanics") {
		t.Fatalf("panic = %.200q, want boom with the work's stack", got)
	}
}

// ReserveCostlyProcs adds the gate's slots to GOMAXPROCS once, so the
// processors niced threads hold come on top of one per core, and the
// default number of slots still counts the processors there were before.
// GOMAXPROCS set in the environment stays as it is.
func TestReserveCostlyProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	if baseProcs.Load() != 0 {
		before = int(baseProcs.Load()) // an earlier test of this process reserved them
	}
	slots := max(1, before/2)
	wantProcs := before + slots
	if os.Getenv("GOMAXPROCS") != "" {
		wantProcs = before
	}
	if got := ReserveCostlyProcs(0); got != slots {
		t.Fatalf("ReserveCostlyProcs(0) = %d slots, want %d", got, slots)
	}
	if got := runtime.GOMAXPROCS(0); got != wantProcs {
		t.Fatalf("GOMAXPROCS = %d, want %d", got, wantProcs)
	}
	if got := ReserveCostlyProcs(3); got != 3 {
		t.Fatalf("ReserveCostlyProcs(3) = %d slots, want 3", got)
	}
	if got := runtime.GOMAXPROCS(0); got != wantProcs {
		t.Fatalf("GOMAXPROCS = %d after a second call, want %d as after the first", got, wantProcs)
	}
	if got := defaultCostlySlots(); got != slots {
		t.Fatalf("defaultCostlySlots = %d once processors were added, want %d", got, slots)
	}
}
