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

// lockUTMNames locks the workspace's row, which makes the creations and
// renames of its templates one at a time, and answers ECONFLICT when a
// template other than except has a name that clashes with name
// (link.SameTemplateName: the database's lower() folds otherwise,
// 0021_utm_template_names.sql). It returns how many templates the
// workspace has. A statement of its own after the lock, so that it sees
// what the transactions it waited for committed.
func lockUTMNames(ctx context.Context, tx pgx.Tx, workspaceID, except, name string) (int, error) {
	var n int
	err := tx.QueryRow(ctx, `SELECT 0 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE`, workspaceID).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	} else if err != nil {
		return 0, fmt.Errorf("lock workspace: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT id, name FROM utm_templates WHERE workspace_id = $1`, workspaceID)
	if err != nil {
		return 0, fmt.Errorf("find UTM template names: %w", err)
	}
	defer rows.Close()
	n = 0
	for rows.Next() {
		var id, other string
		if err := rows.Scan(&id, &other); err != nil {
			return 0, fmt.Errorf("find UTM template names: %w", err)
		}
		n++
		if id != except && link.SameTemplateName(other, name) {
			return 0, link.UTMTemplateNameTaken(name)
		}
	}
	return n, rows.Err()
}

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
		n, err := lockUTMNames(ctx, tx, t.WorkspaceID, "", t.Name)
		if err != nil {
			return err
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
		if err != nil {
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
		// The workspace's row first, as a creation and a deletion of the
		// workspace lock it, then the template's.
		var zero int
		err := tx.QueryRow(ctx, `SELECT 0 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE`, workspaceID).Scan(&zero)
		if errors.Is(err, pgx.ErrNoRows) {
			return utmNotFound(id)
		} else if err != nil {
			return fmt.Errorf("lock workspace: %w", err)
		}
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
		if _, err := lockUTMNames(ctx, tx, workspaceID, id, t.Name); err != nil {
			return err
		}
		t.UpdatedAt = now
		_, err = tx.Exec(ctx, `UPDATE utm_templates SET name = $2, utm_source = $3, utm_medium = $4, utm_campaign = $5, updated_at = $6
			WHERE id = $1`, id, t.Name, t.UTMSource, t.UTMMedium, t.UTMCampaign, now)
		if err != nil {
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
