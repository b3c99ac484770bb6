package qr_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/makiuchi-d/gozxing"
	gozxingqr "github.com/makiuchi-d/gozxing/qrcode"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/qr"
)

const (
	shortURL  = "http://localhost:8080/abc1234"
	customURL = "https://go.example.org/spring-sale"
)

// longURL is far longer than any short URL, so that its code has many
// modules: at level H it needs more than 64 px.
var longURL = "https://links.example.com/campaigns/2024/spring?" + strings.Repeat("utm_source=newsletter&utm_medium=email&", 4) + "x=1"

var levelNames = []string{"L", "M", "Q", "H"}

func TestBitmap(t *testing.T) {
	for _, level := range levelNames {
		bm, err := qr.Bitmap(shortURL, level)
		if err != nil {
			t.Fatalf("Bitmap(%s) = %v", level, err)
		}
		n := len(bm)
		if n < 21 || (n-21)%4 != 0 {
			t.Fatalf("Bitmap(%s) has %d rows, want 21+4k (no border)", level, n)
		}
		for y, row := range bm {
			if len(row) != n {
				t.Fatalf("Bitmap(%s) row %d has %d modules, want %d", level, y, len(row), n)
			}
		}
		// Without a border the top-left finder pattern starts at (0, 0): a
		// dark 7×7 ring around a light ring around a dark 3×3 square.
		for i := 0; i < 7; i++ {
			for _, p := range [][2]int{{0, i}, {6, i}, {i, 0}, {i, 6}} {
				if !bm[p[0]][p[1]] {
					t.Fatalf("Bitmap(%s) finder ring module (%d,%d) is light", level, p[1], p[0])
				}
			}
		}
		if bm[1][1] || !bm[3][3] {
			t.Fatalf("Bitmap(%s) finder pattern is not at the corner", level)
		}
		// The same input always gives the same matrix.
		again, _ := qr.Bitmap(shortURL, strings.ToLower(level))
		if fmt.Sprint(again) != fmt.Sprint(bm) {
			t.Fatalf("Bitmap(%s) is not deterministic", level)
		}
	}

	// Higher levels need at least as many modules.
	l, _ := qr.Bitmap(longURL, "L")
	h, _ := qr.Bitmap(longURL, "H")
	if len(h) <= len(l) {
		t.Fatalf("long URL: level H has %d modules, level L %d; want more at H", len(h), len(l))
	}

	_, err := qr.Bitmap(shortURL, "X")
	assertInvalidFields(t, err, "level")
	if _, err := qr.Bitmap("", "M"); link.ErrorCode(err) != link.EINVALID {
		t.Fatalf("Bitmap(empty) = %v, want EINVALID", err)
	}
	if _, err := qr.Bitmap(strings.Repeat("x", 3000), "H"); link.ErrorCode(err) != link.EINVALID {
		t.Fatalf("Bitmap(3000 bytes at H) = %v, want EINVALID", err)
	}
}

// TestRenderPNG_Decodes reads every rendered PNG back with a QR decoder and
// checks it carries exactly the content, across contents, levels, sizes,
// margins and colours. Combinations that leave under one pixel per module
// must be refused instead.
func TestRenderPNG_Decodes(t *testing.T) {
	darkBlue, lightYellow := "#1a237e", "#fff59d"
	colours := []struct{ fg, bg string }{
		{"#000000", "#ffffff"},
		{darkBlue, lightYellow},
	}
	refused := 0
	for ti, content := range []string{shortURL, longURL, customURL} {
		for li, level := range levelNames {
			for _, size := range []int{64, 512, 2048} {
				for _, margin := range []int{0, 4} {
					for ci, c := range colours {
						// At 2048 px one case per content, alternating
						// margins and colours: the full matrix there costs
						// seconds per case under -race and adds no coverage.
						if size == 2048 && (li != ti || (ti+margin/4)%2 != 0 || ci != ti%2) {
							continue
						}
						o := qr.Options{Format: "png", Size: size, Margin: margin, Level: level, Foreground: c.fg, Background: c.bg}
						minSize := minSizeFor(t, content, o)
						if size < minSize {
							refused++
						}
						name := fmt.Sprintf("%.20s/%s/%d/m%d/%s-on-%s", strings.TrimPrefix(content, "http"), level, size, margin, c.fg, c.bg)
						t.Run(name, func(t *testing.T) {
							t.Parallel()
							data, ct, err := qr.Render(content, o)
							if size < minSize {
								assertTooSmall(t, err)
								return
							}
							if err != nil {
								t.Fatalf("Render = %v", err)
							}
							if got, want := ct, "image/png"; got != want {
								t.Fatalf("content type = %q, want %q", got, want)
							}
							img := decodePNG(t, data, size, c.fg, c.bg)
							assertModules(t, img, content, o)
							if got, want := readQR(t, img, margin, c.bg), content; got != want {
								t.Fatalf("decoded %q, want %q", got, want)
							}
						})
					}
				}
			}
		}
	}
	if refused == 0 {
		t.Fatal("no combination was too small; the size rule went untested")
	}
}

// TestRenderPNG_SizeRule pins the rule: Size must give every module,
// quiet zone included, at least one pixel. At exactly one pixel the code
// still decodes; one pixel less is refused.
func TestRenderPNG_SizeRule(t *testing.T) {
	o := qr.Options{Format: "png", Margin: 4, Level: "H", Foreground: "#000000", Background: "#ffffff"}
	bm, err := qr.Bitmap(longURL, "H")
	if err != nil {
		t.Fatal(err)
	}
	minSize := len(bm) + 2*o.Margin
	if minSize <= qr.MinSize {
		t.Fatalf("long URL at H needs only %d px; pick a longer URL so the rule is reachable", minSize)
	}

	o.Size = minSize - 1
	_, _, err = qr.Render(longURL, o)
	assertTooSmall(t, err)
	if msg, want := link.ErrorMessage(err), fmt.Sprintf("needs at least %d px", minSize); !strings.Contains(msg, want) {
		t.Fatalf("message = %q, want it to say it %s", msg, want)
	}
	o.Format = "svg"
	_, _, err = qr.Render(longURL, o)
	assertTooSmall(t, err)

	o.Format, o.Size = "png", minSize
	data, _, err := qr.Render(longURL, o)
	if err != nil {
		t.Fatalf("Render at the minimum size %d = %v", minSize, err)
	}
	img := decodePNG(t, data, minSize, "#000000", "#ffffff")
	assertModules(t, img, longURL, o)
	if got := readQR(t, img, o.Margin, "#ffffff"); got != longURL {
		t.Fatalf("decoded %q at one pixel per module, want %q", got, longURL)
	}

	// A smaller margin lowers the minimum by two pixels per module dropped.
	o.Size, o.Margin = minSize-1, 3
	if _, _, err := qr.Render(longURL, o); err != nil {
		t.Fatalf("Render with margin 3 at %d px = %v", minSize-1, err)
	}
}

func TestRender_InvalidOptions(t *testing.T) {
	_, _, err := qr.Render(shortURL, qr.Options{Format: "gif", Size: 10, Margin: 20, Level: "Z", Foreground: "x", Background: "y"})
	assertInvalidFields(t, err, "format", "size", "margin", "level", "fg", "bg")

	// Render normalizes first: a zero Options is a valid 512 px PNG.
	data, ct, err := qr.Render(shortURL, qr.Options{})
	if err != nil || ct != "image/png" {
		t.Fatalf("Render(zero options) = %q, %v", ct, err)
	}
	decodePNG(t, data, 512, "#000000", "#ffffff")

	if _, _, err := qr.Render("", qr.DefaultOptions()); link.ErrorCode(err) != link.EINVALID {
		t.Fatalf("Render(empty) = %v, want EINVALID", err)
	}
}

func TestRenderSVG(t *testing.T) {
	for _, content := range []string{shortURL, longURL, customURL} {
		for _, level := range levelNames {
			for _, margin := range []int{0, 1, 4, 16} {
				o := qr.Options{Format: "svg", Size: 512, Margin: margin, Level: level, Foreground: "#1A237E", Background: "fff59d"}
				t.Run(fmt.Sprintf("%.20s/%s/m%d", strings.TrimPrefix(content, "http"), level, margin), func(t *testing.T) {
					t.Parallel()
					data, ct, err := qr.Render(content, o)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := ct, "image/svg+xml"; got != want {
						t.Fatalf("content type = %q, want %q", got, want)
					}
					bm := wantBitmap(t, content, level)
					n := len(bm) + 2*margin
					doc := parseSVG(t, data)

					if got, want := doc.Width, "512"; got != want {
						t.Errorf("width = %q, want %q", got, want)
					}
					if got, want := doc.Height, "512"; got != want {
						t.Errorf("height = %q, want %q", got, want)
					}
					if got, want := doc.ViewBox, fmt.Sprintf("0 0 %d %d", n, n); got != want {
						t.Errorf("viewBox = %q, want %q", got, want)
					}
					if got, want := doc.ShapeRendering, "crispEdges"; got != want {
						t.Errorf("shape-rendering = %q, want %q", got, want)
					}
					if got, want := len(doc.Rects), 1; got != want {
						t.Fatalf("%d rects, want %d", got, want)
					}
					if r := doc.Rects[0]; r.Fill != "#fff59d" || r.Width != strconv.Itoa(n) || r.Height != strconv.Itoa(n) {
						t.Errorf("background rect = %+v, want %d×%d filled #fff59d", r, n, n)
					}
					if got, want := len(doc.Paths), 1; got != want {
						t.Fatalf("%d paths, want %d", got, want)
					}
					if got, want := doc.Paths[0].Fill, "#1a237e"; got != want {
						t.Errorf("path fill = %q, want %q", got, want)
					}
					if len(doc.Other) != 0 {
						t.Errorf("unexpected elements %v", doc.Other)
					}
					for _, s := range []string{"<image", "base64", "data:"} {
						if bytes.Contains(data, []byte(s)) {
							t.Errorf("SVG contains %q; it must be drawn from paths, not embed a raster", s)
						}
					}

					got := rasterisePath(t, doc.Paths[0].D, n)
					for y := 0; y < n; y++ {
						for x := 0; x < n; x++ {
							want := y >= margin && y < n-margin && x >= margin && x < n-margin && bm[y-margin][x-margin]
							if got[y][x] != want {
								t.Fatalf("module (%d,%d): path dark=%v, bitmap dark=%v", x, y, got[y][x], want)
							}
						}
					}
				})
			}
		}
	}
}

func TestETag(t *testing.T) {
	base := qr.DefaultOptions()
	tag := qr.ETag(shortURL, base)
	if len(tag) < 18 || tag[0] != '"' || tag[len(tag)-1] != '"' || strings.HasPrefix(tag, `W/`) {
		t.Fatalf("ETag = %s, want a strong quoted tag", tag)
	}
	if _, err := strconv.ParseUint(tag[1:9], 16, 64); err != nil {
		t.Fatalf("ETag = %s, want hex", tag)
	}
	if again := qr.ETag(shortURL, base); again != tag {
		t.Fatalf("ETag not stable: %s then %s", tag, again)
	}

	// Options that normalize alike share a tag.
	same := qr.Options{Format: "PNG", Size: 0, Margin: 4, Level: "m", Foreground: "000", Background: "#FFF"}
	if got := qr.ETag(shortURL, same); got != tag {
		t.Fatalf("ETag of equivalent options = %s, want %s", got, tag)
	}

	changes := map[string]func(*qr.Options){
		"format": func(o *qr.Options) { o.Format = "svg" },
		"size":   func(o *qr.Options) { o.Size = 513 },
		"margin": func(o *qr.Options) { o.Margin = 5 },
		"level":  func(o *qr.Options) { o.Level = "H" },
		"fg":     func(o *qr.Options) { o.Foreground = "#000001" },
		"bg":     func(o *qr.Options) { o.Background = "#fffffe" },
	}
	seen := map[string]string{tag: "base"}
	check := func(name, got string) {
		t.Helper()
		if prev, ok := seen[got]; ok {
			t.Errorf("ETag for %s equals ETag for %s: %s", name, prev, got)
		}
		seen[got] = name
	}
	for name, change := range changes {
		o := base
		change(&o)
		check(name, qr.ETag(shortURL, o))
	}
	check("content", qr.ETag(shortURL+"5", base))
	check("custom domain", qr.ETag("http://go.example.org/abc1234", base))
	// Fields cannot run into each other.
	a, b := base, base
	a.Foreground, a.Background = "#000000", "#ffffff"
	b.Foreground, b.Background = "#ffffff", "#000000"
	check("swapped colours", qr.ETag(shortURL, b))
	if qr.ETag(shortURL, a) != tag {
		t.Fatal("ETag of default colours changed")
	}
}

// TestRender_Concurrent renders from many goroutines at once; with -race it
// shows Render shares no state between calls.
func TestRender_Concurrent(t *testing.T) {
	want, _, err := qr.Render(shortURL, qr.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, _, err := qr.Render(shortURL, qr.DefaultOptions())
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("concurrent Render differs or failed: %v", err)
			}
		}()
	}
	wg.Wait()
}

func BenchmarkRenderPNG512(b *testing.B) {
	o := qr.DefaultOptions()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := qr.Render(shortURL, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderPNG2048 is the largest image a client may ask for, the
// one whose cost matters to the costly-work gate.
func BenchmarkRenderPNG2048(b *testing.B) {
	o := qr.DefaultOptions()
	o.Size = 2048
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := qr.Render(shortURL, o); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderSVG(b *testing.B) {
	o := qr.DefaultOptions()
	o.Format = "svg"
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := qr.Render(shortURL, o); err != nil {
			b.Fatal(err)
		}
	}
}

// bitmaps holds the matrices wantBitmap has made, by content and level.
var bitmaps sync.Map

// wantBitmap returns qr.Bitmap(content, level), the matrix a rendered
// image is checked against. Bitmap is deterministic (TestBitmap), and one
// encoding costs tens of milliseconds under -race, so each matrix is made
// once and shared; callers only read it.
func wantBitmap(tb testing.TB, content, level string) [][]bool {
	tb.Helper()
	key := level + "\x00" + content
	if bm, ok := bitmaps.Load(key); ok {
		return bm.([][]bool)
	}
	bm, err := qr.Bitmap(content, level)
	if err != nil {
		tb.Fatal(err)
	}
	bitmaps.Store(key, bm)
	return bm
}

// minSizeFor returns the smallest Size Render accepts for content at the
// level and margin of o: one pixel per module, quiet zone included.
func minSizeFor(tb testing.TB, content string, o qr.Options) int {
	tb.Helper()
	o.Normalize()
	return len(wantBitmap(tb, content, o.Level)) + 2*o.Margin
}

func assertTooSmall(tb testing.TB, err error) {
	tb.Helper()
	assertInvalidFields(tb, err, "size")
	if msg := link.ErrorMessage(err); !strings.Contains(msg, "size too small for this content at this level") {
		tb.Fatalf("message = %q, want it to say the size is too small", msg)
	}
}

// decodePNG decodes data and checks it is a size×size paletted image drawn
// in exactly the two given colours, both of them used.
func decodePNG(tb testing.TB, data []byte, size int, fg, bg string) *image.Paletted {
	tb.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("png.Decode = %v", err)
	}
	if got, want := img.Bounds(), image.Rect(0, 0, size, size); got != want {
		tb.Fatalf("bounds = %v, want %v", got, want)
	}
	p, ok := img.(*image.Paletted)
	if !ok {
		tb.Fatalf("image is %T, want a paletted PNG", img)
	}
	if got, want := len(p.Palette), 2; got != want {
		tb.Fatalf("palette has %d colours, want %d", got, want)
	}
	var count [256]int
	for _, i := range p.Pix {
		count[i]++
	}
	used := map[string]bool{}
	for i, c := range p.Palette {
		if count[i] > 0 {
			used[hexColour(c)] = true
		}
	}
	if len(used) != 2 || !used[fg] || !used[bg] {
		tb.Fatalf("colours used = %v, want exactly %s and %s", used, fg, bg)
	}
	return p
}

// assertModules checks the PNG pixel by pixel against Bitmap: square blocks
// of Size/n pixels, centred, with a quiet zone of at least Margin modules in
// the background colour, and every pixel of a block alike.
func assertModules(tb testing.TB, img *image.Paletted, content string, o qr.Options) {
	tb.Helper()
	o.Normalize()
	bm := wantBitmap(tb, content, o.Level)
	n := len(bm) + 2*o.Margin
	scale := o.Size / n
	offset := (o.Size - scale*n) / 2
	fgIndex := uint8(0)
	if hexColour(img.Palette[1]) == o.Foreground {
		fgIndex = 1
	}
	for py := 0; py < o.Size; py++ {
		row := img.Pix[py*img.Stride : py*img.Stride+o.Size]
		for px, idx := range row {
			mx, my := (px-offset)/scale-o.Margin, (py-offset)/scale-o.Margin
			inCode := px >= offset && py >= offset && mx >= 0 && my >= 0 && mx < len(bm) && my < len(bm)
			want := inCode && bm[my][mx]
			if got := idx == fgIndex; got != want {
				tb.Fatalf("pixel (%d,%d), module (%d,%d) of %d at scale %d offset %d: dark=%v, want %v",
					px, py, mx, my, len(bm), scale, offset, got, want)
			}
		}
	}
}

// readQR decodes the QR code in img. A code drawn without a quiet zone is
// meant to be placed on a design that provides one, so it is read the way a
// camera would see it there: on a border of its own background colour.
//
// The decoder reads the image's luminance, the plane
// gozxing.NewLuminanceSourceFromImage makes, worked out here once per
// palette colour rather than once per pixel through image.Image's At:
// that took most of the time of a 2048 px case under -race.
func readQR(tb testing.TB, img *image.Paletted, margin int, bg string) string {
	tb.Helper()
	size := img.Bounds().Dx()
	pad := 0
	if margin == 0 {
		pad = size/8 + 4
	}
	var lum [256]byte
	for i, c := range img.Palette {
		lum[i] = luminance(c)
	}
	side := size + 2*pad
	plane := make([]byte, side*side)
	if pad > 0 {
		bgLum := lum[img.Palette.Index(parseHex(bg))]
		for i := range plane {
			plane[i] = bgLum
		}
	}
	for y := 0; y < size; y++ {
		row := plane[(y+pad)*side+pad : (y+pad)*side+pad+size]
		for x, idx := range img.Pix[y*img.Stride : y*img.Stride+size] {
			row[x] = lum[idx]
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
	res, err := gozxingqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{
		gozxing.DecodeHintType_TRY_HARDER: true,
	})
	if err != nil {
		tb.Fatalf("QR decode = %v", err)
	}
	return res.GetText()
}

// luminance is the grey level gozxing.NewLuminanceSourceFromImage gives a
// pixel of colour c.
func luminance(c color.Color) byte {
	r, g, b, a := c.RGBA()
	lum := (r + 2*g + b) * 255 / (4 * 0xffff)
	return byte((lum*a + (0xffff-a)*255) / 0xffff)
}

type svgDoc struct {
	XMLName        xml.Name `xml:"http://www.w3.org/2000/svg svg"`
	Width          string   `xml:"width,attr"`
	Height         string   `xml:"height,attr"`
	ViewBox        string   `xml:"viewBox,attr"`
	ShapeRendering string   `xml:"shape-rendering,attr"`
	Rects          []struct {
		Width  string `xml:"width,attr"`
		Height string `xml:"height,attr"`
		Fill   string `xml:"fill,attr"`
	} `xml:"rect"`
	Paths []struct {
		D    string `xml:"d,attr"`
		Fill string `xml:"fill,attr"`
	} `xml:"path"`
	Other []struct {
		XMLName xml.Name
	} `xml:",any"`
}

// parseSVG checks data is well-formed XML (a strict token pass, then the
// document) and returns its svg root.
func parseSVG(tb testing.TB, data []byte) svgDoc {
	tb.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	for {
		_, err := dec.Token()
		if err != nil {
			if err == io.EOF {
				break
			}
			tb.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}
	var doc svgDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		tb.Fatalf("xml.Unmarshal(SVG) = %v", err)
	}
	return doc
}

// rasterisePath turns a path in the renderer's format — sub-paths
// "M x y h w v 1 h -w z" with integer arguments — into an n×n module grid.
// It fails on any other command, on a sub-path that is not a one-module-high
// rectangle inside the grid, and on a module drawn twice.
func rasterisePath(tb testing.TB, d string, n int) [][]bool {
	tb.Helper()
	grid := make([][]bool, n)
	for i := range grid {
		grid[i] = make([]bool, n)
	}
	toks := tokenisePath(tb, d)
	num := func(i int) int {
		if i >= len(toks) {
			tb.Fatalf("path ends early: %q", d)
		}
		v, err := strconv.Atoi(toks[i])
		if err != nil {
			tb.Fatalf("path token %d %q is not an integer", i, toks[i])
		}
		return v
	}
	for i := 0; i < len(toks); {
		// One sub-path: M x y h w v 1 h -w z
		want := []string{"M", "", "", "h", "", "v", "", "h", "", "z"}
		for j, w := range want {
			if w != "" && (i+j >= len(toks) || toks[i+j] != w) {
				tb.Fatalf("path token %d: got %q, want %q in %q", i+j, toks[min(i+j, len(toks)-1)], w, d)
			}
		}
		x, y, w, v, back := num(i+1), num(i+2), num(i+4), num(i+6), num(i+8)
		if v != 1 || back != -w || w <= 0 {
			tb.Fatalf("sub-path at token %d is not a one-module-high run: M%d %d h%d v%d h%d", i, x, y, w, v, back)
		}
		if x < 0 || y < 0 || y >= n || x+w > n {
			tb.Fatalf("run M%d %d h%d falls outside the %d×%d grid", x, y, w, n, n)
		}
		for k := x; k < x+w; k++ {
			if grid[y][k] {
				tb.Fatalf("module (%d,%d) drawn twice", k, y)
			}
			grid[y][k] = true
		}
		i += len(want)
	}
	return grid
}

// tokenisePath splits path data into command letters and numbers.
func tokenisePath(tb testing.TB, d string) []string {
	tb.Helper()
	var toks []string
	for i := 0; i < len(d); {
		c := d[i]
		switch {
		case c == ' ' || c == ',':
			i++
		case strings.IndexByte("MmHhVvZzLl", c) >= 0:
			toks = append(toks, string(c))
			i++
		case c == '-' || ('0' <= c && c <= '9'):
			j := i + 1
			for j < len(d) && '0' <= d[j] && d[j] <= '9' {
				j++
			}
			toks = append(toks, d[i:j])
			i = j
		default:
			tb.Fatalf("unexpected character %q at %d in path data", c, i)
		}
	}
	return toks
}

func hexColour(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

func parseHex(s string) color.Color {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}
