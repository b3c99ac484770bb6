package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

func jsonEncode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeJSON answers v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = jsonEncode(w, v)
}

// decodeJSON reads a JSON object into v: the content type must be JSON, the
// body at most the configured size, with no unknown fields and nothing
// after the object. Every failure is an error with a code and a message
// that says what to fix.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return errHTTP(codeUnsupportedMedia, "the body must be JSON: send 'Content-Type: application/json'")
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return errHTTP(codeUnsupportedMedia, fmt.Sprintf("the body must be JSON, not %q: send 'Content-Type: application/json'", ct))
	}
	if r.ContentLength > s.cfg.MaxBody {
		return errHTTP(codeTooLarge, fmt.Sprintf("the body is larger than the limit of %d bytes", s.cfg.MaxBody))
	}
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	data, err := io.ReadAll(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errHTTP(codeTooLarge, fmt.Sprintf("the body is larger than the limit of %d bytes", s.cfg.MaxBody))
		}
		return link.Errorf(link.EINVALIDREQUEST, "could not read the body: %v", err)
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return link.Errorf(link.EINVALIDREQUEST, "the body is empty: send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return link.Errorf(link.EINVALIDREQUEST, "the body holds more than one JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return link.Errorf(link.EINVALIDREQUEST, "the body holds data after the JSON object")
	}
	return nil
}

// jsonError turns a decoding error into a message a person can act on.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var tpe *time.ParseError
	switch {
	case errors.As(err, &syn):
		return link.Errorf(link.EINVALIDREQUEST, "malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return &link.Error{Code: link.EINVALIDREQUEST,
				Message: fmt.Sprintf("field %q must be %s, not %s", typ.Field, jsonTypeName(typ.Type), typ.Value),
				Fields:  []link.FieldError{{Field: typ.Field, Message: "wrong type"}}}
		}
		return link.Errorf(link.EINVALIDREQUEST, "the body must be a JSON object, not %s", typ.Value)
	case errors.As(err, &tpe):
		return link.Errorf(link.EINVALIDREQUEST, "a time must be RFC 3339, like 2026-12-31T23:59:59Z, not %q", tpe.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return link.Errorf(link.EINVALIDREQUEST, "malformed JSON: the body ends too early")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return &link.Error{Code: link.EINVALIDREQUEST,
			Message: fmt.Sprintf("unknown field %s", name),
			Fields:  []link.FieldError{{Field: strings.Trim(name, `"`), Message: "unknown field"}}}
	}
	return link.Errorf(link.EINVALIDREQUEST, "malformed JSON: %v", err)
}

func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind().String() {
	case "string":
		return "a string"
	case "int", "int64", "int32", "uint", "uint64", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "of the documented type"
}
