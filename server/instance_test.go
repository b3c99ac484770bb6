package server

import (
	"bufio"
	"strings"
	"testing"
)

// TestInstanceIDInHealthAndMetrics: an instance says its id in /healthz
// and labels every metric with it, so that the instances on one database
// tell apart behind a load balancer and in one Prometheus.
func TestInstanceIDInHealthAndMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Instance, c.LabelMetrics = "web-2:8080", true })
	if r := e.do("GET", "/healthz", "", "", 200); r.str("instance") != "web-2:8080" || r.str("status") != "ok" {
		t.Fatalf("/healthz = %s, want status ok of instance web-2:8080", r.raw)
	}
	r := e.request(newRequest("GET", "/metrics", "", ""))
	if r.status != 200 {
		t.Fatalf("/metrics: %d", r.status)
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(string(r.raw)))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		n++
		if !strings.Contains(line, `linkbolt_instance="web-2:8080"`) {
			t.Errorf("metric without the instance label: %s", line)
		}
	}
	if n < 20 {
		t.Fatalf("only %d samples in /metrics", n)
	}
}
