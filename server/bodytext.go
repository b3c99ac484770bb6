package server

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"unicode/utf16"
	"unicode/utf8"
)

// bodyText is a string field of a large request body (an import's file,
// data and log_data) decoded where it lies in the body: encoding/json
// would copy it into a string of its own, so that the body and its copy,
// 31 MiB each for an import, were held side by side while the body
// decoded, and the copy for the rest of the import. decodeJSONBody
// unescapes it in place, in the body's own buffer, once the body is
// known good; until then it holds the string's JSON text, quotes and
// escapes included.
//
// A value that is not a string (or null) is refused with the words
// encoding/json has for a string field: decodeJSONBody decodes such a
// body again into the same type with strings for its bodyText fields.
type bodyText struct {
	b []byte
}

// UnmarshalJSON keeps b, a part of the body, which encoding/json hands
// over without copying it. It refuses nothing: the answer to a wrong
// type is worded by decodeJSONBody.
func (t *bodyText) UnmarshalJSON(b []byte) error {
	t.b = b
	return nil
}

// String returns the text (a copy).
func (t bodyText) String() string { return string(t.b) }

// Empty reports whether the field is absent, null or "".
func (t bodyText) Empty() bool { return len(t.b) == 0 }

// Reader reads the text.
func (t bodyText) Reader() io.Reader { return bytes.NewReader(t.b) }

var bodyTextType = reflect.TypeFor[bodyText]()

// bodyTexts returns the bodyText fields of the struct v points to (none
// when v is not a pointer to a struct).
func bodyTexts(v any) []*bodyText {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return nil
	}
	var out []*bodyText
	rv = rv.Elem()
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Type() == bodyTextType {
			out = append(out, f.Addr().Interface().(*bodyText))
		}
	}
	return out
}

// bodyTextsAreStrings reports whether each field of texts holds a JSON
// string, null, or nothing (absent): what encoding/json takes for a string.
func bodyTextsAreStrings(texts []*bodyText) bool {
	for _, t := range texts {
		if t.b != nil && string(t.b) != "null" && (len(t.b) < 2 || t.b[0] != '"') {
			return false
		}
	}
	return true
}

// unquoteBodyTexts turns the JSON string each field of texts holds into
// its text, in place in the body (which is read no more), and null into
// nothing.
func unquoteBodyTexts(texts []*bodyText) {
	for _, t := range texts {
		if string(t.b) == "null" {
			t.b = nil
		} else if t.b != nil {
			t.b = unquoteInPlace(t.b)
		}
	}
}

// withStrings returns struct type t with string in place of each of its
// bodyText fields, names and tags kept: what encoding/json decodes a body
// into to word its error as it does for any other type.
func withStrings(t reflect.Type) reflect.Type {
	fields := make([]reflect.StructField, t.NumField())
	for i := range fields {
		fields[i] = t.Field(i)
		fields[i].Offset, fields[i].Index = 0, nil
		if fields[i].Type == bodyTextType {
			fields[i].Type = reflect.TypeFor[string]()
		}
	}
	return reflect.StructOf(fields)
}

// unquoteInPlace decodes the JSON string literal q (quotes included),
// which encoding/json accepted, of a body that is valid UTF-8 and escapes
// no lone surrogate (decodeJSONBody checks both), into q's own bytes, and
// returns the part of q it used. An escape is never shorter than what it
// stands for, so what is written never overtakes what is still to read.
func unquoteInPlace(q []byte) []byte {
	s := q[1 : len(q)-1]
	w := bytes.IndexByte(s, '\\')
	if w < 0 {
		return s
	}
	for r := w; r < len(s); {
		c := s[r]
		if c != '\\' {
			n := bytes.IndexByte(s[r:], '\\')
			if n < 0 {
				n = len(s) - r
			}
			w += copy(s[w:], s[r:r+n])
			r += n
			continue
		}
		switch e := s[r+1]; e {
		case 'u':
			x := hex4(s[r+2 : r+6])
			r += 6
			if utf16.IsSurrogate(x) {
				// Paired (no lone surrogate reaches here): the low half follows.
				x = utf16.DecodeRune(x, hex4(s[r+2:r+6]))
				r += 6
			}
			w += utf8.EncodeRune(s[w:], x)
			continue
		case 'b':
			s[w] = '\b'
		case 'f':
			s[w] = '\f'
		case 'n':
			s[w] = '\n'
		case 'r':
			s[w] = '\r'
		case 't':
			s[w] = '\t'
		default: // '"', '\\', '/'
			s[w] = e
		}
		w++
		r += 2
	}
	return s[:w]
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

var _ json.Unmarshaler = (*bodyText)(nil)
