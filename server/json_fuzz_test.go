package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"reflect"
	"testing"
)

// strictDecode decodes data into v as encoding/json does with unknown
// fields refused and nothing after the value: what decodeJSONBody's own
// walk must agree with wherever it accepts.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// FuzzDecodeJSONBody: decodeJSONBody, which decodes with json.Unmarshal
// where the body lies, walks field names by hand and unescapes an
// import's file in place, never panics, and whatever it accepts
// encoding/json's strict decoder accepts too, to the same value (a
// bodyText field to the same string).
func FuzzDecodeJSONBody(f *testing.F) {
	for _, seed := range []string{
		`{"destination_url":"https://example.com/","alias":"a","tags":["x","y"],"rules":[{"if":{"query":{"name":"q","value":"v"}},"then":"https://e.example/"}]}`,
		`{"destination_url":"https://example.com/","variants":[{"destination_url":"https://a.example/","weight":50}],"og":{"title":"t"},"expires_at":"2027-01-01T00:00:00Z","max_clicks":5}`,
		`{"Destination_URL":"x"}`, `{"destination_url":"\ud800"}`, `{"a":1}`, `{} {}`, `[]`, `null`, `{"tags":null}`,
		`{"from":"csv","dry_run":true,"data":"url,alias\nhttps://example.com/\u00e9\\n,\"a\"\n","log_data":null}`,
		`{"from":"csv","data":"\ud83d\ude00\t\u2028\/"}`, `{"from":"csv","data":5}`, `{"data":"x","data":"y"}`,
	} {
		f.Add([]byte(seed))
	}
	s := &Server{}
	f.Fuzz(func(t *testing.T, data []byte) {
		decode := func(v any) error {
			r := httptest.NewRequest("POST", "/", bytes.NewReader(data))
			r.Header.Set("Content-Type", "application/json")
			return s.decodeJSONBody(httptest.NewRecorder(), r, v, 1<<20)
		}
		var link createLinkRequest
		if decode(&link) == nil {
			var want createLinkRequest
			if err := strictDecode(data, &want); err != nil {
				t.Fatalf("%q: accepted as a link, encoding/json refuses it: %v", data, err)
			}
			if !reflect.DeepEqual(link, want) {
				t.Fatalf("%q: decoded %+v, encoding/json %+v", data, link, want)
			}
		}
		var imp importRequest
		if decode(&imp) == nil {
			want := reflect.New(withStrings(reflect.TypeFor[importRequest]()))
			if err := strictDecode(data, want.Interface()); err != nil {
				t.Fatalf("%q: accepted as an import, encoding/json refuses it: %v", data, err)
			}
			w := want.Elem()
			if got, want := imp.Data.String(), w.FieldByName("Data").String(); got != want {
				t.Fatalf("%q: data %q, encoding/json %q", data, got, want)
			}
			if got, want := imp.LogData.String(), w.FieldByName("LogData").String(); got != want {
				t.Fatalf("%q: log_data %q, encoding/json %q", data, got, want)
			}
			if imp.From != w.FieldByName("From").String() || imp.URL != w.FieldByName("URL").String() {
				t.Fatalf("%q: from/url differ from encoding/json's", data)
			}
		}
	})
}
