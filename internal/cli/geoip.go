package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/internal/app"
	"github.com/linkbolt/linkbolt/internal/config"
)

var geoipUpdateCommand = &command{
	name:     "geoip update",
	synopsis: "geoip update --from FILE [--config FILE]",
	summary:  "install a newer country database (MaxMind DB format), offline",
	about: `Install the country database FILE (MaxMind DB format: ip-location-db's
geo-whois-asn-country or another of its country databases, GeoLite2 or
GeoIP2 Country or City, DB-IP's lite country database) as geoip.mmdb in
the data folder (the folder of storage.path), where linkbolt prefers it
to the database inside linkbolt; analytics.geoip_path, when set, is used
instead of both. Nothing is downloaded.

FILE is checked first: it must open as a MaxMind DB and give a country
for well-known public addresses (8.8.8.8 and others); a file that fails
is refused and the installed database, if any, stays. The copy is written
beside geoip.mmdb and renamed into place in one step. A running server
puts it in use within a minute, without a restart, and says so in its
log. FILE itself is only read.`,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		configPath := configFlag(fs)
		from := fs.String("from", "", "the country database `FILE` to install (required)")
		return func(_ context.Context, stdout, _ io.Writer) error {
			return runGeoIPUpdate(*configPath, *from, stdout)
		}
	},
}

// runGeoIPUpdate checks the database from and installs it in the data
// folder.
func runGeoIPUpdate(configPath, from string, stdout io.Writer) error {
	if from == "" {
		return usageError{"--from FILE is required"}
	}
	cfg, err := config.Load(configPath)
	if err != nil {
		return err
	}
	info, err := checkCountryDB(from)
	if err != nil {
		return fmt.Errorf("geoip update: %s is refused, nothing was replaced: %w", from, err)
	}
	dst := app.GeoIPInstallPath(cfg)
	if err := installFile(from, dst); err != nil {
		return fmt.Errorf("geoip update: %w", err)
	}
	built := "unknown"
	if !info.Built.IsZero() {
		built = info.Built.Format(time.DateOnly)
	}
	fmt.Fprintf(stdout, "installed %s (%s, built %s) as %s\n", from, info.DatabaseType, built, dst)
	switch {
	case !cfg.GeoIPOn():
		fmt.Fprintln(stdout, "analytics.geoip is off: linkbolt looks up no country until it is on")
	case cfg.Analytics.GeoIPPath != "":
		fmt.Fprintf(stdout, "analytics.geoip_path is set (%s): linkbolt uses that file instead until it is unset\n", cfg.Analytics.GeoIPPath)
	default:
		fmt.Fprintln(stdout, "a running server puts it in use within a minute")
	}
	return nil
}

// checkCountryDB opens path as a country database and looks up
// well-known addresses in it.
func checkCountryDB(path string) (analytics.GeoInfo, error) {
	db, err := analytics.OpenGeoIP(path)
	if err != nil {
		return analytics.GeoInfo{}, err
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		return analytics.GeoInfo{}, err
	}
	return db.Info(), nil
}

// installFile copies from beside dst, checks the copy and renames it over
// dst, so that dst is always a whole database: the old one or the new.
func installFile(from, dst string) (err error) {
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dst)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		return fmt.Errorf("copying into %s: %w", dir, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	// The copy, not only the original, must be a working database.
	if _, err := checkCountryDB(tmp.Name()); err != nil {
		return fmt.Errorf("the copy in %s does not work: %w", dir, err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
