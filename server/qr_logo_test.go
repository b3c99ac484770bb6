package server

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	qrreader "github.com/makiuchi-d/gozxing/qrcode"
)

// logoImage draws a w×h logo: a crimson disc with a navy bar across it on
// a transparent ground.
func logoImage(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := min(w, h) / 2
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			dx, dy := x-w/2, y-h/2
			switch {
			case dy*dy*36 < r*r && dx*dx < r*r:
				img.SetNRGBA(x, y, color.NRGBA{R: 0x1a, G: 0x23, B: 0x7e, A: 0xff})
			case dx*dx+dy*dy < r*r:
				img.SetNRGBA(x, y, color.NRGBA{R: 0xdc, G: 0x14, B: 0x3c, A: 0xff})
			}
		}
	}
	return img
}

func pngBytes(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// putLogo sends body as a design's logo with the content type ctype.
func (e *env) putLogo(qid, cred, ctype string, body []byte) *response {
	e.t.Helper()
	req := newRequest("PUT", "/v1/qr-codes/"+qid+"/logo", cred, "")
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	return e.request(req)
}

// decodeQRHard reads the text of a PNG QR code, trying harder than
// decodeQR (a logo is damage the decoder must repair).
func decodeQRHard(t *testing.T, data []byte) string {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not an image: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := qrreader.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_TRY_HARDER: true})
	if err != nil {
		t.Fatalf("QR code with a logo does not decode: %v", err)
	}
	return res.GetText()
}

func TestQRCodeLogo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"brand"}`, 201).str("id")
	q := e.do("POST", "/v1/qr-codes", e.writeKey, `{"link_id":"`+id+`","name":"Brand","options":{"size":512,"level":"L"}}`, 201)
	qid := q.str("id")
	if q.path("logo") != nil {
		t.Fatalf("a new design has a logo: %s", q.raw)
	}
	plain := e.do("GET", "/v1/qr-codes/"+qid+"/image", e.readKey, "", 200)
	plainTag := plain.header.Get("ETag")
	wantProblem(t, e.request(newRequest("GET", "/v1/qr-codes/"+qid+"/logo", e.readKey, "")), 404, "not_found")

	// An upload with bytes after the image: what is stored is the image
	// encoded again, so those bytes are never served back.
	upload := append(pngBytes(t, logoImage(300, 200)), []byte("<script>alert(1)</script>")...)
	r := e.putLogo(qid, e.writeKey, "image/png", upload)
	if r.status != 200 {
		t.Fatalf("PUT logo: %d %s", r.status, r.raw)
	}
	digest, _ := r.path("logo", "digest").(string)
	if len(digest) != 64 || r.path("logo", "url") != "http://lb.test/v1/qr-codes/"+qid+"/logo" || r.path("options", "level") != "L" {
		t.Fatalf("design after upload: %s", r.raw)
	}
	if g := e.do("GET", "/v1/qr-codes/"+qid, e.readKey, "", 200); g.path("logo", "digest") != digest {
		t.Fatalf("GET design: %s", g.raw)
	}
	if l := e.do("GET", "/v1/qr-codes?link_id="+id, e.readKey, "", 200); l.path("data", 0, "logo", "digest") != digest {
		t.Fatalf("list: %s", l.raw)
	}
	logo := e.do("GET", "/v1/qr-codes/"+qid+"/logo", e.readKey, "", 200)
	if logo.header.Get("Content-Type") != "image/png" || bytes.Contains(logo.raw, []byte("<script>")) || bytes.Equal(logo.raw, upload) {
		t.Fatalf("logo served: %v, %d bytes", logo.header, len(logo.raw))
	}
	if cfg, format, err := image.DecodeConfig(bytes.NewReader(logo.raw)); err != nil || format != "png" || cfg.Width != 300 || cfg.Height != 200 {
		t.Fatalf("stored logo: %v %s %v", cfg, format, err)
	}
	req := newRequest("GET", "/v1/qr-codes/"+qid+"/logo", e.readKey, "")
	req.Header.Set("If-None-Match", logo.header.Get("ETag"))
	if r := e.request(req); r.status != http.StatusNotModified {
		t.Fatalf("logo If-None-Match: %d", r.status)
	}

	// The image has the logo: another ETag, drawn in colour, the logo's
	// navy at its centre, and it decodes at every size a design takes.
	img := e.do("GET", "/v1/qr-codes/"+qid+"/image", e.readKey, "", 200)
	tag := img.header.Get("ETag")
	if tag == plainTag {
		t.Fatal("the ETag did not change with the logo")
	}
	req = newRequest("GET", "/v1/qr-codes/"+qid+"/image", e.readKey, "")
	req.Header.Set("If-None-Match", plainTag)
	if r := e.request(req); r.status != http.StatusOK {
		t.Fatalf("the ETag of the image without logo still matches: %d", r.status)
	}
	decoded, _, err := image.Decode(bytes.NewReader(img.raw))
	if err != nil {
		t.Fatal(err)
	}
	if cr, cg, cb, _ := decoded.At(256, 256).RGBA(); cr>>8 != 0x1a || cg>>8 != 0x23 || cb>>8 != 0x7e {
		t.Fatalf("the centre is %v, want the logo's navy", decoded.At(256, 256))
	}
	for _, size := range []int{64, 128, 333, 512, 1000, 2048} {
		e.do("PATCH", "/v1/qr-codes/"+qid, e.writeKey, `{"options":{"size":`+strconv.Itoa(size)+`}}`, 200)
		r := e.do("GET", "/v1/qr-codes/"+qid+"/image", e.readKey, "", 200)
		if got := decodeQRHard(t, r.raw); got != "http://lb.test/brand" {
			t.Fatalf("size %d: decoded %q", size, got)
		}
		if cfg, _, _ := image.DecodeConfig(bytes.NewReader(r.raw)); cfg.Width != size {
			t.Fatalf("size %d: image is %d px", size, cfg.Width)
		}
	}
	// As SVG: the logo is a data: URI of the stored PNG in one <image>,
	// which the image's content security policy lets it show.
	svg := e.do("GET", "/v1/qr-codes/"+qid+"/image?format=svg", e.readKey, "", 200)
	if csp := svg.header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src data:") || !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("CSP %q", csp)
	}
	var doc struct {
		Paths  []struct{} `xml:"path"`
		Images []struct {
			Href string `xml:"href,attr"`
		} `xml:"image"`
	}
	if err := xml.Unmarshal(svg.raw, &doc); err != nil || len(doc.Paths) != 1 || len(doc.Images) != 1 {
		t.Fatalf("SVG: %v, %d paths, %d images", err, len(doc.Paths), len(doc.Images))
	}
	if got := doc.Images[0].Href; got != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(logo.raw) {
		t.Fatalf("SVG image href %.60q is not the stored logo", got)
	}
	if bytes.Contains(svg.raw, []byte("<script")) {
		t.Fatal("the SVG holds a script")
	}

	// A JPEG replaces it: another digest, another ETag.
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, logoImage(128, 128), nil); err != nil {
		t.Fatal(err)
	}
	r = e.putLogo(qid, e.writeKey, "image/jpeg", jb.Bytes())
	if r.status != 200 || r.path("logo", "digest") == digest {
		t.Fatalf("PUT JPEG: %d %s", r.status, r.raw)
	}
	e.do("PATCH", "/v1/qr-codes/"+qid, e.writeKey, `{"options":{"size":512}}`, 200)
	jpegImg := e.do("GET", "/v1/qr-codes/"+qid+"/image", e.readKey, "", 200)
	if jpegImg.header.Get("ETag") == tag || decodeQRHard(t, jpegImg.raw) != "http://lb.test/brand" {
		t.Fatal("the JPEG logo did not change the image, or it does not decode")
	}

	// Bad uploads change nothing.
	tooWide := pngBytes(t, image.NewGray(image.Rect(0, 0, 3000, 2)))
	huge := make([]byte, 256<<10+1)
	copy(huge, pngBytes(t, logoImage(8, 8)))
	for _, tt := range []struct {
		name, ctype string
		body        []byte
		status      int
		code        string
	}{
		{"JSON", "application/json", []byte(`{"logo":"x"}`), 415, "unsupported_media_type"},
		{"no type", "", upload, 415, "unsupported_media_type"},
		{"SVG", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), 415, "unsupported_media_type"},
		{"GIF", "image/gif", []byte("GIF89a"), 415, "unsupported_media_type"},
		{"not an image", "image/png", []byte("this is not a PNG"), 400, "invalid_request"},
		{"SVG sent as PNG", "image/png", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), 400, "invalid_request"},
		{"empty", "image/png", nil, 400, "invalid_request"},
		{"too large", "image/png", huge, 413, "payload_too_large"},
		{"huge dimensions", "image/png", tooWide, 422, "validation_failed"},
	} {
		r := e.putLogo(qid, e.writeKey, tt.ctype, tt.body)
		wantProblem(t, r, tt.status, tt.code)
		if tt.name == "SVG" && !strings.Contains(r.str("detail"), "SVG") {
			t.Errorf("SVG refused with %q; want a word on SVG", r.str("detail"))
		}
	}
	// A body over the limit with no declared length is cut off at it.
	req = newRequest("PUT", "/v1/qr-codes/"+qid+"/logo", e.writeKey, "")
	req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(huge), strings.NewReader("more")))
	req.ContentLength = -1
	req.Header.Set("Content-Type", "image/png")
	wantProblem(t, e.request(req), 413, "payload_too_large")
	if g := e.do("GET", "/v1/qr-codes/"+qid, e.readKey, "", 200); g.path("logo", "digest") != r.path("logo", "digest") {
		t.Fatalf("a refused upload changed the design: %s", g.raw)
	}

	// A read key cannot set or remove a logo; another workspace sees none.
	wantProblem(t, e.putLogo(qid, e.readKey, "image/png", upload), 403, "forbidden")
	wantProblem(t, e.request(newRequest("DELETE", "/v1/qr-codes/"+qid+"/logo", e.readKey, "")), 403, "forbidden")
	wantProblem(t, e.putLogo(qid, e.otherKey, "image/png", upload), 404, "not_found")
	wantProblem(t, e.request(newRequest("GET", "/v1/qr-codes/"+qid+"/logo", e.otherKey, "")), 404, "not_found")
	wantProblem(t, e.putLogo("qr_unknown", e.writeKey, "image/png", upload), 404, "not_found")

	// Removed: the image is the one without logo again, ETag and all.
	e.do("DELETE", "/v1/qr-codes/"+qid+"/logo", e.writeKey, "", 204)
	if g := e.do("GET", "/v1/qr-codes/"+qid, e.readKey, "", 200); g.path("logo") != nil {
		t.Fatalf("after removal: %s", g.raw)
	}
	again := e.do("GET", "/v1/qr-codes/"+qid+"/image", e.readKey, "", 200)
	if again.header.Get("ETag") != plainTag || !bytes.Equal(again.raw, plain.raw) {
		t.Fatal("without its logo, the image is not the one before")
	}
	wantProblem(t, e.request(newRequest("GET", "/v1/qr-codes/"+qid+"/logo", e.readKey, "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("DELETE", "/v1/qr-codes/"+qid+"/logo", e.writeKey, "")), 404, "not_found")
}
