package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// QRCodeService keeps saved QR code designs in qr_codes.
type QRCodeService struct {
	db *DB
}

var _ link.QRCodeService = (*QRCodeService)(nil)

// qrColumns are the columns scanQRCode reads, in its order.
const qrColumns = `id, workspace_id, link_id, name, format, size, margin, level, foreground, background, logo_digest, created_at, updated_at`

func scanQRCode(row pgx.Row) (*link.QRCode, error) {
	q := &link.QRCode{}
	if err := row.Scan(&q.ID, &q.WorkspaceID, &q.LinkID, &q.Name, &q.Format, &q.Size, &q.Margin,
		&q.Level, &q.Foreground, &q.Background, &q.LogoDigest, &q.CreatedAt, &q.UpdatedAt); err != nil {
		return nil, err
	}
	q.CreatedAt, q.UpdatedAt = q.CreatedAt.UTC(), q.UpdatedAt.UTC()
	return q, nil
}

func qrNotFound(id string) error { return link.Errorf(link.ENOTFOUND, "QR code %q not found", id) }

// qrLinkOK checks, in the transaction that saves a design, that linkID is
// a link of workspace wsID, and keeps it (FOR SHARE) until the
// transaction ends. EINVALID (field link_id).
func (db *DB) qrLinkOK(ctx context.Context, tx pgx.Tx, wsID, linkID string) error {
	if db.validID(link.PrefixLink, linkID) {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM links WHERE id = $1 AND workspace_id = $2 FOR SHARE`, linkID, wsID).Scan(&one)
		if err == nil {
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("link of QR code: %w", err)
		}
	}
	return &link.Error{Code: link.EINVALID, Message: fmt.Sprintf("link_id: link %q not found in this workspace", linkID),
		Fields: []link.FieldError{{Field: "link_id", Message: "not found in this workspace"}}}
}

// CreateQRCode stores a design; sets ID. EINVALID (link_id) when the link
// is not in the workspace; ENOTFOUND for an unknown workspace.
func (s *QRCodeService) CreateQRCode(ctx context.Context, q *link.QRCode) error {
	if !s.db.validID(link.PrefixWorkspace, q.WorkspaceID) {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", q.WorkspaceID)
	}
	created, updated := q.CreatedAt, q.UpdatedAt
	if created.IsZero() {
		created = s.db.now()
	}
	if updated.IsZero() {
		updated = created
	}
	created, updated = dbTime(created), dbTime(updated)
	var id string
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if err := workspaceExists(ctx, tx, q.WorkspaceID); err != nil {
			return err
		}
		if err := s.db.qrLinkOK(ctx, tx, q.WorkspaceID, q.LinkID); err != nil {
			return err
		}
		var seq int64
		var err error
		if id, seq, err = s.db.newID(ctx, tx, link.PrefixQRCode); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO qr_codes (id, seq, workspace_id, link_id, name, format, size, margin, level,
			foreground, background, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			id, seq, q.WorkspaceID, q.LinkID, q.Name, q.Format, q.Size, q.Margin, q.Level, q.Foreground, q.Background, created, updated)
		if err != nil {
			return fmt.Errorf("insert QR code: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	q.ID, q.CreatedAt, q.UpdatedAt = id, created, updated
	return nil
}

// FindQRCodeByID returns a design of the workspace. ENOTFOUND.
func (s *QRCodeService) FindQRCodeByID(ctx context.Context, workspaceID, id string) (*link.QRCode, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixQRCode, id) {
		return nil, qrNotFound(id)
	}
	q, err := scanQRCode(s.db.pool.QueryRow(ctx, `SELECT `+qrColumns+` FROM qr_codes WHERE id = $1 AND workspace_id = $2`, id, workspaceID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, qrNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("find QR code: %w", err)
	}
	return q, nil
}

// FindQRCodes returns the workspace's designs, newest first; only those of
// linkID when it is not empty. ENOTFOUND for an unknown workspace.
func (s *QRCodeService) FindQRCodes(ctx context.Context, workspaceID, linkID string) ([]*link.QRCode, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	out := []*link.QRCode{}
	if linkID != "" && !s.db.validID(link.PrefixLink, linkID) {
		return out, nil
	}
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		if err := workspaceExists(ctx, tx, workspaceID); err != nil {
			return err
		}
		sql, args := `SELECT `+qrColumns+` FROM qr_codes WHERE workspace_id = $1 ORDER BY seq DESC`, []any{workspaceID}
		if linkID != "" {
			sql, args = `SELECT `+qrColumns+` FROM qr_codes WHERE workspace_id = $1 AND link_id = $2 ORDER BY seq DESC`, []any{workspaceID, linkID}
		}
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return fmt.Errorf("find QR codes: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			q, err := scanQRCode(rows)
			if err != nil {
				return fmt.Errorf("find QR codes: %w", err)
			}
			out = append(out, q)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateQRCode applies an update validated by validate. ENOTFOUND, EINVALID.
func (s *QRCodeService) UpdateQRCode(ctx context.Context, workspaceID, id string, upd link.QRCodeUpdate, validate func(*link.QRCode) error) (*link.QRCode, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixQRCode, id) {
		return nil, qrNotFound(id)
	}
	now := dbTime(s.db.now())
	var out *link.QRCode
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		q, err := scanQRCode(tx.QueryRow(ctx, `SELECT `+qrColumns+` FROM qr_codes WHERE id = $1 AND workspace_id = $2 FOR UPDATE`, id, workspaceID))
		if errors.Is(err, pgx.ErrNoRows) {
			return qrNotFound(id)
		}
		if err != nil {
			return fmt.Errorf("find QR code: %w", err)
		}
		upd.Apply(q)
		if err := q.Validate(); err != nil {
			return err
		}
		if validate != nil {
			if err := validate(q); err != nil {
				return err
			}
		}
		if err := s.db.qrLinkOK(ctx, tx, workspaceID, q.LinkID); err != nil {
			return err
		}
		q.UpdatedAt = now
		_, err = tx.Exec(ctx, `UPDATE qr_codes SET link_id = $2, name = $3, format = $4, size = $5, margin = $6, level = $7,
			foreground = $8, background = $9, updated_at = $10 WHERE id = $1`,
			id, q.LinkID, q.Name, q.Format, q.Size, q.Margin, q.Level, q.Foreground, q.Background, q.UpdatedAt)
		if err != nil {
			return fmt.Errorf("update QR code: %w", err)
		}
		out = q
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetQRCodeLogo stores or removes a design's logo. ENOTFOUND.
func (s *QRCodeService) SetQRCodeLogo(ctx context.Context, workspaceID, id string, logo []byte) (*link.QRCode, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixQRCode, id) {
		return nil, qrNotFound(id)
	}
	var value []byte // NULL for no logo
	if len(logo) > 0 {
		value = logo
	}
	q, err := scanQRCode(s.db.pool.QueryRow(ctx, `UPDATE qr_codes SET logo = $3, logo_digest = $4, updated_at = $5
		WHERE id = $1 AND workspace_id = $2 RETURNING `+qrColumns, id, workspaceID, value, link.LogoDigest(logo), dbTime(s.db.now())))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, qrNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("set QR code logo: %w", err)
	}
	return q, nil
}

// FindQRCodeLogo returns a design and its logo, nil when it has none.
// ENOTFOUND.
func (s *QRCodeService) FindQRCodeLogo(ctx context.Context, workspaceID, id string) (*link.QRCode, []byte, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixQRCode, id) {
		return nil, nil, qrNotFound(id)
	}
	q := &link.QRCode{}
	var logo []byte
	err := s.db.pool.QueryRow(ctx, `SELECT `+qrColumns+`, logo FROM qr_codes WHERE id = $1 AND workspace_id = $2`, id, workspaceID).Scan(
		&q.ID, &q.WorkspaceID, &q.LinkID, &q.Name, &q.Format, &q.Size, &q.Margin,
		&q.Level, &q.Foreground, &q.Background, &q.LogoDigest, &q.CreatedAt, &q.UpdatedAt, &logo)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, qrNotFound(id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("find QR code logo: %w", err)
	}
	q.CreatedAt, q.UpdatedAt = q.CreatedAt.UTC(), q.UpdatedAt.UTC()
	return q, logo, nil
}

// DeleteQRCode deletes a design. ENOTFOUND.
func (s *QRCodeService) DeleteQRCode(ctx context.Context, workspaceID, id string) error {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixQRCode, id) {
		return qrNotFound(id)
	}
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM qr_codes WHERE id = $1 AND workspace_id = $2`, id, workspaceID)
		if err != nil {
			return fmt.Errorf("delete QR code: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return qrNotFound(id)
		}
		return nil
	})
}
