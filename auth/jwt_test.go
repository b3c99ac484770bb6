package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/link"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

func testJWT(c *clocktest.Clock) JWT {
	return JWT{Secret: testSecret, TTL: time.Hour, Now: c.Now}
}

func TestJWTIssueVerify(t *testing.T) {
	c := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 500, time.UTC))
	j := testJWT(c)
	token, exp, err := j.Issue("u42")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := exp, time.Date(2025, 3, 1, 13, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("expiresAt = %v, want %v", got, want)
	}
	userID, err := j.Verify(token)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got, want := userID, "u42"; got != want {
		t.Fatalf("userID = %q, want %q", got, want)
	}

	var claims jwt.RegisteredClaims
	parsed, _, err := jwt.NewParser().ParseUnverified(token, &claims)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := parsed.Header["alg"], "HS256"; got != want {
		t.Errorf("alg = %v, want %v", got, want)
	}
	if got, want := claims.Issuer, "linkbolt"; got != want {
		t.Errorf("iss = %q, want %q", got, want)
	}
	if got, want := claims.Subject, "u42"; got != want {
		t.Errorf("sub = %q, want %q", got, want)
	}
	if got, want := claims.IssuedAt.Unix(), c.Now().Unix(); got != want {
		t.Errorf("iat = %d, want %d", got, want)
	}
	if got, want := claims.ExpiresAt.Unix(), exp.Unix(); got != want {
		t.Errorf("exp = %d, want %d", got, want)
	}
}

func TestJWTDefaultTTL(t *testing.T) {
	c := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	_, exp, err := JWT{Secret: testSecret, Now: c.Now}.Issue("u1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := exp.Sub(c.Now()), DefaultTokenTTL; got != want {
		t.Fatalf("TTL = %v, want %v", got, want)
	}
}

// TestJWTExpiry checks that a token is refused from its expiry on, by the
// verifier and by a TokenCache that remembered it (which then forgets it).
func TestJWTExpiry(t *testing.T) {
	c := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	j := testJWT(c)
	token, exp, err := j.Issue("u1")
	if err != nil {
		t.Fatal(err)
	}
	cache := NewTokenCache(&j)
	for _, v := range []struct {
		name   string
		verify func(string) (Claims, error)
	}{{"Verify", j.VerifyClaims}, {"the cache", cache.VerifyClaims}} {
		c.Set(exp.Add(-time.Second))
		if _, err := v.verify(token); err != nil {
			t.Fatalf("%s one second before expiry: %v", v.name, err)
		}
		for _, at := range []time.Time{exp, exp.Add(time.Hour)} {
			c.Set(at)
			_, err := v.verify(token)
			if got, want := link.ErrorCode(err), link.EUNAUTHORIZED; got != want {
				t.Fatalf("%s at %v: code = %q, want %q", v.name, at, got, want)
			}
			if got := link.ErrorMessage(err); !strings.HasPrefix(got, "token expired") {
				t.Fatalf("%s at %v: message = %q, want token expired", v.name, at, got)
			}
		}
	}
	if len(cache.m) != 0 {
		t.Fatalf("the cache holds %d tokens after their expiry, want 0", len(cache.m))
	}
}

// sign makes a token with any header and claims, HMAC-SHA256-signed with
// secret, to forge what a client might send.
func sign(header, claims string, secret []byte) string {
	enc := base64.RawURLEncoding
	text := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(claims))
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(text))
	return text + "." + enc.EncodeToString(mac.Sum(nil))
}

func TestJWTRejects(t *testing.T) {
	c := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	j := testJWT(c)
	now := c.Now()
	claims := jwt.RegisteredClaims{
		Issuer:    Issuer,
		Subject:   "u1",
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)),
	}
	mustSign := func(m jwt.SigningMethod, claims jwt.Claims, key any) string {
		t.Helper()
		s, err := jwt.NewWithClaims(m, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	valid := mustSign(jwt.SigningMethodHS256, claims, testSecret)
	if _, err := j.Verify(valid); err != nil {
		t.Fatalf("Verify(valid) = %v", err)
	}
	withClaims := func(edit func(*jwt.RegisteredClaims)) jwt.RegisteredClaims {
		c := claims
		edit(&c)
		return c
	}
	parts := strings.Split(valid, ".")
	// The payload of valid with sub changed, keeping the old signature.
	otherSub := base64.RawURLEncoding.EncodeToString([]byte(
		`{"iss":"linkbolt","sub":"admin","exp":` + strconv.FormatInt(now.Add(time.Hour).Unix(), 10) + `}`))
	payload := `{"iss":"linkbolt","sub":"u1","exp":` + strconv.FormatInt(now.Add(time.Hour).Unix(), 10) + `}`

	tests := []struct{ name, token string }{
		{"empty", ""},
		{"garbage", "not a token"},
		{"two parts", parts[0] + "." + parts[1]},
		{"alg none", mustSign(jwt.SigningMethodNone, claims, jwt.UnsafeAllowNoneSignatureType)},
		{"alg none, empty signature", base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."},
		{"wrong secret", mustSign(jwt.SigningMethodHS256, claims, []byte("another secret of thirty-two byte"))},
		{"HS512 with the right secret", mustSign(jwt.SigningMethodHS512, claims, testSecret)},
		{"HS384 with the right secret", mustSign(jwt.SigningMethodHS384, claims, testSecret)},
		{"RS256 header, HMAC signature", sign(`{"alg":"RS256","typ":"JWT"}`, payload, testSecret)},
		{"RS256 header, junk signature", base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + parts[1] + "." + strings.Repeat("A", 342)},
		{"lower-case alg", sign(`{"alg":"hs256","typ":"JWT"}`, payload, testSecret)},
		{"payload changed", parts[0] + "." + otherSub + "." + parts[2]},
		{"signature truncated", valid[:len(valid)-2]},
		{"wrong issuer", mustSign(jwt.SigningMethodHS256, withClaims(func(c *jwt.RegisteredClaims) { c.Issuer = "evil" }), testSecret)},
		{"no issuer", mustSign(jwt.SigningMethodHS256, withClaims(func(c *jwt.RegisteredClaims) { c.Issuer = "" }), testSecret)},
		{"no exp", mustSign(jwt.SigningMethodHS256, withClaims(func(c *jwt.RegisteredClaims) { c.ExpiresAt = nil }), testSecret)},
		{"no sub", mustSign(jwt.SigningMethodHS256, withClaims(func(c *jwt.RegisteredClaims) { c.Subject = "" }), testSecret)},
		{"not yet valid", mustSign(jwt.SigningMethodHS256, withClaims(func(c *jwt.RegisteredClaims) { c.NotBefore = jwt.NewNumericDate(now.Add(time.Minute)) }), testSecret)},
		{"an API key", "lb_live_0123456789ABCDEFGHIJKLMNOPQRSTUV1atgEh"},
	}
	// The cache refuses each as the verifier does, every time: a refused
	// token is never remembered (the valid one is, first).
	cache := NewTokenCache(&j)
	if _, err := cache.VerifyClaims(valid); err != nil {
		t.Fatalf("cache: valid token: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			userID, err := j.Verify(tt.token)
			if got, want := link.ErrorCode(err), link.EUNAUTHORIZED; got != want {
				t.Fatalf("Verify(%q) = %q, %v; want code %q", tt.token, userID, err, want)
			}
			if got := link.ErrorMessage(err); !strings.HasPrefix(got, "invalid token") {
				t.Fatalf("message = %q, want it to start with invalid token", got)
			}
			if userID != "" {
				t.Fatalf("userID = %q, want empty", userID)
			}
			for range 2 {
				if cl, cerr := cache.VerifyClaims(tt.token); cerr == nil || cerr.Error() != err.Error() || cl.UserID != "" {
					t.Fatalf("cache: %+v, %v; want %v", cl, cerr, err)
				}
			}
		})
	}
	if len(cache.m) != 1 {
		t.Fatalf("the cache holds %d tokens, want the valid one alone", len(cache.m))
	}
}

// TestTokenCache checks the cache of verified tokens: it answers a token
// with the claims the verifier gave, refuses another secret's, and holds
// at most tokenCacheSize tokens (TestJWTExpiry checks its expiry).
func TestTokenCache(t *testing.T) {
	c := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	j := testJWT(c)
	token, _, err := j.Issue("u7")
	if err != nil {
		t.Fatal(err)
	}
	cache := NewTokenCache(&j)
	want, err := j.VerifyClaims(token)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got, err := cache.VerifyClaims(token); err != nil || got != want {
			t.Fatalf("cache: %+v, %v; want %+v", got, err, want)
		}
	}
	if len(cache.m) != 1 {
		t.Fatalf("the cache holds %d tokens, want 1", len(cache.m))
	}
	// A token of another secret is refused, and not remembered.
	other := JWT{Secret: []byte("another secret of thirty-two byte"), TTL: time.Hour, Now: c.Now}
	otherToken, _, err := other.Issue("u8")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cache.VerifyClaims(otherToken); link.ErrorCode(err) != link.EUNAUTHORIZED {
		t.Fatalf("another secret's token: %v, want refused", err)
	}
	if len(cache.m) != 1 {
		t.Fatalf("the cache holds %d tokens, want 1", len(cache.m))
	}

	c.Set(time.Date(2025, 3, 2, 12, 0, 0, 0, time.UTC))
	for i := range tokenCacheSize + 50 {
		tok, _, err := j.Issue("u" + strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cache.VerifyClaims(tok); err != nil {
			t.Fatal(err)
		}
	}
	if len(cache.m) != tokenCacheSize {
		t.Fatalf("the cache holds %d tokens, want %d", len(cache.m), tokenCacheSize)
	}
}

func TestJWTEmptySecret(t *testing.T) {
	if _, _, err := (JWT{}).Issue("u1"); err == nil {
		t.Fatal("Issue with no secret: err = nil, want an error")
	}
	token, _, err := JWT{Secret: testSecret}.Issue("u1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = JWT{}.Verify(token)
	if got, want := link.ErrorCode(err), link.EINTERNAL; got != want {
		t.Fatalf("Verify with no secret: code = %q, want %q", got, want)
	}
}

func TestJWTIssueEmptyUser(t *testing.T) {
	if _, _, err := (JWT{Secret: testSecret}).Issue(""); err == nil {
		t.Fatal(`Issue(""): err = nil, want an error`)
	}
}

func TestNewSecret(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if got, want := len(a), 32; got != want {
		t.Fatalf("len(NewSecret()) = %d, want %d", got, want)
	}
	if bytes.Equal(a, b) {
		t.Fatal("two secrets are equal")
	}
	if err := CheckSecret(a); err != nil {
		t.Fatalf("CheckSecret(NewSecret()) = %v", err)
	}
	if err := CheckSecret([]byte("short")); err == nil {
		t.Fatal("CheckSecret(short) = nil, want an error")
	}
}
