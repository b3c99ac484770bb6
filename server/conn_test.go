package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveReal serves e's server on a real loopback listener, as app.go does,
// with a read-header timeout long enough that no slow connection of a
// test is cut off by it, and returns the listener and its address.
func serveReal(t *testing.T, e *env) (*problemListener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := e.srv.Listener(ln)
	hs := e.srv.HTTPServer("")
	hs.ReadHeaderTimeout = time.Hour
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return e.srv.conns, ln.Addr().String()
}

// get asks for path on addr as host lb.test with its own client, without
// following a redirect, and returns the status.
func get(c *http.Client, addr, path string) (int, error) {
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.Host = "lb.test"
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}

func noRedirects() *http.Client {
	return &http.Client{
		Transport:     &http.Transport{},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// TestConnectionCap reproduces the flood that took the server past 256 MB:
// many connections each sending a large unfinished header, every one held
// (with its buffers) until the read-header timeout. With
// server.max_connections, no more than that many are open and read at
// once; the others, and a normal client behind them, wait in the listen
// backlog and are served as connections close.
func TestConnectionCap(t *testing.T) {
	const max, extra = 3, 4
	e := newEnv(t, func(c *Config) { c.MaxConnections = max })
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"spring"}`, 201)
	l, addr := serveReal(t, e)

	unfinished := "GET /spring HTTP/1.1\r\nHost: lb.test\r\nUser-Agent: " + strings.Repeat("a", 12<<10)
	var slow []net.Conn
	for i := 0; i < max+extra; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, unfinished); err != nil {
			t.Fatal(err)
		}
		slow = append(slow, c)
	}
	waitFor(func() bool { return l.open.Load() >= max })

	served := make(chan int, 1)
	go func() {
		status, err := get(noRedirects(), addr, "/spring")
		if err != nil {
			t.Error(err)
		}
		served <- status
	}()
	waitFor(func() bool { return l.waited.Load() > 0 || l.peak.Load() > max })
	select {
	case status := <-served:
		t.Fatalf("a client was served (%d) while %d slow connections held every slot", status, max)
	default:
	}
	// Each slow connection that ends lets the next one in the backlog in;
	// the normal client, behind them all, is served last.
	for _, c := range slow {
		c.Close()
	}
	if got, want := <-served, http.StatusFound; got != want {
		t.Fatalf("the redirect after the flood: %d, want %d", got, want)
	}
	if got := l.peak.Load(); got > max {
		t.Fatalf("%d connections were open at once, the cap is %d", got, max)
	}
	m := e.request(newRequest("GET", "/metrics", "", ""))
	if !strings.Contains(string(m.raw), "\nlinkbolt_connections_waited_total ") ||
		strings.Contains(string(m.raw), "\nlinkbolt_connections_waited_total 0\n") {
		t.Errorf("the metrics do not show the wait:\n%s", m.raw)
	}
}

// TestIdleConnectionsGiveWay: keep-alive connections idle between requests
// do not keep a new client out when the cap is reached; one is closed to
// make room, and its client carries on with a new connection.
func TestIdleConnectionsGiveWay(t *testing.T) {
	const max = 2
	e := newEnv(t, func(c *Config) { c.MaxConnections = max })
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"spring"}`, 201)
	l, addr := serveReal(t, e)

	var clients []*http.Client
	for i := 0; i < max+1; i++ {
		c := noRedirects()
		defer c.CloseIdleConnections()
		clients = append(clients, c)
		if status, err := get(c, addr, "/spring"); err != nil || status != http.StatusFound {
			t.Fatalf("client %d: %d %v", i, status, err)
		}
	}
	if l.reclaimed.Load() == 0 {
		t.Fatal("no idle connection was closed to let the third client in")
	}
	for i, c := range clients {
		if status, err := get(c, addr, "/spring"); err != nil || status != http.StatusFound {
			t.Fatalf("client %d again: %d %v", i, status, err)
		}
	}
	if got := l.peak.Load(); got > max {
		t.Fatalf("%d connections were open at once, the cap is %d", got, max)
	}
}

// TestHeaderLimit: headers are bounded at 16 KiB (net/http allows 4 KiB
// more for the request line): a connection never holds the 64 KiB a slow
// client could make it buffer before. Over the limit is a 431
// problem+json; a large but plausible set of headers is served.
func TestHeaderLimit(t *testing.T) {
	e := newEnv(t)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"spring"}`, 201)
	_, addr := serveReal(t, e)
	send := func(header string) *http.Response {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, "GET /spring HTTP/1.1\r\nHost: lb.test\r\n"+header+"\r\n"); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	// A 4 KiB Referer, a long User-Agent, a token and 8 KiB of cookies.
	plausible := "Referer: https://example.com/" + strings.Repeat("r", 4<<10-21) + "\r\n" +
		"User-Agent: Mozilla/5.0 " + strings.Repeat("u", 500) + "\r\n" +
		"Authorization: Bearer " + strings.Repeat("t", 900) + "\r\n" +
		"Cookie: " + strings.Repeat("c=v; ", 8<<10/5) + "\r\n"
	if res := send(plausible); res.StatusCode != http.StatusFound {
		t.Fatalf("%d bytes of plausible headers: status %d", len(plausible), res.StatusCode)
	}

	res := send("User-Agent: " + strings.Repeat("a", 21<<10) + "\r\n")
	body, _ := io.ReadAll(res.Body)
	if got, want := res.StatusCode, http.StatusRequestHeaderFieldsTooLarge; got != want {
		t.Fatalf("21 KiB of headers: status %d, want %d: %s", got, want, body)
	}
	var p problem
	if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" || json.Unmarshal(body, &p) != nil ||
		p.Code != "headers_too_large" || p.Status != 431 {
		t.Fatalf("431 answer: %s %s", ct, body)
	}
}
