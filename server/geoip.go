package server

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// geoIPResponse is the answer of GET /v1/admin/geoip: the country
// database in use.
type geoIPResponse struct {
	Enabled      bool       `json:"enabled"`
	Source       string     `json:"source"`
	Path         string     `json:"path"`
	Package      string     `json:"package"`
	Version      string     `json:"version"`
	License      string     `json:"license"`
	Attribution  string     `json:"attribution"`
	DatabaseType string     `json:"database_type"`
	BuiltAt      *time.Time `json:"built_at"`
}

// handleAdminGeoIP answers which country database the server uses.
func (s *Server) handleAdminGeoIP(w http.ResponseWriter, _ *http.Request, _ *caller) error {
	out := geoIPResponse{Source: "off"}
	if s.geo != nil {
		i := s.geo.Info()
		out = geoIPResponse{Enabled: true, Source: i.Source, Path: i.Path, Package: i.Package, Version: i.Version,
			License: i.License, Attribution: i.Attribution, DatabaseType: i.DatabaseType}
		if !i.Built.IsZero() {
			out.BuiltAt = &i.Built
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// geoIPCollector is linkbolt_geoip_build_timestamp_seconds: when the
// country database in use was built, labelled with where it comes from,
// read at each scrape (the database may be replaced while serving). Its
// labels hold no space (a database type may), so that scripts that split
// a sample at its first space read it.
type geoIPCollector struct{ s *Server }

var geoIPBuiltDesc = prometheus.NewDesc("linkbolt_geoip_build_timestamp_seconds",
	"When the country database in use was built (Unix time; its age is time() minus this), by source (embedded, installed, file) and version (the embedded package's, else \"\"). No series with analytics.geoip off.",
	[]string{"source", "version"}, nil)

func (c geoIPCollector) Describe(ch chan<- *prometheus.Desc) { ch <- geoIPBuiltDesc }

func (c geoIPCollector) Collect(ch chan<- prometheus.Metric) {
	if c.s.geo == nil {
		return
	}
	i := c.s.geo.Info()
	if i.Source == "" {
		return
	}
	var built float64
	if !i.Built.IsZero() {
		built = float64(i.Built.Unix())
	}
	ch <- prometheus.MustNewConstMetric(geoIPBuiltDesc, prometheus.GaugeValue, built, i.Source, i.Version)
}
