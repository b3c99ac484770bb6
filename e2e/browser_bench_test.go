package e2e

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// BenchmarkDashboardLinksPage measures what a person waits for when the
// Links page opens in a workspace of LINKBOLT_BENCH_LINKS links (100,000
// unless set): a fresh load of /app/links in Chromium until the table
// shows its 20 rows and the count of links. The API's own answer for that
// page is measured beside it. Run with
//
//	go test -run '^$' -bench DashboardLinksPage -benchtime 20x .
func BenchmarkDashboardLinksPage(b *testing.B) {
	n := 100_000
	if v := os.Getenv("LINKBOLT_BENCH_LINKS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	base, tok := seededDashboard(b, n)
	br := newBrowser(b, base)
	br.run("sign in",
		chromedp.Navigate(base+"/app/"),
		chromedp.WaitVisible(`#sign-in`),
		chromedp.SendKeys("#email", "admin@example.com"),
		chromedp.SendKeys("#password", "a long password"),
		chromedp.Click(`#sign-in button[type=submit]`),
		chromedp.WaitVisible(`#links tbody tr`))
	want := fmt.Sprintf("%d links", n)

	b.Run("browser", func(b *testing.B) {
		for b.Loop() {
			var rows int
			br.run("open the Links page",
				chromedp.Navigate(base+"/app/links"),
				chromedp.WaitVisible(`#links tbody tr`),
				chromedp.Poll(fmt.Sprintf(`document.querySelectorAll('#links tbody tr').length === 20 && document.querySelector('.pager').textContent.replace(/\D/g, '').endsWith(%q)`, strings.TrimSuffix(want, " links")), nil),
				chromedp.Evaluate(`document.querySelectorAll('#links tbody tr').length`, &rows))
			if rows != 20 {
				b.Fatalf("%d rows", rows)
			}
		}
	})
	for _, q := range []string{"limit=20", "limit=20&page=2500", "limit=20&search=example"} {
		b.Run("api "+q, func(b *testing.B) {
			for b.Loop() {
				req, _ := http.NewRequest("GET", base+"/v1/links?"+q, nil)
				req.Header.Set("Authorization", "Bearer "+tok)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("%s: %d", q, resp.StatusCode)
				}
			}
		})
	}
}

// seededDashboard starts the app with n links created through the API by
// 32 clients and returns its base URL and the admin's token.
func seededDashboard(b *testing.B, n int) (string, string) {
	b.Helper()
	browserPath(b)
	cfg := testConfig(b, "admin:\n  email: admin@example.com\n  password: a long password\nplans:\n  free: 0\n")
	base, _ := startApp(b, cfg, nil)
	c := client{b, base}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				body := fmt.Sprintf(`{"destination_url":"https://example.com/page/%d","tags":["t%d"]}`, i, i%50)
				req, _ := http.NewRequest("POST", base+"/v1/links", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+tok)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode != 201 {
						err = fmt.Errorf("create: %d", resp.StatusCode)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	b.Logf("%d links created in %v", n, time.Since(start).Round(time.Millisecond))
	return base, tok
}
