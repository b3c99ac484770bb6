package server

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
)

// Listener wraps ln so that the answers net/http writes on its own, before
// any handler runs, are problem+json like every other error: a request
// line it cannot parse (GET /%), a bad or missing Host, an unsupported
// protocol version or transfer encoding, headers over the size limit.
// net/http writes those with fmt.Fprintf straight onto the connection as
// text/plain; the connection recognises that exact shape in a Write and
// writes the problem instead. Serve the server's HTTPServer on it.
func (s *Server) Listener(ln net.Listener) net.Listener { return problemListener{ln} }

type problemListener struct{ net.Listener }

func (l problemListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &problemConn{Conn: c}, nil
}

// problemConn is a connection whose bare net/http error answers are
// rewritten as problem+json.
type problemConn struct{ net.Conn }

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
