package server

import (
	"bytes"
	"image/gif"
	"testing"
)

// TestTrackingPixel: GET /{code}/track answers a 1×1 GIF and counts a
// click without redirecting, also for a link that forwards its path; HEAD
// counts none; a used-up link's pixel counts nothing but still answers
// the image; an unknown code is 404.
func TestTrackingPixel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/mail","alias":"mail","forward_path":true,"max_clicks":2}`, 201).str("id")
	pixel := func(method, path string) *response {
		req := newRequest(method, path, "", "")
		req.Header.Set("User-Agent", firefoxUA)
		return e.request(req)
	}
	r := pixel("GET", "/mail/track")
	if r.status != 200 || r.header.Get("Content-Type") != "image/gif" || r.header.Get("Location") != "" {
		t.Fatalf("pixel: %d %q %q", r.status, r.header.Get("Content-Type"), r.header.Get("Location"))
	}
	img, err := gif.Decode(bytes.NewReader(r.raw))
	if err != nil || img.Bounds().Dx() != 1 || img.Bounds().Dy() != 1 {
		t.Fatalf("the pixel is not a 1×1 GIF: %v", err)
	}
	if r := pixel("HEAD", "/mail/track"); r.status != 200 {
		t.Fatalf("HEAD: %d", r.status)
	}
	e.flush()
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("clicks"); got != 1.0 {
		t.Fatalf("clicks after a pixel and a HEAD: %v", got)
	}
	// The second click uses the link up; a third pixel is not counted.
	pixel("GET", "/mail/track")
	if r := pixel("GET", "/mail/track"); r.status != 200 || r.header.Get("Content-Type") != "image/gif" {
		t.Fatalf("a used-up link's pixel: %d", r.status)
	}
	e.flush()
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("clicks"); got != 2.0 {
		t.Fatalf("clicks after the limit: %v", got)
	}
	if r := pixel("GET", "/nosuch/track"); r.status != 404 {
		t.Fatalf("an unknown code's pixel: %d", r.status)
	}
}
