package qr_test

import (
	"net/url"
	"reflect"
	"sort"
	"testing"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/qr"
)

func TestDefaultOptions(t *testing.T) {
	o := qr.DefaultOptions()
	want := qr.Options{Format: "png", Size: 512, Margin: 4, Level: "M", Foreground: "#000000", Background: "#ffffff"}
	if got := o; !reflect.DeepEqual(got, want) {
		t.Fatalf("DefaultOptions() = %+v, want %+v", got, want)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("DefaultOptions().Validate() = %v", err)
	}
}

func TestOptions_Normalize(t *testing.T) {
	tests := []struct {
		name string
		in   qr.Options
		want qr.Options
	}{
		{
			name: "zero value takes defaults, margin stays 0",
			in:   qr.Options{},
			want: qr.Options{Format: "png", Size: 512, Margin: 0, Level: "M", Foreground: "#000000", Background: "#ffffff"},
		},
		{
			name: "canonical case and colour forms",
			in:   qr.Options{Format: " SVG ", Size: 300, Margin: 2, Level: "h", Foreground: "#ABC", Background: "FfEeDd"},
			want: qr.Options{Format: "svg", Size: 300, Margin: 2, Level: "H", Foreground: "#aabbcc", Background: "#ffeedd"},
		},
		{
			name: "six digits with hash",
			in:   qr.Options{Format: "png", Size: 64, Margin: 16, Level: "q", Foreground: "#1A2B3C", Background: "#fff"},
			want: qr.Options{Format: "png", Size: 64, Margin: 16, Level: "Q", Foreground: "#1a2b3c", Background: "#ffffff"},
		},
		{
			name: "malformed values are left for Validate",
			in:   qr.Options{Format: "gif", Size: -1, Margin: -1, Level: "x", Foreground: "#12345", Background: "red"},
			want: qr.Options{Format: "gif", Size: -1, Margin: -1, Level: "X", Foreground: "#12345", Background: "red"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in
			got.Normalize()
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Normalize() = %+v, want %+v", got, tt.want)
			}
			// Normalizing twice changes nothing.
			again := got
			again.Normalize()
			if !reflect.DeepEqual(again, got) {
				t.Fatalf("second Normalize() = %+v, want %+v", again, got)
			}
		})
	}
}

func TestOptions_Validate(t *testing.T) {
	base := qr.DefaultOptions()
	with := func(f func(*qr.Options)) qr.Options {
		o := base
		f(&o)
		return o
	}
	tests := []struct {
		name   string
		opts   qr.Options
		fields []string // fields named in the error, in any order
	}{
		{"format gif", with(func(o *qr.Options) { o.Format = "gif" }), []string{"format"}},
		{"format empty", with(func(o *qr.Options) { o.Format = "" }), []string{"format"}},
		{"size below min", with(func(o *qr.Options) { o.Size = 63 }), []string{"size"}},
		{"size zero", with(func(o *qr.Options) { o.Size = 0 }), []string{"size"}},
		{"size above max", with(func(o *qr.Options) { o.Size = 2049 }), []string{"size"}},
		{"size negative", with(func(o *qr.Options) { o.Size = -512 }), []string{"size"}},
		{"margin negative", with(func(o *qr.Options) { o.Margin = -1 }), []string{"margin"}},
		{"margin above max", with(func(o *qr.Options) { o.Margin = 17 }), []string{"margin"}},
		{"level unknown", with(func(o *qr.Options) { o.Level = "X" }), []string{"level"}},
		{"level lower case unnormalized", with(func(o *qr.Options) { o.Level = "m" }), []string{"level"}},
		{"fg not hex", with(func(o *qr.Options) { o.Foreground = "#gggggg" }), []string{"fg"}},
		{"fg five digits", with(func(o *qr.Options) { o.Foreground = "#12345" }), []string{"fg"}},
		{"fg name", with(func(o *qr.Options) { o.Foreground = "black" }), []string{"fg"}},
		{"bg eight digits", with(func(o *qr.Options) { o.Background = "#ffffffff" }), []string{"bg"}},
		{"bg empty", with(func(o *qr.Options) { o.Background = "" }), []string{"bg"}},
		{"fg equals bg", with(func(o *qr.Options) { o.Foreground, o.Background = "#123456", "#123456" }), []string{"bg"}},
		{
			"everything wrong",
			qr.Options{Format: "bmp", Size: 10, Margin: 99, Level: "Z", Foreground: "nope", Background: "#zzz"},
			[]string{"format", "size", "margin", "level", "fg", "bg"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertInvalidFields(t, tt.opts.Validate(), tt.fields...)
		})
	}

	good := []qr.Options{
		base,
		with(func(o *qr.Options) { o.Format, o.Size, o.Margin, o.Level = "svg", 64, 0, "L" }),
		with(func(o *qr.Options) { o.Size, o.Margin, o.Level = 2048, 16, "H" }),
		with(func(o *qr.Options) { o.Level, o.Foreground, o.Background = "Q", "#1a237e", "#fff59d" }),
	}
	for _, o := range good {
		if err := o.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", o, err)
		}
	}
}

func TestParseQuery(t *testing.T) {
	t.Run("empty query gives defaults", func(t *testing.T) {
		got, err := qr.ParseQuery(url.Values{})
		if err != nil {
			t.Fatal(err)
		}
		if want := qr.DefaultOptions(); !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseQuery() = %+v, want %+v", got, want)
		}
	})

	good := []struct {
		query string
		want  qr.Options
	}{
		{
			"format=svg&size=256&margin=0&level=h&fg=1a237e&bg=%23FFF59D",
			qr.Options{Format: "svg", Size: 256, Margin: 0, Level: "H", Foreground: "#1a237e", Background: "#fff59d"},
		},
		{
			"format=PNG&size=64&margin=16&level=L&fg=%23F00&bg=0f0",
			qr.Options{Format: "png", Size: 64, Margin: 16, Level: "L", Foreground: "#ff0000", Background: "#00ff00"},
		},
		{
			// Empty values are "not given"; parameters that are not ours are ignored.
			"size=&margin=&level=&fg=&bg=&format=&api_key=lb_live_x&workspace_id=7",
			qr.DefaultOptions(),
		},
		{
			"size=+2048&margin=%204",
			qr.Options{Format: "png", Size: 2048, Margin: 4, Level: "M", Foreground: "#000000", Background: "#ffffff"},
		},
		{
			// Light on dark is allowed; only identical colours are refused.
			"fg=fff&bg=000",
			qr.Options{Format: "png", Size: 512, Margin: 4, Level: "M", Foreground: "#ffffff", Background: "#000000"},
		},
	}
	for _, tt := range good {
		t.Run(tt.query, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := qr.ParseQuery(q)
			if err != nil {
				t.Fatalf("ParseQuery(%q) = %v", tt.query, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseQuery(%q) = %+v, want %+v", tt.query, got, tt.want)
			}
		})
	}

	bad := []struct {
		query  string
		fields []string
	}{
		{"format=jpeg", []string{"format"}},
		{"size=abc", []string{"size"}},
		{"size=512px", []string{"size"}},
		{"size=1.5", []string{"size"}},
		{"size=99999999999999999999999", []string{"size"}},
		{"size=32", []string{"size"}},
		{"size=4096", []string{"size"}},
		{"margin=two", []string{"margin"}},
		{"margin=-1", []string{"margin"}},
		{"margin=17", []string{"margin"}},
		{"level=X", []string{"level"}},
		{"level=medium", []string{"level"}},
		{"fg=%2312345", []string{"fg"}},
		{"bg=white", []string{"bg"}},
		{"fg=000000&bg=%23000", []string{"bg"}},
		{"fg=fff", []string{"bg"}}, // white on the default white
		{"format=gif&size=x&margin=y&level=Z&fg=q&bg=r", []string{"format", "size", "margin", "level", "fg", "bg"}},
	}
	for _, tt := range bad {
		t.Run(tt.query, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := qr.ParseQuery(q)
			assertInvalidFields(t, err, tt.fields...)
			if !reflect.DeepEqual(got, qr.Options{}) {
				t.Fatalf("ParseQuery(%q) options = %+v, want zero value with an error", tt.query, got)
			}
		})
	}
}

func FuzzParseQuery(f *testing.F) {
	f.Add("png", "512", "4", "M", "#000", "fff")
	f.Add("svg", "64", "0", "h", "1a237e", "#fff59d")
	f.Add("", "", "", "", "", "")
	f.Add("gif", "x", "-1", "Z", "#12345", "white")
	f.Fuzz(func(t *testing.T, format, size, margin, level, fg, bg string) {
		q := url.Values{"format": {format}, "size": {size}, "margin": {margin}, "level": {level}, "fg": {fg}, "bg": {bg}}
		o, err := qr.ParseQuery(q)
		if err != nil {
			if got, want := link.ErrorCode(err), link.EINVALID; got != want {
				t.Fatalf("ParseQuery error code = %q, want %q (%v)", got, want, err)
			}
			if len(link.ErrorFields(err)) == 0 {
				t.Fatalf("ParseQuery error %v names no field", err)
			}
			return
		}
		if err := o.Validate(); err != nil {
			t.Fatalf("ParseQuery returned options that do not validate: %+v: %v", o, err)
		}
		again := o
		again.Normalize()
		if !reflect.DeepEqual(again, o) {
			t.Fatalf("ParseQuery returned options that are not normalized: %+v", o)
		}
	})
}

// assertInvalidFields checks that err is an EINVALID error naming exactly
// the given fields (each once, in any order).
func assertInvalidFields(tb testing.TB, err error, fields ...string) {
	tb.Helper()
	if got, want := link.ErrorCode(err), link.EINVALID; got != want {
		tb.Fatalf("error code = %q, want %q (err %v)", got, want, err)
	}
	var got []string
	for _, f := range link.ErrorFields(err) {
		if f.Message == "" {
			tb.Errorf("field %q has no message", f.Field)
		}
		got = append(got, f.Field)
	}
	want := append([]string(nil), fields...)
	sort.Strings(got)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		tb.Fatalf("error fields = %v, want %v (err %v)", got, want, err)
	}
}
