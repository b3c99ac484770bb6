package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// BenchmarkDeliveryThroughput delivers b.N link.clicked events, queued
// beforehand by the click recorder's path, to fast receivers on loopback
// with the default four workers, and reports deliveries per second. Each
// webhook has one delivery in flight at a time, so one webhook measures
// the latency of a round (request, recorded attempt, next claim) and
// several measure the pool.
func BenchmarkDeliveryThroughput(b *testing.B) {
	for _, hooks := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("webhooks=%d", hooks), func(b *testing.B) {
			e := newEnv(b)
			ctx := context.Background()
			var got atomic.Int64
			total := int64(b.N/hooks+1) * int64(hooks)
			done := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if got.Add(1) == total {
					close(done)
				}
			}))
			defer srv.Close()
			for range hooks {
				e.webhook(b, srv.URL, link.EventLinkClicked)
			}
			l := &link.Link{WorkspaceID: e.ws.ID, DestinationURL: "https://example.com/", Alias: "bench"}
			if err := storage.NewLinkService(e.db).CreateLink(ctx, l); err != nil {
				b.Fatal(err)
			}
			clicks := storage.NewClickService(e.db)
			clicks.Events = e.encoder
			for left := total / int64(hooks); left > 0; {
				n := min(left, 10_000)
				batch := make([]link.Click, n)
				for i := range batch {
					batch[i] = link.Click{LinkID: l.ID, WorkspaceID: e.ws.ID, Time: t0, Country: "DE", Device: "desktop"}
				}
				if _, err := clicks.RecordClicks(ctx, batch); err != nil {
					b.Fatal(err)
				}
				left -= n
			}

			d := e.dispatcher()
			d.Poll = 10 * time.Millisecond
			runCtx, cancel := context.WithCancel(ctx)
			stopped := make(chan error)
			b.ResetTimer()
			start := time.Now()
			go func() { stopped <- d.Run(runCtx) }()
			<-done
			elapsed := time.Since(start)
			b.StopTimer()
			cancel()
			if err := <-stopped; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(total)/elapsed.Seconds(), "deliveries/s")
		})
	}
}
