package config

import (
	"fmt"
	"net/url"
	"strings"
)

// The values of server.tls.
const (
	TLSOff   = "off"
	TLSACME  = "acme"
	TLSFiles = "files"
)

// validateTLS checks the HTTPS keys (server.tls and the keys it uses).
func (c *Config) validateTLS() []error {
	s := &c.Server
	var errs []error
	switch s.TLS {
	case TLSOff:
		return nil
	case TLSACME:
		u, err := url.Parse(s.ACMEDirectory)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			errs = append(errs, fmt.Errorf("server.acme_directory: %q must be the https URL of an ACME directory, like https://acme-v02.api.letsencrypt.org/directory", s.ACMEDirectory))
		}
		if s.ACMEEmail != "" && (!strings.Contains(s.ACMEEmail, "@") || strings.ContainsAny(s.ACMEEmail, " \t\r\n,")) {
			errs = append(errs, fmt.Errorf("server.acme_email: %q must be an e-mail address (or empty)", s.ACMEEmail))
		}
	case TLSFiles:
		if s.TLSCert == "" || s.TLSKey == "" {
			errs = append(errs, fmt.Errorf("server.tls_cert and server.tls_key: must both be set when server.tls is files"))
		}
	default:
		return []error{fmt.Errorf("server.tls: %q must be off, acme or files", s.TLS)}
	}
	for _, b := range []struct {
		key string
		u   *url.URL
	}{{"server.base_url", s.BaseURL}, {"server.alt_base_url", s.AltBaseURL}} {
		if b.u != nil && b.u.Scheme != "https" {
			errs = append(errs, fmt.Errorf("%s: %q must be https:// when server.tls is %s", b.key, b.u, s.TLS))
		}
	}
	return errs
}
