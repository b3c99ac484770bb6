package server

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// The YOURLS-compatible API answers in the four formats of YOURLS 1.10
// (includes/functions-api.php, yourls_api_output), byte for byte where a
// client could tell: json as PHP's json_encode writes it, xml as the
// Spatie ArrayToXml library YOURLS uses writes it (root element <root>),
// jsonp, and simple, the bare text of the answer's "simple" value.

// yourlsResult is an answer of the YOURLS API: its keys in order, as a PHP
// array keeps them. Values are strings, int64 or nested yourlsResults.
type yourlsResult []yourlsField

type yourlsField struct {
	Key   string
	Value any
}

// get returns the value of key.
func (res yourlsResult) get(key string) (any, bool) {
	for _, f := range res {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// str returns the value of key as a string ("" when absent).
func (res yourlsResult) str(key string) string {
	v, _ := res.get(key)
	s, _ := v.(string)
	return s
}

// set replaces the value of key where it is, or appends the key, as an
// assignment to a PHP array does.
func (res *yourlsResult) set(key string, v any) {
	for i, f := range *res {
		if f.Key == key {
			(*res)[i].Value = v
			return
		}
	}
	*res = append(*res, yourlsField{key, v})
}

// without returns res without key.
func (res yourlsResult) without(key string) yourlsResult {
	out := make(yourlsResult, 0, len(res))
	for _, f := range res {
		if f.Key != key {
			out = append(out, f)
		}
	}
	return out
}

// yourlsStatus is the HTTP status of an answer, as yourls_api_output picks
// it: statusCode, else errorCode, else 200.
func yourlsStatus(res yourlsResult) int {
	for _, key := range []string{"statusCode", "errorCode"} {
		if v, ok := res.get(key); ok {
			if n, err := strconv.Atoi(fmt.Sprint(v)); err == nil && n >= 100 && n <= 599 {
				return n
			}
			return http.StatusOK
		}
	}
	return http.StatusOK
}

// writeYOURLS writes res in format (json, jsonp, xml; anything else is
// simple, as in YOURLS). A jsonp answer needs a callback that is a safe
// JavaScript name; an unsafe one is refused with YOURLS's 400 answer. Its
// content type is jsonpContentType's.
func writeYOURLS(w http.ResponseWriter, r *http.Request, format string, res yourlsResult) {
	simple := res.str("simple")
	_, hasSimple := res.get("simple")
	res = res.without("simple")
	status := yourlsStatus(res)
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	var body string
	switch format {
	case "jsonp":
		h.Set("Content-Type", jsonpContentType(r))
		h.Add("Vary", "Sec-Fetch-Site")
		cb, given := res.get("callback")
		callback, _ := cb.(string)
		if given && !validJSONPCallback(callback) {
			status = http.StatusBadRequest
			body = phpJSON(yourlsResult{{"errorCode", "400"}, {"error", "Invalid callback parameter"}})
			break
		}
		body = callback + "(" + phpJSON(res) + ")"
	case "json":
		h.Set("Content-Type", "application/json; charset=utf-8")
		body = phpJSON(res)
	case "xml":
		h.Set("Content-Type", "application/xml; charset=utf-8")
		body = spatieXML(res)
	default:
		h.Set("Content-Type", "text/plain; charset=utf-8")
		if hasSimple {
			body = simple
		}
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// jsonpContentType is the content type of a jsonp answer. JSONP is there
// for a script element of another site's page (the yourls-api JavaScript
// library loads it so): such a load, which a browser's Fetch Metadata
// names cross-site or same-site, gets JavaScript, as from YOURLS. Any
// other request gets the same text as text/plain, which a browser,
// under nosniff, refuses to run as a script: a script element on
// linkbolt's own pages (same-origin), where the dashboard's script-src
// 'self' would otherwise let an injected <script
// src="/yourls-api.php?format=jsonp&callback=…"> run with the caller's
// choice of function, and a browser too old to send Fetch Metadata, which
// cannot be told from it. Programs that read the text are unaffected.
func jsonpContentType(r *http.Request) string {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return "application/javascript; charset=utf-8"
	}
	return "text/plain; charset=utf-8"
}

// jsonpCallback is the rule of yourls_validate_jsonp_callback (letters,
// digits, _, $ and dots, and no \uXXXX escape that could smuggle a line
// separator), tightened to what is a JavaScript name or a dotted path of
// names: no part empty or starting with a digit, at most 128 characters.
var (
	jsonpCallback   = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$`)
	jsonpUnicodeEsc = regexp.MustCompile(`\\?u[0-9a-fA-F]{4}`)
)

func validJSONPCallback(cb string) bool {
	return len(cb) <= 128 && jsonpCallback.MatchString(cb) && !jsonpUnicodeEsc.MatchString(cb)
}

// phpJSON encodes res as PHP's json_encode does with no flags: keys in
// order, "/" escaped, every character outside ASCII as \uXXXX (so a jsonp
// answer never carries a raw line separator), invalid UTF-8 replaced.
func phpJSON(res yourlsResult) string {
	var b strings.Builder
	writePHPJSON(&b, res)
	return b.String()
}

func writePHPJSON(b *strings.Builder, v any) {
	switch v := v.(type) {
	case yourlsResult:
		b.WriteByte('{')
		for i, f := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writePHPString(b, f.Key)
			b.WriteByte(':')
			writePHPJSON(b, f.Value)
		}
		b.WriteByte('}')
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case int:
		b.WriteString(strconv.Itoa(v))
	case string:
		writePHPString(b, v)
	default:
		writePHPString(b, fmt.Sprint(v))
	}
}

func writePHPString(b *strings.Builder, s string) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '/':
			b.WriteString(`\/`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		case r >= 0x80:
			if r >= 0x10000 {
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// spatieXML encodes res as YOURLS's yourls_xml_encode does: an XML
// declaration, a <root> element with one element per key, nested answers
// nested, control characters other than line breaks dropped, and an empty
// value as an empty element.
func spatieXML(res yourlsResult) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<root>")
	writeXMLFields(&b, res)
	b.WriteString("</root>\n")
	return b.String()
}

func writeXMLFields(b *strings.Builder, res yourlsResult) {
	for _, f := range res {
		name := strings.ReplaceAll(f.Key, " ", "_")
		var text string
		switch v := f.Value.(type) {
		case yourlsResult:
			b.WriteString("<" + name + ">")
			writeXMLFields(b, v)
			b.WriteString("</" + name + ">")
			continue
		case string:
			text = v
		default:
			text = fmt.Sprint(v)
		}
		text = xmlText(text)
		if text == "" {
			b.WriteString("<" + name + "/>")
			continue
		}
		b.WriteString("<" + name + ">" + text + "</" + name + ">")
	}
}

// xmlText escapes s as libxml2 writes a text node, after Spatie has
// dropped the control characters (all but \n and \r).
func xmlText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '\r':
			b.WriteString("&#13;")
		case r == '\n':
			b.WriteByte('\n')
		case r < 0x20 || r == 0x7f:
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
