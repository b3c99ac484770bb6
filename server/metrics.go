package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsHandler serves Prometheus metrics. The click counters are read
// from the recorder when scraped, so redirects pay nothing for them.
func (s *Server) metricsHandler() httprouter.Handle {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "linkbolt_clicks_written_total", Help: "Clicks written to the data file.",
		}, func() float64 { return float64(s.recorder.Written()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "linkbolt_clicks_dropped_total", Help: "Clicks dropped because the click queue was full or a write failed.",
		}, func() float64 { return float64(s.recorder.Dropped()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "linkbolt_clicks_pending", Help: "Clicks waiting in memory for the next write.",
		}, func() float64 { return float64(s.recorder.Pending()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "linkbolt_rate_limiters", Help: "Rate limiters held in memory.",
		}, func() float64 { return float64(s.limiters.Len()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "linkbolt_login_accounts", Help: "Accounts (known or not) with failed logins remembered by the login limits.",
		}, func() float64 { return float64(s.logins.Len()) }),
	)
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) { h.ServeHTTP(w, r) }
}
