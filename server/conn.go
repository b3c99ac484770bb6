package server

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
)

// Listener wraps ln for the server's HTTPServer, which must serve on it.
//
// The answers net/http writes on its own, before any handler runs, become
// problem+json like every other error: a request line it cannot parse
// (GET /%), a bad or missing Host, an unsupported protocol version or
// transfer encoding, headers over the size limit. net/http writes those
// with fmt.Fprintf straight onto the connection as text/plain; the
// connection recognises that exact shape in a Write and writes the problem
// instead.
//
// With Config.MaxConnections, at most that many connections are open at
// once: each one, even a client that sends its headers a byte at a time,
// holds buffers, so their number bounds the memory they take. When all are
// taken, Accept waits and new clients wait in the kernel's listen backlog
// until a connection closes; first, a connection idle between keep-alive
// requests is closed to make room (as nginx reuses keep-alive connections
// when short of them), and one that goes idle while a client waits is
// closed at once.
func (s *Server) Listener(ln net.Listener) net.Listener {
	l := &problemListener{Listener: ln, done: make(chan struct{})}
	if n := s.cfg.MaxConnections; n > 0 {
		l.slots = make(chan struct{}, n)
		l.idle = make(map[*problemConn]struct{})
	}
	s.conns = l
	return l
}

// problemListener is the listener of Server.Listener.
type problemListener struct {
	net.Listener
	slots chan struct{} // a token for each open connection; nil: no bound
	done  chan struct{} // closed by Close, to end a waiting Accept
	close sync.Once

	mu      sync.Mutex
	idle    map[*problemConn]struct{} // between keep-alive requests
	waiting bool                      // an Accept waits for a slot

	open, peak, waited, reclaimed atomic.Int64
}

func (l *problemListener) Accept() (net.Conn, error) {
	if err := l.acquire(); err != nil {
		return nil, err
	}
	c, err := l.Listener.Accept()
	if err != nil {
		l.release()
		return nil, err
	}
	return &problemConn{Conn: c, l: l}, nil
}

func (l *problemListener) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// acquire takes a connection slot, waiting for one when all are taken.
func (l *problemListener) acquire() error {
	if l.slots == nil {
		l.count(1)
		return nil
	}
	select {
	case l.slots <- struct{}{}:
		l.count(1)
		return nil
	default:
	}
	l.waited.Add(1)
	l.mu.Lock()
	l.waiting = true
	var idle *problemConn
	for c := range l.idle {
		idle = c
		break
	}
	l.mu.Unlock()
	if idle != nil {
		l.reclaim(idle)
	}
	defer func() {
		l.mu.Lock()
		l.waiting = false
		l.mu.Unlock()
	}()
	select {
	case l.slots <- struct{}{}:
		l.count(1)
		return nil
	case <-l.done:
		return net.ErrClosed
	}
}

// release gives a connection's slot back.
func (l *problemListener) release() {
	l.count(-1)
	if l.slots != nil {
		<-l.slots
	}
}

func (l *problemListener) count(d int64) {
	if n := l.open.Add(d); d > 0 {
		for p := l.peak.Load(); n > p && !l.peak.CompareAndSwap(p, n); p = l.peak.Load() {
		}
	}
}

// reclaim closes an idle keep-alive connection to free its slot. A client
// sending its next request on it at that very moment sees the connection
// closed, as when the idle timeout ends it; HTTP clients retry a request
// that was not answered on a reused connection.
func (l *problemListener) reclaim(c *problemConn) {
	l.mu.Lock()
	delete(l.idle, c)
	l.mu.Unlock()
	l.reclaimed.Add(1)
	c.Close()
}

// connState is the HTTPServer's ConnState hook: it keeps the set of idle
// connections, and closes one that goes idle while a client waits.
func (l *problemListener) connState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*problemConn)
	if !ok || l.slots == nil {
		return
	}
	l.mu.Lock()
	if state == http.StateIdle && l.waiting {
		l.mu.Unlock()
		l.reclaim(c)
		return
	}
	if state == http.StateIdle {
		l.idle[c] = struct{}{}
	} else {
		delete(l.idle, c)
	}
	l.mu.Unlock()
}

// problemConn is a connection whose bare net/http error answers are
// rewritten as problem+json, and which gives its slot back on Close.
type problemConn struct {
	net.Conn
	l      *problemListener
	closed sync.Once
}

func (c *problemConn) Close() error {
	err := c.Conn.Close()
	c.closed.Do(c.l.release)
	return err
}

func (c *problemConn) Write(b []byte) (int, error) {
	if p, ok := bareErrorProblem(b); ok {
		if _, err := c.Conn.Write(p); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// CloseWrite lets net/http half-close the connection after an error answer
// (so that the client reads it before the reset), as with a *net.TCPConn.
func (c *problemConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// bareErrorHeaders follow the status line of every answer net/http writes
// without a handler (server.go, conn.serve). An answer of a handler always
// has a Date header among them, so it never matches.
const bareErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// bareErrorCodes are the problem codes of the statuses net/http answers on
// its own.
var bareErrorCodes = map[int]string{
	http.StatusBadRequest:                  "invalid_request",
	http.StatusRequestHeaderFieldsTooLarge: "headers_too_large",
	http.StatusNotImplemented:              "not_implemented",
	http.StatusHTTPVersionNotSupported:     "http_version_not_supported",
}

// bareErrorProblem returns the problem+json answer that replaces the bare
// net/http error answer b, or false when b is anything else.
func bareErrorProblem(b []byte) ([]byte, bool) {
	const proto = "HTTP/1.1 "
	if len(b) < len(proto)+3 || string(b[:len(proto)]) != proto {
		return nil, false
	}
	end := bytes.Index(b, []byte(bareErrorHeaders))
	if end < 0 || bytes.IndexByte(b[:end], '\n') >= 0 {
		return nil, false
	}
	status, err := strconv.Atoi(string(b[len(proto) : len(proto)+3]))
	if err != nil {
		return nil, false
	}
	code, ok := bareErrorCodes[status]
	if !ok {
		return nil, false
	}
	// The body is "400 Bad Request", or "400 Bad Request: <why>".
	text := b[end+len(bareErrorHeaders):]
	detail := "the request could not be read"
	if _, why, ok := bytes.Cut(text, []byte(": ")); ok {
		detail += ": " + string(why)
	} else if status == http.StatusBadRequest {
		detail = "the request line or a header is malformed (a '%' in the path must be followed by two hex digits)"
	}
	body, _ := json.Marshal(problem{
		Type: problemTypeBase + code, Title: http.StatusText(status), Status: status,
		Detail: detail, Code: code,
	})
	var out bytes.Buffer
	out.WriteString(proto + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	out.WriteString("Content-Type: application/problem+json\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n")
	out.WriteString("Connection: close\r\nContent-Length: " + strconv.Itoa(len(body)+1) + "\r\n\r\n")
	out.Write(body)
	out.WriteByte('\n')
	return out.Bytes(), true
}
