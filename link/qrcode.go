package link

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// QRCode is a saved QR code design: a link, a name and the options it is
// rendered with. The image always encodes the link's current short URL.
type QRCode struct {
	ID          string
	WorkspaceID string
	LinkID      string
	Name        string
	// Rendering options, as the qr package reads them.
	Format     string
	Size       int
	Margin     int
	Level      string
	Foreground string
	Background string
	// LogoDigest is the hex SHA-256 of the design's logo, a PNG drawn in
	// the centre of the code; empty when it has none. The logo itself is
	// read with FindQRCodeLogo.
	LogoDigest string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Validate checks the fields of a design other than its rendering
// options, which the qr package checks.
func (q *QRCode) Validate() error {
	var v validation
	q.Name = strings.TrimSpace(q.Name)
	checkName(&v, "name", q.Name, MaxNameLength)
	if q.LinkID == "" {
		v.add("link_id", "is required")
	}
	return v.err()
}

// QRCodeUpdate holds the fields of a PATCH; nil means "not given".
type QRCodeUpdate struct {
	LinkID, Name, Format, Level, Foreground, Background *string
	Size, Margin                                        *int
}

// Apply copies the given fields onto q.
func (u QRCodeUpdate) Apply(q *QRCode) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&q.LinkID, u.LinkID)
	set(&q.Name, u.Name)
	set(&q.Format, u.Format)
	set(&q.Level, u.Level)
	set(&q.Foreground, u.Foreground)
	set(&q.Background, u.Background)
	if u.Size != nil {
		q.Size = *u.Size
	}
	if u.Margin != nil {
		q.Margin = *u.Margin
	}
}

// QRCodeService keeps saved QR code designs.
type QRCodeService interface {
	// CreateQRCode stores a validated design; sets ID. EINVALID (field
	// link_id) when the link is not in the workspace.
	CreateQRCode(ctx context.Context, q *QRCode) error
	// FindQRCodeByID returns a design of the workspace. ENOTFOUND.
	FindQRCodeByID(ctx context.Context, workspaceID, id string) (*QRCode, error)
	// FindQRCodes returns the workspace's designs, newest first, those of
	// one link only when linkID is not empty.
	FindQRCodes(ctx context.Context, workspaceID, linkID string) ([]*QRCode, error)
	// UpdateQRCode applies an update and validates the result with validate.
	// ENOTFOUND, EINVALID.
	UpdateQRCode(ctx context.Context, workspaceID, id string, upd QRCodeUpdate, validate func(*QRCode) error) (*QRCode, error)
	// DeleteQRCode deletes a design, and its logo. ENOTFOUND.
	DeleteQRCode(ctx context.Context, workspaceID, id string) error
	// SetQRCodeLogo makes logo, a PNG (see qr.PrepareLogo), the design's
	// logo, or removes the logo when logo is empty; it sets LogoDigest and
	// UpdatedAt. ENOTFOUND.
	SetQRCodeLogo(ctx context.Context, workspaceID, id string, logo []byte) (*QRCode, error)
	// FindQRCodeLogo returns a design and its logo, read together; the
	// logo is nil when the design has none. ENOTFOUND.
	FindQRCodeLogo(ctx context.Context, workspaceID, id string) (*QRCode, []byte, error)
}

// LogoDigest returns the LogoDigest of logo: its hex SHA-256, or "" for
// no logo.
func LogoDigest(logo []byte) string {
	if len(logo) == 0 {
		return ""
	}
	sum := sha256.Sum256(logo)
	return hex.EncodeToString(sum[:])
}
