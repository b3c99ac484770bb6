package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// wantChecksum decodes the last six characters of token as a base62 number,
// independently of the package's encoder, and compares it with the CRC-32 of
// the rest.
func wantChecksum(t testing.TB, token string) bool {
	t.Helper()
	if len(token) < checksumLength {
		return false
	}
	var v uint64
	for _, c := range token[len(token)-checksumLength:] {
		i := strings.IndexRune(base62, c)
		if i < 0 {
			return false
		}
		v = v*62 + uint64(i)
	}
	return v == uint64(crc32.ChecksumIEEE([]byte(token[:len(token)-checksumLength])))
}

func isBase62(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune(base62, c) {
			return false
		}
	}
	return true
}

func TestTokensGenerate(t *testing.T) {
	for _, prefix := range []string{"", "lb", "acme", "X9"} {
		tk := Tokens{Prefix: prefix}
		head := tk.prefix() + "_live_"
		token, hash, start, err := tk.Generate()
		if err != nil {
			t.Fatalf("Generate(%q): %v", prefix, err)
		}
		if !strings.HasPrefix(token, head) {
			t.Fatalf("token %q does not start with %q", token, head)
		}
		if got, want := len(token), len(head)+38; got != want {
			t.Fatalf("len(token) = %d, want %d", got, want)
		}
		if body := token[len(head):]; !isBase62(body) {
			t.Fatalf("token body %q is not base62", body)
		}
		if !wantChecksum(t, token) {
			t.Fatalf("token %q: checksum is not the CRC-32 of the rest", token)
		}
		if got, want := hex.EncodeToString(hash), hex.EncodeToString(sha256Of(token)); got != want {
			t.Fatalf("hash = %s, want %s", got, want)
		}
		if got, want := start, token[:len(head)+4]; got != want {
			t.Fatalf("start = %q, want %q", got, want)
		}
		if err := tk.Check(token); err != nil {
			t.Fatalf("Check(generated %q) = %v, want nil", token, err)
		}
		if !LooksLikeKey(token, prefix) {
			t.Fatalf("LooksLikeKey(%q, %q) = false", token, prefix)
		}
	}
}

func sha256Of(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func TestTokensGenerateInvalidPrefix(t *testing.T) {
	for _, prefix := range []string{"l_b", "has space", "ünï", strings.Repeat("a", 17)} {
		if _, _, _, err := (Tokens{Prefix: prefix}).Generate(); err == nil {
			t.Errorf("Generate with prefix %q: err = nil, want an error", prefix)
		}
	}
}

// TestTokensGolden pins the token format: a change to the alphabet or the
// checksum would make every key already handed out fail Check.
func TestTokensGolden(t *testing.T) {
	tests := []struct {
		prefix, random, want string
	}{
		// Computed with Python's zlib.crc32 and its own base62 encoder.
		{"lb", "0123456789ABCDEFGHIJKLMNOPQRSTUV", "lb_live_0123456789ABCDEFGHIJKLMNOPQRSTUV1atgEh"},
		{"acme", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "acme_live_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz1AiN5A"},
		{"lb", "00000000000000000000000000000000", "lb_live_00000000000000000000000000000000397ysG"},
	}
	for _, tt := range tests {
		tk := Tokens{Prefix: tt.prefix}
		if got, want := tk.assemble([]byte(tt.random)), tt.want; got != want {
			t.Errorf("assemble(%q) = %q, want %q", tt.random, got, want)
		}
		if err := tk.Check(tt.want); err != nil {
			t.Errorf("Check(%q) = %v, want nil", tt.want, err)
		}
	}
}

func TestTokensGenerateUnique(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		token, _, _, err := Tokens{}.Generate()
		if err != nil {
			t.Fatal(err)
		}
		if seen[token] {
			t.Fatalf("token %q generated twice", token)
		}
		seen[token] = true
	}
}

// TestTokensGenerateUniform catches modulo bias: with b%62 over all 256 byte
// values, '0'…'7' would come up 25% more often than the other characters.
// The tolerance of ±15% is more than 4.5 standard deviations.
func TestTokensGenerateUniform(t *testing.T) {
	const tokens = 3000
	var counts [256]int
	for range tokens {
		token, _, _, err := Tokens{}.Generate()
		if err != nil {
			t.Fatal(err)
		}
		random := token[len("lb_live_") : len("lb_live_")+randomLength]
		for i := 0; i < len(random); i++ {
			counts[random[i]]++
		}
	}
	want := float64(tokens*randomLength) / 62
	for i := 0; i < len(base62); i++ {
		if got := float64(counts[base62[i]]); got < want*0.85 || got > want*1.15 {
			t.Errorf("character %q came up %v times, want about %v", base62[i], got, want)
		}
	}
}

func TestTokensCheck(t *testing.T) {
	const valid = "lb_live_0123456789ABCDEFGHIJKLMNOPQRSTUV1atgEh"
	const malformed = "malformed API key"
	const mismatch = "API key checksum does not match: the key was mistyped or truncated"
	tests := []struct {
		name, token, want string // want is a prefix of the message; "" means valid
	}{
		{"valid", valid, ""},
		{"empty", "", malformed},
		{"prefix only", "lb_live_", malformed},
		{"other prefix", "xx_live_0123456789ABCDEFGHIJKLMNOPQRSTUV1atgEh", malformed},
		{"test infix", "lb_test_0123456789ABCDEFGHIJKLMNOPQRSTUV1atgEh", malformed},
		{"upper-case prefix", "LB_live_0123456789ABCDEFGHIJKLMNOPQRSTUV1atgEh", malformed},
		{"truncated", valid[:len(valid)-1], malformed},
		{"extra character", valid + "0", malformed},
		{"leading space", " " + valid[:len(valid)-1], malformed},
		{"trailing newline", valid[:len(valid)-1] + "\n", malformed},
		{"dash", "lb_live_0123456789ABCDEFGHIJKLMNOPQRST-V1atgEh", malformed},
		{"underscore", "lb_live_0123456789ABCDEFGHIJKLMNOPQRST_V1atgEh", malformed},
		{"non-ASCII", "lb_live_0123456789ABCDEFGHIJKLMNOPQRSTÜ1atgEh", malformed},
		{"NUL", "lb_live_0123456789ABCDEFGHIJKLMNOPQRST\x00V1atgEh", malformed},
		{"bad checksum", "lb_live_0123456789ABCDEFGHIJKLMNOPQRSTUV1atgEi", mismatch},
		{"swapped characters", "lb_live_1023456789ABCDEFGHIJKLMNOPQRSTUV1atgEh", mismatch},
		{"case changed", "lb_live_0123456789aBCDEFGHIJKLMNOPQRSTUV1atgEh", mismatch},
		{"a JWT", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0.x", malformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Tokens{}.Check(tt.token)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want nil", tt.token, err)
				}
				return
			}
			if got, want := link.ErrorCode(err), link.EUNAUTHORIZED; got != want {
				t.Fatalf("Check(%q) code = %q, want %q", tt.token, got, want)
			}
			if got := link.ErrorMessage(err); !strings.HasPrefix(got, tt.want) {
				t.Fatalf("Check(%q) message = %q, want it to start with %q", tt.token, got, tt.want)
			}
		})
	}
}

// TestTokensCheckEverySubstitution replaces each character after the prefix
// by every other base62 character: CRC-32 catches every such error.
func TestTokensCheckEverySubstitution(t *testing.T) {
	tk := Tokens{}
	token, _, _, err := tk.Generate()
	if err != nil {
		t.Fatal(err)
	}
	head := len("lb_live_")
	b := []byte(token)
	for i := head; i < len(b); i++ {
		orig := b[i]
		for j := 0; j < len(base62); j++ {
			if base62[j] == orig {
				continue
			}
			b[i] = base62[j]
			if err := tk.Check(string(b)); link.ErrorCode(err) != link.EUNAUTHORIZED {
				t.Fatalf("Check(%q) = %v, want EUNAUTHORIZED", b, err)
			}
		}
		b[i] = orig
	}
}

func TestTokensCheckOtherPrefix(t *testing.T) {
	token, _, _, err := Tokens{Prefix: "acme"}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if err := (Tokens{Prefix: "acme"}).Check(token); err != nil {
		t.Fatalf("Check with the same prefix = %v, want nil", err)
	}
	if got, want := link.ErrorCode(Tokens{}.Check(token)), link.EUNAUTHORIZED; got != want {
		t.Fatalf("Check with the default prefix: code = %q, want %q", got, want)
	}
}

func TestLooksLikeKey(t *testing.T) {
	tests := []struct {
		token, prefix string
		want          bool
	}{
		{"lb_live_abc", "lb", true},
		{"lb_live_abc", "", true},
		{"lb_live_", "lb", true},
		{"lb_live", "lb", false},
		{"lb_test_abc", "lb", false},
		{"acme_live_abc", "lb", false},
		{"acme_live_abc", "acme", true},
		{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "lb", false},
		{"", "lb", false},
	}
	for _, tt := range tests {
		if got := LooksLikeKey(tt.token, tt.prefix); got != tt.want {
			t.Errorf("LooksLikeKey(%q, %q) = %v, want %v", tt.token, tt.prefix, got, tt.want)
		}
	}
}

func TestHashToken(t *testing.T) {
	// The SHA-256 test vector of "abc" (FIPS 180-2).
	got := hex.EncodeToString(HashToken("abc"))
	want := "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got != want {
		t.Fatalf("HashToken(abc) = %s, want %s", got, want)
	}
}

func TestCheckKeyPrefix(t *testing.T) {
	for _, p := range []string{"lb", "acme", "A1", strings.Repeat("z", 16)} {
		if err := CheckKeyPrefix(p); err != nil {
			t.Errorf("CheckKeyPrefix(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range []string{"", "l_b", "a-b", "a b", "é", strings.Repeat("z", 17)} {
		if err := CheckKeyPrefix(p); err == nil {
			t.Errorf("CheckKeyPrefix(%q) = nil, want an error", p)
		}
	}
}

func FuzzCheck(f *testing.F) {
	f.Add("lb_live_0123456789ABCDEFGHIJKLMNOPQRSTUV1atgEh")
	f.Add("lb_live_0123456789ABCDEFGHIJKLMNOPQRSTUV1atgEi")
	f.Add("lb_live_00000000000000000000000000000000397ysG")
	f.Add("lb_live_")
	f.Add("")
	f.Add("lb_live_0123456789ABCDEFGHIJKLMNOPQRST\xffV1atgEh")
	tk := Tokens{}
	f.Fuzz(func(t *testing.T, token string) {
		err := tk.Check(token)
		if err != nil {
			if got, want := link.ErrorCode(err), link.EUNAUTHORIZED; got != want {
				t.Fatalf("Check(%q) code = %q, want %q", token, got, want)
			}
			return
		}
		// Accepted: it must have the shape of a token, by an independent check.
		if !strings.HasPrefix(token, "lb_live_") || len(token) != len("lb_live_")+38 {
			t.Fatalf("Check accepted %q of the wrong shape", token)
		}
		if !isBase62(token[len("lb_live_"):]) {
			t.Fatalf("Check accepted %q with a non-base62 character", token)
		}
		if !wantChecksum(t, token) {
			t.Fatalf("Check accepted %q with a wrong checksum", token)
		}
	})
}

func BenchmarkGenerate(b *testing.B) {
	for b.Loop() {
		if _, _, _, err := (Tokens{}).Generate(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	token, _, _, err := Tokens{}.Generate()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := (Tokens{}).Check(token); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHashToken(b *testing.B) {
	token, _, _, err := Tokens{}.Generate()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		HashToken(token)
	}
}
