package importer

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/linkbolt/linkbolt/link"
)

// SourceConfig is what a source is opened with: a file a shortener
// exported (and YOURLS's click log beside it), or a shortener's API.
type SourceConfig struct {
	// File is the exported data (a CSV file); LogFile the click log
	// (YOURLS's yourls_log table as CSV), nil when not given.
	File    io.Reader
	LogFile io.Reader
	// URL and APIKey reach a shortener's API; HTTPClient makes the
	// requests (nil: a client with a timeout of a minute). The server hands in a client
	// that refuses private addresses unless configured otherwise.
	URL        string
	APIKey     string
	HTTPClient *http.Client
}

// The sources that read files, by name.
var fileSources = map[string]func(SourceConfig) (Source, error){
	"csv":    func(cfg SourceConfig) (Source, error) { return NewCSV(cfg.File), nil },
	"bitly":  func(cfg SourceConfig) (Source, error) { return NewBitly(cfg.File), nil },
	"yourls": func(cfg SourceConfig) (Source, error) { return NewYOURLS(cfg.File, cfg.LogFile), nil },
}

var (
	registryMu sync.RWMutex
	registry   = map[string]func(SourceConfig) (Source, error){}
)

// Register makes the API source name available to Open; sources call it
// from an init function. It panics when name is registered twice.
func Register(name string, open func(cfg SourceConfig) (Source, error)) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("importer: source " + name + " registered twice")
	}
	registry[name] = open
}

// Names lists the sources --from takes, file and API ones.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var ns []string
	for n := range fileSources {
		ns = append(ns, n)
	}
	for n := range registry {
		_, isFile := fileSources[n]
		_, hasFile := fileSources[strings.TrimSuffix(n, "-api")] // "yourls-api" is "yourls" with a URL
		if !isFile && !hasFile {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns
}

// Kind says whether the source name reads a file, its API, or both (YOURLS).
func Kind(name string) (file, api bool) {
	_, file = fileSources[name]
	return file, apiOpener(name) != nil
}

// apiOpener is the opener of the API source registered under name, or
// name-api or nameapi (YOURLS's API beside its file), or nil.
func apiOpener(name string) func(SourceConfig) (Source, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	for _, n := range []string{name, name + "-api", name + "api"} {
		if open := registry[n]; open != nil {
			return open
		}
	}
	return nil
}

// Open returns the source name reading cfg: a file source when cfg has a
// File, else an API source registered under name (for YOURLS, whose
// file and API are both "yourls", also under "yourls-api" or
// "yourlsapi"). EINVALID for an unknown name, for a file source without
// a file and for an API source without a URL; the source's own error
// otherwise.
func Open(name string, cfg SourceConfig) (Source, error) {
	fileOpen, isFile := fileSources[name]
	apiOpen := apiOpener(name)
	isAPI := apiOpen != nil
	switch {
	case !isFile && !isAPI:
		msg := fmt.Sprintf("unknown source %q: one of %s", name, strings.Join(Names(), ", "))
		return nil, &link.Error{Code: link.EINVALID, Message: msg, Fields: []link.FieldError{{Field: "from", Message: msg}}}
	case cfg.File != nil && cfg.URL != "":
		return nil, link.Errorf(link.EINVALIDREQUEST, "give a file or a URL, not both")
	case cfg.File != nil && isFile:
		return fileOpen(cfg)
	case cfg.URL != "" && isAPI:
		return apiOpen(cfg)
	case isFile && !isAPI:
		return nil, link.Errorf(link.EINVALIDREQUEST, "source %s reads a file: give its data", name)
	case isAPI && !isFile:
		return nil, link.Errorf(link.EINVALIDREQUEST, "source %s reads its API: give its URL", name)
	}
	return nil, link.Errorf(link.EINVALIDREQUEST, "source %s: give its file's data or its API's URL", name)
}

// rowErrorf is a RowError.
func rowErrorf(where, format string, args ...any) *RowError {
	return &RowError{Where: where, Reason: fmt.Sprintf(format, args...)}
}
