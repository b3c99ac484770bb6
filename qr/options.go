// Package qr owns the rendering of QR codes for short links: the options a
// client may choose (format, size, quiet zone, error-correction level and
// colours), their defaults and validation, the PNG and SVG renderers, and the
// ETag that identifies one rendering. It knows nothing about HTTP or storage;
// the server decides what to render and how to cache it.
package qr

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/linkbolt/linkbolt/link"
)

// Formats a QR code can be rendered in.
const (
	FormatPNG = "png"
	FormatSVG = "svg"
)

// Bounds and defaults of the rendering options.
const (
	MinSize = 64   // smallest image edge in pixels
	MaxSize = 2048 // largest image edge in pixels

	MinMargin = 0  // a code without a quiet zone, for placing on a design that has one
	MaxMargin = 16 // well past the 4 modules the QR standard asks for

	DefaultFormat     = FormatPNG
	DefaultSize       = 512
	DefaultMargin     = 4 // the quiet zone the QR standard asks for
	DefaultLevel      = "M"
	DefaultForeground = "#000000"
	DefaultBackground = "#ffffff"
)

// Options says how to draw a QR code. Field names in errors are the query
// parameters that set them: format, size, margin, level, fg and bg.
type Options struct {
	// Format is "png" or "svg".
	Format string
	// Size is the edge of the square image in pixels, 64 to 2048.
	Size int
	// Margin is the quiet zone around the code in modules, 0 to 16. Because
	// 0 is a valid margin, Normalize does not default it: start from
	// DefaultOptions or ParseQuery to get the standard 4.
	Margin int
	// Level is the error-correction level: "L" (7 %), "M" (15 %), "Q" (25 %)
	// or "H" (30 %).
	Level string
	// Foreground and Background are hex colours: "#rrggbb", "rrggbb" or "#rgb".
	Foreground, Background string
	// Logo, when not empty, is a PNG (as PrepareLogo returns it) drawn in
	// the centre of the code. A code with a logo is always drawn at level
	// H, whatever Level says.
	Logo []byte
}

// DefaultOptions returns the options used when a client chooses none: a
// 512 px PNG, black on white, level M, with the standard 4-module quiet zone.
func DefaultOptions() Options {
	return Options{
		Format:     DefaultFormat,
		Size:       DefaultSize,
		Margin:     DefaultMargin,
		Level:      DefaultLevel,
		Foreground: DefaultForeground,
		Background: DefaultBackground,
	}
}

// Normalize fills empty fields with their defaults and puts the others in
// canonical form: a lower-case format, an upper-case level and colours as
// lower-case "#rrggbb". A zero Size becomes DefaultSize; Margin is left as it
// is, since 0 is a valid margin. Values that cannot be put in canonical form
// are left for Validate to report.
func (o *Options) Normalize() {
	o.Format = strings.ToLower(strings.TrimSpace(o.Format))
	if o.Format == "" {
		o.Format = DefaultFormat
	}
	if o.Size == 0 {
		o.Size = DefaultSize
	}
	o.Level = strings.ToUpper(strings.TrimSpace(o.Level))
	if o.Level == "" {
		o.Level = DefaultLevel
	}
	o.Foreground = normalizeColor(o.Foreground, DefaultForeground)
	o.Background = normalizeColor(o.Background, DefaultBackground)
}

// Validate reports every option that breaks a rule as one EINVALID error
// whose fields are named after the query parameters. It expects normalized
// options: "#FFF" is a malformed colour until Normalize has made it "#ffffff".
func (o Options) Validate() error {
	var fields []link.FieldError
	add := func(field, format string, args ...any) {
		fields = append(fields, link.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}

	if o.Format != FormatPNG && o.Format != FormatSVG {
		add("format", "must be png or svg")
	}
	if o.Size < MinSize || o.Size > MaxSize {
		add("size", "must be between %d and %d pixels", MinSize, MaxSize)
	}
	if o.Margin < MinMargin || o.Margin > MaxMargin {
		add("margin", "must be between %d and %d modules", MinMargin, MaxMargin)
	}
	if _, ok := levels[o.Level]; !ok {
		add("level", "must be one of L, M, Q, H")
	}
	fgOK, bgOK := isCanonicalColor(o.Foreground), isCanonicalColor(o.Background)
	if !fgOK {
		add("fg", "must be a hex colour such as #000000 or #000")
	}
	if !bgOK {
		add("bg", "must be a hex colour such as #ffffff or #fff")
	}
	if fgOK && bgOK && o.Foreground == o.Background {
		add("bg", "must differ from fg, or the code cannot be read")
	}
	return invalid(fields)
}

// ParseQuery reads the options from the query parameters format, size,
// margin, level, fg and bg; a missing or empty parameter takes its default
// (margin included). The options come back normalized. A size or margin that
// is not an integer, and every rule Validate checks, give one EINVALID error
// naming each bad parameter. Other parameters are ignored.
func ParseQuery(q url.Values) (Options, error) {
	o := DefaultOptions()
	var fields []link.FieldError
	parseInt := func(name string, dst *int) {
		s := strings.TrimSpace(q.Get(name))
		if s == "" {
			return
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			fields = append(fields, link.FieldError{Field: name, Message: "must be an integer"})
			return
		}
		*dst = n
	}

	if s := q.Get("format"); s != "" {
		o.Format = s
	}
	parseInt("size", &o.Size)
	parseInt("margin", &o.Margin)
	if s := q.Get("level"); s != "" {
		o.Level = s
	}
	if s := q.Get("fg"); s != "" {
		o.Foreground = s
	}
	if s := q.Get("bg"); s != "" {
		o.Background = s
	}
	o.Normalize()

	// A parameter that did not parse keeps its default, so Validate has
	// nothing more to say about it; report each field once.
	unparsed := make(map[string]bool, len(fields))
	for _, f := range fields {
		unparsed[f.Field] = true
	}
	for _, f := range link.ErrorFields(o.Validate()) {
		if !unparsed[f.Field] {
			fields = append(fields, f)
		}
	}
	if err := invalid(fields); err != nil {
		return Options{}, err
	}
	return o, nil
}

// invalid turns field errors into one EINVALID error, or nil if there are none.
func invalid(fields []link.FieldError) error {
	if len(fields) == 0 {
		return nil
	}
	msg := fields[0].Field + ": " + fields[0].Message
	if len(fields) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(fields)-1)
	}
	e := link.Errorf(link.EINVALID, "%s", msg)
	e.Fields = fields
	return e
}

// normalizeColor turns "#RGB", "RGB", "#RRGGBB" or "RRGGBB" into lower-case
// "#rrggbb", an empty string into def, and leaves anything else unchanged.
func normalizeColor(s, def string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return def
	}
	h := strings.ToLower(strings.TrimPrefix(s, "#"))
	if !isHex(h) {
		return s
	}
	switch len(h) {
	case 3:
		return "#" + string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	case 6:
		return "#" + h
	}
	return s
}

// isCanonicalColor reports whether s is a lower-case "#rrggbb".
func isCanonicalColor(s string) bool {
	return len(s) == 7 && s[0] == '#' && isHex(s[1:]) && strings.ToLower(s) == s
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}
