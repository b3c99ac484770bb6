// Package webhook owns the wire side of webhook deliveries: the Encoder,
// the one place that writes the JSON of events (the storage services call
// it, as a link.EventEncoder, when they write an event to the outbox); the
// Dispatcher that drains the outbox with a pool of workers (in order per
// webhook, retried with backoff, at least once); the signatures receivers
// check (SignatureHeader, Verify); and the guard that keeps deliveries
// away from loopback, private and other special addresses (NewClient,
// CheckTarget). The outbox itself is kept by a link.WebhookService.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// The headers of a delivery.
const (
	HeaderEvent     = "Linkbolt-Event"     // the event type, e.g. link.clicked
	HeaderDelivery  = "Linkbolt-Delivery"  // the delivery id (dlv_…): the same on every retry, receivers de-duplicate by it
	HeaderSignature = "Linkbolt-Signature" // t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>[,v1=…]
	UserAgent       = "linkbolt-webhooks/1"
)

// DefaultTolerance is how far from now Verify accepts a signature's
// timestamp when it is given no tolerance: it bounds replays.
const DefaultTolerance = 5 * time.Minute

// Errors of Verify.
var (
	ErrMalformedSignature = errors.New("webhook: malformed " + HeaderSignature + " header")
	ErrSignatureExpired   = errors.New("webhook: signature timestamp outside the tolerance")
	ErrSignatureMismatch  = errors.New("webhook: no signature matches the secret")
)

// Sign returns the hex HMAC-SHA256 of t (unix seconds) + "." + body
// under secret: one v1 signature.
func Sign(secret string, t int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(strconv.AppendInt(nil, t, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// SignatureHeader returns the Linkbolt-Signature header of body sent at t:
// "t=<unix>,v1=<sig>" with one v1 signature per secret, in order (the
// current secret, then the previous one while it is in its grace period).
// The timestamp is signed with the body, so a captured delivery cannot be
// replayed later than the receiver's tolerance.
func SignatureHeader(secrets []string, t time.Time, body []byte) string {
	unix := t.Unix()
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(strconv.FormatInt(unix, 10))
	for _, s := range secrets {
		b.WriteString(",v1=")
		b.WriteString(Sign(s, unix, body))
	}
	return b.String()
}

// Verify checks a Linkbolt-Signature header against the raw body and one
// secret: the timestamp must be within tolerance of now (zero or less
// means DefaultTolerance) and one of the v1 signatures must be the
// HMAC-SHA256 of timestamp + "." + body under secret, compared in constant
// time. Unknown keys are ignored, so newer schemes can be added beside v1.
// It returns ErrMalformedSignature, ErrSignatureExpired or
// ErrSignatureMismatch.
func Verify(header, secret string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var ts string
	var sigs []string
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrMalformedSignature
		}
		switch k {
		case "t":
			if ts != "" {
				return ErrMalformedSignature
			}
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrMalformedSignature
	}
	if math.Abs(float64(now.Unix()-t)) > tolerance.Seconds() {
		return ErrSignatureExpired
	}
	want, _ := hex.DecodeString(Sign(secret, t, body))
	for _, s := range sigs {
		got, err := hex.DecodeString(s)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrSignatureMismatch
}
