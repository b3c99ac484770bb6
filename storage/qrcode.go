package storage

import (
	"bytes"
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// QRCodeService keeps saved QR code designs.
type QRCodeService struct {
	db *DB
}

var _ link.QRCodeService = (*QRCodeService)(nil)

// NewQRCodeService returns the QR code service of db.
func NewQRCodeService(db *DB) *QRCodeService { return &QRCodeService{db: db} }

type qrCodeRecord struct {
	Workspace  uint64    `json:"ws"`
	Link       uint64    `json:"link"`
	Name       string    `json:"name"`
	Format     string    `json:"format"`
	Size       int       `json:"size"`
	Margin     int       `json:"margin"`
	Level      string    `json:"level"`
	Foreground string    `json:"fg"`
	Background string    `json:"bg"`
	LogoDigest string    `json:"logo,omitempty"` // the logo is in qr_codes.logo
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

func (r *qrCodeRecord) qrCode(ids *idCodec, id uint64) *link.QRCode {
	return &link.QRCode{
		ID: ids.formatID(prefixQRCode, id), WorkspaceID: ids.formatID(prefixWorkspace, r.Workspace),
		LinkID: ids.formatID(prefixLink, r.Link), Name: r.Name, Format: r.Format, Size: r.Size, Margin: r.Margin,
		Level: r.Level, Foreground: r.Foreground, Background: r.Background, LogoDigest: r.LogoDigest,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

// set copies q onto the record; the link must be of the record's workspace.
func (r *qrCodeRecord) set(tx *bolt.Tx, q *link.QRCode) error {
	lid, ok := idsOf(tx).parseID(prefixLink, q.LinkID)
	if ok {
		_, err := findLink(tx, r.Workspace, lid)
		ok = err == nil
		if err != nil && link.ErrorCode(err) != link.ENOTFOUND {
			return err
		}
	}
	if !ok {
		return &link.Error{Code: link.EINVALID, Message: fmt.Sprintf("link_id: link %q not found in this workspace", q.LinkID),
			Fields: []link.FieldError{{Field: "link_id", Message: "not found in this workspace"}}}
	}
	r.Link, r.Name, r.Format, r.Size, r.Margin = lid, q.Name, q.Format, q.Size, q.Margin
	r.Level, r.Foreground, r.Background = q.Level, q.Foreground, q.Background
	return nil
}

func findQRCode(tx *bolt.Tx, wid, id uint64) (*qrCodeRecord, error) {
	var rec qrCodeRecord
	ok, err := getJSON(tx.Bucket(bucketQRCodes), itob(id), &rec)
	if err != nil {
		return nil, err
	}
	if !ok || rec.Workspace != wid {
		return nil, link.Errorf(link.ENOTFOUND, "QR code %q not found", idsOf(tx).formatID(prefixQRCode, id))
	}
	return &rec, nil
}

// CreateQRCode stores a design; sets ID. EINVALID (link_id) when the link
// is not in the workspace; ENOTFOUND for an unknown workspace.
func (s *QRCodeService) CreateQRCode(ctx context.Context, q *link.QRCode) error {
	wid, ok := s.db.ids.parseID(prefixWorkspace, q.WorkspaceID)
	if !ok {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", q.WorkspaceID)
	}
	if q.CreatedAt.IsZero() {
		q.CreatedAt = s.db.now()
	}
	if q.UpdatedAt.IsZero() {
		q.UpdatedAt = q.CreatedAt
	}
	var id uint64
	err := s.db.update(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		rec := qrCodeRecord{Workspace: wid, CreatedAt: q.CreatedAt, UpdatedAt: q.UpdatedAt}
		if err := rec.set(tx, q); err != nil {
			return err
		}
		b := tx.Bucket(bucketQRCodes)
		var err error
		if id, err = nextID(b); err != nil {
			return err
		}
		if err := putJSON(b, itob(id), &rec); err != nil {
			return err
		}
		return tx.Bucket(bucketQRCodesWorkspace).Put(concat(itob(wid), itob(id)), []byte{})
	})
	if err != nil {
		return err
	}
	q.ID = s.db.ids.formatID(prefixQRCode, id)
	return nil
}

// FindQRCodeByID returns a design of the workspace. ENOTFOUND.
func (s *QRCodeService) FindQRCodeByID(ctx context.Context, workspaceID, id string) (*link.QRCode, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	qid, ok2 := s.db.ids.parseID(prefixQRCode, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "QR code %q not found", id)
	}
	var out *link.QRCode
	err := s.db.db.View(func(tx *bolt.Tx) error {
		rec, err := findQRCode(tx, wid, qid)
		if err != nil {
			return err
		}
		out = rec.qrCode(s.db.ids, qid)
		return nil
	})
	return out, err
}

// FindQRCodes returns the workspace's designs, newest first; only those of
// linkID when it is not empty.
func (s *QRCodeService) FindQRCodes(ctx context.Context, workspaceID, linkID string) ([]*link.QRCode, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	var only uint64
	if linkID != "" {
		if only, ok = s.db.ids.parseID(prefixLink, linkID); !ok {
			return []*link.QRCode{}, nil
		}
	}
	out := []*link.QRCode{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		prefix := itob(wid)
		c := tx.Bucket(bucketQRCodesWorkspace).Cursor()
		for k := lastWithPrefix(c, prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
			qid := btoi(k[8:])
			rec, err := findQRCode(tx, wid, qid)
			if err != nil {
				return fmt.Errorf("QR code index: %w", err)
			}
			if only == 0 || rec.Link == only {
				out = append(out, rec.qrCode(s.db.ids, qid))
			}
		}
		return nil
	})
	return out, err
}

// UpdateQRCode applies an update validated by validate. ENOTFOUND, EINVALID.
func (s *QRCodeService) UpdateQRCode(ctx context.Context, workspaceID, id string, upd link.QRCodeUpdate, validate func(*link.QRCode) error) (*link.QRCode, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	qid, ok2 := s.db.ids.parseID(prefixQRCode, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "QR code %q not found", id)
	}
	now := s.db.now()
	var out *link.QRCode
	err := s.db.update(func(tx *bolt.Tx) error {
		rec, err := findQRCode(tx, wid, qid)
		if err != nil {
			return err
		}
		q := rec.qrCode(s.db.ids, qid)
		upd.Apply(q)
		if err := q.Validate(); err != nil {
			return err
		}
		if validate != nil {
			if err := validate(q); err != nil {
				return err
			}
		}
		if err := rec.set(tx, q); err != nil {
			return err
		}
		rec.UpdatedAt = now
		if err := putJSON(tx.Bucket(bucketQRCodes), itob(qid), rec); err != nil {
			return err
		}
		out = rec.qrCode(s.db.ids, qid)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteQRCode deletes a design. ENOTFOUND.
func (s *QRCodeService) DeleteQRCode(ctx context.Context, workspaceID, id string) error {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	qid, ok2 := s.db.ids.parseID(prefixQRCode, id)
	if !ok1 || !ok2 {
		return link.Errorf(link.ENOTFOUND, "QR code %q not found", id)
	}
	return s.db.update(func(tx *bolt.Tx) error {
		if _, err := findQRCode(tx, wid, qid); err != nil {
			return err
		}
		if err := tx.Bucket(bucketQRCodes).Delete(itob(qid)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketQRCodesLogo).Delete(itob(qid)); err != nil {
			return err
		}
		return tx.Bucket(bucketQRCodesWorkspace).Delete(concat(itob(wid), itob(qid)))
	})
}

// SetQRCodeLogo stores or removes a design's logo. ENOTFOUND.
func (s *QRCodeService) SetQRCodeLogo(ctx context.Context, workspaceID, id string, logo []byte) (*link.QRCode, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	qid, ok2 := s.db.ids.parseID(prefixQRCode, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "QR code %q not found", id)
	}
	now := s.db.now()
	var out *link.QRCode
	err := s.db.update(func(tx *bolt.Tx) error {
		rec, err := findQRCode(tx, wid, qid)
		if err != nil {
			return err
		}
		logos := tx.Bucket(bucketQRCodesLogo)
		if len(logo) == 0 {
			err = logos.Delete(itob(qid))
		} else {
			err = logos.Put(itob(qid), logo)
		}
		if err != nil {
			return err
		}
		rec.LogoDigest, rec.UpdatedAt = link.LogoDigest(logo), now
		if err := putJSON(tx.Bucket(bucketQRCodes), itob(qid), rec); err != nil {
			return err
		}
		out = rec.qrCode(s.db.ids, qid)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindQRCodeLogo returns a design and its logo, nil when it has none.
// ENOTFOUND.
func (s *QRCodeService) FindQRCodeLogo(ctx context.Context, workspaceID, id string) (*link.QRCode, []byte, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	qid, ok2 := s.db.ids.parseID(prefixQRCode, id)
	if !ok1 || !ok2 {
		return nil, nil, link.Errorf(link.ENOTFOUND, "QR code %q not found", id)
	}
	var out *link.QRCode
	var logo []byte
	err := s.db.db.View(func(tx *bolt.Tx) error {
		rec, err := findQRCode(tx, wid, qid)
		if err != nil {
			return err
		}
		out = rec.qrCode(s.db.ids, qid)
		if rec.LogoDigest != "" {
			if b := tx.Bucket(bucketQRCodesLogo); b != nil {
				logo = bytes.Clone(b.Get(itob(qid)))
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, logo, nil
}
