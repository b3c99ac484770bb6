package auth

import (
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/link"
)

var flowSecret = []byte("flow-secret-flow-secret-flow-secret!")

func TestFlowSealer(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	s, err := NewFlowSealer(flowSecret, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	flow := s.NewFlow()
	if len(flow.State) < 26 || len(flow.Nonce) < 26 || len(flow.Verifier) < 43 {
		t.Fatalf("flow %+v: state, nonce or verifier too short", flow)
	}
	if got, want := flow.Expires, clk.Now().Add(OIDCFlowTTL); !got.Equal(want) {
		t.Fatalf("expires %s, want %s", got, want)
	}
	if other := s.NewFlow(); other.State == flow.State || other.Nonce == flow.Nonce || other.Verifier == flow.Verifier {
		t.Fatal("two flows share a random value")
	}
	sealed, err := s.Seal(flow)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{flow.State, flow.Nonce, flow.Verifier} {
		if strings.Contains(sealed, secret) {
			t.Fatalf("the sealed flow shows %q", secret)
		}
	}
	if again, _ := s.Seal(flow); again == sealed {
		t.Fatal("sealing twice gives the same text: the nonce is not fresh")
	}

	t.Run("opens what it sealed", func(t *testing.T) {
		got, err := s.Open(sealed)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != flow.State || got.Nonce != flow.Nonce || got.Verifier != flow.Verifier || !got.Expires.Equal(flow.Expires) {
			t.Fatalf("opened %+v, want %+v", got, flow)
		}
	})

	t.Run("refuses what it did not seal", func(t *testing.T) {
		other, err := NewFlowSealer([]byte("another-secret-another-secret-12345"), clk.Now)
		if err != nil {
			t.Fatal(err)
		}
		foreign, _ := other.Seal(flow)
		flipped := []byte(sealed)
		flipped[len(flipped)/2] ^= 1
		for name, text := range map[string]string{
			"empty": "", "not base64": "!!!", "too short": "AAAA", "another key": foreign,
			"a flipped bit": string(flipped), "too long": strings.Repeat("A", 2000),
			"truncated": sealed[:len(sealed)-4],
		} {
			if _, err := s.Open(text); link.ErrorCode(err) != link.EINVALIDREQUEST {
				t.Errorf("%s: %v, want invalid_request", name, err)
			}
		}
	})

	t.Run("expires after 10 minutes", func(t *testing.T) {
		clk.Add(OIDCFlowTTL - time.Second)
		if _, err := s.Open(sealed); err != nil {
			t.Fatalf("a second before expiry: %v", err)
		}
		clk.Add(time.Second)
		_, err := s.Open(sealed)
		if link.ErrorCode(err) != link.EINVALIDREQUEST || !strings.Contains(link.ErrorMessage(err), "longer than") {
			t.Fatalf("at expiry: %v", err)
		}
	})

	if _, err := NewFlowSealer(nil, nil); err == nil {
		t.Fatal("a sealer without a secret")
	}
}

func FuzzFlowOpen(f *testing.F) {
	s, err := NewFlowSealer(flowSecret, nil)
	if err != nil {
		f.Fatal(err)
	}
	known := OIDCFlow{State: "STATE", Nonce: "NONCE", Verifier: "VERIFIER", Expires: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}
	sealed, _ := s.Seal(known)
	f.Add(sealed)
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, text string) {
		flow, err := s.Open(text)
		// Only a text sealed with the key opens, and then to what was
		// sealed (the corpus holds one: known).
		if err == nil && flow != known {
			t.Fatalf("opened a text it did not seal: %+v", flow)
		}
		if err != nil && link.ErrorCode(err) != link.EINVALIDREQUEST {
			t.Fatalf("error %v, want invalid_request", err)
		}
	})
}

func TestOIDCDomainAllowed(t *testing.T) {
	any := &OIDC{}
	only := &OIDC{AllowedDomains: []string{"example.com", "example.org"}}
	for _, c := range []struct {
		o     *OIDC
		email string
		want  bool
	}{
		{any, "a@anywhere.example", true},
		{only, "a@example.com", true},
		{only, "a@EXAMPLE.org", true},
		{only, "a@sub.example.com", false},
		{only, "a@example.com.evil.test", false},
		{only, "a@b@example.net", false},
		{only, "example.com", false},
		{only, "a@", false},
	} {
		if got := c.o.DomainAllowed(c.email); got != c.want {
			t.Errorf("DomainAllowed(%q) with %v = %v, want %v", c.email, c.o.AllowedDomains, got, c.want)
		}
	}
}
