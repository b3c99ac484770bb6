package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
)

// sseStream is an open GET /v1/events/stream through a real listener.
type sseStream struct {
	t      *testing.T
	res    *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
	pings  int
}

// openStream opens a click stream with cred and query and reads its
// "ready" event.
func openStream(t *testing.T, ts *httptest.Server, cred, query string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	req, err := http.NewRequestWithContext(ctx, "GET", ts.URL+"/v1/events/stream"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+cred)
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	s := &sseStream{t: t, res: res, r: bufio.NewReader(res.Body), cancel: cancel}
	t.Cleanup(s.close)
	if res.StatusCode != 200 {
		t.Fatalf("stream: status %d", res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Fatalf("stream: Content-Type %q", ct)
	}
	if ev, data := s.next(); ev != "ready" || !strings.Contains(data, `"workspace_id":"ws_`) {
		t.Fatalf("first event %q %s, want ready", ev, data)
	}
	return s
}

func (s *sseStream) close() {
	s.cancel()
	s.res.Body.Close()
}

// next returns the next event's name and data; comments are counted as
// pings. "" at the end of the stream.
func (s *sseStream) next() (event, data string) {
	s.t.Helper()
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if event != "" {
				s.t.Fatalf("stream ended inside event %q: %v", event, err)
			}
			return "", ""
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if event != "" {
				return event, data
			}
		case strings.HasPrefix(line, ":"):
			s.pings++
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case strings.HasPrefix(line, "retry: "):
		default:
			s.t.Fatalf("stream: unexpected line %q", line)
		}
	}
}

// ping reads up to the next comment (a heartbeat); an event before it
// fails the test.
func (s *sseStream) ping() {
	s.t.Helper()
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			s.t.Fatalf("stream ended before a ping: %v", err)
		}
		switch {
		case strings.HasPrefix(line, ":"):
			s.pings++
			return
		case strings.HasPrefix(line, "event: "):
			s.t.Fatalf("an event before a ping: %q", line)
		}
	}
}

// click reads the next event, which must be a click, and returns it.
func (s *sseStream) click() map[string]any {
	s.t.Helper()
	ev, data := s.next()
	if ev != "click" {
		s.t.Fatalf("event %q %s, want a click", ev, data)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		s.t.Fatalf("click data %s: %v", data, err)
	}
	return m
}

// TestClickStream: a stream shows each recorded click of its workspace
// once, as a link.clicked webhook event's data, classified and without
// the address or user agent; one of a link shows that link's only; no
// stream shows another workspace's clicks.
func TestClickStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ts := httptest.NewServer(e.srv)
	t.Cleanup(ts.Close)
	a := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://a.example/","alias":"stream-a"}`, 201).str("id")
	b := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://b.example/","alias":"stream-b"}`, 201).str("id")
	other := e.do("GET", "/v1/links/"+e.otherLink, e.otherKey, "", 200).str("alias")

	all := openStream(t, ts, e.readKey, "")
	one := openStream(t, ts, e.adminToken, "?link_id="+b)
	e.click(other, firefoxUA, "198.51.100.9", "")
	e.click("stream-a", iphoneUA, "198.51.100.7", "https://news.example.org/post")
	e.click("stream-b", slackUA, "198.51.100.8", "")
	e.flush()

	got := all.click()
	if got["link_id"] != a || got["device"] != "mobile" || got["os"] != "iOS" || got["referrer"] != "news.example.org" ||
		got["bot"] != false || got["country"] != "unknown" {
		t.Fatalf("first click %v", got)
	}
	if _, err := time.Parse(time.RFC3339, got["time"].(string)); err != nil {
		t.Fatalf("time %v: %v", got["time"], err)
	}
	for _, f := range []string{"ip", "addr", "user_agent", "visitor"} {
		if _, ok := got[f]; ok {
			t.Fatalf("a click tells its %s: %v", f, got)
		}
	}
	if got := all.click(); got["link_id"] != b || got["bot"] != true || got["referrer"] != "direct" {
		t.Fatalf("second click %v", got)
	}
	if got := one.click(); got["link_id"] != b {
		t.Fatalf("the link's stream: %v", got)
	}
	// Nothing else came: the next events are the next clicks.
	e.click("stream-b", curlUA, "198.51.100.8", "")
	e.flush()
	if got := all.click(); got["link_id"] != b || got["browser"] != "curl" {
		t.Fatalf("third click %v", got)
	}
	if got := one.click(); got["browser"] != "curl" {
		t.Fatalf("the link's second click %v", got)
	}
}

// TestClickStreamRefuses: bad parameters, another workspace's link, a
// missing credential and a stream over the workspace's bound are
// answered with problems (checked against the OpenAPI document).
func TestClickStreamRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wantProblem(t, e.request(newRequest("GET", "/v1/events/stream?since=1", e.readKey, "")), 400, link.EINVALIDREQUEST)
	wantProblem(t, e.request(newRequest("GET", "/v1/events/stream?link_id="+e.otherLink, e.readKey, "")), 404, link.ENOTFOUND)
	wantProblem(t, e.request(newRequest("GET", "/v1/events/stream", "", "")), 401, link.EUNAUTHORIZED)
	// HEAD answers the headers and ends (it would stream nothing).
	if r := e.request(newRequest("HEAD", "/v1/events/stream", e.readKey, "")); r.status != 200 ||
		r.header.Get("Content-Type") != "text/event-stream; charset=utf-8" || len(r.raw) != 0 {
		t.Fatalf("HEAD: %d %q %q", r.status, r.header.Get("Content-Type"), r.raw)
	}

	ts := httptest.NewServer(e.srv)
	t.Cleanup(ts.Close)
	for range maxStreamsPerWorkspace {
		openStream(t, ts, e.readKey, "")
	}
	r := e.request(newRequest("GET", "/v1/events/stream", e.writeKey, ""))
	wantProblem(t, r, 429, link.ERATELIMITED)
	if r.header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	// Another workspace is not bound by this one's streams.
	openStream(t, ts, e.otherKey, "")
}

// TestClickStreamSlowClient: a stream whose client does not read keeps
// streamBuffer clicks and counts the rest as dropped, which its client is
// told; the recorder and the other streams never wait for it.
func TestClickStreamSlowClient(t *testing.T) {
	t.Parallel()
	h := newClickHub(nil)
	defer h.close()
	slow, err := h.subscribe("ws_1", "")
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]link.Click, streamBuffer+44)
	for i := range batch {
		batch[i] = link.Click{WorkspaceID: "ws_1", LinkID: fmt.Sprintf("lnk_%d", i), Time: time.Unix(int64(i), 0)}
	}
	done := make(chan struct{})
	go func() { h.tap(batch); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the tap waits for a stream that is not read")
	}
	if len(slow.ch) != streamBuffer || slow.dropped.Load() != 44 {
		t.Fatalf("%d clicks held, %d dropped; want %d and 44", len(slow.ch), slow.dropped.Load(), streamBuffer)
	}
	// A stream opened now gets the next batch whole.
	fresh, err := h.subscribe("ws_1", "")
	if err != nil {
		t.Fatal(err)
	}
	h.tap(batch[:3])
	if len(fresh.ch) != 3 || fresh.dropped.Load() != 0 || slow.dropped.Load() != 47 {
		t.Fatalf("fresh stream %d held, %d dropped; slow %d dropped", len(fresh.ch), fresh.dropped.Load(), slow.dropped.Load())
	}

	// Through the server: the client is told how many it lost.
	e := newEnv(t)
	ts := httptest.NewServer(e.srv)
	t.Cleanup(ts.Close)
	s := openStream(t, ts, e.readKey, "")
	e.srv.streams.deliver(e.ws, nil, 7) // as another instance says it left 7 out
	if ev, data := s.next(); ev != "dropped" || data != `{"dropped":7}` {
		t.Fatalf("event %q %s, want dropped 7", ev, data)
	}
}

// TestClickStreamEnds: an idle stream sends heartbeats; it ends when its
// key is revoked (told why) and when the server shuts down.
func TestClickStreamEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.StreamHeartbeat = 20 * time.Millisecond })
	ts := httptest.NewServer(e.srv)
	t.Cleanup(ts.Close)
	key := e.do("POST", "/v1/keys", e.adminToken, `{"name":"watcher","scope":"read"}`, 201)
	s := openStream(t, ts, key.str("key"), "")
	kept := openStream(t, ts, e.readKey, "")
	s.ping()
	s.ping()
	e.do("DELETE", "/v1/keys/"+key.str("id"), e.adminToken, "", 204)
	if ev, data := s.next(); ev != "end" || !strings.Contains(data, "no longer holds") {
		t.Fatalf("after the key's revocation: %q %s, want end", ev, data)
	}
	if ev, _ := s.next(); ev != "" {
		t.Fatalf("the stream goes on after its end: %q", ev)
	}
	e.srv.Close()
	if ev, _ := kept.next(); ev != "" {
		t.Fatalf("a stream goes on after the server closed: %q", ev)
	}
	r := e.request(newRequest("GET", "/v1/events/stream", e.readKey, ""))
	wantProblem(t, r, 503, codeBusy)
	if r.header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
}

// TestInstancesClickStream: a stream connected to one instance shows the
// clicks another instance on the same database records, once that one
// heard of the stream, and every one of them after that.
func TestInstancesClickStream(t *testing.T) {
	pgtest.SkipUnlessPostgres(t)
	t.Parallel()
	a := newEnv(t)
	b := a.sibling()
	ts := httptest.NewServer(a.srv)
	t.Cleanup(ts.Close)
	id := a.do("POST", "/v1/links", a.writeKey, `{"destination_url":"https://far.example/","alias":"far"}`, 201).str("id")
	s := openStream(t, ts, a.readKey, "")
	feed := b.db.Store.ClickFeed
	eventually(t, "the other instance hears of the stream", func() bool { return feed.ClickWatched(a.ws) })
	if feed.ClickWatched(a.otherWS) {
		t.Fatal("a workspace nobody streams is watched")
	}
	for i := range 3 {
		b.click("far", curlUA, fmt.Sprintf("198.51.100.%d", i+1), "")
	}
	b.flush()
	for range 3 {
		if got := s.click(); got["link_id"] != id || got["browser"] != "curl" {
			t.Fatalf("a click through the other instance: %v", got)
		}
	}
	// This instance's own clicks come once, not again over the database.
	a.click("far", iphoneUA, "198.51.100.9", "")
	a.flush()
	b.click("far", firefoxUA, "198.51.100.10", "")
	b.flush()
	if got := s.click(); got["os"] != "iOS" {
		t.Fatalf("this instance's click: %v", got)
	}
	if got := s.click(); got["browser"] != "Firefox" {
		t.Fatalf("after this instance's click: %v", got)
	}
}

// TestClickStreamShutdownUnreadClient: a stream whose client stopped
// reading, its write blocked on a full connection, still ends at once when
// the server closes, not when the write's own deadline (streamWriteTimeout)
// runs out: http.Server.Shutdown waits for it.
func TestClickStreamShutdownUnreadClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ts := httptest.NewServer(e.srv)
	t.Cleanup(ts.Close)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4 << 10)
	}
	fmt.Fprintf(conn, "GET /v1/events/stream HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\n\r\n", e.readKey)
	deadline := time.Now().Add(10 * time.Second)
	for e.srv.streams.open.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stream did not open")
		}
		time.Sleep(time.Millisecond)
	}
	// Far more than the connection's buffers hold, never read.
	big := []byte(`"` + strings.Repeat("x", 60<<10) + `"`)
	clicks := make([]link.StreamedClick, 64)
	for i := range clicks {
		clicks[i] = link.StreamedClick{LinkID: "lnk_1", Data: big}
	}
	for range 16 {
		e.srv.streams.deliver(e.ws, clicks, 0)
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	e.srv.Close()
	for e.srv.streams.open.Load() != 0 {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("the stream still runs %v after the server closed", time.Since(start))
		}
		time.Sleep(time.Millisecond)
	}
}
