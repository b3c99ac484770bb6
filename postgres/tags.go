package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// TagService keeps the colours and descriptions of the workspaces' tags
// in tags; how many links carry a tag is counted from links.tags.
type TagService struct {
	db *DB
}

var _ link.TagService = (*TagService)(nil)

// FindTags returns every tag of the workspace by name: those its links
// carry (counted in one pass over the workspace's links) and those with a
// colour or a description. ENOTFOUND for an unknown workspace.
func (s *TagService) FindTags(ctx context.Context, workspaceID string) ([]*link.Tag, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	out := []*link.Tag{}
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		if err := workspaceExists(ctx, tx, workspaceID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT coalesce(c.name, t.name), coalesce(c.n, 0), coalesce(t.color, ''), coalesce(t.description, ''), t.updated_at
			FROM (SELECT u.name, count(*) AS n FROM links l, unnest(l.tags) AS u(name) WHERE l.workspace_id = $1 GROUP BY u.name) c
			FULL JOIN (SELECT name, color, description, updated_at FROM tags WHERE workspace_id = $1) t ON t.name = c.name`, workspaceID)
		if err != nil {
			return fmt.Errorf("find tags: %w", err)
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.Tag, error) {
			t := &link.Tag{WorkspaceID: workspaceID}
			var updated *time.Time
			err := r.Scan(&t.Name, &t.Links, &t.Color, &t.Description, &updated)
			if updated != nil {
				t.UpdatedAt = updated.UTC()
			}
			return t, err
		})
		if err != nil {
			return fmt.Errorf("find tags: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	link.SortTags(out)
	return out, nil
}

// findTag reads a tag in tx; ENOTFOUND when no link carries it and it has
// no colour or description.
func findTag(ctx context.Context, tx pgx.Tx, workspaceID, name string) (*link.Tag, error) {
	t := &link.Tag{WorkspaceID: workspaceID, Name: name}
	var updated *time.Time
	err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM links WHERE workspace_id = $1 AND tags @> ARRAY[$2::text]),
			t.color, t.description, t.updated_at
		FROM (SELECT 1) one LEFT JOIN tags t ON t.workspace_id = $1 AND t.name = $2`, workspaceID, name).
		Scan(&t.Links, (*nullString)(&t.Color), (*nullString)(&t.Description), &updated)
	if err != nil {
		return nil, fmt.Errorf("find tag: %w", err)
	}
	if updated != nil {
		t.UpdatedAt = updated.UTC()
	}
	if updated == nil && t.Links == 0 {
		return nil, link.TagNotFound(name)
	}
	return t, nil
}

// nullString scans a text column that may be NULL as "".
type nullString string

func (n *nullString) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*n = ""
	case string:
		*n = nullString(v)
	default:
		return fmt.Errorf("nullString: %T", src)
	}
	return nil
}

// FindTag returns a tag of the workspace. ENOTFOUND when no link carries
// it and it has no colour or description.
func (s *TagService) FindTag(ctx context.Context, workspaceID, name string) (*link.Tag, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, link.TagNotFound(name)
	}
	var out *link.Tag
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = findTag(ctx, tx, workspaceID, name)
		return err
	})
	return out, err
}

// PutTag stores a tag's colour and description; both empty remove them.
// The workspace's row is locked so that the count of link.MaxTagInfos
// holds across instances. ENOTFOUND for an unknown workspace, ECONFLICT
// past link.MaxTagInfos.
func (s *TagService) PutTag(ctx context.Context, t *link.Tag) error {
	if !s.db.validID(link.PrefixWorkspace, t.WorkspaceID) {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", t.WorkspaceID)
	}
	now := dbTime(s.db.now())
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		var n, had int
		err := tx.QueryRow(ctx, `SELECT 0 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE`, t.WorkspaceID).Scan(&n)
		if errors.Is(err, pgx.ErrNoRows) {
			return link.Errorf(link.ENOTFOUND, "workspace %q not found", t.WorkspaceID)
		} else if err != nil {
			return fmt.Errorf("lock workspace: %w", err)
		}
		if !t.HasInfo() {
			if _, err := tx.Exec(ctx, `DELETE FROM tags WHERE workspace_id = $1 AND name = $2`, t.WorkspaceID, t.Name); err != nil {
				return fmt.Errorf("clear tag: %w", err)
			}
			t.UpdatedAt = time.Time{}
		} else {
			if err := tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE name = $2) FROM tags WHERE workspace_id = $1`,
				t.WorkspaceID, t.Name).Scan(&n, &had); err != nil {
				return fmt.Errorf("count tags: %w", err)
			}
			if had == 0 && n >= link.MaxTagInfos {
				return link.ErrTooManyTagInfos
			}
			if _, err := tx.Exec(ctx, `INSERT INTO tags (workspace_id, name, color, description, updated_at) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (workspace_id, name) DO UPDATE SET color = excluded.color, description = excluded.description, updated_at = excluded.updated_at`,
				t.WorkspaceID, t.Name, t.Color, t.Description, now); err != nil {
				return fmt.Errorf("put tag: %w", err)
			}
			t.UpdatedAt = now
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM links WHERE workspace_id = $1 AND tags @> ARRAY[$2::text]`, t.WorkspaceID, t.Name).Scan(&t.Links)
	})
}

// DeleteTag removes a tag's colour and description. ENOTFOUND when it has
// none.
func (s *TagService) DeleteTag(ctx context.Context, workspaceID, name string) error {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return link.TagNotFound(name)
	}
	tag, err := s.db.pool.Exec(ctx, `DELETE FROM tags WHERE workspace_id = $1 AND name = $2`, workspaceID, name)
	if err != nil {
		return fmt.Errorf("delete tag: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return link.Errorf(link.ENOTFOUND, "tag %q has no colour or description", name)
	}
	return nil
}
