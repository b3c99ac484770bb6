package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserLinkVariants follows an A/B-split link as 40 different
// browsers, then reads the test on the link's analytics: one row a
// variant, in the link's order, with its destination, weight and the
// clicks the API counts for it.
func TestBrowserLinkVariants(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "clicks:\n  flush_interval: 10ms\n")
	l := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/","alias":"abtest","variants":[
		{"destination_url":"https://a.example/spring","weight":30},{"destination_url":"https://b.example/spring","weight":70}]}`, 201)
	id := l["id"].(string)
	sent := map[string]int{}
	const clicks = 40
	for i := 0; i < clicks; i++ {
		// Another browser version is another visitor (address and user agent).
		req, _ := http.NewRequest("GET", base+"/abtest", nil)
		req.Header.Set("User-Agent", fmt.Sprintf("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.%d.0 Safari/537.36", i))
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 302 {
			t.Fatalf("click %d: %d", i, res.StatusCode)
		}
		sent[res.Header.Get("Location")]++
	}
	var api map[string]any
	deadline := time.Now().Add(20 * time.Second)
	for {
		api = c.must("GET", "/v1/analytics/links/"+id+"?range=24h", tok, "", 200)
		if api["totals"].(map[string]any)["clicks"].(float64) == clicks {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API counts %v", api["totals"])
		}
		time.Sleep(10 * time.Millisecond)
	}
	want := map[string]float64{}
	for _, x := range api["top"].(map[string]any)["variants"].([]any) {
		m := x.(map[string]any)
		want[m["value"].(string)] = m["clicks"].(float64)
	}
	if want["1"] != float64(sent["https://a.example/spring"]) || want["2"] != float64(sent["https://b.example/spring"]) {
		t.Fatalf("variants %v, redirects %v", want, sent)
	}

	b := newBrowser(t, base)
	signIn(b, base)
	var rows []string
	b.run("link analytics",
		chromedp.Navigate(base+"/app/analytics?link="+id),
		chromedp.WaitVisible(`#top-variants tbody tr`),
		chromedp.Evaluate(`[...document.querySelectorAll('#top-variants tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim()).join('|'))`, &rows))
	wantRows := []string{
		fmt.Sprintf("1 https://a.example/springweight 30 %%|%d|", sent["https://a.example/spring"]),
		fmt.Sprintf("2 https://b.example/springweight 70 %%|%d|", sent["https://b.example/spring"]),
	}
	if len(rows) != 2 {
		t.Fatalf("rows %q", rows)
	}
	for i, w := range wantRows {
		if !strings.HasPrefix(rows[i], w) || !strings.HasSuffix(rows[i], "%") {
			t.Errorf("row %d: %q, want %q and a share", i, rows[i], w)
		}
	}
	b.screenshot("analytics-variants")

	// A link without variants shows no A/B test.
	plain := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/plain","alias":"plainlink"}`, 201)["id"].(string)
	var n int
	b.run("plain link analytics",
		chromedp.Navigate(base+"/app/analytics?link="+plain),
		chromedp.WaitVisible(`#an-clicks`),
		chromedp.Evaluate(`document.querySelectorAll('#top-variants').length`, &n))
	if n != 0 {
		t.Fatal("a link without variants shows an A/B test")
	}
}
