package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/internal/config"
)

func TestOIDCConfig(t *testing.T) {
	t.Run("off by default", func(t *testing.T) {
		t.Chdir(t.TempDir())
		cfg, err := config.Load("")
		if err != nil {
			t.Fatal(err)
		}
		if newOIDC(cfg) != nil {
			t.Fatal("single sign-on is on without auth.oidc.issuer")
		}
	})
	t.Run("set in a file and the environment", func(t *testing.T) {
		t.Chdir(t.TempDir())
		t.Setenv("LINKBOLT_AUTH_OIDC_CLIENT_SECRET", "s3cret")
		t.Setenv("LINKBOLT_AUTH_OIDC_ALLOWED_DOMAINS", "Example.COM,@example.org")
		os.WriteFile("config.yaml", []byte("server:\n  base_url: https://sho.rt\nauth:\n  oidc:\n"+
			"    issuer: https://auth.example.com/application/o/linkbolt/\n    client_id: linkbolt\n    auto_create: true\n"), 0o600)
		cfg, err := config.Load("")
		if err != nil {
			t.Fatal(err)
		}
		o := newOIDC(cfg)
		if o == nil || o.Issuer != "https://auth.example.com/application/o/linkbolt/" || o.ClientID != "linkbolt" ||
			o.ClientSecret != "s3cret" || !o.AutoCreate || o.RedirectURL != "https://sho.rt/v1/auth/oidc/callback" {
			t.Fatalf("%+v", o)
		}
		if got, want := strings.Join(o.AllowedDomains, " "), "example.com example.org"; got != want {
			t.Fatalf("allowed domains %q, want %q", got, want)
		}
	})
	t.Run("http on a loopback address", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "c.yaml")
		os.WriteFile(p, []byte("auth:\n  oidc:\n    issuer: http://127.0.0.1:5556/dex\n    client_id: linkbolt\n"), 0o600)
		if _, err := config.Load(p); err != nil {
			t.Fatal(err)
		}
	})
	for bad, want := range map[string]string{
		"auth:\n  oidc:\n    issuer: http://auth.example.com\n    client_id: x\n":                                   "auth.oidc.issuer",
		"auth:\n  oidc:\n    issuer: auth.example.com\n    client_id: x\n":                                          "auth.oidc.issuer",
		"auth:\n  oidc:\n    issuer: https://auth.example.com\n":                                                    "auth.oidc.client_id",
		"auth:\n  oidc:\n    client_id: linkbolt\n":                                                                 "auth.oidc.issuer",
		"auth:\n  oidc:\n    auto_create: true\n":                                                                   "auth.oidc.issuer",
		"auth:\n  oidc:\n    issuer: https://a.example\n    client_id: x\n    allowed_domains: [\"a@b.example\"]\n": "auth.oidc.allowed_domains",
		"auth:\n  oidc:\n    issuer: https://a.example\n    client_id: x\n    allowed_domains: [\"\"]\n":            "auth.oidc.allowed_domains",
	} {
		p := filepath.Join(t.TempDir(), "c.yaml")
		os.WriteFile(p, []byte(bad), 0o600)
		if _, err := config.Load(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want one naming %s", bad, err, want)
		}
	}
}
