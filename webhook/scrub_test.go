package webhook

import "testing"

// TestScrubAddrs: error text from deep in the network stack keeps no
// address but the URL's own literal.
func TestScrubAddrs(t *testing.T) {
	for _, tt := range []struct{ msg, host, want string }{
		{"lookup hooks.example on 127.0.0.53:53: no such host", "hooks.example", "lookup hooks.example on <address>: no such host"},
		{"read tcp 10.0.0.5:41234->10.1.2.3:443: read: connection reset by peer", "hooks.example", "read tcp <address>-><address>: read: connection reset by peer"},
		{"x509: certificate is valid for 10.1.2.3, fd00::1, not hooks.example", "hooks.example", "x509: certificate is valid for <address>, <address>, not hooks.example"},
		{"dial tcp [fd00::7]:443: i/o timeout", "hooks.example", "dial tcp <address>: i/o timeout"},
		{"dial tcp 93.184.215.14:443: connect: connection refused", "93.184.215.14", "dial tcp 93.184.215.14:443: connect: connection refused"},
		{"remote error: tls: handshake failure", "hooks.example", "remote error: tls: handshake failure"},
	} {
		if got := scrubAddrs(tt.msg, tt.host); got != tt.want {
			t.Errorf("scrubAddrs(%q) = %q, want %q", tt.msg, got, tt.want)
		}
	}
}
