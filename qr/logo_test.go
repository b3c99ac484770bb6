package qr_test

import (
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/qr"
)

func TestLogoPadModules(t *testing.T) {
	for n := 21; n <= 177; n += 4 {
		s := qr.LogoPadModules(n)
		if s%2 != n%2 || float64(s*s) > qr.MaxLogoShare*float64(n*n) || float64((s+2)*(s+2)) <= qr.MaxLogoShare*float64(n*n) {
			t.Errorf("qr.LogoPadModules(%d) = %d", n, s)
		}
	}
}

// TestLogoPad_Decodes clears the logo pad of codes of every version range at
// level H and reads them back with a real decoder.
func TestLogoPad_Decodes(t *testing.T) {
	for _, length := range []int{10, 40, 120, 400, 1000} {
		content := "https://lb.example/" + strings.Repeat("x", length)
		bitmap, err := qr.Bitmap(content, qr.LogoLevel)
		if err != nil {
			t.Fatal(err)
		}
		qr.ClearLogoPad(bitmap)
		t.Logf("%d modules, pad %d", len(bitmap), qr.LogoPadModules(len(bitmap)))
		const px, margin = 6, 4
		n := len(bitmap)
		size := (n + 2*margin) * px
		img := image.NewPaletted(image.Rect(0, 0, size, size), color.Palette{color.White, color.Black})
		for y, row := range bitmap {
			for x, dark := range row {
				if !dark {
					continue
				}
				for dy := 0; dy < px; dy++ {
					for dx := 0; dx < px; dx++ {
						img.SetColorIndex((x+margin)*px+dx, (y+margin)*px+dy, 1)
					}
				}
			}
		}
		if got := readQR(t, img, margin, "#ffffff"); got != content {
			t.Errorf("n=%d: decoded %q, want %q", n, got, content)
		}
	}
}
