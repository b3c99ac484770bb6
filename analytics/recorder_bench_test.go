package analytics

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// BenchmarkRecordQueued measures what a redirect pays to queue a click
// as a browser sends it (a user agent of 110 bytes, one of a few; a
// referrer host; a link ID of the usual 26 bytes, one of 100,000 links)
// and what the click then holds in the queue (bytes/click, as counted
// against clicks.queue_bytes). The queue is flushed, off the clock,
// every 100,000 clicks.
//
//	go test ./analytics/ -run '^$' -bench RecordQueued -benchmem
func BenchmarkRecordQueued(b *testing.B) {
	const links, every = 100_000, 100_000
	ids := make([]string, links)
	for i := range ids {
		ids[i] = fmt.Sprintf("lnk_%022d", i)
	}
	uas := []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
	}
	refs := []string{"", "t.co", "www.google.com", "news.ycombinator.com"}
	store := &countStore{}
	r := NewRecorder(store, time.Hour, 0, discardLogger())
	r.SetQueueBytes(1 << 30)
	at := time.Now()
	var bytes, queued float64
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r.Record(link.Click{LinkID: ids[(i*7919)%links], WorkspaceID: "ws_0000000000000000000001", Time: at,
			Referrer: refs[i%len(refs)], UserAgent: uas[i%len(uas)], Addr: netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})})
		if (i+1)%every == 0 || i == b.N-1 {
			b.StopTimer()
			bytes += float64(r.PendingBytes())
			queued += float64(r.Pending())
			if err := r.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.StopTimer()
	b.ReportMetric(bytes/queued, "bytes/click")
	if r.Dropped() != 0 {
		b.Fatalf("%d clicks dropped", r.Dropped())
	}
}
