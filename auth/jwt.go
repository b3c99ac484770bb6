package auth

import (
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/linkbolt/linkbolt/link"
)

// Issuer is the iss claim of every JWT linkbolt issues; Verify requires it.
const Issuer = "linkbolt"

// DefaultTokenTTL is how long a JWT is valid when JWT.TTL is not set.
const DefaultTokenTTL = 24 * time.Hour

// MinSecretLength is the shortest JWT secret CheckSecret accepts: 256 bits,
// the size of the HS256 hash.
const MinSecretLength = 32

// JWT issues and verifies the HS256 tokens that dashboard users log in with.
type JWT struct {
	// Secret is the HMAC key, auth.jwt_secret or one made by NewSecret.
	Secret []byte
	// TTL is how long an issued token is valid; 0 means DefaultTokenTTL.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Generation returns a user's current token generation, written into
	// each token Issue makes (see Sessions); nil means 0.
	Generation func(userID string) uint64
}

// Claims is what a verified token says.
type Claims struct {
	UserID string
	// ID (jti) names this one token, for logging it out.
	ID string
	// Generation is the user's token generation when the token was issued.
	Generation uint64
	IssuedAt   time.Time
	ExpiresAt  time.Time
}

// claims is the JWT body: the registered claims and the user's token
// generation.
type claims struct {
	jwt.RegisteredClaims
	Generation uint64 `json:"gen,omitempty"`
}

func (j JWT) now() time.Time {
	if j.Now == nil {
		return time.Now()
	}
	return j.Now()
}

func (j JWT) ttl() time.Duration {
	if j.TTL <= 0 {
		return DefaultTokenTTL
	}
	return j.TTL
}

// Issue returns a token for the user with the claims sub, iat, exp, iss,
// jti (random, 128 bits) and gen (the user's token generation), and the
// time it expires (whole seconds, as in the token). The error is internal:
// an empty secret or user ID.
func (j JWT) Issue(userID string) (token string, expiresAt time.Time, err error) {
	var gen uint64
	if j.Generation != nil {
		gen = j.Generation(userID)
	}
	return j.IssueGeneration(userID, gen)
}

// IssueGeneration is Issue with the token generation given: that of the
// user record a login checked the password against. A login that read the
// record before a password change then gets a token of the old generation,
// which the change ends, even when it is issued after the change.
func (j JWT) IssueGeneration(userID string, generation uint64) (token string, expiresAt time.Time, err error) {
	if len(j.Secret) == 0 {
		return "", time.Time{}, errors.New("auth: JWT secret is empty")
	}
	if userID == "" {
		return "", time.Time{}, errors.New("auth: issue JWT: empty user ID")
	}
	now := j.now()
	exp := jwt.NewNumericDate(now.Add(j.ttl()))
	c := claims{RegisteredClaims: jwt.RegisteredClaims{
		Issuer:    Issuer,
		Subject:   userID,
		ID:        rand.Text(),
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: exp,
	}, Generation: generation}
	token, err = jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(j.Secret)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("auth: sign JWT: %w", err)
	}
	return token, exp.UTC(), nil
}

// Verify returns the user ID of a token that this instance issued and that
// has not expired at j.Now. Only HS256 is accepted, whatever the token's
// header says, so "none" and tokens made for other algorithms are refused.
// Every rejection is link.EUNAUTHORIZED: "token expired" for a token whose
// time is up and "invalid token" for anything else. An empty secret is an
// internal error, not a bad token.
func (j JWT) Verify(token string) (userID string, err error) {
	c, err := j.VerifyClaims(token)
	return c.UserID, err
}

// VerifyClaims is Verify returning all the token says. Whether the token
// was logged out is for Sessions.Check to say.
func (j JWT) VerifyClaims(token string) (Claims, error) {
	if len(j.Secret) == 0 {
		return Claims{}, errors.New("auth: JWT secret is empty")
	}
	var c claims
	p := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithTimeFunc(j.now),
		jwt.WithIssuer(Issuer),
		jwt.WithExpirationRequired(),
	)
	_, err := p.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return j.Secret, nil })
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		// The signature was checked before the claims, so this is our token.
		return Claims{}, link.Errorf(link.EUNAUTHORIZED, "token expired: log in again")
	case err != nil:
		return Claims{}, link.Errorf(link.EUNAUTHORIZED, "invalid token")
	case c.Subject == "":
		return Claims{}, link.Errorf(link.EUNAUTHORIZED, "invalid token: no subject")
	}
	out := Claims{UserID: c.Subject, ID: c.ID, Generation: c.Generation, ExpiresAt: c.ExpiresAt.UTC()}
	if c.IssuedAt != nil {
		out.IssuedAt = c.IssuedAt.UTC()
	}
	return out, nil
}

// NewSecret returns 32 random bytes for a JWT secret, made once on a fresh
// data file when auth.jwt_secret is empty.
func NewSecret() []byte {
	b := make([]byte, MinSecretLength)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand.Read does not fail since Go 1.24; this is unreachable.
		panic(fmt.Sprintf("auth: read random bytes: %v", err))
	}
	return b
}

// CheckSecret returns an error if a configured JWT secret is shorter than
// MinSecretLength bytes. Config validation calls it; JWT itself accepts any
// non-empty secret.
func CheckSecret(secret []byte) error {
	if len(secret) < MinSecretLength {
		return fmt.Errorf("auth: the JWT secret must be at least %d bytes, not %d", MinSecretLength, len(secret))
	}
	return nil
}

// tokenCacheSize bounds the tokens a TokenCache holds: about 1 MB.
const tokenCacheSize = 4096

// TokenCache remembers the claims of tokens its JWT's VerifyClaims
// accepted, so that the requests of a session check the token's signature
// and parse its claims once, not once a request (a tenth of the work of
// creating a link through the API). A remembered token is still refused
// from its expiry on, as VerifyClaims refuses it; whether it was logged
// out is for Sessions.Check to say on every request, as before. It holds
// at most tokenCacheSize tokens, making room by dropping arbitrary ones.
type TokenCache struct {
	jwt *JWT // its secret never changes
	mu  sync.Mutex
	m   map[string]Claims
}

// NewTokenCache returns an empty cache of the tokens of j.
func NewTokenCache(j *JWT) *TokenCache { return &TokenCache{jwt: j} }

// VerifyClaims is the JWT's VerifyClaims(token), from the cache when it
// accepted the token before and the token has not expired since.
func (c *TokenCache) VerifyClaims(token string) (Claims, error) {
	c.mu.Lock()
	cl, ok := c.m[token]
	c.mu.Unlock()
	if ok && c.jwt.now().Before(cl.ExpiresAt) {
		return cl, nil
	}
	cl, err := c.jwt.VerifyClaims(token)
	if err != nil {
		if ok { // it expired: forget it
			c.mu.Lock()
			delete(c.m, token)
			c.mu.Unlock()
		}
		return cl, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]Claims)
	}
	for k := range c.m {
		if len(c.m) < tokenCacheSize {
			break
		}
		delete(c.m, k)
	}
	c.m[token] = cl
	return cl, nil
}
