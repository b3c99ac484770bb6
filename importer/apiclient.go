package importer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// maxPageBytes bounds one answer of a source's API, so a wrong address
// answering an endless body cannot fill memory.
const maxPageBytes = 64 << 20

// apiClient reads JSON from another shortener's API. It retries what may
// pass (a 5xx, a 429, a timeout or a dropped connection) and turns the rest
// into errors a person can act on. Its errors never hold the API key: they
// name the request by its path only, since YOURLS carries its signature in
// the query string.
type apiClient struct {
	source  string // "Shlink", for messages
	base    *url.URL
	client  *http.Client
	auth    func(*http.Request) // sets the credential on a request
	retries int                 // attempts after the first
	// backoff is the wait before the first retry, doubled before each
	// next one; tests set it to 0.
	backoff time.Duration
}

// defaultBackoff is the wait before a first retry: 1 s, then 2 s, 4 s.
const defaultBackoff = time.Second

// newHeaderKeyClient is newAPIClient for an API that takes its key in the
// header named header and lives under the path suffixes (the innermost
// first), which an address given as the API's own loses.
func newHeaderKeyClient(source string, cfg SourceConfig, header string, suffixes ...string) (*apiClient, error) {
	key := strings.TrimSpace(cfg.APIKey)
	api, err := newAPIClient(source, cfg, func(r *http.Request) { r.Header.Set(header, key) })
	if err != nil {
		return nil, err
	}
	api.base.Path = strings.TrimSuffix(api.base.Path, "/")
	for _, suffix := range suffixes {
		api.base.Path = strings.TrimSuffix(api.base.Path, suffix)
	}
	return api, nil
}

// newAPIClient checks the source's address and key and returns a client
// for them; what is wrong with either is a field error (url, api_key).
func newAPIClient(source string, cfg SourceConfig, auth func(*http.Request)) (*apiClient, error) {
	var fields []link.FieldError
	u, err := url.Parse(strings.TrimSpace(cfg.URL))
	switch {
	case strings.TrimSpace(cfg.URL) == "":
		fields = append(fields, link.FieldError{Field: "url", Message: "give the address of your " + source + " (https://…)"})
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		fields = append(fields, link.FieldError{Field: "url", Message: "is not an http:// or https:// address"})
	}
	if strings.TrimSpace(cfg.APIKey) == "" {
		fields = append(fields, link.FieldError{Field: "api_key", Message: "give the API key of your " + source})
	}
	if len(fields) > 0 {
		return nil, &link.Error{Code: link.EINVALID, Message: fields[0].Field + ": " + fields[0].Message, Fields: fields}
	}
	u.RawQuery, u.Fragment = "", ""
	client := &http.Client{Timeout: 60 * time.Second}
	if cfg.HTTPClient != nil {
		copied := *cfg.HTTPClient
		client = &copied
	}
	// The key goes in a header or the query, which a redirect carries to
	// wherever it points: follow one on the same host only.
	check := client.CheckRedirect // the caller's own rules, kept
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Host != via[0].URL.Host || (via[0].URL.Scheme == "https" && req.URL.Scheme != "https") {
			return redirectError(fmt.Sprintf("it redirects to %s://%s, another address: give that one, if it is %s's", req.URL.Scheme, req.URL.Host, source))
		}
		if len(via) >= 5 {
			return redirectError("it redirects more than 5 times")
		}
		if check != nil {
			return check(req, via)
		}
		return nil
	}
	return &apiClient{source: source, base: u, client: client, auth: auth, retries: 3, backoff: defaultBackoff}, nil
}

// endpoint is the address of escapedPath (below the base address's path)
// with query.
func (c *apiClient) endpoint(escapedPath string, query url.Values) *url.URL {
	u := *c.base
	path, err := url.PathUnescape(escapedPath)
	if err != nil {
		path = escapedPath
	}
	u.Path = strings.TrimSuffix(c.base.Path, "/") + path
	u.RawPath = strings.TrimSuffix(c.base.EscapedPath(), "/") + escapedPath
	u.RawQuery = query.Encode()
	return &u
}

// getJSON reads u into v, retrying what may pass. what names the request
// in errors ("GET /rest/v3/short-urls page 2"). What its user must fix (a
// refused key, an address that is not the source's API) is a
// link.Error naming the field (url, api_key); a source that stopped
// answering is a plain error.
func (c *apiClient) getJSON(ctx context.Context, u *url.URL, what string, v any) error {
	wait := c.backoff
	for attempt := 0; ; attempt++ {
		retry, err := c.try(ctx, u, what, v)
		if err == nil {
			return nil
		}
		if !retry || attempt >= c.retries || ctx.Err() != nil {
			if retry {
				// Not a link.Error: the source stopped, which running the
				// import again gets past; nothing for its user to fix.
				return fmt.Errorf("%s stopped answering %s after %d tries: %s", c.source, what, attempt+1, err.Error())
			}
			return err
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		wait *= 2
	}
}

// try sends one request; retry says whether a failure may pass.
func (c *apiClient) try(ctx context.Context, u *url.URL, what string, v any) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return false, c.fail(what + ": " + err.Error())
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "linkbolt-import")
	c.auth(req)
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		var redirect redirectError
		if errors.As(err, &redirect) {
			return false, c.fail(what + ": " + string(redirect))
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message holds the whole address, query and all
		}
		return true, errors.New(err.Error())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes+1))
	if err != nil {
		return true, fmt.Errorf("reading the answer: %s", err.Error())
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return false, &link.Error{Code: link.EINVALID,
			Message: fmt.Sprintf("api_key: %s refused the API key (%s on %s)", c.source, resp.Status, what),
			Fields:  []link.FieldError{{Field: "api_key", Message: fmt.Sprintf("%s refused this key (%s)", c.source, resp.Status)}}}
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return true, fmt.Errorf("%s answered %s", c.source, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return false, c.fail(fmt.Sprintf("%s answered %s to %s; is the address that of its API?", c.source, resp.Status, what))
	}
	if len(body) > maxPageBytes {
		return false, c.fail(fmt.Sprintf("%s's answer to %s is larger than %d MB", c.source, what, maxPageBytes>>20))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return false, c.fail(fmt.Sprintf("%s's answer to %s is not the JSON its API documents (%s); is the address that of its API?", c.source, what, jsonProblem(err)))
	}
	return false, nil
}

// redirectError refuses a redirect the key must not follow.
type redirectError string

func (e redirectError) Error() string { return string(e) }

// fail is an error that stops the source, with a message a person can act
// on: the address is the field to check.
func (c *apiClient) fail(msg string) error {
	return &link.Error{Code: link.EINVALID, Message: "url: " + msg,
		Fields: []link.FieldError{{Field: "url", Message: msg}}}
}

// jsonProblem says what is wrong with a JSON text without quoting it.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("not JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("%s holds a JSON %s", te.Field, te.Value)
	}
	return "unreadable"
}

// setCreatedAt reads value, a link's creation date as the source's API
// gives it in field (ISO 8601), into l.CreatedAt; "" leaves it unset.
func setCreatedAt(l *Link, field, value string) *RowError {
	if value == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return &RowError{Where: l.Where, Reason: field + " " + strconv.Quote(value) + " is not an ISO 8601 date"}
	}
	l.CreatedAt = t.UTC()
	return nil
}

// countryCode is code when it is an ISO 3166-1 alpha-2 code, else "".
func countryCode(code string) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	if len(code) != 2 || code[0] < 'A' || code[0] > 'Z' || code[1] < 'A' || code[1] > 'Z' {
		return ""
	}
	return code
}
