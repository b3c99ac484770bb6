package importer

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
)

// SourceConfig is what a source is opened with: a file it exported (and
// for YOURLS its click log), or its API's address and key.
type SourceConfig struct {
	File, LogFile io.Reader
	URL, APIKey   string
	// HTTPClient reads an API source; nil uses one with a timeout.
	HTTPClient *http.Client
}

// sources maps a source's name to the function that opens it; each source
// registers itself in its file's init.
var sources = map[string]func(SourceConfig) (Source, error){}

// Register makes a source available to Open under name.
func Register(name string, open func(SourceConfig) (Source, error)) {
	sources[name] = open
}

// Open opens the source called name with cfg.
func Open(name string, cfg SourceConfig) (Source, error) {
	open, ok := sources[name]
	if !ok {
		names := make([]string, 0, len(sources))
		for n := range sources {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("no source %q: choose one of %s", name, strings.Join(names, ", "))
	}
	return open(cfg)
}
