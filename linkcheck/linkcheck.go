// Package linkcheck checks the destinations of links in the background,
// for the workspaces that turn it on (link.Workspace.DestinationChecks):
// it claims due links from the store, asks each destination with HEAD
// (then GET where HEAD is refused) through the webhooks' guarded HTTP
// client, at most one request at a time per host with a polite gap
// between them, and records the result, which turns a link broken after
// link.CheckFailuresBroken failures in a row (the store then writes the
// link.broken event, and link.fixed when it answers again).
package linkcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/linkbolt/linkbolt/internal/faultlog"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/webhook"
)

// Defaults of Config (the link_checks section of the configuration).
const (
	DefaultInterval      = 24 * time.Hour
	DefaultRetryInterval = time.Hour
	DefaultConcurrency   = 4
	DefaultHostGap       = 2 * time.Second
	DefaultTimeout       = 10 * time.Second
	DefaultPoll          = time.Minute
	DefaultBatch         = 100
	// MaxRedirects bounds the redirects a check follows.
	MaxRedirects = 10
	// maxBody bounds what a GET reads of an answer.
	maxBody = 4 << 10
	// lease is how long a claimed link stays claimed: a checker that
	// stops without saving leaves its links to others after it.
	lease = time.Hour
)

// Config sets how checks run.
type Config struct {
	// Interval is the time between checks of a link whose destination
	// answered (and of a broken one).
	Interval time.Duration
	// RetryInterval is the time to the next check after a failure that
	// does not make the link broken yet.
	RetryInterval time.Duration
	// Concurrency bounds the hosts asked at once; 0 turns checks off.
	Concurrency int
	// HostGap is the least time between two requests to the same host.
	HostGap time.Duration
	// Timeout bounds a request: connection, redirects aside, answer; a
	// whole check takes at most checkBudget times it.
	Timeout time.Duration
	// Poll is how often the checker looks for due links.
	Poll time.Duration
	// Batch is how many due links one claim takes.
	Batch int
}

func or[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Checker checks due destinations; Run does it until its context ends.
type Checker struct {
	Store  link.LinkCheckService
	Client *http.Client // webhook.NewClient: special addresses refused unless allowed
	Config Config
	// UserAgent is sent with every request.
	UserAgent string
	Now       func() time.Time
	Logger    *slog.Logger

	once     sync.Once
	claimLog *faultlog.Log
	mu       sync.Mutex
	lastAsk  map[string]time.Time // host → time of the last request to it
}

func (c *Checker) init() {
	c.once.Do(func() {
		if c.Now == nil {
			c.Now = time.Now
		}
		if c.Logger == nil {
			c.Logger = slog.Default()
		}
		if c.Client == nil {
			c.Client = webhook.NewClient(false)
		}
		c.claimLog = &faultlog.Log{Logger: c.Logger, Now: c.Now}
		c.lastAsk = map[string]time.Time{}
	})
}

// Run checks due links every Poll until ctx ends (at once when a claim
// was full), then waits for the checks in flight, whose results are
// dropped: their links are checked again after the lease.
func (c *Checker) Run(ctx context.Context) {
	c.init()
	if c.Config.Concurrency <= 0 {
		return
	}
	poll := or(c.Config.Poll, DefaultPoll)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		n, err := c.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			c.claimLog.Fail("link checks: claiming due links failed; retried every poll", err)
		} else if err == nil {
			c.claimLog.OK("link checks: claiming due links works again")
		}
		next := poll
		if n >= or(c.Config.Batch, DefaultBatch) {
			next = 0
		}
		timer.Reset(next)
	}
}

// RunOnce claims the links due now (at most Batch), checks them, at most
// Concurrency hosts at a time and one request at a time per host, records
// the results, and returns how many links it checked. Tests drive a
// checker with it and a clock they move.
func (c *Checker) RunOnce(ctx context.Context) (int, error) {
	c.init()
	targets, err := c.Store.ClaimDueLinkChecks(ctx, c.Now(), or(c.Config.Batch, DefaultBatch), lease)
	if err != nil || len(targets) == 0 {
		return 0, err
	}
	byHost := map[string][]*link.LinkCheckTarget{}
	var hosts []string
	for _, t := range targets {
		h := hostOf(t.DestinationURL)
		if _, ok := byHost[h]; !ok {
			hosts = append(hosts, h)
		}
		byHost[h] = append(byHost[h], t)
	}
	sem := make(chan struct{}, or(c.Config.Concurrency, DefaultConcurrency))
	var wg sync.WaitGroup
	for _, h := range hosts {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			for _, t := range byHost[h] {
				if ctx.Err() != nil {
					return
				}
				c.checkOne(ctx, h, t)
			}
		}()
	}
	wg.Wait()
	return len(targets), ctx.Err()
}

// checkOne checks one claimed link after the host's gap, and saves the
// result.
func (c *Checker) checkOne(ctx context.Context, host string, t *link.LinkCheckTarget) {
	if !c.waitHost(ctx, host) {
		return
	}
	r := c.Check(ctx, t.DestinationURL)
	if ctx.Err() != nil {
		return // stopping: not a fault of the destination
	}
	check := Next(&t.Previous, r)
	check.LinkID, check.WorkspaceID, check.DestinationURL = t.LinkID, t.WorkspaceID, t.DestinationURL
	check.CheckedAt = c.Now()
	next := check.CheckedAt.Add(or(c.Config.Interval, DefaultInterval))
	if check.Failures > 0 && check.Status != link.CheckBroken {
		next = check.CheckedAt.Add(or(c.Config.RetryInterval, DefaultRetryInterval))
	}
	if err := c.Store.SaveLinkCheck(ctx, check, next); err != nil && link.ErrorCode(err) != link.ENOTFOUND {
		c.Logger.Error("link checks: saving a result failed", "link", t.LinkID, "err", err)
	}
}

// waitHost waits until HostGap has passed since the last request to host
// and notes the time; false when ctx ended first.
func (c *Checker) waitHost(ctx context.Context, host string) bool {
	gap := c.Config.HostGap
	if gap < 0 {
		gap = 0
	}
	c.mu.Lock()
	now := time.Now()
	wait := c.lastAsk[host].Add(gap).Sub(now)
	if wait < 0 {
		wait = 0
	}
	c.lastAsk[host] = now.Add(wait)
	for h, at := range c.lastAsk {
		if now.Sub(at) > gap && h != host {
			delete(c.lastAsk, h) // stays bounded by the hosts of the last gap
		}
	}
	c.mu.Unlock()
	if wait == 0 {
		return true
	}
	tm := time.NewTimer(wait)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// Result is what one check of a destination found.
type Result struct {
	// HTTPStatus is the final answer's status, after redirects; 0 when
	// there was none.
	HTTPStatus int
	// Error says why the check failed; "" when the destination works.
	Error string
	// Skipped: the destination is on an address the guard refuses
	// (loopback, private, link-local…): it is not checked.
	Skipped bool
}

// Check asks the destination with HEAD, following redirects (at most
// MaxRedirects), and with GET (reading at most 4 KB) when HEAD fails
// with an answer of 400 or more or a protocol error: many servers refuse
// or mishandle HEAD. The result fails on no connection, no answer within
// Timeout, too many redirects, or a final status that says the page is
// gone or failing: 4xx but 401, 403, 407 and 429 (a login wall, a
// server that turns robots away, a rate limit: the page exists), and 5xx.
//
// A whole check, HEAD and GET and their redirects, takes at most
// checkBudget times Timeout: a host that answers each request just in
// time cannot hold a checker (and the links claimed with it) for minutes.
func (c *Checker) Check(ctx context.Context, dest string) Result {
	c.init()
	ctx, cancel := context.WithTimeoutCause(ctx, checkBudget*or(c.Config.Timeout, DefaultTimeout), errCheckTooLong)
	defer cancel()
	status, err := c.follow(ctx, http.MethodHead, dest)
	if err == nil && status < 400 || isTransport(err) {
		return result(status, err)
	}
	status, err = c.follow(ctx, http.MethodGet, dest)
	return result(status, err)
}

// isTransport reports whether err is a failure to reach the destination
// at all (no name, no connection, no answer in time, a refused address),
// which a GET would meet again.
func isTransport(err error) bool {
	var ce *checkError
	return errors.As(err, &ce) && ce.transport
}

// checkBudget is how many times Timeout a whole check may take.
const checkBudget = 3

// errCheckTooLong ends a check past its budget.
var errCheckTooLong = errors.New("the check took too long")

type checkError struct {
	msg       string
	transport bool
	skipped   bool
}

func (e *checkError) Error() string { return e.msg }

func result(status int, err error) Result {
	if err != nil {
		var ce *checkError
		if errors.As(err, &ce) && ce.skipped {
			return Result{Skipped: true, Error: ce.msg}
		}
		return Result{HTTPStatus: status, Error: err.Error()}
	}
	if Broken(status) {
		return Result{HTTPStatus: status, Error: fmt.Sprintf("answered %d %s", status, http.StatusText(status))}
	}
	return Result{HTTPStatus: status}
}

// Broken reports whether a final status says the destination is broken:
// 4xx but 401, 403, 407 and 429, and 5xx.
func Broken(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusProxyAuthRequired, http.StatusTooManyRequests:
		return false
	}
	return status >= 400
}

// follow makes the request, and the requests its redirects lead to, and
// returns the final status.
func (c *Checker) follow(ctx context.Context, method, dest string) (int, error) {
	u, err := url.Parse(dest)
	if err != nil {
		return 0, &checkError{msg: "not a URL"}
	}
	timeout := or(c.Config.Timeout, DefaultTimeout)
	for hop := 0; ; hop++ {
		if u.Scheme != "http" && u.Scheme != "https" {
			return 0, &checkError{msg: fmt.Sprintf("redirected to a %s: URL", u.Scheme)}
		}
		status, loc, err := c.ask(ctx, method, u, timeout)
		if err != nil {
			return 0, err
		}
		if status < 300 || status > 399 || loc == "" || status == http.StatusNotModified {
			return status, nil
		}
		if hop == MaxRedirects {
			return status, &checkError{msg: fmt.Sprintf("more than %d redirects", MaxRedirects)}
		}
		next, err := u.Parse(loc)
		if err != nil {
			return status, &checkError{msg: "redirected to an invalid URL"}
		}
		u = next
	}
}

// ask makes one request and returns its status and Location.
func (c *Checker) ask(ctx context.Context, method string, u *url.URL, timeout time.Duration) (int, string, error) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, u.String(), nil)
	if err != nil {
		return 0, "", &checkError{msg: "not a URL"}
	}
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	req.Header.Set("Accept", "*/*")
	resp, err := c.Client.Do(req)
	if err != nil {
		if errors.Is(context.Cause(ctx), errCheckTooLong) {
			return 0, "", &checkError{msg: fmt.Sprintf("no final answer within %s, redirects included", checkBudget*timeout), transport: true}
		}
		return 0, "", describe(err, u.Hostname(), rctx, timeout)
	}
	defer resp.Body.Close()
	if method == http.MethodGet {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	}
	return resp.StatusCode, resp.Header.Get("Location"), nil
}

// describe words a request error without the addresses a name resolves
// to (the workspace reads it).
func describe(err error, host string, rctx context.Context, timeout time.Duration) error {
	if errors.Is(err, webhook.ErrSpecialAddress) {
		return &checkError{msg: fmt.Sprintf("not checked: %s resolves to a loopback, private or link-local address (link_checks.allow_private)", host),
			transport: true, skipped: true}
	}
	if errors.Is(rctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return &checkError{msg: fmt.Sprintf("no answer within %s", timeout), transport: true}
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return &checkError{msg: fmt.Sprintf("no answer within %s", timeout), transport: true}
	}
	return &checkError{msg: webhook.DescribeRequestError(err, host), transport: webhook.IsDialError(err)}
}

// Next returns the check that follows prev after a check that found r:
// its Status, HTTPStatus, Error and Failures (the caller sets the rest).
// A failure counts; link.CheckFailuresBroken in a row make the link
// broken. One success makes it ok. A skipped destination is unchecked.
func Next(prev *link.LinkCheck, r Result) *link.LinkCheck {
	c := &link.LinkCheck{HTTPStatus: r.HTTPStatus, Error: r.Error}
	switch {
	case r.Skipped:
		c.Status = link.CheckUnchecked
	case r.Error == "":
		c.Status = link.CheckOK
	default:
		c.Failures = prev.Failures + 1
		c.Status = prev.Status
		if c.Failures >= link.CheckFailuresBroken {
			c.Status = link.CheckBroken
		}
	}
	return c
}
