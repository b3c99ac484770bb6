package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// codeStatus maps each domain error code to its HTTP status; it is the only
// place that decides which status an error gets.
var codeStatus = map[string]int{
	link.EINVALIDREQUEST: http.StatusBadRequest,
	link.EUNAUTHORIZED:   http.StatusUnauthorized,
	link.EFORBIDDEN:      http.StatusForbidden,
	link.ENOTFOUND:       http.StatusNotFound,
	link.ECONFLICT:       http.StatusConflict,
	link.EINVALID:        http.StatusUnprocessableEntity,
	link.ERATELIMITED:    http.StatusTooManyRequests,
	link.EGONE:           http.StatusGone,
	link.EINTERNAL:       http.StatusInternalServerError,
	codeTooLarge:         http.StatusRequestEntityTooLarge,
	codeUnsupportedMedia: http.StatusUnsupportedMediaType,
	codeMethodNotAllowed: http.StatusMethodNotAllowed,
	codeRedirectLoop:     http.StatusLoopDetected,
	codeBusy:             http.StatusServiceUnavailable,
	codeStoreUnavailable: http.StatusServiceUnavailable,

	codeProviderUnavailable: http.StatusServiceUnavailable,
}

// Codes that only HTTP knows of.
const (
	codeTooLarge         = "payload_too_large"
	codeUnsupportedMedia = "unsupported_media_type"
	codeMethodNotAllowed = "method_not_allowed"
	codeRedirectLoop     = "redirect_loop"
	// codeBusy: every slot for costly work stayed taken (server/admit.go).
	codeBusy = "server_busy"
	// codeStoreUnavailable: the store cannot serve for now (its database
	// unreachable, its disk full; link.DataFile.Unavailable).
	codeStoreUnavailable = "store_unavailable"
)

// unavailableLine is the log line of an episode of the store's
// unavailability (server.unavailable writes it once, then at most once a
// minute).
const unavailableLine = "the store is unavailable: /healthz and the requests that need it are answered 503"

// storeRetryAfter is the Retry-After of a 503 store_unavailable: how soon
// a client may try again (the connection pool reconnects as soon as the
// database answers).
const storeRetryAfter = 5 * time.Second

var codeTitle = map[string]string{
	link.EINVALIDREQUEST: "Invalid request",
	link.EUNAUTHORIZED:   "Unauthorized",
	link.EFORBIDDEN:      "Forbidden",
	link.ENOTFOUND:       "Not found",
	link.ECONFLICT:       "Conflict",
	link.EINVALID:        "Validation failed",
	link.ERATELIMITED:    "Too many requests",
	link.EGONE:           "Gone",
	link.EINTERNAL:       "Internal server error",
	codeTooLarge:         "Payload too large",
	codeUnsupportedMedia: "Unsupported media type",
	codeMethodNotAllowed: "Method not allowed",
	codeRedirectLoop:     "Redirect loop",
	codeBusy:             "Service unavailable",
	codeStoreUnavailable: "Service unavailable",

	codeProviderUnavailable: "Service unavailable",
}

// problem is the RFC 9457 body of every error answer.
type problem struct {
	Type   string         `json:"type"`
	Title  string         `json:"title"`
	Status int            `json:"status"`
	Detail string         `json:"detail"`
	Code   string         `json:"code"`
	Errors []problemField `json:"errors,omitempty"`
}

type problemField struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// problemTypeBase prefixes the code to make the problem's type URI;
// docs/api.md ("Errors") documents each code under this name.
const problemTypeBase = "https://linkbolt.dev/problems/"

// writeError answers err as problem+json. Internal errors are logged with
// their cause and shown to the client only as a generic message; those
// the store says are its unavailability (a lost database, a full disk)
// are answered 503 store_unavailable with Retry-After, and logged once
// for the episode rather than for every request.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	err = s.storeUnavailable(w, r, err)
	code := link.ErrorCode(err)
	status, ok := codeStatus[code]
	if !ok {
		code, status = link.EINTERNAL, http.StatusInternalServerError
	}
	if code == link.EINTERNAL {
		s.logger.LogAttrs(r.Context(), slog.LevelError, "internal error",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	}
	p := newProblem(err, code, status)
	h := w.Header()
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="linkbolt"`)
	}
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_ = jsonEncode(w, p)
	}
}

// storeUnavailable returns err, or when it is an internal error the store
// says is its unavailability (link.DataFile.Unavailable) the
// store_unavailable error a client is shown instead, with Retry-After set
// on w; it logs the episode (once, then at most once a minute).
func (s *Server) storeUnavailable(w http.ResponseWriter, r *http.Request, err error) error {
	if link.ErrorCode(err) != link.EINTERNAL {
		return err
	}
	reason, down := s.db.Unavailable(err)
	if !down {
		return err
	}
	s.unavailable.Fail(unavailableLine, err, "reason", reason, "method", r.Method, "path", r.URL.Path)
	secs := retryAfter(w, storeRetryAfter)
	return errHTTP(codeStoreUnavailable, fmt.Sprintf("%s; retry in %d s", reason, secs))
}

// newProblem is the problem of err, whose code has the status.
func newProblem(err error, code string, status int) problem {
	p := problem{
		Type:   problemTypeBase + code,
		Title:  codeTitle[code],
		Status: status,
		Detail: link.ErrorMessage(err),
		Code:   code,
	}
	for _, f := range link.ErrorFields(err) {
		p.Errors = append(p.Errors, problemField{Field: f.Field, Message: f.Message})
	}
	return p
}

// retryAfter sets the Retry-After header for a 429 or 503 answer.
// It returns the whole seconds it announced, at least one.
func retryAfter(w http.ResponseWriter, d time.Duration) int {
	secs := int((d + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return secs
}

// errHTTP builds an error with a code only HTTP knows of.
func errHTTP(code, msg string) error { return &link.Error{Code: code, Message: msg} }

var errNoCredential = link.Errorf(link.EUNAUTHORIZED, "no credential: send an API key as 'Authorization: Bearer <key>' or 'X-API-Key: <key>', or log in for a token")

func isNotFound(err error) bool { return link.ErrorCode(err) == link.ENOTFOUND }
