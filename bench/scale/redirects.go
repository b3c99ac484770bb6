package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// serveBaseline is the yardstick: a bare net/http handler answering a 302
// from a map of the same N codes and destinations as linkbolt holds, with
// no storage, no click recording and no routing. It runs in a process of
// its own (this program started with -baseline-serve), as linkbolt does.
func serveBaseline(addr string, n int) {
	m := make(map[string]string, n)
	for i := range n {
		m["m"+strconv.Itoa(i)] = destination(i)
	}
	log.Fatal(http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dest, ok := m[r.URL.Path[1:]]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Location", dest)
		w.WriteHeader(http.StatusFound)
	})))
}

// uniformCodes is the wrk script: GETs spread uniformly over /m0 ..
// /mN-1, each thread with a seed of its own (wrk's Lua states would
// otherwise all draw the same sequence, in every round).
const uniformCodes = `local n = tonumber(os.getenv("LINKBOLT_BENCH_N"))
local threads = 0
function setup(thread) thread:set("id", threads); threads = threads + 1 end
function init(args) math.randomseed(os.time() * 1009 + id * 7919) end
request = function() return wrk.format("GET", "/m" .. math.random(0, n - 1)) end
`

// skewedCodes is the wrk script of the skewed run: 90% of the GETs on
// the hottest 1% of the codes (/m0 .. /m(N/100-1)), the rest uniform over
// all of them.
const skewedCodes = `local n = tonumber(os.getenv("LINKBOLT_BENCH_N"))
local hot = math.max(1, math.floor(n / 100))
local threads = 0
function setup(thread) thread:set("id", threads); threads = threads + 1 end
function init(args) math.randomseed(os.time() * 1013 + id * 7919) end
request = function()
  if math.random() < 0.9 then return wrk.format("GET", "/m" .. math.random(0, hot - 1)) end
  return wrk.format("GET", "/m" .. math.random(0, n - 1))
end
`

// wrkRun is what one wrk run reports.
type wrkRun struct {
	rps      float64
	p99      time.Duration
	requests int64
	non2xx   int64
	sockErrs string
}

// round is one linkbolt run and one baseline run.
type round struct{ lb, base wrkRun }

// redirectLoad runs wrk against linkbolt and the baseline in turn, then
// waits for linkbolt to write the clicks and checks that each was counted.
// Memory is sampled from the first round until the clicks are written.
func redirectLoad(ctx context.Context, a *apiClient, srv *server, o options, dir string, r *results) error {
	script := filepath.Join(dir, "uniform_codes.lua")
	if err := os.WriteFile(script, []byte(uniformCodes), 0o600); err != nil {
		return err
	}
	baseAddr := fmt.Sprintf("127.0.0.1:%d", o.basePort)
	var err error
	if !o.skipBase {
		stopBase, err := startBaseline(ctx, baseAddr, o.n)
		if err != nil {
			return err
		}
		defer stopBase()
	}
	sampler := sampleMemory(srv.pid(), 250*time.Millisecond)
	r.wrkCommand = fmt.Sprintf("LINKBOLT_BENCH_N=%d wrk -t%d -c%d -d%s --latency -s %s URL", o.n, o.wrkThreads, o.wrkConns, o.duration, "uniform_codes.lua")
	for i := range o.rounds {
		var rd round
		// The order alternates too, so neither side always runs on a
		// machine warmed (or heated) by the other.
		first, second := &rd.base, &rd.lb
		firstURL, secondURL := "http://"+baseAddr, srv.base
		if i%2 == 1 {
			first, second = second, first
			firstURL, secondURL = secondURL, firstURL
		}
		// Each run starts with linkbolt idle: catching up with the last
		// round's clicks in the background would take CPU from the
		// baseline's run and flatter the ratio.
		if o.skipBase {
			first, second, secondURL = nil, &rd.lb, srv.base
		}
		if first != nil {
			waitIdle(ctx, a)
			if *first, err = runWrk(ctx, o, o.duration, script, firstURL); err != nil {
				return err
			}
		}
		waitIdle(ctx, a)
		if *second, err = runWrk(ctx, o, o.duration, script, secondURL); err != nil {
			return err
		}
		if rd.lb.non2xx > 0 || rd.base.non2xx > 0 {
			return fmt.Errorf("round %d: non-3xx answers: linkbolt %d, baseline %d (missing codes?)", i+1, rd.lb.non2xx, rd.base.non2xx)
		}
		r.rounds = append(r.rounds, rd)
		r.sent += rd.lb.requests
		if o.skipBase {
			logf("round %d: linkbolt %.0f req/s p99 %s", i+1, rd.lb.rps, ms(rd.lb.p99))
		} else {
			logf("round %d: linkbolt %.0f req/s p99 %s, baseline %.0f req/s p99 %s, ratio %.2f",
				i+1, rd.lb.rps, ms(rd.lb.p99), rd.base.rps, ms(rd.base.p99), rd.lb.rps/rd.base.rps)
		}
	}
	if o.skewFor > 0 {
		skewed := filepath.Join(dir, "skewed_codes.lua")
		if err := os.WriteFile(skewed, []byte(skewedCodes), 0o600); err != nil {
			return err
		}
		waitIdle(ctx, a)
		w, err := runWrk(ctx, o, o.skewFor, skewed, srv.base)
		if err != nil {
			return err
		}
		if w.non2xx > 0 {
			return fmt.Errorf("skewed run: %d non-3xx answers", w.non2xx)
		}
		r.skewed = &w
		r.sent += w.requests
		logf("skewed (90%% of GETs on 1%% of the links): linkbolt %.0f req/s p99 %s", w.rps, ms(w.p99))
	}
	r.heapAfterLoad = int64(a.metric(ctx, "go_memstats_heap_inuse_bytes"))
	if err := countClicks(ctx, a, r); err != nil {
		return err
	}
	r.memDuring = sampler()
	r.memAfter, _ = readStatus(srv.pid())
	return nil
}

// waitIdle waits until linkbolt holds no click in memory or in its click
// backlog (at most 10 minutes), and logs how long that took. /metrics
// unanswered is no answer: it asks again (a binary without a backlog has
// no backlog metric, which is 0).
func waitIdle(ctx context.Context, a *apiClient) {
	t := time.Now()
	for time.Since(t) < 10*time.Minute && ctx.Err() == nil {
		status, b, err := a.do(ctx, "GET", "/metrics", nil)
		if err == nil && status == http.StatusOK && metricValue(b, "linkbolt_clicks_pending") <= 0 && metricValue(b, "linkbolt_clicks_backlog") <= 0 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if d := time.Since(t); d > time.Second {
		logf("linkbolt caught up with the clicks of the last run in %.0f s", d.Seconds())
	}
}

// startBaseline runs this program as the baseline and waits until it
// answers.
func startBaseline(ctx context.Context, addr string, n int) (stop func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-baseline-serve", addr, "-n", strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	hc := &http.Client{Timeout: time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for t := time.Now(); time.Since(t) < time.Minute; time.Sleep(20 * time.Millisecond) {
		if ctx.Err() != nil {
			break
		}
		if resp, err := hc.Get("http://" + addr + "/m0"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusFound {
				return stop, nil
			}
		}
	}
	stop()
	return nil, errors.New("the baseline did not answer within a minute")
}

var (
	reRPS      = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	reP99      = regexp.MustCompile(`\s99%\s+([0-9.]+)(us|ms|s|m)\b`)
	reRequests = regexp.MustCompile(`(\d+) requests in`)
	reNon2xx   = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	reSocket   = regexp.MustCompile(`Socket errors: (.*)`)
)

func runWrk(ctx context.Context, o options, d time.Duration, script, url string) (wrkRun, error) {
	cmd := exec.CommandContext(ctx, "wrk", "-t"+strconv.Itoa(o.wrkThreads), "-c"+strconv.Itoa(o.wrkConns),
		"-d"+strconv.Itoa(int(d.Seconds()))+"s", "--latency", "-s", script, url)
	cmd.Env = append(os.Environ(), "LINKBOLT_BENCH_N="+strconv.Itoa(o.n))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return wrkRun{}, fmt.Errorf("wrk %s: %w: %s", url, err, out)
	}
	return parseWrk(string(out))
}

func parseWrk(out string) (wrkRun, error) {
	var w wrkRun
	m := reRPS.FindStringSubmatch(out)
	p := reP99.FindStringSubmatch(out)
	n := reRequests.FindStringSubmatch(out)
	if m == nil || p == nil || n == nil {
		return w, fmt.Errorf("unexpected wrk output: %s", out)
	}
	w.rps, _ = strconv.ParseFloat(m[1], 64)
	w.requests, _ = strconv.ParseInt(n[1], 10, 64)
	v, _ := strconv.ParseFloat(p[1], 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "m": time.Minute}[p[2]]
	w.p99 = time.Duration(v * float64(unit))
	if e := reNon2xx.FindStringSubmatch(out); e != nil {
		w.non2xx, _ = strconv.ParseInt(e[1], 10, 64)
	}
	if e := reSocket.FindStringSubmatch(out); e != nil {
		w.sockErrs = strings.TrimSpace(e[1])
	}
	return w, nil
}

// countClicks waits until linkbolt has written every click it took (the
// workspace's total over the last 24 hours unchanged for two reads two
// seconds apart, nothing pending in memory or in the click backlog) and
// reads the dropped counter.
func countClicks(ctx context.Context, a *apiClient, r *results) error {
	t := time.Now()
	last := int64(-1)
	for {
		var st struct {
			Totals struct{ Clicks int64 }
		}
		if err := a.call(ctx, "GET", "/v1/analytics/workspace?range=24h", nil, &st); err != nil {
			return fmt.Errorf("count clicks: %w", err)
		}
		if st.Totals.Clicks == last && a.metric(ctx, "linkbolt_clicks_pending") <= 0 && a.metric(ctx, "linkbolt_clicks_backlog") <= 0 {
			break
		}
		last = st.Totals.Clicks
		if time.Since(t) > 10*time.Minute {
			return errors.New("the clicks total still moved 10 minutes after the load")
		}
		time.Sleep(2 * time.Second)
	}
	r.counted = last
	r.countSecs = time.Since(t).Seconds()
	r.dropped = int64(a.metric(ctx, "linkbolt_clicks_dropped_total"))
	logf("redirects sent %s, clicks counted %s (unchanged %.0f s after the load), dropped %d", count(r.sent), count(r.counted), r.countSecs, r.dropped)
	return nil
}

// sampleMemory reads pid's memory every interval until the returned func
// is called, which returns the highest RssAnon and RssFile seen.
func sampleMemory(pid int, every time.Duration) (stop func() procMem) {
	var mu sync.Mutex
	var peak procMem
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if m, err := readStatus(pid); err == nil {
				mu.Lock()
				peak.rssAnon, peak.rssFile, peak.hwm = max(peak.rssAnon, m.rssAnon), max(peak.rssFile, m.rssFile), max(peak.hwm, m.hwm)
				mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() procMem {
		close(done)
		wg.Wait()
		return peak
	}
}

func ms(d time.Duration) string {
	f := float64(d) / float64(time.Millisecond)
	if f < 10 {
		return fmt.Sprintf("%.1f ms", f)
	}
	return fmt.Sprintf("%.0f ms", f)
}
