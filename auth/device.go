package auth

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DeviceTTL is how long a browser is known as a user's device after the
// user's last password login from it.
const DeviceTTL = 90 * 24 * time.Hour

// deviceKeyInfo separates the device key from every other use of the secret.
const deviceKeyInfo = "linkbolt known device cookie v1"

// deviceMACLen is how much of the HMAC a device cookie carries: 128 bits.
const deviceMACLen = 16

// DeviceCookies names the browsers a user has logged in from with their
// password (OWASP's "device cookie"). A login from a known device is
// checked on a lane of its own, so that strangers flooding the login
// route with guesses fill the shared bound on password hashes and not the
// owner's way in. A device cookie is no credential: it opens nothing, and
// a stranger who has none learns nothing from its absence, since every
// login without one, of a known or an unknown e-mail, waits in the same
// queue.
type DeviceCookies struct {
	key []byte
	now func() time.Time
}

// NewDeviceCookies derives the device key from the JWT secret with
// HKDF-SHA256 (a new secret forgets every device, as it ends every token).
// now is the clock (nil: time.Now).
func NewDeviceCookies(secret []byte, now func() time.Time) (*DeviceCookies, error) {
	if len(secret) == 0 {
		return nil, errors.New("auth: device cookies: the JWT secret is empty")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, deviceKeyInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("auth: derive the device key: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &DeviceCookies{key: key, now: now}, nil
}

// Issue returns the cookie value that names this browser as a device of
// userID until the time it returns.
func (d *DeviceCookies) Issue(userID string) (value string, expires time.Time) {
	expires = d.now().Add(DeviceTTL).UTC().Truncate(time.Second)
	body := base64.RawURLEncoding.EncodeToString([]byte(userID)) + "." + strconv.FormatInt(expires.Unix(), 10)
	return body + "." + base64.RawURLEncoding.EncodeToString(d.mac(body)), expires
}

// Known reports whether value is a device cookie that Issue made for
// userID and that has not expired.
func (d *DeviceCookies) Known(value, userID string) bool {
	i := strings.LastIndexByte(value, '.')
	if i < 0 || len(value) > 512 {
		return false
	}
	body, sum := value[:i], value[i+1:]
	got, err := base64.RawURLEncoding.DecodeString(sum)
	if err != nil || !hmac.Equal(got, d.mac(body)) {
		return false
	}
	user, exp, ok := strings.Cut(body, ".")
	if !ok {
		return false
	}
	id, err := base64.RawURLEncoding.DecodeString(user)
	if err != nil || !hmac.Equal(id, []byte(userID)) {
		return false
	}
	secs, err := strconv.ParseInt(exp, 10, 64)
	return err == nil && d.now().Unix() < secs
}

func (d *DeviceCookies) mac(body string) []byte {
	m := hmac.New(sha256.New, d.key)
	m.Write([]byte(body))
	return m.Sum(nil)[:deviceMACLen]
}
