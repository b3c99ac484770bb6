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
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
	return s.decodeJSONUpTo(w, r, v, s.cfg.MaxBody)
}

// decodeJSONUpTo is decodeJSON with a body of at most limit bytes.
func (s *Server) decodeJSONUpTo(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	if err := checkJSONRequest(r, limit); err != nil {
		return err
	}
	return s.decodeJSONBody(w, r, v, limit)
}

// decodeJSONHeld is decodeJSONUpTo for the routes whose bodies may be
// many times server.max_body (imports, bulk creations): a body over
// freeBody is admitted by the body gate (see bodyGate), for held bytes
// per byte of it, before a byte of it is read, and the handler, which
// holds the body and what it decoded into while it works, gives its room
// back by release.
func (s *Server) decodeJSONHeld(w http.ResponseWriter, r *http.Request, v any, limit, held int64) (release func(), err error) {
	if err := checkJSONRequest(r, limit); err != nil {
		return nil, err
	}
	release, err = s.bodies.reserve(w, r, limit, held)
	if err != nil {
		return nil, err
	}
	if err := s.decodeJSONBody(w, r, v, limit); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// checkJSONRequest refuses, before the body is read, a request whose
// content type is not JSON or that declares a body over limit.
func checkJSONRequest(r *http.Request, limit int64) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return errHTTP(codeUnsupportedMedia, "the body must be JSON: send 'Content-Type: application/json'")
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return errHTTP(codeUnsupportedMedia, fmt.Sprintf("the body must be JSON, not %q: send 'Content-Type: application/json'", ct))
	}
	if r.ContentLength > limit {
		return errHTTP(codeTooLarge, fmt.Sprintf("the body is larger than the limit of %d bytes", limit))
	}
	return nil
}

// readBody reads a body of at most limit bytes. One of a declared length
// is read into a buffer of that size: io.ReadAll would grow its buffer by
// doubling, holding up to twice the body while it reads.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	if n := r.ContentLength; n > 0 && n <= limit {
		data := make([]byte, n)
		if _, err := io.ReadFull(body, data); err != nil {
			return nil, err
		}
		return data, nil
	}
	return io.ReadAll(body)
}

func (s *Server) decodeJSONBody(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	data, err := readBody(w, r, limit)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errHTTP(codeTooLarge, fmt.Sprintf("the body is larger than the limit of %d bytes", limit))
		}
		return link.Errorf(link.EINVALIDREQUEST, "could not read the body: %v", err)
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return link.Errorf(link.EINVALIDREQUEST, "the body is empty: send a JSON object")
	}
	// encoding/json would replace invalid UTF-8 with U+FFFD and store it.
	if !utf8.Valid(data) {
		return link.Errorf(link.EINVALIDREQUEST, "the body is not valid UTF-8 (at byte %d)", invalidUTF8At(data))
	}
	// An escaped lone surrogate ("\ud800") is valid UTF-8 on the wire and
	// would be stored as U+FFFD just the same.
	if at := loneSurrogateAt(data); at >= 0 {
		return link.Errorf(link.EINVALIDREQUEST, "the body escapes a lone UTF-16 surrogate (at byte %d): it is not a character", at)
	}
	// json.Unmarshal decodes the body where it lies; a Decoder would copy
	// it into a buffer of its own, grown by doubling (an import's 31 MiB
	// body held three times). Unknown fields are refused by
	// checkFieldNames as the Decoder would; a body Unmarshal refuses goes
	// through the Decoder again, whose errors say more (an unknown field
	// before a wrong type, data after the object). A bodyText field (an
	// import's file) is left where it lies in data, and unescaped there
	// once the body is known good; a body that fails, or that gives one
	// of them a value other than a string, goes through the Decoder with
	// strings for them, whose errors are those of any string field.
	texts := bodyTexts(v)
	if json.Unmarshal(data, v) == nil && bodyTextsAreStrings(texts) {
		if err := checkFieldNames(data, reflect.TypeOf(v), ""); err != nil {
			return err
		}
		unquoteBodyTexts(texts) // data is read no more
		return nil
	}
	if texts != nil {
		v = reflect.New(withStrings(reflect.TypeOf(v).Elem())).Interface()
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			// encoding/json names the field alone; the walk names where
			// it is, as in links[412].colour of a bulk creation.
			if ferr := checkFieldNames(data, reflect.TypeOf(v), ""); ferr != nil {
				return ferr
			}
		}
		return jsonError(err)
	}
	if dec.More() {
		return link.Errorf(link.EINVALIDREQUEST, "the body holds more than one JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return link.Errorf(link.EINVALIDREQUEST, "the body holds data after the JSON object")
	}
	// encoding/json matches field names case-insensitively; the API does not.
	if err := checkFieldNames(data, reflect.TypeOf(v), ""); err != nil || texts == nil {
		return err
	}
	// Decoded with strings, what failed with bodyText fields: no body
	// does both.
	return link.Errorf(link.EINVALIDREQUEST, "malformed JSON")
}

// invalidUTF8At returns the offset of the first invalid UTF-8 sequence.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// loneSurrogateAt returns the offset of the first \u escape in a JSON
// string of b that is half of a UTF-16 surrogate pair without its other
// half, or -1. Escapes that are not four hex digits are left to the decoder.
func loneSurrogateAt(b []byte) int {
	escaped := func(i int) (rune, bool) { // the four-hex-digit \u escape at b[i:]
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
		return rune(n), err == nil
	}
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			r, ok := escaped(i)
			if !ok {
				i++ // a two-byte escape such as \" or \\
				continue
			}
			switch {
			case r >= 0xD800 && r < 0xDC00:
				if low, ok := escaped(i + 6); !ok || low < 0xDC00 || low > 0xDFFF {
					return i
				}
				i += 11
			case r >= 0xDC00 && r <= 0xDFFF:
				return i
			default:
				i += 5
			}
		}
	}
	return -1
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// checkFieldNames reports a field of the JSON object data (which decoded
// into a value of type t already) whose name is not exactly the name of a
// field of t, as in {"Destination_URL": …}. Nested objects and arrays of
// objects are checked against their field types. path names the object
// in the message ("options." for a nested one, "links[3]." for an item of
// an array).
func checkFieldNames(data []byte, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		items, ok := arrayItems(data)
		if !ok {
			return nil // null
		}
		for i, it := range items {
			if err := checkFieldNames(it, t.Elem(), strings.TrimSuffix(path, ".")+"["+strconv.Itoa(i)+"]."); err != nil {
				return err
			}
		}
		return nil
	case reflect.Struct:
	default:
		return nil
	}
	obj, ok := objectMembers(data)
	if !ok {
		return nil // null
	}
	fields := cachedJSONFields(t)
	seen := make(map[string]bool, len(obj))
	for _, m := range obj {
		name, raw := m.name, m.raw
		if seen[name] {
			// encoding/json would keep the last one silently: which one a
			// client meant is not for the server to guess.
			return &link.Error{Code: link.EINVALIDREQUEST,
				Message: fmt.Sprintf("%q: the field is given twice", path+name),
				Fields:  []link.FieldError{{Field: path + name, Message: "is given twice"}}}
		}
		seen[name] = true
		ft, ok := fields[name]
		if !ok {
			msg := "unknown field"
			for known := range fields {
				if strings.EqualFold(known, name) {
					msg = fmt.Sprintf("unknown field (names are case-sensitive: did you mean %q?)", path+known)
				}
			}
			return &link.Error{Code: link.EINVALIDREQUEST,
				Message: fmt.Sprintf("%q: %s", path+name, msg),
				Fields:  []link.FieldError{{Field: path + name, Message: msg}}}
		}
		if err := checkFieldNames(raw, ft, path+name+"."); err != nil {
			return err
		}
	}
	return nil
}

type member struct {
	name string
	raw  []byte
}

// The walks below read JSON text that encoding/json has accepted already
// (checkFieldNames runs after the decoding), so they only find where each
// value ends; on text that is not JSON they stop without reading past
// its end. They hand out parts of the text rather than copies.

// objectMembers returns the members of the JSON object data in order,
// duplicates kept; false when data is not an object.
func objectMembers(data []byte) ([]member, bool) {
	i := skipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	var out []member
	i = skipJSONSpace(data, i+1)
	for i < len(data) && data[i] == '"' {
		end := skipJSONValue(data, i)
		name := string(data[i+1 : max(i+1, end-1)])
		if bytes.IndexByte(data[i:end], '\\') >= 0 {
			if json.Unmarshal(data[i:end], &name) != nil {
				return nil, false
			}
		}
		i = skipJSONSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		start := skipJSONSpace(data, i+1)
		end = skipJSONValue(data, start)
		out = append(out, member{name, data[start:end]})
		i = nextJSONItem(data, end)
	}
	return out, true
}

// arrayItems returns the items of the JSON array data; false when data is
// not an array.
func arrayItems(data []byte) ([][]byte, bool) {
	i := skipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	var out [][]byte
	i = skipJSONSpace(data, i+1)
	for i < len(data) && data[i] != ']' {
		end := skipJSONValue(data, i)
		if end == i {
			return nil, false
		}
		out = append(out, data[i:end])
		i = nextJSONItem(data, end)
	}
	return out, true
}

// nextJSONItem returns where the member or item after the value ending at
// end starts: past the comma and the spaces around it.
func nextJSONItem(data []byte, end int) int {
	i := skipJSONSpace(data, end)
	if i < len(data) && data[i] == ',' {
		i = skipJSONSpace(data, i+1)
	}
	return i
}

func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipJSONValue returns the offset just past the value that starts at
// data[i]: a string, an object or array (whatever it holds), a number or
// a literal.
func skipJSONValue(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
		default:
			if depth == 0 {
				for i < len(data) && !strings.ContainsRune(",}] \t\n\r", rune(data[i])) {
					i++
				}
				return i
			}
			i++
		}
		if depth <= 0 {
			return min(i, len(data))
		}
	}
	return len(data)
}

// jsonFieldsOf caches jsonFields by type: the check of a bulk creation
// asks for the same few types a thousand times.
var jsonFieldsOf sync.Map // reflect.Type → map[string]reflect.Type

func cachedJSONFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := jsonFieldsOf.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	f := jsonFields(t)
	jsonFieldsOf.Store(t, f)
	return f
}

// jsonFields returns the JSON names of the fields of struct type t (those
// of embedded structs included) with their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range jsonFields(et) {
					out[k] = v
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
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
