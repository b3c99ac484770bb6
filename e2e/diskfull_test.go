package e2e

import (
	"bufio"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestProcessDiskFull runs the real binary, then lowers its file size limit
// (RLIMIT_FSIZE) so that no write past the data file's first pages can
// succeed, as on a full disk: /healthz answers 503 with a reason and the
// metrics count every click still in memory and every failed write. Raising
// the limit again lets the held clicks be written, with none lost, and
// health comes back by itself.
func TestProcessDiskFull(t *testing.T) {
	t.Parallel()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Fatal("prlimit (util-linux) is needed to limit the server's file size: ", err)
	}
	p := startBoltChild(t, t.TempDir(), "20ms")
	c := p.client()
	key, id, alias := setupLink(c)
	pid := strconv.Itoa(p.cmd.Process.Pid)
	if out, err := exec.Command(prlimit, "--pid", pid, "--fsize=8192:unlimited").CombinedOutput(); err != nil {
		t.Fatalf("prlimit: %v: %s", err, out)
	}

	const clicks = 30
	for i := range clicks {
		if status, _, _ := c.call("GET", "/"+alias, "", ""); status != 302 {
			t.Fatalf("redirect %d while writes fail: %d", i, status)
		}
	}
	status, body := waitHealth(t, p.addr, http.StatusServiceUnavailable)
	if reason, _ := body["reason"].(string); !strings.Contains(reason, "writes") {
		t.Fatalf("health 503 without a reason about writes: %v", body)
	}
	// Health may turn on another write first (the key usage flush): wait
	// for the clicks' own failed write.
	m := scrapeMetrics(t, p.addr)
	for deadline := time.Now().Add(10 * time.Second); m["linkbolt_click_writes_failed_total"] < 1 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		m = scrapeMetrics(t, p.addr)
	}
	if got, want := m["linkbolt_clicks_pending"], float64(clicks); got != want {
		t.Fatalf("linkbolt_clicks_pending = %v while %d clicks wait, status %d", got, clicks, status)
	}
	if m["linkbolt_click_writes_failed_total"] < 1 {
		t.Fatalf("linkbolt_click_writes_failed_total = %v after failed writes", m["linkbolt_click_writes_failed_total"])
	}
	if m["linkbolt_clicks_dropped_total"] != 0 {
		t.Fatalf("clicks dropped: %v", m["linkbolt_clicks_dropped_total"])
	}

	if out, err := exec.Command(prlimit, "--pid", pid, "--fsize=unlimited:unlimited").CombinedOutput(); err != nil {
		t.Fatalf("prlimit: %v: %s", err, out)
	}
	waitHealth(t, p.addr, http.StatusOK)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := c.must("GET", "/v1/links/"+id, key, "", 200)["clicks"]
		if got == float64(clicks) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("clicks after the disk came back = %v, want %d\n%s", got, clicks, p.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m := scrapeMetrics(t, p.addr); m["linkbolt_clicks_pending"] != 0 {
		t.Fatalf("linkbolt_clicks_pending = %v after every click was written", m["linkbolt_clicks_pending"])
	}
}

// waitHealth polls /healthz until it answers want (10 s at most).
func waitHealth(t *testing.T, addr string, want int) (int, map[string]any) {
	t.Helper()
	c := client{t, "http://" + addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body, _ := c.call("GET", "/healthz", "", "")
		if status == want {
			return status, body
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz = %d %v, want %d", status, body, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// scrapeMetrics reads the linkbolt_ samples of /metrics.
func scrapeMetrics(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, "linkbolt_") {
			continue
		}
		name, _, _ = strings.Cut(name, "{") // the instance's label

		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", sc.Text(), err)
		}
		out[name] = v
	}
	return out
}

// TestProcessDiskFullAPIWrites: with no click traffic at all, an API change
// that cannot be saved is answered 503 store_unavailable with Retry-After
// and turns /healthz to 503 with a reason, and the next change saved
// turns it back.
func TestProcessDiskFullAPIWrites(t *testing.T) {
	t.Parallel()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Fatal("prlimit (util-linux) is needed to limit the server's file size: ", err)
	}
	p := startBoltChild(t, t.TempDir(), "20ms")
	c := p.client()
	key, _, _ := setupLink(c)
	pid := strconv.Itoa(p.cmd.Process.Pid)
	if out, err := exec.Command(prlimit, "--pid", pid, "--fsize=8192:unlimited").CombinedOutput(); err != nil {
		t.Fatalf("prlimit: %v: %s", err, out)
	}
	body := `{"destination_url":"https://example.com/` + strings.Repeat("x", 3000) + `"}`
	if status, out, h := c.call("POST", "/v1/links", key, body); status != http.StatusServiceUnavailable ||
		out["code"] != "store_unavailable" || h.Get("Retry-After") == "" {
		t.Fatalf("a link that cannot be saved: %d %v Retry-After %q", status, out, h.Get("Retry-After"))
	}
	_, h := waitHealth(t, p.addr, http.StatusServiceUnavailable)
	if reason, _ := h["reason"].(string); !strings.Contains(reason, "API") {
		t.Fatalf("health 503 without the reason: %v", h)
	}
	if out, err := exec.Command(prlimit, "--pid", pid, "--fsize=unlimited:unlimited").CombinedOutput(); err != nil {
		t.Fatalf("prlimit: %v: %s", err, out)
	}
	c.must("POST", "/v1/links", key, body, http.StatusCreated)
	waitHealth(t, p.addr, http.StatusOK)
}
