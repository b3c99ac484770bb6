package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/webhook"
)

// hmacHex is the documented recipe, computed apart from the package:
// hex(HMAC-SHA256(secret, t + "." + body)).
func hmacHex(secret string, t int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", t)
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

func TestSignatureHeader(t *testing.T) {
	at := time.Unix(1_740_830_400, 999_000_000)
	body := []byte(`{"id":"evt_1","type":"link.clicked"}`)
	got := webhook.SignatureHeader([]string{"new", "old"}, at, body)
	want := "t=1740830400,v1=" + hmacHex("new", 1740830400, body) + ",v1=" + hmacHex("old", 1740830400, body)
	if got != want {
		t.Fatalf("header = %s, want %s", got, want)
	}
	if got := webhook.SignatureHeader([]string{"new"}, at, body); strings.Count(got, "v1=") != 1 {
		t.Fatalf("one secret, header %s", got)
	}
}

func TestVerify(t *testing.T) {
	at := time.Unix(1_740_830_400, 0)
	body := []byte(`{"id":"evt_1"}`)
	header := webhook.SignatureHeader([]string{"new", "old"}, at, body)
	for _, tt := range []struct {
		name   string
		header string
		secret string
		body   string
		now    time.Time
		tol    time.Duration
		want   error
	}{
		{"current secret", header, "new", string(body), at, 0, nil},
		{"previous secret", header, "old", string(body), at, 0, nil},
		{"spaces", strings.ReplaceAll(header, ",", ", "), "old", string(body), at, 0, nil},
		{"unknown scheme beside", header + ",v0=abc", "new", string(body), at, 0, nil},
		{"within tolerance", header, "new", string(body), at.Add(5 * time.Minute), 0, nil},
		{"early clock", header, "new", string(body), at.Add(-5 * time.Minute), 0, nil},
		{"too late", header, "new", string(body), at.Add(5*time.Minute + time.Second), 0, webhook.ErrSignatureExpired},
		{"too late, own tolerance", header, "new", string(body), at.Add(2 * time.Minute), time.Minute, webhook.ErrSignatureExpired},
		{"other secret", header, "nope", string(body), at, 0, webhook.ErrSignatureMismatch},
		{"body changed", header, "new", `{"id":"evt_2"}`, at, 0, webhook.ErrSignatureMismatch},
		{"timestamp changed", strings.Replace(header, "t=1740830400", "t=1740830401", 1), "new", string(body), at, 0, webhook.ErrSignatureMismatch},
		{"no timestamp", "v1=" + hmacHex("new", 1740830400, body), "new", string(body), at, 0, webhook.ErrMalformedSignature},
		{"two timestamps", "t=1,t=1740830400,v1=" + hmacHex("new", 1740830400, body), "new", string(body), at, 0, webhook.ErrMalformedSignature},
		{"no signature", "t=1740830400", "new", string(body), at, 0, webhook.ErrMalformedSignature},
		{"empty", "", "new", string(body), at, 0, webhook.ErrMalformedSignature},
		{"not hex", "t=1740830400,v1=zz", "new", string(body), at, 0, webhook.ErrSignatureMismatch},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := webhook.Verify(tt.header, tt.secret, []byte(tt.body), tt.now, tt.tol); !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

func FuzzVerify(f *testing.F) {
	body := []byte(`{}`)
	f.Add(webhook.SignatureHeader([]string{"s"}, time.Unix(100, 0), body), "s")
	f.Add("t=,v1=,=", "")
	f.Add("t=-9223372036854775808,v1=00", "x")
	f.Fuzz(func(t *testing.T, header, secret string) {
		if webhook.Verify(header, secret, body, time.Unix(100, 0), time.Minute) != nil {
			return
		}
		// A success needs the right signature of a timestamp within a
		// minute of 100.
		for ts := int64(40); ts <= 160; ts++ {
			if strings.Contains(header, hmacHex(secret, ts, body)) {
				return
			}
		}
		t.Fatalf("Verify accepted %q under %q", header, secret)
	})
}
