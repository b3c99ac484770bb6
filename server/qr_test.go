package server

import (
	"bytes"
	"encoding/xml"
	"image"
	_ "image/png"
	"net/http"
	"testing"

	"github.com/makiuchi-d/gozxing"
	qrreader "github.com/makiuchi-d/gozxing/qrcode"
)

// decodeQR reads the text of a PNG QR code.
func decodeQR(t *testing.T, png []byte) string {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(png))
	if err != nil {
		t.Fatalf("not an image: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := qrreader.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		t.Fatalf("QR code does not decode: %v", err)
	}
	return res.GetText()
}

func TestLinkQR(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"poster"}`, 201).str("id")
	r := e.do("GET", "/v1/links/"+id+"/qr", e.readKey, "", 200)
	if r.header.Get("Content-Type") != "image/png" || r.header.Get("ETag") == "" || r.header.Get("Cache-Control") != "private, no-cache" {
		t.Fatalf("headers: %v", r.header)
	}
	if got := decodeQR(t, r.raw); got != "http://lb.test/poster" {
		t.Fatalf("decoded %q", got)
	}
	etag := r.header.Get("ETag")
	// The same image revalidates with 304; other options or another short
	// URL make another ETag.
	req := newRequest("GET", "/v1/links/"+id+"/qr", e.readKey, "")
	req.Header.Set("If-None-Match", etag)
	if r := e.request(req); r.status != http.StatusNotModified || len(r.raw) != 0 {
		t.Fatalf("If-None-Match: %d", r.status)
	}
	for _, inm := range []string{`"other", ` + etag, "W/" + etag, "*"} {
		req.Header.Set("If-None-Match", inm)
		if r := e.request(req); r.status != http.StatusNotModified {
			t.Fatalf("If-None-Match %s: %d", inm, r.status)
		}
	}
	req.Header.Set("If-None-Match", `"other"`)
	if r := e.request(req); r.status != http.StatusOK {
		t.Fatalf("a stale ETag: %d", r.status)
	}
	big := e.do("GET", "/v1/links/"+id+"/qr?size=1024&level=H&fg=%23123456&bg=fff&margin=2", e.readKey, "", 200)
	if big.header.Get("ETag") == etag || decodeQR(t, big.raw) != "http://lb.test/poster" {
		t.Fatal("options did not change the image")
	}
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"alias":"poster2"}`, 200)
	r = e.do("GET", "/v1/links/"+id+"/qr", e.readKey, "", 200)
	if r.header.Get("ETag") == etag || decodeQR(t, r.raw) != "http://lb.test/poster2" {
		t.Fatal("a new short URL did not change the image")
	}
	// SVG is well-formed XML with a path, not an embedded PNG.
	svg := e.do("GET", "/v1/links/"+id+"/qr?format=svg", e.readKey, "", 200)
	if svg.header.Get("Content-Type") != "image/svg+xml" || !bytes.Contains(svg.raw, []byte("<path")) || bytes.Contains(svg.raw, []byte("base64")) {
		t.Fatalf("svg: %s", svg.raw)
	}
	dec := xml.NewDecoder(bytes.NewReader(svg.raw))
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("SVG is not well-formed: %v", err)
			}
			break
		}
	}
	// Bad options are 422 naming the parameter.
	for q, field := range map[string]string{"size=10": "size", "size=abc": "size", "level=X": "level", "fg=red": "fg",
		"format=gif": "format", "margin=99": "margin", "fg=000&bg=000": "bg"} {
		r := e.request(newRequest("GET", "/v1/links/"+id+"/qr?"+q, e.readKey, ""))
		wantProblem(t, r, 422, "validation_failed")
		if r.path("errors", 0, "field") != field {
			t.Fatalf("%s: field %v", q, r.path("errors", 0, "field"))
		}
	}
	wantProblem(t, e.request(newRequest("GET", "/v1/links/"+e.otherLink+"/qr", e.readKey, "")), 404, "not_found")
}

func TestSavedQRCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"flyer"}`, 201).str("id")
	q := e.do("POST", "/v1/qr-codes", e.writeKey, `{"link_id":"`+id+`","name":"Flyer","options":{"size":256,"fg":"#1A237E","level":"q"}}`, 201)
	qid := q.str("id")
	if q.path("options", "fg") != "#1a237e" || q.path("options", "level") != "Q" || q.path("options", "margin") != float64(4) || q.path("options", "format") != "png" {
		t.Fatalf("saved: %s", q.raw)
	}
	img := e.do("GET", "/v1/qr-codes/"+qid+"/image", e.readKey, "", 200)
	if decodeQR(t, img.raw) != "http://lb.test/flyer" {
		t.Fatal("saved design does not decode to the short URL")
	}
	if r := e.do("GET", "/v1/qr-codes/"+qid+"/image?format=svg", e.readKey, "", 200); r.header.Get("Content-Type") != "image/svg+xml" {
		t.Fatal("format override")
	}
	e.do("PATCH", "/v1/qr-codes/"+qid, e.writeKey, `{"options":{"format":"svg"},"name":"Flyer SVG"}`, 200)
	g := e.do("GET", "/v1/qr-codes/"+qid, e.readKey, "", 200)
	if g.path("options", "format") != "svg" || g.path("options", "size") != float64(256) || g.str("name") != "Flyer SVG" {
		t.Fatalf("patched: %s", g.raw)
	}
	if n := len(e.do("GET", "/v1/qr-codes?link_id="+id, e.readKey, "", 200).path("data").([]any)); n != 1 {
		t.Fatalf("%d designs", n)
	}
	// Writes need read_write; other workspaces see nothing; bad input.
	wantProblem(t, e.request(newRequest("POST", "/v1/qr-codes", e.readKey, `{"link_id":"`+id+`","name":"x"}`)), 403, "forbidden")
	wantProblem(t, e.request(newRequest("GET", "/v1/qr-codes/"+qid, e.otherKey, "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("GET", "/v1/qr-codes/"+qid+"/image", e.otherKey, "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("PATCH", "/v1/qr-codes/"+qid, e.otherKey, `{"name":"x"}`)), 404, "not_found")
	r := e.request(newRequest("POST", "/v1/qr-codes", e.writeKey, `{"link_id":"`+e.otherLink+`","name":"x"}`))
	wantProblem(t, r, 422, "validation_failed")
	if r.path("errors", 0, "field") != "link_id" {
		t.Fatalf("field: %s", r.raw)
	}
	r = e.request(newRequest("POST", "/v1/qr-codes", e.writeKey, `{"link_id":"`+id+`","name":"x","options":{"size":5000}}`))
	wantProblem(t, r, 422, "validation_failed")
	if r.path("errors", 0, "field") != "options.size" {
		t.Fatalf("field: %s", r.raw)
	}
	wantProblem(t, e.request(newRequest("PATCH", "/v1/qr-codes/"+qid, e.writeKey, `{"options":{"level":"Z"}}`)), 422, "validation_failed")
	wantProblem(t, e.request(newRequest("POST", "/v1/qr-codes", e.writeKey, `{"link_id":"`+id+`","name":"x","options":{"colour":"red"}}`)), 400, "invalid_request")
	// A design whose link is deleted answers 404 for its image.
	e.do("DELETE", "/v1/links/"+id, e.writeKey, "", 204)
	wantProblem(t, e.request(newRequest("GET", "/v1/qr-codes/"+qid+"/image", e.readKey, "")), 404, "not_found")
	e.do("DELETE", "/v1/qr-codes/"+qid, e.writeKey, "", 204)
	wantProblem(t, e.request(newRequest("GET", "/v1/qr-codes/"+qid, e.readKey, "")), 404, "not_found")
}
