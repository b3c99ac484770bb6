package qr

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"slices"
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
const renderVersion = "qr2"

// logoRenderVersion is part of the ETag of codes with a logo only, so that a
// change to how logos are drawn leaves the others' ETags alone.
const logoRenderVersion = "logo1"

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

// logoBitmap returns the module matrix of content at level H, at least
// version minLogoVersion, with the logo pad cleared, and the pad's first
// module and side.
func logoBitmap(content string) (bitmap [][]bool, start, side int, err error) {
	if content == "" {
		return nil, 0, 0, link.Errorf(link.EINVALID, "nothing to encode in a QR code")
	}
	code, err := qrcode.New(content, levels[LogoLevel])
	if err != nil {
		return nil, 0, 0, link.Errorf(link.EINVALID, "content too long for a QR code with a logo (level %s)", LogoLevel)
	}
	if code.VersionNumber < minLogoVersion {
		if code, err = qrcode.NewWithForcedVersion(content, minLogoVersion, levels[LogoLevel]); err != nil {
			return nil, 0, 0, fmt.Errorf("qr code of version %d: %w", minLogoVersion, err)
		}
	}
	code.DisableBorder = true
	bitmap = code.Bitmap()
	start, side = ClearLogoPad(bitmap)
	return bitmap, start, side, nil
}

// Render draws content as a QR code with the given options, which it
// normalizes and validates first. It returns the image, its content type
// ("image/png" or "image/svg+xml") and EINVALID for bad options, for content
// that does not fit a QR code, or when Size leaves less than one pixel per
// module: below that, modules would blur into each other and the code could
// not be read, so Render refuses rather than draw it.
//
// A PNG is exactly Size×Size pixels with two palette colours. Each module is
// a square block of Size/n whole pixels, n being the modules across including
// the quiet zone, and the code is centred: the pixels left over (fewer than n)
// widen the quiet zone, so that no module is drawn wider than another.
// An SVG has the same geometry in module units and scales exactly.
//
// With a Logo, the code is encoded at level H (whatever Level says) and at
// least version 4, the modules under the logo pad (see LogoPadModules) are
// left light, and the logo is drawn in the pad: scaled into the PNG, which
// is then in full colour, or embedded in the SVG as a data: URI <image>.
func Render(content string, o Options) (data []byte, contentType string, err error) {
	o.Normalize()
	if err := o.Validate(); err != nil {
		return nil, "", err
	}
	var logo image.Image
	var padStart, padSide int
	var bitmap [][]bool
	if len(o.Logo) > 0 {
		o.Level = LogoLevel
		if logo, err = png.Decode(bytes.NewReader(o.Logo)); err != nil {
			return nil, "", fmt.Errorf("decode qr logo: %w", err)
		}
		bitmap, padStart, padSide, err = logoBitmap(content)
	} else {
		bitmap, err = Bitmap(content, o.Level)
	}
	if err != nil {
		return nil, "", err
	}
	if n := len(bitmap) + 2*o.Margin; o.Size < n {
		e := link.Errorf(link.EINVALID,
			"size too small for this content at this level: the code is %d modules across with its margin and needs at least %d px", n, n)
		e.Fields = []link.FieldError{{Field: "size", Message: fmt.Sprintf("must be at least %d for this content at level %s with margin %d", n, o.Level, o.Margin)}}
		return nil, "", e
	}

	switch {
	case o.Format == FormatSVG && logo != nil:
		return renderLogoSVG(bitmap, o, padStart, padSide, logo.Bounds()), ContentTypeSVG, nil
	case o.Format == FormatSVG:
		return renderSVG(bitmap, o), ContentTypeSVG, nil
	case logo != nil:
		data, err := renderLogoPNG(bitmap, o, padStart, padSide, logo)
		if err != nil {
			return nil, "", fmt.Errorf("encode qr png: %w", err)
		}
		return data, ContentTypePNG, nil
	default:
		data, err := renderPNG(bitmap, o)
		if err != nil {
			return nil, "", fmt.Errorf("encode qr png: %w", err)
		}
		return data, ContentTypePNG, nil
	}
}

// ETag returns a strong entity tag for the rendering of content with o: a
// quoted hex digest of the content and the normalized options. It changes
// when the content (the short URL) or any option changes, and is the same for
// options that normalize alike ("FFF" and "#ffffff"). A logo is part of
// it: another logo, or none, is another image.
func ETag(content string, o Options) string {
	o.Normalize()
	if len(o.Logo) > 0 {
		o.Level = LogoLevel // what Render draws, whatever was asked
	}
	h := sha256.New()
	// Length-prefixed fields, so no two inputs run together into one.
	fmt.Fprintf(h, "%s\n%d:%s\n%s\n%d\n%d\n%s\n%s\n%s\n",
		renderVersion, len(content), content, o.Format, o.Size, o.Margin, o.Level, o.Foreground, o.Background)
	if len(o.Logo) > 0 {
		fmt.Fprintf(h, "logo %s %x\n", logoRenderVersion, sha256.Sum256(o.Logo))
	}
	return `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// renderPNG writes the bitmap as a PNG of o.Size pixels square with a
// two-colour palette and one bit per pixel (what image/png writes for such
// an image, pixel for pixel). It encodes by hand rather than through
// image/png, which reads every pixel through an interface call: at 2048 px
// that was 90 % of a rendering's 17 ms, and its 4 MB image was garbage the
// collector then had to chase while redirects waited. Here each module row
// is packed into bits once, and nothing proportional to the pixel count is
// allocated.
func renderPNG(bitmap [][]bool, o Options) ([]byte, error) {
	n := len(bitmap) + 2*o.Margin
	scale := o.Size / n
	offset := (o.Size - scale*n) / 2 // pixels before the first module
	top := offset + o.Margin*scale   // first pixel row of the code

	e := pngEncoders.Get().(*pngEncoder)
	defer pngEncoders.Put(e)
	e.idat.Reset()
	e.zw.Reset(&e.idat)

	// A row is a filter byte and the row's bits, most significant first.
	// The first pixel row of a module row is written as it is (filter 0,
	// none); the scale-1 rows repeating it as "same as the row above"
	// (filter 2, up, all zero bytes), as are the quiet zone's blank rows.
	// zlib then meets long runs of zeros, which its fastest level packs
	// well: a 2048 px image takes under 1 ms and about 6 KB (repeating the
	// rows at the default level took twice the time for 3 KB; the default
	// level on the zeros, five times).
	rowLen := 1 + (o.Size+7)/8
	e.same = slices.Grow(e.same[:0], rowLen)[:rowLen]
	clear(e.same)
	e.same[0] = 2
	e.row = slices.Grow(e.row[:0], rowLen)[:rowLen]
	// emit writes count pixel rows of the same content, row.
	emit := func(row []byte, count int) error {
		for i := range count {
			if i == 1 {
				row = e.same
			}
			if _, err := e.zw.Write(row); err != nil {
				return err
			}
		}
		return nil
	}
	clear(e.row) // the quiet zone above
	if err := emit(e.row, top); err != nil {
		return nil, err
	}
	for _, modules := range bitmap {
		clear(e.row)
		for x, dark := range modules {
			if dark {
				left := offset + (o.Margin+x)*scale
				for i := left; i < left+scale; i++ {
					e.row[1+i/8] |= 0x80 >> (i % 8)
				}
			}
		}
		if err := emit(e.row, scale); err != nil {
			return nil, err
		}
	}
	clear(e.row) // the quiet zone below
	if err := emit(e.row, o.Size-top-len(bitmap)*scale); err != nil {
		return nil, err
	}
	if err := e.zw.Close(); err != nil {
		return nil, err
	}

	bg, fg := parseColor(o.Background), parseColor(o.Foreground)
	out := make([]byte, 0, len(pngSignature)+3*12+13+6+e.idat.Len())
	out = append(out, pngSignature...)
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(o.Size))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(o.Size))
	ihdr[8], ihdr[9] = 1, 3 // bit depth 1, colour type 3 (palette); then compression, filter, interlace 0
	out = appendChunk(out, "IHDR", ihdr[:])
	out = appendChunk(out, "PLTE", []byte{bg.R, bg.G, bg.B, fg.R, fg.G, fg.B})
	out = appendChunk(out, "IDAT", e.idat.Bytes())
	out = appendChunk(out, "IEND", nil)
	return out, nil
}

const pngSignature = "\x89PNG\r\n\x1a\n"

// appendChunk appends a PNG chunk: length, type, data and the CRC-32 of
// type and data.
func appendChunk(b []byte, typ string, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	start := len(b)
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
}

// pngEncoder holds what renderPNG reuses between images: the compressor's
// state (allocating it anew is most of the garbage a rendering would make),
// the compressed data and two packed rows.
type pngEncoder struct {
	zw        *zlib.Writer
	idat      bytes.Buffer
	same, row []byte
}

var pngEncoders = sync.Pool{New: func() any {
	e := new(pngEncoder)
	e.zw, _ = zlib.NewWriterLevel(&e.idat, zlib.BestSpeed) // a valid level never fails
	return e
}}

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

// renderLogoPNG draws the bitmap, whose logo pad is cleared, as renderPNG
// does (the same module geometry) but in full colour, and the logo scaled
// into the pad. It goes through image/png: a code with a logo is rarer and
// its logo's pixels need more than two colours anyway.
func renderLogoPNG(bitmap [][]bool, o Options, padStart, padSide int, logo image.Image) ([]byte, error) {
	n := len(bitmap) + 2*o.Margin
	scale := o.Size / n
	offset := (o.Size - scale*n) / 2
	bg, fg := parseColor(o.Background), parseColor(o.Foreground)
	img := image.NewRGBA(image.Rect(0, 0, o.Size, o.Size))
	draw.Draw(img, img.Bounds(), image.NewUniform(bg), image.Point{}, draw.Src)
	dark := image.NewUniform(fg)
	for y, modules := range bitmap {
		top := offset + (o.Margin+y)*scale
		for x := 0; x < len(modules); {
			if !modules[x] {
				x++
				continue
			}
			start := x
			for x < len(modules) && modules[x] {
				x++
			}
			left := offset + (o.Margin+start)*scale
			draw.Draw(img, image.Rect(left, top, left+(x-start)*scale, top+scale), dark, image.Point{}, draw.Src)
		}
	}
	padPx := float64(offset + (o.Margin+padStart)*scale)
	lb := logo.Bounds()
	x, y, w, h := logoBox(padPx, float64(padSide*scale), float64(scale), lb.Dx(), lb.Dy())
	r := image.Rect(int(math.Round(x)), int(math.Round(y)), int(math.Round(x+w)), int(math.Round(y+h)))
	if !r.Empty() {
		scaled := image.NewNRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
		scaleInto(scaled, scaled.Bounds(), logo)
		draw.Draw(img, r, scaled, image.Point{}, draw.Over)
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// renderLogoSVG draws the bitmap, whose logo pad is cleared, as renderSVG
// does, and the logo as an <image> whose href is a data: URI of its PNG,
// in the pad. The pad needs no drawing: the background shows through it.
func renderLogoSVG(bitmap [][]bool, o Options, padStart, padSide int, lb image.Rectangle) []byte {
	svg := renderSVG(bitmap, o)
	x, y, w, h := logoBox(float64(padStart+o.Margin), float64(padSide), 1, lb.Dx(), lb.Dy())
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	var img bytes.Buffer
	img.Grow(128 + base64.StdEncoding.EncodedLen(len(o.Logo)))
	fmt.Fprintf(&img, `<image x="%s" y="%s" width="%s" height="%s" preserveAspectRatio="xMidYMid meet" shape-rendering="auto" href="data:image/png;base64,`,
		num(x), num(y), num(w), num(h))
	enc := base64.NewEncoder(base64.StdEncoding, &img)
	_, _ = enc.Write(o.Logo)
	_ = enc.Close()
	img.WriteString(`"/>`)
	end := bytes.LastIndex(svg, []byte("</svg>"))
	out := make([]byte, 0, len(svg)+img.Len())
	out = append(out, svg[:end]...)
	out = append(out, img.Bytes()...)
	return append(out, svg[end:]...)
}

// parseColor turns a validated "#rrggbb" into an opaque colour.
func parseColor(s string) color.RGBA {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}
