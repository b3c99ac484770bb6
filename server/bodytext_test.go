package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// An import's data is unescaped in place, in the body's buffer, to the
// same text encoding/json decodes it to: every escape JSON has (\u in
// either case, surrogate pairs, \/), runs without escapes between them,
// and text that escapes nothing.
func TestBodyTextUnquotesAsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, q := range []string{
		`""`, `"plain, no escape"`, `"\\"`, `"\""`, `"a\/b"`, `"\b\f\n\r\t"`,
		`"url,alias\nhttps://example.com/a,\"x\"\r\n"`, `"\u00e9\u00E9t\u00e9"`, `"\u20ac \ud83d\ude00 \uD83D\uDE00!"`,
		`"\u0000\u001f\u0041"`, `"déjà \\u0041 vu"`, `"` + strings.Repeat(`ab\"c\\d`, 1000) + `"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(q), &want); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := string(unquoteInPlace([]byte(q))); got != want {
			t.Fatalf("%s: unquoted to %q, want %q", q, got, want)
		}
	}
}

// An import whose data is not a string is refused as before data was
// left in the body: with the words of any string field.
func TestBodyTextWrongType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for body, want := range map[string]string{
		`{"from":"csv","data":5}`:                   `field "data" must be a string, not number`,
		`{"from":"csv","data":"x","log_data":[1]}`:  `field "log_data" must be a string, not array`,
		`{"from":"csv","colour":1,"data":{}}`:       `"colour": unknown field`,
		`{"from":"csv","Data":"url\nhttps://a.b/"}`: `"Data": unknown field (names are case-sensitive: did you mean "data"?)`,
	} {
		r := e.do("POST", "/v1/imports", e.writeKey, body, 400)
		if got := r.path("detail"); got != want {
			t.Errorf("%s: detail %q, want %q", body, got, want)
		}
	}
}
