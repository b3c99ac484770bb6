package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkbolt/linkbolt/link"
)

// OIDCFlowTTL is how long a sign-in may take between /v1/auth/oidc/start
// and the provider sending the browser back.
const OIDCFlowTTL = 10 * time.Minute

// OIDCFlow is what one sign-in must remember between the start and the
// callback: the state sent to the provider, the nonce the ID token must
// carry, the PKCE verifier and when the sign-in expires.
type OIDCFlow struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	Expires  time.Time `json:"e"`
	// ClientState is the value the page that started the sign-in gave,
	// handed back with the token so that the page takes only a token of
	// a sign-in it started.
	ClientState string `json:"c,omitempty"`
}

// FlowSealer keeps an OIDCFlow in the browser rather than on the server:
// Seal encrypts and authenticates it (AES-256-GCM) for a cookie, and Open
// takes back only what Seal made and has not expired. So sign-ins in
// progress cost the server no memory, and no store can be filled up.
type FlowSealer struct {
	aead cipher.AEAD
	now  func() time.Time
}

// flowKeyInfo separates the cookie key from every other use of the secret.
const flowKeyInfo = "linkbolt oidc flow cookie v1"

// NewFlowSealer derives the cookie key from the JWT secret with HKDF-SHA256,
// so that there is no further secret to configure and a new JWT secret
// ends sign-ins in progress along with the tokens. now is the clock (nil:
// time.Now).
func NewFlowSealer(secret []byte, now func() time.Time) (*FlowSealer, error) {
	if len(secret) == 0 {
		return nil, errors.New("auth: flow sealer: the JWT secret is empty")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, flowKeyInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("auth: derive the flow key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("auth: flow cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("auth: flow cipher: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &FlowSealer{aead: aead, now: now}, nil
}

// NewFlow returns a fresh sign-in: a random state and nonce (128 bits
// each), a PKCE verifier (256 bits) and an expiry OIDCFlowTTL from now.
func (s *FlowSealer) NewFlow() OIDCFlow {
	return OIDCFlow{State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier(),
		Expires: s.now().Add(OIDCFlowTTL).UTC()}
}

// Seal returns flow encrypted and authenticated, as cookie-safe text.
func (s *FlowSealer) Seal(flow OIDCFlow) (string, error) {
	plain, err := json.Marshal(flow)
	if err != nil {
		return "", fmt.Errorf("auth: seal flow: %w", err)
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("auth: seal flow: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(flowKeyInfo))), nil
}

// maxSealedFlow bounds the cookie Open decodes; a sealed flow is ~250 bytes.
const maxSealedFlow = 1024

// Open returns the flow sealed in text. EINVALIDREQUEST when text was not
// made by Seal with this key, or the flow has expired.
func (s *FlowSealer) Open(text string) (OIDCFlow, error) {
	var flow OIDCFlow
	bad := link.Errorf(link.EINVALIDREQUEST, "this sign-in cannot be matched to your browser: start it again")
	if len(text) > maxSealedFlow {
		return flow, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return flow, bad
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(flowKeyInfo))
	if err != nil || json.Unmarshal(plain, &flow) != nil || flow.State == "" || flow.Nonce == "" || flow.Verifier == "" {
		return OIDCFlow{}, bad
	}
	if !s.now().Before(flow.Expires) {
		return OIDCFlow{}, link.Errorf(link.EINVALIDREQUEST, "this sign-in took longer than %s: start it again", OIDCFlowTTL)
	}
	return flow, nil
}
