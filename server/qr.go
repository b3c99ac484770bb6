package server

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/qr"
)

// qrRoutes registers the routes of QR codes: the image of any link, and
// saved designs.
func (s *Server) qrRoutes() {
	s.handle("GET", "/v1/links/:id/qr", accessRead, s.handleLinkQR)
	s.handle("GET", "/v1/qr-codes", accessRead, s.handleListQRCodes)
	s.handle("POST", "/v1/qr-codes", accessWrite, s.handleCreateQRCode)
	s.handle("GET", "/v1/qr-codes/:id", accessRead, s.handleGetQRCode)
	s.handle("PATCH", "/v1/qr-codes/:id", accessWrite, s.handleUpdateQRCode)
	s.handle("DELETE", "/v1/qr-codes/:id", accessWrite, s.handleDeleteQRCode)
	s.handle("GET", "/v1/qr-codes/:id/image", accessRead, s.handleQRCodeImage)
	s.handle("GET", "/v1/qr-codes/:id/logo", accessRead, s.handleGetQRCodeLogo)
	s.handle("PUT", "/v1/qr-codes/:id/logo", accessWrite, s.handlePutQRCodeLogo)
	s.handle("DELETE", "/v1/qr-codes/:id/logo", accessWrite, s.handleDeleteQRCodeLogo)
}

// handleLinkQR renders a link's short URL with the options of the query.
func (s *Server) handleLinkQR(w http.ResponseWriter, r *http.Request, c *caller) error {
	o, err := qr.ParseQuery(r.URL.Query())
	if err != nil {
		return err
	}
	l, err := s.links.FindLinkByID(r.Context(), c.workspace.ID, c.params.ByName("id"))
	if err != nil {
		return err
	}
	return s.writeQR(w, r, s.shortURL(l), o)
}

// writeQR answers the image of content. The ETag covers the content and
// the options, so a changed short URL or option is a new image; a matching
// If-None-Match is a 304.
func (s *Server) writeQR(w http.ResponseWriter, r *http.Request, content string, o qr.Options) error {
	etag := qr.ETag(content, o)
	h := w.Header()
	h.Set("ETag", etag)
	// Private: the image is fetched with a credential. Revalidated every
	// time, so an alias change never leaves a stale code in a cache; the
	// ETag makes revalidation cheap.
	h.Set("Cache-Control", "private, no-cache")
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	release, err := s.admit(w, r, costlyQR)
	if err != nil {
		h.Del("ETag")
		h.Del("Cache-Control")
		return err
	}
	var img []byte
	var ctype string
	err = func() error {
		defer release() // a panic in Render must not keep the slot
		return s.work(costlyQR, func() (err error) {
			img, ctype, err = qr.Render(content, o)
			return err
		})
	}()
	if err != nil {
		h.Del("ETag")
		h.Del("Cache-Control")
		return err
	}
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(img)))
	h.Set("X-Content-Type-Options", "nosniff")
	if ctype == qr.ContentTypeSVG {
		// An SVG is a document: no scripts, whatever a browser makes of it.
		// Its logo, if any, is a data: URI of a PNG linkbolt encoded.
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(img)
	return nil
}

type qrOptionsJSON struct {
	Format string `json:"format"`
	Size   int    `json:"size"`
	Margin int    `json:"margin"`
	Level  string `json:"level"`
	Fg     string `json:"fg"`
	Bg     string `json:"bg"`
}

type qrCodeResponse struct {
	ID        string        `json:"id"`
	LinkID    string        `json:"link_id"`
	Name      string        `json:"name"`
	Options   qrOptionsJSON `json:"options"`
	ImageURL  string        `json:"image_url"`
	Logo      *qrLogoJSON   `json:"logo"`
	CreatedAt string        `json:"created_at"`
	UpdatedAt string        `json:"updated_at"`
}

// qrLogoJSON is a design's logo: where to read it, and its digest, which
// changes with it.
type qrLogoJSON struct {
	URL    string `json:"url"`
	Digest string `json:"digest"`
}

func (s *Server) newQRCodeResponse(q *link.QRCode) qrCodeResponse {
	base := s.primary.String() + "/v1/qr-codes/" + url.PathEscape(q.ID)
	out := qrCodeResponse{ID: q.ID, LinkID: q.LinkID, Name: q.Name,
		Options:   qrOptionsJSON{Format: q.Format, Size: q.Size, Margin: q.Margin, Level: q.Level, Fg: q.Foreground, Bg: q.Background},
		ImageURL:  base + "/image",
		CreatedAt: ts(q.CreatedAt), UpdatedAt: ts(q.UpdatedAt)}
	if q.LogoDigest != "" {
		out.Logo = &qrLogoJSON{URL: base + "/logo", Digest: q.LogoDigest}
	}
	return out
}

func qrOptions(q *link.QRCode) qr.Options {
	return qr.Options{Format: q.Format, Size: q.Size, Margin: q.Margin, Level: q.Level, Foreground: q.Foreground, Background: q.Background}
}

// validateQRCode normalises a design's options and checks them, with the
// field names of the request body.
func validateQRCode(q *link.QRCode) error {
	if err := q.Validate(); err != nil {
		return err
	}
	o := qrOptions(q)
	o.Normalize()
	if err := o.Validate(); err != nil {
		out := &link.Error{Code: link.EINVALID, Message: "options." + link.ErrorMessage(err)}
		for _, f := range link.ErrorFields(err) {
			out.Fields = append(out.Fields, link.FieldError{Field: "options." + f.Field, Message: f.Message})
		}
		return out
	}
	q.Format, q.Size, q.Margin, q.Level, q.Foreground, q.Background = o.Format, o.Size, o.Margin, o.Level, o.Foreground, o.Background
	return nil
}

type qrOptionsRequest struct {
	Format *string `json:"format"`
	Size   *int    `json:"size"`
	Margin *int    `json:"margin"`
	Level  *string `json:"level"`
	Fg     *string `json:"fg"`
	Bg     *string `json:"bg"`
}

type qrCodeRequest struct {
	LinkID  *string           `json:"link_id"`
	Name    *string           `json:"name"`
	Options *qrOptionsRequest `json:"options"`
}

func (in *qrCodeRequest) update() link.QRCodeUpdate {
	u := link.QRCodeUpdate{LinkID: in.LinkID, Name: in.Name}
	if o := in.Options; o != nil {
		u.Format, u.Size, u.Margin, u.Level, u.Foreground, u.Background = o.Format, o.Size, o.Margin, o.Level, o.Fg, o.Bg
	}
	return u
}

func (s *Server) handleCreateQRCode(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in qrCodeRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	d := qr.DefaultOptions()
	now := s.now()
	q := &link.QRCode{WorkspaceID: c.workspace.ID, Format: d.Format, Size: d.Size, Margin: d.Margin, Level: d.Level,
		Foreground: d.Foreground, Background: d.Background, CreatedAt: now, UpdatedAt: now}
	in.update().Apply(q)
	if err := validateQRCode(q); err != nil {
		return err
	}
	if err := s.qrCodes.CreateQRCode(r.Context(), q); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, s.newQRCodeResponse(q))
	return nil
}

func (s *Server) handleListQRCodes(w http.ResponseWriter, r *http.Request, c *caller) error {
	qs, err := s.qrCodes.FindQRCodes(r.Context(), c.workspace.ID, r.URL.Query().Get("link_id"))
	if err != nil {
		return err
	}
	out := make([]qrCodeResponse, 0, len(qs))
	for _, q := range qs {
		out = append(out, s.newQRCodeResponse(q))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

func (s *Server) handleGetQRCode(w http.ResponseWriter, r *http.Request, c *caller) error {
	q, err := s.qrCodes.FindQRCodeByID(r.Context(), c.workspace.ID, c.params.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newQRCodeResponse(q))
	return nil
}

func (s *Server) handleUpdateQRCode(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in qrCodeRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	q, err := s.qrCodes.UpdateQRCode(r.Context(), c.workspace.ID, c.params.ByName("id"), in.update(), validateQRCode)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newQRCodeResponse(q))
	return nil
}

func (s *Server) handleDeleteQRCode(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.qrCodes.DeleteQRCode(r.Context(), c.workspace.ID, c.params.ByName("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleQRCodeImage renders a saved design for its link's current short
// URL; `format` in the query picks PNG or SVG over the saved one. A
// design with a logo is drawn with it, at level H.
func (s *Server) handleQRCodeImage(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	q, logo, err := s.qrCodes.FindQRCodeLogo(ctx, c.workspace.ID, c.params.ByName("id"))
	if err != nil {
		return err
	}
	o := qrOptions(q)
	o.Logo = logo
	if f := r.URL.Query().Get("format"); f != "" {
		o.Format = f
	}
	l, err := s.links.FindLinkByID(ctx, c.workspace.ID, q.LinkID)
	if isNotFound(err) {
		return link.Errorf(link.ENOTFOUND, "the link %q of QR code %q was deleted: point the design at another link with PATCH", q.LinkID, q.ID)
	} else if err != nil {
		return err
	}
	return s.writeQR(w, r, s.shortURL(l), o)
}

// etagMatches reports whether an If-None-Match header names etag: "*", or
// a list holding it, weak or strong (RFC 9110 compares weakly here).
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// handlePutQRCodeLogo makes the body, a PNG or JPEG image of at most
// qr.MaxLogoBytes, the design's logo. What is stored is the image decoded
// and encoded again as a PNG (see qr.PrepareLogo), never the bytes sent.
func (s *Server) handlePutQRCodeLogo(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	id := c.params.ByName("id")
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		mt = r.Header.Get("Content-Type")
	}
	switch mt {
	case qr.LogoTypePNG, qr.LogoTypeJPEG:
	case "image/svg+xml":
		return errHTTP(codeUnsupportedMedia, "an SVG logo is not accepted (it is a document that may hold scripts and links): send a PNG or JPEG image")
	default:
		return errHTTP(codeUnsupportedMedia, fmt.Sprintf("the logo must be sent as image/png or image/jpeg, not %q", r.Header.Get("Content-Type")))
	}
	if r.ContentLength > qr.MaxLogoBytes {
		return errHTTP(codeTooLarge, fmt.Sprintf("the logo is larger than the limit of %d bytes", qr.MaxLogoBytes))
	}
	// The design must exist before the upload is read and decoded.
	if _, err := s.qrCodes.FindQRCodeByID(ctx, c.workspace.ID, id); err != nil {
		return err
	}
	data, err := readBody(w, r, qr.MaxLogoBytes)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errHTTP(codeTooLarge, fmt.Sprintf("the logo is larger than the limit of %d bytes", qr.MaxLogoBytes))
		}
		return link.Errorf(link.EINVALIDREQUEST, "could not read the body: %v", err)
	}
	if len(data) == 0 {
		return link.Errorf(link.EINVALIDREQUEST, "the body is empty: send the logo, a PNG or JPEG image")
	}
	release, err := s.admit(w, r, costlyQR)
	if err != nil {
		return err
	}
	var logo []byte
	err = func() error {
		defer release()
		return s.work(costlyQR, func() (err error) {
			logo, err = qr.PrepareLogo(data)
			return err
		})
	}()
	if err != nil {
		return err
	}
	q, err := s.qrCodes.SetQRCodeLogo(ctx, c.workspace.ID, id, logo)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newQRCodeResponse(q))
	return nil
}

// handleDeleteQRCodeLogo removes a design's logo; its image is drawn
// without one, at the design's own level, again.
func (s *Server) handleDeleteQRCodeLogo(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := c.params.ByName("id")
	q, err := s.qrCodes.FindQRCodeByID(r.Context(), c.workspace.ID, id)
	if err != nil {
		return err
	}
	if q.LogoDigest == "" {
		return link.Errorf(link.ENOTFOUND, "QR code %q has no logo", id)
	}
	if _, err := s.qrCodes.SetQRCodeLogo(r.Context(), c.workspace.ID, id, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleGetQRCodeLogo answers a design's logo, the PNG linkbolt stored.
func (s *Server) handleGetQRCodeLogo(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := c.params.ByName("id")
	q, logo, err := s.qrCodes.FindQRCodeLogo(r.Context(), c.workspace.ID, id)
	if err != nil {
		return err
	}
	if logo == nil {
		return link.Errorf(link.ENOTFOUND, "QR code %q has no logo", id)
	}
	etag := `"` + q.LogoDigest[:32] + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "private, no-cache")
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", qr.LogoTypePNG)
	h.Set("Content-Length", strconv.Itoa(len(logo)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(logo)
	return nil
}
