package qr

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strconv"
	"strings"
	"sync"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/linkbolt/linkbolt/link"
)

// Content types of the rendered formats.
const (
	ContentTypePNG = "image/png"
	ContentTypeSVG = "image/svg+xml"
)

// renderVersion is part of every ETag, so a change to how images are drawn
// can invalidate what caches hold by bumping it.
const renderVersion = "qr1"

// levels maps the level names clients use to go-qrcode's recovery levels.
var levels = map[string]qrcode.RecoveryLevel{
	"L": qrcode.Low,     // 7 % of the code can be restored
	"M": qrcode.Medium,  // 15 %
	"Q": qrcode.High,    // 25 %
	"H": qrcode.Highest, // 30 %
}

// Bitmap returns the module matrix of content encoded at the given
// error-correction level, without any quiet zone: bitmap[y][x] is true where
// the module is dark. It returns EINVALID for an unknown level, empty content
// or content too long for any QR code at that level.
func Bitmap(content, level string) ([][]bool, error) {
	level = strings.ToUpper(strings.TrimSpace(level))
	lvl, ok := levels[level]
	if !ok {
		return nil, invalid([]link.FieldError{{Field: "level", Message: "must be one of L, M, Q, H"}})
	}
	if content == "" {
		return nil, link.Errorf(link.EINVALID, "nothing to encode in a QR code")
	}
	code, err := qrcode.New(content, lvl)
	if err != nil {
		return nil, link.Errorf(link.EINVALID, "content too long for a QR code at level %s", level)
	}
	code.DisableBorder = true
	// go-qrcode appends terminator bits on every call to Bitmap, so a
	// QRCode value must be asked for its bitmap only once.
	return code.Bitmap(), nil
}

// Render draws content as a QR code with the given options, which it
// normalizes and validates first. It returns the image, its content type
// ("image/png" or "image/svg+xml") and EINVALID for bad options, for content
// that does not fit a QR code, or when Size leaves less than one pixel per
// module (see MinSizeFor).
//
// A PNG is exactly Size×Size pixels with two palette colours. Each module is
// a square block of Size/n whole pixels, n being the modules across including
// the quiet zone, and the code is centred: the pixels left over (fewer than n)
// widen the quiet zone, so that no module is drawn wider than another.
// An SVG has the same geometry in module units and scales exactly.
func Render(content string, o Options) (data []byte, contentType string, err error) {
	o.Normalize()
	if err := o.Validate(); err != nil {
		return nil, "", err
	}
	bitmap, err := Bitmap(content, o.Level)
	if err != nil {
		return nil, "", err
	}
	if n := len(bitmap) + 2*o.Margin; o.Size < n {
		e := link.Errorf(link.EINVALID,
			"size too small for this content at this level: the code is %d modules across with its margin and needs at least %d px", n, n)
		e.Fields = []link.FieldError{{Field: "size", Message: fmt.Sprintf("must be at least %d for this content at level %s with margin %d", n, o.Level, o.Margin)}}
		return nil, "", e
	}

	switch o.Format {
	case FormatSVG:
		return renderSVG(bitmap, o), ContentTypeSVG, nil
	default:
		data, err := renderPNG(bitmap, o)
		if err != nil {
			return nil, "", fmt.Errorf("encode qr png: %w", err)
		}
		return data, ContentTypePNG, nil
	}
}

// MinSizeFor returns the smallest Size in pixels that Render accepts for
// content at the level and margin of o: one pixel per module, quiet zone
// included. Below that modules would blur into each other and the code could
// not be read, so Render refuses rather than draw it.
func MinSizeFor(content string, o Options) (int, error) {
	o.Normalize()
	bitmap, err := Bitmap(content, o.Level)
	if err != nil {
		return 0, err
	}
	return len(bitmap) + 2*o.Margin, nil
}

// ETag returns a strong entity tag for the rendering of content with o: a
// quoted hex digest of the content and the normalized options. It changes
// when the content (the short URL) or any option changes, and is the same for
// options that normalize alike ("FFF" and "#ffffff").
func ETag(content string, o Options) string {
	o.Normalize()
	h := sha256.New()
	// Length-prefixed fields, so no two inputs run together into one.
	fmt.Fprintf(h, "%s\n%d:%s\n%s\n%d\n%d\n%s\n%s\n%s\n",
		renderVersion, len(content), content, o.Format, o.Size, o.Margin, o.Level, o.Foreground, o.Background)
	return `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// renderPNG draws the bitmap into a two-colour paletted image of o.Size
// pixels square, which image/png writes with one bit per pixel.
func renderPNG(bitmap [][]bool, o Options) ([]byte, error) {
	n := len(bitmap) + 2*o.Margin
	scale := o.Size / n
	offset := (o.Size - scale*n) / 2

	palette := color.Palette{parseColor(o.Background), parseColor(o.Foreground)}
	img := image.NewPaletted(image.Rect(0, 0, o.Size, o.Size), palette)
	// Index 0 is the background, so the zeroed image is all quiet zone;
	// only the code's own rows need drawing, each once and then copied.
	for y, row := range bitmap {
		top := offset + (o.Margin+y)*scale
		line := img.Pix[top*img.Stride : top*img.Stride+o.Size]
		for x, dark := range row {
			if dark {
				left := offset + (o.Margin+x)*scale
				for i := left; i < left+scale; i++ {
					line[i] = 1
				}
			}
		}
		for dy := 1; dy < scale; dy++ {
			copy(img.Pix[(top+dy)*img.Stride:], line)
		}
	}

	var buf bytes.Buffer
	if err := pngEncoder.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pngEncoder reuses the compressor's buffers between images: allocating
// them anew is most of the garbage a rendering makes.
var pngEncoder = png.Encoder{BufferPool: new(encoderBufferPool)}

// encoderBufferPool is a png.EncoderBufferPool safe for concurrent use.
type encoderBufferPool struct{ pool sync.Pool }

func (p *encoderBufferPool) Get() *png.EncoderBuffer {
	b, _ := p.pool.Get().(*png.EncoderBuffer)
	return b
}

func (p *encoderBufferPool) Put(b *png.EncoderBuffer) { p.pool.Put(b) }

// renderSVG draws the bitmap as a background rectangle and one path, in
// module units, with the quiet zone in the viewBox. Each horizontal run of
// dark modules is one closed sub-path "M x y h w v1 h-w z".
func renderSVG(bitmap [][]bool, o Options) []byte {
	n := len(bitmap) + 2*o.Margin
	var b bytes.Buffer
	b.Grow(512 + 16*n*n/4)
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" shape-rendering="crispEdges">`+
		`<rect width="%d" height="%d" fill="%s"/><path fill="%s" d="`,
		o.Size, o.Size, n, n, n, n, o.Background, o.Foreground)
	num := make([]byte, 0, 20)
	for y, row := range bitmap {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			start := x
			for x < len(row) && row[x] {
				x++
			}
			w := x - start
			b.WriteByte('M')
			b.Write(strconv.AppendInt(num[:0], int64(start+o.Margin), 10))
			b.WriteByte(' ')
			b.Write(strconv.AppendInt(num[:0], int64(y+o.Margin), 10))
			b.WriteByte('h')
			b.Write(strconv.AppendInt(num[:0], int64(w), 10))
			b.WriteString("v1h-")
			b.Write(strconv.AppendInt(num[:0], int64(w), 10))
			b.WriteByte('z')
		}
	}
	b.WriteString(`"/></svg>` + "\n")
	return b.Bytes()
}

// parseColor turns a validated "#rrggbb" into an opaque colour.
func parseColor(s string) color.RGBA {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}
