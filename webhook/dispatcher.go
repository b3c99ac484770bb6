package webhook

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbolt/linkbolt/internal/faultlog"
	"github.com/linkbolt/linkbolt/link"
)

// Defaults of the Dispatcher's fields.
const (
	DefaultWorkers = 4
	DefaultPoll    = time.Second
	// DefaultBackoff is the ceiling of the first retry's delay; it doubles
	// with each attempt of a delivery up to DefaultMaxBackoff.
	DefaultBackoff    = 10 * time.Second
	DefaultMaxBackoff = time.Hour
	// DefaultRetryFor is how long a delivery is retried after it was
	// queued.
	DefaultRetryFor = 24 * time.Hour
	// DefaultMaxFailures is the number of consecutive failed attempts, of
	// any of a webhook's deliveries, that disables the webhook.
	DefaultMaxFailures = 20
	// DefaultRunLength is how many of a webhook's due deliveries a worker
	// sends one after another and records in one write.
	DefaultRunLength = 64
	// DefaultRunTime is how long a run may go on: no delivery of it starts
	// later, so a slow receiver's successes are not held unrecorded long.
	DefaultRunTime = time.Second
)

const (
	// maxResponseRead is how much of an answer's body is read (and
	// discarded), so a connection can be reused without reading a huge
	// answer.
	maxResponseRead = 4 << 10
	// maxResponseKept is how much of a failed answer's body is kept in
	// the delivery's LastError.
	maxResponseKept = 200
)

// Dispatcher sends the due deliveries of the outbox and records each
// attempt. Deliveries go out at least once: one is taken out of its
// webhook's queue only once its success (or its giving up) is recorded,
// so a dispatcher stopped mid-delivery, or a process killed, sends it
// again on the next run. Each webhook has at most one delivery in flight
// and its queue goes in order, so a receiver sees a webhook's events in
// the order they were written, except that a delivery retried by hand goes
// to the end; a slow or dead receiver holds back its own webhook only.
//
// A worker takes a run of a webhook's due deliveries (up to RunLength, the
// head of its queue first), sends them one after another, stops at the
// first failure, and records the run's attempts in one write: one commit
// per run, not per delivery. A failure leaves the rest of the run pending
// and untried, behind the failed head. The requests are the same as one
// at a time; only their recording is deferred to the end of the run, so a
// crash mid-run sends the run's delivered events again (at least once).
//
// The retry rule: an attempt succeeds on a 2xx answer. Anything else (a
// 3xx, since redirects are not followed, a 4xx or 5xx, a connection error,
// no answer within Timeout) is a failure. After a failure at time t of
// the delivery's attempt n (counted since it was queued) and the webhook's
// f-th consecutive failure (across its deliveries, reset by a success or
// by enabling the webhook):
//
//   - if t ≥ QueuedAt + RetryFor (24 h), the delivery fails and the webhook
//     is disabled with the reason "disabled after 24 h of failed
//     deliveries: <last error>";
//   - else if f ≥ MaxFailures (20), the delivery fails and the webhook is
//     disabled with the reason "disabled after 20 consecutive failed
//     deliveries: <last error>";
//   - else the delivery is retried after a delay drawn uniformly from
//     [1 s, min(Backoff·2^(n−1), MaxBackoff)] (full jitter; 10 s doubling,
//     capped at 1 h), but no later than QueuedAt + RetryFor, so the last
//     try falls on the deadline.
//
// A disabled webhook keeps its pending deliveries; they go out, in order,
// once it is enabled again. With the default numbers a receiver that is
// down disables its webhook after 20 failures, about 6 hours on average
// (at most about 11.5 hours). Since a webhook's failures are those of its
// queue's head, the 24-hour limit binds only with MaxFailures raised (at
// about 55 it binds for a dead receiver) or after a webhook is re-enabled:
// its failures start from zero but its oldest deliveries keep their
// deadline, so one that fails again past it disables the webhook again.
type Dispatcher struct {
	// Store keeps the outbox.
	Store link.WebhookService
	// Now is the clock of the retry schedule and the signatures' time;
	// nil means time.Now.
	Now func() time.Time
	// Client sends the requests; nil means NewClient(false).
	Client *http.Client
	// Workers is the number of deliveries in flight at once, of distinct
	// webhooks; zero means DefaultWorkers.
	Workers int
	// Poll is how often Run looks for due deliveries when not kicked;
	// zero means DefaultPoll.
	Poll time.Duration
	// Logger receives failed attempts and disabled webhooks; nil means
	// slog.Default().
	Logger *slog.Logger
	// Timeout bounds one request, on top of the client's own timeouts;
	// zero means RequestTimeout.
	Timeout time.Duration
	// The retry rule (see above); zero means the default.
	Backoff     time.Duration
	MaxBackoff  time.Duration
	RetryFor    time.Duration
	MaxFailures int
	// Jitter returns a random duration in [0, d]; nil means uniform.
	Jitter func(d time.Duration) time.Duration
	// RunLength is the most deliveries of one webhook a worker sends
	// before it records them; zero means DefaultRunLength, 1 one at a
	// time.
	RunLength int
	// RunTime is how long after a run's start its last delivery may start;
	// zero means DefaultRunTime.
	RunTime time.Duration

	initOnce sync.Once
	// claimLog logs failures to read due deliveries once per episode.
	claimLog *faultlog.Log
	kick     chan struct{}

	mu    sync.Mutex
	busy  map[string]bool   // webhooks with a delivery in flight
	turns map[string]uint64 // the claim each webhook was last served in
	claim uint64
	// ends counts finished deliveries; ended holds, for each webhook, the
	// count when its last delivery finished. A read of the due deliveries
	// begun before that may hold the finished delivery as still due.
	ends  uint64
	ended map[string]uint64

	failedAttempts   atomic.Int64
	failedDeliveries atomic.Int64
}

// FailedAttempts returns the number of attempts that failed (an error or
// an answer other than 2xx) since the dispatcher started.
func (d *Dispatcher) FailedAttempts() int64 { return d.failedAttempts.Load() }

// FailedDeliveries returns the number of deliveries given up since the
// dispatcher started: retried for too long, or their webhook disabled.
func (d *Dispatcher) FailedDeliveries() int64 { return d.failedDeliveries.Load() }

func (d *Dispatcher) init() {
	d.initOnce.Do(func() {
		d.kick = make(chan struct{}, 1)
		d.claimLog = &faultlog.Log{Logger: d.logger(), Now: d.now}
		d.busy = map[string]bool{}
		d.turns = map[string]uint64{}
		d.ended = map[string]uint64{}
		if d.Client == nil {
			d.Client = NewClient(false)
		}
	})
}

// Kick wakes Run to look for due deliveries now, as when an event was
// just written. It never blocks.
func (d *Dispatcher) Kick() {
	d.init()
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

func (d *Dispatcher) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Dispatcher) logger() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.Default()
}

func orDefault[T cmp.Ordered](v, def T) T {
	var zero T
	if v <= zero {
		return def
	}
	return v
}

// Run sends due deliveries until ctx is done: it looks for them every
// Poll, when kicked, and whenever a delivery finishes, and sends them on up
// to Workers goroutines. When ctx is done it stops the requests in flight,
// without recording them (they stay pending and are sent again by the next
// run), waits for its goroutines and returns nil.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.init()
	workers := orDefault(d.Workers, DefaultWorkers)
	poll := orDefault(d.Poll, DefaultPoll)
	var wg sync.WaitGroup
	defer wg.Wait()
	var mu sync.Mutex
	running := 0
	timer := time.NewTimer(poll)
	defer timer.Stop()
	for {
		mu.Lock()
		free := workers - running
		mu.Unlock()
		if free > 0 {
			ds, err := d.claimDue(ctx, free)
			if err != nil && ctx.Err() == nil {
				// Once when the store fails, then at most once a minute:
				// a lost database must not write a line every poll.
				d.claimLog.Fail("webhooks: reading due deliveries failed; retried every poll", err)
			} else if err == nil {
				d.claimLog.OK("webhooks: reading due deliveries works again")
			}
			for _, dl := range ds {
				mu.Lock()
				running++
				mu.Unlock()
				wg.Add(1)
				go func() {
					defer wg.Done()
					d.deliver(ctx, dl)
					mu.Lock()
					running--
					mu.Unlock()
					d.Kick()
				}()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-d.kick:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(poll)
	}
}

// RunOnce sends what is due now, at most one run of deliveries per
// webhook (see RunLength) and Workers webhooks at a time, records the
// attempts, and returns the number of deliveries it tried. Run does the
// same continuously; tests drive a dispatcher step by step with RunOnce
// and a clock they move.
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	d.init()
	ds, err := d.claimDue(ctx, 0)
	if err != nil {
		return 0, err
	}
	sem := make(chan struct{}, orDefault(d.Workers, DefaultWorkers))
	var wg sync.WaitGroup
	var mu sync.Mutex
	tried := 0
	for _, dl := range ds {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			n := d.deliver(ctx, dl)
			mu.Lock()
			tried += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	return tried, ctx.Err()
}

// claimDue returns up to max (0: any number) due deliveries of webhooks
// with none in flight, and marks those webhooks busy. The webhooks served
// least recently come first, so a few busy webhooks cannot starve the
// others when workers are short.
func (d *Dispatcher) claimDue(ctx context.Context, max int) ([]*link.Delivery, error) {
	d.mu.Lock()
	since := d.ends
	d.mu.Unlock()
	ds, err := d.Store.DueDeliveries(ctx, d.now(), 0)
	if err != nil {
		return nil, err
	}
	var unsent []string // claimed by the read, not sent now
	defer func() {
		for _, id := range unsent {
			d.release(context.WithoutCancel(ctx), id)
		}
	}()
	d.mu.Lock()
	defer d.mu.Unlock()
	// Busy webhooks wait (their claim is their run's); so do those whose
	// delivery finished during the read, which may have seen it still due
	// (the finish kicks Run).
	ds = slices.DeleteFunc(ds, func(dl *link.Delivery) bool {
		if d.busy[dl.WebhookID] {
			return true
		}
		if d.ended[dl.WebhookID] > since {
			unsent = append(unsent, dl.WebhookID)
			return true
		}
		return false
	})
	slices.SortStableFunc(ds, func(a, b *link.Delivery) int { return cmp.Compare(d.turns[a.WebhookID], d.turns[b.WebhookID]) })
	if max > 0 && len(ds) > max {
		for _, dl := range ds[max:] {
			unsent = append(unsent, dl.WebhookID)
		}
		ds = ds[:max]
	}
	d.claim++
	for _, dl := range ds {
		d.busy[dl.WebhookID] = true
		d.turns[dl.WebhookID] = d.claim
	}
	if len(d.turns) > 4*len(d.busy)+1024 { // forget webhooks long gone
		for id, turn := range d.turns {
			if turn+1024 < d.claim {
				delete(d.turns, id)
				delete(d.ended, id)
			}
		}
	}
	return ds, nil
}

// deliver sends a run of the claimed delivery's webhook, head (the head of
// its queue when claimed) first, records the attempts in one write, and
// returns the number of deliveries it tried.
func (d *Dispatcher) deliver(ctx context.Context, head *link.Delivery) int {
	defer func() {
		d.release(context.WithoutCancel(ctx), head.WebhookID)
		d.mu.Lock()
		delete(d.busy, head.WebhookID)
		d.ends++
		d.ended[head.WebhookID] = d.ends
		d.mu.Unlock()
	}()
	log := d.logger().With("webhook", head.WebhookID)
	wh, err := d.Store.FindWebhookByID(ctx, head.WorkspaceID, head.WebhookID)
	if err != nil {
		if link.ErrorCode(err) != link.ENOTFOUND && ctx.Err() == nil { // a deleted webhook's delivery is gone with it
			log.Error("webhooks: read webhook", "err", err)
		}
		return 0
	}
	if !wh.Enabled {
		return 0 // disabled meanwhile: its queue waits
	}
	run := []*link.Delivery{head}
	if n := orDefault(d.RunLength, DefaultRunLength); n > 1 {
		ds, err := d.Store.NextDeliveries(ctx, head.WebhookID, d.now(), n)
		if err != nil {
			if link.ErrorCode(err) != link.ENOTFOUND && ctx.Err() == nil {
				log.Error("webhooks: read due deliveries", "err", err)
			}
			return 0
		}
		if len(ds) == 0 || ds[0].ID != head.ID {
			return 0 // the queue changed since the claim: the next claim sees it
		}
		run = ds
	}

	recs := make([]link.AttemptRecord, 0, len(run))
	budget := orDefault(d.RunTime, DefaultRunTime)
	start := time.Now()
	failures := wh.ConsecutiveFailures
	for i, dl := range run {
		if i > 0 && (ctx.Err() != nil || time.Since(start) >= budget) {
			break // the rest stays pending for the next run
		}
		a, stopped := d.send(ctx, wh, dl)
		if stopped {
			break // not recorded: sent again by the next run
		}
		next, disable := d.nextStep(failures, dl, a)
		recs = append(recs, link.AttemptRecord{Delivery: dl, Attempt: a, Next: next, Disable: disable})
		if a.Error != "" {
			break // the rest waits behind the failed head, untried
		}
		failures = 0
	}
	if len(recs) == 0 {
		return 0
	}
	if recs[len(recs)-1].Attempt.Error != "" {
		d.failedAttempts.Add(1)
	}
	// Finished requests are recorded even if ctx is done by now.
	if err := d.Store.RecordAttempts(context.WithoutCancel(ctx), recs); err != nil {
		if link.ErrorCode(err) != link.ENOTFOUND {
			log.Error("webhooks: record attempts", "err", err, "deliveries", len(recs))
		}
		return len(recs)
	}
	last := recs[len(recs)-1]
	a, dl := last.Attempt, last.Delivery
	log = log.With("delivery", dl.ID, "event", dl.EventType)
	switch {
	case last.Disable != "":
		d.failedDeliveries.Add(1)
		log.Warn("webhooks: webhook disabled", "reason", last.Disable)
	case a.Error != "" && last.Next != nil:
		log.Info("webhooks: delivery failed, will retry", "attempt", dl.Attempts, "err", a.Error, "next_attempt_at", last.Next)
	case a.Error != "":
		d.failedDeliveries.Add(1)
		log.Warn("webhooks: delivery failed, given up", "attempt", dl.Attempts, "err", a.Error)
	}
	return len(recs)
}

// Releaser is what a store shared by several instances does besides
// link.WebhookService: its DueDeliveries claims the webhooks it returns
// for this process (another instance reading at once gets others), and
// ReleaseDelivery gives a claim up once the run is recorded, or found
// with nothing to send, so that the queue's next deliveries may go from
// any instance at once. A store of one process (bbolt) claims nothing:
// the dispatcher's own bookkeeping keeps one run per webhook in flight.
type Releaser interface {
	ReleaseDelivery(ctx context.Context, webhookID string) error
}

// release gives up the store's claim of the webhook's queue, when the
// store claims. A failure is logged: the claim then ends by itself.
func (d *Dispatcher) release(ctx context.Context, webhookID string) {
	r, ok := d.Store.(Releaser)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := r.ReleaseDelivery(ctx, webhookID); err != nil {
		d.logger().Warn("webhooks: giving up the claim of a webhook's queue failed; it ends by itself", "webhook", webhookID, "err", err)
	}
}

// send makes one attempt. stopped reports that ctx was done before the
// request finished: the attempt says nothing about the receiver.
func (d *Dispatcher) send(ctx context.Context, wh *link.Webhook, dl *link.Delivery) (a link.Attempt, stopped bool) {
	timeout := orDefault(d.Timeout, RequestTimeout)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a.At = d.now()
	secrets := []string{wh.Secret}
	if wh.PreviousSecret != "" && wh.PreviousSecretExpiresAt != nil && a.At.Before(*wh.PreviousSecretExpiresAt) {
		secrets = append(secrets, wh.PreviousSecret)
	}
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, wh.URL, bytes.NewReader(dl.Payload))
	if err != nil {
		a.Error = "bad URL: " + err.Error()
		return a, false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(HeaderEvent, dl.EventType)
	req.Header.Set(HeaderDelivery, dl.ID)
	req.Header.Set(HeaderSignature, SignatureHeader(secrets, a.At, dl.Payload))

	start := time.Now()
	resp, err := d.Client.Do(req)
	var head []byte
	if err == nil {
		var buf bytes.Buffer
		_, rerr := io.Copy(&buf, io.LimitReader(resp.Body, maxResponseRead))
		resp.Body.Close()
		head = buf.Bytes()[:min(buf.Len(), maxResponseKept)]
		if rerr != nil && resp.StatusCode/100 == 2 {
			err = rerr // a 2xx whose body broke off: not a success
		}
	}
	a.Duration = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			return a, true
		}
		if resp != nil {
			a.ResponseCode = resp.StatusCode
		}
		a.Error = describe(err, req.URL.Hostname(), rctx, timeout)
		return a, false
	}
	a.ResponseCode = resp.StatusCode
	switch {
	case resp.StatusCode/100 == 2:
	case resp.StatusCode/100 == 3:
		a.Error = fmt.Sprintf("HTTP %d: redirect to %q not followed", resp.StatusCode, resp.Header.Get("Location"))
	default:
		a.Error = fmt.Sprintf("HTTP %d", resp.StatusCode)
		if s := printable(head); s != "" {
			a.Error += ": " + s
		}
	}
	return a, false
}

// describe turns a request error into the delivery log's words, without
// repeating the URL and without the addresses a name resolves to or the
// resolver's (the log is the workspace's to read; see describeDialError).
func describe(err error, host string, rctx context.Context, timeout time.Duration) string {
	if errors.Is(rctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Sprintf("no answer within %s", timeout)
		}
		err = ue.Err
	}
	if msg, ok := describeDialError(host, err); ok {
		return msg
	}
	return scrubAddrs(err.Error(), host)
}

// printable returns b as one line of valid UTF-8.
func printable(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// nextStep applies the retry rule (see Dispatcher) to a finished attempt
// of a webhook with failures consecutive failures before it: nothing after
// a success; else a retry at next, or the reason to disable the webhook.
func (d *Dispatcher) nextStep(failures int, dl *link.Delivery, a link.Attempt) (next *time.Time, disable string) {
	if a.Error == "" {
		return nil, ""
	}
	retryFor := orDefault(d.RetryFor, DefaultRetryFor)
	queued := dl.QueuedAt
	if queued.IsZero() {
		queued = dl.CreatedAt
	}
	deadline := queued.Add(retryFor)
	if !a.At.Before(deadline) {
		return nil, fmt.Sprintf("disabled after %s of failed deliveries: %s", formatSpan(retryFor), a.Error)
	}
	if failures, max := failures+1, orDefault(d.MaxFailures, DefaultMaxFailures); failures >= max {
		return nil, fmt.Sprintf("disabled after %d consecutive failed deliveries: %s", failures, a.Error)
	}
	at := a.At.Add(d.RetryDelay(dl.Attempts + 1))
	if at.After(deadline) {
		at = deadline
	}
	return &at, ""
}

// RetryDelay returns the delay before the retry that follows a delivery's
// attempt n (1 for the first): drawn uniformly from [1 s, ceiling] with
// ceiling = min(Backoff·2^(n−1), MaxBackoff).
func (d *Dispatcher) RetryDelay(n int) time.Duration {
	base := orDefault(d.Backoff, DefaultBackoff)
	ceiling := orDefault(d.MaxBackoff, DefaultMaxBackoff)
	if n < 1 {
		n = 1
	}
	if shift := n - 1; shift < 32 && base<<shift > 0 && base<<shift < ceiling {
		ceiling = base << shift
	}
	jitter := d.Jitter
	if jitter == nil {
		jitter = func(d time.Duration) time.Duration { return rand.N(d + 1) }
	}
	return max(jitter(ceiling), time.Second)
}

// formatSpan writes whole hours as "24 h", anything else as Go does.
func formatSpan(d time.Duration) string {
	if d >= time.Hour && d%time.Hour == 0 {
		return fmt.Sprintf("%d h", d/time.Hour)
	}
	return d.String()
}
