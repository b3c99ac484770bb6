package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// UTMTemplateService keeps the workspaces' UTM templates in
// utm_templates.
type UTMTemplateService struct {
	db *DB
}

var _ link.UTMTemplateService = (*UTMTemplateService)(nil)

// utmColumns are the columns scanUTMTemplate reads, in its order.
const utmColumns = `id, workspace_id, name, utm_source, utm_medium, utm_campaign, created_at, updated_at`

func scanUTMTemplate(row pgx.Row) (*link.UTMTemplate, error) {
	t := &link.UTMTemplate{}
	if err := row.Scan(&t.ID, &t.WorkspaceID, &t.Name, &t.UTMSource, &t.UTMMedium, &t.UTMCampaign, &t.CreatedAt, &t.UpdatedAt); err != nil {
		return nil, err
	}
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	return t, nil
}

func utmNotFound(id string) error {
	return link.Errorf(link.ENOTFOUND, "UTM template %q not found", id)
}

// utmNameIndex is the unique index of names (0015_utm_templates.sql).
const utmNameIndex = "utm_templates_name"

// CreateUTMTemplate stores a template; sets ID, CreatedAt and UpdatedAt.
// ENOTFOUND for an unknown workspace; ECONFLICT for a name the workspace
// has, or a workspace with link.MaxUTMTemplates.
func (s *UTMTemplateService) CreateUTMTemplate(ctx context.Context, t *link.UTMTemplate) error {
	if !s.db.validID(link.PrefixWorkspace, t.WorkspaceID) {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", t.WorkspaceID)
	}
	now := dbTime(s.db.now())
	var id string
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		// The workspace's row, locked, makes its creations count one at
		// a time; the count is a statement of its own, so that it sees
		// what the creations it waited for committed.
		var n int
		err := tx.QueryRow(ctx, `SELECT 0 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE`, t.WorkspaceID).Scan(&n)
		if errors.Is(err, pgx.ErrNoRows) {
			return link.Errorf(link.ENOTFOUND, "workspace %q not found", t.WorkspaceID)
		} else if err != nil {
			return fmt.Errorf("lock workspace: %w", err)
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM utm_templates WHERE workspace_id = $1`, t.WorkspaceID).Scan(&n); err != nil {
			return fmt.Errorf("count UTM templates: %w", err)
		}
		if n >= link.MaxUTMTemplates {
			return link.ErrTooManyUTMTemplates
		}
		var seq int64
		if id, seq, err = s.db.newID(ctx, tx, link.PrefixUTM); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO utm_templates (id, seq, workspace_id, name, utm_source, utm_medium, utm_campaign, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`, id, seq, t.WorkspaceID, t.Name, t.UTMSource, t.UTMMedium, t.UTMCampaign, now)
		if isUnique(err, utmNameIndex) {
			return link.UTMTemplateNameTaken(t.Name)
		} else if err != nil {
			return fmt.Errorf("insert UTM template: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	t.ID, t.CreatedAt, t.UpdatedAt = id, now, now
	return nil
}

// FindUTMTemplateByID returns a template of the workspace. ENOTFOUND.
func (s *UTMTemplateService) FindUTMTemplateByID(ctx context.Context, workspaceID, id string) (*link.UTMTemplate, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixUTM, id) {
		return nil, utmNotFound(id)
	}
	t, err := scanUTMTemplate(s.db.pool.QueryRow(ctx, `SELECT `+utmColumns+` FROM utm_templates WHERE id = $1 AND workspace_id = $2`, id, workspaceID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, utmNotFound(id)
	} else if err != nil {
		return nil, fmt.Errorf("find UTM template: %w", err)
	}
	return t, nil
}

// FindUTMTemplates returns the workspace's templates by name, then
// creation. ENOTFOUND for an unknown workspace.
func (s *UTMTemplateService) FindUTMTemplates(ctx context.Context, workspaceID string) ([]*link.UTMTemplate, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	out := []*link.UTMTemplate{}
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		if err := workspaceExists(ctx, tx, workspaceID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+utmColumns+` FROM utm_templates WHERE workspace_id = $1`, workspaceID)
		if err != nil {
			return fmt.Errorf("find UTM templates: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanUTMTemplate(rows)
			if err != nil {
				return fmt.Errorf("find UTM templates: %w", err)
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	// Sorted here as every store sorts them (lower() of the database
	// depends on its collation).
	link.SortUTMTemplates(out)
	return out, nil
}

// UpdateUTMTemplate applies an update and validates the result.
// ENOTFOUND, EINVALID, ECONFLICT.
func (s *UTMTemplateService) UpdateUTMTemplate(ctx context.Context, workspaceID, id string, upd link.UTMTemplateUpdate) (*link.UTMTemplate, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixUTM, id) {
		return nil, utmNotFound(id)
	}
	now := dbTime(s.db.now())
	var out *link.UTMTemplate
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		t, err := scanUTMTemplate(tx.QueryRow(ctx, `SELECT `+utmColumns+` FROM utm_templates WHERE id = $1 AND workspace_id = $2 FOR UPDATE`, id, workspaceID))
		if errors.Is(err, pgx.ErrNoRows) {
			return utmNotFound(id)
		} else if err != nil {
			return fmt.Errorf("find UTM template: %w", err)
		}
		upd.Apply(t)
		t.Normalize()
		if err := t.Validate(); err != nil {
			return err
		}
		t.UpdatedAt = now
		_, err = tx.Exec(ctx, `UPDATE utm_templates SET name = $2, utm_source = $3, utm_medium = $4, utm_campaign = $5, updated_at = $6
			WHERE id = $1`, id, t.Name, t.UTMSource, t.UTMMedium, t.UTMCampaign, now)
		if isUnique(err, utmNameIndex) {
			return link.UTMTemplateNameTaken(t.Name)
		} else if err != nil {
			return fmt.Errorf("update UTM template: %w", err)
		}
		out = t
		return nil
	})
	return out, err
}

// DeleteUTMTemplate deletes a template. ENOTFOUND.
func (s *UTMTemplateService) DeleteUTMTemplate(ctx context.Context, workspaceID, id string) error {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixUTM, id) {
		return utmNotFound(id)
	}
	var n int64
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM utm_templates WHERE id = $1 AND workspace_id = $2`, id, workspaceID)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("delete UTM template: %w", err)
	}
	if n == 0 {
		return utmNotFound(id)
	}
	return nil
}
