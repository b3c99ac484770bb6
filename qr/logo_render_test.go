package qr_test

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	gozxingqr "github.com/makiuchi-d/gozxing/qrcode"
	qrcode "github.com/skip2/go-qrcode"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/qr"
)

// testLogo draws a w×h logo: an opaque crimson disc on a transparent
// ground, with a dark navy bar across it, the kind of mark a brand uploads.
func testLogo(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	cx, cy, r := float64(w)/2, float64(h)/2, math.Min(float64(w), float64(h))/2
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			dx, dy := float64(x)+0.5-cx, float64(y)+0.5-cy
			switch {
			case math.Abs(dy) < r/6 && math.Abs(dx) < r:
				img.SetNRGBA(x, y, color.NRGBA{R: 0x1a, G: 0x23, B: 0x7e, A: 0xff})
			case dx*dx+dy*dy < r*r:
				img.SetNRGBA(x, y, color.NRGBA{R: 0xdc, G: 0x14, B: 0x3c, A: 0xff})
			}
		}
	}
	return img
}

func encodePNG(tb testing.TB, img image.Image) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func prepared(tb testing.TB, w, h int) []byte {
	tb.Helper()
	logo, err := qr.PrepareLogo(encodePNG(tb, testLogo(w, h)))
	if err != nil {
		tb.Fatal(err)
	}
	return logo
}

// TestRenderLogoPNG_Decodes renders codes with a logo, from the shortest
// URL (drawn at version 4) to a long one, at sizes from the smallest the
// code allows to the largest, with and without quiet zone, and reads each
// back with a real decoder. The centre of the image is the logo's.
func TestRenderLogoPNG_Decodes(t *testing.T) {
	logo := prepared(t, 300, 200)
	contents := []string{"https://x.io/a", shortURL, customURL, longURL,
		"https://lb.example/" + strings.Repeat("y", 300)}
	for _, content := range contents {
		for _, size := range []int{0, 128, 333, 512, 1024, 2048} { // 0: the smallest that fits
			for _, margin := range []int{4, 0} {
				o := qr.Options{Format: "png", Size: size, Margin: margin, Level: "L", Foreground: "#0b3d2e", Background: "#fdf6e3", Logo: logo}
				name := fmt.Sprintf("%.24s/%d/m%d", strings.TrimPrefix(content, "http"), size, margin)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					bm, start, side := wantLogoBitmap(t, content)
					n := len(bm) + 2*margin
					if o.Size == 0 {
						o.Size = max(qr.MinSize, n)
					}
					data, ct, err := qr.Render(content, o)
					if o.Size < n {
						// The size rule holds under a logo too.
						if link.ErrorCode(err) != link.EINVALID {
							t.Fatalf("%d px for a code of %d modules: err = %v, want EINVALID", o.Size, n, err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if ct != "image/png" {
						t.Fatalf("content type %q", ct)
					}
					img, err := png.Decode(bytes.NewReader(data))
					if err != nil {
						t.Fatal(err)
					}
					if b := img.Bounds(); b.Dx() != o.Size || b.Dy() != o.Size {
						t.Fatalf("image is %v, want %d px square", b, o.Size)
					}
					if got := readQRImage(t, img, margin, o.Background); got != content {
						t.Fatalf("decoded %q, want %q", got, content)
					}
					// Every module outside the pad is drawn as the bitmap
					// at level H says; inside it, the pad's and logo's
					// pixels only.
					scale := o.Size / n
					offset := (o.Size - scale*n) / 2
					fg, bg := parseHex(o.Foreground), parseHex(o.Background)
					for y, row := range bm {
						for x, dark := range row {
							inPad := y >= start && y < start+side && x >= start && x < start+side
							c := img.At(offset+(margin+x)*scale+scale/2, offset+(margin+y)*scale+scale/2)
							switch {
							case !inPad && dark && !sameColour(c, fg):
								t.Fatalf("module (%d,%d) is %v, want the foreground", x, y, c)
							case !inPad && !dark && !sameColour(c, bg):
								t.Fatalf("module (%d,%d) is %v, want the background", x, y, c)
							case inPad && dark:
								t.Fatalf("module (%d,%d) in the pad is dark in the bitmap", x, y)
							}
						}
					}
					// The pad's edge modules are background (the logo
					// keeps half a module off), its centre the logo's navy bar.
					corner := img.At(offset+(margin+start)*scale, offset+(margin+start)*scale)
					if !sameColour(corner, bg) {
						t.Errorf("pad corner is %v, want the background", corner)
					}
					if scale >= 2 {
						mid := img.At(o.Size/2, o.Size/2)
						if r, g, b, _ := mid.RGBA(); r>>8 > 0x40 || b>>8 < 0x50 || g>>8 > 0x50 {
							t.Errorf("centre pixel is %v, want the logo's navy", mid)
						}
					}
				})
			}
		}
	}
}

// TestRenderLogoSVG draws codes with a logo as SVG: the modules of the
// level-H bitmap with the pad cleared, which a real decoder reads, and one
// <image> inside the pad whose data: URI holds the logo's PNG itself.
func TestRenderLogoSVG(t *testing.T) {
	logo := prepared(t, 120, 240)
	for _, content := range []string{"https://x.io/a", shortURL, longURL} {
		for _, margin := range []int{0, 4} {
			t.Run(fmt.Sprintf("%.24s/m%d", strings.TrimPrefix(content, "http"), margin), func(t *testing.T) {
				o := qr.Options{Format: "svg", Size: 400, Margin: margin, Level: "M", Foreground: "#000000", Background: "#ffffff", Logo: logo}
				data, ct, err := qr.Render(content, o)
				if err != nil {
					t.Fatal(err)
				}
				if ct != "image/svg+xml" {
					t.Fatalf("content type %q", ct)
				}
				doc := parseSVG(t, data)
				bm, start, side := wantLogoBitmap(t, content)
				n := len(bm) + 2*margin
				if got, want := doc.ViewBox, fmt.Sprintf("0 0 %d %d", n, n); got != want {
					t.Fatalf("viewBox = %q, want %q", got, want)
				}
				if len(doc.Paths) != 1 {
					t.Fatalf("%d paths, want 1", len(doc.Paths))
				}
				grid := rasterisePath(t, doc.Paths[0].D, n)
				for y := 0; y < n; y++ {
					for x := 0; x < n; x++ {
						want := y >= margin && y < n-margin && x >= margin && x < n-margin && bm[y-margin][x-margin]
						if grid[y][x] != want {
							t.Fatalf("module (%d,%d): path dark=%v, want %v", x, y, grid[y][x], want)
						}
					}
				}
				// What the paths draw is a code a decoder reads.
				const px = 8
				img := image.NewPaletted(image.Rect(0, 0, n*px, n*px), color.Palette{color.White, color.Black})
				for y := range grid {
					for x, dark := range grid[y] {
						if dark {
							for i := 0; i < px*px; i++ {
								img.SetColorIndex(x*px+i%px, y*px+i/px, 1)
							}
						}
					}
				}
				if got := readQR(t, img, margin, "#ffffff"); got != content {
					t.Fatalf("decoded %q, want %q", got, content)
				}

				imgs := svgImages(t, data)
				if len(imgs) != 1 {
					t.Fatalf("%d <image> elements, want 1", len(imgs))
				}
				im := imgs[0]
				const prefix = "data:image/png;base64,"
				if !strings.HasPrefix(im.Href, prefix) {
					t.Fatalf("href = %.40q, want a data: URI of a PNG", im.Href)
				}
				raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(im.Href, prefix))
				if err != nil || !bytes.Equal(raw, logo) {
					t.Fatalf("the data: URI does not hold the logo (%v)", err)
				}
				x, y, w, h := num(t, im.X), num(t, im.Y), num(t, im.Width), num(t, im.Height)
				lo, hi := float64(start+margin)+0.5, float64(start+margin+side)-0.5
				const eps = 1e-9
				if x < lo-eps || y < lo-eps || x+w > hi+eps || y+h > hi+eps {
					t.Fatalf("image at %v,%v %v×%v leaves the pad [%v, %v]", x, y, w, h, lo, hi)
				}
				if math.Abs(h-(hi-lo)) > eps || math.Abs(w-h/2) > eps {
					t.Fatalf("image %v×%v: want the 1:2 logo as tall as the pad's inside, %v", w, h, hi-lo)
				}
			})
		}
	}
}

func TestLogoETag(t *testing.T) {
	o := qr.Options{Format: "png", Size: 512, Margin: 4, Level: "M", Foreground: "#000000", Background: "#ffffff"}
	plain := qr.ETag(shortURL, o)
	withA, withB := o, o
	withA.Logo, withB.Logo = prepared(t, 64, 64), prepared(t, 64, 32)
	a, b := qr.ETag(shortURL, withA), qr.ETag(shortURL, withB)
	if a == plain || b == plain || a == b {
		t.Fatalf("ETags without logo, with A, with B: %s %s %s; want three", plain, a, b)
	}
	// The level does not matter under a logo: it is always H.
	withA.Level = "L"
	if got := qr.ETag(shortURL, withA); got != a {
		t.Errorf("ETag with a logo at level L = %s, want %s (drawn at H either way)", got, a)
	}
	dataL, _, err := qr.Render(shortURL, withA)
	if err != nil {
		t.Fatal(err)
	}
	withA.Level = "H"
	dataH, _, _ := qr.Render(shortURL, withA)
	if !bytes.Equal(dataL, dataH) {
		t.Error("a code with a logo asked at level L differs from one at H")
	}
}

func TestPrepareLogo(t *testing.T) {
	t.Run("PNG kept at its size, re-encoded", func(t *testing.T) {
		in := encodePNG(t, testLogo(200, 100))
		out, err := qr.PrepareLogo(in)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 200 || b.Dy() != 100 {
			t.Fatalf("kept %v, want 200×100", b)
		}
		if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
			t.Error("the transparent corner became opaque")
		}
		if !sameColour(img.At(100, 50), color.NRGBA{R: 0x1a, G: 0x23, B: 0x7e, A: 0xff}) {
			t.Errorf("centre = %v, want the navy bar", img.At(100, 50))
		}
	})
	t.Run("trailing bytes are not served back", func(t *testing.T) {
		in := append(encodePNG(t, testLogo(40, 40)), []byte("<script>alert(1)</script>")...)
		out, err := qr.PrepareLogo(in)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(out, []byte("<script>")) {
			t.Fatal("the re-encoded logo keeps the bytes after the image")
		}
	})
	t.Run("JPEG becomes PNG", func(t *testing.T) {
		var b bytes.Buffer
		if err := jpeg.Encode(&b, testLogo(64, 64), &jpeg.Options{Quality: 90}); err != nil {
			t.Fatal(err)
		}
		out, err := qr.PrepareLogo(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if _, format, err := image.DecodeConfig(bytes.NewReader(out)); err != nil || format != "png" {
			t.Fatalf("format %q, %v; want png", format, err)
		}
	})
	t.Run("large scaled down", func(t *testing.T) {
		out, err := qr.PrepareLogo(encodePNG(t, testLogo(2000, 500)))
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(out))
		if err != nil || cfg.Width != qr.LogoKeptPixels || cfg.Height != qr.LogoKeptPixels/4 {
			t.Fatalf("kept %d×%d (%v), want %d×%d", cfg.Width, cfg.Height, err, qr.LogoKeptPixels, qr.LogoKeptPixels/4)
		}
	})
	t.Run("refused", func(t *testing.T) {
		var gifData bytes.Buffer
		if err := gif.Encode(&gifData, testLogo(16, 16), nil); err != nil {
			t.Fatal(err)
		}
		// A header announcing 3000×1 pixels: a file of a few hundred bytes.
		wide := encodePNG(t, image.NewGray(image.Rect(0, 0, qr.MaxLogoPixels+1, 1)))
		truncated := encodePNG(t, testLogo(64, 64))
		truncated = truncated[:len(truncated)/2]
		for _, tt := range []struct {
			name string
			data []byte
			code string
		}{
			{"text", []byte("not an image at all"), link.EINVALIDREQUEST},
			{"empty", nil, link.EINVALIDREQUEST},
			{"SVG", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), link.EINVALIDREQUEST},
			{"GIF", gifData.Bytes(), link.EINVALIDREQUEST},
			{"truncated PNG", truncated, link.EINVALIDREQUEST},
			{"too wide", wide, link.EINVALID},
		} {
			if _, err := qr.PrepareLogo(tt.data); link.ErrorCode(err) != tt.code {
				t.Errorf("%s: PrepareLogo = %v, want %s", tt.name, err, tt.code)
			}
		}
	})
}

// wantLogoBitmap returns the bitmap a code with a logo is drawn from, its
// pad cleared, and the pad.
func wantLogoBitmap(tb testing.TB, content string) (bm [][]bool, start, side int) {
	tb.Helper()
	bm, err := qr.Bitmap(content, qr.LogoLevel)
	if err != nil {
		tb.Fatal(err)
	}
	if len(bm) < 33 { // below version 4, drawn at version 4
		bm = forcedV4(tb, content)
	}
	start, side = qr.ClearLogoPad(bm)
	return bm, start, side
}

type svgImage struct {
	X      string `xml:"x,attr"`
	Y      string `xml:"y,attr"`
	Width  string `xml:"width,attr"`
	Height string `xml:"height,attr"`
	Href   string `xml:"href,attr"`
}

func svgImages(tb testing.TB, data []byte) []svgImage {
	tb.Helper()
	var doc struct {
		Images []svgImage `xml:"image"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		tb.Fatal(err)
	}
	return doc.Images
}

func num(tb testing.TB, s string) float64 {
	tb.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		tb.Fatalf("%q is not a number", s)
	}
	return v
}

func sameColour(a, b color.Color) bool {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1>>8 == r2>>8 && g1>>8 == g2>>8 && b1>>8 == b2>>8 && a1>>8 == a2>>8
}

// readQRImage reads a QR code from any image, as readQR does from a
// paletted one.
func readQRImage(tb testing.TB, img image.Image, margin int, bg string) string {
	tb.Helper()
	b := img.Bounds()
	size := b.Dx()
	pad := 0
	if margin == 0 {
		pad = size/8 + 4
	}
	side := size + 2*pad
	plane := make([]byte, side*side)
	bgLum := luminance(parseHex(bg))
	for i := range plane {
		plane[i] = bgLum
	}
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			plane[(y+pad)*side+pad+x] = luminance(img.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	src, err := gozxing.NewPlanarYUVLuminanceSource(plane, side, side, 0, 0, side, side, false)
	if err != nil {
		tb.Fatal(err)
	}
	bmp, err := gozxing.NewBinaryBitmap(gozxing.NewHybridBinarizer(src))
	if err != nil {
		tb.Fatal(err)
	}
	res, err := gozxingqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_TRY_HARDER: true})
	if err != nil {
		tb.Fatalf("QR decode = %v", err)
	}
	return res.GetText()
}

// forcedV4 is the bitmap of content at level H and version 4.
func forcedV4(tb testing.TB, content string) [][]bool {
	tb.Helper()
	code, err := qrcode.NewWithForcedVersion(content, 4, qrcode.Highest)
	if err != nil {
		tb.Fatal(err)
	}
	code.DisableBorder = true
	return code.Bitmap()
}

// TestRenderLogoPNG_EveryVersion draws a code with a logo at each version
// a short URL can take (the longest, a 253-character host and a 64-character
// alias, is version 17 at level H) and reads it back.
func TestRenderLogoPNG_EveryVersion(t *testing.T) {
	logo := prepared(t, 64, 64)
	seen := map[int]bool{}
	for l := 1; len(seen) < 15 && l < 600; l++ {
		var sb strings.Builder
		for i := 0; i < l; i++ {
			sb.WriteByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"[(i*7919+l*31)%64])
		}
		content := "https://lb.example/" + sb.String()
		bm, _, _ := wantLogoBitmap(t, content)
		v := (len(bm) - 17) / 4
		if seen[v] || v > 18 {
			continue
		}
		seen[v] = true
		n := len(bm) + 8
		data, _, err := qr.Render(content, qr.Options{Format: "png", Size: 3 * n, Margin: 4, Level: "M", Foreground: "#000000", Background: "#ffffff", Logo: logo})
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if got := readQRImage(t, img, 4, "#ffffff"); got != content {
			t.Fatalf("version %d: decoded %q, want %q", v, got, content)
		}
	}
	for v := 4; v <= 18; v++ {
		if !seen[v] {
			t.Errorf("no content of version %d was tried", v)
		}
	}
}
