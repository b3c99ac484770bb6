package link_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestAPIKeyState(t *testing.T) {
	at := func(d time.Duration) *time.Time { return ptr(t0.Add(d)) }
	tests := []struct {
		name string
		key  link.APIKey
		now  time.Time
		want link.KeyState
	}{
		{"plain key", link.APIKey{}, t0, link.KeyActive},
		{"plain key years later", link.APIKey{}, t0.AddDate(10, 0, 0), link.KeyActive},

		{"before expiry", link.APIKey{ExpiresAt: at(time.Hour)}, t0.Add(time.Hour - time.Nanosecond), link.KeyActive},
		{"exactly at expiry", link.APIKey{ExpiresAt: at(time.Hour)}, t0.Add(time.Hour), link.KeyExpired},
		{"after expiry", link.APIKey{ExpiresAt: at(time.Hour)}, t0.Add(2 * time.Hour), link.KeyExpired},
		{"expiry in another zone", link.APIKey{ExpiresAt: ptr(t0.In(time.FixedZone("X", 5*3600)))}, t0, link.KeyExpired},

		{"in grace", link.APIKey{GraceEndsAt: at(time.Hour)}, t0, link.KeyGrace},
		{"last instant of grace", link.APIKey{GraceEndsAt: at(time.Hour)}, t0.Add(time.Hour - time.Nanosecond), link.KeyGrace},
		{"exactly at grace end", link.APIKey{GraceEndsAt: at(time.Hour)}, t0.Add(time.Hour), link.KeyRevoked},
		{"after grace", link.APIKey{GraceEndsAt: at(time.Hour)}, t0.Add(48 * time.Hour), link.KeyRevoked},

		{"revoked", link.APIKey{RevokedAt: at(0)}, t0, link.KeyRevoked},
		{"revoked before it was revoked", link.APIKey{RevokedAt: at(time.Hour)}, t0, link.KeyRevoked},
		{"revoked wins over expired", link.APIKey{RevokedAt: at(0), ExpiresAt: at(time.Minute)}, t0.Add(time.Hour), link.KeyRevoked},
		{"revoked wins over grace", link.APIKey{RevokedAt: at(0), GraceEndsAt: at(time.Hour)}, t0, link.KeyRevoked},

		{"expired during grace", link.APIKey{GraceEndsAt: at(2 * time.Hour), ExpiresAt: at(time.Hour)}, t0.Add(time.Hour), link.KeyExpired},
		{"grace before expiry", link.APIKey{GraceEndsAt: at(2 * time.Hour), ExpiresAt: at(time.Hour)}, t0.Add(30 * time.Minute), link.KeyGrace},
		{"grace ended, not yet expired", link.APIKey{GraceEndsAt: at(time.Hour), ExpiresAt: at(2 * time.Hour)}, t0.Add(time.Hour), link.KeyRevoked},
		{"grace ended and expired", link.APIKey{GraceEndsAt: at(time.Hour), ExpiresAt: at(2 * time.Hour)}, t0.Add(3 * time.Hour), link.KeyExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := tt.key.State(tt.now), tt.want; got != want {
				t.Fatalf("State = %q, want %q", got, want)
			}
		})
	}
}

func TestKeyStateAuthenticates(t *testing.T) {
	for s, want := range map[link.KeyState]bool{
		link.KeyActive: true, link.KeyGrace: true, link.KeyRevoked: false, link.KeyExpired: false, "": false,
	} {
		if got := s.Authenticates(); got != want {
			t.Errorf("%q.Authenticates() = %v, want %v", s, got, want)
		}
	}
}

func TestAPIKeyValidate(t *testing.T) {
	tests := []struct {
		name     string
		key      link.APIKey
		want     []string
		wantName string
	}{
		{"valid", link.APIKey{Name: "ci", Scope: link.ScopeRead}, nil, "ci"},
		{"name trimmed", link.APIKey{Name: "  deploy bot \t", Scope: link.ScopeReadWrite}, nil, "deploy bot"},
		{"100 characters", link.APIKey{Name: strings.Repeat("ü", 100), Scope: link.ScopeRead}, nil, strings.Repeat("ü", 100)},
		{"expires later", link.APIKey{Name: "k", Scope: link.ScopeRead, ExpiresAt: ptr(t0.Add(time.Nanosecond))}, nil, "k"},

		{"no name", link.APIKey{Scope: link.ScopeRead}, []string{"name"}, ""},
		{"blank name", link.APIKey{Name: "   ", Scope: link.ScopeRead}, []string{"name"}, ""},
		{"101 characters", link.APIKey{Name: strings.Repeat("x", 101), Scope: link.ScopeRead}, []string{"name"}, strings.Repeat("x", 101)},
		{"control in name", link.APIKey{Name: "a\x00b", Scope: link.ScopeRead}, []string{"name"}, "a\x00b"},
		{"no scope", link.APIKey{Name: "k"}, []string{"scope"}, "k"},
		{"owner is no scope", link.APIKey{Name: "k", Scope: "owner"}, []string{"scope"}, "k"},
		{"expires now", link.APIKey{Name: "k", Scope: link.ScopeRead, ExpiresAt: ptr(t0)}, []string{"expires_at"}, "k"},
		{"expired", link.APIKey{Name: "k", Scope: link.ScopeRead, ExpiresAt: ptr(t0.Add(-time.Hour))}, []string{"expires_at"}, "k"},
		{"all wrong", link.APIKey{Scope: "admin", ExpiresAt: ptr(t0)}, []string{"name", "scope", "expires_at"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := tt.key
			err := k.Validate(t0)
			if got, want := fieldNames(err), tt.want; !reflect.DeepEqual(got, want) {
				t.Fatalf("Validate: fields %q, want %q (err %v)", got, want, err)
			}
			if err != nil {
				if got, want := link.ErrorCode(err), link.EINVALID; got != want {
					t.Fatalf("ErrorCode = %q, want %q", got, want)
				}
			}
			if got, want := k.Name, tt.wantName; got != want {
				t.Fatalf("Name after Validate = %q, want %q", got, want)
			}
		})
	}
}

func TestCheckEmail(t *testing.T) {
	const invalid = "is not a valid e-mail address"
	// 64 + 1 + 189 = 254 bytes.
	longest := strings.Repeat("a", 64) + "@" + strings.Repeat("b", 185) + ".com"
	tests := []struct {
		email string
		want  string
	}{
		{"ada@example.com", ""},
		{"Ada.Lovelace+links@Example.co.uk", ""},
		{"a@b", ""},
		{longest, ""},

		{"", "is required"},
		{longest + "m", "must be at most 254 characters"},
		{"ada", invalid},
		{"ada@", invalid},
		{"@example.com", invalid},
		{"ada@@example.com", invalid},
		{"ada @example.com", invalid},
		{" ada@example.com", invalid},
		{"ada@example.com ", invalid},
		{"<ada@example.com>", invalid},
		{"Ada <ada@example.com>", invalid},
		{"ada@example.com, bob@example.com", invalid},
		{"ada@example.com\n", invalid},
	}
	for _, tt := range tests {
		if got, want := link.CheckEmail(tt.email), tt.want; got != want {
			t.Errorf("CheckEmail(%q) = %q, want %q", tt.email, got, want)
		}
	}
}

func TestCheckPassword(t *testing.T) {
	tests := []struct {
		pw   string
		want string
	}{
		{strings.Repeat("x", 10), ""},
		{strings.Repeat("x", 72), ""},
		{"correct horse battery staple", ""},
		{strings.Repeat("ü", 36), ""}, // 72 bytes

		{"", "must be at least 10 characters"},
		{strings.Repeat("x", 9), "must be at least 10 characters"},
		{strings.Repeat("x", 73), "must be at most 72 bytes"},
		{strings.Repeat("ü", 37), "must be at most 72 bytes"}, // 37 characters, 74 bytes
	}
	for _, tt := range tests {
		if got, want := link.CheckPassword(tt.pw), tt.want; got != want {
			t.Errorf("CheckPassword(%q) = %q, want %q", tt.pw, got, want)
		}
	}
}

func TestValidateCredentials(t *testing.T) {
	tests := []struct {
		name, email, password string
		want                  []string
	}{
		{"valid", "ada@example.com", "correct horse", nil},
		{"bad e-mail", "ada", "correct horse", []string{"email"}},
		{"short password", "ada@example.com", "short", []string{"password"}},
		{"both", "", "", []string{"email", "password"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := link.ValidateCredentials(tt.email, tt.password)
			if got, want := fieldNames(err), tt.want; !reflect.DeepEqual(got, want) {
				t.Fatalf("fields %q, want %q (err %v)", got, want, err)
			}
			if err != nil {
				if got, want := link.ErrorCode(err), link.EINVALID; got != want {
					t.Fatalf("ErrorCode = %q, want %q", got, want)
				}
			}
		})
	}
}
