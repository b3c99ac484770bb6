package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/config"
)

func TestConfig(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		t.Chdir(t.TempDir())
		cfg, err := config.Load("")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Server.Listen != ":8080" || cfg.Server.BaseURL.String() != "http://localhost:8080" || cfg.Storage.Path != "./data/linkbolt.db" ||
			cfg.Plans.Free != 100 || cfg.Plans.Pro != 1000 || cfg.Plans.Enterprise != 0 || cfg.Auth.RotationGrace != 24*time.Hour ||
			cfg.Clicks.FlushInterval != time.Second || cfg.Server.MaxBody != 1<<20 {
			t.Fatalf("defaults: %+v", cfg)
		}
	})
	t.Run("environment", func(t *testing.T) {
		t.Chdir(t.TempDir())
		t.Setenv("LINKBOLT_SERVER_LISTEN", ":9999")
		t.Setenv("LINKBOLT_PLANS_PRO", "5000")
		t.Setenv("LINKBOLT_AUTH_ROTATION_GRACE", "1h")
		cfg, err := config.Load("")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Server.Listen != ":9999" || cfg.Plans.Pro != 5000 || cfg.Auth.RotationGrace != time.Hour {
			t.Fatalf("env: %+v", cfg)
		}
	})
	t.Run("untracked visits", func(t *testing.T) {
		t.Chdir(t.TempDir())
		os.WriteFile("config.yaml", []byte("analytics:\n  untracked_ips: [\"203.0.113.7\", \"198.51.100.9/24\", \"2001:db8::/32\", \"::ffff:192.0.2.0/120\"]\n  untracked_param: lb_check\n"), 0o600)
		cfg, err := config.Load("")
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(cfg.UntrackedRanges()); got != "[203.0.113.7/32 198.51.100.0/24 2001:db8::/32 192.0.2.0/24]" || cfg.Analytics.UntrackedParam != "lb_check" {
			t.Fatalf("untracked: %s, %q", got, cfg.Analytics.UntrackedParam)
		}
		os.WriteFile("config.yaml", []byte("analytics:\n  untracked_ips: [\"office\"]\n  untracked_param: \"a=b\"\n"), 0o600)
		_, err = config.Load("")
		if err == nil || !strings.Contains(err.Error(), "analytics.untracked_ips") || !strings.Contains(err.Error(), "analytics.untracked_param") {
			t.Fatalf("bad untracked settings: %v", err)
		}
	})
	t.Run("durations and base URLs", func(t *testing.T) {
		t.Chdir(t.TempDir())
		t.Setenv("LINKBOLT_CLICKS_FLUSH_INTERVAL", "200ms")
		t.Setenv("LINKBOLT_SERVER_BASE_URL", "https://sho.rt/")
		t.Setenv("LINKBOLT_SERVER_ALT_BASE_URL", "http://s.test:8080")
		os.WriteFile("config.yaml", []byte("links:\n  alias_hold: 0\nauth:\n  token_ttl: 90m\n"), 0o600)
		cfg, err := config.Load("")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := cfg.Clicks.FlushInterval, 200*time.Millisecond; got != want {
			t.Errorf("clicks.flush_interval = %s, want %s", got, want)
		}
		if got, want := cfg.Auth.TokenTTL, 90*time.Minute; got != want {
			t.Errorf("auth.token_ttl = %s, want %s", got, want)
		}
		if got, want := cfg.Links.AliasHold, time.Duration(0); got != want {
			t.Errorf("links.alias_hold = %s, want %s", got, want)
		}
		if got, want := cfg.Server.BaseURL.String(), "https://sho.rt"; got != want {
			t.Errorf("server.base_url = %s, want %s", got, want)
		}
		if got, want := cfg.Server.AltBaseURL.String(), "http://s.test:8080"; got != want {
			t.Errorf("server.alt_base_url = %s, want %s", got, want)
		}
	})
	t.Run("errors name the key", func(t *testing.T) {
		for bad, key := range map[string]string{
			"auth:\n  token_ttl: forever\n":           "auth.token_ttl",
			"auth:\n  token_ttl: 3600\n":              "auth.token_ttl",
			"auth:\n  token_ttl: 30s\n":               "auth.token_ttl",
			"clicks:\n  flush_interval: -1s\n":        "clicks.flush_interval",
			"server:\n  base_url: http://x.test/p\n":  "server.base_url",
			"server:\n  alt_base_url: ftp://x.test\n": "server.alt_base_url",
		} {
			p := filepath.Join(t.TempDir(), "c.yaml")
			os.WriteFile(p, []byte(bad), 0o600)
			if _, err := config.Load(p); err == nil || !strings.Contains(err.Error(), key) {
				t.Errorf("%q: err = %v, want one naming %s", bad, err, key)
			}
		}
	})
	t.Run("geoip", func(t *testing.T) {
		t.Chdir(t.TempDir())
		if cfg, err := config.Load(""); err != nil || cfg.Analytics.GeoIP != "on" || !cfg.GeoIPOn() {
			t.Fatalf("default: %+v %v", cfg.Analytics, err)
		}
		for _, v := range []string{"off", "OFF", "false"} {
			t.Setenv("LINKBOLT_ANALYTICS_GEOIP", v)
			if cfg, err := config.Load(""); err != nil || cfg.Analytics.GeoIP != "off" || cfg.GeoIPOn() {
				t.Fatalf("LINKBOLT_ANALYTICS_GEOIP=%s: %+v %v", v, cfg.Analytics, err)
			}
		}
		t.Setenv("LINKBOLT_ANALYTICS_GEOIP", "")
		for yaml, want := range map[string]string{"geoip: off": "off", "geoip: false": "off", "geoip: on": "on", "geoip: true": "on"} {
			p := filepath.Join(t.TempDir(), "c.yaml")
			os.WriteFile(p, []byte("analytics:\n  "+yaml+"\n"), 0o600)
			if cfg, err := config.Load(p); err != nil || cfg.Analytics.GeoIP != want {
				t.Errorf("%s: %+v %v, want %s", yaml, cfg.Analytics, err, want)
			}
		}
	})
	t.Run("cors origins", func(t *testing.T) {
		t.Chdir(t.TempDir())
		if cfg, err := config.Load(""); err != nil || len(cfg.Server.CORSOrigins) != 0 {
			t.Fatalf("default: %q %v", cfg.Server.CORSOrigins, err)
		}
		t.Setenv("LINKBOLT_SERVER_CORS_ORIGINS", "https://App.example.com/,http://localhost:5173")
		cfg, err := config.Load("")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(cfg.Server.CORSOrigins), "[https://app.example.com http://localhost:5173]"; got != want {
			t.Fatalf("from the environment: %s, want %s", got, want)
		}
		p := filepath.Join(t.TempDir(), "c.yaml")
		os.WriteFile(p, []byte("server:\n  cors_origins: [\"*\"]\n"), 0o600)
		t.Setenv("LINKBOLT_SERVER_CORS_ORIGINS", "") // empty is unset
		if cfg, err := config.Load(p); err != nil || fmt.Sprint(cfg.Server.CORSOrigins) != "[*]" {
			t.Fatalf("from a file: %q %v", cfg.Server.CORSOrigins, err)
		}
	})
	t.Run("example file equals the defaults", func(t *testing.T) {
		cfg, err := config.Load(filepath.Join("..", "..", "config.example.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		t.Chdir(t.TempDir())
		def, _ := config.Load("")
		if fmt.Sprintf("%+v", *cfg) != fmt.Sprintf("%+v", *def) {
			t.Fatalf("config.example.yaml differs from the defaults:\n%+v\n%+v", *cfg, *def)
		}
	})
	for _, bad := range []string{
		"server:\n  base_url: localhost:8080\n",
		"server:\n  base_url: http://x.test/path\n",
		"auth:\n  token_ttl: forever\n",
		"auth:\n  token_ttl: 3600\n",
		"server:\n  base_url: \"\"\n",
		"server:\n  base_url: http://x.test/?a=b\n",
		"auth:\n  jwt_secret: short\n",
		"auth:\n  key_prefix: my_key\n",
		"workspaces:\n  default_plan: gold\n",
		"admin:\n  email: a@example.com\n",
		"plans:\n  free: -1\n",
		"clicks:\n  flush_interval: -1s\n",
		"log:\n  format: xml\n",
		"domains:\n  scheme: ftp\n",
		"domains:\n  resolver: \"dns server\"\n",
		"domains:\n  resolver: \"127.0.0.1:99999\"\n",
		"server:\n  cors_origins: [\"https://app.example.com/app\"]\n",
		"server:\n  cors_origins: [\"app.example.com\"]\n",
		"analytics:\n  geoip: maybe\n",
	} {
		t.Run(strings.TrimSpace(bad), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.yaml")
			os.WriteFile(p, []byte(bad), 0o600)
			_, err := config.Load(p)
			if err == nil {
				t.Fatalf("accepted %q", bad)
			}
			// The error names the key that is wrong.
			if key, _, _ := strings.Cut(strings.TrimSpace(bad), ":"); !strings.Contains(err.Error(), key+".") {
				t.Fatalf("%q: the error does not name the key: %v", bad, err)
			}
		})
	}
}

func TestInstanceID(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("LINKBOLT_SERVER_LISTEN", "127.0.0.1:9123")
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if got := cfg.Instance(); !strings.HasSuffix(got, ":9123") || (host != "" && !strings.HasPrefix(got, host[:1])) || len(got) > 64 {
		t.Errorf("generated instance id = %q, want the host name (%q) and :9123", got, host)
	}
	t.Setenv("LINKBOLT_SERVER_INSTANCE_ID", "web-2.eu_1:a")
	if cfg, err = config.Load(""); err != nil {
		t.Fatal(err)
	}
	if got := cfg.Instance(); got != "web-2.eu_1:a" {
		t.Errorf("instance id = %q, want the configured one", got)
	}
	for _, bad := range []string{"web 2", "web/2", "wéb", strings.Repeat("a", 65)} {
		t.Setenv("LINKBOLT_SERVER_INSTANCE_ID", bad)
		_, err := config.Load("")
		if err == nil || !strings.Contains(err.Error(), "server.instance_id") {
			t.Errorf("instance id %q: err = %v, want a server.instance_id error", bad, err)
		}
	}
}
