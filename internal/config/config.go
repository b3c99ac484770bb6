// Package config reads linkbolt's configuration: a YAML file,
// LINKBOLT_<SECTION>_<KEY> environment variables and the embedded defaults.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/server"
	"github.com/linkbolt/linkbolt/wire"
)

// Config is linkbolt's configuration, read by viper from a YAML file,
// LINKBOLT_<SECTION>_<KEY> environment variables and the defaults below.
type Config struct {
	Server struct {
		Listen string `mapstructure:"listen"`
		// BaseURL and AltBaseURL (nil when not set) are parsed and
		// checked as the configuration is decoded (see baseURLHook).
		BaseURL         *url.URL      `mapstructure:"base_url"`
		AltBaseURL      *url.URL      `mapstructure:"alt_base_url"`
		MaxBody         int64         `mapstructure:"max_body"`
		ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
		BehindProxy     bool          `mapstructure:"behind_proxy"`
		// InstanceID names this process among the instances on one
		// database: in /healthz, its log lines and a label of its
		// metrics. Empty: the host name and the port of Listen (see
		// Instance).
		InstanceID string `mapstructure:"instance_id"`

		// Costly API work: see server/admit.go.
		CostlyConcurrency int           `mapstructure:"costly_concurrency"`
		CostlyWait        time.Duration `mapstructure:"costly_wait"`
		SearchScanLimit   int           `mapstructure:"search_scan_limit"`
		MaxConnections    int           `mapstructure:"max_connections"`
		// CORSOrigins may call the API from a browser; see server/cors.go.
		CORSOrigins []string `mapstructure:"cors_origins"`
		// MemoryLimit is the Go runtime's soft memory limit in bytes
		// (debug.SetMemoryLimit); 0 is off. See app.applyMemoryLimit.
		MemoryLimit int64 `mapstructure:"memory_limit"`

		// HTTPS: off, acme (automatic certificates) or files; see tls.go here and internal/app/https.go.
		TLS              string `mapstructure:"tls"`
		TLSCert          string `mapstructure:"tls_cert"`
		TLSKey           string `mapstructure:"tls_key"`
		ACMEEmail        string `mapstructure:"acme_email"`
		ACMEDirectory    string `mapstructure:"acme_directory"`
		ACMECARoot       string `mapstructure:"acme_ca_root"`
		HTTPListen       string `mapstructure:"http_listen"`
		TLSRedirectsHTTP bool   `mapstructure:"tls_redirects_http"`
	} `mapstructure:"server"`
	Storage struct {
		Path string `mapstructure:"path"`
		// PostgresURL, when set, keeps every service in PostgreSQL
		// instead of the bbolt file at Path.
		PostgresURL string `mapstructure:"postgres_url"`
	} `mapstructure:"storage"`
	Auth struct {
		JWTSecret       string        `mapstructure:"jwt_secret"`
		TokenTTL        time.Duration `mapstructure:"token_ttl"`
		KeyPrefix       string        `mapstructure:"key_prefix"`
		RotationGrace   time.Duration `mapstructure:"rotation_grace"`
		InvitationTTL   time.Duration `mapstructure:"invitation_ttl"`
		LoginPerIP      int           `mapstructure:"login_per_ip"`
		LoginPerAddress int           `mapstructure:"login_per_address"`
		LoginWindow     time.Duration `mapstructure:"login_window"`
		LoginPerAccount int           `mapstructure:"login_per_account"`
		LoginMaxDelay   time.Duration `mapstructure:"login_max_delay"`
		PasswordCost    int           `mapstructure:"password_cost"`

		// OIDC is single sign-on with an OpenID Connect provider; off
		// while Issuer is empty. See validateOIDC.
		OIDC struct {
			Issuer         string   `mapstructure:"issuer"`
			ClientID       string   `mapstructure:"client_id"`
			ClientSecret   string   `mapstructure:"client_secret"`
			AllowedDomains []string `mapstructure:"allowed_domains"`
			AutoCreate     bool     `mapstructure:"auto_create"`
		} `mapstructure:"oidc"`
	} `mapstructure:"auth"`
	Keys struct {
		MaxPerWorkspace int `mapstructure:"max_per_workspace"`
	} `mapstructure:"keys"`
	Plans struct {
		Free       int `mapstructure:"free"`
		Pro        int `mapstructure:"pro"`
		Enterprise int `mapstructure:"enterprise"`
	} `mapstructure:"plans"`
	Workspaces struct {
		DefaultPlan string `mapstructure:"default_plan"`
		MaxPerUser  int    `mapstructure:"max_per_user"`
	} `mapstructure:"workspaces"`
	Admin struct {
		Email    string `mapstructure:"email"`
		Password string `mapstructure:"password"`
	} `mapstructure:"admin"`
	Links struct {
		AliasHold time.Duration `mapstructure:"alias_hold"`
		// link controls: how long a right link password unlocks the link
		UnlockTTL time.Duration `mapstructure:"unlock_ttl"`
		// link controls: the destination blocklist file and how often it
		// is looked at again.
		BlocklistPath string        `mapstructure:"blocklist_path"`
		BlocklistPoll time.Duration `mapstructure:"blocklist_poll"`
		// RobotsTxt serves /robots.txt (robots.go in server).
		RobotsTxt bool `mapstructure:"robots_txt"`
	} `mapstructure:"links"`
	Clicks struct {
		FlushInterval time.Duration `mapstructure:"flush_interval"`
		QueueSize     int           `mapstructure:"queue_size"`
		QueueBytes    int64         `mapstructure:"queue_bytes"`
		BacklogBytes  int64         `mapstructure:"backlog_bytes"`
	} `mapstructure:"clicks"`
	Analytics struct {
		// GeoIP is on (the default: countries from analytics.geoip_path,
		// else geoip.mmdb in the data folder, else the embedded database)
		// or off (every country unknown).
		GeoIP              string        `mapstructure:"geoip"`
		GeoIPPath          string        `mapstructure:"geoip_path"`
		Retention          time.Duration `mapstructure:"retention"`
		LinkHoursRetention time.Duration `mapstructure:"link_hours_retention"`
		// UntrackedIPs are addresses and ranges whose visits are never
		// counted (an office, uptime monitors); UntrackedParam names a
		// query parameter that makes a visit uncounted ("": none).
		UntrackedIPs   []string `mapstructure:"untracked_ips"`
		UntrackedParam string   `mapstructure:"untracked_param"`
		untracked      []netip.Prefix
		// OrphanRetention is how long orphan visits (visits that found no
		// link) are kept; OrphanVisitsPerHour bounds the visits kept per
		// domain and hour (every visit is counted).
		OrphanRetention     time.Duration `mapstructure:"orphan_retention"`
		OrphanVisitsPerHour int           `mapstructure:"orphan_visits_per_hour"`
	} `mapstructure:"analytics"`
	Audit struct {
		Retention time.Duration `mapstructure:"retention"`
	} `mapstructure:"audit"`
	Domains struct {
		Resolver      string        `mapstructure:"resolver"`
		Scheme        string        `mapstructure:"scheme"`
		UnverifiedTTL time.Duration `mapstructure:"unverified_ttl"`
	} `mapstructure:"domains"`
	Webhooks struct {
		AllowPrivate bool `mapstructure:"allow_private"`
	} `mapstructure:"webhooks"`
	// LinkChecks sets the background check of destinations, for the
	// workspaces that turn it on (linkcheck.Config).
	LinkChecks struct {
		Interval      time.Duration `mapstructure:"interval"`
		RetryInterval time.Duration `mapstructure:"retry_interval"`
		Concurrency   int           `mapstructure:"concurrency"`
		HostGap       time.Duration `mapstructure:"host_gap"`
		Timeout       time.Duration `mapstructure:"timeout"`
		Poll          time.Duration `mapstructure:"poll"`
		AllowPrivate  bool          `mapstructure:"allow_private"`
	} `mapstructure:"link_checks"`
	// Compat switches the APIs of other shorteners that linkbolt answers
	// for their clients.
	Compat struct {
		Kutt bool `mapstructure:"kutt"` // /api/v2, Kutt's API v2
	} `mapstructure:"compat"`
	Log struct {
		Level  string `mapstructure:"level"`
		Format string `mapstructure:"format"`
	} `mapstructure:"log"`

	// Parsed by Validate.
	logLevel slog.Level
}

// LogLevel is log.level, parsed by Validate.
func (c *Config) LogLevel() slog.Level { return c.logLevel }

// minMemoryLimit is the least server.memory_limit other than 0 (off).
const minMemoryLimit = 64 << 20

// defaults holds every key with its default; config.example.yaml mirrors it.
var defaults = map[string]any{
	"server.listen":           ":8080",
	"server.base_url":         "http://localhost:8080",
	"server.alt_base_url":     "",
	"server.max_body":         1 << 20,
	"server.shutdown_timeout": "15s",
	"server.behind_proxy":     false,
	"server.instance_id":      "",

	"server.costly_concurrency": 0,
	"server.costly_wait":        "2s",
	"server.search_scan_limit":  10_000,
	"server.max_connections":    1000,
	"server.cors_origins":       []string{},
	"server.memory_limit":       256 << 20,

	"server.tls":                "off",
	"server.tls_cert":           "",
	"server.tls_key":            "",
	"server.acme_email":         "",
	"server.acme_directory":     "https://acme-v02.api.letsencrypt.org/directory",
	"server.acme_ca_root":       "",
	"server.http_listen":        ":80",
	"server.tls_redirects_http": true,

	"storage.path":                     "./data/linkbolt.db",
	"storage.postgres_url":             "",
	"auth.jwt_secret":                  "",
	"auth.token_ttl":                   "24h",
	"auth.key_prefix":                  "lb",
	"auth.rotation_grace":              "24h",
	"auth.invitation_ttl":              "168h",
	"auth.login_per_ip":                20,
	"auth.login_per_address":           5,
	"auth.login_window":                "15m",
	"auth.login_per_account":           10,
	"auth.login_max_delay":             "15m",
	"keys.max_per_workspace":           link.DefaultMaxKeysPerWorkspace,
	"auth.password_cost":               12,
	"plans.free":                       100,
	"plans.pro":                        1000,
	"plans.enterprise":                 0,
	"workspaces.default_plan":          "free",
	"workspaces.max_per_user":          link.DefaultMaxWorkspacesPerUser,
	"admin.email":                      "",
	"admin.password":                   "",
	"links.alias_hold":                 "720h",
	"links.unlock_ttl":                 "24h",
	"links.blocklist_path":             "",
	"links.blocklist_poll":             "5s",
	"links.robots_txt":                 true,
	"clicks.flush_interval":            "1s",
	"clicks.queue_size":                1_000_000,
	"clicks.queue_bytes":               16 << 20,
	"clicks.backlog_bytes":             512 << 20,
	"analytics.geoip":                  "on",
	"analytics.geoip_path":             "",
	"analytics.retention":              "2160h",
	"analytics.link_hours_retention":   "840h",
	"analytics.untracked_ips":          []string{},
	"analytics.untracked_param":        "",
	"analytics.orphan_retention":       "720h",
	"analytics.orphan_visits_per_hour": 100,
	"audit.retention":                  "8760h",
	"domains.resolver":                 "",
	"domains.scheme":                   "https",
	"domains.unverified_ttl":           "168h",
	"webhooks.allow_private":           false,
	"link_checks.interval":             "24h",
	"link_checks.retry_interval":       "1h",
	"link_checks.concurrency":          4,
	"link_checks.host_gap":             "2s",
	"link_checks.timeout":              "10s",
	"link_checks.poll":                 "1m",
	"link_checks.allow_private":        false,
	"compat.kutt":                      true,
	"log.level":                        "info",
	"log.format":                       "text",

	"auth.oidc.issuer":          "",
	"auth.oidc.client_id":       "",
	"auth.oidc.client_secret":   "",
	"auth.oidc.allowed_domains": []string{},
	"auth.oidc.auto_create":     false,
}

// GeoIPOn reports whether analytics.geoip is on: clicks and link rules
// get their country.
func (c *Config) GeoIPOn() bool { return c.Analytics.GeoIP != "off" }

// Load reads the configuration. path is the --config flag; without
// it, ./config.yaml is read when it exists.
func Load(path string) (*Config, error) {
	v := viper.New()
	for k, d := range defaults {
		v.SetDefault(k, d)
	}
	v.SetEnvPrefix("LINKBOLT")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	v.SetConfigType("yaml")
	if path != "" {
		v.SetConfigFile(path)
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("reading config %s: %w", path, err)
		}
	} else if _, err := os.Stat("config.yaml"); err == nil {
		v.SetConfigFile("config.yaml")
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("reading config.yaml: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var c Config
	if err := v.Unmarshal(&c, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		durationHook, baseURLHook, mapstructure.StringToSliceHookFunc(","),
	))); err != nil {
		return nil, keyErrors(err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// keyErrors rewrites the decoder's errors to read like Validate's, one
// line for each key: "auth.token_ttl: ...".
func keyErrors(err error) error {
	var errs []error
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case *mapstructure.DecodeError:
			errs = append(errs, fmt.Errorf("%s: %w", e.Name(), e.Unwrap()))
		case interface{ Unwrap() []error }:
			for _, err := range e.Unwrap() {
				walk(err)
			}
		case interface{ Unwrap() error }:
			var de *mapstructure.DecodeError
			if errors.As(err, &de) {
				walk(e.Unwrap())
				return
			}
			errs = append(errs, fmt.Errorf("config: %w", err))
		default:
			errs = append(errs, fmt.Errorf("config: %w", err))
		}
	}
	walk(err)
	return errors.Join(errs...)
}

// durationHook decodes the durations of the configuration from strings
// such as "24h" or "500ms" (and the bare number 0), so that a number
// without a unit is an error rather than nanoseconds.
func durationHook(_, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeFor[time.Duration]() {
		return data, nil
	}
	s, ok := data.(string)
	if !ok {
		s = fmt.Sprint(data)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return nil, fmt.Errorf("%q must be a duration, like 24h or 500ms", s)
	}
	return d, nil
}

// baseURLHook decodes server.base_url and server.alt_base_url: an empty
// string is no URL (nil), anything else must be a base URL (see
// parseBaseURL).
func baseURLHook(_, to reflect.Type, data any) (any, error) {
	s, ok := data.(string)
	if !ok || to != reflect.TypeFor[*url.URL]() {
		return data, nil
	}
	if s == "" {
		return (*url.URL)(nil), nil // typed, for the hooks that follow
	}
	return parseBaseURL(s)
}

// parseBaseURL parses a public URL of this server: http or https, a host
// (and port), no path, query or fragment; one trailing slash is dropped.
// The host is returned as browsers send it in the Host header and as short
// URLs show it: lower case, an internationalised name in its ASCII (xn--)
// form, an IPv4 address in dotted decimal, without a trailing dot or the
// scheme's default port. A port must be 1-65535.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSuffix(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("%q must be an http(s) URL with a host and no path, like http://localhost:8080", raw)
	}
	host := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		host = "[" + host + "]"
	}
	host, _, problem := link.CanonicalHost(host, wire.DestinationIDNA.ToASCII) // as browsers convert it
	if problem != "" {
		return nil, fmt.Errorf("%q %s", raw, problem)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%q has port %s: a port is 1-65535", raw, p)
		}
		if link.EffectivePort(u.Scheme, "") != n {
			host += ":" + strconv.Itoa(n)
		}
	}
	u.Host = host
	return u, nil
}

// Validate checks the rules of each key and across keys.
func (c *Config) Validate() error {
	var errs []error
	for _, d := range []struct {
		key      string
		got, min time.Duration
	}{
		{"server.shutdown_timeout", c.Server.ShutdownTimeout, time.Second},
		{"server.costly_wait", c.Server.CostlyWait, 0},
		{"auth.token_ttl", c.Auth.TokenTTL, time.Minute},
		{"auth.rotation_grace", c.Auth.RotationGrace, 0},
		{"auth.invitation_ttl", c.Auth.InvitationTTL, time.Minute},
		{"auth.login_window", c.Auth.LoginWindow, time.Second},
		{"auth.login_max_delay", c.Auth.LoginMaxDelay, time.Second},
		{"clicks.flush_interval", c.Clicks.FlushInterval, 0},
		{"analytics.retention", c.Analytics.Retention, time.Hour},
		{"analytics.orphan_retention", c.Analytics.OrphanRetention, time.Hour},
		{"audit.retention", c.Audit.Retention, time.Hour},
		{"links.alias_hold", c.Links.AliasHold, 0},
		{"links.unlock_ttl", c.Links.UnlockTTL, time.Minute},
		{"links.blocklist_poll", c.Links.BlocklistPoll, time.Second},
		{"link_checks.interval", c.LinkChecks.Interval, time.Minute},
		{"link_checks.retry_interval", c.LinkChecks.RetryInterval, time.Second},
		{"link_checks.host_gap", c.LinkChecks.HostGap, 0},
		{"link_checks.timeout", c.LinkChecks.Timeout, 100 * time.Millisecond},
		{"link_checks.poll", c.LinkChecks.Poll, 100 * time.Millisecond},
	} {
		if d.got < d.min {
			errs = append(errs, fmt.Errorf("%s: %s must be at least %s", d.key, d.got, d.min))
		}
	}
	if c.Server.BaseURL == nil {
		errs = append(errs, fmt.Errorf("server.base_url: must be set, like http://localhost:8080"))
	}
	if c.Server.MaxBody < 1024 {
		errs = append(errs, fmt.Errorf("server.max_body: must be at least 1024 bytes"))
	}
	if c.LinkChecks.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("link_checks.concurrency: must not be negative (0 turns the checks off on this instance)"))
	}
	if c.Server.CostlyConcurrency < 0 {
		errs = append(errs, fmt.Errorf("server.costly_concurrency: must not be negative (0 means half the cores)"))
	}
	if c.Server.MaxConnections < 0 {
		errs = append(errs, fmt.Errorf("server.max_connections: must not be negative (0 means no bound)"))
	}
	if c.Server.SearchScanLimit < 0 {
		errs = append(errs, fmt.Errorf("server.search_scan_limit: must not be negative (0 means no bound)"))
	}
	errs = append(errs, c.validateTLS()...)
	if origins, err := server.ParseCORSOrigins(c.Server.CORSOrigins); err != nil {
		errs = append(errs, fmt.Errorf("server.cors_origins: %w", err))
	} else {
		c.Server.CORSOrigins = origins
	}
	if err := checkInstanceID(c.Server.InstanceID); err != nil {
		errs = append(errs, fmt.Errorf("server.instance_id: %w", err))
	}
	if c.Storage.Path == "" {
		errs = append(errs, fmt.Errorf("storage.path: must not be empty"))
	}
	if err := checkPostgresURL(c.Storage.PostgresURL); err != nil {
		errs = append(errs, fmt.Errorf("storage.postgres_url: %w", err))
	}
	if c.Auth.JWTSecret != "" {
		if err := auth.CheckSecret([]byte(c.Auth.JWTSecret)); err != nil {
			errs = append(errs, fmt.Errorf("auth.jwt_secret: %w (or leave it empty to generate one)", err))
		}
	}
	if err := auth.CheckKeyPrefix(c.Auth.KeyPrefix); err != nil {
		errs = append(errs, fmt.Errorf("auth.key_prefix: %w", err))
	}
	errs = append(errs, c.validateOIDC()...)
	if c.Auth.PasswordCost < 4 || c.Auth.PasswordCost > 16 {
		errs = append(errs, fmt.Errorf("auth.password_cost: must be between 4 and 16"))
	}
	for key, n := range map[string]int{"plans.free": c.Plans.Free, "plans.pro": c.Plans.Pro, "plans.enterprise": c.Plans.Enterprise,
		"auth.login_per_ip": c.Auth.LoginPerIP, "auth.login_per_account": c.Auth.LoginPerAccount,
		"auth.login_per_address": c.Auth.LoginPerAddress, "keys.max_per_workspace": c.Keys.MaxPerWorkspace,
		"workspaces.max_per_user": c.Workspaces.MaxPerUser} {
		if n < 0 {
			errs = append(errs, fmt.Errorf("%s: must not be negative (0 means unlimited)", key))
		}
	}
	if !link.Plan(c.Workspaces.DefaultPlan).Valid() {
		errs = append(errs, fmt.Errorf("workspaces.default_plan: %q must be free, pro or enterprise", c.Workspaces.DefaultPlan))
	}
	if (c.Admin.Email == "") != (c.Admin.Password == "") {
		errs = append(errs, fmt.Errorf("admin.email and admin.password: set both or neither"))
	} else if c.Admin.Email != "" {
		if err := link.ValidateCredentials(c.Admin.Email, c.Admin.Password); err != nil {
			errs = append(errs, fmt.Errorf("admin: %s", link.ErrorMessage(err)))
		}
	}
	if c.Clicks.QueueSize < 1000 {
		errs = append(errs, fmt.Errorf("clicks.queue_size: must be at least 1000"))
	}
	if l := c.Server.MemoryLimit; l != 0 && l < minMemoryLimit {
		errs = append(errs, fmt.Errorf("server.memory_limit: must be 0 (off) or at least %d (64 MiB)", minMemoryLimit))
	}
	if c.Clicks.QueueBytes < 1<<20 {
		errs = append(errs, fmt.Errorf("clicks.queue_bytes: must be at least 1048576 (1 MiB)"))
	}
	if r := c.Analytics.LinkHoursRetention; r != 0 && r < 48*time.Hour {
		errs = append(errs, fmt.Errorf("analytics.link_hours_retention: %s must be 0 (keep for good) or at least 48h", r))
	}
	if b := c.Clicks.BacklogBytes; b != 0 && b < 1<<20 {
		errs = append(errs, fmt.Errorf("clicks.backlog_bytes: must be 0 (no backlog) or at least 1048576 (1 MiB)"))
	}
	if r := c.Domains.Resolver; r != "" {
		host, port, err := net.SplitHostPort(r)
		if err != nil {
			host, port = r, "53"
		}
		if n, perr := strconv.Atoi(port); host == "" || strings.ContainsAny(host, "/ ") || perr != nil || n < 1 || n > 65535 {
			errs = append(errs, fmt.Errorf("domains.resolver: %q must be the address of a DNS server, host:port like 127.0.0.1:53, or empty for the system's resolver", r))
		}
	}
	if t := c.Domains.UnverifiedTTL; t != 0 && t < time.Hour {
		errs = append(errs, fmt.Errorf("domains.unverified_ttl: %s must be 0 (claims never expire) or at least 1h", t))
	}
	if c.Domains.Scheme != "http" && c.Domains.Scheme != "https" {
		errs = append(errs, fmt.Errorf("domains.scheme: %q must be https or http", c.Domains.Scheme))
	}
	if err := c.logLevel.UnmarshalText([]byte(c.Log.Level)); err != nil {
		errs = append(errs, fmt.Errorf("log.level: %q must be debug, info, warn or error", c.Log.Level))
	}
	switch strings.ToLower(c.Analytics.GeoIP) {
	case "on", "true", "1":
		c.Analytics.GeoIP = "on"
	case "off", "false", "0":
		c.Analytics.GeoIP = "off"
	default:
		errs = append(errs, fmt.Errorf("analytics.geoip: %q must be on or off", c.Analytics.GeoIP))
	}
	c.Analytics.untracked = nil
	for _, v := range c.Analytics.UntrackedIPs {
		p, ok := link.ParseIPRange(v)
		if !ok {
			errs = append(errs, fmt.Errorf("analytics.untracked_ips: %q must be an IP address or a CIDR range like 203.0.113.0/24", v))
			continue
		}
		c.Analytics.untracked = append(c.Analytics.untracked, p)
	}
	if n := c.Analytics.OrphanVisitsPerHour; n < 0 || n > 100000 {
		errs = append(errs, fmt.Errorf("analytics.orphan_visits_per_hour: %d must be from 0 to 100000", n))
	}
	if p := c.Analytics.UntrackedParam; p != "" && (strings.ContainsAny(p, "=&?# ") || len(p) > 64) {
		errs = append(errs, fmt.Errorf("analytics.untracked_param: %q must be a query parameter name", p))
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		errs = append(errs, fmt.Errorf("log.format: %q must be text or json", c.Log.Format))
	}
	return errors.Join(errs...)
}

// validateOIDC checks auth.oidc.*: with an issuer, a client ID is needed and
// the issuer must be https (http only on a loopback address, for a provider
// on the same machine), because its discovery document names the keys that
// ID tokens are checked with. Allowed domains are kept without a leading @,
// their ASCII letters in lower case (link.NormalizeEmail: a Kelvin sign is
// not a k).
func (c *Config) validateOIDC() []error {
	o := &c.Auth.OIDC
	var errs []error
	for i, d := range o.AllowedDomains {
		d = link.NormalizeEmail(strings.TrimPrefix(strings.TrimSpace(d), "@"))
		if d == "" || strings.ContainsAny(d, "@/ :") || !strings.Contains(d, ".") && d != "localhost" {
			errs = append(errs, fmt.Errorf("auth.oidc.allowed_domains: %q must be an e-mail domain, like example.com", o.AllowedDomains[i]))
		}
		o.AllowedDomains[i] = d
	}
	if o.Issuer == "" {
		if o.ClientID != "" || o.ClientSecret != "" || len(o.AllowedDomains) > 0 || o.AutoCreate {
			errs = append(errs, fmt.Errorf("auth.oidc.issuer: must be set for the other auth.oidc keys to take effect"))
		}
		return errs
	}
	u, err := url.Parse(o.Issuer)
	loopback := false
	if err == nil {
		ip := net.ParseIP(u.Hostname())
		loopback = u.Hostname() == "localhost" || ip != nil && ip.IsLoopback()
	}
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil ||
		(u.Scheme != "https" && !(u.Scheme == "http" && loopback)) {
		errs = append(errs, fmt.Errorf("auth.oidc.issuer: %q must be the provider's https URL, like https://auth.example.com/application/o/linkbolt/ (http only on a loopback address)", o.Issuer))
	}
	if o.ClientID == "" {
		errs = append(errs, fmt.Errorf("auth.oidc.client_id: must be set when auth.oidc.issuer is"))
	}
	return errs
}

// maxInstanceID is the longest server.instance_id.
const maxInstanceID = 64

// checkInstanceID accepts an empty id (generated) or 1 to 64 letters,
// digits and . _ : -, which go into log lines, metric labels and the
// database's notifications as they are.
func checkInstanceID(id string) error {
	if len(id) > maxInstanceID {
		return fmt.Errorf("%q is longer than %d characters", id, maxInstanceID)
	}
	for _, r := range id {
		if !instanceIDChar(r) {
			return fmt.Errorf("%q has %q: use letters, digits and . _ : - only", id, r)
		}
	}
	return nil
}

func instanceIDChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		r == '.' || r == '_' || r == ':' || r == '-'
}

// NamesInstance reports whether log lines and metrics name the instance:
// on PostgreSQL, where instances may share the data, or when
// server.instance_id is set. A lone bbolt process keeps them as they were.
func (c *Config) NamesInstance() bool { return c.Postgres() || c.Server.InstanceID != "" }

// Instance is server.instance_id, or when that is empty the host name and
// the port of server.listen ("web1:8080"): stable across restarts, and
// different for each instance on one host, as they cannot share a port.
func (c *Config) Instance() string {
	if c.Server.InstanceID != "" {
		return c.Server.InstanceID
	}
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if instanceIDChar(r) && r != ':' {
			return r
		}
		return -1
	}, host)
	if host == "" {
		host = "linkbolt"
	}
	_, port, err := net.SplitHostPort(c.Server.Listen)
	if err != nil || port == "" {
		port = "0"
	}
	id := host + ":" + port
	if len(id) > maxInstanceID {
		id = host[:maxInstanceID-len(port)-1] + ":" + port
	}
	return id
}

// UntrackedRanges are analytics.untracked_ips, parsed (after Load).
func (c *Config) UntrackedRanges() []netip.Prefix { return c.Analytics.untracked }
