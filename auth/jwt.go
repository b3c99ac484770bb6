package auth

import (
	"crypto/rand"
	"errors"
	"fmt"
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

// Issue returns a token for the user with the claims sub, iat, exp and iss,
// and the time it expires (whole seconds, as in the token). The error is
// internal: an empty secret or user ID.
func (j JWT) Issue(userID string) (token string, expiresAt time.Time, err error) {
	if len(j.Secret) == 0 {
		return "", time.Time{}, errors.New("auth: JWT secret is empty")
	}
	if userID == "" {
		return "", time.Time{}, errors.New("auth: issue JWT: empty user ID")
	}
	now := j.now()
	exp := jwt.NewNumericDate(now.Add(j.ttl()))
	claims := jwt.RegisteredClaims{
		Issuer:    Issuer,
		Subject:   userID,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: exp,
	}
	token, err = jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(j.Secret)
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
	if len(j.Secret) == 0 {
		return "", errors.New("auth: JWT secret is empty")
	}
	var claims jwt.RegisteredClaims
	p := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithTimeFunc(j.now),
		jwt.WithIssuer(Issuer),
		jwt.WithExpirationRequired(),
	)
	_, err = p.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return j.Secret, nil })
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		// The signature was checked before the claims, so this is our token.
		return "", link.Errorf(link.EUNAUTHORIZED, "token expired: log in again")
	case err != nil:
		return "", link.Errorf(link.EUNAUTHORIZED, "invalid token")
	case claims.Subject == "":
		return "", link.Errorf(link.EUNAUTHORIZED, "invalid token: no subject")
	}
	return claims.Subject, nil
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
