// Package version tells which linkbolt this is: the release's version and
// the git commit it was built from.
package version

import "runtime/debug"

// version and commit are set at build time with -ldflags "-X
// github.com/linkbolt/linkbolt/internal/version.version=v1.2.3 -X
// github.com/linkbolt/linkbolt/internal/version.commit=<git commit>"
// (go run ./release does).
var (
	version = ""
	commit  = ""
)

// String is linkbolt's version: the one the release stamped, else the
// module version go install recorded, else "dev".
func String() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Commit is the git commit linkbolt was built from: the one the release
// stamped, else the one go build recorded ("-dirty" when the checkout had
// changes), else "unknown".
func Commit() string {
	if commit != "" {
		return commit
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	switch {
	case rev == "":
		return "unknown"
	case modified == "true":
		return rev + "-dirty"
	}
	return rev
}
