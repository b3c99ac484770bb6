package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsHandler serves Prometheus metrics. Every value is read from a
// counter when scraped, so redirects pay nothing for them and a scrape
// never scans the data file.
func (s *Server) metricsHandler() httprouter.Handle {
	reg := prometheus.NewRegistry()
	counter := func(name, help string, fn func() int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(fn()) })
	}
	gauge := func(name, help string, fn func() int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(fn()) })
	}
	dispatcher := func(fn func() int64) func() int64 {
		return func() int64 {
			if s.dispatcher == nil {
				return 0
			}
			return fn()
		}
	}
	conns := func(fn func(*problemListener) int64) func() int64 {
		return func() int64 {
			if s.conns == nil { // served without Listener (tests)
				return 0
			}
			return fn(s.conns)
		}
	}
	// Each series carries the instance's id, so that the instances on one
	// database tell apart in one Prometheus (whose own label "instance"
	// names the scraped address).
	var labeled prometheus.Registerer = reg
	if s.cfg.LabelMetrics && s.cfg.Instance != "" {
		labeled = prometheus.WrapRegistererWith(prometheus.Labels{"linkbolt_instance": s.cfg.Instance}, reg)
	}
	labeled.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		counter("linkbolt_clicks_written_total", "Clicks written into analytics; a click spilled to the click backlog counts once drained.", func() int64 { return s.recorder.Written() }),
		counter("linkbolt_clicks_dropped_total", "Clicks dropped because the click queue was full (clicks.queue_size or clicks.queue_bytes) or the click backlog was (clicks.backlog_bytes), because the click could not be stored (malformed ID or time, or an unreadable backlog record), or, with clicks.flush_interval 0, their write failed.", func() int64 { return s.recorder.Dropped() }),
		gauge("linkbolt_clicks_pending", "Clicks in memory not yet written: queued, being written, or waiting for a failed write to be retried.", func() int64 { return int64(s.recorder.Pending()) }),
		gauge("linkbolt_clicks_pending_bytes", "Memory held by the clicks not yet written, bounded by clicks.queue_bytes.", func() int64 { return s.recorder.PendingBytes() }),
		gauge("linkbolt_clicks_queue_bytes", "The bound of linkbolt_clicks_pending_bytes (clicks.queue_bytes).", func() int64 { return s.recorder.QueueBytes() }),
		gauge("linkbolt_clicks_backlog", "Clicks waiting on disk in the click backlog, not yet in analytics: the writer fell behind a flood and catches up.", func() int64 { n, _ := s.recorder.Backlogged(); return n }),
		gauge("linkbolt_clicks_backlog_bytes", "Bytes of the click backlog's records (keys and values; the data file's pages hold 16 bytes more a record), bounded by clicks.backlog_bytes.", func() int64 { _, b := s.recorder.Backlogged(); return b }),
		gauge("linkbolt_clicks_backlog_limit_bytes", "The bound of linkbolt_clicks_backlog_bytes (clicks.backlog_bytes; 0: no backlog).", func() int64 { return s.recorder.BacklogLimit() }),
		counter("linkbolt_orphan_visits_written_total", "Orphan visits (visits that found no link) counted in analytics.", func() int64 {
			if s.orphans == nil {
				return 0
			}
			return s.orphans.Written()
		}),
		counter("linkbolt_orphan_visits_dropped_total", "Orphan visits dropped because their queue was full (10,000) or their write failed.", func() int64 {
			if s.orphans == nil {
				return 0
			}
			return s.orphans.Dropped()
		}),
		counter("linkbolt_click_writes_failed_total", "Writes of a batch of clicks that failed (the batch stays queued and is retried).", func() int64 { return s.recorder.FailedWrites() }),
		gauge("linkbolt_webhook_outbox_pending", "Webhook deliveries waiting to be sent or retried.", func() int64 {
			if s.outbox == nil {
				return 0
			}
			return s.outbox.PendingDeliveries()
		}),
		counter("linkbolt_webhook_attempts_failed_total", "Webhook delivery attempts that failed (an error or an answer other than 2xx).", dispatcher(func() int64 { return s.dispatcher.FailedAttempts() })),
		counter("linkbolt_webhook_deliveries_failed_total", "Webhook deliveries given up (retried for too long, or their webhook disabled).", dispatcher(func() int64 { return s.dispatcher.FailedDeliveries() })),
		gauge("linkbolt_rate_limiters", "Rate limiters held in memory.", func() int64 { return int64(s.limiters.Len()) }),
		counter("linkbolt_rate_budget_fallbacks_total", "API requests rated in this process's memory because the shared rate budget in the database failed (PostgreSQL only).", func() int64 {
			if s.budgets == nil {
				return 0
			}
			return s.budgets.Fallbacks()
		}),
		gauge("linkbolt_connections_open", "Client connections open (bounded by server.max_connections).", conns(func(l *problemListener) int64 { return l.open.Load() })),
		counter("linkbolt_connections_waited_total", "Times the server found server.max_connections connections open and new clients had to wait.", conns(func(l *problemListener) int64 { return l.waited.Load() })),
		counter("linkbolt_connections_idle_closed_total", "Idle keep-alive connections closed to make room for a new client.", conns(func(l *problemListener) int64 { return l.reclaimed.Load() })),
		gauge("linkbolt_login_accounts", "Accounts (known or not) with failed logins remembered by the login limits.", func() int64 { return int64(s.logins.Len()) }),
		geoIPCollector{s},
	)
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) { h.ServeHTTP(w, r) }
}
