package qr

import (
	"bytes"
	"fmt"
	"image"
	_ "image/jpeg" // logos may be uploaded as JPEG
	"image/png"
	"math"

	"github.com/linkbolt/linkbolt/link"
)

// A logo is drawn over the centre of a QR code, on a quiet pad of the
// background colour that hides the modules beneath it. The decoder restores
// those modules from the error-correction codewords, so a code with a logo
// is always encoded at the highest level, and the pad covers at most
// MaxLogoShare of the code's area (a logo about a third of the code wide).
// Level H restores about 30 % of the codewords, but a square pad cuts
// through many codewords partly and does not spread evenly over the
// blocks: a real decoder reads every version from 4 to 18 back with a pad
// of 10 % and fails some with 16 % or 20 %; the margin left is for wear,
// glare and print.
const (
	LogoLevel    = "H"
	MaxLogoShare = 0.10
)

// LogoPadModules returns the side, in modules, of the square pad a logo
// sits on in a code n modules across (without quiet zone): the largest side
// of the same parity as n, so that the pad is centred on whole modules,
// whose area is at most MaxLogoShare of n×n. It returns 0 when no pad fits.
func LogoPadModules(n int) int {
	s := int(math.Floor(math.Sqrt(MaxLogoShare * float64(n*n))))
	if s%2 != n%2 {
		s--
	}
	if s < 1 {
		return 0
	}
	return s
}

// ClearLogoPad sets the modules under the logo pad of bitmap to light, as
// drawing the pad does, and returns the pad's first module and side.
func ClearLogoPad(bitmap [][]bool) (start, side int) {
	n := len(bitmap)
	side = LogoPadModules(n)
	start = (n - side) / 2
	for y := start; y < start+side; y++ {
		for x := start; x < start+side; x++ {
			bitmap[y][x] = false
		}
	}
	return start, side
}

// Bounds of an uploaded logo. The file is at most MaxLogoBytes; its header
// may announce at most MaxLogoPixels pixels a side (checked before any pixel
// is decoded, so a small file that inflates to gigabytes is refused unread);
// what is kept is re-encoded as a PNG of at most LogoKeptPixels a side,
// enough for the pad of the largest code (under √0.1 × 2048 ≈ 648 px
// with no quiet zone, about 520 px with the standard one) and at most
// about 1 MB however noisy the image.
const (
	MaxLogoBytes   = 256 << 10
	MaxLogoPixels  = 2048
	LogoKeptPixels = 512
)

// Content types a logo may be uploaded as.
const (
	LogoTypePNG  = "image/png"
	LogoTypeJPEG = "image/jpeg"
)

// minLogoVersion is the smallest QR version drawn under a logo. Below it
// the pad covers more codewords than level H restores (version 1 has 17
// correction codewords for 26 in all; a pad of 9×9 modules hides about
// 10), so a short URL is drawn at version 4 rather than at the smallest
// version it fits.
const minLogoVersion = 4

// PrepareLogo checks an uploaded image and returns it re-encoded as a PNG,
// so that none of the uploaded bytes is ever served back: what was a PNG or
// a JPEG comes out as pixels the encoder wrote. An image larger than
// LogoKeptPixels a side is scaled down to it. Errors are link errors:
// EINVALIDREQUEST for bytes that are not a PNG or JPEG image, EINVALID for
// an image whose header announces more than MaxLogoPixels a side or nothing
// to draw.
func PrepareLogo(data []byte) ([]byte, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || (format != "png" && format != "jpeg") {
		return nil, link.Errorf(link.EINVALIDREQUEST, "the logo is not a PNG or JPEG image")
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxLogoPixels || cfg.Height > MaxLogoPixels {
		e := link.Errorf(link.EINVALID, "the logo is %d×%d pixels: at most %d a side", cfg.Width, cfg.Height, MaxLogoPixels)
		e.Fields = []link.FieldError{{Field: "logo", Message: fmt.Sprintf("must be at most %d×%d pixels", MaxLogoPixels, MaxLogoPixels)}}
		return nil, e
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, link.Errorf(link.EINVALIDREQUEST, "the logo could not be decoded: %v", err)
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w > LogoKeptPixels || h > LogoKeptPixels {
		w, h = fit(w, h, LogoKeptPixels, LogoKeptPixels)
	}
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	scaleInto(out, out.Bounds(), img)
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, out); err != nil {
		return nil, fmt.Errorf("encode logo: %w", err)
	}
	return buf.Bytes(), nil
}

// fit returns the largest size of the aspect ratio of w×h within maxW×maxH,
// at least 1×1.
func fit(w, h, maxW, maxH int) (int, int) {
	if w*maxH > h*maxW { // wider than the box
		return maxW, max(1, h*maxW/w)
	}
	return max(1, w*maxH/h), maxH
}

// scaleInto draws src scaled to fill r of dst. Each destination pixel
// averages the source pixels it covers (a box filter, which does not alias
// when shrinking) or, when enlarging, interpolates the four nearest
// (bilinear). Colours are averaged premultiplied by their alpha, so the
// colour of transparent pixels does not bleed into the edges of a logo.
func scaleInto(dst *image.NRGBA, r image.Rectangle, src image.Image) {
	sb := src.Bounds()
	sw, sh := sb.Dx(), sb.Dy()
	dw, dh := r.Dx(), r.Dy()
	if sw == 0 || sh == 0 || dw == 0 || dh == 0 {
		return
	}
	at := func(x, y int) [4]uint32 {
		cr, cg, cb, ca := src.At(sb.Min.X+x, sb.Min.Y+y).RGBA()
		return [4]uint32{cr, cg, cb, ca}
	}
	put := func(x, y int, c [4]float64) {
		i := dst.PixOffset(r.Min.X+x, r.Min.Y+y)
		a := c[3]
		if a <= 0 {
			dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2], dst.Pix[i+3] = 0, 0, 0, 0
			return
		}
		un := func(v float64) uint8 { return uint8(math.Min(255, math.Round(v/a*255))) }
		dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2], dst.Pix[i+3] = un(c[0]), un(c[1]), un(c[2]), uint8(math.Round(a/0xffff*255))
	}
	sx, sy := float64(sw)/float64(dw), float64(sh)/float64(dh)
	for y := 0; y < dh; y++ {
		for x := 0; x < dw; x++ {
			var c [4]float64
			if sx > 1 || sy > 1 {
				// Box: the source pixels under [x, x+1) × [y, y+1), whole.
				x0, x1 := int(float64(x)*sx), max(int(float64(x)*sx)+1, int(math.Ceil(float64(x+1)*sx)))
				y0, y1 := int(float64(y)*sy), max(int(float64(y)*sy)+1, int(math.Ceil(float64(y+1)*sy)))
				x1, y1 = min(x1, sw), min(y1, sh)
				n := float64((x1 - x0) * (y1 - y0))
				for yy := y0; yy < y1; yy++ {
					for xx := x0; xx < x1; xx++ {
						p := at(xx, yy)
						for k := range c {
							c[k] += float64(p[k])
						}
					}
				}
				for k := range c {
					c[k] /= n
				}
			} else {
				// Bilinear, with pixel centres at half-integers.
				fx := math.Max(0, (float64(x)+0.5)*sx-0.5)
				fy := math.Max(0, (float64(y)+0.5)*sy-0.5)
				x0, y0 := int(fx), int(fy)
				x1, y1 := min(x0+1, sw-1), min(y0+1, sh-1)
				ax, ay := fx-float64(x0), fy-float64(y0)
				p00, p10, p01, p11 := at(x0, y0), at(x1, y0), at(x0, y1), at(x1, y1)
				for k := range c {
					top := float64(p00[k])*(1-ax) + float64(p10[k])*ax
					bot := float64(p01[k])*(1-ax) + float64(p11[k])*ax
					c[k] = top*(1-ay) + bot*ay
				}
			}
			put(x, y, c)
		}
	}
}

// logoBox returns the square of the pad, in pixels, and the rectangle the
// logo is drawn in: the pad less half a module on each side, so that a
// light border always parts the logo from the modules around it, and the
// logo's aspect ratio kept and centred.
func logoBox(padX, padSide, module float64, w, h int) (x, y, bw, bh float64) {
	inner := padSide - module
	if w >= h {
		bw, bh = inner, inner*float64(h)/float64(w)
	} else {
		bw, bh = inner*float64(w)/float64(h), inner
	}
	return padX + (padSide-bw)/2, padX + (padSide-bh)/2, bw, bh
}
