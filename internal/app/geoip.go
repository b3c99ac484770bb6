package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/analytics/geodata"
	"github.com/linkbolt/linkbolt/internal/config"
)

// GeoIPFileName is the country database linkbolt geoip update installs in
// the data folder.
const GeoIPFileName = "geoip.mmdb"

// GeoIPInstallPath is where linkbolt geoip update installs a country
// database: in the folder of storage.path (on PostgreSQL too, where that
// folder holds the click spool).
func GeoIPInstallPath(cfg *config.Config) string {
	return filepath.Join(filepath.Dir(cfg.Storage.Path), GeoIPFileName)
}

// geoipPoll is how often a running server looks whether geoip update
// installed a new country database.
const geoipPoll = time.Minute

// OpenEmbeddedGeoIP opens the country database inside the binary.
func OpenEmbeddedGeoIP() (*analytics.GeoIP, error) {
	i := geodata.Read()
	return analytics.OpenGeoIPBytes(geodata.MMDB, analytics.GeoInfo{Source: analytics.GeoEmbedded,
		Package: i.Source, Version: i.Version, License: i.License, Attribution: i.Attribution})
}

// geo picks the country database by analytics.geoip and
// analytics.geoip_path, and puts a database installed later (linkbolt
// geoip update) in use without a restart.
type geo struct {
	cfg    *config.Config
	logger *slog.Logger
	db     *analytics.GeoIP // nil: analytics.geoip is off

	mu        sync.Mutex
	installed os.FileInfo // the installed file last looked at; nil: none
}

// openGeo opens the country database: none with analytics.geoip off,
// else analytics.geoip_path when set, else geoip.mmdb in the data folder
// when there is one that works, else the embedded one.
func openGeo(cfg *config.Config, logger *slog.Logger) (*geo, error) {
	g := &geo{cfg: cfg, logger: logger}
	switch {
	case !cfg.GeoIPOn():
		logger.Info("countries are off (analytics.geoip: off): every click's country is unknown")
		return g, nil
	case cfg.Analytics.GeoIPPath != "":
		db, err := analytics.OpenGeoIP(cfg.Analytics.GeoIPPath)
		if err != nil {
			return nil, fmt.Errorf("analytics.geoip_path: %w", err)
		}
		g.db = db
	default:
		db, fi, err := g.openInstalled()
		if err != nil {
			logger.Error("the installed country database does not work; using the one inside linkbolt", "err", err)
		}
		if db == nil {
			if db, err = OpenEmbeddedGeoIP(); err != nil {
				return nil, err
			}
		}
		g.db, g.installed = db, fi
	}
	i := g.db.Info()
	logger.Info("countries from "+describeGeo(i), "source", i.Source, "built", i.Built.Format(time.DateOnly))
	return g, nil
}

// describeGeo names a country database for the log.
func describeGeo(i analytics.GeoInfo) string {
	switch i.Source {
	case analytics.GeoEmbedded:
		return fmt.Sprintf("the database inside linkbolt (%s %s)", i.Package, i.Version)
	default:
		return fmt.Sprintf("%s (%s)", i.Path, i.DatabaseType)
	}
}

// openInstalled opens and checks the installed database. It returns a
// nil database and FileInfo when there is none, and the FileInfo with an
// error when it does not work.
func (g *geo) openInstalled() (*analytics.GeoIP, os.FileInfo, error) {
	path := GeoIPInstallPath(g.cfg)
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	// Read into memory, not mapped: a file copied over in place (cp)
	// must not pull the database from under the running server.
	db, err := analytics.ReadGeoIP(path, analytics.GeoInfo{Source: analytics.GeoInstalled})
	if err != nil {
		return nil, fi, err
	}
	if err := db.Check(); err != nil {
		db.Close()
		return nil, fi, err
	}
	return db, fi, nil
}

// Reload looks at geoip.mmdb in the data folder and, when it changed
// since last looked at, puts it in use, or the embedded database when it
// was removed. A file that does not work is logged and the database in
// use kept. It does nothing with analytics.geoip off or
// analytics.geoip_path set. It reports whether the database changed.
func (g *geo) Reload() bool {
	if g.db == nil || g.cfg.Analytics.GeoIPPath != "" {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	path := GeoIPInstallPath(g.cfg)
	fi, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		if g.installed == nil {
			return false
		}
		g.installed = nil
		if g.db.Info().Source != analytics.GeoInstalled {
			return false
		}
		db, err := OpenEmbeddedGeoIP()
		if err != nil {
			g.logger.Error("country database: the installed one was removed, and the one inside linkbolt does not open", "err", err)
			return false
		}
		g.db.Replace(db)
		g.logger.Info("country database: the installed one was removed; countries from " + describeGeo(g.db.Info()))
		return true
	case err != nil:
		g.logger.Error("country database: cannot look at the installed one", "path", path, "err", err)
		return false
	}
	if old := g.installed; old != nil && os.SameFile(old, fi) && old.ModTime().Equal(fi.ModTime()) && old.Size() == fi.Size() {
		return false
	}
	g.installed = fi
	db, _, err := g.openInstalled()
	if err != nil || db == nil {
		g.logger.Error("country database: the installed one does not work; keeping "+describeGeo(g.db.Info()), "path", path, "err", err)
		return false
	}
	g.db.Replace(db)
	i := g.db.Info()
	g.logger.Info("country database: now "+describeGeo(i), "built", i.Built.Format(time.DateOnly))
	return true
}

// run calls Reload every geoipPoll until ctx ends.
func (g *geo) run(ctx context.Context) {
	if g.db == nil || g.cfg.Analytics.GeoIPPath != "" {
		return
	}
	t := time.NewTicker(geoipPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.Reload()
		}
	}
}

// ReloadGeoIP is what the server does every minute: it puts a country
// database linkbolt geoip update installed in use. Tests call it instead
// of waiting. It reports whether the database changed.
func (a *App) ReloadGeoIP() bool { return a.geo.Reload() }
