package cli

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"runtime"
	"testing"

	"github.com/linkbolt/linkbolt/internal/version"
)

// TestVersionPrintsCommit checks linkbolt version prints the version, the
// commit (stamped by go run ./release, else the one go build recorded,
// else "unknown"), the Go version and the platform. release/release_test.go
// checks that a released binary prints what was stamped into it.
func TestVersionPrintsCommit(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"version"}, nil, &out, &errb); code != 0 {
		t.Fatalf("version exited %d: %s", code, errb.String())
	}
	if got, want := out.String(), fmt.Sprintf("linkbolt %s\ncommit   %s\ngo       %s\nplatform %s/%s\ngeoip    %s\n",
		version.String(), version.Commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH, GeoIPVersion()); got != want {
		t.Fatalf("version printed %q, want %q", got, want)
	}
	if c := version.Commit(); !regexp.MustCompile(`^(unknown|[0-9a-f]{40,64}(-dirty)?)$`).MatchString(c) {
		t.Fatalf("commit %q is neither a git commit nor unknown", c)
	}
	if g := GeoIPVersion(); !regexp.MustCompile(`^@ip-location-db/geo-whois-asn-country-mmdb \d+\.\d+\.\d+ \(data of \d{4}-\d{2}-\d{2}, CC0-1\.0; .*NRO.*CC BY 4\.0\)$`).MatchString(g) {
		t.Errorf("geoip line %q does not name the package, its version, date and licence", g)
	}
}
